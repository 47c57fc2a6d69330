"""``--cost-model``: placement candidates ranked by predicted throughput (source 002, §IV-C)."""

import json
from pathlib import Path

import pytest

import pipeline.options
from formulations.placement.candidates import placement_candidates
from hardware import build_fabric, load_hardware
from pipeline.cost_model import DEFAULT_MODEL, rank_placement, scorer_for
from pipeline.options import OptionError, RunOptions
from pipeline.run import main
from model.graph import Edge, Graph, Node
from sim.check import check_placement
from formulations.solver import Budget

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "examples" / "fig9.json"


def _run(tmp_path, *extra):
    out = tmp_path / "out"
    code = main([str(EXAMPLE), "-o", str(out), "--time-limit", "4", "--no-pictures", "--quiet",
                 *extra])
    return code, out


def test_wirelength_is_the_default_and_ranks_nothing(tmp_path):
    code, out = _run(tmp_path)
    mapping = json.loads((out / "mapping.json").read_text())
    assert code == 0 and mapping["run"]["cost_model"] == "wirelength"
    assert not [s for s in mapping["stages"] if s["stage"] == "ranking"]


def test_analytic_ranks_every_section_and_the_run_says_so(tmp_path):
    code, out = _run(tmp_path, "--cost-model", "analytic")
    mapping = json.loads((out / "mapping.json").read_text())
    ranking = [s for s in mapping["stages"] if s["stage"] == "ranking"]
    assert code == 0 and mapping["run"]["cost_model"] == "analytic"
    assert {s["section"] for s in ranking} == {s["id"] for s in mapping["sections"]}
    for s in ranking:
        assert s["cost_model"] == "analytic" and s["routed"] >= 1
        assert s["score"] >= (s["placer_score"] or 0.0)       # never worse than the placer's
    assert "cost model `analytic`" in (out / "report.md").read_text()


def test_unknown_cost_model_is_bad_input(tmp_path, capsys):
    with pytest.raises(OptionError, match="--cost-model"):
        RunOptions(cost_model="fastest")
    with pytest.raises(SystemExit) as exc:
        main([str(EXAMPLE), "--cost-model", "fastest"])
    assert exc.value.code == 2


def test_learned_without_jax_exits_2_with_the_fix(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(pipeline.options, "learned_available", lambda: False)
    code, _ = _run(tmp_path, "--cost-model", "learned")
    assert code == 2
    assert 'pip install -e ".[learn]"' in capsys.readouterr().err


def test_missing_model_file_is_bad_input(tmp_path, capsys):
    code, _ = _run(tmp_path, "--cost-model", "analytic", "--cost-model-file",
                   str(tmp_path / "none.npz"))
    assert code == 2 and "none.npz: no such file" in capsys.readouterr().err


def _two_flows():
    nodes = [Node(n, unit="pcu", flops=192.0) for n in ("a", "b", "c", "d")]
    return Graph("flows", nodes, [Edge("a", "b", bytes=256.0), Edge("c", "d", bytes=256.0)])


def test_ranking_keeps_the_best_scored_candidate_and_it_is_legal():
    fabric = build_fabric(load_hardware("tiny"))
    graph = _two_flows()
    start = {"a": "U0_0", "b": "U1_1", "c": "U2_2", "d": "U3_3"}
    found = placement_candidates(graph, fabric, start, count=6, budget=Budget(0.2), seed=0)
    assert found[0] == start and len(found) > 1
    # a scorer that prefers the candidate with "a" farthest right: the ranking must pick it
    def scorer(g, fab, items):
        return [float(fab.site(p["a"]).col) for p, _ in items]
    chosen, extra = rank_placement(graph, fabric, start, scorer, name="test", budget=Budget(0.2),
                                   seed=0, count=6)
    best_col = max(fabric.site(p["a"]).col for p in found)
    assert fabric.site(chosen["a"]).col == best_col and extra["routed"] == len(found)
    assert check_placement(graph, fabric, chosen).ok


def test_scorers_by_name():
    assert scorer_for("wirelength") is None
    fabric = build_fabric(load_hardware("tiny"))
    graph = _two_flows()
    placed = {"a": "U0_0", "b": "U1_1", "c": "U2_2", "d": "U3_3"}
    for name in ("analytic", "simulated"):
        scores = scorer_for(name)(graph, fabric, [(placed, {})])
        assert len(scores) == 1 and 0.0 <= scores[0] <= 1.0
    with pytest.raises(ValueError, match="unknown cost model"):
        scorer_for("fastest")


def test_learned_ranks_with_the_shipped_model(tmp_path):
    pytest.importorskip("jax")
    if not DEFAULT_MODEL.exists():
        pytest.skip("no shipped model file")
    code, out = _run(tmp_path, "--cost-model", "learned")
    mapping = json.loads((out / "mapping.json").read_text())
    ranking = [s for s in mapping["stages"] if s["stage"] == "ranking"]
    assert code == 0 and ranking and all(s["cost_model"] == "learned" for s in ranking)
    assert all(0.0 <= s["score"] <= 1.0 for s in ranking)


def test_a_pooled_placer_keeps_the_wirelength_answer_and_simulated_never_loses():
    from formulations.solver import SolveSettings
    from pipeline.rdu.section_pass import map_section
    from sim.perf import simulate_section
    from tests.formulations.test_placement_model import random_section
    fabric = build_fabric(load_hardware("plasticine"))
    graph = random_section(24, seed=4)
    for node in graph.nodes:
        node.flops = 1e4 if node.unit == "pcu" else None
    for e in graph.edges:
        e.bytes = 4096.0
    runs = {}
    for name in ("wirelength", "simulated"):
        options = RunOptions(cost_model=name, router="negotiated", seed=1)
        settings = (SolveSettings(time_limit=1.0, seed=1), SolveSettings(time_limit=1.0, seed=1))
        runs[name] = map_section(graph, fabric, 0, options, lambda line: None, settings)
    placed = {k: next(s for s in r.stages if s["stage"] == "placement") for k, r in runs.items()}
    ranking = next(s for s in runs["simulated"].stages if s["stage"] == "ranking")
    assert ranking["candidates"] >= 2 and ranking["score"] >= ranking["placer_score"]
    assert 0 <= ranking["from_search"] < ranking["candidates"]
    assert check_placement(graph, fabric, runs["simulated"].placement).ok
    if not any(p.get("cut_short") for p in placed.values()):
        # the placer searched its whole plan in both runs: same answer, and the ranking can
        # only keep it or find a placement the simulator rates higher (same router)
        assert placed["simulated"]["objective"] == placed["wirelength"]["objective"]
        thr = {k: simulate_section(graph, fabric.spec, r.placement, r.paths,
                                   fabric=fabric).samples_per_cycle for k, r in runs.items()}
        assert thr["simulated"] >= thr["wirelength"] * (1 - 1e-9)
