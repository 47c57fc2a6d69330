"""HiGHS through ``highspy``: the ``"highs"`` backend, model files, and re-solving files.

The model goes in with one ``passModel`` call (row-wise sparse matrix). HiGHS keeps one global
thread scheduler per process, fixed at its first use; asking for another thread count later is an
error, so :func:`ensure_threads` resets the scheduler when the count changes.
"""

from __future__ import annotations

import os
import re

import highspy
import numpy as np

from .arrays import ModelArrays
from .interrupt import running
from .result import SolveStatus

__all__ = ["backend_solve", "write_model", "to_highs_lp", "new_highs", "run_highs",
           "ensure_threads", "HIGHS_NODES_PER_SECOND"]

#: Branch-and-bound nodes per planned second: HiGHS has no deterministic clock, so a planned
#: solve gets ``mip_max_nodes`` = planned seconds times this (a node count is the same on every
#: machine and load; the time limit is only the outer cap). Calibrated on this project's
#: 2-core machine: placement LNS windows, routing chunks and section models explored
#: 40-400 nodes per wall second (most windows and chunks end at the root).
HIGHS_NODES_PER_SECOND = 100
#: Simplex iterations per planned second, for the work a solve reports (not a limit): the
#: root LP of a model solved without branching costs time too. Calibrated with the nodes.
HIGHS_LP_ITERATIONS_PER_SECOND = 20_000

_MS = highspy.HighsModelStatus
_STOPPED = {_MS.kTimeLimit, _MS.kIterationLimit, _MS.kSolutionLimit, _MS.kInterrupt,
            _MS.kObjectiveBound, _MS.kObjectiveTarget, _MS.kMemoryLimit, _MS.kUnknown,
            getattr(_MS, "kHighsInterrupt", _MS.kInterrupt)}
_SOLUTION_FEASIBLE = 2  # HighsSolutionStatus kSolutionStatusFeasible
_scheduler_threads: int | None = None


def ensure_threads(threads: int) -> None:
    """Make the process-wide HiGHS scheduler use ``threads`` threads."""
    global _scheduler_threads
    if _scheduler_threads is not None and _scheduler_threads != threads:
        highspy.Highs.resetGlobalScheduler(True)
    _scheduler_threads = threads


def new_highs(time_limit: float, seed: int, threads: int, mip_gap: float | None,
              verbose: bool, options=None) -> highspy.Highs:
    """A silent ``Highs`` instance with the common options set, then ``options``
    (HiGHS option names)."""
    h = highspy.Highs()
    h.setOptionValue("output_flag", bool(verbose))
    h.setOptionValue("time_limit", float(time_limit))
    h.setOptionValue("random_seed", int(seed) % 2147483647)
    h.setOptionValue("threads", int(threads))
    if mip_gap is not None:
        h.setOptionValue("mip_rel_gap", float(mip_gap))
    for key, value in (options or {}).items():
        if h.setOptionValue(key, value) != highspy.HighsStatus.kOk:
            raise ValueError(f"HiGHS rejects option {key}={value!r} (unknown name or bad value)")
    return h


def to_highs_lp(a: ModelArrays,
                names: tuple[list[str], list[str]] | None = None) -> highspy.HighsLp:
    """The model as a ``highspy.HighsLp`` (row-wise matrix)."""
    lp = highspy.HighsLp()
    lp.model_name_ = a.name
    lp.num_col_, lp.num_row_ = a.n_vars, a.n_rows
    lp.col_cost_ = a.obj
    lp.col_lower_, lp.col_upper_ = a.col_lb, a.col_ub
    lp.row_lower_, lp.row_upper_ = a.row_lo, a.row_hi
    matrix = lp.a_matrix_
    matrix.format_ = highspy.MatrixFormat.kRowwise
    matrix.num_col_, matrix.num_row_ = a.n_vars, a.n_rows
    matrix.start_, matrix.index_, matrix.value_ = a.row_start, a.row_index, a.row_value
    lp.a_matrix_ = matrix
    if a.col_int.any():
        lp.integrality_ = [highspy.HighsVarType.kInteger if b else highspy.HighsVarType.kContinuous
                           for b in a.col_int]
    lp.sense_ = highspy.ObjSense.kMaximize if a.maximize else highspy.ObjSense.kMinimize
    lp.offset_ = a.obj_const
    lp.col_names_, lp.row_names_ = names if names is not None else (a.col_names, a.row_names)
    return lp


def backend_solve(a: ModelArrays, opts) -> dict:
    """Solve ``a`` with highspy; returns the raw outcome fields for ``backends.solve``."""
    h = new_highs(opts.time_limit, opts.seed, opts.threads, opts.mip_gap, opts.verbose,
                  opts.options)
    _check(h.passModel(to_highs_lp(a)), "passModel")
    if a.hint:
        _set_hint(h, a)
    outcome = run_highs(h, opts.threads, is_mip=bool(a.col_int.any()))
    outcome["hint_used"] = bool(a.hint)
    return outcome


def _set_hint(h: highspy.Highs, a: ModelArrays) -> None:
    if len(a.hint) == a.n_vars:
        sol = highspy.HighsSolution()
        sol.col_value = [a.hint[j] for j in range(a.n_vars)]
        sol.value_valid = True
        h.setSolution(sol)
    else:
        index = np.fromiter(a.hint.keys(), dtype=np.int32, count=len(a.hint))
        value = np.fromiter(a.hint.values(), dtype=np.float64, count=len(a.hint))
        h.setSolution(len(index), index, value)


def run_highs(h: highspy.Highs, threads: int, is_mip: bool) -> dict:
    """Run a loaded ``Highs`` and read status, objective, bound and column values."""
    ensure_threads(threads)
    with running(lambda: _cancel(h)):
        run_status = h.run()
    model_status = h.getModelStatus()
    info = h.getInfo()
    has_sol = info.primal_solution_status == _SOLUTION_FEASIBLE
    status = _map_status(model_status, has_sol)
    out: dict = {"status": status, "message": f"HiGHS: {h.modelStatusToString(model_status)}"}
    iterations = max(0, int(info.simplex_iteration_count))
    nodes = max(0, int(info.mip_node_count)) if is_mip else 0
    out["work"] = nodes / HIGHS_NODES_PER_SECOND + iterations / HIGHS_LP_ITERATIONS_PER_SECOND
    out["nodes"] = nodes if is_mip else None   # branch-and-bound nodes (benchmark tables)
    out["cut_short"] = model_status in (_MS.kTimeLimit, _MS.kInterrupt,
                                        getattr(_MS, "kHighsInterrupt", _MS.kInterrupt))
    if out["cut_short"]:
        out["message"] += " (cut short by the wall clock)"
    if run_status == highspy.HighsStatus.kError and status is SolveStatus.ERROR:
        out["message"] += " (run returned an error)"
    if model_status == _MS.kUnboundedOrInfeasible:
        out["ambiguous"] = True
    if model_status == _MS.kModelEmpty:  # no columns: the objective is the offset
        out.update(objective=h.getLp().offset_, bound=h.getLp().offset_, values=[])
    elif has_sol and status.has_solution:
        out["objective"] = info.objective_function_value
        out["values"] = list(h.getSolution().col_value)
        out["bound"] = info.mip_dual_bound if is_mip else (
            info.objective_function_value if status is SolveStatus.OPTIMAL else None)
    return out


def _cancel(h: highspy.Highs) -> None:
    """Stop ``h``'s solve, running or about to run. highspy ignores ``cancelSolve`` unless
    its interrupt callbacks are on, and those cost a Python call per simplex iteration
    (5-7 % of an LP's time, measured): they are turned on only here, when a stop is asked,
    and the solver reads them from its next iteration on."""
    if not h.HandleUserInterrupt:
        h.HandleUserInterrupt = True
    h.cancelSolve()


def _map_status(ms, has_sol: bool) -> SolveStatus:
    if ms in (_MS.kOptimal, _MS.kModelEmpty):
        return SolveStatus.OPTIMAL
    if ms in (_MS.kInfeasible, _MS.kUnboundedOrInfeasible):
        return SolveStatus.INFEASIBLE
    if ms == _MS.kUnbounded:
        return SolveStatus.UNBOUNDED
    if ms in _STOPPED:
        return SolveStatus.FEASIBLE if has_sol else SolveStatus.TIMEOUT_NO_SOLUTION
    return SolveStatus.ERROR


def _check(status, what: str) -> None:
    if status == highspy.HighsStatus.kError:
        raise RuntimeError(f"HiGHS {what} failed")


# ---------------------------------------------------------------------------------------------
# files
# ---------------------------------------------------------------------------------------------
def write_model(a: ModelArrays, path: str, fmt: str | None = None) -> None:
    """Write ``a`` as ``.mps`` or ``.lp`` (format from ``fmt`` or the suffix), atomically.

    LP files get LP-safe names (characters other than letters, digits, ``_`` and ``.`` become
    ``_``); MPS files keep the model's names.
    """
    fmt = (fmt or os.path.splitext(path)[1].lstrip(".")).lower()
    if fmt not in ("mps", "lp"):
        raise ValueError(f"{path}: unknown model file format {fmt!r} (use .mps or .lp)")
    names = (_lp_names(a.col_names), _lp_names(a.row_names)) if fmt == "lp" else None
    h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    _check(h.passModel(to_highs_lp(a, names)), "passModel")
    tmp = f"{path}.tmp{os.getpid()}.{fmt}"
    try:
        _check(h.writeModel(tmp), f"writeModel({path})")
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)


def _lp_names(names: list[str]) -> list[str]:
    out: list[str] = []
    seen: set[str] = set()
    for name in names:
        safe = re.sub(r"[^A-Za-z0-9_.]", "_", name)
        if not safe or safe[0].isdigit() or safe[0] == ".":
            safe = "_" + safe
        base, k = safe, 1
        while safe in seen:
            safe, k = f"{base}_{k}", k + 1
        seen.add(safe)
        out.append(safe)
    return out


def solve_file(path: str, opts) -> dict:
    """Read an ``.mps``/``.lp`` file with HiGHS and solve it."""
    h = new_highs(opts.time_limit, opts.seed, opts.threads, opts.mip_gap, opts.verbose,
                  opts.options)
    _check(h.readModel(str(path)), f"readModel({path})")
    lp = h.getLp()
    is_mip = any(t != highspy.HighsVarType.kContinuous for t in lp.integrality_)
    out = run_highs(h, opts.threads, is_mip)
    out["col_names"] = list(lp.col_names_)
    out["col_int"] = [t != highspy.HighsVarType.kContinuous for t in lp.integrality_] or None
    out["n_vars"], out["n_constraints"] = lp.num_col_, lp.num_row_
    return out
