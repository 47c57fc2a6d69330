"""The II sweep of a CGRA kernel and its proofs: smallest II, then shortest iteration.

Scope
-----
:func:`sweep_ii` sweeps the II up from its lower bound, at most to the warm start's II (the
list scheduler's, :mod:`formulations.cgra.listsched`). The bound is ``route_ii`` of
:func:`~formulations.cgra.problem.lower_bounds`: ResMII, MemII, RecMII and RegMII, raised
where the recurrences leave no room for the hops of their values (every smaller II is
proven impossible without a search). Per II:

1. the **placement-timing relaxation** (:mod:`formulations.cgra.relax`, the analogue of the
   Streaming Engine's layout relaxation): INFEASIBLE proves the II impossible (no horizon
   involved); otherwise its optimal length (or bound) is a lower bound ``L`` on the length
   of every mapping at this II;
2. **destructive lower bounding** with the full model (:mod:`formulations.cgra.model`): "a
   mapping that ends by ``H``?" for ``H = L, L + 1, ...`` -- each INFEASIBLE raises the
   length bound, the first mapping found is the shortest at this II. Tight horizons keep the
   time-extended routing graph small, so each question is fast;
3. at the warm start's II the ladder stops below the warm start's length (a top-down bound),
   and the warm start is kept when nothing shorter is found.

A kernel whose routing graph would exceed :data:`MAX_ROUTING_VARIABLES` keeps the list
scheduler's mapping; the relaxation still proves what it can about smaller IIs. The answer
carries ``ii_bound`` (every smaller II proven impossible), ``proven_ii`` and the length
bound ``bound`` at its II. The time limit is one budget for the whole sweep, planned in
deterministic work (:class:`~formulations.solver.budget.Budget`: CP-SAT's deterministic time,
PathFinder's routing steps, model builds by size); each II, relaxation and horizon gets a
share of the work left, never of the wall time left, so the same seed gives the same answer
unless the wall clock (the outer cap) stops a search first.

Examples
--------
>>> from hardware import load_hardware
>>> from model.graph import Graph, Node, Edge
>>> from formulations.cgra.problem import problem_from_graph
>>> g = Graph("acc", [Node("a", op="LOAD"), Node("b", op="MUL"), Node("c", op="ADD")],
...           [Edge("a", "b"), Edge("b", "c"), Edge("c", "c", distance=1)])
>>> s = sweep_ii(problem_from_graph(g, load_hardware("cgra4x4")), SolveSettings(time_limit=10))
>>> s.ii, s.length, s.status, s.proven_ii, s.bound
(1, 5, 'optimal', True, 5)
"""

from __future__ import annotations

import math
import time
from pathlib import Path
from typing import Callable

from formulations.cgra.model import build_full_model, model_size, solve_full
from formulations.cgra.problem import (CgraInfeasible, CgraProblem, CgraSchedule, length_bound,
                                       lower_bounds, precheck)
from formulations.cgra.listsched import route_fixed
from formulations.cgra.relax import solve_relaxation
from formulations.cgra.work import BUILD_SECONDS, RELAX_BUILD_SECONDS
from formulations.solver import Budget, SolveResult, SolveSettings, SolveStatus, export_cp_model

__all__ = ["sweep_ii", "length_ladder", "MAX_ROUTING_VARIABLES", "RELAX_SHARE", "LADDER_SLACK",
           "II_SHARE", "LAST_SHARE", "LAST_NODES", "COMPACT_SECONDS", "LEAST_QUESTION",
           "FIRST_QUESTION_SHARE", "QUESTION_SHARE", "relax_build"]

#: Largest time-extended routing graph (registers + link uses) the full model is built for.
MAX_ROUTING_VARIABLES = 250_000
#: Share of the time left for an II below the warm start's, and for the II just below it
#: on a kernel of at most ``LAST_NODES`` operations (whose II proof is the run's target).
II_SHARE = 0.5
LAST_SHARE = 0.8
LAST_NODES = 30
#: Share of an II's time for the relaxation.
RELAX_SHARE = 0.3
#: Planned seconds of the compact layout's search (the relaxation with its length objective,
#: hinted by the feasible layout found first).
COMPACT_SECONDS = 0.4
#: The least planned seconds a question (a horizon, a relaxation) is asked with.
LEAST_QUESTION = 0.2
#: Spare cycles per hop-crossing edge of the second relaxation placement tried.
ROUTE_SLACK = 1
#: Horizons tried above the relaxation's bound when no warm start has the II.
LADDER_SLACK = 8
#: Share of the work left for one question of the ladder: while no mapping at the II is
#: known (the question decides the II; an unfinished one ends the ladder anyway), and once
#: one is (the questions only shorten it; what is left goes to the next II).
FIRST_QUESTION_SHARE = 0.9
QUESTION_SHARE = 0.6

Progress = Callable[[str], None]


def length_ladder(problem: CgraProblem, ii: int, low: int, high: int, budget: Budget,
                  seed: int, results: list[SolveResult], warm: CgraSchedule | None = None
                  ) -> tuple[CgraSchedule | None, int]:
    """Horizons ``low..high``: the first mapping found and the length bound proven.

    Each horizon gets :data:`QUESTION_SHARE` of the work left once its model is built
    (:data:`FIRST_QUESTION_SHARE` while ``warm``, a mapping at ``ii``, is None; at least 0.5
    planned seconds, never more than is left; the build is charged :data:`BUILD_SECONDS` per
    routing variable); an unfinished question ends the ladder. Returns ``(mapping or None,
    bound)``.
    """
    bound = low
    for horizon in range(low, high + 1):
        build = model_size(problem, ii, horizon) * BUILD_SECONDS
        left = budget.left() - build
        if left < LEAST_QUESTION or budget.over():    # not even work to build the model and ask
            break
        if budget.wall_left() < build + LEAST_QUESTION:   # the wall cap comes first
            budget.mark_cut()
            break
        budget.spend(build)
        share = QUESTION_SHARE if warm is not None else FIRST_QUESTION_SHARE
        result, sched = solve_full(problem, ii, horizon,
                                   budget.share(min(left, max(0.5, left * share))), seed, warm)
        results.append(result)
        if result.status is SolveStatus.INFEASIBLE:
            bound = horizon + 1
            continue
        return sched, bound
    return None, bound


def _relax(problem: CgraProblem, ii: int, budget: Budget, seed: int,
           results: list[SolveResult], slack: int = 0
           ) -> tuple[str, int, tuple[list[int], list[int]] | None]:
    """The relaxation at ``ii`` within ``budget``: ``("refuted" | "bound" | "open", length
    bound, its PEs and cycles or None)``. With ``slack`` it is a placement heuristic, not a
    bound. The compact layout after it gets :data:`COMPACT_SECONDS` at most (half the
    share), charged to the enclosing budget, as is the model's build."""
    budget.spend(relax_build(problem))
    result, rv = solve_relaxation(problem, ii, _at_least(budget, LEAST_QUESTION), seed,
                                  slack=slack, objective=False)
    results.append(result)
    if result.status is SolveStatus.INFEASIBLE:
        return "refuted", 0, None
    if not result.has_solution:
        return "open", 0, None
    compact = Budget(min(COMPACT_SECONDS, max(LEAST_QUESTION, budget.seconds * 0.5)),
                     parent=budget)
    short, _ = solve_relaxation(problem, ii, compact, seed, slack=slack, hint=dict(result.values))
    results.append(short)             # the same question, shorter: a compact layout to route
    best = short if short.has_solution else result
    low = math.ceil(short.bound - 1e-6) if not slack and short.bound is not None else 0
    pe = [int(best.values[v.name]) for v in rv.pe]
    t = [int(best.values[v.name]) for v in rv.t]
    return "feasible", low, (pe, t)


def _at_least(budget: Budget, seconds: float) -> Budget:
    """All that is left of ``budget``, but at least ``seconds`` (charged to it all the same)."""
    return Budget(max(seconds, budget.left()), parent=budget)


def relax_build(problem: CgraProblem) -> float:
    """Planned seconds charged for building one relaxation (:data:`RELAX_BUILD_SECONDS` per
    operation-or-value and PE)."""
    return RELAX_BUILD_SECONDS * (problem.n + len(problem.nets)) * problem.pe_count


def _routed(problem: CgraProblem, ii: int, layout: tuple[list[int], list[int]] | None,
            budget: Budget, seed: int, results: list[SolveResult], say: Progress
            ) -> CgraSchedule | None:
    """The relaxation's PEs and cycles routed by PathFinder; if congestion remains, once more
    with one spare cycle per hop-crossing edge (:data:`ROUTE_SLACK`)."""
    for slack in (0, ROUTE_SLACK):
        if layout is None or budget.left() < LEAST_QUESTION or budget.over():
            return None
        sched = route_fixed(problem, ii, *layout, budget)
        say(f"II {ii}: relaxation placement (slack {slack}) routed: "
            f"{'yes, length ' + str(sched.length) if sched else 'no'}")
        if sched is not None:
            return sched
        _, _, layout = _relax(problem, ii, budget.share(budget.left() * 0.3), seed, results,
                              slack + 1)
    return None


def _export(problem: CgraProblem, ii: int, horizon: int, export_dir: str | None) -> None:
    if export_dir:
        model, _ = build_full_model(problem, ii, horizon)
        export_cp_model(model, str(Path(export_dir) / f"cgra_{problem.name}_ii{ii}.pb.txt"))


def sweep_ii(problem: CgraProblem, settings: SolveSettings, warm: CgraSchedule | None = None,
             progress: Progress | None = None, budget: Budget | None = None) -> CgraSchedule:
    """Smallest II, then shortest iteration (see the module); raises :class:`CgraInfeasible`.
    ``budget``: the sweep's budget (default ``settings.budget()``: ``settings.time_limit``
    planned seconds, capped by the run's deadline)."""
    say = progress or (lambda line: None)
    started = time.perf_counter()
    if budget is None:
        budget = settings.budget()
    reasons = precheck(problem)
    if reasons:
        raise CgraInfeasible(reasons)
    bounds = lower_bounds(problem)
    results: list[SolveResult] = []
    ii_bound, proven = bounds["route_ii"], True        # below it: proven without a search
    opened: list[tuple[int, int]] = []          # IIs whose ladder ended unanswered
    top = warm.ii if warm is not None else problem.max_ii
    for ii in range(bounds["route_ii"], top + 1):
        if budget.left() < LEAST_QUESTION or budget.over():
            break
        if budget.wall_left() < relax_build(problem) + LEAST_QUESTION:    # the cap comes first
            budget.mark_cut()
            break
        at_warm = warm if warm is not None and warm.ii == ii else None
        ii_budget = budget.share(budget.left() * _share(problem, ii, warm,
                                                        ii == bounds["route_ii"]))
        verdict, low, layout = _relax(problem, ii, ii_budget.share(ii_budget.left() * RELAX_SHARE),
                                      settings.seed, results)
        say(f"II {ii}: relaxation {verdict}" + (f", length >= {low}" if low else ""))
        if verdict == "refuted":     # every mapping meets the relaxation: a proof
            ii_bound += proven           # (the ladder's and the mobility windows' "none"
            continue                     # only bound a horizon; a corner's, one corner)
        low = max(low, length_bound(problem, ii) or 0)
        routed = _routed(problem, ii, layout, ii_budget, settings.seed, results, say) \
            if ii > 1 else None        # at II 1 transit values fill registers it ignores
        start = _shorter(at_warm, routed)
        if start is not None:        # a mapping at this II: the rest of the work is its own
            ii_budget = budget
        sched, bound = _ladder(problem, ii, low, start, ii_budget, settings, results, say)
        if sched is not None:
            lower = _revisit(problem, opened, sched, budget, settings, results, say)
            if lower is not None:
                return _finish(lower[0], True, ii_bound, lower[1], results, started)
            return _finish(sched, proven, ii_bound, bound, results, started)
        proven = False
        opened.append((ii, bound))
    if warm is not None:
        return _finish(warm, False, ii_bound, None, results, started)
    raise CgraInfeasible([f"T0 time limit: no mapping found within {settings.time_limit:g} s "
                          f"(IIs below {ii_bound} proven impossible)"])


def _revisit(problem: CgraProblem, opened: list[tuple[int, int]], found: CgraSchedule,
             budget: Budget, settings: SolveSettings, results: list[SolveResult], say: Progress
             ) -> tuple[CgraSchedule, int] | None:
    """The work left once ``found`` is shortened goes back to the IIs below it whose ladder
    ended unanswered (``opened``: II and the length proven there), smallest first, their
    questions going on from that length: a mapping there is a smaller II. Returns it with
    its length bound, or None."""
    for ii, low in opened:
        if ii >= found.ii or budget.left() < LEAST_QUESTION or budget.over():
            break
        high = low + LADDER_SLACK + ii + problem.n // 2 + 2 * problem.diameter
        while high > low and model_size(problem, ii, high) > MAX_ROUTING_VARIABLES:
            high = low + (high - low) // 2
        if model_size(problem, ii, high) > MAX_ROUTING_VARIABLES:
            continue
        sched, bound = length_ladder(problem, ii, low, high, budget, settings.seed, results)
        say(f"II {ii} again with the work left: "
            + (f"length {sched.length}" if sched is not None else f"length >= {bound}"))
        if sched is not None:
            return sched, bound
    return None


def _share(problem: CgraProblem, ii: int, warm: CgraSchedule | None, lowest: bool = False
           ) -> float:
    """Share of the work left for ``ii``: all of it at the warm start's II; on a kernel of
    at most :data:`LAST_NODES` operations :data:`LAST_SHARE` just below it (the warm start's
    II already has its mapping: what is left there only shortens it) and at the II bound
    (``lowest``: a mapping there proves the II, the run's target on such kernels); else
    :data:`II_SHARE`."""
    if warm is not None and warm.ii == ii:
        return 1.0
    below = warm is not None and (warm.ii == ii + 1 or lowest) and problem.n <= LAST_NODES
    return LAST_SHARE if below else II_SHARE


def _shorter(a: CgraSchedule | None, b: CgraSchedule | None) -> CgraSchedule | None:
    found = [s for s in (a, b) if s is not None]
    return min(found, key=lambda s: s.length) if found else None


def _ladder(problem: CgraProblem, ii: int, low: int, start: CgraSchedule | None,
            budget: Budget, settings: SolveSettings, results: list[SolveResult],
            say: Progress) -> tuple[CgraSchedule | None, int]:
    """Destructive lower bounding from ``low`` below ``start`` (a mapping at ``ii``, or
    None); ``start`` is kept when nothing shorter is found."""
    high = start.length - 1 if start is not None else \
        low + LADDER_SLACK + ii + problem.n // 2 + 2 * problem.diameter
    while high > low and model_size(problem, ii, high) > MAX_ROUTING_VARIABLES:
        high = low + (high - low) // 2
    sched, bound = None, low
    if model_size(problem, ii, high) <= MAX_ROUTING_VARIABLES:
        _export(problem, ii, high, settings.export_dir)
        sched, bound = length_ladder(problem, ii, low, high, budget, settings.seed, results,
                                     start)
    else:
        say(f"II {ii}: routing graph too large for the full model")
    if sched is None and start is not None:
        sched, bound = start, min(bound, start.length)
    return sched, bound


def _finish(sched: CgraSchedule, proven: bool, ii_bound: int, bound: int | None,
            results: list[SolveResult], started: float) -> CgraSchedule:
    sched.proven_ii = proven and ii_bound >= sched.ii
    sched.ii_bound = min(ii_bound, sched.ii)
    sched.bound = min(bound, sched.length) if bound is not None else None
    optimal = sched.proven_ii and sched.bound == sched.length
    sched.status = "optimal" if optimal else ("feasible" if sched.method == "cp-sat"
                                              else sched.status)
    sched.results = results
    sched.seconds = time.perf_counter() - started
    return sched
