"""One solve of one model file on one backend, in a fresh process with a hard wall-clock cap.

The parent side is :func:`run_capped` (a module-level function, so that a Dask worker can run
it: the worker only waits for the child, and a solver that hangs or crashes takes its own
process down, never the worker). The child side is ``python -m benchmarks.solver_runs TASK OUT``
(:func:`main`), which calls :func:`solve_file` and writes its row as JSON to ``OUT``.

How a file reaches a backend
----------------------------
* ``.mps`` / ``.lp``: read once by HiGHS's reader into the arrays every backend of
  :mod:`formulations.solver` takes (:func:`read_arrays`), then solved by the backend's own
  solve function (the same translation the mapper uses). Reading the file is not timed;
  ``time`` is the backend's translation plus its solve.
* ``.pb.txt`` (CP-SAT protobuf text, written for models with CP constraints): CP-SAT only;
  every other backend reports ``unreadable``.
* CP-SAT takes all-integer models only: a model with continuous variables is ``unreadable``
  for it (the row says why).

Examples
--------
>>> model_kind("routing_g.mps"), model_kind("streaming_g_ii2.pb.txt"), model_kind("x.json")
('.mps', '.pb.txt', None)
>>> decision_of(model_name("/tmp/models/placement_fig9_section0.mps"))
'placement'
"""

from __future__ import annotations

import json
import math
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

import highspy
import numpy as np

from formulations.solver import ModelArrays, get_backend, load_cp_model, run_cp_sat, solve_options

__all__ = ["MODEL_KINDS", "REPO_ROOT", "model_kind", "model_name", "decision_of", "read_arrays",
           "arrays_size", "proto_size", "unreadable_row", "solve_file", "wall_cap_of", "READ_CAP",
           "run_capped", "main"]

#: File suffixes this benchmark reads (longest first).
MODEL_KINDS = (".pb.txt", ".mps", ".lp")
#: The repository root: the child imports ``benchmarks`` and ``formulations`` from here.
REPO_ROOT = Path(__file__).resolve().parents[1]
#: Seconds a solve may run past its time limit (translating the model for the backend, a
#: loaded machine; counted from the solver's start, after the file is read) ...
CAP_MARGIN = 20.0
#: ... plus this fraction of the time limit, before it is killed.
CAP_SLACK = 0.5
#: Seconds a child may spend starting and reading its model before its solve starts.
READ_CAP = 600.0
#: How often the parent looks at its child.
POLL_SECONDS = 0.1

Row = dict[str, Any]


def model_kind(path: str | os.PathLike) -> str | None:
    """The model file suffix of ``path`` (:data:`MODEL_KINDS`), None for other files."""
    name = str(path).lower()
    return next((kind for kind in MODEL_KINDS if name.endswith(kind)), None)


def model_name(path: str | os.PathLike) -> str:
    """The name a model goes by in the tables: its file name (suffix kept, so that the
    ``.mps`` twin and the ``.pb.txt`` of one schedule stay apart)."""
    return Path(path).name


def decision_of(name: str) -> str:
    """The decision a model exported by ``pipeline.run --export-models`` belongs to: the
    file name up to the first ``_`` (``sections``, ``buffers``, ``placement``, ``routing``,
    ``streaming``, ``cgra``; anything for other files)."""
    kind = model_kind(name)
    return (name[: -len(kind)] if kind else name).split("_", 1)[0]


def read_arrays(path: str | os.PathLike) -> ModelArrays:
    """Read an ``.mps``/``.lp`` file with HiGHS into :class:`ModelArrays` (rows in CSR).

    Raises
    ------
    ValueError
        When HiGHS cannot read the file.
    """
    h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    if h.readModel(str(path)) == highspy.HighsStatus.kError:
        raise ValueError(f"{path}: HiGHS cannot read this file as {model_kind(path)}")
    lp = h.getLp()
    n, m = int(lp.num_col_), int(lp.num_row_)
    a = lp.a_matrix_
    start, index = np.asarray(a.start_, dtype=np.int64), np.asarray(a.index_, dtype=np.int64)
    value = np.asarray(a.value_, dtype=float)
    if a.format_ == highspy.MatrixFormat.kColwise:   # turn columns into rows
        cols = np.repeat(np.arange(n), np.diff(start[: n + 1]))
        order = np.lexsort((cols, index))
        rows, index, value = index[order], cols[order], value[order]
        start = np.concatenate([[0], np.cumsum(np.bincount(rows, minlength=m))])
    integer = [t != highspy.HighsVarType.kContinuous for t in lp.integrality_] or [False] * n
    col_names = list(lp.col_names_) or [f"c{j}" for j in range(n)]
    row_names = list(lp.row_names_) or [f"r{i}" for i in range(m)]
    return ModelArrays(
        name=model_name(path), col_names=col_names, col_lb=np.asarray(lp.col_lower_, float),
        col_ub=np.asarray(lp.col_upper_, float), col_int=np.asarray(integer, dtype=bool),
        obj=np.asarray(lp.col_cost_, float), obj_const=float(lp.offset_),
        maximize=lp.sense_ == highspy.ObjSense.kMaximize, row_names=row_names,
        row_families=[""] * m, row_lo=np.asarray(lp.row_lower_, float),
        row_hi=np.asarray(lp.row_upper_, float), row_start=start.astype(np.int32),
        row_index=index.astype(np.int32), row_value=value, hint={})


def arrays_size(a: ModelArrays) -> Row:
    """Variables (integer ones too), constraints and nonzeros of ``a``."""
    return {"vars": a.n_vars, "int_vars": int(a.col_int.sum()), "cons": a.n_rows,
            "nonzeros": int(len(a.row_index))}


def proto_size(proto: Any) -> Row:
    """Variables, constraints and nonzeros of a CP-SAT model proto (nonzeros: the terms of
    linear constraints and of the objective, the literals of boolean constraints)."""
    nonzeros = len(proto.objective.vars)
    for ct in proto.constraints:
        if ct.has_linear():
            nonzeros += len(ct.linear.vars)
        for kind in ("bool_or", "bool_and", "at_most_one", "exactly_one", "bool_xor"):
            if getattr(ct, f"has_{kind}")():
                nonzeros += len(getattr(ct, kind).literals)
    n = len(proto.variables)
    return {"vars": n, "int_vars": n, "cons": len(proto.constraints), "nonzeros": nonzeros}


def unreadable_row(path: str, backend: str, why: str) -> Row:
    """The row of a file ``backend`` cannot take."""
    return {"model": model_name(path), "file": str(path), "backend": backend,
            "status": "unreadable", "note": why}


def solve_file(task: Row, on_start: Callable[[], None] | None = None) -> Row:
    """Solve ``task["file"]`` on ``task["backend"]`` with the task's ``time_limit``,
    ``threads``, ``seed`` and ``mip_gap``; always returns a row (never raises for a bad file).
    ``on_start`` is called when the model is read, just before the solver starts.
    """
    path, backend = str(task["file"]), str(task["backend"])
    kind = model_kind(path)
    if kind == ".pb.txt":
        if backend != "cp-sat":
            return unreadable_row(path, backend, "CP-SAT proto text: only cp-sat reads it")
        return _solve_proto(task, on_start)
    if kind is None:
        return unreadable_row(path, backend, "not a model file (.mps, .lp, .pb.txt)")
    try:
        arrays = read_arrays(path)
    except ValueError as exc:
        return unreadable_row(path, backend, str(exc))
    size = arrays_size(arrays)
    base = {"model": model_name(path), "file": path, "backend": backend,
            "sense": "max" if arrays.maximize else "min"} | size
    if backend == "cp-sat" and size["int_vars"] < size["vars"]:
        return base | {"status": "unreadable",
                       "note": f"{size['vars'] - size['int_vars']} continuous variables: "
                               "CP-SAT takes all-integer models only"}
    opts = solve_options(task["time_limit"], task["seed"], task["threads"], task.get("mip_gap"),
                         False)
    if on_start is not None:
        on_start()
    start = time.perf_counter()
    try:
        raw = get_backend(backend).solve(arrays, opts)
    except Exception as exc:  # noqa: BLE001 - a failing solver is a row, not a crash
        raw = {"status": None, "message": f"{type(exc).__name__}: {exc}"}
    return base | _raw_fields(raw, time.perf_counter() - start)


def _solve_proto(task: Row, on_start: Callable[[], None] | None) -> Row:
    path = str(task["file"])
    try:
        proto = load_cp_model(path)
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        return unreadable_row(path, "cp-sat", f"not CP-SAT proto text ({exc})")
    sense = "max" if proto.proto.objective.scaling_factor < 0 else "min"
    base = {"model": model_name(path), "file": path, "backend": "cp-sat",
            "sense": sense} | proto_size(proto.proto)
    if on_start is not None:
        on_start()
    start = time.perf_counter()
    try:
        raw = run_cp_sat(proto, task["time_limit"], task["seed"], task["threads"],
                         task.get("mip_gap"), False, variables="all")
    except Exception as exc:  # noqa: BLE001
        raw = {"status": None, "message": f"{type(exc).__name__}: {exc}"}
    return base | _raw_fields(raw, time.perf_counter() - start)


def _raw_fields(raw: Row, seconds: float) -> Row:
    """Status, objective, bound, gap, nodes, time and note from a backend's raw outcome."""
    status = raw.get("status")
    name = status.value if status is not None else "error"
    if raw.get("ambiguous"):   # HiGHS: "infeasible or unbounded", not a proof of either
        name = "infeasible_or_unbounded"
    objective = _finite(raw.get("objective")) if name in ("optimal", "feasible") else None
    bound = _finite(raw.get("bound")) if name in ("optimal", "feasible") else None
    gap = None
    if objective is not None and bound is not None:
        diff = abs(objective - bound)
        gap = 0.0 if diff <= 1e-9 * max(1.0, abs(objective)) else (
            diff / abs(objective) if objective else None)
    return {"status": name, "objective": objective, "bound": bound, "gap": gap,
            "nodes": raw.get("nodes"), "time": round(seconds, 4),
            "note": str(raw.get("message", ""))[:200]}


def _finite(x: Any) -> float | None:
    return float(x) if x is not None and math.isfinite(float(x)) else None


# ---------------------------------------------------------------------------------------------
# the parent side
# ---------------------------------------------------------------------------------------------
def wall_cap_of(time_limit: float) -> float:
    """Wall-clock seconds a solve with ``time_limit`` may run before its process is killed.

    >>> wall_cap_of(10.0)
    35.0
    """
    return float(time_limit) * (1.0 + CAP_SLACK) + CAP_MARGIN


def _child_env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO_ROOT), env.get("PYTHONPATH")]))
    return env


def run_capped(task: Row, command: list[str] | None = None) -> Row:
    """Run one task (``file``, ``backend``, ``time_limit``, ``threads``, ``seed``,
    ``mip_gap``; optional ``cap`` and ``read_cap`` seconds) in a fresh process; its row.

    The child writes ``OUT.started`` when its solver starts (after reading the file). The
    child and everything it started are killed when the solve outlives ``task["cap"]``
    (default :func:`wall_cap_of` the time limit), or when reading the model outlives
    ``task["read_cap"]`` (default :data:`READ_CAP`); the row then says ``killed``.
    ``command`` replaces the child's command line (tests use it to stand in a solver that
    ignores its limit); the row file path ``OUT`` is appended to it.
    """
    caps = (float(task.get("cap") or wall_cap_of(task["time_limit"])),
            float(task.get("read_cap") or READ_CAP))
    base = {"model": model_name(task["file"]), "file": str(task["file"]),
            "backend": task["backend"]}
    with tempfile.TemporaryDirectory(prefix="solver-bench-") as tmp:
        out, err_path = Path(tmp) / "row.json", Path(tmp) / "stderr.txt"
        argv = (list(command) if command is not None else
                [sys.executable, "-m", "benchmarks.solver_runs", json.dumps(task)]) + [str(out)]
        with open(err_path, "w", encoding="utf-8") as err:
            proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=err,
                                    stdin=subprocess.DEVNULL, start_new_session=True,
                                    env=_child_env(), cwd=str(REPO_ROOT))
            killed, wall = _watch(proc, out.with_name(out.name + ".started"), caps, task)
        if killed:
            return base | {"status": "killed", "time": None, "wall": wall, "note": killed}
        if out.is_file():
            return json.loads(out.read_text(encoding="utf-8")) | {"wall": wall}
        last = [line for line in err_path.read_text(errors="replace").splitlines()
                if line.strip()]
        return base | {"status": "error", "time": None, "wall": wall,
                       "note": f"the solver process died (exit {proc.returncode}): "
                               f"{last[-1][:200] if last else 'no output'}"}


def _watch(proc: subprocess.Popen, started: Path, caps: tuple[float, float], task: Row
           ) -> tuple[str | None, float]:
    """Wait for ``proc``; kill it past a cap. Returns (why it was killed or None, wall s)."""
    cap, read_cap = caps
    begin = time.perf_counter()
    solving_since = None
    while True:
        try:
            proc.wait(timeout=POLL_SECONDS)
            return None, round(time.perf_counter() - begin, 3)
        except subprocess.TimeoutExpired:
            pass
        now = time.perf_counter()
        if solving_since is None and started.exists():
            solving_since = now
        if solving_since is not None and now - solving_since > cap:
            why = (f"killed: the solve outlived its {cap:g} s wall-clock cap "
                   f"(time limit {task['time_limit']:g} s)")
        elif solving_since is None and now - begin > read_cap:
            why = f"killed: reading the model outlived its {read_cap:g} s cap"
        else:
            continue
        _kill_group(proc)
        return why, round(now - begin, 3)


def _kill_group(proc: subprocess.Popen) -> None:
    """Kill the child and everything it started (it leads its own session)."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    proc.wait()


def main(argv: list[str] | None = None) -> int:
    """``python -m benchmarks.solver_runs TASK_JSON OUT``: solve, write the row to OUT."""
    task_text, out_path = (argv if argv is not None else sys.argv[1:])[:2]
    row = solve_file(json.loads(task_text),
                     lambda: Path(f"{out_path}.started").write_text("", encoding="utf-8"))
    tmp = f"{out_path}.tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(row, f)
    os.replace(tmp, out_path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
