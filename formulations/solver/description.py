"""One model, two backends: a backend-neutral description and its CP-SAT and MILP emitters.

Scope
-----
A decision whose model both CP-SAT and the linear backends (HiGHS, SCIP, ``.mps``) solve states
it once, as a :class:`ModelDescription`: variables (booleans and bounded integers), then
constraints, each labelled with its rule *family*, in the order they are stated. Two thin
emitters read it:

* :meth:`ModelDescription.to_cp` builds a :class:`~ortools.sat.python.cp_model.CpModel` with
  CP-SAT's own constraints (exactly-one, at-most-one, clauses, implications, AllDifferent,
  min-equality, search strategies);
* :meth:`ModelDescription.to_linear` builds a :class:`~formulations.solver.LinearModel` with
  one family per rule: clauses as ``sum(pos) + sum(1 - neg) >= 1``, ``all_different_pairs`` as
  product binaries (one per item, first value and second value) with at most one item per
  pair, ``min_equality`` exactly with one selector binary per expression (big-M from the
  bounds).

Why a description rather than a ``LinearModel`` read by CP-SAT's linear backend: the CP models
rest on global constraints (AllDifferent over ``PE x II + slot``) that a linear row set states
only through product binaries, which weaken CP-SAT's propagation; and the CP path must keep its
exact model (variable and constraint order, names, decision strategies), since the searches are
planned in deterministic time and the same model gives the same answers. The emitters keep the
CP model exactly as written before the description existed.

Examples
--------
>>> d = ModelDescription("pick")
>>> x = [d.bool(f"x{i}") for i in range(3)]
>>> d.exactly_one(x, "A1_pick")
>>> d.clause([~x[0]], "B1_not_first")
>>> cost = d.int("cost", 0, 10)
>>> d.linear([(1, cost)] + [(-w, b) for w, b in zip([5, 3, 4], x)], 0, None, "O1_cost")
>>> d.minimize([(1, cost)])
>>> sorted(d.families())
['A1_pick', 'B1_not_first', 'O1_cost']
>>> model, _ = d.to_linear()
>>> model.solve(backend="highs", time_limit=5).objective
3.0
>>> from formulations.solver.cp import solve_cp_model
>>> cp, _ = d.to_cp()
>>> solve_cp_model(cp, time_limit=5).objective
3.0
"""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass
from typing import Any, Sequence

from ortools.sat.python import cp_model

from .linear import LinearModel, quicksum

__all__ = ["DVar", "Negated", "ModelDescription", "Terms"]


@dataclass(frozen=True)
class DVar:
    """A variable of a description: ``index`` in the emitted variable lists, its bounds."""

    index: int
    name: str
    lo: int
    hi: int

    @property
    def is_bool(self) -> bool:
        return (self.lo, self.hi) == (0, 1)

    def __invert__(self) -> Negated:
        return Negated(self)


@dataclass(frozen=True)
class Negated:
    """The negation of a boolean :class:`DVar` (a literal of a clause)."""

    var: DVar


Literal = DVar | Negated
#: A linear expression: ``sum(coef * var)``.
Terms = Sequence[tuple[int, DVar]]


class ModelDescription:
    """Variables and family-labelled constraints in the order they are stated (see module)."""

    def __init__(self, name: str):
        self.name = name
        self.steps: list[tuple[str, str, str | None, tuple]] = []
        self.vars: list[DVar] = []
        self.objective: list[tuple[int, DVar]] | None = None
        self.strategies: list[tuple[list[DVar], int, int]] = []

    # -- variables ------------------------------------------------------------------------------
    def bool(self, name: str) -> DVar:
        return self.int(name, 0, 1)

    def int(self, name: str, lo: int, hi: int) -> DVar:
        var = DVar(len(self.vars), name, lo, hi)
        self.vars.append(var)
        self.steps.append(("var", "", None, (var,)))
        return var

    # -- constraints ----------------------------------------------------------------------------
    def _add(self, kind: str, family: str, name: str | None, *payload: Any) -> None:
        self.steps.append((kind, family, name, payload))

    def exactly_one(self, lits: Sequence[DVar], family: str) -> None:
        self._add("exactly_one", family, None, list(lits))

    def at_most_one(self, lits: Sequence[DVar], family: str) -> None:
        self._add("at_most_one", family, None, list(lits))

    def clause(self, lits: Sequence[Literal], family: str) -> None:
        """At least one literal holds (none: the model is infeasible)."""
        self._add("clause", family, None, list(lits))

    def implication(self, a: DVar, b: DVar, family: str) -> None:
        self._add("implication", family, None, a, b)

    def linear(self, terms: Terms, lo: int | None, hi: int | None, family: str,
               name: str | None = None) -> None:
        """``lo <= sum(coef * var) <= hi`` (None: no bound on that side)."""
        self._add("linear", family, name, list(terms), lo, hi)

    def all_different_pairs(self, rows: Sequence[tuple[Terms, Terms]], width: int, family: str,
                            name: str | None = None) -> None:
        """Per item a pair of values, each chosen by one-hot literals ``(value, literal)``
        (second values ``< width``); no two items take the same pair."""
        self._add("pairs", family, name, [(list(a), list(b)) for a, b in rows], width)

    def min_equality(self, target: DVar, exprs: Sequence[Terms], family: str) -> None:
        """``target == min(exprs)``."""
        self._add("min", family, None, target, [list(e) for e in exprs])

    def minimize(self, terms: Terms) -> None:
        self.objective = list(terms)

    def branch_on(self, lits: Sequence[DVar], variable: int = cp_model.CHOOSE_FIRST,
                  value: int = cp_model.SELECT_MAX_VALUE) -> None:
        """A CP-SAT decision strategy over ``lits`` (a search rule, not a constraint: the
        linear emitter skips it)."""
        self.strategies.append((list(lits), variable, value))

    def families(self) -> Counter:
        """Constraints stated per family."""
        return Counter(family for kind, family, _, _ in self.steps if kind != "var")

    # -- emitters -------------------------------------------------------------------------------
    def to_cp(self) -> tuple[cp_model.CpModel, list]:
        """The CP-SAT model and its variables, by :attr:`DVar.index`."""
        model = cp_model.CpModel()
        model.name = self.name
        out: list = []
        for kind, _, name, payload in self.steps:
            made = _CP_EMIT[kind](model, out, *payload)
            if name is not None:
                made.with_name(name)
        for lits, variable, value in self.strategies:
            model.add_decision_strategy([out[v.index] for v in lits], variable, value)
        if self.objective is not None:
            model.minimize(_cp_sum(out, self.objective))
        return model, out

    def to_linear(self) -> tuple[LinearModel, list]:
        """The MILP and its variables, by :attr:`DVar.index` (same names as the CP model)."""
        model = LinearModel(self.name.replace("/", "_").replace(" ", "_"))
        out: list = []
        for step, (kind, family, _, payload) in enumerate(self.steps):
            _LINEAR_EMIT[kind](model, out, family or "", step, *payload)
        if self.objective is not None:
            model.minimize(_linear_sum(out, self.objective))
        return model, out

    @staticmethod
    def cp_hint(out: list, hint: dict[DVar, int]) -> dict:
        """A hint over description variables as one over the emitted variables."""
        return {out[var.index]: value for var, value in hint.items()}


# -- the CP-SAT emitter --------------------------------------------------------------------------
def _cp_lit(out: list, lit: Literal):
    return out[lit.var.index].Not() if isinstance(lit, Negated) else out[lit.index]


def _cp_sum(out: list, terms: Terms):
    return sum(c * out[v.index] for c, v in terms)


def _cp_var(model, out, var):
    out.append(model.new_bool_var(var.name) if var.is_bool
               else model.new_int_var(var.lo, var.hi, var.name))


def _cp_linear(model, out, terms, lo, hi):
    expr = _cp_sum(out, terms)
    if lo is not None and hi is not None:
        return model.add_linear_constraint(expr, lo, hi)
    return model.add(expr >= lo) if lo is not None else model.add(expr <= hi)


def _cp_pairs(model, out, rows, width):
    return model.add_all_different([_cp_sum(out, a) * width + _cp_sum(out, b) for a, b in rows])


_CP_EMIT = {
    "var": _cp_var,
    "exactly_one": lambda model, out, lits: model.add_exactly_one([out[v.index] for v in lits]),
    "at_most_one": lambda model, out, lits: model.add_at_most_one([out[v.index] for v in lits]),
    "clause": lambda model, out, lits: model.add_bool_or([_cp_lit(out, x) for x in lits]),
    "implication": lambda model, out, a, b: model.add_implication(out[a.index], out[b.index]),
    "linear": _cp_linear,
    "pairs": _cp_pairs,
    "min": lambda model, out, target, exprs: model.add_min_equality(
        out[target.index], [_cp_sum(out, e) for e in exprs]),
}


# -- the linear emitter --------------------------------------------------------------------------
def _linear_sum(out: list, terms: Terms):
    return quicksum(c * out[v.index] for c, v in terms)


def _bounds(terms: Terms) -> tuple[int, int]:
    """Smallest and largest value of ``terms`` over the variables' bounds."""
    lo = sum(min(c * v.lo, c * v.hi) for c, v in terms)
    hi = sum(max(c * v.lo, c * v.hi) for c, v in terms)
    return lo, hi


def _lin_var(model, out, family, step, var):
    out.append(model.add_binary(var.name) if var.is_bool
               else model.add_var(var.name, var.lo, var.hi, integer=True))


def _lin_clause(model, out, family, step, lits):
    pos = [out[x.index] for x in lits if isinstance(x, DVar)]
    neg = [out[x.var.index] for x in lits if isinstance(x, Negated)]
    model.add(quicksum(pos) - quicksum(neg) >= 1 - len(neg), family=family)


def _lin_linear(model, out, family, step, terms, lo, hi):
    expr = _linear_sum(out, terms)
    if lo is not None and hi is not None:
        model.add_range(lo, expr, hi, family=family)
    elif lo is not None:
        model.add(expr >= lo, family=family)
    else:
        model.add(expr <= hi, family=family)


def _lin_pairs(model, out, family, step, rows, width):
    """Product binaries ``x >= first + second - 1``; at most one item per pair of values."""
    per: dict[tuple[int, int], list] = defaultdict(list)
    for item, (first, second) in enumerate(rows):
        for s in range(width):
            in_s = quicksum(out[v.index] for c, v in second if c == s)
            for p, lit in first:
                x = model.add_binary(f"{family}_{step}_{item}_{p}_{s}")
                model.add(x - out[lit.index] - in_s >= -1, family=family)
                per[(p, s)].append(x)
    for key, xs in sorted(per.items()):
        if len(xs) > 1:
            model.add(quicksum(xs) <= 1, family=family)


def _lin_min(model, out, family, step, target, exprs):
    """``target <= e`` for each, and ``target >= e`` for the one a selector binary picks."""
    pick = [model.add_binary(f"{family}_{step}_pick{i}") for i in range(len(exprs))]
    model.add(quicksum(pick) == 1, family=family)
    for expr, chosen in zip(exprs, pick):
        big = _bounds(expr)[1] - target.lo
        e = _linear_sum(out, expr)
        model.add(out[target.index] - e <= 0, family=family)
        model.add(out[target.index] - e - big * chosen >= -big, family=family)


_LINEAR_EMIT = {
    "var": _lin_var,
    "exactly_one": lambda model, out, family, step, lits: model.add(
        quicksum(out[v.index] for v in lits) == 1, family=family),
    "at_most_one": lambda model, out, family, step, lits: model.add(
        quicksum(out[v.index] for v in lits) <= 1, family=family),
    "clause": _lin_clause,
    "implication": lambda model, out, family, step, a, b: model.add(
        out[a.index] - out[b.index] <= 0, family=family),
    "linear": _lin_linear,
    "pairs": _lin_pairs,
    "min": _lin_min,
}
