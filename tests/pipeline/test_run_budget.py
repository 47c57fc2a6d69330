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
from pipeline.budget import MIN_SOLVE_SECONDS, RunPlan, placement_cap
from hardware import load_hardware
from model.importers import load_graph
from pipeline.flow import map_graph
from pipeline.rdu.levels import FAST_PATH_SECONDS, fast_path_reason
from pipeline.options import RunOptions
from pipeline.run import main
from tests.conftest import real_graph

ROOT = Path(__file__).resolve().parents[2]


class Clock:
    def __init__(self):
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_planned_shares_add_up_to_the_budget_at_most():
    budget = RunPlan(10.0)
    assert budget.cut_seconds() == pytest.approx(2.5)
    planned = 2.5
    for nodes_left in (40, 20):                   # two sections of 20 nodes
        place, route = budget.place_route_seconds(nodes=20, nodes_left=nodes_left)
        assert place <= placement_cap(20)
        planned += place + route
    assert planned <= 10.0 + 1e-9
    budget.unplanned = 0.0
    assert budget.place_route_seconds(5, 5) == (MIN_SOLVE_SECONDS, MIN_SOLVE_SECONDS)


def test_the_plan_does_not_depend_on_the_wall_clock():
    """Shares come from the budget and the work, never from time spent: same seed, same work."""
    clock = Clock()
    fast, slow = RunPlan(30.0, clock=clock), RunPlan(30.0, clock=clock)
    plans = []
    for budget, spent in ((fast, 0.0), (slow, 25.0)):
        clock.now = 0.0
        cut = budget.cut_seconds()
        clock.now = spent                         # the cut took 0 s or 25 s
        plans.append((cut, budget.buffer_seconds(10, 30), budget.place_route_seconds(10, 30)))
    assert plans[0] == plans[1]
    assert slow.left() == pytest.approx(5.0) and fast.settings is not None


def test_settings_carry_the_deadline():
    clock = Clock()
    budget = RunPlan(8.0, clock=clock)
    settings = budget.settings(RunOptions(seed=4), "routing", 2.0)
    assert (settings.backend, settings.time_limit, settings.seed) == ("highs", 2.0, 4)
    assert settings.deadline == budget.deadline == 8.0


@pytest.mark.parametrize("bad", ["nan", "inf", "-1", "0", "1e309", "1e308", "604801"])
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
    write_graph(random_dag(300, 700, seed=1), graph)
    out = tmp_path / "out"
    run = _start(graph, out, "--time-limit", "300")
    for line in run.stderr:              # the graph is loaded: the section cut starts
        if line.split("] ", 1)[-1].startswith("mapping "):    # after the elapsed time
            break
    time.sleep(2.0)                      # inside a solve (the cut's, or a section's)
    run.send_signal(signum)
    asked = time.monotonic()
    rest = run.communicate(timeout=60)[1]
    assert run.returncode == code, rest
    assert time.monotonic() - asked < 30          # not the 300 s budget
    assert "interrupted by" in rest and "Traceback" not in rest
    assert not (out / "mapping.json").exists()
    assert not [p for p in out.iterdir()] if out.exists() else True


def test_sigterm_with_local_workers_leaves_no_process_and_no_semaphore(tmp_path):
    """Once SIGTERM left 12 semaphores to the resource tracker and workers alive for
    seconds: the run waited for a solve begun here that did not stop, then skipped the
    finalizers that release the workers' queues. Now: 143 within about a second, nothing
    left running a second later, no warning."""
    psutil = pytest.importorskip("psutil")
    graph = real_graph("msr-dnn/OperatorGraphs/bert_l-3_inference.json")
    run = _start(graph, tmp_path / "out", "--workers", "2", "--time-limit", "60")
    for line in run.stderr:
        if line.split("] ", 1)[-1].startswith("mapping "):    # after the elapsed time
            break
    time.sleep(3.0)                      # the cut done, sections begun here while workers boot
    children = psutil.Process(run.pid).children(recursive=True)
    run.send_signal(signal.SIGTERM)
    asked = time.monotonic()
    rest = run.communicate(timeout=60)[1]   # to the end of stderr: the tracker's warnings too
    assert run.returncode == 143, rest
    assert time.monotonic() - asked < 4, rest     # the here-solve is not waited for
    assert "interrupted by SIGTERM" in rest and "Traceback" not in rest
    assert "leaked" not in rest, rest
    time.sleep(1.0)
    assert not [p for p in children if p.is_running() and p.status() != psutil.STATUS_ZOMBIE]


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


def test_a_budget_far_too_small_still_maps_by_the_fast_path():
    """A budget far too small still ends with a checked mapping: greedy placement and
    PathFinder routing, each stage saying why. (0.3 s: each section is planned less than
    FAST_PATH_SECONDS; at 0.01 s the cut alone outlasted the whole run on a loaded machine.)"""
    graph = load_graph(str(ROOT / "examples" / "fig9.json"))
    mapping = map_graph(graph, load_hardware("plasticine"), RunOptions(time_limit=0.3))
    assert mapping.status == "mapped"
    placements = [s for s in mapping.stages if s["stage"] == "placement"]
    assert placements and all("greedy placement and PathFinder routing" in s["note"]
                              for s in placements)


def test_the_fast_path_is_chosen_from_the_plan():
    """Planned below FAST_PATH_SECONDS: the fast path by the plan, so the same seed still
    repeats; the greedy placer needs none."""
    assert fast_path_reason(RunOptions(), FAST_PATH_SECONDS / 2).endswith(
        f"below {FAST_PATH_SECONDS} s")
    assert fast_path_reason(RunOptions(), 2 * FAST_PATH_SECONDS) is None
    assert fast_path_reason(RunOptions(placer="greedy"), 0.0) is None


def test_past_the_deadline_a_section_gets_the_fastest_legal_answer(monkeypatch):
    monkeypatch.setattr(RunPlan, "deadline", property(lambda self: self.started))
    graph = load_graph(str(ROOT / "examples" / "fig9.json"))
    mapping = map_graph(graph, load_hardware("plasticine"), RunOptions(time_limit=60))
    assert mapping.status == "mapped" and mapping.run["cut_short"] >= 1
    placements = [s for s in mapping.stages if s["stage"] == "placement"]
    assert placements and all(s.get("cut_short") and "deadline" in s["note"]
                              for s in placements)


@pytest.mark.parametrize("fast", [None, "0.100 s planned, below 0.15 s"])
def test_a_section_begun_past_the_deadline_routes_until_the_runs_last_moment(monkeypatch, fast):
    """A section begun between the deadline and the overdue point takes the fast path, and
    its PathFinder may iterate until the point the run must finish sections by (the promised
    end less the outputs), not just until the overdue point; so does one that its small plan
    sent down the fast path (a retry late in a loaded run): capped at the deadline already
    passed, its PathFinder stopped after one iteration and the section went back to the cut."""
    import pipeline.rdu.section_task as section_task
    from dataclasses import replace as copy

    from formulations.solver import SolveSettings
    from model.graph import Edge, Graph, Node

    seen = {}

    def capture(graph, fabric, section, options, say, settings, penalty):
        seen["placer"], seen["router"] = options.placer, options.router
        seen["deadline"] = settings[1].deadline
        raise RuntimeError("captured")

    monkeypatch.setattr(section_task, "map_section", capture)
    now = time.time()
    plan = SolveSettings(time_limit=1.0)
    task = section_task.SectionTask(
        Graph("g", [Node("a"), Node("b")], [Edge("a", "b")]), load_hardware("tiny"), 0,
        RunOptions(), (plan, plan), None, fast, deadline=now - 1, overdue=now + 100,
        finish=now + 200)
    with pytest.raises(RuntimeError, match="captured"):
        section_task.compile_section(copy(task))
    assert (seen["placer"], seen["router"]) == ("greedy", "negotiated")
    assert abs(seen["deadline"] - (time.monotonic() + 200)) < 5
