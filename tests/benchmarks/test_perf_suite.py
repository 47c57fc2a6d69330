"""The ``perf`` benchmark suite (simulator speed and estimates on real mappings)."""

from __future__ import annotations

from pathlib import Path

from benchmarks.registry import get_suite
from benchmarks.suites import perf

REPO = Path(__file__).resolve().parents[2]


def test_quick_entries_are_the_speed_target_and_the_onnx_examples(monkeypatch, tmp_path):
    names = [e.name for e in get_suite("perf").entries(True)]
    assert names[-2:] == ["bert_encoder_layer on plasticine", "gpt2_block on plasticine"]
    monkeypatch.setenv("RDAMAP_GRAPHS", str(tmp_path / "absent"))
    entries = get_suite("perf").entries(True)
    assert "not available" in entries[0].skip and len(entries) == 3


def test_a_row_has_the_estimate_and_the_simulation_time():
    row = perf.simulate_file(str(REPO / "examples" / "fig9.json"), "plasticine", time_limit=10)
    assert row["sections"] == 1 and row["units"] >= row["nodes"] == 18
    assert row["throughput"] > 0 and 0 < row["normalised_min"] <= row["normalised_mean"] <= 1
    assert row["sim_s"] >= 0 and row["samples"] >= 3 * 60
    shares = sum(row[f"{k}_pct"] for k in ("compute", "transfer", "dram", "reconfig"))
    assert abs(shares - 100) < 1e-6
    assert row["bottleneck"].startswith("section 0: ")
