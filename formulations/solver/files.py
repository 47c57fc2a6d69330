"""Model files: write any model by suffix, and solve a written file again.

``--export-models DIR`` writes every model built: a :class:`~formulations.solver.linear.LinearModel`
as ``.mps`` or ``.lp`` (CPLEX LP), a CP-SAT model as protobuf text ``.pb.txt``.
:func:`solve_model_file` reads such a file with a solver of choice, which is how the round trip
"written by one, solved by another" is checked.

Caveats
-------
* ``.lp`` files are written and read by HiGHS; OR-Tools' LP reader does not read them, so SCIP
  reads ``.mps`` only.
* A CP-SAT model cannot be written as ``.mps``; keep linear models in a :class:`LinearModel`.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import numpy as np

from ._highs import solve_file
from ._ortools_lp import solve_mps_file_scip
from .backends import solve_options
from .cp import export_cp_model, load_cp_model, solve_cp_model
from .linear import LinearModel
from .result import SolveResult, SolveStatus, relative_gap

__all__ = ["write_model_file", "solve_model_file", "MODEL_SUFFIXES"]

#: Suffixes understood by :func:`write_model_file` and :func:`solve_model_file`.
MODEL_SUFFIXES = (".mps", ".lp", ".pb.txt")


def _suffix(path: str | Path) -> str:
    name = str(path).lower()
    for suffix in MODEL_SUFFIXES:
        if name.endswith(suffix):
            return suffix
    raise ValueError(f"{path}: unknown model file suffix; use one of {', '.join(MODEL_SUFFIXES)}")


def write_model_file(model: Any, path: str | Path) -> Path:
    """Write a LinearModel (``.mps``/``.lp``) or a CpModel (``.pb.txt``) to ``path``.

    Returns
    -------
    Path
        The path written.

    Raises
    ------
    ValueError
        For an unknown suffix or a model/suffix mismatch.

    Examples
    --------
    >>> import os, tempfile
    >>> m = LinearModel("tiny")
    >>> x = m.add_var("x", ub=3, integer=True); m.maximize(x)
    >>> path = write_model_file(m, os.path.join(tempfile.mkdtemp(), "tiny.mps"))
    >>> solve_model_file(path, backend="scip").objective
    3.0
    """
    from ortools.sat.python import cp_model


    path = Path(path)
    suffix = _suffix(path)
    if isinstance(model, LinearModel) and suffix == ".mps":
        model.write_mps(str(path))
    elif isinstance(model, LinearModel) and suffix == ".lp":
        model.write_lp(str(path))
    elif isinstance(model, cp_model.CpModel) and suffix == ".pb.txt":
        export_cp_model(model, str(path))
    else:
        raise ValueError(f"{path}: cannot write a {type(model).__name__} as {suffix} "
                         f"(LinearModel: .mps/.lp, CpModel: .pb.txt)")
    return path


def solve_model_file(path: str | Path, backend: str = "highs", time_limit: float = 10.0,
                     seed: int = 0, threads: int = 1, mip_gap: float | None = None,
                     verbose: bool = False, options=None) -> SolveResult:
    """Read a model file and solve it.

    Parameters
    ----------
    path : str or Path
        ``.mps`` / ``.lp`` (``backend`` ``"highs"``, or ``"scip"`` for ``.mps``) or ``.pb.txt``
        (CP-SAT, whatever ``backend`` says).
    backend, time_limit, seed, threads, mip_gap, verbose, options
        As in :func:`formulations.solver.backends.solve`.

    Returns
    -------
    SolveResult
        Values are keyed by the names in the file; read errors become status ERROR.
    """
    suffix = _suffix(path)
    if suffix == ".pb.txt":
        return solve_cp_model(load_cp_model(str(path)), time_limit, seed, threads, None,
                              mip_gap=mip_gap, verbose=verbose, name=Path(path).name,
                              params=options)
    opts = solve_options(time_limit, seed, threads, mip_gap, verbose, options)
    reader = _file_reader(backend, suffix)
    start = time.perf_counter()
    try:
        raw = reader(str(path), opts)
    except Exception as exc:  # noqa: BLE001 - a failed solve is a result, not a crash
        raw = {"status": SolveStatus.ERROR, "message": f"{type(exc).__name__}: {exc}"}
    return _file_result(raw, backend, time.perf_counter() - start, Path(path).name)


def _file_reader(backend: str, suffix: str):
    if backend == "highs":
        return solve_file
    if backend == "scip" and suffix == ".mps":
        return solve_mps_file_scip
    raise ValueError(f"cannot solve a {suffix} file with backend {backend!r}; "
                     f"use 'highs' ({suffix}) or 'scip' (.mps)")


def _file_result(raw: dict, backend: str, wall: float, name: str) -> SolveResult:
    status = raw["status"]
    values: dict[str, float] = {}
    if status.has_solution:
        x = np.asarray(raw["values"], dtype=float)
        if raw.get("col_int"):
            x = np.where(np.asarray(raw["col_int"], dtype=bool), np.round(x), x) + 0.0
        values = dict(zip(raw["col_names"], x.tolist()))
    objective = raw.get("objective") if status.has_solution else None
    bound = raw.get("bound") if status.has_solution else None
    return SolveResult(status=status, objective=objective, bound=bound,
                       gap=relative_gap(objective, bound), wall_time=wall, backend=backend,
                       n_vars=raw.get("n_vars", 0), n_constraints=raw.get("n_constraints", 0),
                       values=values, message=raw.get("message", ""), model_name=name)
