"""The stage-time rule: operators with FLOPs get a PAR factor, large tensors several PMUs."""

from __future__ import annotations

import math
from pathlib import Path

import onnx
import pytest

from formulations.sections import estimate_units, materialize_banks
from formulations.sections.estimates import par_factor, stage_cycles, tile_pcus, tile_pmus
from hardware import load_hardware
from model.graph import Edge, Graph, Node
from model.importers import load_graph
from tests.conftest import real_graph

LIGHT = Path(onnx.__file__).parent / "backend" / "test" / "data" / "light"


def chain(flops: float | None, act_bytes: float = 64_000, pcu: float | None = None) -> Graph:
    return Graph("g", [Node("x", unit="pmu"), Node("op", unit="pcu", flops=flops, pcu=pcu),
                       Node("y", unit="pcu")],
                 [Edge("x", "op", bytes=act_bytes), Edge("op", "y", bytes=act_bytes / 2)])


def test_one_pcu_while_the_flops_fit_the_stage_time():
    spec = load_hardware("plasticine")          # 192 FLOPs per PCU cycle, 64 bytes per cycle
    cycles = 64_000 / 64                         # the widest stream: 1000 cycles
    assert stage_cycles(chain(1.0), chain(1.0).node("op"), spec) == cycles
    fits = 192 * cycles
    assert estimate_units(chain(fits), spec).node("op").pcu == 1
    assert estimate_units(chain(fits + 1), spec).node("op").pcu == 2
    assert estimate_units(chain(3 * fits), spec).node("op").pcu == 3


def test_par_is_capped_at_a_share_of_the_pcus_and_given_counts_win():
    spec = load_hardware("plasticine")
    assert estimate_units(chain(1e12), spec).node("op").pcu == tile_pcus(spec) == 4
    assert estimate_units(chain(1e12), spec, max_pcus=9).node("op").pcu == 9
    assert estimate_units(chain(1e12, pcu=2), spec).node("op").pcu == 2
    assert estimate_units(chain(None), spec).node("op").pcu == 1      # no flops: PAR 1


def test_wider_streams_lengthen_the_stage_and_need_fewer_pcus():
    spec = load_hardware("sn10")
    narrow, wide = chain(1e8, act_bytes=64_000), chain(1e8, act_bytes=640_000)
    assert par_factor(narrow, narrow.node("op"), spec, 40) > \
        par_factor(wide, wide.node("op"), spec, 40)


def test_par_lanes_are_placed_as_units_of_the_section():
    spec = load_hardware("plasticine")
    est = estimate_units(chain(1e12), spec)
    lanes = [n for n in materialize_banks(est).nodes if n.attrs.get("unit_of") == "op"]
    assert [n.unit for n in lanes] == ["pcu"] * 3


def test_onnx_operators_get_the_rule_and_weights_their_pmus():
    path = LIGHT / "light_squeezenet.onnx"
    if not path.exists():
        pytest.skip("the installed onnx wheel has no light_squeezenet.onnx")
    graph = load_graph(path)
    for preset in ("plasticine", "sn10"):
        spec = load_hardware(preset)
        est = estimate_units(graph, spec)
        for node in est.nodes:
            if node.unit == "pcu":
                widest = max(est.edges[i].bytes for i in (*est.in_edges(node.id),
                                                          *est.out_edges(node.id)))
                want = math.ceil((node.flops or 0) / (spec.flops_per_pcu_cycle *
                                                      max(1, widest / 64)))
                assert node.pcu == min(max(1, want), tile_pcus(spec)), node.id
            else:
                want = math.ceil(node.attrs["state_bytes"] / spec.pmu_bytes)
                assert node.pmu == min(max(1, want), tile_pmus(spec)), node.id
        convs = [n.pcu for n in est.nodes if n.op == "Conv"]
        assert max(convs) > 1 and {n.pcu for n in est.nodes if n.op == "Relu"} == {1}


def test_graphs_without_flops_keep_par_1():
    graph = load_graph(real_graph("msr-dnn/OperatorGraphs/resnet50_inference.json"))
    est = estimate_units(graph, load_hardware("sn10"))
    assert {n.pcu for n in est.nodes if n.unit == "pcu"} == {1}
