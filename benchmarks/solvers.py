"""Compare solver backends on your own graph or model files:
``python -m benchmarks.solvers GRAPH|DIR|FILE [--hardware H] [--backends LIST] [--time-limit S]
[--threads N] [--seed N] [--mip-gap G] [--out DIR] [--workers N] [--scheduler ADDRESS]``.

* GRAPH (any file ``pipeline.run`` reads, mapped on ``--hardware``): the mapper runs once
  with ``--export-models`` into a temporary folder, which writes every model the run builds
  (the section cut, the buffer balancing, placement and routing of every section, the
  Streaming Engine schedule, the CGRA schedule); on a Streaming Engine or a CGRA it runs a
  second time with ``--backend streaming=highs`` (the modulo schedule's decision) so that the
  schedule's MILP twin (``.mps``) is there for the MILP backends too. Options this command
  does not know (``--format``, ``--dim``,
  ``--batch``, ``--depth-per-pmu``, ...) are passed on to ``pipeline.run``.
* DIR or FILE: model files (``.mps``, ``.lp``, CP-SAT proto text ``.pb.txt``).

Every model is solved on every backend of ``--backends`` (default: every backend installed
here, :func:`formulations.solver.available_backends`) with the same time limit, thread count
(default 1), seed and relative MIP gap, each solve in a fresh process killed at a hard
wall-clock cap (:func:`benchmarks.solver_runs.wall_cap_of`). A backend that cannot read a
model gets the status ``unreadable`` in the table. ``--workers N`` / ``--scheduler ADDRESS``
spread the solves over Dask workers (:mod:`pipeline.cluster`); solves that share cores are
slower, so compare times only from runs with one solve per core (the default: one worker).

Exit codes: 0 done; 1 backends that claim optimality disagree (a bug in a backend or in a
model: the table, ``results.md`` and stderr say which); 2 bad input.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any, Callable

from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from benchmarks.solver_report import Settings, write_report
from benchmarks.solver_runs import (REPO_ROOT, model_kind, model_name, run_capped,
                                    unreadable_row, wall_cap_of)
from benchmarks.solver_stats import disagreements
from formulations.solver import available_backends, get_backend
from hardware import CgraSpec, InputError, StreamingEngineSpec, load_hardware
from pipeline.cluster import dask_client, run_tasks
from pipeline.outputs import prepare_out_dir

__all__ = ["DEFAULT_OUT", "EXIT_DISAGREE", "EXIT_BAD_INPUT", "build_parser", "parse_backends",
           "model_files", "export_models", "make_tasks", "main"]

#: Where results go unless ``--out`` says otherwise (one folder per graph or model folder).
DEFAULT_OUT = REPO_ROOT / "benchmarks" / "results" / "solvers"
EXIT_DISAGREE = 1
EXIT_BAD_INPUT = 2

Row = dict[str, Any]


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m benchmarks.solvers",
        description="Solve every model of a graph (or every model file of a folder) on every "
                    "solver backend with the same limits; tables, summary, agreement check "
                    "and performance profile. Unknown options go to pipeline.run.",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    p.add_argument("target", help="a graph file (anything pipeline.run reads), a folder of "
                                  "model files, or one model file (.mps, .lp, .pb.txt)")
    p.add_argument("--hardware", default="plasticine", help="graph only: preset or JSON file")
    p.add_argument("--backends", default=None,
                   help="comma-separated backends (highs, cp-sat, scip, cbc, pyomo-highs, "
                        "pyomo:NAME); default: every one installed here")
    p.add_argument("--time-limit", type=float, default=10.0, help="seconds per solve")
    p.add_argument("--threads", type=int, default=1, help="threads per solve")
    p.add_argument("--seed", type=int, default=0, help="random seed of every solve")
    p.add_argument("--mip-gap", type=float, default=1e-4,
                   help="relative MIP gap every backend stops at (and optimality is judged by)")
    p.add_argument("--build-time-limit", type=float, default=60.0,
                   help="graph only: seconds of the pipeline run that builds the models")
    p.add_argument("--out", default=None,
                   help="output folder (default: benchmarks/results/solvers/<name>)")
    p.add_argument("--keep-models", default=None, metavar="DIR",
                   help="graph only: keep the exported model files in DIR")
    p.add_argument("--workers", type=int, default=1, help="solves at the same time")
    p.add_argument("--scheduler", default=None, help="a Dask scheduler address")
    p.add_argument("--quiet", action="store_true", help="no progress output")
    return p


def parse_backends(text: str | None) -> list[str]:
    """The backends named in ``text`` (comma-separated), checked; every available one when
    None.

    Raises
    ------
    InputError
        For an unknown or unavailable backend (the message lists the available ones).

    Examples
    --------
    >>> parse_backends("highs, cp-sat")
    ['highs', 'cp-sat']
    >>> parse_backends("gurobi")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    hardware.errors.InputError: command line: --backends: unknown solver backend 'gurobi'; ...
    """
    if text is None:
        return available_backends()
    names = [n.strip() for n in text.split(",") if n.strip()]
    if not names:
        raise InputError("command line", "--backends", "names no backend",
                         f"name some of {', '.join(available_backends())}")
    for name in names:
        try:
            get_backend(name)
        except ValueError as exc:
            raise InputError("command line", "--backends", str(exc),
                             "drop it or install the solver") from None
    return list(dict.fromkeys(names))


def model_files(target: Path) -> list[Path]:
    """The model files of a folder (sorted; sub-folders not searched), or ``[target]``.

    Raises
    ------
    InputError
        When the folder holds no model file.
    """
    if target.is_file():
        return [target]
    files = sorted(p for p in target.iterdir() if p.is_file() and model_kind(p))
    if not files:
        raise InputError(str(target), "", "holds no model file (.mps, .lp, .pb.txt)",
                         "name a folder written by pipeline.run --export-models, or a graph")
    return files


def export_models(graph: Path, hardware: str, extra: list[str], args: argparse.Namespace,
                  models: Path, run_dir: Path, say: Callable[[str], None]) -> list[Path]:
    """Run ``pipeline.run`` on ``graph`` with ``--export-models models`` and ``--out run_dir``
    (twice on a Streaming Engine or a CGRA, see the module docstring); returns the model
    files written.

    Raises
    ------
    InputError
        When the pipeline refuses the input (its message is kept) or builds no model.
    """
    spec = load_hardware(hardware)
    runs = [[]] + ([["--backend", "streaming=highs"]]
                   if isinstance(spec, StreamingEngineSpec | CgraSpec) else [])
    for more in runs:
        say(f"building the models of {graph.name} on {hardware}"
            + (" (MILP twin of the schedule)" if more else ""))
        argv = [sys.executable, "-m", "pipeline.run", str(graph), "--hardware", hardware,
                "-o", str(run_dir), "--export-models", str(models),
                "--time-limit", f"{args.build_time_limit:g}", "--seed", str(args.seed),
                "--quiet", "--no-pictures", *more, *extra]
        done = subprocess.run(argv, capture_output=True, text=True, cwd=str(REPO_ROOT))
        if done.returncode == EXIT_BAD_INPUT:
            raise InputError(str(graph), "", "pipeline.run refused it: "
                             + done.stderr.strip().removeprefix("error: "), "see above")
        if done.returncode != 0:
            say(f"note: pipeline.run exited {done.returncode} (the models it built are "
                f"still compared): {done.stderr.strip()[-300:]}")
    files = sorted(p for p in models.iterdir() if p.is_file() and model_kind(p))
    if not files:
        raise InputError(str(graph), "", f"mapping it on {hardware} builds no model "
                         "(every decision was settled without a solver)",
                         "try another --hardware or a larger graph")
    return files


def make_tasks(files: list[Path], backends: list[str], args: argparse.Namespace
               ) -> tuple[list[Row], list[Row]]:
    """The solves to run, and the rows decided without one (a CP-SAT proto on a MILP
    backend is unreadable by its suffix alone)."""
    tasks, rows = [], []
    for path in files:
        for backend in backends:
            if model_kind(path) == ".pb.txt" and backend != "cp-sat":
                rows.append(unreadable_row(str(path), backend,
                                           "CP-SAT proto text: only cp-sat reads it"))
                continue
            tasks.append({"file": str(path), "backend": backend,
                          "time_limit": args.time_limit, "threads": args.threads,
                          "seed": args.seed, "mip_gap": args.mip_gap,
                          "cap": wall_cap_of(args.time_limit)})
    return tasks, rows


class _Progress:
    """A rich progress bar on a terminal, plain lines otherwise, nothing with --quiet."""

    def __init__(self, total: int, quiet: bool):
        self.quiet, self.total, self.count = quiet, total, 0
        self.bar = None
        if not quiet and sys.stderr.isatty():
            self.bar = Progress(TextColumn("{task.description}"), BarColumn(),
                                MofNCompleteColumn(), TimeElapsedColumn(), transient=True)
            self.bar.start()
            self.task = self.bar.add_task("solving", total=total)

    def done(self, _index: int, row: Row) -> None:
        self.count += 1
        text = (f"[{self.count}/{self.total}] {row['model']} on {row['backend']}: "
                f"{row['status']}" + (f" in {row['time']:.2f} s" if row.get("time") else ""))
        if self.bar is not None:   # the line scrolls above the bar
            self.bar.console.print(text, markup=False, highlight=False)
            self.bar.update(self.task, advance=1)
        elif not self.quiet:
            print(text, file=sys.stderr, flush=True)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.stop()


def _check_numbers(args: argparse.Namespace) -> None:
    for flag, value, ok in (("--time-limit", args.time_limit, args.time_limit > 0),
                            ("--threads", args.threads, args.threads >= 1),
                            ("--workers", args.workers, args.workers >= 1),
                            ("--mip-gap", args.mip_gap, args.mip_gap >= 0),
                            ("--build-time-limit", args.build_time_limit,
                             args.build_time_limit > 0)):
        if not ok:
            raise InputError("command line", flag, f"{value:g} is out of range",
                             "use a positive number (the gap may be 0)")


def _files(args: argparse.Namespace, extra: list[str], tmp: Path,
           say: Callable[[str], None]) -> tuple[list[Path], str]:
    """The model files to compare and the comparison's name."""
    target = Path(args.target)
    if not target.exists():
        raise InputError(args.target, "", "does not exist", "name a graph file, a folder of "
                         "model files or a model file")
    if target.is_dir() or model_kind(target):
        if extra:
            raise InputError("command line", " ".join(extra), "unknown options for model "
                             "files", "pipeline.run options apply to a graph only")
        return model_files(target), (target.name if target.is_dir() else model_name(target))
    models = Path(args.keep_models) if args.keep_models else tmp / "models"
    prepare_out_dir(models, option="--keep-models")
    return export_models(target, args.hardware, extra, args, models, tmp / "run", say), \
        f"{target.stem}-{Path(args.hardware).stem}"


def _solve_all(tasks: list[Row], args: argparse.Namespace) -> list[Row]:
    progress = _Progress(len(tasks), args.quiet)
    try:
        with dask_client(args.workers, args.scheduler) as client:
            return run_tasks(client, run_capped, [(task,) for task in tasks], progress.done)
    finally:
        progress.close()


def main(argv: list[str] | None = None) -> int:
    args, extra = build_parser().parse_known_args(argv)
    say = (lambda text: None) if args.quiet else (lambda text: print(text, file=sys.stderr))
    try:
        _check_numbers(args)
        backends = parse_backends(args.backends)
        with tempfile.TemporaryDirectory(prefix="solver-bench-") as tmp:
            files, name = _files(args, extra, Path(tmp), say)
            out = prepare_out_dir(args.out or DEFAULT_OUT / name)
            tasks, rows = make_tasks(files, backends, args)
            say(f"{len(files)} models x {len(backends)} backends: {len(tasks)} solves of at "
                f"most {args.time_limit:g} s")
            rows += _solve_all(tasks, args)
    except InputError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    source = args.target if args.keep_models is None else f"{args.target} -> {args.keep_models}"
    settings = Settings(name, tuple(backends), args.time_limit, args.threads, args.seed,
                        args.mip_gap, wall_cap_of(args.time_limit), source,
                        args.workers if args.scheduler is None else 0)
    found = disagreements(rows, args.mip_gap)
    written = write_report(rows, settings, found, out)
    for d in found:
        print(f"DISAGREEMENT (a backend or the model is wrong): {d.line()}", file=sys.stderr)
    say(f"results in {out}/ ({', '.join(written)})")
    return EXIT_DISAGREE if found else 0


if __name__ == "__main__":
    sys.exit(main())
