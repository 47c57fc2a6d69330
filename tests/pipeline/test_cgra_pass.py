"""map_cgra end to end: mapping.json fields, the baseline beside the answer, diagnosis,
the CLI, a real Morpher kernel (skipped without the shared graphs)."""

from __future__ import annotations

import json

import pytest

from hardware import load_hardware
from model.graph import Edge, Graph, Node
from model.importers import load_graph
from model.mapping import read_mapping, write_mapping
from pipeline.cgra import map_cgra
from pipeline.feedback import MappingFailed
from pipeline.options import RunOptions
from pipeline.run import main
from sim.cgra import check_cgra
from tests.conftest import real_graph


def loop() -> Graph:
    nodes = [Node("i", op="ADD"), Node("ld", op="LOAD"), Node("mul", op="MUL"),
             Node("acc", op="ADD"), Node("st", op="STORE")]
    edges = [Edge("i", "i", distance=1), Edge("i", "ld"), Edge("ld", "mul"), Edge("i", "mul"),
             Edge("mul", "acc"), Edge("acc", "acc", distance=1), Edge("acc", "st")]
    return Graph("loop", nodes, edges)


def test_mapping_json_fields_and_round_trip(tmp_path):
    spec = load_hardware("hycube4x4")
    m = map_cgra(loop(), spec, RunOptions(time_limit=10))
    assert m.status == "mapped" and m.ii == m.metrics["ii"] >= m.metrics["ii_bound"]
    for name, p in m.placement.items():
        assert len(p["pe"]) == 2 and p["slot"] == p["cycle"] % m.ii
    assert len(m.routes) == len(loop().edges)
    for r in m.routes:
        first, last = r["steps"][0], r["steps"][-1]
        assert first["cycle"] == m.placement[r["src"]]["cycle"] + 1   # latency 1
        assert last["cycle"] == m.placement[r["dst"]]["cycle"] + r["distance"] * m.ii
    assert m.metrics["baseline_ii"] >= m.ii and m.metrics["cycles_bound"] <= m.metrics["cycles"]
    assert m.metrics["proven_ii"] and m.metrics["status"] == "optimal"
    path = tmp_path / "mapping.json"
    write_mapping(m, path)
    again = read_mapping(path)
    report = check_cgra(loop(), spec, again.placement, again.ii, again.routes)
    assert report.ok and report.length == m.metrics["cycles"]


def test_list_placer_is_the_baseline():
    m = map_cgra(loop(), load_hardware("cgra4x4"), RunOptions(time_limit=5, placer="list"))
    assert m.metrics["method"].startswith("list") and m.metrics["placer"] == "list"
    assert m.ii == m.metrics["baseline_ii"]


def test_unmappable_recurrence_is_diagnosed():
    ring = Graph("ring", [Node(f"n{i}", op="ADD") for i in range(40)],
                 [Edge(f"n{i}", f"n{(i + 1) % 40}", distance=int(i == 39)) for i in range(40)])
    with pytest.raises(MappingFailed) as info:
        map_cgra(ring, load_hardware("cgra4x4"), RunOptions(time_limit=5))
    m = info.value.mapping
    assert m.status == "failed" and "C7 recurrence" in m.diagnosis and "II >= 40" in m.diagnosis


def test_cli_writes_picture_report_and_exports(tmp_path, capsys):
    graph = tmp_path / "loop.json"
    graph.write_text(json.dumps({
        "version": 1, "name": "loop",
        "nodes": [{"id": n.id, "op": n.op} for n in loop().nodes],
        "edges": [{"src": e.src, "dst": e.dst, "distance": e.distance} for e in loop().edges]}))
    out, models = tmp_path / "out", tmp_path / "models"
    code = main([str(graph), "--hardware", "cgra4x4-torus", "--time-limit", "5", "--out",
                 str(out), "--export-models", str(models)])
    assert code == 0, capsys.readouterr().err
    assert (out / "pes.svg").stat().st_size > 1000
    assert "## CGRA mapping" in (out / "report.md").read_text()
    assert list(models.glob("cgra_loop_ii*.pb.txt"))


def test_a_morpher_kernel_maps_and_is_executed():
    path = real_graph("morpher/cgra_me_bench/mac/main_INNERMOST_LN1_noSemiOLOAD_PartPred_DFG.xml")
    g = load_graph(path)
    m = map_cgra(g, load_hardware("cgra4x4"), RunOptions(time_limit=10))
    assert m.status == "mapped" and m.metrics["iterations_sim"] >= 3
    assert m.ii <= m.metrics["baseline_ii"]


def test_run_counts_the_searches_the_wall_clock_cut_short(request):
    """mapping.json's ``run.cut_short`` (and ``metrics.cut_short``) is 0 on a normal run and
    counts the sweep the wall clock stopped when the machine stalls before it."""
    spec = load_hardware("cgra4x4")
    m = map_cgra(loop(), spec, RunOptions(time_limit=10))
    assert m.run["cut_short"] == 0 == m.metrics["cut_short"] and m.metrics["work_seconds"] > 0
    request.getfixturevalue("stall_before_cgra_sweep")
    late = map_cgra(loop(), spec, RunOptions(time_limit=10))
    assert late.status == "mapped" and late.metrics["cut_short"] >= 1
    assert late.run["cut_short"] >= 1
