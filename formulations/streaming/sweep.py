"""The II sweep of one SDF and its proofs (source 004): smallest II, then fewest cycles.

Scope
-----
:func:`sweep_ii` sweeps the II up from its lower bound (resource, memory, recurrence) with the
CP model of :mod:`formulations.streaming.model`. Per II it runs, in order:

1. the tile **layout relaxation** (:mod:`formulations.streaming.layout`): INFEASIBLE proves the
   II impossible, often in a second;
2. a **timing model with the layout's tiles fixed** (:func:`timing_for_layout`), a warm start;
3. the **full model** (:func:`solve_at_ii`) in its share of the II's budget
   (:data:`FULL_SHARE`, or :data:`COLD_SHARE` without a warm start);
4. the **top-down proof** (:func:`prove_from_above`): "a schedule of at most C - 1 cycles?"
   with tight issue windows; INFEASIBLE proves the incumbent optimal;
5. if that runs out of its share of time, the **hold relaxation** (:func:`relax_holds`: the
   model without H1, whose bound is often the optimum);
6. **destructive lower bounding** (:func:`close_gap`) from that bound.

``settings.time_limit`` is one budget for the whole sweep, in planned seconds that every
search spends as deterministic work (CP-SAT's deterministic time,
:data:`~formulations.streaming.model.SE_WORK_PER_SECOND` units per planned second, plus a
charge per model): each II gets :data:`II_SHARE` of the budget left (all of it at the last
II that can matter: the warm start's, or ``max_ii``), every step its share of the II's, and
work an II leaves unused carries over to the next. No share is read from the wall clock, so
the same seed gives the same schedule whatever the machine's load; the wall clock (twice
the plan, never past ``settings.deadline``) only caps the searches, and a search it cuts
short marks the budget (``Budget.cut_short``). :func:`explain` names the rule that
makes an instance unmappable, in the user's terms, before any search (pre-checks) or by
relaxing rule families one at a time.
"""

from __future__ import annotations

import math
import time
from typing import Callable

from formulations.solver import Budget, SolveResult, SolveSettings, SolveStatus, export_cp_model
from formulations.streaming.bounds import cycle_bound
from formulations.streaming.layout import solve_layout
from formulations.streaming.model import (build_cp_model, decode_schedule,
                                          reported_variables, solve_model, tile_hint, warm_hint)
from formulations.streaming.problem import (RULES, StreamingInfeasible, StreamingProblem,
                                            StreamingSchedule, default_horizon, holds_fit,
                                            lower_bounds, precheck)

__all__ = ["sweep_ii", "solve_at_ii", "timing_for_layout", "relax_holds", "prove_from_above",
           "close_gap", "explain", "LAYOUT_SHARE", "FULL_SHARE", "COLD_SHARE", "RELAX_SHARE",
           "ABOVE_SHARE", "FIXED_SHARE", "RELAXABLE", "EXPLAIN_SECONDS"]

#: Share of the per-II time limit the layout relaxation may use before the full model.
LAYOUT_SHARE = 0.5
#: Shares of the time left at one II: the full model first (``COLD_SHARE`` without a warm
#: start: a first schedule, or the II's refutation, is worth most), then the hold relaxation
#: (the rest closes the gap, :func:`close_gap`).
FULL_SHARE = 0.4
COLD_SHARE = 0.8
RELAX_SHARE = 0.5
#: Share of the II's budget left for the top-down proof (:func:`prove_from_above`); the hold
#: relaxation and destructive lower bounding get the rest.
ABOVE_SHARE = 0.85
#: Share of the time left that one II of the sweep may use (the last II that can matter gets
#: all of it); the sweep stops when less than :data:`LAST_SECONDS` is left.
II_SHARE = 0.5
LAST_SECONDS = 0.2
#: The rule families :func:`explain` relaxes one at a time, and the planned seconds of each
#: relaxation when it is given no budget.
RELAXABLE = ("H1 hold", "R1 reach", "S1 siblings", "B1 starts", "M1 memory")
EXPLAIN_SECONDS = 5.0


def relax_holds(problem: StreamingProblem, ii: int, budget: Budget, seed: int = 0,
                workers: int = 1, warm: StreamingSchedule | None = None
                ) -> tuple[SolveResult, StreamingSchedule | None]:
    """The hold relaxation: the full model without H1 (a value may wait any time, no delay
    entries). It sees tiles, slots, reach and timing together, so its bound is a lower bound on
    the cycle count at ``ii`` far above :func:`cycle_bound` at small II, and INFEASIBLE proves
    ``ii`` impossible. Without the delay-entry slot counts CP-SAT solves it in a fraction of the
    full model's time. Returns the result and its schedule (which may break H1: see
    :func:`holds_fit`). ``warm`` (at ``ii``) is the hint; the layout's tiles are not (measured:
    they slow the proof down up to 2x). Solved with all of ``budget`` (deterministic work,
    :func:`~formulations.streaming.model.solve_model`).
    """
    horizon = warm.cycles if warm is not None and warm.ii == ii else None
    model, cp = build_cp_model(problem, ii, horizon, families=set(RULES) - {"H1 hold"})
    result = solve_model(model, budget, seed=seed, workers=workers,
                         hint=warm_hint(problem, cp, warm, ii), variables=reported_variables(cp),
                         name=f"{model.name}_holds_relaxed")
    if not result.has_solution:
        return result, None
    return result, decode_schedule(problem, ii, cp, result, method="hold relaxation")


def _layout_first(problem: StreamingProblem, ii: int, budget: Budget, seed: int,
                  warm: StreamingSchedule | None
                  ) -> tuple[SolveResult | None, list[int] | None]:
    """Decomposition: the tile layout relaxation first (:mod:`formulations.streaming.layout`),
    in :data:`LAYOUT_SHARE` of the II's ``budget`` (planned seconds, charged to it).

    Returns its result when it proves ``ii`` INFEASIBLE (else None) and its tiles (a hint for
    the full model).
    """
    if warm is not None and warm.ii == ii:
        return None, None  # a mapping exists: nothing to refute
    layout, tiles = solve_layout(problem, ii, budget.share(budget.left() * LAYOUT_SHARE), seed)
    if layout.status is SolveStatus.INFEASIBLE:
        return layout, None
    return None, tiles


#: Share of the remaining time for the timing model with the layout's tiles fixed.
FIXED_SHARE = 0.3


def close_gap(problem: StreamingProblem, ii: int, incumbent: StreamingSchedule,
              result: SolveResult | None, budget: Budget, seed: int = 0, workers: int = 1,
              low: int = 0) -> tuple[StreamingSchedule, bool, list[SolveResult]]:
    """Destructive lower bounding: is there a schedule of at most ``H`` cycles, for ``H`` from
    the best bound up to the incumbent's cycles - 1? Each question is the full model with the
    horizon ``H`` (tight issue windows, strong propagation). The first feasible ``H`` is optimal
    (every smaller one was refuted); refuting every ``H`` proves the incumbent optimal.

    ``low`` is a known lower bound (e.g. the hold relaxation's). The questions spend
    ``budget`` (deterministic work). Returns the best schedule, whether it is proven optimal
    at ``ii``, and the results.
    """
    low = _floor(problem, ii, result, low)
    results: list[SolveResult] = []
    for horizon in range(low, incumbent.cycles):
        if budget.left() < 0.1 or budget.wall_out():
            return incumbent, False, results
        found, sched = _within(problem, ii, horizon, budget, seed, workers)
        results.append(found)
        if found.status is SolveStatus.INFEASIBLE:
            continue
        if sched is None:
            return incumbent, False, results
        return sched, True, results
    return incumbent, True, results


def prove_from_above(problem: StreamingProblem, ii: int, incumbent: StreamingSchedule,
                     budget: Budget, seed: int = 0, workers: int = 1
                     ) -> tuple[StreamingSchedule, bool, list[SolveResult]]:
    """Top-down: is there a schedule of at most the incumbent's cycles - 1? INFEASIBLE proves
    the incumbent optimal, OPTIMAL proves the better schedule found; a better schedule without
    a proof (the search stops when its schedules stop improving) becomes the incumbent of the
    next, tighter question. The question's tight issue windows make its presolve and
    propagation far stronger than the open model's: on se-random-30-s1 and -40-s1 at II 4 it
    refutes 38 and 34 cycles in 4-7 s where the open model, holding the optimum, needed 8 s
    more to prove it.

    The questions spend ``budget`` (deterministic work). Returns the best schedule, whether
    it is proven optimal at ``ii``, and the results.
    """
    results: list[SolveResult] = []
    while budget.left() >= 0.1 and not budget.wall_out():
        found, sched = _within(problem, ii, incumbent.cycles - 1, budget, seed, workers)
        results.append(found)
        if found.status is SolveStatus.INFEASIBLE:
            return incumbent, True, results
        if sched is None:
            break
        incumbent = sched
        if found.status is SolveStatus.OPTIMAL:
            return incumbent, True, results
    return incumbent, False, results


def _part(budget: Budget, seconds: float) -> Budget:
    """``seconds`` planned, charged to ``budget`` even beyond what it has left."""
    return Budget(seconds, parent=budget)


def _within(problem: StreamingProblem, ii: int, horizon: int, budget: Budget, seed: int,
            workers: int) -> tuple[SolveResult, StreamingSchedule | None]:
    """The full model with at most ``horizon`` cycles (tight issue windows), with all that is
    left of ``budget``."""
    model, cp = build_cp_model(problem, ii, horizon)
    found = solve_model(model, budget, seed=seed, workers=workers,
                        variables=reported_variables(cp), name=f"{model.name}_h{horizon}")
    return found, (decode_schedule(problem, ii, cp, found) if found.has_solution else None)


def timing_for_layout(problem: StreamingProblem, ii: int, tiles: list[int], budget: Budget,
                      seed: int) -> tuple[StreamingSchedule | None, float]:
    """Solution first: the full model with the layout relaxation's tiles fixed (slots and
    issue cycles only, fast); its schedule warm-starts the full model. Returns it (None if the
    layout admits no timing in time) and the seconds spent."""
    started = time.perf_counter()
    model, cp = build_cp_model(problem, ii)
    low, high = min(tiles), max(tiles)
    tiles = [t - low for t in tiles]
    if 2 * tiles[0] > high - low:
        tiles = [high - low - t for t in tiles]
    for i, t in enumerate(tiles):
        model.add(cp.tile[i] == t)
    result = solve_model(model, budget, seed=seed, variables=reported_variables(cp))
    spent = time.perf_counter() - started
    if not result.has_solution:
        return None, spent
    return decode_schedule(problem, ii, cp, result, method="layout + timing"), spent


def solve_at_ii(problem: StreamingProblem, ii: int, budget: Budget, seed: int = 0,
                workers: int = 1, warm: StreamingSchedule | None = None,
                export_dir: str | None = None, tiles: list[int] | None = None
                ) -> tuple[SolveResult, StreamingSchedule | None]:
    """Solve the CP-SAT model at one II; the result and the decoded schedule (None if none).

    The horizon is generous (so INFEASIBLE is a proof), or the warm start's cycle count when it
    has this II (a better schedule lies inside it). ``tiles`` (a tile per instruction,
    e.g. from the layout relaxation) is a partial hint when no warm start has this II.
    Solved with all of ``budget`` (deterministic work charged to it).
    """
    horizon = default_horizon(problem, ii)
    if warm is not None and warm.ii == ii:
        horizon = min(horizon, warm.cycles)
    model, cp = build_cp_model(problem, ii, horizon)
    _export(problem, ii, export_dir, model)
    hint = warm_hint(problem, cp, warm, ii) or tile_hint(problem, cp, tiles)
    result = solve_model(model, budget, seed=seed, workers=workers, hint=hint,
                         variables=reported_variables(cp))
    return result, (decode_schedule(problem, ii, cp, result) if result.has_solution else None)


def _better(a: StreamingSchedule | None, b: StreamingSchedule | None, ii: int
            ) -> StreamingSchedule | None:
    """The schedule with fewer cycles among those at ``ii`` (None if neither is)."""
    at_ii = [s for s in (a, b) if s is not None and s.ii == ii]
    return min(at_ii, key=lambda s: s.cycles) if at_ii else None


def _solve_ii(problem: StreamingProblem, ii: int, budget: Budget, seed: int, workers: int,
              warm: StreamingSchedule | None, tiles: list[int] | None,
              results: list[SolveResult], export_dir: str | None, say: Callable[[str], None],
              whole: Budget | None = None
              ) -> tuple[StreamingSchedule | None, bool, int, bool]:
    """At one II: the full model first (warm-started by the timing of the layout's tiles; it
    refutes a small II fastest) in :data:`FULL_SHARE` (:data:`COLD_SHARE` without a warm
    start) of the II's budget, then the top-down proof (:func:`prove_from_above`); when
    that runs out of its share, the hold relaxation for a cycle bound (its tiles timed when
    its schedule breaks H1), then destructive lower bounding from that bound.

    Every step gets its share of what is left of the II's ``budget`` (planned seconds,
    deterministic work charged to it); once the II has a schedule, the proofs may use all of
    ``whole`` (the sweep's budget: no other II needs it any more). Appends its results;
    returns the best schedule (None if none), whether it is proven optimal at ``ii``, the
    cycle bound proven, and whether the II is proven impossible.
    """
    start = _better(warm, None, ii)
    if start is None and tiles is not None:
        start = _timed(problem, ii, tiles, budget, seed, say)
    share = FULL_SHARE if start is not None else COLD_SHARE
    result, sched = solve_at_ii(problem, ii, _part(budget, max(0.5, budget.left() * share)),
                                seed, workers, start, export_dir, tiles=tiles)
    results.append(result)
    say(f"II {ii}: {result.status.value} ({result.wall_time:.2f} s)")
    sched = _better(sched, start, ii)
    if result.status is SolveStatus.INFEASIBLE:
        return None, False, 0, True
    if sched is not None and whole is not None:
        budget = whole
    if sched is not None and result.status is SolveStatus.OPTIMAL:
        return sched, True, sched.cycles, False
    if sched is not None:
        sched, proven, extra = prove_from_above(
            problem, ii, sched, budget.share(budget.left() * ABOVE_SHARE), seed, workers)
        results += extra
        say(f"II {ii}: {'optimal' if proven else 'feasible'} from above ({len(extra)} models), "
            f"{sched.cycles} cycles")
        if proven:
            return sched, True, sched.cycles, False
    relaxed, loose = relax_holds(problem, ii,
                                 _part(budget, max(0.1, budget.left() * RELAX_SHARE)), seed,
                                 workers, sched)
    results.append(relaxed)
    say(f"II {ii}: hold relaxation {relaxed.status.value}, bound {relaxed.bound} "
        f"({relaxed.wall_time:.2f} s)")
    low = math.ceil(relaxed.bound or 0) if relaxed.has_solution else 0
    if loose is not None and holds_fit(problem, loose):
        sched = _better(sched, loose, ii)
    elif loose is not None and (sched is None or sched.cycles > low):
        sched = _better(sched, _timed(problem, ii, [loose.tile[n] for n in problem.names],
                                      budget, seed, say), ii)
    if sched is None:
        return None, False, 0, relaxed.status is SolveStatus.INFEASIBLE
    sched, proven, extra = close_gap(problem, ii, sched, result, budget.share(budget.left()),
                                     seed, workers, low=low)
    results += extra
    say(f"II {ii}: {'optimal' if proven else 'feasible'} after lower-bounding "
        f"({len(extra)} models), {sched.cycles} cycles")
    refuted = sum(r.status is SolveStatus.INFEASIBLE for r in extra)  # horizons low, low + 1..
    bound = sched.cycles if proven else _floor(problem, ii, result, low) + refuted
    return sched, proven, bound, False


def _timed(problem: StreamingProblem, ii: int, tiles: list[int], budget: Budget, seed: int,
           say: Callable[[str], None]) -> StreamingSchedule | None:
    """The timing model on fixed tiles (a warm start), in a share of the budget left."""
    timed, seconds = timing_for_layout(
        problem, ii, tiles, _part(budget, max(0.1, budget.left() * FIXED_SHARE)), seed)
    say(f"II {ii}: timing of fixed tiles: {timed.cycles if timed else 'none'} ({seconds:.2f} s)")
    return timed


def _floor(problem: StreamingProblem, ii: int, result: SolveResult | None, low: int = 0) -> int:
    """The best cycle bound at ``ii``: ``low``, the sibling-latency bound, the model's bound."""
    return max(low, cycle_bound(problem, ii), math.ceil(getattr(result, "bound", 0) or 0))


def _export(problem: StreamingProblem, ii: int, export_dir: str | None,
            model: cp_model.CpModel | None = None) -> None:
    """Write the full model at ``ii`` (built unless given) when ``export_dir`` is set."""
    if export_dir:
        export_cp_model(model or build_cp_model(problem, ii)[0],
                        f"{export_dir}/streaming_{problem.name.replace('/', '_')}_ii{ii}.pb.txt")


def sweep_ii(problem: StreamingProblem, settings: SolveSettings,
             warm: StreamingSchedule | None = None, workers: int = 1,
             progress: Callable[[str], None] | None = None,
             explain_failure: bool = True, budget: Budget | None = None,
             floor: int = 0, proofs: Budget | None = None) -> StreamingSchedule:
    """Smallest II, then fewest cycles: sweep II from the lower bound with one CP-SAT model each.

    ``settings.time_limit`` planned seconds (or ``budget``, the caller's) are the whole
    sweep's deterministic work (see the module). ``floor``: an II below which the SDF is
    proven to have no mapping (:meth:`~formulations.streaming.kernel.KernelPlan.floor`), where
    the sweep starts. Once an II has a schedule, its proofs may use all of ``proofs``
    (default the sweep's budget). Per II: the layout relaxation (refutes the II), the full
    model, the top-down proof, the hold relaxation and destructive lower bounding (see the
    module). ``warm`` (a heuristic schedule) is the hint, and is returned when it beats an
    unproven sweep. Raises
    :class:`StreamingInfeasible` (with :func:`explain`'s reasons unless ``explain_failure`` is
    False) when no II up to ``max_ii`` admits a mapping.

    Examples
    --------
    >>> from hardware import load_hardware
    >>> from model.graph import Graph, Node, Edge
    >>> from formulations.streaming.problem import problem_from_graph
    >>> g = Graph("fan", [Node("p")] + [Node(f"c{i}") for i in range(3)],
    ...           [Edge("p", f"c{i}") for i in range(3)])
    >>> s = sweep_ii(problem_from_graph(g, load_hardware("se16")), SolveSettings(time_limit=5))
    >>> s.ii, s.cycles, len(set(s.tile[f"c{i}"] for i in range(3)))
    (1, 8, 3)
    """
    started = time.perf_counter()
    say = progress or (lambda line: None)
    time_limit, seed, export_dir = settings.time_limit, settings.seed, settings.export_dir
    reasons = precheck(problem)
    if reasons:
        raise StreamingInfeasible(reasons)
    bounds = lower_bounds(problem)
    results: list[SolveResult] = []
    all_proven = True
    open_ii: list[int] = []
    if budget is None:
        budget = Budget(time_limit, settings.deadline)
    last = warm.ii if warm is not None else problem.max_ii
    for ii in range(max(bounds["ii"], floor), problem.max_ii + 1):
        if budget.left() < LAST_SECONDS or budget.wall_out():   # the whole sweep's budget
            all_proven = False
            open_ii.append(ii)
            break
        at_ii = budget.share(budget.left() * (1.0 if ii >= last else II_SHARE))
        proof, tiles = _layout_first(problem, ii, at_ii, seed, warm)
        if proof is not None:
            results.append(proof)
            say(f"II {ii}: infeasible by the layout relaxation ({proof.wall_time:.2f} s)")
            continue
        sched, optimal_at_ii, bound, refuted = _solve_ii(
            problem, ii, at_ii, seed, workers, warm, tiles, results, export_dir, say,
            budget if proofs is None else proofs)
        if sched is not None:
            sched.method, sched.results = "cp-sat", results
            sched.status = "optimal" if optimal_at_ii and all_proven else "feasible"
            sched.proven_ii, sched.bound = all_proven, bound
            sched.seconds = time.perf_counter() - started
            if warm is not None and warm.ii < ii:  # the warm start beat an unproven sweep
                return warm
            return sched
        all_proven &= refuted
        if not refuted:
            open_ii.append(ii)
    if warm is not None:
        return warm
    if not all_proven:
        raise StreamingInfeasible([f"T0 time limit: no mapping found within {time_limit:g} s "
                                   f"and none proven impossible at II {open_ii} (raise "
                                   f"--time-limit)"])
    if not explain_failure:
        raise StreamingInfeasible([f"no II <= {problem.max_ii} admits a mapping (proven, "
                                   f"not explained further)"])
    each = min(EXPLAIN_SECONDS, max(0.5, budget.left() / 5))
    raise StreamingInfeasible(explain(problem, Budget(each * len(RELAXABLE)), seed))


# ---------------------------------------------------------------------------------------------
# explanation
# ---------------------------------------------------------------------------------------------
def explain(problem: StreamingProblem, budget: Budget | None = None, seed: int = 0
            ) -> list[str]:
    """Why no II admits a mapping: the pre-check rules, else the families whose relaxation helps
    (each of the :data:`RELAXABLE` relaxations solved in an equal share of ``budget``, default
    :data:`EXPLAIN_SECONDS` planned seconds each, of deterministic work).

    Examples
    --------
    >>> from hardware import load_hardware
    >>> from model.graph import Graph, Node
    >>> g = Graph("starts", [Node(f"s{i}") for i in range(17)], [])
    >>> from formulations.streaming.problem import problem_from_graph
    >>> explain(problem_from_graph(g, load_hardware("se16")))
    ['B1 starts: 17 instructions start a data-flow but there are 16 tiles']
    """
    reasons = precheck(problem)
    if reasons:
        return reasons
    ii = problem.max_ii
    budget = budget if budget is not None else Budget(EXPLAIN_SECONDS * len(RELAXABLE))
    culprits = []
    for family in RELAXABLE:
        keep = [f for f in RULES if f != family]
        model, _ = build_cp_model(problem, ii, families=keep)
        result = solve_model(model, budget.share(budget.seconds / len(RELAXABLE)), seed=seed)
        if result.has_solution:
            culprits.append(f"{family}: without it a mapping exists at II {ii} "
                            f"({RULES[family]})")
    if not culprits:
        culprits.append(f"no II <= {ii} admits a mapping: slots, reach, siblings, timing and "
                        f"holds conflict together (no single rule family is to blame)")
    return culprits


