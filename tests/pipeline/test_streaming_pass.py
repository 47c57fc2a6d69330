"""map_streaming end to end: placement fields, spoke entries, report, picture, diagnosis."""

import pytest

from hardware import load_hardware
from model.graph import Graph, Node
from model.importers import load_graph
from pipeline.flow import MappingFailed, RunOptions
from pipeline.streaming import draw_streaming, map_streaming, report_lines
from sim.streaming import check_streaming, distance_graph
from tests.conftest import real_graph

SE = load_hardware("se16")


def test_distance_maps_and_passes_the_simulator(tmp_path):
    m = map_streaming(distance_graph(), SE, RunOptions(time_limit=5, export_dir=str(tmp_path)))
    assert m.status == "mapped" and m.ii == 1 and m.metrics["cycles"] == 16
    assert set(m.placement["3"]) == {"tile", "slot", "cycle", "sdf"}
    assert check_streaming(distance_graph(), SE, m.placement, m.ii).ok
    assert len(m.tiles) == 16 and all(t["ii"] == 1 for t in m.tiles)
    entries = [e for t in m.tiles for e in t["entries"] if e["kind"] == "instruction"]
    assert len(entries) == 7
    assert {e["master_input"] for e in entries if e["instruction"] in "012"} == {"tile base"}
    assert m.memory["x0"]["tile"] == m.placement["0"]["tile"]
    assert m.sections == [{"id": 0, "kind": "sdf", "nodes": list("0123456"), "ii": 1, "cycles": 16}]
    assert any(s["stage"] == "check" for s in m.stages)
    assert list(tmp_path.glob("*.pb.txt"))
    lines = report_lines(m)
    assert "| variable | tile | bank | users |" in lines
    draw_streaming(m, SE, tmp_path / "se.png")
    assert (tmp_path / "se.png").stat().st_size > 1000


def test_failure_is_diagnosed_by_rule():
    g = Graph("s17", [Node(f"s{i}") for i in range(17)], [])
    with pytest.raises(MappingFailed) as err:
        map_streaming(g, SE, RunOptions(time_limit=2))
    m = err.value.mapping
    assert m.status == "failed" and "17 instructions start a data-flow" in m.diagnosis
    assert report_lines(m)[2].startswith("Not mapped")


def test_milp_backend(tmp_path):
    m = map_streaming(distance_graph(), SE, RunOptions(backend="highs", time_limit=30,
                                                      export_dir=str(tmp_path)))
    assert m.ii == 1 and m.metrics["cycles"] == 16 and list(tmp_path.glob("*.mps"))


def test_real_kernel_mapped_or_explained():
    path = real_graph("morpher/cgra_me_bench/sum/main_INNERMOST_LN1_noSemiOLOAD_PartPred_DFG.xml")
    g = load_graph(path)
    try:
        m = map_streaming(g, SE, RunOptions(time_limit=5))
        assert m.status == "mapped"
    except MappingFailed as exc:
        assert exc.mapping.diagnosis
