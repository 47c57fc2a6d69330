"""Importers of foreign graphs and format recognition."""

import json

import pytest

from model.errors import InputError
from model.importers import detect_format, load_graph
from model.importers.msr_dnn import MIN_BANDWIDTH
from tests.conftest import real_graph

MSR = {"maxSizePerFPGA": 1.0, "maxFPGAs": 1, "maxCPUs": 1,
       "nodes": [{"id": 0, "name": "w", "size": 64.0, "isBackwardNode": False},
                 {"id": 1, "name": "x", "size": 0.0, "isBackwardNode": False},
                 {"id": 2, "name": "mm", "size": 8.0, "isBackwardNode": False, "fpgaLatency": 2.0},
                 {"id": 3, "name": "mm_grad", "size": 8.0, "isBackwardNode": True}],
       "edges": [{"sourceId": 0, "destId": 2, "cost": 0.1, "size": 400.0},
                 {"sourceId": 1, "destId": 2, "cost": 0.1, "size": 0.0},
                 {"sourceId": 2, "destId": 3, "cost": 0.1, "size": 100.0}]}


def write(tmp_path, data, name="g.json"):
    path = tmp_path / name
    path.write_text(json.dumps(data))
    return path


def test_msr_dnn_is_recognised_and_estimated(tmp_path):
    g = load_graph(write(tmp_path, MSR))
    assert g.attrs["source_format"] == "msr-dnn"
    assert [(n.id, n.unit, n.pcu, n.pmu) for n in g.nodes] == [
        ("w", "pmu", None, None), ("x", "pmu", None, None), ("mm", "pcu", None, None),
        ("mm_grad", "pcu", None, None)]     # counts come from formulations.sections.estimates
    assert [n.category for n in g.nodes] == ["forward"] * 3 + ["backward"]
    assert [e.bandwidth for e in g.edges] == [1.0, MIN_BANDWIDTH, 0.25]
    assert g.edges[0].bytes == 400.0 and g.node("w").attrs["state_bytes"] == 64.0


def test_detect_format():
    assert detect_format(MSR) == "msr-dnn"
    assert detect_format({"version": 1, "nodes": [], "edges": []}) == "graph-json"
    assert detect_format({"what": 1}) is None


def test_unknown_format_has_a_fix(tmp_path):
    with pytest.raises(InputError) as info:
        load_graph(write(tmp_path, {"what": 1}))
    assert "--format" in info.value.fix


def test_forced_unknown_format(tmp_path):
    with pytest.raises(InputError, match="unknown format"):
        load_graph(write(tmp_path, MSR), format="tflite")
    with pytest.raises(InputError, match="not a readable ONNX model"):
        load_graph(write(tmp_path, MSR), format="onnx")


def test_msr_dangling_edge(tmp_path):
    data = json.loads(json.dumps(MSR))
    data["edges"][0]["destId"] = 99
    with pytest.raises(InputError) as info:
        load_graph(write(tmp_path, data))
    assert info.value.where == "edges[0].destId"


def test_msr_duplicate_names_fall_back_to_ids(tmp_path):
    data = json.loads(json.dumps(MSR))
    data["nodes"][1]["name"] = "w"
    g = load_graph(write(tmp_path, data))
    assert g.node_ids == ["0", "1", "2", "3"]


@pytest.mark.parametrize("relative, nodes, edges", [
    ("msr-dnn/OperatorGraphs/resnet50_inference.json", 604, 619),
    ("msr-dnn/OperatorGraphs/bert_L-12_training.json", 2012, 2751),
    ("msr-dnn/LayerGraphs/bert24_inference.json", 32, 55),
])
def test_real_msr_graphs_load(relative, nodes, edges):
    g = load_graph(real_graph(relative))
    assert (len(g.nodes), len(g.edges)) == (nodes, edges)
    assert all(0 < e.bandwidth <= 1 for e in g.edges)
    assert {n.unit for n in g.nodes} <= {"pcu", "pmu"}
    g.topological_order()  # acyclic
