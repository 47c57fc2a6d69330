"""Solving and exporting CP-SAT models (models with NoOverlap, AllDifferent, ...).

Formulations that need CP constraints build an OR-Tools
:class:`~ortools.sat.python.cp_model.CpModel`
themselves and hand it to :func:`solve_cp_model`, which returns the same
:class:`~formulations.solver.result.SolveResult` as every other solve. :func:`export_cp_model`
writes the model as CP-SAT protobuf text (``.pb.txt``), readable with
``text_format.Parse(text, cp_model_pb2.CpModelProto())`` and by :func:`load_cp_model`.

The hint (the model's own ``AddHint`` values, or ``hint=``) is checked before solving, in Python,
against variable domains and every constraint whose variables are all hinted (linear, bool_or,
bool_and, at_most_one, exactly_one, bool_xor, all_different, interval, no_overlap; with
enforcement literals). Constraints of other types are checked with one extra CP-SAT call with
all variables fixed when the hint is complete. An infeasible hint is reported in
``SolveResult.hint_status`` / ``hint_violations``, and still given to CP-SAT, which may repair it.

Caveats
-------
* Deterministic for a fixed seed and ``workers=1``; with more workers ``interleave_search`` is
  switched on so that the search stays deterministic (it may then be slower). A run cut by the time
  limit is only as deterministic as the wall clock: budget searches in CP-SAT's deterministic time
  (``deterministic_time``, :data:`CP_SAT_WORK_PER_SECOND` units per planned second) and keep the
  time limit as the outer cap; a result the wall clock stopped first is marked
  (:func:`was_cut_short`).
"""

from __future__ import annotations

import os
import time
from typing import Any, Iterable, Mapping

from ortools.sat.python import cp_model

from .arrays import HintCheck
from .interrupt import running
from .result import SolveResult, SolveStatus, relative_gap

__all__ = ["solve_cp_model", "export_cp_model", "load_cp_model", "check_cp_hint", "run_cp_sat",
           "CP_SAT_WORK_PER_SECOND", "was_cut_short", "work_of", "annotate"]

#: CP-SAT deterministic time units per planned second of one worker. Calibrated on this
#: project's 2-core machine (one worker, the other core busy): the placement LNS windows of
#: the generated 32-96-node sections and bert_l-3_training section 0 (plasticine, sn10)
#: advanced CP-SAT's deterministic clock by 0.4-0.8 units per wall second, the site model
#: of the 16-node generated section by 0.6, the section models of resnet50_inference (2,400-
#: 3,300 variables) by 0.33-0.42; 0.4 keeps most planned solves within their seconds.
CP_SAT_WORK_PER_SECOND = 0.4


def annotate(result: SolveResult, work: float | None, cut_short: bool) -> SolveResult:
    """Attach the deterministic work a solve used (in planned seconds) and whether the wall
    clock stopped it before its work limit (read back with :func:`work_of` and
    :func:`was_cut_short`)."""
    object.__setattr__(result, "work", work)
    object.__setattr__(result, "cut_short", bool(cut_short))
    return result


def work_of(result: SolveResult) -> float | None:
    """The planned seconds of deterministic work ``result``'s solve used (None: unknown)."""
    return getattr(result, "work", None)


def was_cut_short(result: SolveResult) -> bool:
    """Whether the wall clock (time limit, deadline or an interrupt) stopped ``result``'s
    solve before it was proven or its deterministic work limit was reached."""
    return bool(getattr(result, "cut_short", False))

_CP_STATUS = {
    cp_model.OPTIMAL: SolveStatus.OPTIMAL,
    cp_model.FEASIBLE: SolveStatus.FEASIBLE,
    cp_model.INFEASIBLE: SolveStatus.INFEASIBLE,
    cp_model.UNKNOWN: SolveStatus.TIMEOUT_NO_SOLUTION,
    cp_model.MODEL_INVALID: SolveStatus.ERROR,
}


def solve_cp_model(model: cp_model.CpModel, time_limit: float = 10.0, seed: int = 0,
                   workers: int = 1, hint: Mapping[Any, int] | None = None,
                   variables: Iterable[Any] | Mapping[str, Any] | None = None,
                   mip_gap: float | None = None, verbose: bool = False,
                   name: str | None = None,
                   params: Mapping[str, Any] | None = None,
                   deterministic_time: float | None = None) -> SolveResult:
    """Solve a CP-SAT model into a :class:`SolveResult`.

    Parameters
    ----------
    model : CpModel
        The model; it is not modified (a hint is added to a clone).
    time_limit : float
        Seconds.
    seed : int
        CP-SAT ``random_seed``.
    workers : int, default 1
        CP-SAT ``num_workers``.
    hint : mapping of IntVar to int, optional
        Warm start; replaces the model's own hint.
    variables : iterable of IntVar, or mapping of name to IntVar, optional
        Whose values to report; default every named variable of the model.
    mip_gap : float, optional
        ``relative_gap_limit``.
    verbose : bool
        Log the search.
    name : str, optional
        Model name for the result (default the model's name).
    params : mapping of str to value, optional
        Further CP-SAT parameters by field name (e.g. ``{"linearization_level": 0}``).
    deterministic_time : float, optional
        CP-SAT ``max_deterministic_time`` (its own work units; planned seconds times
        :data:`CP_SAT_WORK_PER_SECOND`): the search's budget, while ``time_limit`` is only
        the wall-clock cap. Same seed, same work limit, same answer unless the cap stops it
        first (:func:`was_cut_short`).

    Returns
    -------
    SolveResult
        ``backend="cp-sat"``; errors become status ERROR, never an exception.

    Examples
    --------
    >>> from ortools.sat.python import cp_model
    >>> m = cp_model.CpModel()
    >>> x = [m.new_int_var(0, 2, f"x{i}") for i in range(3)]
    >>> _ = m.add_all_different(x)
    >>> m.maximize(x[0] + 2 * x[1])
    >>> r = solve_cp_model(m, time_limit=5, hint={x[0]: 0, x[1]: 2, x[2]: 1})
    >>> r.status.name, r.objective, r.values["x1"], r.hint_status
    ('OPTIMAL', 5.0, 2, 'accepted')
    """
    start = time.perf_counter()
    hinted = model
    try:
        if hint is not None:
            hinted = model.clone()
            hinted.clear_hints()
            hinted.proto.solution_hint.vars.extend(_index(v) for v in hint)
            hinted.proto.solution_hint.values.extend(int(val) for val in hint.values())
        check = check_cp_hint(hinted, time_limit=min(1.0, time_limit))
        out = run_cp_sat(hinted, time_limit, seed, workers, mip_gap, verbose, variables, params,
                         deterministic_time)
    except Exception as exc:  # noqa: BLE001 - a failed solve is a result, not a crash
        check = HintCheck("none")
        out = {"status": SolveStatus.ERROR, "message": f"cp-sat: {type(exc).__name__}: {exc}"}
    return _result(model, hinted, out, check, time.perf_counter() - start, name)


def run_cp_sat(model: cp_model.CpModel, time_limit: float, seed: int, workers: int,
               mip_gap: float | None, verbose: bool, variables: Any = None,
               params: Mapping[str, Any] | None = None,
               deterministic_time: float | None = None) -> dict:
    """Solve with CP-SAT; returns the raw outcome (status, objective, bound, values, message,
    ``work``: the deterministic time used in planned seconds, ``cut_short``: stopped by the
    wall clock before a proof or the deterministic limit).

    ``values`` is a dict by name when ``variables`` is given or None (all named variables), or
    the full solution list (by variable index) when ``variables == "all"``.
    ``deterministic_time`` (CP-SAT units) may also come as ``params["max_deterministic_time"]``.
    """
    solver = cp_model.CpSolver()
    settings = solver.parameters
    settings.max_time_in_seconds = float(time_limit)
    settings.random_seed = int(seed)
    settings.num_workers = int(workers)
    if workers > 1:
        settings.interleave_search = True
    if mip_gap is not None:
        settings.relative_gap_limit = float(mip_gap)
    settings.log_search_progress = bool(verbose)
    for key, value in (params or {}).items():
        if not hasattr(settings, key):
            raise ValueError(f"CP-SAT has no parameter {key!r} (see SatParameters)")
        setattr(settings, key, value)
    if deterministic_time is not None:
        settings.max_deterministic_time = float(deterministic_time)
    settings.catch_sigint_signal = False     # the run's watcher stops it (solver.interrupt)
    with running(solver.stop_search):
        code = solver.solve(model)
    status = _CP_STATUS.get(code, SolveStatus.ERROR)
    out: dict = {"status": status, "message": f"CP-SAT: {solver.status_name(code)}"}
    used = float(solver.response_proto.deterministic_time)
    out["work"] = used / CP_SAT_WORK_PER_SECOND
    out["nodes"] = int(solver.response_proto.num_branches)   # search branches (benchmark tables)
    out["cut_short"] = _cut_short(status, used, settings, solver.wall_time)
    if out["cut_short"]:
        out["message"] += " (cut short by the wall clock)"
    if status is SolveStatus.ERROR:
        out["message"] += f" ({model.validate() or 'no detail'})"
    if status.has_solution:
        solution = list(solver.response_proto.solution)
        has_obj = model.has_objective()
        out["objective"] = solver.objective_value if has_obj else 0.0
        out["bound"] = solver.best_objective_bound if has_obj else 0.0
        out["values"] = (solution if variables == "all"
                         else _named_values(model, solution, variables))
    return out


def _cut_short(status: SolveStatus, used: float, settings, elapsed: float) -> bool:
    """Whether an unproven CP-SAT solve was stopped by the clock rather than its work limit."""
    if status in (SolveStatus.OPTIMAL, SolveStatus.INFEASIBLE, SolveStatus.ERROR):
        return False
    if status is SolveStatus.FEASIBLE and settings.stop_after_first_solution:
        return False           # stopped at its first solution, as asked: not by the clock
    limit = settings.max_deterministic_time
    if limit < 1e300:          # a work limit: the clock cut it when the work was not all used
        return used < 0.999 * limit
    return elapsed >= 0.95 * settings.max_time_in_seconds


def _named_values(model: cp_model.CpModel, solution: list[int], variables: Any) -> dict[str, int]:
    if variables is None:
        return {v.name: solution[i] for i, v in enumerate(model.proto.variables) if v.name}
    if isinstance(variables, Mapping):
        return {str(k): _value(solution, v) for k, v in variables.items()}
    return {v.name: _value(solution, v) for v in variables}


def _value(solution: list[int], var: Any) -> int:
    i = var.index
    return solution[i] if i >= 0 else 1 - solution[-i - 1]


def _index(var: Any) -> int:
    i = var if isinstance(var, int) else var.index
    if i < 0:
        raise ValueError("hint keys must be variables, not negated literals")
    return i


def _result(model: cp_model.CpModel, hinted: cp_model.CpModel, out: dict, check: HintCheck,
            wall: float, name: str | None) -> SolveResult:
    message = out.get("message", "")
    if check.status == "infeasible":
        message += "; hint infeasible, violates: " + ", ".join(check.violations[:5])
    result = SolveResult(
        status=out["status"], objective=out.get("objective"), bound=out.get("bound"),
        gap=relative_gap(out.get("objective"), out.get("bound")), wall_time=wall,
        backend="cp-sat", n_vars=len(hinted.proto.variables),
        n_constraints=len(hinted.proto.constraints), values=out.get("values") or {},
        message=message, hint_status=check.status, hint_violations=check.violations,
        model_name=name if name is not None else model.name)
    return annotate(result, out.get("work"), out.get("cut_short", False))


# ---------------------------------------------------------------------------------------------
# files
# ---------------------------------------------------------------------------------------------
def export_cp_model(model: cp_model.CpModel, path: str) -> None:
    """Write the model as CP-SAT protobuf text (atomically).

    Examples
    --------
    >>> import tempfile, os
    >>> m = cp_model.CpModel(); x = m.new_int_var(0, 3, "x"); m.maximize(x)
    >>> path = os.path.join(tempfile.mkdtemp(), "m.pb.txt")
    >>> export_cp_model(m, path)
    >>> solve_cp_model(load_cp_model(path)).objective
    3.0
    """
    tmp = f"{path}.tmp{os.getpid()}"
    try:
        with open(tmp, "w", encoding="utf-8") as fh:
            fh.write(str(model.proto))
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)


def load_cp_model(path: str) -> cp_model.CpModel:
    """Read a model written by :func:`export_cp_model` (protobuf text); ValueError when the
    file is not CP-SAT protobuf text."""
    model = cp_model.CpModel()
    with open(path, encoding="utf-8") as fh:
        if not model.proto.parse_text_format(fh.read()):
            raise ValueError(f"{path}: not CP-SAT protobuf text (CpModelProto)")
    return model


# ---------------------------------------------------------------------------------------------
# hint check
# ---------------------------------------------------------------------------------------------
def check_cp_hint(model: cp_model.CpModel, time_limit: float = 1.0,
                  max_names: int = 50) -> HintCheck:
    """Check the model's solution hint against domains and constraints.

    Returns
    -------
    HintCheck
        ``"none"``, ``"accepted"`` (complete, feasible), ``"partial"`` (no violation found
        among the checkable constraints) or ``"infeasible"`` with what it violates.
    """
    proto = model.proto
    hint = dict(zip(proto.solution_hint.vars, proto.solution_hint.values))
    if not hint:
        return HintCheck("none")
    names = [v.name or f"var#{i}" for i, v in enumerate(proto.variables)]
    violations = [f"bound:{names[i]}" for i, val in hint.items()
                  if not _in_domain(val, list(proto.variables[i].domain))]
    unchecked: list[str] = []
    for k, ct in enumerate(proto.constraints):
        verdict = _check_constraint(proto, ct, hint)
        label = ct.name or f"constraint#{k}"
        if verdict is False:
            violations.append(label)
        elif verdict == "unchecked":
            unchecked.append(label)
    complete = len(hint) == len(proto.variables)
    if not violations and unchecked and complete and not _fixed_feasible(model, hint, time_limit):
        violations.append("one of: " + ", ".join(unchecked[:10]))
    if violations:
        return HintCheck("infeasible", tuple(violations[:max_names]))
    return HintCheck("accepted" if complete else "partial")


def _in_domain(value: int, domain: list[int]) -> bool:
    return any(domain[k] <= value <= domain[k + 1] for k in range(0, len(domain), 2))


def _lit(ref: int, hint: dict[int, int]) -> int | None:
    if ref >= 0:
        return hint.get(ref)
    val = hint.get(-ref - 1)
    return None if val is None else 1 - val


def _expr(e: Any, hint: dict[int, int]) -> int | None:
    """Value of a linear expression (vars, coeffs, offset); a negative ref means ``-x``."""
    return _affine(e.vars, e.coeffs, hint, e.offset)


def _affine(refs: Any, coeffs: Any, hint: dict[int, int], offset: int = 0) -> int | None:
    total = offset
    for ref, c in zip(refs, coeffs):
        val = hint.get(ref if ref >= 0 else -ref - 1)
        if val is None:
            return None
        total += c * (val if ref >= 0 else -val)
    return total


def _check_constraint(proto: Any, ct: Any, hint: dict[int, int]) -> bool | str | None:
    """True/False when decided, None when not all variables are hinted, "unchecked" otherwise."""
    enforced = [_lit(r, hint) for r in ct.enforcement_literal]
    if any(v == 0 for v in enforced):
        return True
    if any(v is None for v in enforced):
        return None
    return _check_body(proto, ct, hint)


def _check_body(proto: Any, ct: Any, hint: dict[int, int]) -> bool | str | None:
    if ct.has_linear():
        lin = ct.linear
        total = _affine(lin.vars, lin.coeffs, hint)
        return None if total is None else _in_domain(total, list(lin.domain))
    for kind in ("bool_or", "bool_and", "at_most_one", "exactly_one", "bool_xor"):
        if getattr(ct, f"has_{kind}")():
            vals = [_lit(r, hint) for r in getattr(ct, kind).literals]
            return None if any(v is None for v in vals) else _bool_ok(kind, vals)
    if ct.has_all_diff():
        vals = [_expr(e, hint) for e in ct.all_diff.exprs]
        return None if any(v is None for v in vals) else len(set(vals)) == len(vals)
    if ct.has_interval():
        s, e, z = (_expr(x, hint) for x in (ct.interval.start, ct.interval.end, ct.interval.size))
        return None if None in (s, e, z) else (s + z == e and z >= 0)
    if ct.has_no_overlap():
        return _no_overlap_ok(proto, list(ct.no_overlap.intervals), hint)
    return "unchecked"


def _bool_ok(kind: str, vals: list[int]) -> bool:
    total = sum(vals)
    return {"bool_or": total >= 1, "bool_and": total == len(vals), "at_most_one": total <= 1,
            "exactly_one": total == 1, "bool_xor": total % 2 == 1}[kind]


def _no_overlap_ok(proto: Any, intervals: list[int], hint: dict[int, int]) -> bool | None:
    spans = []
    for i in intervals:
        ct = proto.constraints[i]
        present = [_lit(r, hint) for r in ct.enforcement_literal]
        if any(v == 0 for v in present):
            continue
        s, e = _expr(ct.interval.start, hint), _expr(ct.interval.end, hint)
        if None in present or s is None or e is None:
            return None
        if e > s:
            spans.append((s, e))
    spans.sort()
    return all(a[1] <= b[0] for a, b in zip(spans, spans[1:]))


def _fixed_feasible(model: cp_model.CpModel, hint: dict[int, int], time_limit: float) -> bool:
    """CP-SAT check of a complete hint: every variable fixed to its hinted value."""
    fixed = model.clone()
    fixed.clear_hints()
    for i, val in hint.items():
        domain = fixed.proto.variables[i].domain
        domain.clear()
        domain.extend([val, val])
    out = run_cp_sat(fixed, time_limit, 0, 1, None, False, variables="all")
    return out["status"] is not SolveStatus.INFEASIBLE
