"""The Streaming Engine's II sweep keeps one deadline for the whole run (issue 23, item 3):
``--time-limit`` caps the sweep, it is not spent again at every II."""

from __future__ import annotations

import pytest

import formulations.streaming.sweep as sweep
from formulations.solver import SolveSettings
from formulations.streaming.problem import StreamingInfeasible, lower_bounds, problem_from_graph
from hardware import load_hardware
from model.graph import Edge, Graph, Node


class FakeClock:
    """A clock that only moves when a stubbed solve says it spent its time."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def ring(n: int) -> Graph:
    """A recurrence of ``n`` instructions: RecMII far below se16-ii32's max_ii of 32."""
    return Graph(f"ring{n}", [Node(f"n{i}") for i in range(n)],
                 [Edge(f"n{i}", f"n{(i + 1) % n}", distance=int(i == n - 1)) for i in range(n)])


@pytest.fixture
def stubbed(monkeypatch):
    """A fake clock and solves that each use all the time they were given and find
    nothing; the (II, seconds) each layout search was given."""
    clock = FakeClock()
    monkeypatch.setattr(sweep.time, "perf_counter", clock)
    budgets: list[tuple[int, float]] = []

    def layout_first(problem, ii, time_limit, seed, warm):
        budgets.append((ii, time_limit))
        return None, None, time_limit

    def solve_ii(problem, ii, deadline, *rest):
        clock.now = max(clock.now, deadline)
        return None, False, 0, False

    monkeypatch.setattr(sweep, "_layout_first", layout_first)
    monkeypatch.setattr(sweep, "_solve_ii", solve_ii)
    return clock, budgets


def test_the_time_limit_caps_the_whole_sweep(stubbed):
    clock, budgets = stubbed
    problem = problem_from_graph(ring(3), load_hardware("se16-ii32"))
    assert problem.max_ii - lower_bounds(problem)["ii"] > 10
    with pytest.raises(StreamingInfeasible, match="T0 time limit: no mapping found within 8 s"):
        sweep.sweep_ii(problem, SolveSettings(time_limit=8.0))
    assert clock.now - 1000.0 <= 8.0 + 1e-9        # the whole sweep within its limit
    assert budgets[0] == (lower_bounds(problem)["ii"], 8.0 * sweep.II_SHARE)
    assert all(b2 < b1 for (_, b1), (_, b2) in zip(budgets, budgets[1:]))   # what is left


def test_the_ii_of_the_warm_start_gets_all_the_time_left(stubbed):
    _, budgets = stubbed
    problem = problem_from_graph(ring(3), load_hardware("se16-ii32"))
    low = lower_bounds(problem)["ii"]

    class Warm:
        ii = low + 1

    assert sweep.sweep_ii(problem, SolveSettings(time_limit=8.0), Warm()).ii == low + 1
    assert budgets == [(low, 4.0), (low + 1, 4.0)]
