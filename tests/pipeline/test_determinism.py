"""Same graph, hardware, options, seed and work: the same mapping.json on RDU targets.

The searches are budgeted in work (moves, steps, rounds, CP-SAT's deterministic time,
HiGHS's nodes) planned from ``--work``, never in measured seconds, and the wall clock cuts in
only at the run's deadline. The runs here plan a few seconds of work with the deadline two
minutes away, so no search may be cut short (asserted: a test that skipped on a loaded
machine could pass by luck); one run of each pair has both cores of this machine taken by
busy-looping processes, and the unit tests slow a run down (a ``time.sleep`` in a cheap
function) and expect the same answer, which a budget in seconds would not give.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from benchmarks.generators import random_dag
from formulations.placement import greedy_place
from formulations.placement.problem import placement_problem
from formulations.solver import Budget
from hardware import build_fabric, load_hardware
from model.graphjson import graph_to_dict, write_json_atomic
from pipeline.run import main

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
_annealing = sys.modules["formulations.placement.annealing"]
_lns = sys.modules["formulations.placement.lns"]
_tabu = sys.modules["formulations.placement.tabu"]


def _timing_free(value):
    """``value`` without its timing fields: keys starting with ``time`` or ``seconds``,
    and the ``*_time`` keys of the stages (docs/formats.md)."""
    if isinstance(value, dict):
        return {k: _timing_free(v) for k, v in value.items()
                if not (k.startswith(("time", "seconds")) or k.endswith("_time"))}
    if isinstance(value, list):
        return [_timing_free(v) for v in value]
    return value


class BusyLoops:
    """``count`` processes looping on the CPU while the context lasts."""

    def __init__(self, count: int = 2):
        self.count, self.processes = count, []

    def __enter__(self):
        self.processes = [subprocess.Popen([sys.executable, "-c", "while True: pass"])
                          for _ in range(self.count)]
        return self

    def __exit__(self, *exc):
        for process in self.processes:
            process.kill()
            process.wait()


def _map_twice(graph_path: Path, tmp_path: Path, *extra: str) -> tuple[dict, dict]:
    """The mapping of ``graph_path`` alone, then beside two busy loops: 6 s of planned work,
    the deadline 120 s away."""
    outs = []
    for run, load in (("alone", 0), ("busy", 2)):
        out = tmp_path / run
        with BusyLoops(load):
            code = main([str(graph_path), "--out", str(out), "--quiet", "--no-pictures",
                         "--time-limit", "120", "--work", "6", *extra])
        assert code == 0
        outs.append(json.loads((out / "mapping.json").read_text(encoding="utf-8")))
    return outs[0], outs[1]


def _cut_short(mapping: dict) -> list[str]:
    """The stages of ``mapping`` whose search the wall clock cut short."""
    return [f"{s.get('stage')} ({s.get('time')} s)" for s in mapping.get("stages", [])
            if s.get("cut_short")]


def _same(a: dict, b: dict) -> None:
    assert _cut_short(a) + _cut_short(b) == [] and a["run"]["cut_short"] == 0
    assert json.dumps(_timing_free(a), sort_keys=True) == json.dumps(_timing_free(b),
                                                                       sort_keys=True)


def test_fig9_on_plasticine_alone_and_on_a_busy_machine_gives_the_same_mapping(tmp_path):
    a, b = _map_twice(EXAMPLES / "fig9.json", tmp_path, "--seed", "1")
    _same(a, b)


def test_a_generated_60_node_graph_alone_and_on_a_busy_machine_gives_the_same_mapping(
        tmp_path):
    graph = random_dag(60, 90, seed=1, components=1)   # one section, no feedback round: ~6 s
    path = tmp_path / "gen60.json"
    write_json_atomic(graph_to_dict(graph), path)
    a, b = _map_twice(path, tmp_path, "--seed", "4")
    _same(a, b)


# ---------------------------------------------------------------------------------------------
# each search: same seed and planned seconds, same answer, however slow the machine
# ---------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def section():
    fabric = build_fabric(load_hardware("plasticine"))
    graph = random_dag(32, 48, seed=5, components=1)
    problem = placement_problem(graph, fabric)
    start = greedy_place(graph, fabric, graph.node_ids)
    return problem, fabric, start


def _slowed(monkeypatch, module, name, every, seconds=0.002):
    """Make ``module.name`` sleep ``seconds`` every ``every``-th call."""
    original = getattr(module, name)
    calls = [0]

    def slow(*args, **kwargs):
        calls[0] += 1
        if calls[0] % every == 0:
            time.sleep(seconds)
        return original(*args, **kwargs)

    monkeypatch.setattr(module, name, slow)
    return calls


def test_anneal_to_budget_is_the_same_when_slowed_down(section, monkeypatch):
    problem, fabric, start = section

    def run():
        return _annealing.anneal_to_budget(problem, fabric, start,
                                           Budget(0.4, time.monotonic() + 120), seed=3)

    fast, fast_cost, fast_stats = run()
    calls = _slowed(monkeypatch, _annealing.AnnealState, "apply", every=200)   # accepted moves
    slow, slow_cost, slow_stats = run()
    assert calls[0] > 1000                      # the slow run really went through the sleeps
    assert not fast_stats.get("cut_short") and not slow_stats.get("cut_short")
    assert slow == fast and slow_cost == fast_cost
    assert slow_stats["proposals"] == fast_stats["proposals"]


def test_tabu_search_is_the_same_when_slowed_down(section, monkeypatch):
    problem, _, start = section
    index = problem.to_indices(start)
    fast = _tabu.tabu_search(problem, index, Budget(0.3, time.monotonic() + 120), seed=2)
    calls = _slowed(monkeypatch, _tabu.TabuSearch, "step", every=2)
    slow = _tabu.tabu_search(problem, index, Budget(0.3, time.monotonic() + 120), seed=2)
    assert calls[0] > 10
    assert slow == fast


@pytest.mark.parametrize("patience", [None, 3])
def test_lns_is_the_same_when_slowed_down(section, monkeypatch, patience):
    problem, fabric, start = section
    index = problem.to_indices(start)
    cost = _lns.problem_cost(problem, start)

    def run():
        return _lns.lns(problem, fabric, index, cost, Budget(2.0, time.monotonic() + 120),
                        backend="cp-sat", seed=5, window=8, patience=patience,
                        one_anneal=0.1)

    fast_index, fast_cost, fast_stats = run()
    calls = _slowed(monkeypatch, _lns, "problem_cost", every=1, seconds=0.02)
    slow_index, slow_cost, slow_stats = run()
    assert calls[0] > 3
    assert not fast_stats.get("cut_short") and not slow_stats.get("cut_short")
    assert fast_stats["lns_rounds"] > 0
    assert (slow_index, slow_cost) == (fast_index, fast_cost)
    assert {k: v for k, v in slow_stats.items() if k != "last_improvement"} == \
        {k: v for k, v in fast_stats.items() if k != "last_improvement"}


def test_a_search_the_wall_clock_stops_says_so(section):
    problem, fabric, start = section
    _, _, stats = _annealing.anneal(problem, fabric, start,
                                    Budget(5.0, time.monotonic() - 1), seed=0)
    assert stats["cut_short"] and stats["proposals"] == 0
    stats = {}
    _tabu.tabu_search(problem, problem.to_indices(start), Budget(5.0, time.monotonic() - 1),
                      stats=stats)
    assert stats["cut_short"]
