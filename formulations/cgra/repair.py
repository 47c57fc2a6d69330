"""A list-scheduling attempt that nearly routed, repaired exactly around its congestion.

Scope
-----
On a resource-bound kernel (its II set by the PEs' slots, no tight recurrence) the list
scheduler's attempts one II below the best mapping place every operation, but PathFinder
leaves a few register or link slots over capacity (dwt dwpt_per_LN11 PartPred on the 4 x 4
torus at II 11: 1-6 slots over, where the descent spent 55 planned seconds of attempts and
the whole-kernel question in mobility windows found nothing). :func:`repair` is one step
of large-neighbourhood search on such a near miss (:class:`~.listsched.NearMiss`): the
operations whose routes cross an over-used slot, and their neighbours in the graph within
:data:`RADIUS` edges, are freed (any allowed PE, their cycles within :data:`SHIFT` x II of
theirs); every other operation keeps its PE and cycle; every route is free. The full model
(:mod:`formulations.cgra.model`, narrowed to these windows: a routing graph a fraction of the
whole question's) is asked for a mapping, stopped at the first, budgeted in CP-SAT's
deterministic time like every question. A mapping is a legal one at this II (the model
routes exactly); "none" says nothing about the II.

Examples
--------
>>> from hardware import load_hardware
>>> from model.graph import Graph, Node, Edge
>>> from formulations.cgra.problem import problem_from_graph
>>> from formulations.solver import Budget
>>> g = Graph("pair", [Node("a", op="LOAD"), Node("b", op="ADD")], [Edge("a", "b")])
>>> p = problem_from_graph(g, load_hardware("cgra4x4"))
>>> miss = NearMiss(ii=1, overused=1, pe=[0, 15], t=[0, 1], hot={1})
>>> found = repair(p, miss, Budget(10))
>>> found.ii, p.dist[found.pe["a"]][found.pe["b"]] <= found.cycle["b"] - found.cycle["a"] - 1
(1, True)
"""

from __future__ import annotations

from typing import Callable

from ortools.sat.python import cp_model

from formulations.cgra.listsched import NearMiss, schedule_at_ii
from formulations.cgra.model import build_description, decode_full, model_size
from formulations.cgra.problem import CgraProblem, CgraSchedule, length_bound, lower_bounds
from formulations.cgra.relax import CP_PARAMS
from formulations.cgra.work import BUILD_SECONDS, FULL_WORK_PER_SECOND
from formulations.solver import Budget, solve_cp_model

__all__ = ["RADIUS", "SHIFT", "REPAIRED", "MAX_OVERUSED", "REPAIR_SECONDS", "STALL", "SEED",
           "freed", "repair", "resource_bound", "repair_descend"]

#: Graph edges around an operation whose route crosses an over-used slot within which
#: operations are freed too.
RADIUS = 1
#: A freed operation's cycle stays within this many IIs of its cycle in the near miss.
SHIFT = 1
#: Most register and link slots over capacity a near miss may leave to be repaired.
MAX_OVERUSED = 2
#: Planned seconds one repair gets at most (its build included).
REPAIR_SECONDS = 4.0
#: Attempts in a row at one II without a near miss to repair before the search stops.
STALL = 12
#: First seed of the spread attempts (far from the descent's).
SEED = 3000
#: The method of a repaired mapping.
REPAIRED = "list scheduling + PathFinder, repaired by CP-SAT"


def freed(problem: CgraProblem, hot: set[int], radius: int = RADIUS) -> set[int]:
    """``hot`` and the operations within ``radius`` edges of it (either direction)."""
    out = set(hot)
    for _ in range(radius):
        out |= {w for u, w, _ in problem.edges if u in out} | \
               {u for u, w, _ in problem.edges if w in out}
    return out


def repair(problem: CgraProblem, miss: NearMiss, budget: Budget, seed: int = 0
           ) -> CgraSchedule | None:
    """The full model at ``miss.ii`` around ``miss`` (see the module) with all of
    ``budget`` (its build charged :data:`~formulations.cgra.work.BUILD_SECONDS` per routing
    variable); the mapping found or None."""
    ii, n = miss.ii, problem.n
    shift = min(miss.t) - min(miss.t) % ii              # keep the slots
    t = [c - shift for c in miss.t]
    free = freed(problem, miss.hot)
    room = SHIFT * ii
    within = ([max(0, t[v] - room) if v in free else t[v] for v in range(n)],
              [t[v] + room if v in free else t[v] for v in range(n)])
    pes = [list(problem.allowed[v]) if v in free else [miss.pe[v]] for v in range(n)]
    horizon = max(length_bound(problem, ii) or 0,
                  max(t[v] + room + problem.latency[v] for v in range(n)))
    size = model_size(problem, ii, horizon, within)
    if size == 0 or budget.left() < size * BUILD_SECONDS or budget.over():
        return None
    budget.spend(size * BUILD_SECONDS)
    d, fv = build_description(problem, ii, horizon, within, pes)
    if fv.windows is None:
        return None
    lo = fv.windows[0]
    order = sorted(free, key=lambda v: (lo[v], v))
    d.branch_on([b for v in order for _, b in sorted(fv.at[v].items())]
                + [b for v in order for _, b in sorted(fv.on[v].items())],
                cp_model.CHOOSE_FIRST, cp_model.SELECT_MAX_VALUE)
    model, fv.emitted = d.to_cp()
    limit, steps = budget.cp_limits(budget.left(), FULL_WORK_PER_SECOND)
    result = solve_cp_model(model, time_limit=limit, seed=seed, workers=1,
                            variables=fv.reported(),
                            params=dict(CP_PARAMS, stop_after_first_solution=True),
                            deterministic_time=steps)
    budget.charge(result, FULL_WORK_PER_SECOND)
    if not result.has_solution:
        return None
    sched = decode_full(problem, ii, fv, result, method=REPAIRED)
    sched.status = "feasible"
    return sched


def resource_bound(problem: CgraProblem) -> bool:
    """Whether the PEs' slots set the kernel's proven II bound (``route_ii`` is ResMII and
    above RecMII): the kernels whose attempts below their II place every operation and
    fail on congestion."""
    bounds = lower_bounds(problem)
    return bounds["route_ii"] == bounds["res_ii"] > bounds["rec_ii"]


def repair_descend(problem: CgraProblem, best: CgraSchedule, budget: Budget, seed: int = 0,
                   progress: Callable[[str], None] | None = None) -> CgraSchedule:
    """Below ``best``: spread list-scheduling attempts (``schedule_at_ii`` with ``spread``,
    every other one in ``best``'s issue order) at ``best.ii - 1``, each near miss of at
    most :data:`MAX_OVERUSED` over-used slots repaired (:func:`repair`, at most
    :data:`REPAIR_SECONDS`), until a mapping is found, then the II below; the search
    stops at an II where :data:`STALL` attempts in a row leave no near miss to repair,
    or when ``budget`` is spent. Returns the mapping of the smallest II reached."""
    say = progress or (lambda line: None)
    low = lower_bounds(problem)["route_ii"]
    k = 0
    while best.ii > low and not budget.over():
        ii, found, idle = best.ii - 1, None, 0
        while found is None and idle < STALL and not budget.over():
            misses: list[NearMiss] = []
            guide = best if k % 2 == 0 else None
            found = schedule_at_ii(problem, ii, seed + SEED + k, budget, guide, misses,
                                   spread=True)
            k += 1
            miss = misses[0] if misses else None
            if found is not None or miss is None or miss.overused > MAX_OVERUSED:
                idle += found is None
                continue
            found = repair(problem, miss, budget.share(min(budget.left(), REPAIR_SECONDS)),
                           seed)
            say(f"repair: II {ii}, {miss.overused} slots over capacity, "
                f"{len(freed(problem, miss.hot))} operations freed: "
                + ("mapped" if found else "not found"))
        if found is None:
            break
        if found.method != REPAIRED:
            found.method = "list scheduling + PathFinder, descent"
        say(f"repair descent: II {ii}, length {found.length}")
        best = found
    return best
