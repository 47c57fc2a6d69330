"""The ``"cp-sat"`` backend for :class:`~formulations.solver.linear.LinearModel`.

The model is translated into a CP-SAT proto, one integer variable per column and one linear
constraint per row, names kept.

Caveats
-------
* Every variable must be integer: a continuous variable is an error (status ERROR, naming the
  variables), because treating it as integer would change the model. Use ``highs`` or ``scip``.
* Fractional coefficients are scaled per row (and for the objective) to integers with the
  smallest integer factor up to 10**6; rows whose coefficients cannot be scaled exactly are an
  error. Row bounds are rounded inwards after scaling, which is exact for integer variables.
* Infinite variable bounds become +-2**31 - 1 (CP-SAT needs finite domains).
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
from ortools.sat.python import cp_model

from .cp import run_cp_sat
from .arrays import ModelArrays

__all__ = ["cpsat_solve", "to_cp_model", "BIG"]

BIG = 2**31 - 1
_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1
_MAX_SCALE = 10**6


def cpsat_solve(a: ModelArrays, opts) -> dict:
    """Solve ``a`` with CP-SAT (all-integer models)."""
    model = to_cp_model(a)
    out = run_cp_sat(model, opts.time_limit, opts.seed, opts.threads, opts.mip_gap,
                     opts.verbose, variables="all", params=opts.options)
    out["hint_used"] = bool(a.hint)
    if out["status"].has_solution and _at_artificial_bound(a, out["values"]):
        out["message"] += (f"; a variable without a bound reached +-{BIG} (the stand-in for an "
                           f"infinite bound): the model may be unbounded")
    return out


def _at_artificial_bound(a: ModelArrays, values: list[int]) -> bool:
    x = np.asarray(values)
    return bool(np.any((np.isinf(a.col_ub) & (x >= BIG)) | (np.isinf(a.col_lb) & (x <= -BIG))))


def to_cp_model(a: ModelArrays) -> cp_model.CpModel:
    """Translate an all-integer model into a :class:`CpModel` (raises ValueError otherwise)."""
    _require_integer(a)
    model = cp_model.CpModel()
    proto = model.proto
    proto.name = a.name
    _add_variables(proto, a)
    _add_rows(proto, a)
    _set_objective(proto, a)
    if a.hint:
        proto.solution_hint.vars.extend(a.hint.keys())
        proto.solution_hint.values.extend(int(round(v)) for v in a.hint.values())
    return model


def _require_integer(a: ModelArrays) -> None:
    if not a.col_int.all():
        names = [a.col_names[j] for j in np.flatnonzero(~a.col_int)[:5]]
        raise ValueError(f"cp-sat needs an all-integer model; continuous variables: "
                         f"{', '.join(names)}{' ...' if (~a.col_int).sum() > 5 else ''} "
                         f"(use backend 'highs' or 'scip')")


def _add_variables(proto, a: ModelArrays) -> None:
    for name, lb, ub in zip(a.col_names, a.col_lb.tolist(), a.col_ub.tolist()):
        var = proto.variables.add()
        var.name = name
        var.domain.extend([_int_bound(lb, up=False), _int_bound(ub, up=True)])


def _int_bound(x: float, up: bool) -> int:
    if math.isinf(x):
        return BIG if x > 0 else -BIG
    return max(-BIG, min(BIG, math.floor(x + 1e-9) if up else math.ceil(x - 1e-9)))


def _add_rows(proto, a: ModelArrays) -> None:
    integral = bool(np.all(a.row_value == np.round(a.row_value)))
    start, index, value = a.row_start.tolist(), a.row_index.tolist(), a.row_value.tolist()
    for r, (lo, hi, name) in enumerate(zip(a.row_lo.tolist(), a.row_hi.tolist(), a.row_names)):
        coefs = value[start[r]:start[r + 1]]
        scale = 1 if integral else _scale(coefs, f"constraint {name!r}")
        ct = proto.constraints.add()
        ct.name = name
        lin = ct.linear
        lin.vars.extend(index[start[r]:start[r + 1]])
        lin.coeffs.extend(int(round(c * scale)) for c in coefs)
        lin.domain.extend([_row_bound(lo * scale, up=False), _row_bound(hi * scale, up=True)])


def _row_bound(x: float, up: bool) -> int:
    if math.isinf(x):
        return _INT64_MAX if x > 0 else _INT64_MIN
    return math.floor(x + 1e-9) if up else math.ceil(x - 1e-9)


def _scale(coefs: list[float], what: str) -> int:
    """Smallest integer factor (<= 10**6) making every coefficient integral."""
    scale = 1
    for c in coefs:
        scale = math.lcm(scale, Fraction(c).limit_denominator(_MAX_SCALE).denominator)
        if scale > _MAX_SCALE:
            break
    if scale > _MAX_SCALE or any(abs(c * scale - round(c * scale)) > 1e-9 * scale for c in coefs):
        raise ValueError(f"cp-sat: {what} has coefficients that cannot be scaled to integers")
    return scale


def _set_objective(proto, a: ModelArrays) -> None:
    cols = np.flatnonzero(a.obj)
    if len(cols) == 0 and a.obj_const == 0:
        return
    coefs = a.obj[cols].tolist()
    scale = _scale(coefs, "the objective") if coefs else 1
    sign = -1 if a.maximize else 1  # CP-SAT minimises; value = scaling_factor * (sum + offset)
    obj = proto.objective
    obj.vars.extend(cols.tolist())
    obj.coeffs.extend(sign * int(round(c * scale)) for c in coefs)
    obj.offset = sign * a.obj_const * scale
    obj.scaling_factor = sign / scale
