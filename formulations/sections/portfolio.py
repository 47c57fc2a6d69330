"""The section model solved by a portfolio of seeds, as tasks that run anywhere.

One solve of the section model (:mod:`formulations.sections.model`) becomes
:data:`PORTFOLIO` independent solves with their own seeds, each planned an equal
share of the solve's work. The first solve, in seed order, that proves its answer
(``done``: optimal, or infeasible) is kept; when none does, the best objective
(ties: the earlier seed). Only the solves up to the one kept count against the
budget, so the answer and the budget left are the same whether the solves ran one
after another here (the rest skipped once one proves its answer) or at once on
workers: each is a pure function of its :class:`CutSolve` (the model is rebuilt
where it runs, the wall caps travel as epoch seconds), and a caller may hand them
to any ``run_all`` (e.g. ``pipeline.cluster.run_tasks``). On two workers a cut
then takes about half the wall time of one process, with the same cut.

Examples
--------
>>> import time
>>> from formulations.sections.problem import Capacity
>>> from formulations.solver import Budget
>>> from model.graph import Graph, Node, Edge
>>> g = Graph("g", [Node("a", pcu=1), Node("b", pcu=1)], [Edge("a", "b", bytes=8)])
>>> job = CutSolve(g, Capacity(pcu=1, pmu=1, total=2, agcu=1), 2, {}, (), None, "cp-sat",
...                seconds=1.0, seed=0, wall=time.time() + 30)
>>> solved = solve_portfolio(job, Budget(1.0, time.monotonic() + 30), proven)
>>> solved.assignment, solved.result.status.name
({'a': 0, 'b': 1}, 'OPTIMAL')
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field, replace
from typing import Any, Callable, Sequence

from formulations.sections.costs import CutCosts
from formulations.sections.model import build_section_model, decode_assignment
from formulations.sections.problem import BufferDemand, Capacity, Scale
from formulations.solver import Budget, SolveResult, from_epoch, solve_planned
from model.graph import Graph

__all__ = ["PORTFOLIO", "CutSolve", "CutSolved", "RunAll", "solve_cut", "solve_portfolio",
           "solve_each", "in_order", "proven", "found", "never"]

#: Seeds per solve of the section model. A constant of the plan, never the number of
#: workers: the answer must not depend on where the solves run.
PORTFOLIO = 2
#: Planned seconds of building a section model, per column and nonzero: bert_L-12 training's
#: model at 30 sections (51,829 columns, 462,515 nonzeros) took 4.3 s to build on this
#: project's 2-core machine at load 2.8 (uncharged, its two seeds' first solves planned 0.7 s
#: each took 6.2 and 4.4 s of wall time).
BUILD_SECONDS_PER_NONZERO = 4e-6

#: ``run_all(function, tasks, done)`` -> ``[function(*task) for task in tasks]`` in task
#: order, wherever they run, up to the first result ``done`` accepts at least (the tasks
#: after it may be left out); or None to leave them to this process.
RunAll = Callable[[Callable, Sequence[tuple], Callable[[Any], bool]], list]


@dataclass(frozen=True, eq=False)
class CutSolve:
    """Everything one solve of the section model reads."""

    graph: Graph
    cap: Capacity
    count: int                                  # sections
    scales: dict[int, Scale]
    separate: tuple[tuple[str, str], ...]
    hint: dict[str, int] | None                 # a cut to start from (node -> section)
    backend: str
    seconds: float                              # planned seconds of solver work
    seed: int
    wall: float                                 # the wall-clock cap, epoch seconds
    buffers: BufferDemand = field(default_factory=dict)   # stage-buffer PMUs per edge
    costs: CutCosts | None = None               # the time objective (None: bytes across cuts)
    pack: bool = False                          # units towards the first sections (no costs)


@dataclass
class CutSolved:
    """A solve's result, its cut (None without a solution), the traffic its bound
    proves (bytes), the planned seconds it spent, and the wall seconds it took where it
    ran (its model's build included: what a worker is busy with)."""

    result: SolveResult
    assignment: dict[str, int] | None
    bound_bytes: float | None
    spent: float
    cut_short: bool
    wall: float = 0.0
    #: Planned seconds of building its model (:data:`BUILD_SECONDS_PER_NONZERO`).
    build: float = 0.0


def proven(solved: CutSolved) -> bool:
    """Optimal or infeasible: no other seed can do better."""
    return solved.result.status.name in ("OPTIMAL", "INFEASIBLE")


def found(solved: CutSolved) -> bool:
    """A cut with this section count exists or cannot (the fewest-sections question)."""
    return solved.assignment is not None or solved.result.status.name == "INFEASIBLE"


def solve_cut(task: CutSolve) -> CutSolved:
    """Build and solve the section model of ``task`` (in whichever process runs it)."""
    started = time.perf_counter()
    solved = _solve_built(task, *_built(task))
    solved.wall = time.perf_counter() - started
    return solved


def _built(task: CutSolve) -> tuple[Any, Any]:
    """The section model of ``task``, hinted, and its ``x``."""
    model, x, hint_for = build_section_model(task.graph, task.cap, task.count, task.scales,
                                             list(task.separate), task.buffers, task.costs,
                                             task.pack)
    if task.hint is not None:
        model.set_hint(hint_for(task.hint))
    return model, x


def _solve_built(task: CutSolve, model: Any, x: Any) -> CutSolved:
    wall = from_epoch(task.wall)
    budget = Budget(task.seconds, wall)
    arrays = model.to_arrays()
    result = solve_planned(arrays, task.backend, budget, seed=task.seed)
    assignment = decode_assignment(task.graph, x, task.count, result) \
        if result.has_solution else None
    bound = model.bytes_of_bound(result.bound) if result.bound is not None else None
    build = BUILD_SECONDS_PER_NONZERO * (arrays.n_vars + len(arrays.row_index))
    return CutSolved(result, assignment, bound, budget.spent, budget.cut_short, build=build)


def in_order(function: Callable, tasks: Sequence[tuple],
             done: Callable[[Any], bool] | None = None) -> list:
    """``function(*task)`` for each task here, one after another, stopping after the first
    result ``done`` accepts (the tasks after it are left out)."""
    results = []
    for task in tasks:
        results.append(function(*task))
        if (done or never)(results[-1]):
            break
    return results


def solve_portfolio(job: CutSolve, budget: Budget, done: Callable[[CutSolved], bool],
                    run_all: RunAll | None = None, record: list | None = None) -> CutSolved:
    """``job`` solved by :data:`PORTFOLIO` seeds sharing its planned seconds (see the module
    docstring); the work of the solves kept in count is charged to ``budget``, and their
    wall seconds are appended to ``record`` as one batch (when given)."""
    share = job.seconds / PORTFOLIO
    tasks = [(replace(job, seconds=share, seed=(job.seed + k) % 2**31),)
             for k in range(PORTFOLIO)]
    solved = run_all(solve_cut, tasks, done) if run_all else None
    if solved is None:        # here, one seed after another, on one model build
        started = time.perf_counter()
        model, x = _built(job)
        build = time.perf_counter() - started
        solved = in_order(lambda task: _timed(_solve_built, task, model, x), tasks, done)
        for s in solved:      # each seed on a worker builds its own model
            s.wall += build
    counted = next((solved[:k + 1] for k, s in enumerate(solved) if done(s)), solved)
    _charge(budget, counted)
    budget.spend(counted[0].build)     # one build here; the seeds on workers build at once
    if record is not None:
        record.append([s.wall for s in counted])
    if done(counted[-1]):
        return counted[-1]
    with_cut = [s for s in counted if s.assignment is not None]
    return min(with_cut, key=lambda s: s.result.objective) if with_cut else counted[0]


def solve_each(jobs: Sequence[CutSolve], budget: Budget,
               run_all: RunAll | None = None, record: list | None = None) -> list[CutSolved]:
    """Independent solves, one seed each (the windows of a sweep that share no section),
    at once where ``run_all`` runs them; all are charged to ``budget``, and their wall
    seconds appended to ``record`` as one batch (when given)."""
    tasks = [(job,) for job in jobs]
    solved = run_all(solve_cut, tasks, never) if run_all else None
    if solved is None:
        solved = in_order(solve_cut, tasks)
    _charge(budget, solved)
    budget.spend(sum(s.build for s in solved))
    if record is not None:
        record.append([s.wall for s in solved])
    return solved


def _timed(function: Callable, *args) -> CutSolved:
    started = time.perf_counter()
    solved = function(*args)
    solved.wall = time.perf_counter() - started
    return solved


def never(_: Any) -> bool:
    """The ``done`` that accepts no result: every task of the batch runs."""
    return False


def _charge(budget: Budget, solved: list[CutSolved]) -> None:
    for s in solved:
        budget.spend(s.spent)
        if s.cut_short:
            budget.mark_cut()
