"""The numbers of a solver comparison: shifted geometric means, wins, performance profiles,
and the check that backends claiming optimality agree.

The rules follow the settled way of comparing MIP solvers (H. Mittelmann's benchmarks on
MIPLIB 2017; E. Dolan and J. Moré, "Benchmarking optimization software with performance
profiles", Math. Programming 91, 2002):

* a model is *solved* by a backend when the backend proved its outcome: optimal (within the
  common relative gap), infeasible or unbounded;
* every other outcome (a solution without proof, no solution, an error, a killed process)
  counts at the time limit in the shifted geometric mean (:func:`shifted_geomean`, shift 10 s)
  and as never solved (ratio infinity) in the performance profile (:func:`performance_profile`);
* a *win* is a solved model on which the backend was fastest, ties within
  :data:`TIE_RELATIVE` or :data:`TIE_SECONDS` counting for each tied backend.

Rows are plain dicts with at least ``model``, ``backend``, ``status`` and ``time`` (seconds);
``objective``, ``bound`` and ``sense`` (``"min"``/``"max"``) for :func:`disagreements`.

Examples
--------
>>> round(shifted_geomean([1.0, 100.0], shift=10.0), 4)   # sqrt(11 * 110) - 10
24.7851
>>> solved({"status": "optimal"}), solved({"status": "feasible"})
(True, False)
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Iterable, Sequence

__all__ = ["SOLVED", "SHIFT", "TIE_RELATIVE", "TIE_SECONDS", "TIME_FLOOR", "solved",
           "shifted_geomean", "charged_time", "time_matrix", "performance_ratios",
           "performance_profile", "wins", "best_solutions", "summarize", "BEST_RELATIVE",
           "Disagreement", "disagreements", "agreement_tolerance"]

#: Statuses that end a solve with a proof.
SOLVED = ("optimal", "infeasible", "unbounded")
#: Shift of the geometric mean of times, in seconds (Mittelmann's convention).
SHIFT = 10.0
#: Two times tie for a win when within this fraction of the faster one ...
TIE_RELATIVE = 0.05
#: ... or within this many seconds (clock noise of a fresh process).
TIE_SECONDS = 0.01
#: Times below this count as this in performance ratios (a 1 ms and a 3 ms solve tie).
TIME_FLOOR = 0.01
#: Objectives within this fraction of the best one found count as best too.
BEST_RELATIVE = 1e-4

Row = dict[str, Any]


def solved(row: Row) -> bool:
    """Whether ``row``'s backend proved its outcome (see :data:`SOLVED`)."""
    return row.get("status") in SOLVED


def shifted_geomean(times: Sequence[float], shift: float = SHIFT) -> float | None:
    """``exp(mean(log(t + shift))) - shift``; None for no times.

    Examples
    --------
    >>> shifted_geomean([5.0, 5.0]), shifted_geomean([])
    (5.0, None)
    >>> round(shifted_geomean([0.0, 30.0]), 4)   # sqrt(10 * 40) - 10
    10.0
    """
    if not times:
        return None
    logs = [math.log(max(0.0, float(t)) + shift) for t in times]
    return math.exp(sum(logs) / len(logs)) - shift


def charged_time(row: Row, time_limit: float) -> float:
    """The time a row counts for: its time when solved (at most the limit), else the limit.

    >>> charged_time({"status": "optimal", "time": 2.5}, 10), charged_time({"status": "killed"}, 10)
    (2.5, 10)
    """
    if solved(row) and row.get("time") is not None:
        return min(float(row["time"]), time_limit)
    return time_limit


def time_matrix(rows: Iterable[Row], models: Sequence[str], backends: Sequence[str]
                ) -> list[list[float]]:
    """``t[p][s]``: seconds of backend ``s`` on model ``p`` when solved, ``inf`` otherwise
    (also when the pair has no row)."""
    by_pair = {(r["model"], r["backend"]): r for r in rows}
    out = []
    for model in models:
        line = []
        for backend in backends:
            row = by_pair.get((model, backend))
            ok = row is not None and solved(row) and row.get("time") is not None
            line.append(float(row["time"]) if ok else math.inf)
        out.append(line)
    return out


def performance_ratios(times: Sequence[Sequence[float]], floor: float = TIME_FLOOR
                       ) -> list[list[float]]:
    """Dolan--Moré ratios ``r[p][s] = t[p][s] / min_s t[p][s]`` (times below ``floor`` count
    as ``floor``); ``inf`` where ``s`` did not solve ``p``, or where nobody did.

    Examples
    --------
    >>> performance_ratios([[1.0, 2.0], [4.0, math.inf], [math.inf, math.inf]])
    [[1.0, 2.0], [1.0, inf], [inf, inf]]
    """
    out = []
    for line in times:
        clipped = [max(t, floor) for t in line]
        best = min(clipped, default=math.inf)
        out.append([t / best if math.isfinite(t) and math.isfinite(best) else math.inf
                    for t in clipped])
    return out


def performance_profile(ratios: Sequence[Sequence[float]], taus: Sequence[float]
                        ) -> list[list[float]]:
    """``rho[s][k]``: the fraction of models on which backend ``s``'s ratio is at most
    ``taus[k]`` (every model counts in the denominator, also those nobody solved).

    Examples
    --------
    >>> r = [[1.0, 2.0], [1.0, math.inf], [3.0, 1.0], [math.inf, math.inf]]
    >>> performance_profile(r, [1.0, 2.0, 3.0])
    [[0.5, 0.5, 0.75], [0.25, 0.5, 0.5]]
    """
    n = len(ratios)
    n_backends = len(ratios[0]) if ratios else 0
    return [[sum(1 for line in ratios if line[s] <= tau) / n if n else 0.0 for tau in taus]
            for s in range(n_backends)]


def wins(times: Sequence[Sequence[float]], n_backends: int | None = None) -> list[int]:
    """Per backend: models it solved fastest (ties within :data:`TIE_RELATIVE` or
    :data:`TIE_SECONDS` of the fastest count for each).

    >>> wins([[1.0, 1.02], [5.0, 2.0], [math.inf, 3.0], [math.inf, math.inf]])
    [1, 3]
    """
    counts = [0] * (n_backends if n_backends is not None else len(times[0]) if times else 0)
    for line in times:
        best = min(line, default=math.inf)
        if not math.isfinite(best):
            continue
        margin = max(best * TIE_RELATIVE, TIE_SECONDS)
        for s, t in enumerate(line):
            if t <= best + margin:
                counts[s] += 1
    return counts


def summarize(rows: Sequence[Row], backends: Sequence[str], time_limit: float) -> list[Row]:
    """One row per backend: what it took, solved, and how fast (see the module docstring).

    The shifted geometric mean and the wins are over the models every backend of
    ``backends`` could read (``common`` models), so the numbers compare like with like;
    ``unreadable`` counts the models a backend could not take. A backend that reads none of
    ``rows``' models (CP-SAT on LP models) is left out of that comparison (common 0), so
    that the others are still compared.

    Examples
    --------
    >>> rows = [{"model": "a", "backend": "x", "status": "optimal", "time": 1.0},
    ...         {"model": "a", "backend": "y", "status": "killed", "time": None},
    ...         {"model": "b", "backend": "x", "status": "unreadable", "time": None},
    ...         {"model": "b", "backend": "y", "status": "optimal", "time": 2.0}]
    >>> [(s["backend"], s["solved"], s["common"], s["sgm_time"], s["wins"])
    ...  for s in summarize(rows, ["x", "y"], 10.0)]
    [('x', 1, 1, 1.0, 1), ('y', 1, 1, 10.0, 0)]
    """
    models = sorted({r["model"] for r in rows})
    mine = {b: [r for r in rows if r["backend"] == b] for b in backends}
    active = [b for b in backends if any(r["status"] != "unreadable" for r in mine[b])]
    unreadable = {r["model"] for r in rows if r["status"] == "unreadable"
                  and r["backend"] in active}
    common = [m for m in models if m not in unreadable]
    times = time_matrix(rows, common, active)
    won = dict(zip(active, wins(times, len(active))))
    best = dict(zip(active, best_solutions(rows, common, active)))
    common_set = set(common)
    out = []
    for backend in backends:
        taken = [r for r in mine[backend] if r["status"] != "unreadable"]
        on_common = [r for r in taken if r["model"] in common_set]
        charged = [charged_time(r, time_limit) for r in on_common]
        out.append({"backend": backend, "models": len(taken),
                    "unreadable": len(mine[backend]) - len(taken),
                    "solved": sum(1 for r in taken if solved(r)),
                    "optimal": sum(1 for r in taken if r["status"] == "optimal"),
                    "feasible": sum(1 for r in taken if r["status"] == "feasible"),
                    "failed": sum(1 for r in taken if r["status"] in
                                  ("timeout_no_solution", "error", "killed")),
                    "common": len(on_common),
                    "sgm_time": _round(shifted_geomean(charged)),
                    "wins": won.get(backend, 0),
                    "best": best.get(backend, 0)})
    return out


def best_solutions(rows: Sequence[Row], models: Sequence[str], backends: Sequence[str]
                   ) -> list[int]:
    """Per backend: models on which its solution is the best any backend found (within
    :data:`BEST_RELATIVE`, at least 1e-6 absolute; solved or not, by the model's sense):
    the quality count for models nobody proves.

    >>> rows = [{"model": "p", "backend": "a", "status": "feasible", "objective": 10.0},
    ...         {"model": "p", "backend": "b", "status": "feasible", "objective": 12.0},
    ...         {"model": "q", "backend": "a", "status": "optimal", "objective": 3.0,
    ...          "sense": "max"},
    ...         {"model": "q", "backend": "b", "status": "optimal", "objective": 3.0,
    ...          "sense": "max"}]
    >>> best_solutions(rows, ["p", "q"], ["a", "b"])
    [2, 1]
    """
    counts = dict.fromkeys(backends, 0)
    wanted = set(models)
    by_model: dict[str, list[Row]] = {}
    for row in rows:
        if row["model"] in wanted and row["backend"] in counts \
                and row.get("status") in ("optimal", "feasible") \
                and row.get("objective") is not None:
            by_model.setdefault(row["model"], []).append(row)
    for group in by_model.values():
        sign = -1.0 if (group[0].get("sense") or "min") == "max" else 1.0
        top = min(sign * float(r["objective"]) for r in group)
        margin = max(1e-6, BEST_RELATIVE * abs(top))
        for row in group:
            if sign * float(row["objective"]) <= top + margin:
                counts[row["backend"]] += 1
    return [counts[b] for b in backends]


def _round(x: float | None) -> float | None:
    return None if x is None else round(x, 4)


@dataclass(frozen=True)
class Disagreement:
    """Two backends that cannot both be right about one model."""

    model: str
    claimant: str
    other: str
    detail: str

    def line(self) -> str:
        return f"{self.model}: {self.claimant} vs {self.other}: {self.detail}"


def agreement_tolerance(a: float, b: float, mip_gap: float) -> float:
    """How far two objectives may lie apart and still agree: each may be ``mip_gap`` off
    the optimum (relative), plus 1e-6 relative (at least 1e-6 absolute) for rounding.

    >>> agreement_tolerance(100.0, 100.0, 1e-4)
    0.0201
    """
    scale = max(1.0, abs(a), abs(b))
    return 2.0 * mip_gap * max(abs(a), abs(b)) + 1e-6 * scale


def disagreements(rows: Sequence[Row], mip_gap: float) -> list[Disagreement]:
    """Contradictions between backends on the same model.

    A backend that claims optimality at ``z`` contradicts another backend's optimum
    (outside :func:`agreement_tolerance`), a better solution found by another backend,
    a proven bound of another backend on the wrong side of ``z``, and another backend's
    proof of infeasibility; a proof of infeasibility contradicts any solution found.
    Each contradiction is reported once per pair.

    Examples
    --------
    >>> rows = [{"model": "m", "backend": "a", "status": "optimal", "objective": 10.0,
    ...          "bound": 10.0, "sense": "min"},
    ...         {"model": "m", "backend": "b", "status": "feasible", "objective": 9.0,
    ...          "bound": 8.0, "sense": "min"}]
    >>> [d.line() for d in disagreements(rows, 0.0)]
    ['m: a vs b: a claims optimal 10 but b found 9 (min)']
    """
    by_model: dict[str, list[Row]] = {}
    for row in rows:
        by_model.setdefault(row["model"], []).append(row)
    found: list[Disagreement] = []
    for model in sorted(by_model):
        group = sorted(by_model[model], key=lambda r: r["backend"])
        for claim in group:
            proof = claim["status"] == "infeasible" or (
                claim["status"] == "optimal" and claim.get("objective") is not None)
            if not proof:
                continue
            for other in group:
                if other is claim:
                    continue
                detail = _contradiction(claim, other, mip_gap)
                if detail and not _seen(found, model, claim["backend"], other["backend"]):
                    found.append(Disagreement(model, claim["backend"], other["backend"], detail))
    return found


def _seen(found: list[Disagreement], model: str, a: str, b: str) -> bool:
    return any(d.model == model and {d.claimant, d.other} == {a, b} for d in found)


def _contradiction(claim: Row, other: Row, mip_gap: float) -> str | None:
    """Why ``other`` contradicts ``claim``'s optimum (or its proof of infeasibility), or None."""
    name, o = claim["backend"], other["backend"]
    if claim["status"] == "infeasible":
        if other["status"] in ("optimal", "feasible") and other.get("objective") is not None:
            return f"{name} proved the model infeasible but {o} found a solution"
        return None
    z = float(claim["objective"])
    sense = claim.get("sense") or "min"
    sign = 1.0 if sense == "min" else -1.0   # work in minimisation terms
    if other["status"] == "infeasible":
        return f"{name} claims optimal {z:g} but {o} proved the model infeasible"
    value, bound = other.get("objective"), other.get("bound")
    if other["status"] == "optimal" and value is not None:
        if abs(z - value) > agreement_tolerance(z, value, mip_gap):
            return f"both claim optimal: {name} {z:g}, {o} {value:g} ({sense})"
        return None
    if other["status"] == "feasible" and value is not None:
        if sign * (z - value) > agreement_tolerance(z, value, mip_gap):
            return f"{name} claims optimal {z:g} but {o} found {value:g} ({sense})"
    if other["status"] in ("feasible", "optimal") and bound is not None \
            and math.isfinite(bound) \
            and sign * (bound - z) > agreement_tolerance(z, bound, mip_gap):
        return f"{name} claims optimal {z:g} but {o} proved the bound {bound:g} ({sense})"
    return None
