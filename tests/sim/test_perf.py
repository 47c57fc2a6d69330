"""The performance simulator (sim/perf.py) on cases with a known answer."""

from __future__ import annotations

import random
from dataclasses import replace
from pathlib import Path

import pytest

from formulations.solver import SolveSettings
from hardware import build_fabric, load_hardware, spec_from_dict, spec_to_dict
from model.graph import Edge, Graph, Node
from model.graphjson import read_graph
from pipeline.rdu.buffers_pass import balance_section
from pipeline.options import RunOptions
from sim.backpressure import steady_state_throughput
from pipeline.report import render_report
from sim.perf import section_inputs, simulate_mapping, simulate_section

REPO = Path(__file__).resolve().parents[2]
PLASTICINE = load_hardware("plasticine")
F = PLASTICINE.flops_per_pcu_cycle          # 192 FLOPs per PCU per cycle


def variant(**changes):
    """The tiny preset with some fields changed (e.g. one vector channel, no hop latency)."""
    data = spec_to_dict(load_hardware("tiny")) | {"name": "tiny-variant"}
    if "vector_channels" in changes:
        data["networks"] = dict(data["networks"], vector={
            "width_bits": 512, "channels": changes.pop("vector_channels")})
    return spec_from_dict(data | changes)


def path(*nodes: str) -> list[str]:
    return [f"{a}->{b}" for a, b in zip(nodes, nodes[1:])]


# -- a chain: throughput = slowest stage ------------------------------------------------------
def chain(cycles: list[int]) -> tuple[Graph, dict, dict]:
    ids = [f"n{k}" for k in range(len(cycles))]
    g = Graph("chain", [Node(v, unit="pcu", flops=c * F) for v, c in zip(ids, cycles)],
              [Edge(a, b, bytes=64, depth=2) for a, b in zip(ids, ids[1:])])
    sites = ["U0_0", "U0_2", "U2_0", "U2_2"]
    routes = {0: path("U0_0", "S0_1", "S0_2", "U0_2"), 1: path("U0_2", "S1_2", "S2_1", "U2_0"),
              2: path("U2_0", "S2_1", "S2_2", "U2_2")}
    return g, dict(zip(ids, sites)), {k: routes[k] for k in range(len(cycles) - 1)}


@pytest.mark.parametrize("cycles", [[10, 40, 20, 5], [50, 3, 3, 3], [7, 7, 7, 7], [1, 2, 3, 90]])
def test_chain_runs_at_its_slowest_stage(cycles):
    g, placement, routes = chain(cycles)
    perf = simulate_section(g, PLASTICINE, placement, routes)
    assert perf.cycles_per_sample == pytest.approx(max(cycles))
    assert perf.samples_per_cycle == pytest.approx(1 / max(cycles))
    assert perf.throughput == pytest.approx(1e9 / max(cycles))      # plasticine runs at 1 GHz
    assert perf.normalised == pytest.approx(1.0)
    slowest = f"n{cycles.index(max(cycles))}"
    assert perf.bottleneck == {"kind": "compute", "node": slowest, "cycles": max(cycles)}
    assert perf.slowest_stage.node == slowest and perf.slowest_stage.pcus == 1


def test_chain_latency_is_the_stages_plus_the_hops():
    g, placement, routes = chain([10, 40, 20, 5])
    perf = simulate_section(g, PLASTICINE, placement, routes)
    assert perf.latency_cycles == pytest.approx(10 + 40 + 20 + 5 + 3 * 3)   # 3 links a hop
    assert perf.latency_s == pytest.approx(perf.latency_cycles * 1e-9)


def test_more_pcus_make_a_compute_stage_faster():
    """The node's PCU lanes (nodes with attrs.unit_of) are its PAR factor."""
    g, placement, routes = chain([10, 40, 20, 5])
    lanes = Graph("chain", g.nodes + [Node("n1#pcu1", unit="pcu", attrs={"unit_of": "n1"})],
                  g.edges + [Edge("n1", "n1#pcu1", bytes=64, attrs={"unit_of": "n1"})])
    perf = simulate_section(lanes, PLASTICINE, placement | {"n1#pcu1": "U1_1"},
                            routes | {3: path("U0_2", "S1_2", "U1_1")})
    assert perf.cycles_per_sample == pytest.approx(20)
    assert {s.node: s.pcus for s in perf.stages}["n1"] == 2


def test_a_shallow_buffer_pays_the_credit_round_trip():
    """Depth 1 on a far edge: the producer waits for the credit to come back."""
    g, placement, routes = chain([10, 10])
    perf = simulate_section(g, PLASTICINE, placement, routes, depths={0: 1})
    assert perf.cycles_per_sample == pytest.approx(10 + 2 * 3)      # stage + 3 hops each way
    assert perf.bottleneck["kind"] == "back-pressure"
    assert perf.normalised == pytest.approx(10 / 16)


# -- two flows sharing one link -----------------------------------------------------------------
def two_flows(shared: bool) -> tuple[Graph, dict, dict]:
    """A -> B and C -> D, each producer 64 cycles of compute and 4096 bytes (64 cycles of one
    vector channel); the routes share link S0_1->S0_2 or not."""
    g = Graph("flows", [Node("A", unit="pcu", flops=64 * F), Node("B", unit="pcu", flops=F),
                        Node("C", unit="pcu", flops=64 * F), Node("D", unit="pcu", flops=F)],
              [Edge("A", "B", bytes=4096, depth=4), Edge("C", "D", bytes=4096, depth=4)])
    placement = {"A": "U0_0", "B": "U0_2", "C": "U1_1", "D": "U1_3"}
    routes = {0: path("U0_0", "S0_1", "S0_2", "U0_2")}
    routes[1] = (path("U1_1", "S1_1", "S0_1", "S0_2", "S0_3", "S1_3", "U1_3") if shared
                 else path("U1_1", "S2_1", "S2_2", "S2_3", "U1_3"))
    return g, placement, routes


def test_routes_are_links_of_the_fabric():
    fabric = build_fabric(variant())
    for shared in (True, False):
        for links in two_flows(shared)[2].values():
            assert set(links) <= set(fabric.links)


@pytest.mark.parametrize("shared, channels, cycles", [
    (False, 1, 64), (True, 1, 128),      # one channel: time-shared, half each
    (True, 2, 64),                       # two channels: one each, no slowdown
])
def test_two_full_flows_on_one_link_get_half_each(shared, channels, cycles):
    g, placement, routes = two_flows(shared)
    spec = variant(vector_channels=channels)
    perf = simulate_section(g, spec, placement, routes)
    assert perf.cycles_per_sample == pytest.approx(cycles)
    assert perf.normalised == pytest.approx(64 / cycles)
    assert perf.busiest_link_utilisation == pytest.approx(1.0)
    if cycles == 128:
        assert perf.bottleneck["kind"] == "transfer"
        assert perf.bottleneck["link"] == "S0_1->S0_2" == perf.busiest_link


# -- source 001's FIG. 11: back-pressure with and without balancing ------------------------------
def fig11() -> Graph:
    return read_graph(REPO / "examples" / "buffers_fig11.json")


def unit_time(graph: Graph):
    """Every stage 1 cycle (16 bytes an edge: under a cycle on every unit and link), no link
    latency: the untimed simulator's world."""
    spec = variant(hop_cycles=0)
    sites = [s.id for s in build_fabric(spec).sites if s.unit in ("pcu", "pmu")]
    timed = Graph(graph.name, graph.nodes, [replace(e, bytes=16) for e in graph.edges])
    return spec, dict(zip(graph.node_ids, sites)), timed


def test_fig11_runs_at_half_rate_unbalanced_and_full_rate_balanced():
    spec, placement, g = unit_time(fig11())
    before = simulate_section(g, spec, placement, {})
    assert before.samples_per_cycle == pytest.approx(0.5)
    assert before.bottleneck["kind"] == "back-pressure"
    assert before.bottleneck["edge"] == "buffer S0 -> S2 (depth 1)"
    balanced = balance_section(g, None, RunOptions(backends={"buffers": "highs"},
                                                   depth_per_pmu=1), SolveSettings("highs", 10.0))
    depths = {i: row["final_depth"] for i, row in balanced.rows.items()}
    assert depths == {0: 1, 1: 1, 2: 2}
    after = simulate_section(g, spec, placement, {}, depths)
    assert after.samples_per_cycle == pytest.approx(1.0)
    assert (before.samples_per_cycle, after.samples_per_cycle) == pytest.approx(
        (balanced.throughput_before, balanced.throughput_after))


def random_dag(seed: int) -> Graph:
    rng = random.Random(seed)
    n = rng.randint(3, 9)
    edges = [Edge(f"v{a}", f"v{b}") for a in range(n) for b in range(a + 1, n)
             if rng.random() < 0.35]
    return Graph(f"r{seed}", [Node(f"v{k}") for k in range(n)], edges)


@pytest.mark.parametrize("seed", range(12))
def test_unit_times_agree_with_the_untimed_simulator(seed):
    g = random_dag(seed)
    spec, placement, timed = unit_time(g)
    perf = simulate_section(timed, spec, placement, {})
    assert perf.samples_per_cycle == pytest.approx(steady_state_throughput(g), rel=0.02)


# -- recurrences, PMUs, errors ----------------------------------------------------------------
def test_a_loop_carried_edge_bounds_the_rate_by_its_recurrence():
    g = Graph("loop", [Node("a", unit="pcu", flops=10 * F), Node("b", unit="pcu", flops=5 * F)],
              [Edge("a", "b", bytes=64, depth=8), Edge("b", "a", bytes=64, distance=1)])
    spec = variant(hop_cycles=0)
    perf = simulate_section(g, spec, {"a": "U0_0", "b": "U0_2"}, {})
    # a(k) waits for b(k-1): a sample goes round a then b (transfers stream with their
    # producer) in 10 + 5 cycles
    assert perf.cycles_per_sample == pytest.approx(15)
    assert perf.normalised == pytest.approx(10 / 15)


def test_a_pmu_stage_reads_at_the_pmu_rate():
    g = Graph("pmu", [Node("W", unit="pmu"), Node("op", unit="pcu", flops=F)],
              [Edge("W", "op", bytes=64 * 50, depth=4)])
    spec = variant(vector_channels=4, pmu_read_bytes_per_cycle=32)
    perf = simulate_section(g, spec, {"W": "U0_1", "op": "U0_2"},
                            {0: path("U0_1", "S0_2", "U0_2")})
    stage = {s.node: s for s in perf.stages}["W"]
    assert (stage.kind, stage.pmu) == ("pmu", pytest.approx(100.0))   # 3200 B at 32 B/cycle
    assert perf.cycles_per_sample == pytest.approx(100)


def test_flops_missing_uses_the_streaming_rule_and_says_so():
    g = Graph("s", [Node("a", unit="pcu"), Node("b", unit="pcu")],
              [Edge("a", "b", bytes=6400, depth=4)])
    perf = simulate_section(g, PLASTICINE, {"a": "U0_0", "b": "U0_2"},
                            {0: path("U0_0", "S0_1", "S0_2", "U0_2")})
    # 6400 bytes / (4 bytes x 16 lanes) = 100 cycles; the vector link moves 64 B a cycle
    assert {s.node: s.compute for s in perf.stages} == {"a": 100.0, "b": 100.0}
    assert any("streaming rule" in note for note in perf.notes)


def test_an_unplaced_node_is_refused():
    g, placement, routes = chain([1, 2])
    with pytest.raises(ValueError, match="'n1' is not placed"):
        simulate_section(g, PLASTICINE, {"n0": "U0_0"}, routes)


def test_the_dram_share_can_be_the_bottleneck():
    g, placement, routes = chain([10, 10])
    perf = simulate_section(g, PLASTICINE, placement, routes, dram_bytes=51.2 * 1000)
    # 51.2 kB per sample at 51.2 GB/s is 1 us = 1000 cycles of plasticine
    assert perf.samples_per_cycle == pytest.approx(1 / 1000)
    assert perf.bottleneck["kind"] == "dram"
    assert perf.normalised == pytest.approx(10 / 1000)


# -- a whole mapping: mapping.json, report.md ---------------------------------------------------
@pytest.fixture(scope="module")
def fig11_mapped():
    from pipeline.flow import map_graph
    return map_graph(fig11(), load_hardware("tiny"), RunOptions(time_limit=10, depth_per_pmu=1))


def test_a_mapping_is_rebuilt_with_its_stage_buffers(fig11_mapped):
    (section,) = section_inputs(fig11(), fig11_mapped)
    buffer = "buf[S0->S2#2].0"
    assert fig11_mapped.placement[buffer]["section"] == 0
    hops = {(e.src, e.dst): section.routes[i] for i, e in enumerate(section.graph.edges)}
    assert set(hops) == {("S0", "S1"), ("S1", "S2"), ("S0", buffer), (buffer, "S2")}
    route = next(r for r in fig11_mapped.routes if r["edge"] == 2)["links"]
    assert hops[("S0", buffer)] + hops[(buffer, "S2")] == route
    assert hops[("S0", buffer)][-1].endswith("->" + fig11_mapped.placement[buffer]["site"])


def test_a_mapped_run_carries_throughput_latency_and_bottleneck(fig11_mapped):
    m = fig11_mapped.metrics
    again = simulate_mapping(fig11(), load_hardware("tiny"), fig11_mapped.to_dict())
    assert m["throughput"] == pytest.approx(again.throughput, rel=1e-5) and m["throughput"] > 0
    assert m["samples_per_cycle"] == pytest.approx(m["throughput"] / 1e9, rel=1e-5)
    assert m["latency_s"] == pytest.approx(again.latency_s, rel=1e-5)
    assert m["bottleneck"].startswith("section 0: ") and m["perf_batch"] == 256
    perf = fig11_mapped.sections[0]["perf"]
    parts = perf["compute_s"] + perf["transfer_s"] + perf["dram_s"] + perf["reconfig_s"]
    assert perf["total_s"] == pytest.approx(parts, rel=1e-5)
    assert m["batch_s"] == pytest.approx(perf["total_s"], rel=1e-5)
    assert perf["reconfig_s"] == pytest.approx(10e-6)              # tiny: reconfig_us 10
    assert 0 < perf["normalised"] <= 1
    assert m["throughput"] == pytest.approx(256 / m["batch_s"], rel=1e-4)


def test_the_report_shows_the_estimate(fig11_mapped):
    text = render_report(fig11_mapped)
    assert "## Performance estimate" in text
    assert f"{fig11_mapped.metrics['throughput']:,.0f} samples/s" in text
    table = text.split("## Performance estimate")[1]
    row = next(line for line in table.splitlines() if line.startswith("| 0 | "))
    assert f"{fig11_mapped.sections[0]['perf']['normalised']:.3f}" in row


def test_batch_time_is_reconfiguration_plus_pipeline():
    g, placement, routes = chain([10, 40, 20, 5])
    perf = simulate_section(g, PLASTICINE, placement, routes)
    times = perf.breakdown(100, reconfig_s=1e-5)
    assert times["compute_s"] == pytest.approx(100 * 40e-9)
    assert times["compute_s"] + times["transfer_s"] == pytest.approx(
        (perf.latency_cycles + 99 * 40) * 1e-9)
    assert times["total_s"] == pytest.approx(times["compute_s"] + times["transfer_s"] + 1e-5)


# -- the hardware numbers the simulator reads --------------------------------------------------
def test_presets_reach_their_published_peaks():
    sn10, plasticine = load_hardware("sn10"), load_hardware("plasticine")
    peak = lambda s: s.pcu_count * s.flops_per_pcu_cycle * s.clock_hz   # noqa: E731
    assert peak(sn10) == pytest.approx(320e12, rel=1e-3)             # 320 TFLOPS bf16
    assert peak(plasticine) == pytest.approx(12.3e12, rel=1e-2)      # 12.3 TFLOPS
    assert plasticine.link_rate("vector") == 64 and plasticine.link_rate("scalar") == 4


def test_left_out_numbers_take_their_documented_defaults():
    data = spec_to_dict(load_hardware("tiny"))
    for key in ("clock_ghz", "pmu_read_bytes_per_cycle", "pmu_write_bytes_per_cycle",
                "hop_cycles", "dram_bytes_per_s", "reconfig_us"):
        data.pop(key, None)
    spec = spec_from_dict(data)
    assert (spec.clock_hz, spec.flops_per_pcu_cycle, spec.pmu_read_rate, spec.hop_cycles,
            spec.dram_rate, spec.reconfig_seconds) == (1e9, 2 * 16 * 6, 64.0, 1, 100e9,
                                                       pytest.approx(10e-6))
    assert spec_from_dict(spec_to_dict(spec)) == spec


@pytest.mark.parametrize("key, value, words", [
    ("pcu_flops_per_cycle", -1, "negative"), ("dram_bytes_per_s", 0, "zero"),
    ("reconfig_us", 2e6, "above the limit"), ("hop_cycles", 2000, "from 0 to 1024"),
    ("pmu_read_bytes_per_cycle", "fast", "a number"),
])
def test_bad_performance_numbers_are_named(key, value, words):
    from hardware import InputError
    data = spec_to_dict(load_hardware("tiny")) | {key: value}
    with pytest.raises(InputError) as info:
        spec_from_dict(data, file="chip.json")
    assert info.value.where == key and words in str(info.value), str(info.value)

