"""The run's budget and its interrupts: one wall-clock budget, Ctrl-C/SIGTERM stop at once."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from benchmarks.generators import random_dag
from model.graphjson import write_graph
from pipeline.budget import MIN_SOLVE_SECONDS, Budget, placement_cap
from pipeline.run import main

ROOT = Path(__file__).resolve().parents[2]


class Clock:
    def __init__(self):
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_shares_never_exceed_the_time_left():
    clock = Clock()
    budget = Budget(10.0, clock=clock)
    assert budget.cut_seconds() == pytest.approx(2.5)
    clock.now = 4.0
    place, route = budget.place_route_seconds(nodes=20, nodes_left=40)
    assert place + route <= budget.left() * 20 / 40 + 1e-9
    assert place <= placement_cap(20)
    clock.now = 11.0
    assert budget.expired() and budget.left() == 0.0
    assert budget.section_seconds(5, 5) == MIN_SOLVE_SECONDS


def test_later_sections_get_what_earlier_ones_left():
    clock = Clock()
    budget = Budget(30.0, clock=clock)
    first = budget.section_seconds(nodes=10, nodes_left=30)
    clock.now = 1.0                      # the first section finished early
    second = budget.section_seconds(nodes=10, nodes_left=20)
    assert second > first


@pytest.mark.parametrize("bad", ["nan", "inf", "-1", "0", "1e309"])
def test_a_budget_that_is_not_a_finite_positive_number_is_bad_input(bad, tmp_path, capsys):
    code = main([str(ROOT / "examples" / "fig9.json"), "--time-limit", bad, "--out",
                 str(tmp_path / "out"), "--quiet"])
    assert code == 2
    assert "--time-limit" in capsys.readouterr().err
    assert not (tmp_path / "out" / "mapping.json").exists()


def _start(graph: Path, out: Path, *extra: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "pipeline.run", str(graph), "--out", str(out),
                             "--hardware", "plasticine", "--no-pictures", *extra],
                            cwd=ROOT, stderr=subprocess.PIPE, text=True)


@pytest.mark.parametrize("signum, code", [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_an_interrupt_stops_the_solve_at_once_and_writes_nothing(signum, code, tmp_path):
    graph = tmp_path / "big.json"
    write_graph(random_dag(400, 900, seed=1), graph)
    out = tmp_path / "out"
    run = _start(graph, out, "--time-limit", "300")
    for line in run.stderr:              # the run has started solving
        if "section(s)" in line:
            break
    run.send_signal(signum)
    asked = time.monotonic()
    rest = run.communicate(timeout=60)[1]
    assert run.returncode == code, rest
    assert time.monotonic() - asked < 30          # not the 300 s budget
    assert "interrupted by" in rest and "Traceback" not in rest
    assert not (out / "mapping.json").exists()
    assert not [p for p in out.iterdir()] if out.exists() else True


def test_same_seed_same_streaming_mapping(tmp_path):
    """The Streaming Engine run is deterministic for a seed (timing fields apart)."""
    kept = []
    for k in range(2):
        out = tmp_path / f"out{k}"
        assert main([str(ROOT / "examples" / "fig9.json"), "--hardware", "se16", "--seed", "3",
                     "--out", str(out), "--quiet", "--no-pictures", "--time-limit", "20"]) == 0
        kept.append(_without_timing(json.loads((out / "mapping.json").read_text())))
    assert kept[0] == kept[1]


def _without_timing(data):
    if isinstance(data, dict):
        return {k: _without_timing(v) for k, v in data.items()
                if not k.startswith(("seconds", "time"))}
    if isinstance(data, list):
        return [_without_timing(v) for v in data]
    return data
