"""One result type for every solve, whatever the backend.

Every model in the mapper -- a MILP built with :class:`~formulations.solver.linear.LinearModel`
or a CP-SAT model -- is solved into a :class:`SolveResult`: the status, the objective, the best
bound, the relative gap, the wall time, the backend name, the model size, the values of the
variables (by name, for decoding) and what became of the warm-start hint.

Caveats
-------
* ``gap`` is computed the same way for every backend, ``|objective - bound| / |objective|``
  (the HiGHS and Gurobi convention); it is ``0.0`` when objective and bound agree to 1e-9,
  and ``None`` when unknown (no solution, no bound, or a zero objective with a non-zero bound).
* Objective and bound are in the model's own sense (a maximisation reports its maximum).
"""

from __future__ import annotations

import enum
import math
from dataclasses import dataclass, field
from typing import Any

__all__ = ["SolveStatus", "SolveResult", "HINT_STATUSES", "relative_gap"]

#: The allowed values of :attr:`SolveResult.hint_status`.
HINT_STATUSES = ("none", "accepted", "partial", "infeasible")


class SolveStatus(enum.Enum):
    """Outcome of a solve, the same for every backend.

    Examples
    --------
    >>> SolveStatus.OPTIMAL.value
    'optimal'
    >>> SolveStatus("infeasible") is SolveStatus.INFEASIBLE
    True
    """

    OPTIMAL = "optimal"
    FEASIBLE = "feasible"  # a solution, not proven optimal (time limit, gap limit)
    INFEASIBLE = "infeasible"
    UNBOUNDED = "unbounded"
    TIMEOUT_NO_SOLUTION = "timeout_no_solution"
    ERROR = "error"

    @property
    def has_solution(self) -> bool:
        """True for OPTIMAL and FEASIBLE."""
        return self in (SolveStatus.OPTIMAL, SolveStatus.FEASIBLE)


def relative_gap(objective: float | None, bound: float | None) -> float | None:
    """Relative gap ``|objective - bound| / |objective|``, None when unknown.

    Parameters
    ----------
    objective, bound : float or None
        The incumbent objective and the best proven bound.

    Returns
    -------
    float or None
        ``0.0`` when both agree to 1e-9; None when either is missing or not finite, or when the
        objective is zero and the bound is not.

    Examples
    --------
    >>> relative_gap(10.0, 8.0)
    0.2
    >>> relative_gap(3.0, 3.0)
    0.0
    >>> relative_gap(None, 3.0) is None
    True
    """
    if objective is None or bound is None:
        return None
    if not (math.isfinite(objective) and math.isfinite(bound)):
        return None
    diff = abs(objective - bound)
    if diff <= 1e-9 * max(1.0, abs(objective)):
        return 0.0
    if objective == 0:
        return None
    return diff / abs(objective)


@dataclass(frozen=True)
class SolveResult:
    """The outcome of one solve.

    Parameters
    ----------
    status : SolveStatus
        Outcome of the solve.
    objective : float or None
        Objective of the best solution found (model sense), None without a solution.
    bound : float or None
        Best proven bound on the objective, None when the backend does not report one.
    gap : float or None
        Relative gap, see :func:`relative_gap`.
    wall_time : float
        Seconds spent, including building the backend's model.
    backend : str
        Registry name of the backend (``"highs"``, ``"cp-sat"``, ...).
    n_vars, n_constraints : int
        Model size.
    values : dict of str to float
        Value of every (named) variable in the best solution; empty without a solution.
    message : str
        Human-readable detail: the backend's own status, an error, a note about the hint.
    hint_status : str
        ``"none"`` (no hint), ``"accepted"`` (complete and feasible), ``"partial"`` (some variables
        hinted, no violation found), or ``"infeasible"`` (violates bounds or constraints).
    hint_violations : tuple of str
        Names of the constraints (or ``"bound:<var>"``, ``"integrality:<var>"``) the hint violates.
    model_name : str
        Name of the model solved.

    Examples
    --------
    >>> r = SolveResult(SolveStatus.OPTIMAL, objective=3.0, bound=3.0, gap=0.0,
    ...                 backend="highs", n_vars=2, n_constraints=1, values={"x": 3.0})
    >>> r.has_solution, r.value("x")
    (True, 3.0)
    >>> r.to_dict()["status"]
    'optimal'
    """

    status: SolveStatus
    objective: float | None = None
    bound: float | None = None
    gap: float | None = None
    wall_time: float = 0.0
    backend: str = ""
    n_vars: int = 0
    n_constraints: int = 0
    values: dict[str, float] = field(default_factory=dict, repr=False, compare=False)
    message: str = ""
    hint_status: str = "none"
    hint_violations: tuple[str, ...] = ()
    model_name: str = ""

    def __post_init__(self) -> None:
        if self.hint_status not in HINT_STATUSES:
            raise ValueError(f"hint_status must be one of {HINT_STATUSES}, "
                             f"got {self.hint_status!r}")

    @property
    def has_solution(self) -> bool:
        """True when the result carries a solution (OPTIMAL or FEASIBLE)."""
        return self.status.has_solution

    def value(self, var: Any, default: float | None = None) -> float | None:
        """Value of a variable (a name, or any object with a ``name`` attribute)."""
        name = var if isinstance(var, str) else var.name
        return self.values.get(name, default)

    def to_dict(self, include_values: bool = False) -> dict[str, Any]:
        """A JSON-ready dict for mapping.json and reports (non-finite numbers become None).

        Parameters
        ----------
        include_values : bool, default False
            Also include the variable values (can be large).
        """
        out: dict[str, Any] = {
            "backend": self.backend,
            "model": self.model_name,
            "status": self.status.value,
            "objective": _finite_or_none(self.objective),
            "bound": _finite_or_none(self.bound),
            "gap": _finite_or_none(self.gap),
            "wall_time": round(self.wall_time, 6),
            "n_vars": self.n_vars,
            "n_constraints": self.n_constraints,
            "hint_status": self.hint_status,
            "hint_violations": list(self.hint_violations),
            "message": self.message,
        }
        if include_values:
            out["values"] = dict(self.values)
        return out


def _finite_or_none(x: float | None) -> float | None:
    if x is None or not math.isfinite(x):
        return None
    return float(x)
