"""Why is a model infeasible? Answered in constraint families, not solver internals.

Every constraint of a :class:`~formulations.solver.linear.LinearModel` carries a family label
(``"capacity"``, ``"reach"``, ``"sibling"``, ``"memory"``, ...). :func:`explain_infeasible` runs a
*deletion filter over families*: it drops one family at a time and keeps the drop whenever the rest
is still infeasible, leaving an irreducible set of families that is infeasible together. An
*elastic filter* then names a few constraints of those families: every such constraint gets slack
variables, the total slack is minimised, and the constraints that need slack are reported -- their
names are the formulation's own (node and unit names), so the message reads in the user's terms.

Caveats
-------
* Families listed in ``keep`` (e.g. ``"assignment"``: every node must be placed) are never blamed
  and never relaxed; without ``keep`` a too-small capacity is reported together with the
  assignment constraints that need it, since neither is infeasible alone.
* When a feasibility check times out it counts as "not shown infeasible", so the family stays in
  the answer: the result is never smaller than the truth, but may be larger.
* ``time_limit`` is the total budget, split evenly over the solves.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Iterable

from .linear import INF, LinearModel, quicksum
from .result import SolveStatus

__all__ = ["diagnose_infeasible", "explain_infeasible", "Diagnosis", "BOUNDS"]

#: Pseudo-family reported when the variable bounds alone are infeasible.
BOUNDS = "(bounds)"


@dataclass(frozen=True)
class Diagnosis:
    """What makes a model infeasible.

    Attributes
    ----------
    status : str
        ``"infeasible"``, ``"feasible"`` or ``"unknown"`` (the full model could not be decided).
    families : tuple of str
        An irreducible set of constraint families that is infeasible (with the kept ones).
    constraints : dict of str to tuple of str
        For each family in ``families``, a few of its constraints that must be relaxed.
    kept : tuple of str
        Families that were never blamed.
    solves : int
        Number of solves used.
    """

    status: str
    families: tuple[str, ...] = ()
    constraints: dict[str, tuple[str, ...]] = field(default_factory=dict)
    kept: tuple[str, ...] = ()
    solves: int = 0

    def __str__(self) -> str:
        if self.status != "infeasible":
            return f"model is {self.status}"
        parts = [f"{_label(f)} (e.g. {', '.join(self.constraints.get(f, ())) or '-'})"
                 for f in self.families]
        text = "infeasible because of constraint families: " + "; ".join(parts)
        if self.kept:
            text += f"; together with: {', '.join(map(_label, self.kept))}"
        return text


def _label(family: str) -> str:
    return family or "(unlabelled)"


def diagnose_infeasible(model: LinearModel, backend: str = "highs", time_limit: float = 30.0,
                        seed: int = 0, keep: Iterable[str] = ()) -> list[str]:
    """The constraint families whose presence makes ``model`` infeasible ([] if feasible).

    Parameters
    ----------
    model : LinearModel
    backend : str
        Backend for the feasibility checks.
    time_limit : float
        Total seconds for all checks.
    seed : int
        Solver seed.
    keep : iterable of str
        Families never blamed (always present in the checks).

    Returns
    -------
    list of str
        Family labels, in the model's order; :data:`BOUNDS` if the bounds alone are infeasible.

    Examples
    --------
    >>> m = LinearModel("place")
    >>> x = [m.add_binary(f"place_n{i}") for i in range(3)]
    >>> for i in range(3):
    ...     _ = m.add(x[i] == 1, name=f"assign_n{i}", family="assignment")
    >>> _ = m.add(x[0] + x[1] + x[2] <= 2, name="cap_pcu0", family="capacity")
    >>> _ = m.add(x[0] + x[1] >= 1, name="reach_n0_n1", family="reach")
    >>> diagnose_infeasible(m)
    ['assignment', 'capacity']
    >>> diagnose_infeasible(m, keep=["assignment"])
    ['capacity']
    >>> print(explain_infeasible(m, keep=["assignment"]))
    infeasible because of constraint families: capacity (e.g. cap_pcu0); together with: assignment
    """
    return list(explain_infeasible(model, backend, time_limit, seed, keep).families)


def explain_infeasible(model: LinearModel, backend: str = "highs", time_limit: float = 30.0,
                       seed: int = 0, keep: Iterable[str] = (), max_names: int = 5) -> Diagnosis:
    """Like :func:`diagnose_infeasible`, with example constraints per family.

    Returns
    -------
    Diagnosis
        ``str(diagnosis)`` is a one-line explanation for the user.
    """
    families = list(model.families())
    kept = [f for f in families if f in set(keep)]
    candidates = [f for f in families if f not in set(kept)]
    checker = _Checker(model, backend, time_limit / (len(families) + 3), seed)
    full = checker.status(families)
    if full is not SolveStatus.INFEASIBLE:
        status = "feasible" if full.has_solution else "unknown"
        return Diagnosis(status, kept=tuple(kept), solves=checker.solves)
    needed = _deletion_filter(checker, candidates, kept)
    if not needed:  # the kept families alone are infeasible: blame among them
        needed, kept = _deletion_filter(checker, kept, []), []
    if not needed:
        return Diagnosis("infeasible", (BOUNDS,), {BOUNDS: ()}, (), checker.solves)
    names = _elastic_names(model, needed, kept, checker, max_names)
    return Diagnosis("infeasible", tuple(needed), names, tuple(kept), checker.solves)


class _Checker:
    """Feasibility checks of the model restricted to some families (objective dropped)."""

    def __init__(self, model: LinearModel, backend: str, time_limit: float, seed: int) -> None:
        self.model, self.backend, self.seed = model, backend, seed
        self.time_limit = max(time_limit, 0.05)
        self.solves = 0

    def status(self, families: Iterable[str]) -> SolveStatus:
        return self.solve(self.model.copy(families=families, objective=False)).status

    def solve(self, model: LinearModel):
        self.solves += 1
        return model.solve(backend=self.backend, time_limit=self.time_limit, seed=self.seed)


def _deletion_filter(checker: _Checker, candidates: list[str], kept: list[str]) -> list[str]:
    needed = list(candidates)
    for fam in candidates:
        trial = kept + [f for f in needed if f != fam]
        if checker.status(trial) is SolveStatus.INFEASIBLE:
            needed.remove(fam)
    return needed


def _elastic_names(model: LinearModel, needed: list[str], kept: list[str], checker: _Checker,
                   max_names: int) -> dict[str, tuple[str, ...]]:
    """A few constraints per needed family that must be relaxed (by minimum total slack)."""
    elastic, slack_rows = _elastic_model(model, set(needed), set(kept))
    result = checker.solve(elastic)
    names: dict[str, list[str]] = {f: [] for f in needed}
    if result.has_solution:
        for slack, (row, fam) in slack_rows.items():
            if result.values.get(slack, 0.0) > 1e-6 and len(names[fam]) < max_names \
                    and row not in names[fam]:
                names[fam].append(row)
    for fam in needed:  # fall back to the first constraints of the family
        if not names[fam]:
            names[fam] = model.constraint_names(fam)[:max_names]
    return {f: tuple(v) for f, v in names.items()}


def _elastic_model(model: LinearModel, needed: set[str], kept: set[str]):
    """Copy of the needed and kept rows; needed rows get slack, whose sum is minimised."""
    a = model.to_arrays()
    integer = bool(a.col_int.all())
    em = LinearModel(f"{model.name}_elastic")
    xs = [em.add_var(n, lb, ub, bool(i)) for n, lb, ub, i in
          zip(a.col_names, a.col_lb.tolist(), a.col_ub.tolist(), a.col_int.tolist())]
    slack_rows: dict[str, tuple[str, str]] = {}
    for r, fam in enumerate(a.row_families):
        if fam not in needed and fam not in kept:
            continue
        cols = a.row_index[a.row_start[r]:a.row_start[r + 1]].tolist()
        coefs = a.row_value[a.row_start[r]:a.row_start[r + 1]].tolist()
        row_vars, lo, hi = [xs[j] for j in cols], float(a.row_lo[r]), float(a.row_hi[r])
        if fam in needed:
            for side, sign, bound in (("lo", 1.0, lo), ("hi", -1.0, hi)):
                if math.isfinite(bound):
                    s = em.add_var(f"__slack_{side}_{r}", 0.0, INF, integer)
                    slack_rows[s.name] = (a.row_names[r], fam)
                    row_vars, coefs = row_vars + [s], coefs + [sign]
        em.add_row(row_vars, coefs, lo, hi, name=a.row_names[r], family=fam)
    em.minimize(quicksum(em.var(n) for n in slack_rows))
    return em, slack_rows
