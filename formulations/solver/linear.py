"""A small backend-neutral MILP builder.

:class:`LinearModel` holds variables (continuous or integer, with bounds), linear constraints
stored as sparse rows and labelled with a *family* (``"capacity"``, ``"reach"``, ``"sibling"``,
``"memory"``, ...), one linear objective and an optional warm-start hint. It is solved on any
registered backend (:mod:`formulations.solver.backends`) and written to ``.mps`` / ``.lp`` files
that HiGHS and SCIP read.

Expressions are built with ordinary operators on :class:`Var` and :class:`LinExpr`; ``sum`` works
and stays linear in time (sums are flattened once, when the constraint is added), and
:func:`quicksum` is the faster form for long sums. :meth:`LinearModel.add_row` and
:meth:`LinearModel.add_rows` skip expression objects entirely for bulk building.

Caveats
-------
* Names must be unique and contain no whitespace; constraint names default to ``c<row>``
  (or ``<family>_<row>`` when a family is given).
* Chained comparisons (``0 <= x <= 5``) are not supported; use :meth:`LinearModel.add_range`.

Examples
--------
>>> m = LinearModel("knapsack")
>>> x = [m.add_binary(f"x{i}") for i in range(3)]
>>> _ = m.add(3 * x[0] + 4 * x[1] + 5 * x[2] <= 7, name="weight", family="capacity")
>>> m.maximize(4 * x[0] + 5 * x[1] + 6 * x[2])
>>> m.solve().objective
9.0
"""

from __future__ import annotations

import math
import numbers
import re
import dataclasses
from dataclasses import dataclass
from typing import Any, Iterable, Mapping, Sequence

import numpy as np

from ._highs import write_model
from .arrays import FEASIBILITY_TOLERANCE, HintCheck, ModelArrays, check_hint
from .backends import solve
from .result import SolveResult

__all__ = [
    "INF",
    "Var",
    "LinExpr",
    "LinearConstraint",
    "LinearModel",
    "ModelArrays",
    "HintCheck",
    "quicksum",
]

INF = math.inf


# ---------------------------------------------------------------------------------------------
# expressions
# ---------------------------------------------------------------------------------------------
class _ExprOps:
    """Arithmetic and comparisons shared by :class:`Var` and :class:`LinExpr`."""

    __slots__ = ()

    def __add__(self, other: Any) -> LinExpr:
        if isinstance(other, numbers.Number):
            return LinExpr(((1.0, self),), float(other))
        if isinstance(other, _ExprOps):
            return LinExpr(((1.0, self), (1.0, other)))
        return NotImplemented

    __radd__ = __add__

    def __sub__(self, other: Any) -> LinExpr:
        if isinstance(other, numbers.Number):
            return LinExpr(((1.0, self),), -float(other))
        if isinstance(other, _ExprOps):
            return LinExpr(((1.0, self), (-1.0, other)))
        return NotImplemented

    def __rsub__(self, other: Any) -> LinExpr:
        if isinstance(other, numbers.Number):
            return LinExpr(((-1.0, self),), float(other))
        return NotImplemented

    def __mul__(self, other: Any) -> LinExpr:
        if isinstance(other, numbers.Number):
            return LinExpr(((float(other), self),))
        return NotImplemented

    __rmul__ = __mul__

    def __truediv__(self, other: Any) -> LinExpr:
        if isinstance(other, numbers.Number):
            return LinExpr(((1.0 / float(other), self),))
        return NotImplemented

    def __neg__(self) -> LinExpr:
        return LinExpr(((-1.0, self),))

    def __pos__(self) -> _ExprOps:
        return self

    def __le__(self, other: Any) -> LinearConstraint:
        return LinearConstraint(self - other, -INF, 0.0)

    def __ge__(self, other: Any) -> LinearConstraint:
        return LinearConstraint(self - other, 0.0, INF)

    def __eq__(self, other: Any) -> LinearConstraint:  # type: ignore[override]
        pair = (self, other) if isinstance(other, Var) and isinstance(self, Var) else None
        return LinearConstraint(self - other, 0.0, 0.0, _identity=pair)

    __hash__ = object.__hash__


class Var(_ExprOps):
    """A decision variable of one :class:`LinearModel` (create it with ``add_var``).

    Examples
    --------
    >>> m = LinearModel()
    >>> x = m.add_var("x", ub=4, integer=True)
    >>> x.name, x.index, x.lb, x.ub, x.integer
    ('x', 0, 0.0, 4.0, True)
    """

    __slots__ = ("_model", "index", "name")

    def __init__(self, model: LinearModel, index: int, name: str) -> None:
        self._model = model
        self.index = index
        self.name = name

    @property
    def lb(self) -> float:
        """Lower bound."""
        return self._model._col_lb[self.index]

    @property
    def ub(self) -> float:
        """Upper bound."""
        return self._model._col_ub[self.index]

    @property
    def integer(self) -> bool:
        """True for an integer (or binary) variable."""
        return self._model._col_int[self.index]

    def __repr__(self) -> str:
        return f"Var({self.name!r})"


class LinExpr(_ExprOps):
    """A linear expression: a lazy sum of scaled parts plus a constant.

    Parts are kept as a tree and flattened once (iteratively) when the expression is used, so
    building a long sum with ``+`` costs linear time.

    Examples
    --------
    >>> m = LinearModel()
    >>> x, y = m.add_var("x"), m.add_var("y")
    >>> (2 * x - y + 3 + x).terms()
    ({'x': 3.0, 'y': -1.0}, 3.0)
    """

    __slots__ = ("_parts", "_const")

    def __init__(self, parts: Sequence[tuple[float, _ExprOps]] = (), const: float = 0.0) -> None:
        self._parts = parts
        self._const = const

    @staticmethod
    def from_terms(variables: Iterable[Var], coefs: Iterable[float], const: float = 0.0) -> LinExpr:
        """Build ``sum(c * v) + const`` directly from parallel sequences."""
        return LinExpr([(float(c), v) for v, c in zip(variables, coefs)], float(const))

    def flatten(self) -> tuple[dict[int, float], float, LinearModel | None]:
        """Merge into ``({column: coef}, constant, model)``, by column, without zero
        coefficients."""
        return _flatten(self)

    def terms(self) -> tuple[dict[str, float], float]:
        """``({var name: coef}, constant)``, for display and tests."""
        coefs, const, model = _flatten(self)
        names = {} if model is None else {j: model._vars[j].name for j in coefs}
        return {names[j]: c for j, c in coefs.items()}, const

    def __repr__(self) -> str:
        coefs, const = self.terms()
        body = " + ".join(f"{c:g}*{n}" for n, c in coefs.items()) or "0"
        return f"LinExpr({body} + {const:g})"


def quicksum(items: Iterable[Any]) -> LinExpr:
    """Sum of variables, expressions and numbers in one flat expression.

    Examples
    --------
    >>> m = LinearModel()
    >>> xs = [m.add_var(f"x{i}") for i in range(3)]
    >>> quicksum(2 * x for x in xs).terms()
    ({'x0': 2.0, 'x1': 2.0, 'x2': 2.0}, 0.0)
    """
    items = list(items)
    parts = [(1.0, item) for item in items if isinstance(item, _ExprOps)]
    const = 0.0
    if len(parts) != len(items):
        for item in items:
            if isinstance(item, numbers.Number):
                const += float(item)
            elif not isinstance(item, _ExprOps):
                raise TypeError(f"quicksum: cannot add {type(item).__name__} "
                                "to a linear expression")
    return LinExpr(parts, const)


def _flatten(expr: Any) -> tuple[dict[int, float], float, LinearModel | None]:
    coefs: dict[int, float] = {}
    const = 0.0
    model: LinearModel | None = None
    stack: list[tuple[float, Any]] = [(1.0, expr)]
    while stack:
        mult, e = stack.pop()
        if type(e) is LinExpr:
            const += mult * e._const
            for c, sub in e._parts:
                if type(sub) is Var:
                    if sub._model is not model:
                        model = _same_model(model, sub)
                    coefs[sub.index] = coefs.get(sub.index, 0.0) + mult * c
                else:
                    stack.append((mult * c, sub))
        elif type(e) is Var:
            model = _same_model(model, e)
            coefs[e.index] = coefs.get(e.index, 0.0) + mult
        elif isinstance(e, numbers.Number):
            const += mult * float(e)
        else:
            raise TypeError(f"not a linear expression: {type(e).__name__}")
    return {j: c for j, c in sorted(coefs.items()) if c != 0.0}, const, model


def _same_model(model: LinearModel | None, var: Var) -> LinearModel:
    if model is not None and var._model is not model:
        raise ValueError(f"variable {var.name!r} belongs to another model")
    return var._model


class LinearConstraint:
    """``lo <= expr <= hi``, the result of comparing expressions; pass it to ``LinearModel.add``."""

    __slots__ = ("expr", "lo", "hi", "_identity")

    def __init__(self, expr: Any, lo: float, hi: float, _identity: tuple | None = None) -> None:
        self.expr = expr
        self.lo = lo
        self.hi = hi
        self._identity = _identity

    def __bool__(self) -> bool:
        if self._identity is not None:  # `x == y` on two Vars, e.g. inside a dict lookup
            return self._identity[0] is self._identity[1]
        raise TypeError(
            "a linear constraint has no truth value; chained comparisons such as "
            "`0 <= x <= 5` are not supported, use LinearModel.add_range(0, x, 5)"
        )

    def __repr__(self) -> str:
        return f"LinearConstraint({self.lo} <= {self.expr!r} <= {self.hi})"


# ---------------------------------------------------------------------------------------------
# the model
# ---------------------------------------------------------------------------------------------
class LinearModel:
    """A mixed-integer linear model with named constraint families.

    Parameters
    ----------
    name : str
        Model name (used in files and results).

    Examples
    --------
    >>> m = LinearModel("assign")
    >>> x = {(i, j): m.add_binary(f"x_{i}_{j}") for i in range(2) for j in range(2)}
    >>> for i in range(2):
    ...     _ = m.add(x[i, 0] + x[i, 1] == 1, name=f"one_{i}", family="assignment")
    >>> for j in range(2):
    ...     _ = m.add(x[0, j] + x[1, j] <= 1, name=f"cap_{j}", family="capacity")
    >>> m.minimize(3 * x[0, 0] + 1 * x[0, 1] + 2 * x[1, 0] + 5 * x[1, 1])
    >>> m
    LinearModel('assign', vars=4, constraints=4, families=['assignment', 'capacity'])
    >>> r = m.solve(backend="highs", time_limit=5)
    >>> r.status.name, r.objective, r.value(x[0, 1])
    ('OPTIMAL', 3.0, 1.0)
    """

    def __init__(self, name: str = "model") -> None:
        self.name = name
        self._vars: list[Var] = []
        self._col_lb: list[float] = []
        self._col_ub: list[float] = []
        self._col_int: list[bool] = []
        self._var_by_name: dict[str, int] = {}
        self._row_idx: list[Sequence[int]] = []
        self._row_val: list[Sequence[float]] = []
        self._row_lo: list[float] = []
        self._row_hi: list[float] = []
        self._row_name: list[str] = []
        self._row_family: list[str] = []
        self._row_by_name: dict[str, int] = {}
        self._obj: dict[int, float] = {}
        self._obj_const = 0.0
        self._maximize = False
        self._hint: dict[int, float] = {}
        self._version = 0
        self._arrays: tuple[int, ModelArrays] | None = None

    # ---- size and lookup ------------------------------------------------------------------
    @property
    def n_vars(self) -> int:
        """Number of variables."""
        return len(self._vars)

    @property
    def n_constraints(self) -> int:
        """Number of constraints (rows)."""
        return len(self._row_lo)

    @property
    def vars(self) -> tuple[Var, ...]:
        """All variables, in column order."""
        return tuple(self._vars)

    @property
    def is_mip(self) -> bool:
        """True when some variable is integer."""
        return any(self._col_int)

    @property
    def sense(self) -> str:
        """``"min"`` or ``"max"``."""
        return "max" if self._maximize else "min"

    def var(self, name: str) -> Var:
        """The variable called ``name`` (KeyError if none)."""
        return self._vars[self._var_by_name[name]]

    def families(self) -> dict[str, int]:
        """Number of constraints per family label, in first-seen order."""
        out: dict[str, int] = {}
        for fam in self._row_family:
            out[fam] = out.get(fam, 0) + 1
        return out

    def constraint_names(self, family: str | None = None) -> list[str]:
        """Names of all constraints, or of one family."""
        if family is None:
            return list(self._row_name)
        return [n for n, f in zip(self._row_name, self._row_family) if f == family]

    def constraint_family(self, name: str) -> str:
        """The family label of the constraint called ``name``."""
        return self._row_family[self._row_by_name[name]]

    def __repr__(self) -> str:
        fams = sorted(self.families())
        return (f"LinearModel({self.name!r}, vars={self.n_vars}, "
                f"constraints={self.n_constraints}, families={fams})")

    # ---- variables ------------------------------------------------------------------------
    def add_var(self, name: str | None = None, lb: float = 0.0, ub: float = INF,
                integer: bool = False) -> Var:
        """Add a variable with bounds ``lb <= x <= ub`` (use ``-INF``/``INF`` for free).

        Parameters
        ----------
        name : str, optional
            Unique name without whitespace; defaults to ``x<column>``.
        lb, ub : float
            Bounds.
        integer : bool
            Integer variable when True.

        Returns
        -------
        Var

        Raises
        ------
        ValueError
            On a duplicate or malformed name.
        """
        index = len(self._vars)
        name = _fresh(f"x{index}", self._var_by_name) if name is None else name
        _check_name(name, self._var_by_name, "variable")
        var = Var(self, index, name)
        self._vars.append(var)
        self._var_by_name[name] = index
        self._col_lb.append(float(lb))
        self._col_ub.append(float(ub))
        self._col_int.append(bool(integer))
        self._version += 1
        return var

    def add_binary(self, name: str | None = None) -> Var:
        """Add a 0/1 variable."""
        return self.add_var(name, 0.0, 1.0, integer=True)

    def add_vars(self, names: Sequence[str] | int, lb: float = 0.0, ub: float = INF,
                 integer: bool = False) -> list[Var]:
        """Add many variables with the same bounds; ``names`` may be a count.

        Examples
        --------
        >>> m = LinearModel()
        >>> [v.name for v in m.add_vars(["a", "b"], ub=1, integer=True)]
        ['a', 'b']
        """
        first = len(self._vars)
        if isinstance(names, int):
            names = [_fresh(f"x{first + k}", self._var_by_name) for k in range(names)]
        names = list(names)
        for name in names:
            _check_name(name, self._var_by_name, "variable")
        if len(set(names)) != len(names):
            raise ValueError("add_vars: duplicate names")
        new = [Var(self, first + k, name) for k, name in enumerate(names)]
        self._vars.extend(new)
        self._var_by_name.update((name, first + k) for k, name in enumerate(names))
        self._col_lb.extend([float(lb)] * len(new))
        self._col_ub.extend([float(ub)] * len(new))
        self._col_int.extend([bool(integer)] * len(new))
        self._version += 1
        return new

    def set_bounds(self, var: Var, lb: float | None = None, ub: float | None = None) -> None:
        """Change the bounds of a variable."""
        if lb is not None:
            self._col_lb[var.index] = float(lb)
        if ub is not None:
            self._col_ub[var.index] = float(ub)
        self._version += 1

    # ---- constraints ----------------------------------------------------------------------
    def add(self, constraint: LinearConstraint, name: str | None = None, family: str = "") -> int:
        """Add ``expr <= rhs``, ``expr >= rhs`` or ``expr == rhs``; returns the row number.

        Parameters
        ----------
        constraint : LinearConstraint
            The result of a comparison of linear expressions.
        name : str, optional
            Unique constraint name; defaults to ``<family>_<row>`` or ``c<row>``.
        family : str
            Constraint family (``"capacity"``, ``"reach"``, ...), used by diagnosis.

        Raises
        ------
        TypeError
            When given something other than a comparison (e.g. a bool).
        """
        if not isinstance(constraint, LinearConstraint):
            raise TypeError(f"add() needs a comparison of linear expressions, got "
                            f"{type(constraint).__name__} "
                            "(a constant comparison evaluates to bool)")
        return self.add_range(constraint.lo, constraint.expr, constraint.hi, name, family)

    def add_range(self, lo: float, expr: Any, hi: float, name: str | None = None,
                  family: str = "") -> int:
        """Add ``lo <= expr <= hi``; returns the row number.

        Examples
        --------
        >>> m = LinearModel()
        >>> x = m.add_var("x")
        >>> m.add_range(1, 2 * x + 1, 5, name="r")
        0
        """
        coefs, const, model = _flatten(expr)
        if model is not None and model is not self:
            raise ValueError("expression uses variables of another model")
        return self._append_row(list(coefs), list(coefs.values()),
                                float(lo) - const, float(hi) - const, name, family)

    def add_row(self, variables: Sequence[Var | int], coefs: Sequence[float], lb: float = -INF,
                ub: float = INF, name: str | None = None, family: str = "") -> int:
        """Add ``lb <= sum(coefs[k] * variables[k]) <= ub`` without building expressions.

        Examples
        --------
        >>> m = LinearModel()
        >>> xs = m.add_vars(3, ub=1)
        >>> m.add_row(xs, [1, 1, 1], ub=2, family="capacity")
        0
        """
        idx = [v if isinstance(v, (int, np.integer)) else v.index for v in variables]
        vals = [float(c) for c in coefs]
        if len(idx) != len(vals):
            raise ValueError("add_row: variables and coefs differ in length")
        if len(set(idx)) != len(idx):
            merged: dict[int, float] = {}
            for j, c in zip(idx, vals):
                merged[j] = merged.get(j, 0.0) + c
            idx, vals = list(merged), list(merged.values())
        n = len(self._vars)
        if any(not 0 <= j < n for j in idx):
            raise ValueError("add_row: variable index out of range")
        return self._append_row(idx, vals, float(lb), float(ub), name, family)

    def add_rows(self, rows: Iterable[tuple[Sequence[Var | int], Sequence[float]]],
                 lb: float | Sequence[float] = -INF, ub: float | Sequence[float] = INF,
                 names: Sequence[str] | None = None, family: str = "") -> range:
        """Add many rows of one family; ``lb``/``ub`` are scalars or per-row sequences.

        Returns
        -------
        range
            The row numbers added.

        Examples
        --------
        >>> m = LinearModel()
        >>> xs = m.add_vars(4, ub=1)
        >>> m.add_rows([(xs[:2], [1, 1]), (xs[2:], [1, 1])], ub=1, family="capacity")
        range(0, 2)
        """
        first = self.n_constraints
        for k, (variables, coefs) in enumerate(rows):
            lo = lb if isinstance(lb, numbers.Number) else lb[k]
            hi = ub if isinstance(ub, numbers.Number) else ub[k]
            self.add_row(variables, coefs, lo, hi, None if names is None else names[k], family)
        return range(first, self.n_constraints)

    def _append_row(self, idx: list[int], vals: list[float], lo: float, hi: float,
                    name: str | None, family: str) -> int:
        row = len(self._row_lo)
        if name is None:
            name = _fresh(f"{family}_{row}" if family else f"c{row}", self._row_by_name)
        _check_name(name, self._row_by_name, "constraint")
        self._row_idx.append(idx)
        self._row_val.append(vals)
        self._row_lo.append(lo)
        self._row_hi.append(hi)
        self._row_name.append(name)
        self._row_family.append(family)
        self._row_by_name[name] = row
        self._version += 1
        return row

    # ---- objective and hint ---------------------------------------------------------------
    def minimize(self, expr: Any) -> None:
        """Set the objective to minimise ``expr``."""
        self._set_objective(expr, maximize=False)

    def maximize(self, expr: Any) -> None:
        """Set the objective to maximise ``expr``."""
        self._set_objective(expr, maximize=True)

    def _set_objective(self, expr: Any, maximize: bool) -> None:
        coefs, const, model = _flatten(expr)
        if model is not None and model is not self:
            raise ValueError("objective uses variables of another model")
        self._obj, self._obj_const, self._maximize = coefs, const, maximize
        self._version += 1

    def objective_terms(self) -> tuple[dict[str, float], float]:
        """``({var name: coef}, constant)`` of the objective."""
        return {self._vars[j].name: c for j, c in self._obj.items()}, self._obj_const

    def set_hint(self, hint: Mapping[Var | str, float], replace: bool = True) -> None:
        """Give a warm start: values for some or all variables.

        Parameters
        ----------
        hint : mapping of Var (or variable name) to value
        replace : bool, default True
            Replace the previous hint rather than add to it.

        Examples
        --------
        >>> m = LinearModel()
        >>> x = m.add_var("x", ub=3, integer=True)
        >>> _ = m.add(x <= 2, name="c")
        >>> m.set_hint({x: 4}); m.check_hint()
        HintCheck(status='infeasible', violations=('bound:x', 'c'))
        """
        if replace:
            self._hint = {}
        for key, value in hint.items():
            index = self._var_by_name[key] if isinstance(key, str) else key.index
            self._hint[index] = float(value)

    def clear_hint(self) -> None:
        """Remove the hint."""
        self.set_hint({})

    @property
    def hint(self) -> dict[str, float]:
        """The current hint, by variable name."""
        return {self._vars[j].name: v for j, v in self._hint.items()}

    def check_hint(self) -> HintCheck:
        """Check the hint against bounds, integrality and every fully hinted constraint."""
        return check_hint(self.to_arrays())

    # ---- conversion, copies, files, solve -------------------------------------------------
    def to_arrays(self) -> ModelArrays:
        """The model as numpy arrays (cached until the model changes; a new hint alone
        keeps the matrix: warm-started re-solves set a hint per solve)."""
        if self._arrays is None or self._arrays[0] != self._version:
            self._arrays = (self._version, self._build_arrays())
        elif self._arrays[1].hint != self._hint:
            self._arrays = (self._version,
                            dataclasses.replace(self._arrays[1], hint=dict(self._hint)))
        return self._arrays[1]

    def _build_arrays(self) -> ModelArrays:
        n = self.n_vars
        lengths = np.fromiter((len(r) for r in self._row_idx), dtype=np.int64,
                              count=len(self._row_idx))
        start = np.zeros(len(lengths) + 1, dtype=np.int32)
        np.cumsum(lengths, out=start[1:])
        index = np.fromiter((j for r in self._row_idx for j in r), dtype=np.int32,
                            count=int(start[-1]))
        value = np.fromiter((c for r in self._row_val for c in r), dtype=np.float64,
                            count=int(start[-1]))
        obj = np.zeros(n)
        if self._obj:
            obj[list(self._obj)] = list(self._obj.values())
        return ModelArrays(
            name=self.name, col_names=[v.name for v in self._vars],
            col_lb=np.array(self._col_lb, dtype=float), col_ub=np.array(self._col_ub, dtype=float),
            col_int=np.array(self._col_int, dtype=bool), obj=obj, obj_const=self._obj_const,
            maximize=self._maximize, row_names=list(self._row_name),
            row_families=list(self._row_family), row_lo=np.array(self._row_lo, dtype=float),
            row_hi=np.array(self._row_hi, dtype=float), row_start=start, row_index=index,
            row_value=value, hint=dict(self._hint))

    def copy(self, families: Iterable[str] | None = None, objective: bool = True,
             name: str | None = None) -> LinearModel:
        """A copy, optionally keeping only some constraint families and dropping the objective.

        Examples
        --------
        >>> m = LinearModel()
        >>> x = m.add_var("x")
        >>> _ = m.add(x <= 1, family="capacity"); _ = m.add(x >= 2, family="reach")
        >>> m.copy(families=["reach"]).constraint_names()
        ['reach_1']
        """
        keep = None if families is None else set(families)
        out = LinearModel(self.name if name is None else name)
        for v in self._vars:
            out.add_var(v.name, self._col_lb[v.index], self._col_ub[v.index],
                        self._col_int[v.index])
        for r in range(self.n_constraints):
            if keep is None or self._row_family[r] in keep:
                out._append_row(list(self._row_idx[r]), list(self._row_val[r]), self._row_lo[r],
                                self._row_hi[r], self._row_name[r], self._row_family[r])
        if objective:
            out._obj, out._obj_const, out._maximize = (dict(self._obj), self._obj_const,
                                                       self._maximize)
        out._hint = dict(self._hint)
        return out

    def evaluate(self, values: Mapping[str, float]) -> dict[str, float]:
        """Activity of every constraint at ``values`` (by variable name; missing ones are 0)."""
        arrays = self.to_arrays()
        x = np.array([values.get(n, 0.0) for n in arrays.col_names], dtype=float)
        return dict(zip(arrays.row_names, arrays.activities(x).tolist()))

    def write_mps(self, path: str) -> None:
        """Write the model as free MPS (integer markers, HiGHS writer); SCIP and HiGHS read it."""
        write_model(self.to_arrays(), str(path), fmt="mps")

    def write_lp(self, path: str) -> None:
        """Write the model in CPLEX LP format (HiGHS writer); names are made LP-safe."""
        write_model(self.to_arrays(), str(path), fmt="lp")

    def solve(self, backend: str = "highs", time_limit: float = 10.0, seed: int = 0,
              threads: int = 1, mip_gap: float | None = None, verbose: bool = False,
              options=None) -> SolveResult:
        """Solve on a registered backend; see :func:`formulations.solver.backends.solve`."""
        return solve(self, backend=backend, time_limit=time_limit, seed=seed, threads=threads,
                     mip_gap=mip_gap, verbose=verbose, options=options)


_WHITESPACE = re.compile(r"\s")


def _fresh(name: str, taken: Mapping[str, int]) -> str:
    """``name``, or ``name_1``, ``name_2``, ... if taken (for default names)."""
    candidate, k = name, 0
    while candidate in taken:
        k += 1
        candidate = f"{name}_{k}"
    return candidate


def _check_name(name: str, taken: Mapping[str, int], what: str) -> None:
    if not isinstance(name, str) or not name or _WHITESPACE.search(name):
        raise ValueError(f"{what} name {name!r} must be a non-empty string without whitespace")
    if name in taken:
        raise ValueError(f"duplicate {what} name {name!r}")
