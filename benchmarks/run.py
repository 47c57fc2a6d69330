"""The benchmark harness: ``python -m benchmarks.run [--suite NAME|all] [--quick] [--out DIR]``.

Runs the registered suites (:mod:`benchmarks.registry`), each entry in a fresh
Python subprocess (:mod:`benchmarks.worker`) with its own timeout, so an
entry's peak memory is its own and a hung or crashing entry costs one row,
not the run. Writes ``<suite>.csv`` and ``<suite>.md`` (``<suite>-quick.*`` for
``--quick``) under ``benchmarks/results/`` and prints the markdown table;
progress lines go to stderr.

Caveats: times are wall-clock on a possibly shared machine; the markdown file
records the machine line so numbers are read with their context.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable, TextIO

from benchmarks.registry import Entry, Suite, get_suite, suites
from benchmarks.tables import write_tables
from hardware import InputError
from pipeline.cluster import dask_client, run_tasks

__all__ = ["REPO_ROOT", "DEFAULT_OUT", "run_isolated", "run_suite", "main"]

#: The repository root (the children import ``benchmarks`` from here).
REPO_ROOT = Path(__file__).resolve().parents[1]
#: Where the tables go unless ``--out`` says otherwise.
DEFAULT_OUT = REPO_ROOT / "benchmarks" / "results"

Log = Callable[[str], None]


def _child_env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO_ROOT), env.get("PYTHONPATH")]))
    return env


def _last_line(text: str) -> str:
    lines = [line for line in (text or "").strip().splitlines() if line.strip()]
    return lines[-1][:300] if lines else "no output"


def run_isolated(entry: Entry, python: str = sys.executable) -> dict[str, Any]:
    """Run one entry in a fresh subprocess; always returns a row.

    The row is ``entry.fixed`` updated with what the entry returned, or with
    ``status`` ``"skipped"``, ``"timeout"`` or ``"error"`` and a ``note``.
    """
    if entry.skip:
        return entry.fixed | {"status": "skipped", "note": entry.skip}
    with tempfile.TemporaryDirectory(prefix="bench-") as tmp:
        out = Path(tmp) / "row.json"
        spec = json.dumps({"target": entry.target, "params": entry.params})
        cmd = [python, "-m", "benchmarks.worker", spec, str(out)]
        try:
            proc = subprocess.run(cmd, cwd=REPO_ROOT, env=_child_env(), timeout=entry.timeout,
                                  capture_output=True, text=True)
        except subprocess.TimeoutExpired:
            return entry.fixed | {"status": "timeout",
                                  "note": f"no result within {entry.timeout:g} s"}
        if not out.exists():
            return entry.fixed | {"status": "error",
                                  "note": f"exit code {proc.returncode}: {_last_line(proc.stderr)}"}
        row = json.loads(out.read_text(encoding="utf-8"))
    if row.get("status") == "error":
        row["note"] = row.pop("error", None) or _last_line(proc.stderr)
    return entry.fixed | row


def _stderr_log(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def _notes(suite: Suite, rows: list[dict[str, Any]], entries: list[Entry],
           quick: bool) -> list[str]:
    notes = [suite.notes] if suite.notes else []
    if quick:
        notes.append("--quick run: a reduced set of entries.")
    for entry, row in zip(entries, rows):
        if row.get("status") in ("skipped", "timeout", "error") and row.get("note"):
            notes.append(f"{entry.name}: {row['status']}: {row['note']}")
    return notes


def run_suite(suite: Suite, *, quick: bool = False, out_dir: str | os.PathLike = DEFAULT_OUT,
              entries: list[Entry] | None = None, log: Log | None = _stderr_log,
              stream: TextIO | None = None, client: Any = None
              ) -> tuple[list[dict[str, Any]], Path, Path]:
    """Run every entry of ``suite`` and write its tables.

    Parameters
    ----------
    suite : the suite to run.
    quick : use the suite's quick entries and write ``<name>-quick.*``.
    out_dir : directory of the result tables.
    entries : run these instead of the suite's own (tests use reduced sizes).
    log : receives progress lines (default: stderr); None silences them.
    stream : where the markdown table is printed (default: none).
    client : a ``distributed.Client`` (``pipeline.cluster``) to spread the entries over its
        workers, each still in a fresh subprocess there; None: one after another here.

    Returns
    -------
    (rows, csv path, markdown path)
    """
    say = log or (lambda line: None)
    entries = suite.entries(quick) if entries is None else entries
    started = time.perf_counter()

    def landed(k: int, row: dict[str, Any]) -> None:
        say(f"[{suite.name} {k + 1}/{len(entries)}] {entries[k].name}: "
            f"{row.get('status', 'done')} ({time.perf_counter() - started:.1f} s into the suite)")
    say(f"[{suite.name}] {len(entries)} entries"
        + (" on the cluster's workers" if client is not None else ""))
    rows = run_tasks(client, run_isolated, [(entry,) for entry in entries], landed)
    stem = f"{suite.name}-quick" if quick else suite.name
    csv_path, md_path, markdown = write_tables(out_dir, stem, suite.title, suite.columns, rows,
                                               _notes(suite, rows, entries, quick))
    if suite.summary is not None:
        suite.summary(md_path.with_suffix(""))
    if stream is not None:
        print(markdown, file=stream, flush=True)
    say(f"wrote {csv_path} and {md_path}")
    return rows, csv_path, md_path


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.run",
        description="Run benchmark suites, each entry in a fresh subprocess, and write "
                    "<suite>.csv and <suite>.md result tables.")
    parser.add_argument("--suite", default="all",
                        help="suite to run: " + ", ".join(suites()) + ", or all (default: all)")
    parser.add_argument("--quick", action="store_true",
                        help="a reduced set of entries that finishes in under a minute; "
                             "writes <suite>-quick.csv/.md (default: full run)")
    parser.add_argument("--out", default=str(DEFAULT_OUT),
                        help="directory of the result tables (default: benchmarks/results)")
    parser.add_argument("--list", action="store_true", help="list the suites and exit")
    parser.add_argument("--quiet", action="store_true", help="no progress lines on stderr")
    parser.add_argument("--workers", type=int, default=1,
                        help="run entries on N local worker processes (default 1: one after "
                             "another; timings are comparable only when entries do not share "
                             "cores)")
    parser.add_argument("--scheduler", metavar="ADDRESS", default=None,
                        help="run entries on a running Dask scheduler's workers instead")
    return parser


def main(argv: list[str] | None = None) -> int:
    """Command-line entry; returns 1 if an entry crashed, 2 on bad arguments."""
    args = _parser().parse_args(argv)
    known = suites()
    if args.list:
        for suite in known.values():
            print(f"{suite.name}: {suite.title}")
        return 0
    try:
        chosen = list(known.values()) if args.suite == "all" else [get_suite(args.suite)]
    except KeyError as exc:
        print(f"error: {exc.args[0]}", file=sys.stderr)
        return 2
    crashed = False
    try:
        with dask_client(max(1, args.workers), args.scheduler) as client:
            for suite in chosen:
                rows, _, _ = run_suite(suite, quick=args.quick, out_dir=args.out,
                                       log=None if args.quiet else _stderr_log,
                                       stream=sys.stdout, client=client)
                crashed |= any(row.get("status") == "error" for row in rows)
    except InputError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 1 if crashed else 0


if __name__ == "__main__":
    sys.exit(main())
