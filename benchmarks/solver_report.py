"""The written side of a solver comparison: tables (CSV and Markdown), the summary per
backend, the agreement check and the Dolan--Moré performance profile (PNG and SVG).

Every file is written whole or not at all (temporary file, then rename:
:func:`model.files.write_text_atomic`, :func:`pipeline.outputs.save_figure`).
``python -m benchmarks.solver_report DIR`` writes them again from ``DIR/results.csv`` and
``DIR/settings.json`` (after a change of the tables, without solving again).

Files in the output folder
--------------------------
``results.csv``    one row per model and backend (raw values)
``settings.json``  what every solve shared (time limit, threads, seed, gap, backends, ...)
``summary.csv``    one row per backend (all models), then one per decision and backend
``results.md``     settings, summary, disagreements, the profile and the full table
``profile.png``, ``profile.svg``   the performance profile
"""

from __future__ import annotations

import csv
import dataclasses
import json
import math
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from benchmarks.registry import Column  # noqa: E402
from benchmarks.solver_runs import decision_of  # noqa: E402
from benchmarks.solver_stats import (Disagreement, disagreements,  # noqa: E402
                                     performance_profile, performance_ratios, summarize,
                                     time_matrix)
from benchmarks.tables import csv_text, machine_line, markdown_table  # noqa: E402
from model.files import write_text_atomic  # noqa: E402
from pipeline.outputs import save_figure  # noqa: E402

__all__ = ["RESULT_COLUMNS", "SUMMARY_COLUMNS", "Settings", "complete_rows", "profile_taus",
           "plot_profile", "write_report", "read_results", "rewrite_report", "main"]

Row = dict[str, Any]

#: Columns of ``results.csv`` / the full Markdown table.
RESULT_COLUMNS = (
    Column("model", "model"), Column("decision", "decision"), Column("backend", "backend"),
    Column("status", "status"), Column("objective", "objective", "{:.6g}"),
    Column("bound", "best bound", "{:.6g}"), Column("gap", "gap", "{:.2e}"),
    Column("time", "time (s)", "{:.3f}"), Column("nodes", "nodes"),
    Column("vars", "vars"), Column("int_vars", "int vars"), Column("cons", "cons"),
    Column("nonzeros", "nonzeros"), Column("wall", "process (s)", "{:.2f}"),
    Column("agree", "agrees"), Column("sense", "sense"), Column("note", "note"))

#: Columns of ``summary.csv`` / the summary tables.
SUMMARY_COLUMNS = (
    Column("scope", "models of"), Column("backend", "backend"), Column("models", "taken"),
    Column("unreadable", "unreadable"), Column("solved", "solved"),
    Column("optimal", "optimal"), Column("feasible", "feasible only"),
    Column("failed", "no solution"), Column("common", "compared"),
    Column("sgm_time", "sgm time (s, shift 10)", "{:.3f}"), Column("wins", "wins"),
    Column("best", "best solution"))


@dataclass(frozen=True)
class Settings:
    """What every solve of one comparison shared (printed above the tables)."""

    title: str
    backends: tuple[str, ...]
    time_limit: float
    threads: int
    seed: int
    mip_gap: float
    cap: float
    source: str
    #: Solves run at the same time (local Dask workers; 0: a scheduler's workers).
    workers: int = 1


def complete_rows(rows: Sequence[Row], disagreeing: Sequence[Disagreement]) -> list[Row]:
    """Rows sorted by model and backend, with the decision, the model size copied from a
    row that read the model (killed and unreadable rows have none) and the agreement flag."""
    sizes: dict[str, Row] = {}
    for row in rows:
        if row.get("vars") is not None:
            sizes.setdefault(row["model"], {k: row.get(k) for k in
                                            ("vars", "int_vars", "cons", "nonzeros")})
    bad = {(d.model, b) for d in disagreeing for b in (d.claimant, d.other)}
    out = []
    for row in sorted(rows, key=lambda r: (r["model"], r["backend"])):
        full = sizes.get(row["model"], {}) | {k: v for k, v in row.items() if v is not None}
        full["decision"] = decision_of(row["model"])
        flagged = (row["model"], row["backend"]) in bad
        full["agree"] = "NO (see disagreements)" if flagged else (
            "yes" if row.get("status") == "optimal" else None)
        out.append(full)
    return out


def profile_taus(ratios: Sequence[Sequence[float]], points: int = 200) -> list[float]:
    """Ratios from 1 to half again past the largest finite one (at least 2), evenly on a
    log2 scale, plus every ratio that occurs (so the steps fall where they belong).

    >>> profile_taus([[1.0, 4.0]], points=3)
    [1.0, 2.449489742783, 4.0, 6.0]
    """
    finite = sorted({r for line in ratios for r in line if math.isfinite(r)})
    top = max(2.0, 1.5 * finite[-1]) if finite else 2.0
    grid = [top ** (k / (points - 1)) for k in range(points)]
    return sorted({round(t, 12) for t in grid + finite})


def plot_profile(rows: Sequence[Row], backends: Sequence[str], models: Sequence[str],
                 out_dir: Path, title: str) -> list[str]:
    """Draw the performance profile of ``backends`` over ``models`` as ``profile.png`` and
    ``profile.svg`` in ``out_dir``; returns the names written (none without models)."""
    if not models or not backends:
        return []
    ratios = performance_ratios(time_matrix(rows, models, backends))
    taus = profile_taus(ratios)
    rho = performance_profile(ratios, taus)
    figure, axes = plt.subplots(figsize=(6.4, 4.2))
    for s, backend in enumerate(backends):
        axes.step(taus, rho[s], where="post", label=backend)
    axes.set_xscale("log", base=2)
    axes.set_xlim(1.0, taus[-1])
    axes.set_ylim(-0.02, 1.02)
    axes.set_xlabel("τ (time / fastest backend's time on the model)")
    axes.set_ylabel("fraction of models solved within τ")
    axes.set_title(f"Performance profile: {title} ({len(models)} models)", fontsize=10)
    axes.grid(True, which="both", alpha=0.3)
    axes.legend(loc="lower right")
    figure.tight_layout()
    try:
        for suffix in ("png", "svg"):
            save_figure(figure, out_dir / f"profile.{suffix}")
    finally:
        plt.close(figure)
    return ["profile.png", "profile.svg"]


def _summaries(rows: Sequence[Row], backends: Sequence[str], time_limit: float) -> list[Row]:
    out = [s | {"scope": "all"} for s in summarize(rows, backends, time_limit)]
    for decision in sorted({r["decision"] for r in rows}):
        part = [r for r in rows if r["decision"] == decision]
        out += [s | {"scope": decision} for s in summarize(part, backends, time_limit)]
    return out


def _settings_lines(settings: Settings, n_models: int) -> list[str]:
    return [f"Source: `{settings.source}`; {n_models} models; backends "
            f"{', '.join(settings.backends)}.",
            f"Every solve: time limit {settings.time_limit:g} s, {settings.threads} thread(s), "
            f"seed {settings.seed}, relative MIP gap {settings.mip_gap:g}, own process killed "
            f"at {settings.cap:g} s; "
            + (f"{settings.workers} solve(s) at a time." if settings.workers else
               "solves spread over a Dask scheduler's workers.")]


def _disagreement_lines(disagreeing: Sequence[Disagreement]) -> list[str]:
    if not disagreeing:
        return ["Every backend that claims optimality agrees with every other backend's "
                "optimum, solutions and bounds on that model (within the gap tolerance)."]
    return ["**DISAGREEMENT: at least one backend or model is wrong** (a backend claims "
            "optimality that another backend's answer contradicts):", ""] + \
        [f"- {d.line()}" for d in disagreeing]


def write_report(rows: Sequence[Row], settings: Settings, disagreeing: Sequence[Disagreement],
                 out_dir: Path) -> list[str]:
    """Write every file of the comparison into ``out_dir``; returns their names."""
    table = complete_rows(rows, disagreeing)
    summary = _summaries(table, settings.backends, settings.time_limit)
    models = sorted({r["model"] for r in table})
    readable = sorted({r["model"] for r in table} - {r["model"] for r in table
                                                      if r["status"] == "unreadable"})
    write_text_atomic(out_dir / "results.csv", csv_text(RESULT_COLUMNS, table))
    write_text_atomic(out_dir / "settings.json",
                      json.dumps(dataclasses.asdict(settings), indent=1) + "\n")
    write_text_atomic(out_dir / "summary.csv", csv_text(SUMMARY_COLUMNS, summary))
    profiled = readable or models   # no model every backend reads: all, unreadable = unsolved
    pictures = plot_profile(table, settings.backends, profiled, out_dir, settings.title)
    body = [f"# Solver backends on {settings.title}", "", machine_line(), "",
            *_settings_lines(settings, len(models)), "", "## Summary", "",
            markdown_table(SUMMARY_COLUMNS, summary), "", *_legend(), "", "## Agreement", "",
            *_disagreement_lines(disagreeing), ""]
    if pictures:
        scope = (f"Over the {len(readable)} models every backend could read." if readable else
                 f"Over all {len(models)} models (no model is read by every backend; a model "
                 "a backend cannot read counts as never solved by it).")
        body += ["## Performance profile", "", scope, "", "![performance profile](profile.svg)",
                 ""]
    body += ["## Every model and backend", "", markdown_table(RESULT_COLUMNS, table)]
    write_text_atomic(out_dir / "results.md", "\n".join(body) + "\n")
    return ["results.csv", "settings.json", "summary.csv", "results.md", *pictures]


def _legend() -> list[str]:
    return [
        "- *taken*: models the backend could read; *unreadable*: models it could not "
        "(a CP-SAT proto on a MILP backend, continuous variables on CP-SAT).",
        "- *solved*: outcome proved (optimal within the gap, infeasible, unbounded); "
        "*feasible only*: a solution without proof at the limit; *no solution*: none found, "
        "an error, or killed at the wall-clock cap.",
        "- *compared*: models every listed backend could read; *sgm time* (shifted geometric "
        "mean, shift 10 s), *wins* (fastest solve, ties within 5 % or 10 ms) and *best "
        "solution* (the best objective any backend found, within 0.01 %, proved or not) "
        "are over those, every unsolved model counted at the time limit.",
    ]


_NUMBERS = {"objective": float, "bound": float, "gap": float, "time": float, "wall": float,
            "nodes": int, "vars": int, "int_vars": int, "cons": int, "nonzeros": int}


def read_results(path: Path) -> list[Row]:
    """The rows of a ``results.csv`` (numbers typed, empty cells dropped)."""
    with open(path, encoding="utf-8", newline="") as f:
        rows = list(csv.DictReader(f))
    out = []
    for row in rows:
        typed = {k: _NUMBERS[k](float(v)) if k in _NUMBERS else v
                 for k, v in row.items() if v not in ("", None)}
        typed.pop("agree", None)
        out.append(typed)
    return out


def rewrite_report(out_dir: Path) -> list[Disagreement]:
    """Write every file of ``out_dir`` again from its ``results.csv`` and ``settings.json``."""
    data = json.loads((out_dir / "settings.json").read_text(encoding="utf-8"))
    settings = Settings(**(data | {"backends": tuple(data["backends"])}))
    rows = read_results(out_dir / "results.csv")
    for row in rows:   # tables written before the sense column: every mapper model minimises
        if "objective" in row:
            row.setdefault("sense", "min")
    found = disagreements(rows, settings.mip_gap)
    write_report(rows, settings, found, out_dir)
    return found


def main(argv: list[str] | None = None) -> int:
    """``python -m benchmarks.solver_report DIR...``: rewrite the files of earlier runs."""
    code = 0
    for name in (argv if argv is not None else sys.argv[1:]):
        found = rewrite_report(Path(name))
        for d in found:
            print(f"DISAGREEMENT (a backend or the model is wrong): {d.line()}", file=sys.stderr)
        code = max(code, 1 if found else 0)
    return code


if __name__ == "__main__":
    sys.exit(main())
