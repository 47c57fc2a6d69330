"""Near misses of list scheduling repaired by the full model around their congestion (issue
35): legal mappings that keep every operation outside the freed neighbourhood, asked only on
resource-bound kernels with the work for it."""

from __future__ import annotations

import time

import formulations.cgra.kernel as kernel
from formulations.cgra.listsched import NearMiss, schedule_at_ii
from formulations.cgra.problem import lower_bounds, problem_from_graph
from formulations.cgra.repair import REPAIRED, freed, repair, resource_bound
from formulations.solver import Budget, SolveSettings
from hardware import load_hardware
from model.graph import Edge, Graph, Node
from tests.formulations.test_cgra import TINY, checked, ring, skip_chain


def test_a_repair_keeps_what_it_does_not_free_and_routes_the_rest():
    """A list-scheduling mapping of the skip chain on a 2 x 2 mesh with one operation moved
    to another PE (its routes no longer fit: a near miss): the repair maps at the same II,
    the simulator accepts it, and every operation outside the freed neighbourhood keeps its
    PE and cycle."""
    spec, graph = TINY, skip_chain()
    problem = problem_from_graph(graph, spec)
    start = schedule_at_ii(problem, 20)
    names = problem.names
    pe = [start.pe[n] for n in names]
    t = [start.cycle[n] for n in names]
    moved = 20
    pe[moved] = next(p for p in problem.allowed[moved] if p != pe[moved])
    miss = NearMiss(ii=20, overused=1, pe=pe, t=t, hot={moved})
    found = repair(problem, miss, Budget(30, time.monotonic() + 300))
    assert found is not None and found.ii == 20 and found.method == REPAIRED
    assert checked(graph, spec, found)
    free = freed(problem, {moved})
    assert free == {18, 19, 20, 21}       # n20, its chain neighbours and n18 (a skip edge)
    kept = [v for v in range(problem.n) if v not in free]
    shift = min(t) - min(t) % 20
    assert all(found.pe[names[v]] == pe[v] and found.cycle[names[v]] == t[v] - shift
               for v in kept)


def test_repairs_are_asked_only_on_resource_bound_kernels_with_the_work(monkeypatch):
    """The repair step runs on a kernel whose slots set its bound (a fan of 40 adds on a
    2 x 2 mesh) when the work left is at least ``REPAIR_LEAST``; with less (a 15 s run's
    work after its descent), or on a recurrence-bound kernel (a ring), the mapping is
    passed on unchanged and nothing is asked."""
    calls: list[int] = []
    monkeypatch.setattr(kernel, "repair_descend",
                        lambda problem, best, budget, seed, say: calls.append(best.ii) or best)
    fan = Graph("fan", [Node("a", op="LOAD")] + [Node(f"m{i}", op="ADD") for i in range(40)],
                [Edge("a", f"m{i}") for i in range(40)])
    wide = problem_from_graph(fan, TINY)
    assert resource_bound(wide) and not resource_bound(
        problem_from_graph(ring(5), load_hardware("cgra4x4")))
    start = schedule_at_ii(wide, 14)
    settings = SolveSettings(time_limit=10)
    say = lambda line: None                                  # noqa: E731
    poor = Budget(kernel.REPAIR_LEAST * 0.9, time.monotonic() + 300)
    assert kernel._repair(wide, start, settings, poor, say) is start and calls == []
    rich = Budget(kernel.REPAIR_LEAST * 2, time.monotonic() + 300)
    kernel._repair(wide, start, settings, rich, say)
    assert calls == [14]
    ring_problem = problem_from_graph(ring(5), load_hardware("cgra4x4"))
    ring_start = schedule_at_ii(ring_problem, lower_bounds(ring_problem)["route_ii"] + 2)
    assert kernel._repair(ring_problem, ring_start, settings, rich, say) is ring_start
    assert calls == [14]
