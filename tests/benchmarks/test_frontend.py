"""The ``frontend`` benchmark suite: its entries, rows and target verdicts (small sizes only)."""

from __future__ import annotations

from pathlib import Path

from benchmarks.registry import get_suite
from benchmarks.generators import random_dag
from benchmarks.suites.frontend import SIZES, measure, run_stages, within_targets
from model.graphjson import write_graph


def test_the_suite_is_registered_with_a_row_per_size():
    suite = get_suite("frontend")
    assert [e.params["nodes"] for e in suite.entries(False)] == list(SIZES)
    assert [e.params["nodes"] for e in suite.entries(True)] == [10_000, 100_000]
    assert {"load_s", "peak_mib", "cut_s", "load_ratio"} <= {c.key for c in suite.columns}


def test_within_targets():
    assert within_targets({"load_s": 9.0, "peak_mib": 1500.0}) == "yes"
    assert within_targets({"load_s": 11.0, "peak_mib": 1500.0}) == "no"
    assert within_targets({"load_s": 9.0, "peak_mib": 2100.0}) == "no"
    assert within_targets({"peak_mib": 1.0}) == "?"


def test_run_stages_reports_every_stage(tmp_path):
    path = tmp_path / "g.json"
    write_graph(random_dag(200, 400, seed=0), path)
    row = run_stages(str(path))
    assert set(row) == {"load_s", "peak_mib", "estimate_s", "cut_s", "sections"}
    assert row["sections"] >= 1


def test_a_child_that_fails_keeps_what_it_finished(tmp_path):
    assert run_stages(str(tmp_path / "missing.json")) == {}


def test_measure_with_a_baseline_gives_ratios():
    # the current tree as its own baseline: every ratio is defined
    row = measure(300, baseline=str(Path(__file__).resolve().parents[2]))
    assert row["nodes"] == 300 and row["edges"] == 600 and row["within_target"] == "yes"
    assert all(row[k] is not None for k in ("load_ratio", "peak_ratio", "cut_ratio"))


def test_measure_without_a_baseline_has_no_ratios():
    row = measure(300, baseline="/no/such/tree")
    assert "load_ratio" not in row and "peak_ratio" not in row and row["cut_s"] >= 0
