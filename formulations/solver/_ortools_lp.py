"""SCIP and CBC through OR-Tools ``pywraplp``: the ``"scip"`` and ``"cbc"`` backends.

Also reads ``.mps`` files with OR-Tools' own parser and solves them with SCIP
(:func:`solve_mps_file_scip`), the second solver of the MPS round trip.

Caveats
-------
* The seed reaches SCIP as ``randomization/randomseedshift``; CBC runs single-threaded and is
  deterministic without one.
* Hints go in with ``SetHint``; CBC through pywraplp ignores them (reported in the message).
* OR-Tools' LP-format reader does not read HiGHS-written ``.lp`` files; use ``.mps`` for SCIP.
"""

from __future__ import annotations

from ortools.linear_solver import pywraplp

from .arrays import ModelArrays
from .interrupt import running
from .result import SolveStatus

__all__ = ["scip_solve", "cbc_solve", "solver_available", "solve_mps_file_scip"]

_STATUS = {
    pywraplp.Solver.OPTIMAL: SolveStatus.OPTIMAL,
    pywraplp.Solver.FEASIBLE: SolveStatus.FEASIBLE,
    pywraplp.Solver.INFEASIBLE: SolveStatus.INFEASIBLE,
    pywraplp.Solver.UNBOUNDED: SolveStatus.UNBOUNDED,
    pywraplp.Solver.ABNORMAL: SolveStatus.ERROR,
    pywraplp.Solver.MODEL_INVALID: SolveStatus.ERROR,
    pywraplp.Solver.NOT_SOLVED: SolveStatus.TIMEOUT_NO_SOLUTION,
}
_CODE_NAMES = {code: name for name in ("OPTIMAL", "FEASIBLE", "INFEASIBLE", "UNBOUNDED", "ABNORMAL",
                                       "MODEL_INVALID", "NOT_SOLVED")
               for code in [getattr(pywraplp.Solver, name)]}


def solver_available(solver_id: str) -> bool:
    """True when ``pywraplp.Solver.CreateSolver(solver_id)`` works here."""
    try:
        return pywraplp.Solver.CreateSolver(solver_id) is not None
    except Exception:  # noqa: BLE001 - any failure means "not available"
        return False


def scip_solve(a: ModelArrays, opts) -> dict:
    """Solve with SCIP through pywraplp."""
    return _solve(a, opts, "SCIP", seed_param="randomization/randomseedshift = {seed}")


def cbc_solve(a: ModelArrays, opts) -> dict:
    """Solve with CBC through pywraplp."""
    return _solve(a, opts, "CBC", seed_param=None)


def _solve(a: ModelArrays, opts, solver_id: str, seed_param: str | None) -> dict:
    solver = pywraplp.Solver.CreateSolver(solver_id)
    if solver is None:
        raise RuntimeError(f"OR-Tools cannot create a {solver_id} solver here")
    xs = _build(solver, a)
    _set_options(solver, opts, seed_param)
    hint_used = bool(a.hint) and solver_id != "CBC"
    if hint_used:
        solver.SetHint([xs[j] for j in a.hint], list(a.hint.values()))
    params = pywraplp.MPSolverParameters()
    if opts.mip_gap is not None:
        params.SetDoubleParam(pywraplp.MPSolverParameters.RELATIVE_MIP_GAP, float(opts.mip_gap))
    with running(solver.InterruptSolve):
        code = solver.Solve(params)
    return _read(solver, xs, code, solver_id, hint_used, is_mip=bool(a.col_int.any()))


def _build(solver: pywraplp.Solver, a: ModelArrays) -> list:
    inf = solver.infinity()
    xs = [solver.Var(_clip(lb, inf), _clip(ub, inf), bool(b), name)
          for lb, ub, b, name in zip(a.col_lb.tolist(), a.col_ub.tolist(), a.col_int.tolist(),
                                     a.col_names)]
    start, index, value = a.row_start.tolist(), a.row_index.tolist(), a.row_value.tolist()
    for r, (lo, hi, name) in enumerate(zip(a.row_lo.tolist(), a.row_hi.tolist(), a.row_names)):
        ct = solver.RowConstraint(_clip(lo, inf), _clip(hi, inf), name)
        for k in range(start[r], start[r + 1]):
            ct.SetCoefficient(xs[index[k]], value[k])
    objective = solver.Objective()
    for j, c in enumerate(a.obj.tolist()):
        if c:
            objective.SetCoefficient(xs[j], c)
    objective.SetOffset(a.obj_const)
    if a.maximize:
        objective.SetMaximization()
    else:
        objective.SetMinimization()
    return xs


def _clip(x: float, inf: float) -> float:
    return max(-inf, min(inf, x))


def _set_options(solver: pywraplp.Solver, opts, seed_param: str | None) -> None:
    solver.SetTimeLimit(max(1, int(opts.time_limit * 1000)))
    solver.SetNumThreads(int(opts.threads))
    seed = [seed_param.format(seed=int(opts.seed))] if seed_param is not None else []
    text = _parameter_text(seed, opts.options)
    if text and not solver.SetSolverSpecificParametersAsString(text):
        raise ValueError(f"{solver.SolverVersion()} rejects the parameters {text!r}")


def _parameter_text(lines: list[str], options) -> str:
    """``lines`` and ``options`` as a solver parameter file (``key = value`` per line)."""
    lines = lines + [f"{key} = {value}" for key, value in options.items()]
    return "\n".join(lines) + "\n" if lines else ""
    if opts.verbose:
        solver.EnableOutput()
    else:
        solver.SuppressOutput()


def _read(solver: pywraplp.Solver, xs: list, code: int, solver_id: str, hint_used: bool,
          is_mip: bool) -> dict:
    status = _STATUS.get(code, SolveStatus.ERROR)
    out: dict = {"status": status, "hint_used": hint_used,
                 "message": f"{solver_id} (pywraplp): {_CODE_NAMES.get(code, code)}"}
    if is_mip:
        out["nodes"] = int(solver.nodes())   # branch-and-bound nodes (benchmark tables)
    if status.has_solution:
        out["objective"] = solver.Objective().Value()
        out["values"] = [x.solution_value() for x in xs]
        out["bound"] = solver.Objective().BestBound() if is_mip else (
            out["objective"] if status is SolveStatus.OPTIMAL else None)
    return out


def solve_mps_file_scip(path: str, opts) -> dict:
    """Read an ``.mps`` file with OR-Tools' parser and solve it with SCIP (``model_builder``)."""
    from ortools.linear_solver.python import model_builder as mb

    model = mb.Model()
    if not model.import_from_mps_file(str(path)):
        raise RuntimeError(f"{path}: OR-Tools could not read the MPS file")
    solver = mb.Solver("scip")
    solver.set_time_limit_in_seconds(float(opts.time_limit))
    solver.set_solver_specific_parameters(_parameter_text(
        [f"randomization/randomseedshift = {int(opts.seed)}"], opts.options))
    solver.enable_output(bool(opts.verbose))
    code = solver.solve(model)
    status = {mb.SolveStatus.OPTIMAL: SolveStatus.OPTIMAL,
              mb.SolveStatus.FEASIBLE: SolveStatus.FEASIBLE,
              mb.SolveStatus.INFEASIBLE: SolveStatus.INFEASIBLE,
              mb.SolveStatus.UNBOUNDED: SolveStatus.UNBOUNDED,
              mb.SolveStatus.NOT_SOLVED: SolveStatus.TIMEOUT_NO_SOLUTION
              }.get(code, SolveStatus.ERROR)
    variables = list(model.get_variables())
    out: dict = {"status": status, "message": f"SCIP (model_builder) {code.name}",
                 "col_names": [v.name for v in variables], "n_vars": model.num_variables,
                 "col_int": [bool(v.is_integral) for v in variables],
                 "n_constraints": model.num_constraints}
    if status.has_solution:
        out["objective"] = solver.objective_value
        out["bound"] = solver.best_objective_bound
        out["values"] = [solver.value(v) for v in variables]
    return out
