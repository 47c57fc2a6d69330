"""One loop kernel on a CGRA: every decision from the graph to a modulo mapping.

Scope
-----
:func:`map_kernel` indexes the kernel (:func:`~formulations.cgra.problem.problem_from_graph`),
runs the pre-checks, the baseline (:func:`~formulations.cgra.listsched.list_schedule`, at most
:data:`BASELINE_SHARE` of the time), then, for the placer ``"model"``, on a kernel of more than
:data:`DESCENT_NODES` operations the full model in mobility windows bisected below the
II reached (:func:`~formulations.cgra.mobility.mobility_search`, :data:`MOBILITY_SHARE` of
the time left, while a question of its size fits) and a descent below the II reached
(:func:`~formulations.cgra.listsched.descend`, :data:`DESCENT_SHARE` of the time left), the
bisection first (after a quick descent, :data:`QUICK_SHARE`) when the baseline is above
:data:`MOBILITY_FIRST` x the bound, on a resource-bound kernel with the work for it
list-scheduling attempts whose congestion is repaired by the full model around it
(:func:`~formulations.cgra.repair.repair_descend`, :data:`REPAIR_SHARE`), and before all of
these, on a resource-bound kernel with :data:`FIRST_LEAST` planned seconds left, one question
at the proven bound + 1 (then horizon by horizon from the tightest when it finds nothing,
:data:`LOOSE_SHARE`), and at the bound when that maps (:func:`_bound_question`,
:data:`FIRST_SHARE`; when it finds nothing the bisection skips its II and gets the work its
questions would have had, :func:`_bisect`), then the II sweep on
``settings.backend`` (CP-SAT: :func:`~formulations.cgra.sweep.sweep_ii` with its proofs; a
linear backend: :func:`~formulations.cgra.milp.sweep_milp`), warm-started by the baseline.
On a fabric larger than :data:`REGION` x :data:`REGION` PEs a large kernel's baseline is
list-scheduled on its corner (:func:`region_spec`), the bisection asks each II on the
smallest corner that holds the kernel at it (:func:`question_fabrics`; on a kernel of more
than ``LARGE_KERNEL`` operations its first corner question without a mapping ends it), the
descents stay on
the whole fabric, and the kernel is mapped on its corner once more before the sweep (a warm
start when it beats the one reached): a corner's mapping is one of the whole fabric.
The placer ``"list"`` keeps the baseline (the classic mapper, for comparison).

Budget: :data:`~formulations.cgra.work.WORK_SHARE` of ``settings.time_limit`` is planned as
deterministic work (:class:`~formulations.solver.budget.Budget`), and every share above is a share
of it (of the work left, never of the wall time left): the same seed gives the same mapping
whatever the machine's load. The run's deadline (``settings.deadline``, else twice the plan)
is only the outer cap; the searches it stopped are counted in
:attr:`CgraResult.cut_short` (then the answer is legal but not promised to repeat).

Examples
--------
>>> from hardware import load_hardware
>>> from model.graph import Graph, Node, Edge
>>> g = Graph("acc", [Node("a", op="LOAD"), Node("b", op="ADD")],
...           [Edge("a", "b"), Edge("b", "b", distance=1)])
>>> r = map_kernel(g, load_hardware("cgra4x4"), SolveSettings(time_limit=5))
>>> r.schedule.ii, r.schedule.status, r.baseline.ii
(1, 'optimal', 1)
"""

from __future__ import annotations

import itertools
import math
import time
from dataclasses import dataclass, replace
from functools import partial
from typing import Callable, Iterator

from formulations.cgra.listsched import (EJECTION, LARGE_KERNEL, ROUNDS, descend,
                                        eject_from_top, list_schedule)
from formulations.cgra.milp import sweep_milp
from formulations.cgra.mobility import (QUESTION_SHARE, RISING, SLACK, mobility_search,
                                       rising_question, window_question)
from formulations.cgra.repair import repair_descend, resource_bound
from formulations.cgra.problem import (CgraInfeasible, CgraProblem, CgraSchedule, lower_bounds,
                                       moved_onto, precheck, problem_from_graph)
from formulations.cgra.sweep import LAST_NODES, sweep_ii
from formulations.cgra.work import WORK_SHARE
from formulations.solver import Budget, SolveSettings
from hardware import CgraSpec
from model.graph import Graph

__all__ = ["PLACERS", "BASELINE_SHARE", "SECOND_SHARE", "EJECT_SPLIT", "EJECT_SHARE", "REGION",
           "REGION_SHARE", "SECOND_NODES", "DESCENT_NODES", "DESCENT_SHARE",
           "MID_DESCENT_SHARE", "MOBILITY_SHARE", "MOBILITY_FIRST", "QUICK_SHARE", "QUICK_STALL",
           "LATE_DESCENT_SHARE", "REPAIR_SHARE", "REPAIR_LEAST", "SWEEP_LEAST", "QUESTION_FILL",
           "FIRST_SHARE", "LOOSE_SHARE", "FIRST_LEAST",
           "CgraResult", "map_kernel",
           "region_spec", "question_fabrics"]

#: Placers of a CGRA run (``--placer``): the CP-SAT sweep (``model``, default) or the
#: baseline alone (``list``).
PLACERS = ("model", "list")
#: Share of the time limit the baseline may use before the sweep.
BASELINE_SHARE = 0.5
#: Share of the time left a large kernel's baseline gets again when its first share ran out.
SECOND_SHARE = 0.7
#: Kernels of more operations than this get the second chance.
SECOND_NODES = 40
#: Share of the second chance for the plain list scheduler; then iterative modulo
#: scheduling with ejection from ``max_ii`` down
#: (:func:`~formulations.cgra.listsched.eject_from_top`) gets ``EJECT_SHARE`` of the time left.
EJECT_SPLIT = 0.4
EJECT_SHARE = 0.7
#: Kernels of more operations than this whose baseline is above the II bound get a descent
#: below the baseline's II (:func:`~formulations.cgra.listsched.descend`) with
#: ``DESCENT_SHARE`` of the time left before the sweep (smaller kernels: the sweep's proofs
#: need the time, and it reaches their II from below).
DESCENT_NODES = 30
DESCENT_SHARE = 0.6
#: The descent's share up to ``LARGE_KERNEL`` operations (the sweep often reaches the bound
#: of such a kernel from below, given the time).
MID_DESCENT_SHARE = 0.25
#: Share of the time left for the whole-kernel model in mobility windows
#: (:func:`~formulations.cgra.mobility.mobility_search`) before the descent, on the kernels
#: that get a descent.
MOBILITY_SHARE = 0.8
#: Above this many times the II bound the baseline's II is lowered by the bisection before
#: the descent, at or below it by the descent first (:func:`_descent`).
MOBILITY_FIRST = 1.4
#: Before the bisection goes first, a quick descent: at most ``QUICK_SHARE`` of the work left
#: and ``QUICK_STALL`` attempts at one II; the late descent after the bisection goes on with
#: the attempts after the quick descent's (one sequence of seeds: with seeds of its own the
#: quick descent lost the attempts that had mapped cgra8x8 gemm_nn_LN111 at II 8). On
#: the 4 x 4 mesh single steps of list scheduling are cheap where the bisection's questions
#: at its midpoints went unanswered (15 s: sample jpeg_fdct_islow_LN1 18 -> 13 in 1.6
#: planned s, realgsm FullPred 11 -> 8 in 1.0, after questions at II 12-16 and 8-10 had
#: spent 7 s for nothing); a stalled one costs a few attempts.
QUICK_SHARE = 0.3
QUICK_STALL = 8
#: The descent's share of the work left after a quick descent and the bisection (above
#: ``DESCENT_SHARE``: the quick descent spent part of the work the descent had before it
#: existed, and the sweep after it rarely maps or proves such a kernel at its size: sample
#: decrypt_LN1 on the mesh reached II 17 only after 25 attempts).
LATE_DESCENT_SHARE = 0.8
#: On a resource-bound kernel (:func:`~formulations.cgra.repair.resource_bound`), the share
#: of the work left for spread attempts with their near misses repaired
#: (:func:`~formulations.cgra.repair.repair_descend`) after the bisection (before the late
#: descent when the bisection goes first), asked only when the work left is at least
#: ``REPAIR_LEAST`` planned seconds (never at the suite's 15 s): a repair takes seconds
#: (at 120 s the descent spent 55 planned s of attempts on dwt PartPred at II 11, each
#: leaving 6-20 slots over capacity; spread attempts leave 1-2, and a repair maps).
REPAIR_SHARE = 0.5
REPAIR_LEAST = 15.0
#: On a resource-bound kernel (:func:`~formulations.cgra.repair.resource_bound`: ``route_ii``
#: is ResMII, above RecMII) whose baseline is above ``route_ii`` + 1, the share of the work
#: left for one question in mobility windows at ``route_ii`` + 1 before every other search
#: below the baseline, and then for one at ``route_ii`` when it maps (:func:`_bound_question`),
#: asked only when the work left is at least ``FIRST_LEAST`` planned seconds. Such a
#: question can need many times the work its size suggests, more than a bisection gives one
#: question (at most 0.4 of its work): dwt FullPred on the 4 x 4 torus maps II 11 (the
#: bound + 1) with 59.2 planned s of one question, where the 120 s run's bisection asked 14,
#: 12 and 13 and ended at 14. It has 91.9 planned s left after its baseline; 0.7 is 64.3.
#: A question that finds nothing leaves the bisection after it the work its questions would
#: have had, within the work left (:func:`_bisect`): on the 4 x 4 mesh dwt's questions at 11
#: need 119.3 planned s (FullPred) and 98.0 (PartPred, probes with 160), more than the
#: 90.5 and 98.1 a 120 s run has after the baseline, and took FullPred from 15 to 18 until
#: its bisection got back the 17.9 its question at 15 needs.
FIRST_SHARE = 0.7
#: The question at ``route_ii`` + 1 gets ``LOOSE_SHARE`` of the work left within the usual
#: horizon (:data:`~formulations.cgra.mobility.SLACK`); when that finds nothing, the
#: questions horizon by horizon from the tightest
#: (:func:`~formulations.cgra.mobility.rising_question`) get :data:`FIRST_SHARE` of the work
#: left then. On the 4 x 4 mesh dwt FullPred and PartPred map II 11 so with 27.5 and 31.5
#: planned s, where the usual horizon needs 119.3 and 98.0; 0.5 keeps every other probed
#: question's path (the most it needed: cgra4x4 dct LN2, 45.8 of 100.2 left), except the
#: torus's dwt FullPred (59.2 of 91.9), which maps within + 5 cycles in 21.2 instead.
LOOSE_SHARE = 0.5
#: 59.2 / ``FIRST_SHARE``, rounded up: with less left the question cannot get the work dwt
#: FullPred's needed, and the usual searches keep theirs (a 15 s run plans 12.75 s in all,
#: so the suite's rows never ask it).
FIRST_LEAST = 85.0
#: Rows and columns of the corner a larger fabric's kernel is mapped on first, and the share
#: of the time that run gets (:func:`region_spec`).
REGION = 4
REGION_SHARE = 0.4
#: PEs per operation and II a corner needs to be asked the bisection's question at that II
#: on, on a larger fabric (:func:`question_fabrics`): room for the routes' hops.
QUESTION_FILL = 1.3
#: Planned seconds the sweep gets at least, whatever the searches before it spent.
SWEEP_LEAST = 0.5


@dataclass
class CgraResult:
    """The problem, its lower bounds, the mapping and the baseline beside it."""

    problem: CgraProblem
    bounds: dict[str, int]
    schedule: CgraSchedule
    baseline: CgraSchedule | None
    baseline_seconds: float
    baseline_note: str = ""
    #: Searches the wall clock stopped before their planned work was spent (0: the same
    #: seed repeats this mapping).
    cut_short: int = 0
    #: Planned seconds of work spent.
    work: float = 0.0


def map_kernel(graph: Graph, spec: CgraSpec, settings: SolveSettings, placer: str = "model",
               progress: Callable[[str], None] | None = None, budget: Budget | None = None
               ) -> CgraResult:
    """Map ``graph`` on ``spec`` (see the module); raises :class:`CgraInfeasible` with the
    reasons in the user's terms when nothing maps. ``budget``: the search's (default
    :data:`~formulations.cgra.work.WORK_SHARE` x ``settings.time_limit`` planned seconds,
    capped by the run's deadline)."""
    say = progress or (lambda line: None)
    if placer not in PLACERS:
        raise ValueError(f"unknown CGRA placer {placer!r}; use one of {PLACERS}")
    started = time.perf_counter()
    if budget is None:
        budget = Budget(settings.time_limit * WORK_SHARE, settings.deadline)
    problem = problem_from_graph(graph, spec)
    reasons = precheck(problem)
    if reasons:
        raise CgraInfeasible(reasons)
    bounds = lower_bounds(problem)
    share = budget.seconds * (1.0 if placer == "list" else BASELINE_SHARE)
    baseline, note = None, ""
    corners = _Corners(graph, spec)
    target = _baseline_fabric(graph, spec, problem, corners) if placer == "model" else problem
    try:
        baseline = list_schedule(target, settings.seed, budget=budget.share(share))
        if target is not problem:
            baseline = moved_onto(problem, target, baseline,
                                  f"the {target.rows} x {target.cols} corner")
        say(f"list scheduling: II {baseline.ii}, length {baseline.length}")
    except CgraInfeasible as exc:
        note = "; ".join(exc.reasons)
        say(f"list scheduling: {note}")
    if baseline is None and placer == "model":
        baseline, note = _second_chance(problem, settings, budget, say, note, corners)
    baseline_seconds = time.perf_counter() - started
    if placer == "list":
        if baseline is None:
            raise CgraInfeasible([note])
        baseline.ii_bound = min(baseline.ii, bounds["route_ii"])
        baseline.proven_ii = baseline.ii == bounds["route_ii"]
        return CgraResult(problem, bounds, baseline, baseline, baseline_seconds, note,
                          budget.cuts, budget.spent)
    warm = _descent(problem, bounds, baseline, settings, budget, say,
                    question_fabrics(graph, spec, problem, corners))
    if settings.backend == "cp-sat":
        warm = _region_warm(graph, spec, problem, settings, warm, budget, say)
        sched = sweep_ii(problem, settings, warm, say,
                         Budget(max(SWEEP_LEAST, budget.left()), parent=budget))
    else:
        sched = sweep_milp(problem, settings.with_time(max(SWEEP_LEAST, budget.wall_left())), warm)
    return CgraResult(problem, bounds, sched, baseline, baseline_seconds, note, budget.cuts,
                      budget.spent)


def _descent(problem: CgraProblem, bounds: dict[str, int], baseline: CgraSchedule | None,
             settings: SolveSettings, budget: Budget, say: Callable[[str], None],
             fabric: Callable[[int], CgraProblem] | None = None) -> CgraSchedule | None:
    """A copy of the baseline, or a mapping at a smaller II: on a kernel of more than
    :data:`DESCENT_NODES` operations whose baseline is above the II bound, the full model in
    mobility windows, bisected between the bound and the II reached
    (:func:`~formulations.cgra.mobility.mobility_search`, :data:`MOBILITY_SHARE` of the time
    left), and list-scheduling attempts below the II reached
    (:func:`~formulations.cgra.listsched.descend`, seeded by the best mapping's operation
    order, :data:`DESCENT_SHARE` of the time left, :data:`MID_DESCENT_SHARE` up to
    ``LARGE_KERNEL`` operations). The bisection goes first when the baseline is above
    :data:`MOBILITY_FIRST` x the bound (its big steps pay there: adpcm_decoder 27 -> 12 at
    the suite budget), the descent first below that (one II at a time is what is missing, and
    the descent then gets the share it had before the bisection existed: dwt PartPred). The
    II sweep up from the bound rarely reaches such a kernel's II within the time limit; these
    come down to it from above, and the sweep then proves what it can below. ``fabric``:
    where the bisection asks at an II (:func:`question_fabrics`; default the whole one)."""
    if baseline is None or problem.n <= DESCENT_NODES or baseline.ii <= bounds["route_ii"]:
        return replace(baseline) if baseline else None
    best = replace(baseline)
    for step in _descent_steps(bounds, baseline, fabric):
        if best.ii > bounds["route_ii"]:
            best = step(problem, best, settings, budget, say)
    return best


def _descent_steps(bounds: dict[str, int], baseline: CgraSchedule,
                   fabric: Callable[[int], CgraProblem] | None = None) -> list[Callable]:
    """The searches below ``baseline``, in order: the bisection first above
    :data:`MOBILITY_FIRST` x the bound (after a quick descent, :func:`_quick_descent`), and on
    a baseline from ejection (list scheduling found no mapping at any II it tried, so a
    descent of list-scheduling attempts mostly burns its share: adpcm_coder, whose bisection
    then lacked the work for one question); the descent first otherwise. On a resource-bound
    kernel with the work for it, spread attempts whose near misses are repaired
    (:func:`_repair`) go after the bisection (before the late descent when the bisection
    goes first): the bisection's questions keep the work they had. On a resource-bound
    kernel with :data:`FIRST_LEAST` planned seconds left, one question at ``route_ii`` + 1
    (and one at ``route_ii`` when it maps) goes before all of them (:func:`_bound_question`);
    when that finds nothing the bisection skips its II and gets the work its questions would
    have had (:func:`_bisect`). The bisection asks on ``fabric``'s fabric at each II."""
    unanswered = _Unanswered()            # the bound question's miss, for the bisection
    bisect = partial(_bisect, fabric=fabric, unanswered=unanswered)
    first = partial(_bound_question, fabric=fabric, unanswered=unanswered)
    if baseline.method.startswith(EJECTION):
        return [first, bisect, _descend_below]
    if baseline.ii > MOBILITY_FIRST * bounds["route_ii"]:
        numbers = itertools.count()          # the late descent goes on where the quick stopped
        return [first, partial(_quick_descent, numbers=numbers),
                partial(bisect, top=baseline.ii), _repair,
                partial(_late_descent, numbers=numbers)]
    return [first, _descend_below, bisect, _repair]


@dataclass
class _Unanswered:
    """The question at ``route_ii`` + 1 of :func:`_bound_question` when it found nothing: its
    II (None: it mapped, or was not asked) and the planned seconds left before it."""

    ii: int | None = None
    work_before: float = 0.0


def _bound_question(problem: CgraProblem, best: CgraSchedule, settings: SolveSettings,
                    budget: Budget, say: Callable[[str], None],
                    fabric: Callable[[int], CgraProblem] | None = None,
                    unanswered: _Unanswered | None = None) -> CgraSchedule:
    """On a resource-bound kernel (:func:`~formulations.cgra.repair.resource_bound`) above
    ``route_ii`` + 1 with at least :data:`FIRST_LEAST` planned seconds left, one question in
    mobility windows (:func:`~formulations.cgra.mobility.window_question`, on ``fabric``'s
    fabric) at ``route_ii`` + 1 with :data:`LOOSE_SHARE` of the work left, and when it finds
    nothing the questions horizon by horizon from the tightest
    (:func:`~formulations.cgra.mobility.rising_question`) with :data:`FIRST_SHARE` of the work
    left then, before the descents and the bisection: the bar's II, whose question can need
    most of a 120 s run's work (dwt on the 4 x 4 mesh within the usual horizon), which no
    bisection gives it. When it maps, ``route_ii`` is the only II left to gain, and its
    question gets :data:`FIRST_SHARE` of the work left in turn (realgsm FullPred on the torus:
    with the bisection's share after the question at 7 it found nothing at 6, which main's
    question mapped with a little more work). The mapping of the smallest II found, else
    ``best``; the usual searches go on from it with the work left (a question stops at its
    first mapping). When the question at ``route_ii`` + 1 finds nothing, its II and the work
    left before it go to ``unanswered`` (for :func:`_bisect`)."""
    before = budget.left()
    if before < FIRST_LEAST:
        return best
    low = lower_bounds(problem)["route_ii"]
    if best.ii <= low + 1 or not resource_bound(problem):
        return best
    for ii in (low + 1, low):
        where = fabric(ii) if fabric else problem
        which = f"the bound{' + 1' if ii > low else ''}"
        say(f"mobility windows: asking II {ii} ({which}) within + {SLACK} cycles")
        loose = LOOSE_SHARE if ii > low else FIRST_SHARE
        found, _ = window_question(where, ii, budget.share(budget.left() * loose),
                                   settings.seed, SLACK)
        if found is None and ii > low:
            say(f"mobility windows: asking II {ii} again, horizon by horizon from "
                f"+ {RISING[0]} cycles")
            found = rising_question(where, ii, budget.share(budget.left() * FIRST_SHARE),
                                    settings.seed)
        if found is not None and where is not problem:
            found = moved_onto(problem, where, found, f"the {where.rows} x {where.cols} corner")
        say(f"mobility windows: II {ii} ({which}, first) " +
            (f"mapped, length {found.length}" if found else "not found"))
        if found is None:
            if ii > low and unanswered is not None:
                unanswered.ii, unanswered.work_before = ii, before
            break
        best = found
    return best


def _bisect(problem: CgraProblem, best: CgraSchedule, settings: SolveSettings, budget: Budget,
            say: Callable[[str], None], top: int | None = None,
            fabric: Callable[[int], CgraProblem] | None = None,
            unanswered: _Unanswered | None = None) -> CgraSchedule:
    """:func:`~formulations.cgra.mobility.mobility_search` below ``best`` (from ``top``, on
    ``fabric``) with :data:`MOBILITY_SHARE` of the work left. After a bound question that
    found nothing (``unanswered``, :func:`_bound_question`) its II is not asked again (the
    same search with less work), and each question gets at least the work the first would
    have had without it (``QUESTION_SHARE`` x :data:`MOBILITY_SHARE` of the work left before
    it), as does the bisection, within the work left: dwt FullPred on the 4 x 4 mesh maps
    II 15 with 17.9 planned s of one question; after the question at 11 and the quick
    descent, 19.0 are left, of which the bisection's usual share gave it 6.1 (the run ended
    at 18, where main's bisection had mapped 15); now it gets the 19.0."""
    share, least, skip = budget.left() * MOBILITY_SHARE, 0.0, None
    if unanswered is not None and unanswered.ii is not None:
        least = QUESTION_SHARE * MOBILITY_SHARE * unanswered.work_before
        share, skip = max(share, least), unanswered.ii
    return mobility_search(problem, best, budget.share(share), settings.seed, say, top, fabric,
                           unanswered=skip, least=least)


def _repair(problem: CgraProblem, best: CgraSchedule, settings: SolveSettings, budget: Budget,
            say: Callable[[str], None]) -> CgraSchedule:
    """:func:`~formulations.cgra.repair.repair_descend` below ``best`` with
    :data:`REPAIR_SHARE` of the work left, on a resource-bound kernel when the work left is
    at least :data:`REPAIR_LEAST` (else ``best``)."""
    if not resource_bound(problem) or budget.left() < REPAIR_LEAST:
        return best
    return repair_descend(problem, best, budget.share(budget.left() * REPAIR_SHARE),
                          settings.seed, say)


def _quick_descent(problem: CgraProblem, best: CgraSchedule, settings: SolveSettings,
                   budget: Budget, say: Callable[[str], None], numbers: Iterator[int]
                   ) -> CgraSchedule:
    """:func:`~formulations.cgra.listsched.descend` below ``best`` with :data:`QUICK_SHARE` of
    the work left, stopping at the first II that :data:`QUICK_STALL` attempts do not map;
    its attempts are drawn from ``numbers``."""
    found = descend(problem, best, budget.share(budget.left() * QUICK_SHARE), settings.seed,
                    say, stall=QUICK_STALL, numbers=numbers)
    say(f"quick descent: II {found.ii}, length {found.length}")
    return found


def _late_descent(problem: CgraProblem, best: CgraSchedule, settings: SolveSettings,
                  budget: Budget, say: Callable[[str], None], numbers: Iterator[int]
                  ) -> CgraSchedule:
    """:func:`_descend_below` after a quick descent and the bisection, with
    :data:`LATE_DESCENT_SHARE` of the work left, going on with the quick descent's
    ``numbers``."""
    return _descend_below(problem, best, settings, budget, say, LATE_DESCENT_SHARE, numbers)


def _descend_below(problem: CgraProblem, best: CgraSchedule, settings: SolveSettings,
                   budget: Budget, say: Callable[[str], None], share: float | None = None,
                   numbers: Iterator[int] | None = None) -> CgraSchedule:
    """:func:`~formulations.cgra.listsched.descend` below ``best`` with ``share`` of the work
    left (default :data:`DESCENT_SHARE`, :data:`MID_DESCENT_SHARE` up to ``LARGE_KERNEL``
    operations), its attempts drawn from ``numbers`` (default a fresh count)."""
    if share is None:
        share = DESCENT_SHARE if problem.n > LARGE_KERNEL else MID_DESCENT_SHARE
    found = descend(problem, best, budget.share(budget.left() * share), settings.seed, say,
                    numbers=numbers)
    if found.ii < best.ii:
        say(f"descent below the baseline: II {found.ii}, length {found.length}")
    return found


def _baseline_fabric(graph: Graph, spec: CgraSpec, problem: CgraProblem,
                     corners: _Corners | None = None) -> CgraProblem:
    """Where the baseline of the placer ``model`` is list-scheduled: on a fabric larger
    than :data:`REGION` x :data:`REGION`, a kernel of more than :data:`SECOND_NODES`
    operations on its corner (:func:`region_spec`; the descent then goes below on the whole
    fabric), since list scheduling's attempts on the whole fabric fail slowly at the low
    IIs it starts from (fix_fft_npb on cgra8x8: IIs 2-4 in 6.4 of 12.8 planned s, then
    nothing); else on ``problem``."""
    if problem.n <= SECOND_NODES:
        return problem
    return (corners or _Corners(graph, spec))() or problem


def _second_chance(problem: CgraProblem, settings: SolveSettings, budget: Budget,
                   say: Callable[[str], None], note: str, corners: _Corners
                   ) -> tuple[CgraSchedule | None, str]:
    """The baseline found nothing: on a kernel of more than :data:`SECOND_NODES` operations
    the sweep rarely maps from nothing (its relaxation alone takes seconds), so list
    scheduling gets :data:`EJECT_SPLIT` x :data:`SECOND_SHARE` of the work left, with other
    seeds, before the sweep (on a fabric larger than :data:`REGION` x :data:`REGION`:
    :data:`SECOND_SHARE` on its corner, :func:`region_spec`, whose candidates are fewer and
    whose mappings are the whole fabric's: fix_fft_npb on cgra8x8), and when that fails too,
    iterative modulo scheduling with ejection from ``max_ii`` down (:data:`EJECT_SHARE` of
    what is left then; on the corner too)."""
    if problem.n <= SECOND_NODES:
        return None, note
    target = corners() or problem
    where = f"the {target.rows} x {target.cols} corner"
    split = EJECT_SPLIT if target is problem else 1.0
    try:
        baseline = list_schedule(target, settings.seed + ROUNDS,
                                 budget=budget.share(budget.left() * SECOND_SHARE * split))
    except CgraInfeasible as exc:
        note += "; " + "; ".join(exc.reasons)
        left = budget.left()
        baseline = eject_from_top(target, budget.share(left * EJECT_SHARE), settings.seed,
                                  progress=say)
        if baseline is None:
            return None, (f"{note}; iterative modulo scheduling (ejection) from II "
                          f"{problem.max_ii} down found no mapping in "
                          f"{left * EJECT_SHARE:.1f} s")
    if target is not problem:
        baseline = moved_onto(problem, target, baseline, where)
    say(f"list scheduling (second chance): II {baseline.ii}, length {baseline.length}, "
        f"{baseline.method}")
    return baseline, ""


def region_spec(spec: CgraSpec, side: int = REGION) -> CgraSpec | None:
    """The top-left ``side`` x ``side`` corner of a fabric larger than :data:`REGION` x
    :data:`REGION`, as a fabric of its own (a torus's corner is a mesh: the wrap-around links
    are not in it); None when the fabric is no larger or its memory PEs are not the same in
    the corner (only ``all`` and ``left`` are). Every mapping of the corner is a mapping of
    the whole fabric.

    >>> from hardware import load_hardware
    >>> sub = region_spec(load_hardware("cgra8x8"))
    >>> sub.rows, sub.cols, sub.neighbours, region_spec(load_hardware("cgra4x4"))
    (4, 4, 'mesh', None)
    """
    if spec.rows * spec.cols <= REGION * REGION or spec.memory_pes not in ("all", "left"):
        return None
    return replace(spec, name=f"{spec.name}-region", rows=min(spec.rows, side),
                   cols=min(spec.cols, side),
                   neighbours="mesh" if spec.neighbours == "torus" else spec.neighbours)


def question_fabrics(graph: Graph, spec: CgraSpec, problem: CgraProblem,
                     corners: _Corners | None = None) -> Callable[[int], CgraProblem] | None:
    """On a fabric larger than :data:`REGION` x :data:`REGION` (None otherwise): for an II,
    the fabric the bisection's question at that II is asked on, the smallest square corner
    (:func:`region_spec`) of at least :data:`QUESTION_FILL` x operations / II PEs, the
    whole fabric when no corner is that large. A question's size grows with the PEs, so on
    cgra8x8 the whole fabric's questions went unasked ("II 16 needs about 12.2 s" on
    adpcm_decoder) where the same question on the 4 x 4 mesh maps in seconds."""
    if region_spec(spec) is None:
        return None
    corner = corners or _Corners(graph, spec)

    def fabric(ii: int) -> CgraProblem:
        side = next((side for side in range(REGION, max(spec.rows, spec.cols))
                     if min(spec.rows, side) * min(spec.cols, side) * ii
                     >= QUESTION_FILL * problem.n), None)
        return problem if side is None else corner(side)
    return fabric


class _Corners:
    """The kernel on the top-left corners of its fabric (:func:`region_spec`), each built
    once per kernel: the baseline, the second chance and the bisection's questions ask."""

    def __init__(self, graph: Graph, spec: CgraSpec):
        self.graph, self.spec, self.built = graph, spec, {}

    def __call__(self, side: int = REGION) -> CgraProblem | None:
        """The ``side`` x ``side`` corner's problem; None when the fabric has no corner."""
        if side not in self.built:
            sub = region_spec(self.spec, side)
            self.built[side] = None if sub is None else problem_from_graph(self.graph, sub)
        return self.built[side]


def _region_warm(graph: Graph, spec: CgraSpec, problem: CgraProblem, settings: SolveSettings,
                 warm: CgraSchedule | None, budget: Budget, say: Callable[[str], None]
                 ) -> CgraSchedule | None:
    """On a fabric larger than :data:`REGION` x :data:`REGION`, map the kernel on its corner
    first (:func:`region_spec`, :data:`REGION_SHARE` of the work left: the full model there is a
    fraction of the size) and keep that mapping, moved onto the whole fabric, as the warm
    start when it beats ``warm`` (lower II, or the same II and shorter). Skipped when it
    cannot lower ``warm``'s II, and above ``LARGE_KERNEL`` operations. Nothing the corner's
    run proves is kept: the sweep on the whole fabric proves its own bounds. Also skipped on
    a kernel of at most ``LAST_NODES`` operations when the corner cannot reach the II bound
    (the sweep up from the bound is what proves such a kernel's II)."""
    sub = region_spec(spec)
    corner_ii = math.ceil(problem.n / (REGION * REGION))       # its ResMII at least
    bound = lower_bounds(problem)["route_ii"]
    if sub is None or problem.n > LARGE_KERNEL or (warm is not None and (
            warm.ii <= bound or corner_ii >= warm.ii)) or (
            problem.n <= LAST_NODES and corner_ii > bound):
        return warm                          # nothing to gain: the II is at its bound already
    try:
        inner = map_kernel(graph, sub, settings,
                           budget=budget.share(budget.left() * REGION_SHARE))
    except CgraInfeasible:
        return warm
    found = moved_onto(problem, inner.problem, inner.schedule,
                       f"the {sub.rows} x {sub.cols} corner")
    say(f"{sub.rows} x {sub.cols} corner: II {found.ii}, length {found.length}")
    if warm is None or (found.ii, found.length) < (warm.ii, warm.length):
        return found
    return warm

