"""Tests of ``python -m benchmarks.solvers``: backends agree on the models of every decision,
unreadable files and killed solvers become rows, the statistics match hand-computed numbers,
bad input exits 2, a disagreement exits 1 loudly."""

from __future__ import annotations

import argparse
import csv
import math
import sys
from pathlib import Path

import pytest

from benchmarks import solvers
from benchmarks.solver_runs import decision_of, model_name, run_capped, solve_file
from benchmarks.solver_stats import (agreement_tolerance, disagreements, performance_profile,
                                     performance_ratios, shifted_geomean, summarize,
                                     time_matrix, wins)
from formulations.solver import LinearModel, available_backends, write_model_file

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
INF = math.inf


def _args(time_limit: float = 20.0) -> argparse.Namespace:
    return argparse.Namespace(build_time_limit=60.0, seed=0, time_limit=time_limit, threads=1,
                              mip_gap=1e-4)


def _export(tmp: Path, graph: str, hardware: str) -> list[Path]:
    models = tmp / f"{Path(graph).stem}-{hardware}"
    models.mkdir()
    return solvers.export_models(EXAMPLES / graph, hardware, [], _args(), models,
                                 tmp / f"run-{hardware}", lambda text: None)


@pytest.fixture(scope="module")
def exported(tmp_path_factory) -> dict[str, list[Path]]:
    """Every decision's models, by decision: fig9 on tiny (sections, placement, routing),
    fig11 on plasticine (buffers: fig9 is balanced as it is, so no buffer model is built),
    on se16 and on cgra4x4 (the schedule as CP-SAT proto and as its MILP twin)."""
    tmp = tmp_path_factory.mktemp("models")
    files = (_export(tmp, "fig9.json", "tiny") + _export(tmp, "buffers_fig11.json", "plasticine")
             + _export(tmp, "buffers_fig11.json", "se16")
             + _export(tmp, "buffers_fig11.json", "cgra4x4"))
    by_decision: dict[str, list[Path]] = {}
    for path in files:
        by_decision.setdefault(decision_of(model_name(path)), []).append(path)
    return by_decision


def _solve(path: Path, backend: str) -> dict:
    return solve_file({"file": str(path), "backend": backend, "time_limit": 30.0,
                       "threads": 1, "seed": 0, "mip_gap": 1e-4})


@pytest.mark.parametrize("decision", ["sections", "buffers", "placement", "routing",
                                      "streaming", "cgra"])
def test_two_backends_agree_on_every_decision(exported, decision):
    files = [p for p in exported.get(decision, []) if p.name.endswith(".mps")]
    assert files, f"no {decision} model was exported: {sorted(exported)}"
    for path in files:
        rows = [_solve(path, backend) for backend in ("highs", "scip", "cp-sat")]
        readable = [r for r in rows if r["status"] != "unreadable"]
        assert len(readable) >= 2, rows
        statuses = {r["status"] for r in readable}
        assert statuses <= {"optimal", "infeasible"} and len(statuses) == 1, rows
        assert disagreements(readable, 1e-4) == []
        if statuses == {"optimal"}:
            objectives = [r["objective"] for r in readable]
            assert max(objectives) - min(objectives) <= 1e-6 * max(1.0, abs(objectives[0]))
            assert all(r["vars"] >= 1 and (r["int_vars"] == 0 or r["nodes"] is not None)
                       for r in readable)


def test_the_cp_sat_proto_of_the_schedule_is_solved_by_cp_sat_only(exported):
    proto = [p for p in exported["streaming"] if p.name.endswith(".pb.txt")]
    assert proto
    twin = {p.name.removesuffix(".mps") for p in exported["streaming"] if p.suffix == ".mps"}
    for path in proto:
        assert _solve(path, "highs")["status"] == "unreadable"
        row = _solve(path, "cp-sat")
        assert row["status"] in ("optimal", "infeasible")
        mps = path.with_name(path.name.removesuffix(".pb.txt") + ".mps")
        if path.name.removesuffix(".pb.txt") in twin and row["status"] == "optimal":
            assert _solve(mps, "highs")["objective"] == pytest.approx(row["objective"])


def test_files_a_backend_cannot_read_are_rows_not_crashes(tmp_path, capsys):
    folder = tmp_path / "models"
    folder.mkdir()
    (folder / "garbage.mps").write_text("this is not an MPS file\n")
    (folder / "garbage.pb.txt").write_text("garbage {{{\n")
    m = LinearModel("half")
    x = m.add_var("x", ub=2.5)
    m.maximize(x)
    write_model_file(m, folder / "continuous.mps")
    out = tmp_path / "out"
    code = solvers.main([str(folder), "--backends", "highs,cp-sat", "--time-limit", "5",
                         "--out", str(out), "--quiet"])
    assert code == 0, capsys.readouterr().err
    with open(out / "results.csv", encoding="utf-8") as f:
        rows = {(r["model"], r["backend"]): r for r in csv.DictReader(f)}
    assert rows[("garbage.mps", "highs")]["status"] == "unreadable"
    assert rows[("garbage.mps", "cp-sat")]["status"] == "unreadable"
    assert rows[("garbage.pb.txt", "highs")]["status"] == "unreadable"
    assert rows[("garbage.pb.txt", "cp-sat")]["status"] == "unreadable"
    assert rows[("continuous.mps", "cp-sat")]["status"] == "unreadable"
    assert "continuous" in rows[("continuous.mps", "cp-sat")]["note"]
    assert rows[("continuous.mps", "highs")]["status"] == "optimal"
    assert float(rows[("continuous.mps", "highs")]["objective"]) == 2.5
    for name in ("results.md", "summary.csv", "profile.png", "profile.svg"):
        assert (out / name).is_file()
    assert "unreadable" in (out / "results.md").read_text()


def test_a_solver_that_outlives_its_cap_is_killed_and_recorded(tmp_path):
    task = {"file": str(tmp_path / "m.mps"), "backend": "highs", "time_limit": 0.5,
            "threads": 1, "seed": 0, "mip_gap": 1e-4, "cap": 1.0}
    # a "solver" that starts (writes the marker the real child writes) and never stops
    sleeper = [sys.executable, "-c",
               "import sys, time; open(sys.argv[1] + '.started', 'w').close(); time.sleep(120)"]
    row = run_capped(task, command=sleeper)
    assert row["status"] == "killed"
    assert row["model"] == "m.mps" and row["backend"] == "highs"
    assert "the solve outlived its 1 s wall-clock cap" in row["note"]
    assert 1.0 <= row["wall"] < 60
    summary = summarize([row | {"time": None}], ["highs"], 0.5)[0]
    assert summary["failed"] == 1 and summary["sgm_time"] == 0.5


def test_a_child_stuck_before_its_solve_is_killed_at_the_read_cap(tmp_path):
    task = {"file": str(tmp_path / "m.mps"), "backend": "scip", "time_limit": 0.5,
            "threads": 1, "seed": 0, "mip_gap": 1e-4, "cap": 0.5, "read_cap": 1.0}
    row = run_capped(task, command=[sys.executable, "-c", "import time; time.sleep(120)"])
    assert row["status"] == "killed" and "reading the model" in row["note"]


def test_a_solver_process_that_dies_is_an_error_row(tmp_path):
    task = {"file": str(tmp_path / "m.mps"), "backend": "highs", "time_limit": 5.0,
            "threads": 1, "seed": 0, "mip_gap": 1e-4}
    row = run_capped(task, command=[sys.executable, "-c", "import sys; sys.exit('boom')"])
    assert row["status"] == "error" and "boom" in row["note"]


def test_a_real_solve_runs_in_its_own_process(tmp_path):
    m = LinearModel("knap")
    xs = [m.add_binary(f"x{i}") for i in range(3)]
    m.add(sum(w * x for w, x in zip([3, 4, 5], xs)) <= 7)
    m.maximize(sum(v * x for v, x in zip([4, 5, 6], xs)))
    path = write_model_file(m, tmp_path / "knap.mps")
    row = run_capped({"file": str(path), "backend": "cbc", "time_limit": 5.0, "threads": 1,
                      "seed": 0, "mip_gap": 0.0})
    assert row["status"] == "optimal" and row["objective"] == 9.0
    assert (row["vars"], row["cons"], row["nonzeros"]) == (3, 1, 3)


# -- statistics on hand-computed numbers -------------------------------------
def test_shifted_geometric_mean():
    assert shifted_geomean([0.0, 30.0]) == pytest.approx(10.0)          # sqrt(10*40) - 10
    assert shifted_geomean([1.0, 100.0]) == pytest.approx(math.sqrt(11 * 110) - 10)
    assert shifted_geomean([2.0, 2.0, 2.0], shift=1.0) == pytest.approx(2.0)
    assert shifted_geomean([8.0, 1.0], shift=0.0) == pytest.approx(math.sqrt(8.0))
    assert shifted_geomean([]) is None


def test_performance_profile_by_hand():
    times = [[1.0, 2.0, INF], [4.0, INF, 1.0], [3.0, 3.0, 6.0], [INF, INF, INF]]
    ratios = performance_ratios(times)
    assert ratios == [[1.0, 2.0, INF], [4.0, INF, 1.0], [1.0, 1.0, 2.0], [INF, INF, INF]]
    rho = performance_profile(ratios, [1.0, 2.0, 4.0, 100.0])
    assert rho == [[0.5, 0.5, 0.75, 0.75], [0.25, 0.5, 0.5, 0.5], [0.25, 0.5, 0.5, 0.5]]
    # times below the floor tie: 1 ms and 5 ms are both "10 ms"
    assert performance_ratios([[0.001, 0.005, 0.02]]) == [[1.0, 1.0, 2.0]]
    assert wins(times) == [2, 1, 1]
    assert wins([], 3) == [0, 0, 0]


def test_summary_counts_unsolved_at_the_limit_over_common_models():
    rows = [
        {"model": "a", "backend": "x", "status": "optimal", "time": 2.0},
        {"model": "a", "backend": "y", "status": "feasible", "time": 10.0},
        {"model": "b", "backend": "x", "status": "error", "time": 0.1},
        {"model": "b", "backend": "y", "status": "infeasible", "time": 5.0},
        {"model": "c", "backend": "x", "status": "optimal", "time": 1.0},
        {"model": "c", "backend": "y", "status": "unreadable", "time": None},
    ]
    x, y = summarize(rows, ["x", "y"], 10.0)
    assert (x["models"], x["unreadable"], x["solved"], x["failed"], x["common"]) == (3, 0, 2, 1, 2)
    assert (y["models"], y["unreadable"], y["solved"], y["feasible"],
            y["common"]) == (2, 1, 1, 1, 2)
    # over the common models a and b: x (2, 10) and y (10, 5)
    assert x["sgm_time"] == pytest.approx(math.sqrt(12 * 20) - 10, abs=1e-4)
    assert y["sgm_time"] == pytest.approx(math.sqrt(20 * 15) - 10, abs=1e-4)
    assert (x["wins"], y["wins"]) == (1, 1)
    assert time_matrix(rows, ["a"], ["x", "y"]) == [[2.0, INF]]


def _row(backend, status, objective=None, bound=None, sense="min"):
    return {"model": "m", "backend": backend, "status": status, "objective": objective,
            "bound": bound, "sense": sense}


def test_disagreements_are_found_and_agreements_are_not():
    assert disagreements([_row("a", "optimal", 100.0, 100.0),
                          _row("b", "optimal", 100.015, 100.0)], 1e-4) == []
    assert agreement_tolerance(100.0, 100.015, 1e-4) > 0.015
    both = disagreements([_row("a", "optimal", 100.0), _row("b", "optimal", 101.0)], 1e-4)
    assert len(both) == 1 and "both claim optimal" in both[0].detail
    better = disagreements([_row("a", "optimal", 5.0, sense="max"),
                            _row("b", "feasible", 7.0, 9.0, sense="max")], 0.0)
    assert len(better) == 1 and "found 7" in better[0].detail
    worse = disagreements([_row("a", "optimal", 5.0, sense="max"),
                           _row("b", "feasible", 4.0, 5.0, sense="max")], 0.0)
    assert worse == []
    bound = disagreements([_row("a", "optimal", 5.0), _row("b", "feasible", 9.0, 6.0)], 0.0)
    assert len(bound) == 1 and "bound 6" in bound[0].detail
    infeasible = disagreements([_row("a", "infeasible"), _row("b", "feasible", 3.0, 1.0)], 0.0)
    assert len(infeasible) == 1 and "infeasible" in infeasible[0].detail
    assert disagreements([_row("a", "killed"), _row("b", "unreadable")], 0.0) == []


def test_a_disagreement_exits_1_and_is_loud(tmp_path, monkeypatch, capsys):
    m = LinearModel("one")
    m.maximize(m.add_var("x", ub=1, integer=True))
    write_model_file(m, tmp_path / "one.mps")

    def lying(task):
        objective = 1.0 if task["backend"] == "highs" else 2.0
        return {"model": "one.mps", "backend": task["backend"], "status": "optimal",
                "objective": objective, "bound": objective, "sense": "max", "time": 0.1}

    monkeypatch.setattr(solvers, "run_capped", lying)
    out = tmp_path / "out"
    code = solvers.main([str(tmp_path / "one.mps"), "--backends", "highs,scip",
                         "--out", str(out), "--quiet"])
    assert code == 1
    assert "DISAGREEMENT" in capsys.readouterr().err
    text = (out / "results.md").read_text()
    assert "DISAGREEMENT" in text and "NO (see disagreements)" in text


# -- bad input ----------------------------------------------------------------
@pytest.mark.parametrize("argv, words", [
    (["/no/such/graph.json"], "does not exist"),
    (["{examples}/fig9.json", "--backends", "gurobi"], "unknown solver backend"),
    (["{examples}/fig9.json", "--backends", "pyomo:nosuchsolver"], "not available"),
    (["{examples}/fig9.json", "--time-limit", "0"], "--time-limit"),
    (["{examples}/fig9.json", "--hardware", "nosuchchip"], "nosuchchip"),
    (["{empty}"], "holds no model file"),
    (["{empty}", "--dim", "seq=4"], "pipeline.run options apply to a graph only"),
])
def test_bad_input_exits_2_with_a_message(tmp_path, capsys, argv, words):
    (tmp_path / "empty").mkdir()
    argv = [a.format(examples=EXAMPLES, empty=tmp_path / "empty") for a in argv]
    code = solvers.main(argv + ["--out", str(tmp_path / "out"), "--quiet"])
    err = capsys.readouterr().err
    assert code == 2
    assert err.startswith("error: ") and words in err


def test_default_backends_are_the_installed_ones():
    assert solvers.parse_backends(None) == available_backends()
    assert solvers.parse_backends("scip,highs,scip") == ["scip", "highs"]


def test_two_workers_give_the_same_answers_as_one(tmp_path):
    folder = tmp_path / "models"
    folder.mkdir()
    for k, cap in enumerate((7, 9)):
        m = LinearModel(f"knap{k}")
        xs = [m.add_binary(f"x{i}") for i in range(4)]
        m.add(sum(w * x for w, x in zip([5, 4, 3, 2], xs)) <= cap)
        m.maximize(sum(v * x for v, x in zip([10, 7, 5, 3], xs)))
        write_model_file(m, folder / f"knap{k}.mps")
    results = []
    for workers in ("1", "2"):
        out = tmp_path / f"out{workers}"
        assert solvers.main([str(folder), "--backends", "highs,scip", "--workers", workers,
                             "--out", str(out), "--quiet"]) == 0
        with open(out / "results.csv", encoding="utf-8") as f:
            results.append([(r["model"], r["backend"], r["status"], float(r["objective"]))
                            for r in csv.DictReader(f)])
        assert f"{workers} solve(s) at a time" in (out / "results.md").read_text()
    assert results[0] == results[1]
    assert [r[3] for r in results[0]] == [13.0, 13.0, 17.0, 17.0]   # 5+2 <= 7, 5+4 <= 9


def test_a_backend_that_reads_none_of_the_models_leaves_the_others_compared():
    rows = [{"model": "lp", "backend": "cp-sat", "status": "unreadable", "time": None},
            {"model": "lp", "backend": "highs", "status": "optimal", "time": 1.0},
            {"model": "lp", "backend": "scip", "status": "optimal", "time": 3.0}]
    cp, highs, scip = summarize(rows, ["cp-sat", "highs", "scip"], 10.0)
    assert (cp["common"], cp["sgm_time"], cp["wins"], cp["unreadable"]) == (0, None, 0, 1)
    assert (highs["common"], highs["wins"], scip["wins"]) == (1, 1, 0)
    assert scip["sgm_time"] == 3.0


def test_best_solution_counts_the_best_objective_found_proved_or_not():
    from benchmarks.solver_stats import best_solutions
    rows = [{"model": "p", "backend": "a", "status": "feasible", "objective": 100.0},
            {"model": "p", "backend": "b", "status": "feasible", "objective": 100.005},
            {"model": "p", "backend": "c", "status": "feasible", "objective": 101.0},
            {"model": "q", "backend": "a", "status": "timeout_no_solution"},
            {"model": "q", "backend": "c", "status": "optimal", "objective": 4.0,
             "sense": "max"},
            {"model": "q", "backend": "b", "status": "feasible", "objective": 3.0,
             "sense": "max"}]
    assert best_solutions(rows, ["p", "q"], ["a", "b", "c"]) == [1, 1, 1]
    assert best_solutions(rows, ["q"], ["a", "b", "c"]) == [0, 0, 1]


def test_the_report_is_written_again_from_its_csv(tmp_path):
    from benchmarks.solver_report import Settings, rewrite_report, write_report
    rows = [{"model": "m.mps", "backend": "highs", "status": "optimal", "objective": 2.0,
             "bound": 2.0, "time": 0.5, "vars": 3, "sense": "max"},
            {"model": "m.mps", "backend": "scip", "status": "killed", "time": None}]
    settings = Settings("t", ("highs", "scip"), 10.0, 1, 0, 1e-4, 35.0, "m.mps")
    write_report(rows, settings, [], tmp_path)
    first = (tmp_path / "results.csv").read_text()
    (tmp_path / "results.md").unlink()
    assert rewrite_report(tmp_path) == []
    assert (tmp_path / "results.csv").read_text() == first
    text = (tmp_path / "results.md").read_text()
    assert "| m.mps | m | scip | killed |" in text and "| 3 |" in text
