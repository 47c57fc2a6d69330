"""The CGRA model on a linear backend, and ``.mps`` export.

Scope
-----
:func:`build_milp` emits the one description of :func:`formulations.cgra.model.build_description`
at one II and horizon as a :class:`~formulations.solver.LinearModel` over the same binaries
(``on``, ``at``, ``occ``, ``mv``, same names, same families): ``C1 slot`` through product
binaries ``x >= on[v,p] + sum(at[v,c], c = s mod II) - 1`` with ``sum_v x <= 1``; every clause
as ``sum(literals) >= 1``; ``C5``/``C6`` capacities as the same sums; objective the length
(the emitters: :class:`~formulations.solver.ModelDescription`).
:func:`sweep_milp` sweeps the II up from the lower bound on ``settings.backend`` (HiGHS, SCIP,
...) and writes each model as ``.mps`` when ``settings.export_dir`` is set.

Caveats: MILP solvers stall on this disjunctive model where CP-SAT proves it; the CP model is
the default.

Examples
--------
>>> from hardware import load_hardware
>>> from model.graph import Graph, Node, Edge
>>> from formulations.cgra.problem import problem_from_graph
>>> g = Graph("pair", [Node("a", op="LOAD"), Node("b", op="ADD")], [Edge("a", "b")])
>>> p = problem_from_graph(g, load_hardware("cgra4x4"))
>>> from formulations.solver import SolveSettings
>>> result, sched = solve_milp(p, 1, 3, SolveSettings(backend="highs", time_limit=20))
>>> result.status.name, sched.length      # II 1: one slot per PE, so b waits one hop
('OPTIMAL', 3)
"""

from __future__ import annotations

from pathlib import Path

from formulations.cgra.model import FullVars, build_description, decode_full
from formulations.cgra.problem import (CgraInfeasible, CgraProblem, CgraSchedule, lower_bounds,
                                       precheck)
from formulations.solver import LinearModel, SolveResult, SolveSettings

__all__ = ["build_milp", "solve_milp", "sweep_milp"]


def build_milp(problem: CgraProblem, ii: int, horizon: int) -> tuple[LinearModel, FullVars]:
    """The MILP at ``ii`` and ``horizon`` and its variables (the CP model's description)."""
    d, fv = build_description(problem, ii, horizon)
    m, fv.emitted = d.to_linear()
    return m, fv


def solve_milp(problem: CgraProblem, ii: int, horizon: int, settings: SolveSettings
               ) -> tuple[SolveResult, CgraSchedule | None]:
    """Solve :func:`build_milp` on ``settings.backend`` (a linear one) within
    ``settings.time_limit`` seconds and decode it."""
    m, fv = build_milp(problem, ii, horizon)
    result = m.solve(backend=settings.backend, time_limit=settings.time_limit, seed=settings.seed)
    if not result.has_solution:
        return result, None
    return result, decode_full(problem, ii, fv, result, method=f"milp:{settings.backend}")


def sweep_milp(problem: CgraProblem, settings: SolveSettings,
               warm: CgraSchedule | None = None) -> CgraSchedule:
    """Smallest II on ``settings.backend``: one MILP per II from the lower bound (horizon: the
    critical path + II + 2 x diameter, or the warm start's length at its II), each written as
    ``.mps`` when ``settings.export_dir`` is set; each until the run's deadline
    (``settings.budget().wall_left()``). Keeps
    ``warm`` when no MILP finds a shorter mapping at its II or below."""
    bounds = lower_bounds(problem)
    reasons = precheck(problem)
    if reasons:
        raise CgraInfeasible(reasons)
    top = warm.ii if warm is not None else problem.max_ii
    results = []
    for ii in range(bounds["route_ii"], top + 1):
        horizon = bounds["critical_path"] + ii + 2 * problem.diameter
        if warm is not None and warm.ii == ii:
            horizon = warm.length
        if settings.export_dir:
            build_milp(problem, ii, horizon)[0].write_mps(
                str(Path(settings.export_dir) / f"cgra_{problem.name}_ii{ii}.mps"))
        result, sched = solve_milp(problem, ii, horizon,
                                   settings.with_time(settings.budget().wall_left()))
        results.append(result)
        if sched is not None:
            sched.results, sched.ii_bound = results, bounds["route_ii"]
            sched.status = "feasible"
            return sched
    if warm is not None:
        warm.results = results
        return warm
    raise CgraInfeasible([f"no II <= {problem.max_ii} admits a mapping ({settings.backend})"])
