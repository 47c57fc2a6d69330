"""The Streaming Engine keeps one budget for the whole run (issue 23, item 3):
``--time-limit`` caps the sweep, it is not spent again at every II, nor again by every part
and partition of a split kernel; the budget is planned work, never read from the wall clock,
so a slow clock gives the same schedule (the deadline only caps it)."""

from __future__ import annotations

import time
from types import SimpleNamespace

import pytest

from benchmarks.se_generators import se_random_dag
import formulations.solver.budget as budget_clock
import formulations.streaming.sweep as sweep
import pipeline.streaming as streaming
from formulations.solver import Budget, SolveSettings
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
    """Solves that each spend all the work their II was given and find nothing; the
    (II, planned seconds) each II was given, and the sweep's budget."""
    budgets: list[tuple[int, float]] = []
    spent = Budget(0.0, 0.0)

    def layout_first(problem, ii, budget, seed, warm):
        budgets.append((ii, budget.left()))
        return None, None

    def solve_ii(problem, ii, budget, *rest):
        budget.spend(budget.left())
        spent.seconds = budget.parent.spent
        return None, False, 0, False

    monkeypatch.setattr(sweep, "_layout_first", layout_first)
    monkeypatch.setattr(sweep, "_solve_ii", solve_ii)
    return spent, budgets


def test_the_time_limit_caps_the_whole_sweep(stubbed):
    spent, budgets = stubbed
    problem = problem_from_graph(ring(3), load_hardware("se16-ii32"))
    assert problem.max_ii - lower_bounds(problem)["ii"] > 10
    with pytest.raises(StreamingInfeasible, match="T0 time limit: no mapping found within 8 s"):
        sweep.sweep_ii(problem, SolveSettings(time_limit=8.0))
    assert spent.seconds <= 8.0 + 1e-9        # the whole sweep within its planned seconds
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


@pytest.fixture
def run_budget(monkeypatch):
    """The run's budget, kept when map_streaming makes it."""
    kept = []

    made = SolveSettings.budget

    def keep(settings):
        kept.append(made(settings))
        return kept[-1]

    monkeypatch.setattr(SolveSettings, "budget", keep)
    return kept


def failing_parts(monkeypatch, spend: float, advance=None):
    """Every part's sweep spends ``spend`` planned seconds more than it was given (and
    moves ``advance``, a fake clock, on by its seconds) and finds nothing; returns the
    (instructions, planned seconds) each part was given."""
    given: list[tuple[int, float]] = []

    def schedule_part(part, spec, settings, cache, say, budget, floor=0):
        given.append((len(part.nodes), settings.time_limit))
        budget.spend(spend)
        if advance is not None:
            advance.now += settings.time_limit + 0.5
        cache[part_key(part)] = SdfUnmapped(["T0 time limit: no mapping found"], [])
        raise cache[part_key(part)]

    monkeypatch.setattr(streaming, "schedule_part", schedule_part)
    return given


def test_the_run_budget_caps_the_split_path(monkeypatch, run_budget):
    """Every part's sweep uses all the work it is given and half a planned second more, and
    finds nothing: no part or partition is begun once the run's planned seconds are spent,
    each part gets a share of what is left, and the failure says it was cut short."""
    given: list[tuple[int, float]] = []

    def schedule_part(part, spec, settings, cache, say, budget, floor=0):
        given.append((len(part.nodes), settings.time_limit))
        budget.spend(budget.left() + 0.5)
        cache[part_key(part)] = SdfUnmapped(["T0 time limit: no mapping found"], [])
        raise cache[part_key(part)]

    monkeypatch.setattr(streaming, "schedule_part", schedule_part)
    with pytest.raises(MappingFailed) as failed:
        streaming.map_streaming(chain(120), load_hardware("se16"), RunOptions(time_limit=20.0))
    mapping = failed.value.mapping
    total = 20.0 * MAPPING_SHARE
    assert run_budget[0].spent <= total + 0.5 + 1e-6        # nothing begun past the budget
    assert given and given[0][1] < total                    # the first part gets a share
    assert given[0][1] == pytest.approx(total * given[0][0] / 120, rel=0.01)
    assert "T0 time limit: the run's planned work" in mapping.diagnosis
    assert mapping.run["cut_short"] >= 1


def test_the_run_deadline_still_caps_the_split_path(monkeypatch):
    """On a machine so slow that the wall clock passes the deadline while little work is
    done, nothing is begun after the deadline and the failure says so."""
    start = time.monotonic()
    clock = FakeClock()
    clock.now = start
    fake = SimpleNamespace(monotonic=clock, perf_counter=time.perf_counter)
    for module in (streaming, budget_clock):
        monkeypatch.setattr(module, "time", fake)
    given = failing_parts(monkeypatch, 0.01, advance=clock)
    with pytest.raises(MappingFailed) as failed:
        streaming.map_streaming(chain(120), load_hardware("se16"), RunOptions(time_limit=20.0))
    mapping = failed.value.mapping
    total = 20.0 * MAPPING_SHARE
    assert clock.now - start <= total + max(t for _, t in given) + 0.5 + 0.25
    assert "T0 time limit: the run's deadline" in mapping.diagnosis
    assert mapping.run["cut_short"] >= 1


def test_one_sdf_without_a_greedy_mapping_leaves_time_for_a_split(monkeypatch):
    """When the greedy warm start does not map the one SDF, its sweep gets ONE_SDF_SHARE of
    the run and the splits the rest; with a greedy mapping it gets the whole run."""
    given: list[float] = []

    def schedule_sdf(graph, problem, spec, settings, say, budget, floor=0, proofs=None):
        given.append(settings.time_limit)
        raise SdfUnmapped(["T0 time limit: no mapping found"], [])

    def no_greedy(graph, spec, budget=None):
        raise StreamingInfeasible(["greedy: dead end"])

    monkeypatch.setattr(streaming, "schedule_sdf", schedule_sdf)
    monkeypatch.setattr(streaming, "schedule_part", lambda *args, floor=0: (_ for _ in ()).throw(
        SdfUnmapped(["T0 time limit: no mapping found"], [])))
    options = RunOptions(time_limit=20.0, max_iterations=2)
    with pytest.raises(MappingFailed):
        streaming.map_streaming(chain(5), load_hardware("se16"), options)
    monkeypatch.setattr(streaming, "greedy_schedule", no_greedy)
    with pytest.raises(MappingFailed):
        streaming.map_streaming(chain(5), load_hardware("se16"), options)
    total = 20.0 * MAPPING_SHARE
    assert given[0] == pytest.approx(total, rel=0.01)      # less the greedy's steps
    assert given[1] == pytest.approx(total * streaming.ONE_SDF_SHARE, rel=0.02)


# ---------------------------------------------------------------------------------------------
# deterministic budgets: the same seed gives the same schedule whatever the clock says
# ---------------------------------------------------------------------------------------------
def _outcome(graph: Graph) -> tuple:
    """II, cycles, placement and every model's (name, status, objective, bound) of a run of
    5.4 planned seconds with its deadline a minute away, and the searches the wall clock
    cut short."""
    mapping = streaming.map_streaming(graph, load_hardware("se16"),
                                      RunOptions(time_limit=60.0, work=5.4, seed=0))
    models = [(s["method"], s["status"], s["objective"], s["bound"]) for s in mapping.stages
              if s["stage"] == "modulo placement"]
    return (mapping.ii, mapping.metrics["cycles"], mapping.placement, models,
            mapping.run["cut_short"])


def test_a_slow_clock_gives_the_same_schedule(monkeypatch):
    """Every share is planned work, never the time left: a clock that runs 1.5 times too
    fast (as a machine that is 1.5 times slower sees it) gives the same schedule from the
    same models, the wall clock cutting in only at the run's deadline. (Before, the shares
    and the solvers' limits came from the clock: the slow run ended with other models, 3
    runs of 3.)"""
    graph = se_random_dag(40, seed=1)
    normal = _outcome(graph)
    ahead = [0.0]

    def slow(real):
        origin = real()

        def read() -> float:
            now = real()
            ahead[0] = 0.5 * (now - origin)
            return now + ahead[0]
        return read

    monkeypatch.setattr(time, "monotonic", slow(time.monotonic))
    monkeypatch.setattr(time, "perf_counter", slow(time.perf_counter))
    slowed = _outcome(graph)
    assert ahead[0] > 0.5                    # the clock did run slow
    assert slowed[-1] == normal[-1] == 0     # under the cap: no search was cut short
    assert slowed == normal
