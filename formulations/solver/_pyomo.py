"""Backends through Pyomo: ``"pyomo-highs"`` (``appsi_highs``) and ``"pyomo:<solver>"``.

The :class:`~formulations.solver.linear.LinearModel` becomes a Pyomo ``ConcreteModel`` (one
indexed variable ``x``, one indexed constraint ``c``), solved through Pyomo's legacy
``SolverFactory`` interface, so any MILP solver Pyomo can run is reachable: which ones are
available is found at run time (:func:`pyomo_solvers`) among the usual MILP solvers.

Caveats
-------
* Seed, threads and gap reach the solver through its own option names, known for HiGHS, Gurobi,
  CPLEX, CBC, SCIP and GLPK; other solvers get only the time limit.
* The hint goes in as variable values with ``warmstart=True`` when the solver is
  warm-start capable (not GLPK).
* Building a Pyomo model is slow for large models; prefer ``highs`` there.
"""

from __future__ import annotations

import functools
import math

from ._highs import ensure_threads
from .arrays import ModelArrays
from .result import SolveStatus

__all__ = ["pyomo_solve", "pyomo_solvers", "pyomo_available", "CANDIDATES"]

#: MILP solvers looked for at run time (Pyomo names).
CANDIDATES = ("glpk", "cbc", "gurobi", "gurobi_direct", "cplex", "cplex_direct", "scip",
              "xpress", "xpress_direct", "mosek_direct", "appsi_cbc", "appsi_gurobi",
              "appsi_cplex")


@functools.lru_cache(maxsize=None)
def pyomo_available(solver: str) -> bool:
    """True when Pyomo can run ``solver`` here (cached per process)."""
    try:
        import pyomo.environ  # noqa: F401 - registers the solver plugins
        from pyomo.opt import SolverFactory

        return bool(SolverFactory(solver).available(exception_flag=False))
    except Exception:  # noqa: BLE001 - unavailable for any reason
        return False


def pyomo_solvers() -> list[str]:
    """The candidate MILP solvers Pyomo finds available here, in :data:`CANDIDATES` order."""
    return [s for s in CANDIDATES if pyomo_available(s)]


def _options(solver: str, opts) -> dict:
    family = solver.removeprefix("appsi_").split("_")[0]
    gap = opts.mip_gap
    table = {
        "highs": {"random_seed": opts.seed, "threads": opts.threads, "mip_rel_gap": gap},
        "gurobi": {"Seed": opts.seed, "Threads": opts.threads, "MIPGap": gap,
                   "TimeLimit": opts.time_limit},
        "cplex": {"randomseed": opts.seed, "threads": opts.threads, "mipgap": gap},
        "cbc": {"randomCbcSeed": max(1, opts.seed), "threads": opts.threads, "ratioGap": gap},
        "scip": {"randomization/randomseedshift": opts.seed, "limits/gap": gap},
        "glpk": {"mipgap": gap},
    }
    common = {k: v for k, v in table.get(family, {}).items() if v is not None}
    return common | dict(opts.options)


def pyomo_solve(a: ModelArrays, opts, solver: str) -> dict:
    """Solve ``a`` through Pyomo with ``solver`` (a Pyomo solver name)."""
    import pyomo.environ as pyo
    from pyomo.opt import SolverFactory

    if len(a.row_index) == 0 and not a.obj.any():
        return _trivial(a)
    model, empty_violation = _build(a)
    if empty_violation is not None:
        return {"status": SolveStatus.INFEASIBLE, "hint_used": False,
                "message": f"constraint {empty_violation!r} has no variables and cannot hold"}
    opt = SolverFactory(solver)
    kwargs = {"load_solutions": False, "tee": bool(opts.verbose),
              "timelimit": float(opts.time_limit), "options": _options(solver, opts)}
    hint_used = bool(a.hint) and opt.warm_start_capable()
    if hint_used:
        for j, val in a.hint.items():
            model.x[j].set_value(val, skip_validation=True)
        kwargs["warmstart"] = True
    if "highs" in solver:
        ensure_threads(opts.threads)
    results = opt.solve(model, **kwargs)
    out = _read(model, results, a, pyo)
    out["hint_used"] = hint_used
    return out


def _build(a: ModelArrays):
    """The Pyomo model, and the name of an empty constraint that cannot hold (or None)."""
    import pyomo.environ as pyo
    from pyomo.core.expr.numeric_expr import LinearExpression

    m = pyo.ConcreteModel(name=a.name)
    m.x = pyo.Var(range(a.n_vars), within=pyo.Reals)
    for j, (lb, ub, integer) in enumerate(zip(a.col_lb.tolist(), a.col_ub.tolist(),
                                              a.col_int.tolist())):
        var = m.x[j]
        if integer:
            var.domain = pyo.Integers
        var.setlb(None if math.isinf(lb) else lb)
        var.setub(None if math.isinf(ub) else ub)
    start, index, value = a.row_start.tolist(), a.row_index.tolist(), a.row_value.tolist()
    m.c = pyo.ConstraintList()
    for r, (lo, hi) in enumerate(zip(a.row_lo.tolist(), a.row_hi.tolist())):
        cols = index[start[r]:start[r + 1]]
        if not cols:
            if not lo <= 1e-9 or not hi >= -1e-9:
                return m, a.row_names[r]
            continue
        expr = LinearExpression(constant=0.0, linear_coefs=value[start[r]:start[r + 1]],
                                linear_vars=[m.x[j] for j in cols])
        if lo == hi:
            m.c.add(expr == lo)
        else:
            m.c.add((None if math.isinf(lo) else lo, expr, None if math.isinf(hi) else hi))
    cols = [j for j, c in enumerate(a.obj.tolist()) if c]
    obj = LinearExpression(constant=a.obj_const, linear_coefs=[float(a.obj[j]) for j in cols],
                           linear_vars=[m.x[j] for j in cols])
    m.obj = pyo.Objective(expr=obj, sense=pyo.maximize if a.maximize else pyo.minimize)
    return m, None


def _read(model, results, a: ModelArrays, pyo) -> dict:
    from pyomo.opt import TerminationCondition as TC

    tc = results.solver.termination_condition
    has_sol = len(results.solution) > 0 and tc not in (TC.infeasible, TC.infeasibleOrUnbounded)
    status = _map(tc, has_sol, TC)
    out: dict = {"status": status, "message": f"Pyomo termination: {tc}",
                 "ambiguous": tc == TC.infeasibleOrUnbounded}
    if status.has_solution:
        from pyomo.opt import SolverStatus
        results.solver.status = SolverStatus.ok  # a time-limited solution is still a solution
        model.solutions.load_from(results)
        out["values"] = [_value(model.x[j], a, j) for j in range(a.n_vars)]
        out["objective"] = float(pyo.value(model.obj))
        bound = results.problem.upper_bound if a.maximize else results.problem.lower_bound
        out["bound"] = _finite(bound)
    return out


def _trivial(a: ModelArrays) -> dict:
    """A model without variables in any constraint or the objective (Pyomo cannot send it)."""
    lo = [math.ceil(v - 1e-9) if i else v for v, i in zip(a.col_lb.tolist(), a.col_int.tolist())]
    hi = [math.floor(v + 1e-9) if i else v for v, i in zip(a.col_ub.tolist(), a.col_int.tolist())]
    empty_ok = all(lo_r <= 1e-9 and hi_r >= -1e-9 for lo_r, hi_r in zip(a.row_lo, a.row_hi))
    if not empty_ok or any(l > h for l, h in zip(lo, hi)):
        return {"status": SolveStatus.INFEASIBLE, "message": "trivially infeasible (bounds)"}
    values = [min(max(0.0, l), h) for l, h in zip(lo, hi)]
    return {"status": SolveStatus.OPTIMAL, "objective": a.obj_const, "bound": a.obj_const,
            "values": values, "message": "trivial model solved without Pyomo"}


def _map(tc, has_sol: bool, TC) -> SolveStatus:
    if tc in (TC.optimal, TC.globallyOptimal, TC.locallyOptimal):
        return SolveStatus.OPTIMAL
    if tc in (TC.infeasible, TC.infeasibleOrUnbounded):
        return SolveStatus.INFEASIBLE
    if tc == TC.unbounded:
        return SolveStatus.UNBOUNDED
    if tc in (TC.error, TC.solverFailure, TC.internalSolverError, TC.invalidProblem,
              TC.licensingProblems):
        return SolveStatus.ERROR
    return SolveStatus.FEASIBLE if has_sol else SolveStatus.TIMEOUT_NO_SOLUTION


def _value(var, a: ModelArrays, j: int) -> float:
    if var.value is not None:
        return float(var.value)
    lb = a.col_lb[j]  # a variable in no constraint nor objective: any value in bounds is fine
    return 0.0 if lb <= 0 <= a.col_ub[j] else float(lb if math.isfinite(lb) else a.col_ub[j])


def _finite(x) -> float | None:
    try:
        x = float(x)
    except (TypeError, ValueError):
        return None
    return x if math.isfinite(x) else None
