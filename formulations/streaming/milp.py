"""The Streaming Engine model on a linear backend (source 004), and ``.mps`` export.

Scope
-----
:func:`build_milp` emits the one description of
:func:`~formulations.streaming.model.build_description` (the CP model's variables, names and
families: windows, symmetry breaking, the sibling-latency floor and ``M2 capacity``
included) as a :class:`~formulations.solver.LinearModel` (HiGHS, SCIP, or written as
``.mps``): AllDifferent through one-hot binaries per tile and slot, the link-latency table
through one binary per row, min/max equalities through selector binaries, enforced rows by
big-M (:class:`~formulations.solver.ModelDescription`). :func:`solve_milp` solves one II and
decodes it with the CP path's :func:`~formulations.streaming.model.decode_schedule`;
:func:`sweep_milp` sweeps II up from the lower bound, as the CP sweep does (without its
proofs).

Caveats: MILPs stall on this disjunctive model where CP-SAT proves it: the CP model is the
default.
"""

from __future__ import annotations

from pathlib import Path

from formulations.solver import LinearModel, SolveResult, SolveSettings, SolveStatus
from formulations.streaming.model import build_description, decode_schedule
from formulations.streaming.problem import (StreamingInfeasible, StreamingProblem,
                                            StreamingSchedule, lower_bounds)

__all__ = ["build_milp", "solve_milp", "sweep_milp"]

def build_milp(problem: StreamingProblem, ii: int, horizon: int | None = None) -> LinearModel:
    """The model of :func:`~formulations.streaming.model.build_description` as a MILP
    (HiGHS/SCIP/.mps), for one II.

    Examples
    --------
    >>> from hardware import load_hardware
    >>> from model.graph import Graph, Node, Edge
    >>> g = Graph("chain", [Node("a"), Node("b")], [Edge("a", "b")])
    >>> from formulations.streaming.problem import problem_from_graph
    >>> m = build_milp(problem_from_graph(g, load_hardware("se16")), 1)
    >>> m.solve(backend="highs", time_limit=10).objective
    7.0
    """
    return build_description(problem, ii, horizon)[0].to_linear()[0]


def solve_milp(problem: StreamingProblem, ii: int, settings: SolveSettings
               ) -> tuple[SolveResult, StreamingSchedule | None]:
    """Solve :func:`build_milp` on ``settings.backend`` (a linear one) within
    ``settings.time_limit`` seconds and decode it."""
    d, variables = build_description(problem, ii)
    result = d.to_linear()[0].solve(backend=settings.backend, time_limit=settings.time_limit,
                                    seed=settings.seed)
    if not result.has_solution:
        return result, None
    status = "optimal" if result.status is SolveStatus.OPTIMAL else "feasible"
    return result, decode_schedule(problem, ii, variables, result, f"milp:{settings.backend}",
                                   status)


def sweep_milp(problem: StreamingProblem, settings: SolveSettings,
               warm: StreamingSchedule | None = None) -> StreamingSchedule:
    """Smallest II, then fewest cycles, on the linear backend ``settings.backend``: one MILP
    per II from the lower bound up (each written as ``.mps`` when ``settings.export_dir`` is
    set), ``settings.time_limit`` seconds each. ``warm`` is kept when no MILP finds a
    schedule. Raises :class:`StreamingInfeasible` when neither gives one.
    """
    results = []
    for ii in range(lower_bounds(problem)["ii"], problem.max_ii + 1):
        if settings.export_dir:
            build_milp(problem, ii).write_mps(
                str(Path(settings.export_dir) / f"streaming_{problem.name}_ii{ii}.mps"))
        result, sched = solve_milp(problem, ii, settings)
        results.append(result)
        if sched is not None:
            sched.results = results
            return sched
    if warm is not None:
        warm.results = results
        return warm
    raise StreamingInfeasible([f"no II <= {problem.max_ii} admits a mapping "
                               f"({settings.backend})"])
