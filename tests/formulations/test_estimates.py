"""Resource estimates: PMUs from bytes and the preset, and their realisation in a section."""

import pytest

from formulations.sections import (Capacity, cut_sections, estimate_units, materialize_banks,
                                   tile_pmus)
from formulations.solver import SolveSettings
from hardware import build_fabric, load_hardware
from model.graph import Edge, Graph, Node
from pipeline.flow import map_graph
from pipeline.options import RunOptions

KIB = 1024


def tensors(*sizes, consumers=1):
    """Stored tensors of the given bytes, each feeding its own chain of operators."""
    nodes, edges = [], []
    for t, size in enumerate(sizes):
        nodes.append(Node(f"w{t}", unit="pmu", attrs={"state_bytes": size}))
        for c in range(consumers):
            nodes.append(Node(f"op{t}_{c}", unit="pcu"))
            edges.append(Edge(f"w{t}", f"op{t}_{c}", bytes=64))
    return Graph("tensors", nodes, edges)


def test_pmus_follow_bytes_and_the_preset():
    g = tensors(1, 256 * KIB, 256 * KIB + 1, 10_000 * KIB)
    plasticine = estimate_units(g, load_hardware("plasticine"))      # 256 KiB per PMU
    assert [plasticine.node(f"w{t}").pmu for t in range(4)] == [1, 1, 2, 4]   # tiled at 4
    sn10 = estimate_units(g, load_hardware("sn10"))                   # 512 KiB per PMU
    assert [sn10.node(f"w{t}").pmu for t in range(4)] == [1, 1, 1, 20]
    assert all(plasticine.node(n).pcu == 1 for n in g.node_ids if n.startswith("op"))


def test_given_estimates_win_and_tiling_limit_is_an_option():
    g = Graph("g", [Node("w", unit="pmu", pmu=7, attrs={"state_bytes": 1}),
                    Node("v", unit="pmu", attrs={"state_bytes": 100 * 256 * KIB})], [])
    est = estimate_units(g, load_hardware("plasticine"), max_pmus=9)
    assert est.node("w").pmu == 7 and est.node("v").pmu == 9
    assert tile_pmus(load_hardware("tiny")) >= 1


def test_bytes_come_from_out_edges_when_state_is_unknown():
    g = Graph("g", [Node("w", unit="pmu"), Node("a", unit="pcu")],
              [Edge("w", "a", bytes=3 * 256 * KIB)])
    assert estimate_units(g, load_hardware("plasticine")).node("w").pmu == 3


def test_banks_realise_exactly_the_estimate():
    g = estimate_units(tensors(600 * KIB, 1), load_hardware("plasticine"))
    banked = materialize_banks(g)
    pmu_sites = sum(n.unit == "pmu" for n in banked.nodes)
    assert pmu_sites == sum(n.pmu for n in g.nodes) == 4
    assert {(e.src, e.dst) for e in banked.edges} >= {("w0#pmu1", "w0"), ("w0#pmu2", "w0#pmu1")}
    assert materialize_banks(tensors(1)) is not None


def test_cutter_counts_banks_so_big_tensors_need_more_sections():
    spec = load_hardware("tiny")
    cap = Capacity.of_fabric(build_fabric(spec))
    small = tensors(*[1] * cap.pmu)
    big = tensors(*[spec.pmu_bytes * 2] * cap.pmu)
    assert cut_sections(estimate_units(small, spec, 2), cap, SolveSettings("greedy")).count == 1
    assert cut_sections(estimate_units(big, spec, 2), cap, SolveSettings("greedy")).count == 2


@pytest.mark.parametrize("placer", ["greedy"])
def test_pipeline_places_every_bank_and_reports_it(placer):
    spec = load_hardware("tiny")
    g = tensors(spec.pmu_bytes * 2, 1)
    mapping = map_graph(g, spec, RunOptions(placer=placer, router="negotiated", time_limit=5,
                                                tile_pmus=2))
    assert mapping.status == "mapped"
    assert {"w0#pmu1"} <= set(mapping.placement)
    assert sum(s["bank_units"] for s in mapping.sections) == 1
    sites = [p["site"] for p in mapping.placement.values()]
    assert len(sites) == len(set(sites))
