"""The PnR graph the learned cost model reads (no JAX needed)."""

import numpy as np
import pytest

from formulations.placement.cost_models.features import (OP_CLASSES, UNIT_TYPES, FeatureSet,
                                                         op_class, pack, section_features)
from hardware import build_fabric, load_hardware
from model.graph import Edge, Graph, Node


@pytest.fixture(scope="module")
def tiny():
    return build_fabric(load_hardware("tiny"))


def _section():
    """x (pmu) -> mm (pcu, 4096 FLOPs) -> relu (pcu, 1024 FLOPs) -> y (pmu); x -> relu too."""
    nodes = [Node("x", op="input", unit="pmu"), Node("mm", op="matmul", unit="pcu", flops=4096.0),
             Node("relu", op="relu", unit="pcu", flops=1024.0), Node("y", op="output", unit="pmu")]
    edges = [Edge("x", "mm", bytes=64.0), Edge("mm", "relu", bytes=64.0),
             Edge("relu", "y", bytes=64.0), Edge("x", "relu", bytes=64.0)]
    return Graph("s", nodes, edges)


PLACED = {"x": "U0_1", "mm": "U0_0", "relu": "U0_2", "y": "U0_3"}
#: Edges 0 and 3 leave x over the same first link (U0_1 -> S0_1): that link is shared.
ROUTES = {0: ["U0_1->S0_1", "S0_1->U0_0"], 1: ["U0_0->S0_1", "S0_1->S0_2", "S0_2->U0_2"],
          2: ["U0_2->S0_3", "S0_3->U0_3"], 3: ["U0_1->S0_1", "S0_1->S0_2", "S0_2->U0_2"]}


def test_nodes_are_the_used_units_with_type_op_and_stage(tiny):
    f = section_features(_section(), tiny, PLACED, ROUTES)
    assert [UNIT_TYPES[u] for u in f.unit] == ["pmu", "pcu", "pcu", "pmu"]
    assert [OP_CLASSES[o] for o in f.op] == ["tensor", "matmul", "activation", "tensor"]
    assert f.stage.tolist() == [0, 1, 2, 3]          # relu waits for mm: longest path
    # relative compute time: mm is the bottleneck, relu a quarter of it
    assert f.node_x[:, 0].tolist() == [0.0, 1.0, 0.25, 0.0]
    assert f.node_x[:, 2].tolist() == [0.0, 1.0, 0.0, 0.0]
    assert f.node_x[0, 1] > 0 and f.node_x[1, 1] == 0        # PMU port time on PMUs only


def test_edges_are_the_used_routes_with_length_and_sharing(tiny):
    f = section_features(_section(), tiny, PLACED, ROUTES)
    assert list(zip(f.src.tolist(), f.dst.tolist())) == [(0, 1), (1, 2), (2, 3), (0, 2)]
    assert f.edge_x[:, 0].tolist() == [2, 3, 2, 3]                 # route length in links
    # most nets on one link of the route / 4: two nets share U0_1->S0_1 and S0_1->S0_2
    assert f.edge_x[:, 3].tolist() == [0.5, 0.5, 0.25, 0.5]
    # a shared link carries twice the bytes: a heavier load than on edge 2's links
    assert f.edge_x[0, 2] > f.edge_x[2, 2] and f.edge_x[3, 2] == f.edge_x[0, 2]


def test_a_longer_route_changes_only_its_edge(tiny):
    longer = dict(ROUTES)
    longer[2] = ["U0_2->S1_3", "S1_3->S1_4", "S1_4->U0_3"]
    a = section_features(_section(), tiny, PLACED, ROUTES)
    b = section_features(_section(), tiny, PLACED, longer)
    assert b.edge_x[2, 0] == 3 and np.array_equal(a.edge_x[[0, 1, 3]], b.edge_x[[0, 1, 3]])


def test_pack_round_trips(tiny):
    f = section_features(_section(), tiny, PLACED, ROUTES)
    g = section_features(Graph("one", [Node("a", unit="pcu")], []), tiny, {"a": "U0_0"}, {})
    packed = pack([f, g, f])
    again = FeatureSet.from_arrays(packed.arrays())
    assert len(again) == 3 and again.section(1).nodes == 1 and again.section(1).edges == 0
    assert np.array_equal(again.section(2).edge_x, f.edge_x)
    assert np.array_equal(again.subset([2]).section(0).src, f.src)


def test_op_classes_cover_the_msr_names():
    assert OP_CLASSES[op_class("operator", "bert.encoder.layer.0.output.LayerNorm")] == "norm"
    assert OP_CLASSES[op_class("operator", "MatMul12")] == "matmul"
    assert OP_CLASSES[op_class("tensor", "res2_1_branch2c_bn_b_0")] == "tensor"
