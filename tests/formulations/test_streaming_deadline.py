"""The Streaming Engine keeps one deadline for the whole run (issue 23, item 3):
``--time-limit`` caps the sweep, it is not spent again at every II, nor again by every part
and partition of a split kernel."""

from __future__ import annotations

import time
from types import SimpleNamespace

import pytest

import formulations.streaming.sweep as sweep
import pipeline.streaming as streaming
from formulations.solver import SolveSettings
from formulations.streaming.kernel import SdfUnmapped, part_key
from formulations.streaming.problem import StreamingInfeasible, lower_bounds, problem_from_graph
from hardware import load_hardware
from model.graph import Edge, Graph, Node
from pipeline.budget import MAPPING_SHARE
from pipeline.feedback import MappingFailed
from pipeline.options import RunOptions


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


# ---------------------------------------------------------------------------------------------
# the split path (pipeline.streaming): the run's deadline caps parts and partitions
# ---------------------------------------------------------------------------------------------
def chain(n: int) -> Graph:
    """A chain of ``n`` instructions: more than se16's 16 tiles x 6 slots, so it is split."""
    return Graph(f"chain{n}", [Node(f"n{i}") for i in range(n)],
                 [Edge(f"n{i}", f"n{i + 1}") for i in range(n - 1)])


def test_the_run_deadline_caps_the_split_path(monkeypatch):
    """Every part's sweep uses all the time it is given (and half a second more, as the
    minimum solves do) and finds nothing: no part or partition is begun after the deadline,
    each part gets a share of what is left, and the failure says it was cut short."""
    start = time.monotonic()
    clock = FakeClock()
    clock.now = start
    monkeypatch.setattr(streaming, "time", SimpleNamespace(monotonic=clock,
                                                           perf_counter=time.perf_counter))
    given: list[tuple[int, float]] = []

    def schedule_part(part, spec, settings, cache, say):
        given.append((len(part.nodes), settings.time_limit))
        clock.now += settings.time_limit + 0.5
        cache[part_key(part)] = SdfUnmapped(["T0 time limit: no mapping found"], [])
        raise cache[part_key(part)]

    monkeypatch.setattr(streaming, "schedule_part", schedule_part)
    with pytest.raises(MappingFailed) as failed:
        streaming.map_streaming(chain(120), load_hardware("se16"), RunOptions(time_limit=20.0))
    mapping = failed.value.mapping
    total = 20.0 * MAPPING_SHARE
    # nothing begun after the deadline (the run's budget starts a moment after ``start``)
    assert clock.now - start <= total + 0.5 + 0.25
    assert given and given[0][1] < total                    # the first part gets a share
    assert given[0][1] == pytest.approx(total * given[0][0] / 120, rel=0.05)
    assert "T0 time limit: the run's deadline" in mapping.diagnosis
    assert mapping.run["cut_short"] >= 1


def test_one_sdf_without_a_greedy_mapping_leaves_time_for_a_split(monkeypatch):
    """When the greedy warm start does not map the one SDF, its sweep gets ONE_SDF_SHARE of
    the run and the splits the rest; with a greedy mapping it gets the whole run."""
    given: list[float] = []

    def schedule_sdf(graph, problem, spec, settings, say):
        given.append(settings.time_limit)
        raise SdfUnmapped(["T0 time limit: no mapping found"], [])

    def no_greedy(graph, spec):
        raise StreamingInfeasible(["greedy: dead end"])

    monkeypatch.setattr(streaming, "schedule_sdf", schedule_sdf)
    monkeypatch.setattr(streaming, "schedule_part", lambda *args: (_ for _ in ()).throw(
        SdfUnmapped(["T0 time limit: no mapping found"], [])))
    options = RunOptions(time_limit=20.0, max_iterations=2)
    with pytest.raises(MappingFailed):
        streaming.map_streaming(chain(5), load_hardware("se16"), options)
    monkeypatch.setattr(streaming, "greedy_schedule", no_greedy)
    with pytest.raises(MappingFailed):
        streaming.map_streaming(chain(5), load_hardware("se16"), options)
    total = 20.0 * MAPPING_SHARE
    assert given[0] == total
    assert given[1] == pytest.approx(total * streaming.ONE_SDF_SHARE, rel=0.02)
