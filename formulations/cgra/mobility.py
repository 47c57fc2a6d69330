"""Large kernels below the list scheduler's II: the whole-kernel model in tight mobility windows.

Scope
-----
On kernels of more than ``DESCENT_NODES`` operations the II sweep
(:mod:`formulations.cgra.sweep`) climbs from the II bound with the relaxation and rarely
reaches the kernel's II within the time limit, so the answer was the list scheduler's
(:mod:`formulations.cgra.listsched`) far above the bound on kernels with long recurrences
(adpcm_decoder: bound 7, list scheduling 24-27). :func:`mobility_search` asks the full model
(:mod:`formulations.cgra.model`: PEs, cycles and every register and link, cycle by cycle) the
question SAT-MapIt asks per II (Tirelli et al., DATE 2022): *is there a mapping whose
operations all issue within their mobility at this II?* -- the windows of
:func:`~formulations.cgra.problem.time_windows` (ASAP / ALAP with the recurrences at that II)
for an iteration of :func:`~formulations.cgra.problem.length_bound` ``+`` :data:`SLACK`
cycles. Tight windows keep the time-extended routing graph small (85 operations on a 4 x 4
torus: about 75 000 routing variables), so one question is seconds of CP-SAT where the
ladder of the sweep, built from the relaxation's looser horizons, is not asked at all.

Why this and not the alternatives of issue 35: the model already routes exactly (multi-hop
routes, register and link capacity per slot), so only its horizon needed choosing, and a
mapping it returns needs no repair; a large-neighbourhood search needs a mapping at the II
it improves, which is exactly what is missing below the list scheduler's II; a stronger
lower bound would prove more but map nothing lower.

The IIs between the bound and the warm start's are searched by **bisection**: a mapping at
``mid`` lowers the upper end, an unanswered question raises the lower end. An INFEASIBLE answer
only says "not within this horizon" (nothing is proven, the sweep's relaxation still proves
what it can), so the same II is asked again with a longer one (:data:`SLACKS`, :func:`ask_at`)
before the lower end rises: a horizon too short, not the II, was what kept adpcm_decoder at II
9 with 120 s. A question that finds nothing within the usual horizon may be asked horizon by
horizon from the tightest up instead (:func:`rising_question`, as SAT-MapIt lengthens its
schedule): refuting a tight horizon is often cheap, and a loose one can cost many times the
horizon that maps (dwt FullPred on the 4 x 4 mesh at II 11). Each question stops at its first
mapping (``stop_after_first_solution``; the sweep shortens it afterwards), states a decision
strategy (the issue cycles, then the PEs, operations by earliest issue: the list scheduler's
order) that CP-SAT's automatic search with one worker leaves aside, since it fixes Boolean
variables by its own SAT heuristics (fix_fft_npb on the torus at II 5: 2.6 planned s with the
strategy and without it; with ``FIXED_SEARCH`` it stops unanswered), and is limited by CP-SAT's
deterministic time: :data:`QUESTION_SHARE` of the work left, or what a model of its size needs
(:func:`question_seconds`; the search ends when less than that is left), charged to the
:class:`~formulations.solver.budget.Budget` with the model's build, so the same seed gives the
same mapping whatever the machine's load.

Examples
--------
>>> from hardware import load_hardware
>>> from model.graph import Graph, Node, Edge
>>> from formulations.cgra.problem import problem_from_graph
>>> from formulations.solver import Budget
>>> g = Graph("fan", [Node("a", op="LOAD")] + [Node(f"m{i}", op="MUL") for i in range(6)],
...           [Edge("a", f"m{i}") for i in range(6)])
>>> p = problem_from_graph(g, load_hardware("cgra4x4"))
>>> window_map(p, 1, Budget(10), seed=0).ii
1
"""

from __future__ import annotations

from itertools import product
from typing import Callable

from ortools.sat.python import cp_model

from formulations.cgra.listsched import LARGE_KERNEL
from formulations.cgra.model import build_description, decode_full, model_size
from formulations.cgra.problem import (CgraProblem, CgraSchedule, length_bound, lower_bounds,
                                       moved_onto)
from formulations.cgra.relax import CP_PARAMS
from formulations.cgra.work import BUILD_SECONDS, FULL_WORK_PER_SECOND
from formulations.solver import Budget, SolveStatus, solve_cp_model

__all__ = ["SLACK", "SLACKS", "QUESTION_SHARE", "LEAST_QUESTION", "QUESTION_SECONDS",
           "MAX_ROUTING_VARIABLES", "question_seconds", "window_horizon", "window_map",
           "window_question", "pe_symmetries", "pe_representatives", "mobility_search",
           "ask_at", "ask_near", "NEAR_HOPS", "NEAR_SHARE", "RISING", "rising_question"]

#: Spare cycles of one iteration above the length bound at the II: every operation's
#: mobility (room for the hops of its routes; 2 was too few on adpcm_decoder at II 10).
SLACK = 6
#: The spare cycles a question at one II is asked with, one after the other while CP-SAT
#: proves the shorter horizon too short (adpcm_decoder on the 4 x 4 torus at II 8: none
#: within 6, a mapping within 10).
SLACKS = (SLACK, 2 * SLACK)
#: The spare cycles of the questions asked horizon by horizon, from the tightest up
#: (:func:`rising_question`). Below 2 none of the 30 questions probed so mapped (at the
#: bound + 1, resource-bound kernels of more than 30 operations on both 4 x 4 targets: each
#: refuted in 0.1-1.3 planned s).
RISING = (2, 3, 4, 5)
#: Share of the work left for one question of the bisection.
QUESTION_SHARE = 0.4
#: The least planned seconds a question is asked with.
LEAST_QUESTION = 0.5
#: Planned seconds a question needs per routing variable, about (adpcm_decoder and
#: aes_encrypt on the 4 x 4 torus: 74 000-110 000 variables, 3.4-6.5 planned seconds, build
#: included, to the first mapping or the proof that none fits, i.e. 4.2e-5 to 6.5e-5, 5e-5 on
#: most); the search stops when the work left is below this for the next question, so a short
#: budget goes to the descent instead (a question gets at least this, and stops at its
#: first mapping).
QUESTION_SECONDS = 5.0e-5
#: Hops from its PE in the mapping at the larger II an operation may move in a
#: neighbourhood question (:func:`window_question` with ``near``).
NEAR_HOPS = 1
#: Share of a full question's need (:func:`question_seconds`) a neighbourhood question gets.
NEAR_SHARE = 0.75
#: Largest routing graph (registers + link uses) a question is built for; a larger one is
#: asked with a shorter horizon.
MAX_ROUTING_VARIABLES = 250_000

Progress = Callable[[str], None]


def window_horizon(problem: CgraProblem, ii: int, slack: int = SLACK) -> int | None:
    """The iteration length the question at ``ii`` allows: the length bound plus ``slack``,
    shortened while the routing graph exceeds :data:`MAX_ROUTING_VARIABLES`; None when the
    recurrences refute ``ii``."""
    low = length_bound(problem, ii)
    if low is None:
        return None
    horizon = low + slack
    while horizon > low and model_size(problem, ii, horizon) > MAX_ROUTING_VARIABLES:
        horizon -= 1
    return horizon


def question_seconds(problem: CgraProblem, ii: int, slack: int = SLACK) -> float:
    """Planned seconds a question at ``ii`` is expected to need (:data:`QUESTION_SECONDS`
    per routing variable; 0 when the recurrences refute ``ii``)."""
    horizon = window_horizon(problem, ii, slack)
    return 0.0 if horizon is None else model_size(problem, ii, horizon) * QUESTION_SECONDS


def window_map(problem: CgraProblem, ii: int, budget: Budget, seed: int = 0,
               slack: int = SLACK) -> CgraSchedule | None:
    """One question: a mapping at ``ii`` within the mobility windows of
    :func:`window_horizon`, asked with all of ``budget``; None when none was found
    (:func:`window_question` also says whether none exists within that horizon)."""
    return window_question(problem, ii, budget, seed, slack)[0]


def window_question(problem: CgraProblem, ii: int, budget: Budget, seed: int = 0,
                    slack: int = SLACK, near: CgraSchedule | None = None
                    ) -> tuple[CgraSchedule | None, bool]:
    """The question of :func:`window_map` (the build charged
    :data:`~formulations.cgra.work.BUILD_SECONDS` per routing variable): the mapping found,
    or None and whether CP-SAT proved that no mapping ends within the horizon (then a longer
    horizon may still map at ``ii``; an unanswered question says nothing)."""
    horizon = window_horizon(problem, ii, slack)
    if horizon is None:
        return None, False
    build = model_size(problem, ii, horizon) * BUILD_SECONDS
    if budget.left() < build + LEAST_QUESTION * 0.5 or budget.over():
        return None, False
    budget.spend(build)
    d, fv = build_description(problem, ii, horizon)
    if fv.windows is None:
        return None, False
    lo = fv.windows[0]
    order = sorted(range(problem.n), key=lambda v: (lo[v], v))
    if near is None:
        d.clause([fv.on[order[0]][p] for p in pe_representatives(problem, order[0])],
                 "S1_symmetry")
    else:
        _keep_near(problem, d, fv, near)
    d.branch_on([b for v in order for _, b in sorted(fv.at[v].items())]
                + [b for v in order for _, b in sorted(fv.on[v].items())],
                cp_model.CHOOSE_FIRST, cp_model.SELECT_MAX_VALUE)
    model, fv.emitted = d.to_cp()
    limit, steps = budget.cp_limits(budget.left(), FULL_WORK_PER_SECOND)
    params = dict(CP_PARAMS, stop_after_first_solution=True)
    result = solve_cp_model(model, time_limit=limit, seed=seed, workers=1,
                            variables=fv.reported(), params=params, deterministic_time=steps)
    budget.charge(result, FULL_WORK_PER_SECOND)
    if not result.has_solution:
        return None, result.status is SolveStatus.INFEASIBLE
    sched = decode_full(problem, ii, fv, result, method="CP-SAT in mobility windows")
    sched.status = "feasible"
    return sched, False


def rising_question(problem: CgraProblem, ii: int, budget: Budget, seed: int = 0,
                    slacks: tuple[int, ...] = RISING) -> CgraSchedule | None:
    """Questions at ``ii`` horizon by horizon from the tightest (``slacks``), as SAT-MapIt
    lengthens its schedule, each with all the work left, while CP-SAT proves the shorter
    horizon too short; the mapping found, else None (an unanswered question ends the
    climb). A loose horizon can cost many times a tight one: on the 4 x 4 mesh dwt FullPred
    maps II 11 within + 5 cycles in 20.4 planned s after refutations of + 2 to + 4 in 7.0,
    where the question within + 6 needs 119.3; on other kernels the loose horizon is the
    cheaper one (cgra4x4 dct LN2 at II 7: + 6 maps in 45.8, + 5 is refuted only in 59.6),
    so this is asked after it (:func:`~formulations.cgra.kernel._bound_question`)."""
    for slack in slacks:
        found, refuted = window_question(problem, ii, budget, seed, slack)
        if found is not None or not refuted:
            return found
    return None


def _keep_near(problem: CgraProblem, d, fv, near: CgraSchedule) -> None:
    """Every operation only on the PEs within :data:`NEAR_HOPS` of its PE in ``near``."""
    for v, name in enumerate(problem.names):
        home = near.pe[name]
        for p, b in fv.on[v].items():
            if problem.dist[home][p] > NEAR_HOPS:
                d.clause([~b], "L1_near")


def pe_symmetries(problem: CgraProblem) -> list[list[int]]:
    """The PE permutations that map the fabric onto itself: translations (wrapping around),
    reflections and, on a square grid, the transpose, kept when they preserve every link and
    every operation's allowed PEs (a 4 x 4 torus whose PEs all reach memory: 128; the 4 x 4
    mesh: 8; HyCUBE, memory on its outer columns: 4). A mapping moved by one of them is a
    mapping again (registers are per PE and the same everywhere).

    >>> from hardware import load_hardware
    >>> from model.graph import Graph, Node
    >>> from formulations.cgra.problem import problem_from_graph
    >>> g = Graph("one", [Node("a", op="LOAD")], [])
    >>> [len(pe_symmetries(problem_from_graph(g, load_hardware(name))))
    ...  for name in ("cgra4x4", "cgra4x4-torus", "hycube4x4")]
    [8, 128, 4]
    """
    rows, cols, pes = problem.rows, problem.cols, problem.pes
    index = {rc: p for p, rc in enumerate(pes)}
    links = {(p, q) for p in range(problem.pe_count) for q in problem.links[p]}
    allowed = {frozenset(a) for a in problem.allowed}
    out: dict[tuple[int, ...], list[int]] = {}    # distinct (a 2 x 2 mesh's shifts are flips)
    for dr, dc, flip_r, flip_c, swap in product(range(rows), range(cols), (0, 1), (0, 1),
                                                (0, 1) if rows == cols else (0,)):
        def moved(r: int, c: int) -> tuple[int, int]:
            r, c = (c, r) if swap else (r, c)
            r, c = (rows - 1 - r if flip_r else r), (cols - 1 - c if flip_c else c)
            return (r + dr) % rows, (c + dc) % cols
        perm = [index[moved(r, c)] for r, c in pes]
        if {(perm[p], perm[q]) for p, q in links} == links and \
                all(frozenset(perm[p] for p in a) == a for a in allowed):
            out.setdefault(tuple(perm), perm)
    return list(out.values())


def pe_representatives(problem: CgraProblem, v: int) -> list[int]:
    """The PEs ``v`` is allowed on that are the first of their orbit under
    :func:`pe_symmetries`: every mapping moves onto one with ``v`` there, so a question
    restricted to them answers the same (and refutes an II up to 16 times sooner on a torus)."""
    group = pe_symmetries(problem)
    return [p for p in problem.allowed[v] if all(perm[p] >= p for perm in group)]


def mobility_search(problem: CgraProblem, best: CgraSchedule, budget: Budget, seed: int = 0,
                    progress: Progress | None = None, top: int | None = None,
                    fabric: Callable[[int], CgraProblem] | None = None,
                    unanswered: int | None = None, least: float = 0.0) -> CgraSchedule:
    """Bisection over the IIs from the proven bound to ``top`` (default ``best.ii``;
    ``best`` is a mapping; the midpoints of :func:`_midpoint`) with :func:`ask_at`, a
    midpoint at or above ``best.ii`` taken as mapped unasked; the mapping of the smallest
    II found (``best`` when none is lower). With the baseline's II as ``top`` after a quick
    descent the questions are the ones asked without it, less those it answered (a quick
    descent 20 -> 18 moved aes decrypt's first question on the mesh from II 14, which
    maps, to 13, which went unanswered). ``fabric`` gives the
    problem a question at an II is asked on: ``problem`` or a corner of its fabric
    (:func:`~formulations.cgra.kernel.question_fabrics`), whose mapping is moved onto the
    whole fabric. On a kernel of more than ``LARGE_KERNEL`` operations the first corner
    question that finds nothing ends the bisection: on cgra8x8 the next ones went
    unanswered too and took the work with which the descent on the whole fabric reached
    a lower II (realgsm FullPred 9 -> 7, sample jpeg_fdct_islow_LN1 13 -> 11 at 15 s); on
    smaller kernels a question above it still maps (fix_fft_npb: none at II 8, II 12
    mapped). ``unanswered``: an II whose question found nothing with more work than any
    question here gets (:func:`~formulations.cgra.kernel._bound_question`); a midpoint at or
    below it is taken as not found, unasked (the same question with less work follows the
    same search and stops sooner). ``least``: the planned seconds each question gets at least
    (:func:`ask_at`)."""
    say = progress or (lambda line: None)
    bounds = lower_bounds(problem)
    low, high, first = bounds["route_ii"], max(best.ii, top or 0), True
    while low < high and budget.left() >= LEAST_QUESTION and not budget.over():
        mid = _midpoint(problem, bounds, low, high, budget, fabric, first)
        if mid >= best.ii:
            high = mid
            continue
        if unanswered is not None and mid <= unanswered:
            low = mid + 1
            continue
        where = fabric(mid) if fabric else problem
        found, asked = _ask_on(problem, where, mid, budget, seed, say, best, least)
        first = False
        if not asked:
            break
        if found is not None:
            best, high = found, mid
        elif where is not problem and problem.n > LARGE_KERNEL:
            break                # a corner found nothing: the rest goes to the descent
        else:
            low = mid + 1
    return best


def _midpoint(problem: CgraProblem, bounds: dict[str, int], low: int, high: int,
              budget: Budget, fabric: Callable[[int], CgraProblem] | None,
              first: bool) -> int:
    """The bisection's next II, the middle of ``low`` (the proven bound at first) to
    ``high``; but when the work left covers less than two questions, the first is the one
    asked before the proven bound existed, from the classic bound (at least ``low``): its
    answer is final, and a lower one pays there. At 15 s on the mesh and cgra8x8 sample
    adpcm_coder_LN1 has one question, and II 25 maps where 26 was asked. With more
    questions the middle from the proven bound wastes none on the IIs it refutes: from the
    classic bound, needwun FullPred on cgra8x8 asked II 18 second, found nothing on the
    corner and ended at 21 (19 from the proven bound), and doitgen_unroll4 asked 5 first
    and ended at 6 (5)."""
    mid = (low + high) // 2
    where = fabric(mid) if fabric else problem
    if first and budget.left() < 2 * question_seconds(where, mid):
        return max(low, (bounds["ii"] + high) // 2)
    return mid


def _ask_on(problem: CgraProblem, where: CgraProblem, ii: int, budget: Budget, seed: int,
            say: Progress, best: CgraSchedule, least: float = 0.0
            ) -> tuple[CgraSchedule | None, bool]:
    """:func:`ask_at` on ``where``, ``problem`` or a corner of its fabric (then without the
    neighbourhood question, ``best`` being a mapping of the whole fabric), the mapping found
    moved onto ``problem``'s fabric; each question with at least ``least`` planned s."""
    if where is problem:
        return ask_at(problem, ii, budget, seed, say, near=best, least=least)
    corner = f"the {where.rows} x {where.cols} corner"
    found, asked = ask_at(where, ii, budget, seed, lambda line: say(f"{line} on {corner}"),
                          least=least)
    return (None if found is None else moved_onto(problem, where, found, corner)), asked


def ask_at(problem: CgraProblem, ii: int, budget: Budget, seed: int, say: Progress,
           slacks: tuple[int, ...] = SLACKS, near: CgraSchedule | None = None,
           least: float = 0.0) -> tuple[CgraSchedule | None, bool]:
    """The questions at ``ii``, horizon after horizon (``slacks``) while CP-SAT proves
    that none fits the shorter one (adpcm_decoder on the 4 x 4 torus: none at II 8 within
    the length bound + 6 cycles, one within + 10), each :data:`QUESTION_SHARE` of the work
    left (at least :data:`LEAST_QUESTION` planned seconds, the :func:`question_seconds`
    it needs and ``least``, within the work left); a question that ran out of work is
    followed by the neighbourhood question around ``near`` (:func:`ask_near`), when given
    and when the work left covers it and a full question after it (else it takes the work
    the bisection's next step needs: sample decrypt_LN1 on the torus, II 16 instead of 14),
    and in place of the full question when the work left is below its need but covers the
    neighbourhood question's (the bisection's last step: on the 4 x 4 mesh a full question
    near the bound often goes unanswered where the neighbourhood one maps in half its
    work). The mapping found, and whether the bisection goes on (False: the work left was
    below the first question's need, or only the neighbourhood question fitted and found
    nothing)."""
    asked, horizon = False, None
    for slack in slacks:
        if window_horizon(problem, ii, slack) == horizon:
            break                            # capped by MAX_ROUTING_VARIABLES: no longer
        horizon = window_horizon(problem, ii, slack)
        need = question_seconds(problem, ii, slack)
        if need > budget.left():
            say(f"mobility windows: II {ii} needs about {need:.1f} s, {budget.left():.1f} left")
            if near is not None and not asked:       # the cheaper question may still fit
                found = ask_near(problem, ii, budget, seed, say, near)
                return found, found is not None
            break
        share = budget.share(max(LEAST_QUESTION, need, least, budget.left() * QUESTION_SHARE))
        found, refuted = window_question(problem, ii, share, seed, slack)
        asked = True
        say(f"mobility windows: II {ii} (+{slack} cycles) " + (
            f"mapped, length {found.length}" if found else
            "none within the horizon" if refuted else "not found"))
        if found is None and not refuted and near is not None and \
                budget.left() >= (1 + NEAR_SHARE) * need:
            found = ask_near(problem, ii, budget, seed, say, near)
        if found is not None or not refuted:
            return found, asked
    return None, asked


def ask_near(problem: CgraProblem, ii: int, budget: Budget, seed: int, say: Progress,
             near: CgraSchedule) -> CgraSchedule | None:
    """The neighbourhood question at ``ii`` (:func:`window_question` with every operation
    within :data:`NEAR_HOPS` of its PE in ``near``, a mapping at a larger II), with
    :data:`NEAR_SHARE` of what the full question needs, asked when the full question ran
    out of work: the layout of a mapping that routes is kept, its cycles are free
    (fix_fft_npb on the 4 x 4 mesh from II 9: II 6 mapped in 1.0 planned s, the full
    question 2.3, more than its share in the bisection; adpcm_decoder on the torus from II
    12: II 10 in 2.3 instead of 3.2). Its "none" proves nothing."""
    need = NEAR_SHARE * question_seconds(problem, ii)
    if need == 0.0 or need > budget.left():
        return None
    share = budget.share(max(LEAST_QUESTION, need))
    found, _ = window_question(problem, ii, share, seed, near=near)
    say(f"mobility windows: II {ii} near the mapping at II {near.ii} " +
        (f"mapped, length {found.length}" if found else "not found"))
    return found
