"""One model, two backends: a backend-neutral description and its CP-SAT and MILP emitters.

Scope
-----
A decision whose model both CP-SAT and the linear backends (HiGHS, SCIP, ``.mps``) solve states
it once, as a :class:`ModelDescription`: variables (booleans and bounded integers), then
constraints, each labelled with its rule *family*, in the order they are stated. Two thin
emitters read it:

* :meth:`ModelDescription.to_cp` builds a :class:`~ortools.sat.python.cp_model.CpModel` with
  CP-SAT's own constraints (exactly-one, at-most-one, clauses, implications, AllDifferent,
  tables, min/max-equalities, enforced rows) and search strategies (:meth:`branch_on`);
* :meth:`ModelDescription.to_linear` builds a :class:`~formulations.solver.LinearModel`, each
  row in its statement's family, every statement exact: clauses as ``sum(pos) + sum(1 - neg)
  >= 1``; an integer variable an AllDifferent, pair or channel reads as one-hot binaries (made
  once per variable); ``all_different_pairs`` through product binaries with at most one item
  per pair; a table through one binary per row; min/max-equalities through one selector
  binary per expression and enforced rows through big-M, both from the variables' bounds.

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
        return self._var("var", DVar(len(self.vars), name, lo, hi))

    def constant(self, value: int) -> DVar:
        """A fixed variable (CP-SAT: ``new_constant``)."""
        return self._var("const", DVar(len(self.vars), f"const{len(self.vars)}", value, value))

    def _var(self, kind: str, var: DVar) -> DVar:
        self.vars.append(var)
        self.steps.append((kind, "", None, (var,)))
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
               name: str | None = None, enforce: Literal | None = None) -> None:
        """``lo <= sum(coef * var) <= hi`` (None: no bound on that side), only where the
        literal ``enforce`` holds when one is given."""
        self._add("linear", family, name, list(terms), lo, hi, enforce)

    def channel(self, var: DVar, value: int, lit: DVar, family: str) -> None:
        """``lit`` holds exactly when ``var == value``."""
        self._add("channel", family, None, var, value, lit)

    def all_different(self, vars: Sequence[DVar], family: str, name: str | None = None) -> None:
        """Integer variables with pairwise different values."""
        self._add("different", family, name, list(vars))

    def all_different_pairs(self, rows: Sequence[tuple[Terms, Terms]], width: int, family: str,
                            name: str | None = None) -> None:
        """Per item a pair of values, each given either by one-hot literals ``(value,
        literal)`` or by one integer variable ``[(1, var)]`` (second values ``< width``); no
        two items take the same pair."""
        self._add("pairs", family, name, [(list(a), list(b)) for a, b in rows], width)

    def table(self, vars: Sequence[DVar], rows: Sequence[Sequence[int]], family: str,
              name: str | None = None) -> None:
        """The values of ``vars`` are one of ``rows``."""
        self._add("table", family, name, list(vars), [tuple(r) for r in rows])

    def min_equality(self, target: DVar, exprs: Sequence[Terms], family: str) -> None:
        """``target == min(exprs)``."""
        self._add("min", family, None, target, [list(e) for e in exprs])

    def max_equality(self, target: DVar, exprs: Sequence[Terms], family: str) -> None:
        """``target == max(exprs)``."""
        self._add("max", family, None, target, [list(e) for e in exprs])

    def minimize(self, terms: Terms) -> None:
        self.objective = list(terms)

    def branch_on(self, lits: Sequence[DVar], variable: int = cp_model.CHOOSE_FIRST,
                  value: int = cp_model.SELECT_MAX_VALUE) -> None:
        """A CP-SAT decision strategy over ``lits`` (a search rule, not a constraint: the
        linear emitter skips it)."""
        self.strategies.append((list(lits), variable, value))

    def families(self) -> Counter:
        """Constraints stated per family."""
        return Counter(family for kind, family, _, _ in self.steps if family)

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
        emit = _Linear(LinearModel(self.name.replace("/", "_").replace(" ", "_")))
        for step, (kind, family, _, payload) in enumerate(self.steps):
            emit.family, emit.step = family, step
            getattr(emit, kind)(*payload)
        if self.objective is not None:
            emit.model.minimize(emit.sum(self.objective))
        return emit.model, emit.out

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


def _cp_linear(model, out, terms, lo, hi, enforce):
    expr = _cp_sum(out, terms)
    if lo is not None and hi is not None:
        made = model.add_linear_constraint(expr, lo, hi)
    else:
        made = model.add(expr >= lo) if lo is not None else model.add(expr <= hi)
    return made if enforce is None else made.only_enforce_if(_cp_lit(out, enforce))


def _cp_channel(model, out, var, value, lit):
    model.add(out[var.index] == value).only_enforce_if(out[lit.index])
    model.add(out[var.index] != value).only_enforce_if(out[lit.index].Not())


def _cp_pairs(model, out, rows, width):
    return model.add_all_different([_cp_sum(out, a) * width + _cp_sum(out, b) for a, b in rows])


_CP_EMIT = {
    "var": _cp_var,
    "const": lambda model, out, var: out.append(model.new_constant(var.lo)),
    "exactly_one": lambda model, out, lits: model.add_exactly_one([out[v.index] for v in lits]),
    "at_most_one": lambda model, out, lits: model.add_at_most_one([out[v.index] for v in lits]),
    "clause": lambda model, out, lits: model.add_bool_or([_cp_lit(out, x) for x in lits]),
    "implication": lambda model, out, a, b: model.add_implication(out[a.index], out[b.index]),
    "linear": _cp_linear,
    "channel": _cp_channel,
    "different": lambda model, out, vars: model.add_all_different([out[v.index] for v in vars]),
    "pairs": _cp_pairs,
    "table": lambda model, out, vars, rows: model.add_allowed_assignments(
        [out[v.index] for v in vars], rows),
    "min": lambda model, out, target, exprs: model.add_min_equality(
        out[target.index], [_cp_sum(out, e) for e in exprs]),
    "max": lambda model, out, target, exprs: model.add_max_equality(
        out[target.index], [_cp_sum(out, e) for e in exprs]),
}


# -- the linear emitter --------------------------------------------------------------------------
def _bounds(terms: Terms) -> tuple[int, int]:
    """Smallest and largest value of ``terms`` over the variables' bounds."""
    lo = sum(min(c * v.lo, c * v.hi) for c, v in terms)
    hi = sum(max(c * v.lo, c * v.hi) for c, v in terms)
    return lo, hi


class _Linear:
    """Emits a description's steps into one :class:`LinearModel` (one method per kind)."""

    def __init__(self, model: LinearModel):
        self.model, self.out = model, []
        self.family, self.step = "", 0
        self.one_hots: dict[int, list[tuple[int, Any]]] = {}

    def sum(self, terms: Terms):
        return quicksum(c * self.out[v.index] for c, v in terms)

    def lit(self, lit: Literal):
        """A literal as an expression: the binary, or one minus it."""
        return 1 - self.out[lit.var.index] if isinstance(lit, Negated) else self.out[lit.index]

    def add(self, constraint) -> None:
        self.model.add(constraint, family=self.family)

    def binary(self, tag: str):
        return self.model.add_binary(f"{self.family}_{self.step}_{tag}")

    def one_hot(self, var: DVar) -> list[tuple[int, Any]]:
        """``(value, binary)`` per value of an integer variable, made once per variable."""
        if var.index not in self.one_hots:
            row = [(value, self.model.add_binary(f"{var.name}_is{value}"))
                   for value in range(var.lo, var.hi + 1)]
            self.add(quicksum(b for _, b in row) == 1)
            self.add(self.out[var.index] - quicksum(value * b for value, b in row) == 0)
            self.one_hots[var.index] = row
        return self.one_hots[var.index]

    def choices(self, terms: Terms) -> list[tuple[int, Any]]:
        """A side of a pair as ``(value, binary)``: its literals, or its variable's one-hot."""
        if len(terms) == 1 and terms[0][0] == 1 and not terms[0][1].is_bool:
            return self.one_hot(terms[0][1])
        return [(c, self.out[v.index]) for c, v in terms]

    # -- one method per kind of step ------------------------------------------------------------
    def var(self, var: DVar) -> None:
        self.out.append(self.model.add_binary(var.name) if var.is_bool
                        else self.model.add_var(var.name, var.lo, var.hi, integer=True))

    def const(self, var: DVar) -> None:
        self.out.append(self.model.add_var(var.name, var.lo, var.hi, integer=True))

    def exactly_one(self, lits: list[DVar]) -> None:
        self.add(quicksum(self.out[v.index] for v in lits) == 1)

    def at_most_one(self, lits: list[DVar]) -> None:
        self.add(quicksum(self.out[v.index] for v in lits) <= 1)

    def clause(self, lits: list[Literal]) -> None:
        """``sum(pos) + sum(1 - neg) >= 1``."""
        pos = [self.out[x.index] for x in lits if isinstance(x, DVar)]
        neg = [self.out[x.var.index] for x in lits if isinstance(x, Negated)]
        self.add(quicksum(pos) - quicksum(neg) >= 1 - len(neg))

    def implication(self, a: DVar, b: DVar) -> None:
        self.add(self.out[a.index] - self.out[b.index] <= 0)

    def linear(self, terms: Terms, lo: int | None, hi: int | None,
               enforce: Literal | None) -> None:
        """The bounds; with ``enforce``, relaxed by big-M (from the bounds) where it fails."""
        expr = self.sum(terms)
        low, high = _bounds(terms)
        off = 0 if enforce is None else 1 - self.lit(enforce)
        if lo is not None:
            self.add(expr + (lo - low) * off >= lo)
        if hi is not None:
            self.add(expr - (high - hi) * off <= hi)

    def channel(self, var: DVar, value: int, lit: DVar) -> None:
        chosen = dict(self.one_hot(var)).get(value)
        self.add(self.out[lit.index] - (chosen if chosen is not None else 0) == 0)

    def different(self, vars: list[DVar]) -> None:
        per: dict[int, list] = defaultdict(list)
        for var in vars:
            for value, b in self.one_hot(var):
                per[value].append(b)
        for value, bs in sorted(per.items()):
            if len(bs) > 1:
                self.add(quicksum(bs) <= 1)

    def pairs(self, rows: list, width: int) -> None:
        """Product binaries ``x >= first + second - 1``; at most one item per pair."""
        per: dict[tuple[int, int], list] = defaultdict(list)
        for item, (first, second) in enumerate(rows):
            second = self.choices(second)
            for s in range(width):
                in_s = quicksum(b for c, b in second if c == s)
                for p, lit in self.choices(first):
                    x = self.binary(f"{item}_{p}_{s}")
                    self.add(x - lit - in_s >= -1)
                    per[(p, s)].append(x)
        for key, xs in sorted(per.items()):
            if len(xs) > 1:
                self.add(quicksum(xs) <= 1)

    def table(self, vars: list[DVar], rows: list[tuple]) -> None:
        """One binary per row, exactly one chosen; each variable its chosen row's value."""
        pick = [self.binary(f"row{r}") for r in range(len(rows))]
        self.add(quicksum(pick) == 1)
        for j, var in enumerate(vars):
            self.add(self.out[var.index] - quicksum(row[j] * b for row, b in zip(rows, pick))
                     == 0)

    def min(self, target: DVar, exprs: list) -> None:
        """``target <= e`` for each, ``target >= e`` for the one a selector binary picks."""
        self._extreme(target, exprs, 1)

    def max(self, target: DVar, exprs: list) -> None:
        self._extreme(target, exprs, -1)

    def _extreme(self, target: DVar, exprs: list, sign: int) -> None:
        pick = [self.binary(f"pick{i}") for i in range(len(exprs))]
        self.add(quicksum(pick) == 1)
        t = self.out[target.index]
        for expr, chosen in zip(exprs, pick):
            low, high = _bounds(expr)
            e = self.sum(expr)
            if sign > 0:     # t <= e always; t >= e - big where not chosen
                self.add(t - e <= 0)
                self.add(t - e + (high - target.lo) * (1 - chosen) >= 0)
            else:            # t >= e always; t <= e + big where not chosen
                self.add(t - e >= 0)
                self.add(t - e - (target.hi - low) * (1 - chosen) <= 0)
