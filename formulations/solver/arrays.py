"""The model as arrays, the common input of every backend, and the hint check.

Backends and model files read :class:`ModelArrays` only, never the model
builder (:mod:`.linear`), so the builder can solve and write itself without an
import circle.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["ModelArrays", "HintCheck", "check_hint", "FEASIBILITY_TOLERANCE",
           "INTEGRALITY_TOLERANCE"]

#: Relative tolerance of a bound or row in a hint check.
FEASIBILITY_TOLERANCE = 1e-6
#: Distance from an integer that a hinted integer variable may have.
INTEGRALITY_TOLERANCE = 1e-6


# ---------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class ModelArrays:
    """The model as numpy arrays (rows in CSR form), the common input of every backend."""

    name: str
    col_names: list[str]
    col_lb: np.ndarray
    col_ub: np.ndarray
    col_int: np.ndarray  # bool
    obj: np.ndarray
    obj_const: float
    maximize: bool
    row_names: list[str]
    row_families: list[str]
    row_lo: np.ndarray
    row_hi: np.ndarray
    row_start: np.ndarray  # int32, len n_rows + 1
    row_index: np.ndarray  # int32
    row_value: np.ndarray
    hint: dict[int, float]

    @property
    def n_vars(self) -> int:
        return len(self.col_names)

    @property
    def n_rows(self) -> int:
        return len(self.row_names)

    def row_ids(self) -> np.ndarray:
        """Row number of every nonzero (parallel to ``row_index``)."""
        return np.repeat(np.arange(self.n_rows), np.diff(self.row_start))

    def activities(self, x: np.ndarray) -> np.ndarray:
        """Row activities ``A @ x``."""
        return np.bincount(self.row_ids(), weights=self.row_value * x[self.row_index],
                           minlength=self.n_rows)


@dataclass(frozen=True)
class HintCheck:
    """Outcome of checking a hint against bounds, integrality and constraints."""

    status: str  # "none" | "accepted" | "partial" | "infeasible"
    violations: tuple[str, ...] = ()




# ---------------------------------------------------------------------------------------------
def check_hint(arrays: ModelArrays, max_names: int = 50) -> HintCheck:
    """Check ``arrays.hint`` against bounds, integrality and every fully hinted row.

    Returns
    -------
    HintCheck
        ``"none"`` without a hint; ``"infeasible"`` with the names of what it violates (at most
        ``max_names``); ``"accepted"`` for a complete feasible hint; ``"partial"`` otherwise.
    """
    if not arrays.hint:
        return HintCheck("none")
    n = arrays.n_vars
    x = np.zeros(n)
    hinted = np.zeros(n, dtype=bool)
    cols = np.fromiter(arrays.hint.keys(), dtype=np.int64, count=len(arrays.hint))
    x[cols] = np.fromiter(arrays.hint.values(), dtype=float, count=len(arrays.hint))
    hinted[cols] = True
    violations = _bound_violations(arrays, x, hinted)
    violations += _row_violations(arrays, x, hinted)
    if violations:
        return HintCheck("infeasible", tuple(violations[:max_names]))
    return HintCheck("accepted" if hinted.all() else "partial")


def _bound_violations(arrays: ModelArrays, x: np.ndarray, hinted: np.ndarray) -> list[str]:
    tol = FEASIBILITY_TOLERANCE * np.maximum(1.0, np.abs(x))
    bad_bound = hinted & ((x < arrays.col_lb - tol) | (x > arrays.col_ub + tol))
    bad_int = hinted & arrays.col_int & (np.abs(x - np.round(x)) > INTEGRALITY_TOLERANCE)
    out = [f"bound:{arrays.col_names[j]}" for j in np.flatnonzero(bad_bound)]
    out += [f"integrality:{arrays.col_names[j]}" for j in np.flatnonzero(bad_int)]
    return out


def _row_violations(arrays: ModelArrays, x: np.ndarray, hinted: np.ndarray) -> list[str]:
    if arrays.n_rows == 0:
        return []
    rows = arrays.row_ids()
    missing = np.bincount(rows, weights=~hinted[arrays.row_index], minlength=arrays.n_rows)
    act = arrays.activities(x)
    tol = FEASIBILITY_TOLERANCE * np.maximum(1.0, np.abs(act))
    bad = (missing == 0) & ((act < arrays.row_lo - tol) | (act > arrays.row_hi + tol))
    return [arrays.row_names[r] for r in np.flatnonzero(bad)]
