"""Suite ``cgra``: the 55 Morpher loop kernels on generic CGRAs (issue 23).

Targets: ``cgra4x4`` (mesh), ``cgra4x4-torus``, ``cgra8x8`` and ``hycube4x4`` (one-hop
links, memory on the left and right columns). Per kernel and target: the II lower bounds
(ResMII, MemII, RecMII), the II reached by the CP-SAT mapper
(:func:`formulations.cgra.kernel.map_kernel`: list-scheduling warm start, then the II sweep
with the placement-timing relaxation and destructive lower bounding over the time-extended
routing graph), the II every smaller one of which is proven impossible, the cycles of one
iteration and their proven bound, the time, and the list-scheduling + PathFinder baseline's
II and cycles beside it. Both answers are executed by :mod:`sim.cgra` (column ``sim``).

Time limit per kernel: :data:`SMALL_LIMIT` s up to :data:`SMALL_NODES` nodes (the issue's
"proven within 10 s" target), :data:`LARGE_LIMIT` s above; the baseline may use half of it.

Run ``python -m benchmarks.run --suite cgra --workers 2`` for the whole table (55 kernels
on the four CGRA presets, then on ``se16-ii32``, each row in a fresh process); the harness
appends the summary (the issue's targets). A subset: environment variables
``CGRA_TARGETS`` (comma-separated presets, e.g. ``cgra8x8,se16-ii32``) and ``CGRA_KERNELS``
(comma-separated parts of kernel names, e.g. ``atax,adpcm_decoder``) restrict the entries;
write such a run elsewhere (``--out /tmp/cgra-part``) and fold its rows into the committed
table with ``python -m benchmarks.suites.cgra merge /tmp/cgra-part/cgra.csv`` (rows of the
same kernel and target are replaced, the summary is recomputed). ``python -m
benchmarks.suites.cgra`` alone recomputes the summary.
"""

from __future__ import annotations

import csv
import os
import sys
import time
from pathlib import Path
from typing import Any

from benchmarks.registry import Column, Entry, Suite
from benchmarks.suites.common import graphs_root, shorten
from benchmarks.tables import replace_summary, write_tables
from formulations.cgra import CgraInfeasible, CgraSchedule, map_kernel
from formulations.cgra.problem import RULES
from formulations.solver import SolveSettings
from formulations.streaming import StreamingInfeasible
from formulations.streaming.env import greedy_schedule
from hardware import InputError, load_hardware
from model.importers import load_graph
from pipeline.feedback import CheckerRejected, MappingFailed
from pipeline.options import RunOptions
from pipeline.streaming import map_streaming
from sim.cgra import check_cgra
from sim.streaming import check_streaming

__all__ = ["SUITE", "TARGETS", "map_one", "map_one_se", "kernel_files", "kernel_name", "summarize",
           "SMALL_NODES", "SMALL_LIMIT", "LARGE_LIMIT", "SE_TARGET", "SE_NODES", "SE_SMALL_LIMIT",
           "SE_LARGE_LIMIT", "PUBLISHED", "TARGETS_ENV", "KERNELS_ENV", "merge_rows"]

TARGETS = ("cgra4x4", "cgra4x4-torus", "cgra8x8", "hycube4x4")
#: Environment variables that restrict a full run to some targets / kernels (see the module).
TARGETS_ENV = "CGRA_TARGETS"
KERNELS_ENV = "CGRA_KERNELS"
SMALL_NODES = 30
SMALL_LIMIT = 9.5
#: The issue's target: the II proven minimal within this many seconds (the limit above leaves
#: room for loading and the simulator).
PROVEN_SECONDS = 10.0
LARGE_LIMIT = 15.0
#: The Streaming Engine rows (issue 23, item 3): se16 with max_ii 32, a whole-run time limit
#: of :data:`SE_SMALL_LIMIT` s up to :data:`SE_NODES` nodes, :data:`SE_LARGE_LIMIT` s above.
SE_TARGET = "se16-ii32"
SE_NODES = 60
SE_SMALL_LIMIT = 60.0
SE_LARGE_LIMIT = 60.0

#: Published IIs for kernels of this set: (kernel key, architecture) -> (II, source). Only
#: figures found for the same kernel (same DFG); see the table notes for what was searched and
#: how the architecture differs.
PUBLISHED: dict[tuple[str, str], tuple[int, str]] = {
    ("array_add/array_add_LN1_PartPred", "hycube4x4"): (
        4, "Morpher's mapper on its HyCUBE 4x4, memory on column 0 only, 5 registers per PE: "
           "output file name ..._XDim=4_YDim=4_II=4_... in ecolab-nus/Morpher_CGRA_Mapper "
           "applications/hycube/array_add, commit 4a054698; not the same architecture as "
           "hycube4x4"),
}

COLUMNS = (
    Column("graph", "kernel"), Column("target", "target"), Column("nodes", "nodes"),
    Column("edges", "edges"), Column("res_ii", "ResMII"), Column("mem_ii", "MemII"),
    Column("rec_ii", "RecMII"), Column("ii_bound", "II bound (proven)"), Column("ii", "II"),
    Column("ii_proven", "II proven minimal"), Column("cycles", "cycles"),
    Column("cycles_bound", "cycles bound"), Column("status", "status"),
    Column("seconds", "s", "{:.1f}"), Column("base_ii", "baseline II"),
    Column("base_cycles", "baseline cycles"), Column("base_s", "baseline s", "{:.1f}"),
    Column("published", "published II"), Column("sim", "sim"), Column("note", "note"),
)


def kernel_name(path: Any) -> str:
    text = str(path)
    return text.split("morpher/")[-1].replace("_INNERMOST", "").replace("_DFG.xml", "")[:48]


def kernel_files() -> list[str]:
    """The Morpher kernels (sorted paths; empty when the shared graphs are absent)."""
    root = graphs_root() / "morpher"
    return sorted(str(p) for p in root.rglob("*.xml")) if root.exists() else []


def _sim(graph, spec, problem, sched: CgraSchedule) -> bool:
    pes = problem.pes
    placement = {n: {"pe": list(pes[sched.pe[n]]), "cycle": sched.cycle[n]} for n in sched.pe}
    routes = [{"src": u, "dst": v, "distance": d,
               "steps": [{"pe": list(pes[p]), "cycle": c} for p, c in path]}
              for (u, v, d), path in sched.routes.items()]
    return check_cgra(graph, spec, placement, sched.ii, routes).ok


def _load_row(path: str, target: str) -> tuple[Any, dict[str, Any], Any]:
    """The target's description, the row's first fields, and the kernel (None when it
    cannot be read: the row then says why)."""
    spec = load_hardware(target)
    row: dict[str, Any] = {"graph": kernel_name(path), "target": target}
    try:
        graph = load_graph(path)
    except InputError as exc:
        return spec, row | {"status": "bad input", "note": shorten(str(exc), 160)}, None
    return spec, row | {"nodes": len(graph.nodes), "edges": len(graph.edges)}, graph


def map_one(path: str, target: str, time_limit: float | None = None,
            seed: int = 0) -> dict[str, Any]:
    """One row: bounds, the mapper's answer, the baseline's, both executed by the simulator."""
    spec, row, graph = _load_row(path, target)
    if graph is None:
        return row
    n = len(graph.nodes)
    limit = time_limit or (SMALL_LIMIT if n <= SMALL_NODES else LARGE_LIMIT)
    started = time.perf_counter()
    try:
        result = map_kernel(graph, spec, SolveSettings(time_limit=limit, seed=seed))
    except CgraInfeasible as exc:
        proven = all(r.split(":")[0] in RULES and not r.startswith("T0") for r in exc.reasons)
        return row | {"status": "unmappable (proven)" if proven else "not mapped",
                      "seconds": time.perf_counter() - started,
                      "note": shorten("; ".join(exc.reasons), 160)}
    seconds = time.perf_counter() - started
    s, b, base = result.schedule, result.bounds, result.baseline
    ok = _sim(graph, spec, result.problem, s) and (base is None or
                                                  _sim(graph, spec, result.problem, base))
    published = PUBLISHED.get((kernel_name(path), target))
    row |= {"res_ii": b["res_ii"], "mem_ii": b["mem_ii"], "rec_ii": b["rec_ii"],
            "ii_bound": s.ii_bound, "ii": s.ii, "ii_proven": "yes" if s.proven_ii else "no",
            "cycles": s.length, "cycles_bound": s.bound, "status": s.status,
            "seconds": seconds, "base_ii": base.ii if base else None,
            "base_cycles": base.length if base else None,
            "base_s": result.baseline_seconds,
            "published": f"{published[0]} ({published[1]})" if published else None,
            "sim": "ok" if ok else "REJECTED",
            "note": "" if base else shorten(result.baseline_note, 100)}
    return row


def map_one_se(path: str, target: str = SE_TARGET, time_limit: float | None = None,
               seed: int = 0) -> dict[str, Any]:
    """One Streaming Engine row: the full pass (:func:`pipeline.streaming.map_streaming`, its
    answer re-checked by ``sim.streaming``) and the greedy warm start as the baseline."""
    spec, row, graph = _load_row(path, target)
    if graph is None:
        return row
    n = len(graph.nodes)
    limit = time_limit or (SE_SMALL_LIMIT if n <= SE_NODES else SE_LARGE_LIMIT)
    row |= _greedy(graph, spec)
    started = time.perf_counter()
    try:
        mapping = map_streaming(graph, spec, RunOptions(time_limit=limit, seed=seed))
    except MappingFailed as exc:
        diagnosis = exc.mapping.diagnosis or ""
        return row | {"status": "unmappable (proven)" if "not mappable" in diagnosis
                      else "not mapped", "seconds": time.perf_counter() - started,
                      "note": shorten(diagnosis, 160)}
    except CheckerRejected as exc:
        return row | {"status": "REJECTED", "sim": "REJECTED",
                      "seconds": time.perf_counter() - started,
                      "note": shorten("; ".join(exc.violations), 160)}
    m = mapping.metrics
    proven = bool(m.get("proven_ii"))
    sdfs = m.get("sdfs", 1)
    return row | {"res_ii": m.get("res_ii"), "mem_ii": m.get("mem_ii"), "rec_ii": m.get("rec_ii"),
                  "ii_bound": m["ii"] if proven else m.get("ii_lower_bound"), "ii": m["ii"],
                  "ii_proven": "yes" if proven else "no", "cycles": m["cycles"],
                  "cycles_bound": m.get("cycles_bound"), "status": m["status"],
                  "seconds": time.perf_counter() - started,
                  "sim": "ok" if m.get("cycles_sim") is not None and row.get("sim") != "REJECTED"
                  else "REJECTED",
                  "note": f"{sdfs} SDFs over the AF" if sdfs > 1 else ""}


def _greedy(graph, spec) -> dict[str, Any]:
    """The greedy warm start of the Streaming Engine (its baseline), checked by the sim."""
    started = time.perf_counter()
    try:
        sched = greedy_schedule(graph, spec)
    except StreamingInfeasible:
        return {"base_s": time.perf_counter() - started}
    placement = {v: {"tile": sched.tile[v], "slot": sched.slot[v], "cycle": sched.cycle[v]}
                 for v in sched.tile}
    ok = check_streaming(graph, spec, placement, sched.ii, sched.delays).ok
    return {"base_ii": sched.ii, "base_cycles": sched.cycles,
            "base_s": time.perf_counter() - started} | ({} if ok else {"sim": "REJECTED"})


def _chosen(name: str, allowed: tuple[str, ...] | None = None) -> list[str] | None:
    """The comma-separated values of environment variable ``name`` (None when unset);
    ``allowed`` lists the values it may take."""
    text = os.environ.get(name, "").strip()
    if not text:
        return None
    values = [v.strip() for v in text.split(",") if v.strip()]
    bad = [v for v in values if allowed is not None and v not in allowed]
    if bad:
        raise InputError("environment", name, f"unknown target {bad[0]!r} in {text!r}",
                         f"a comma-separated list of {', '.join(allowed)}")
    return values


def _entries(quick: bool) -> list[Entry]:
    files = kernel_files()
    if not files:
        return [Entry("morpher", "", fixed={"graph": "morpher"},
                      skip="../shared/graphs/morpher is absent")]
    target = "benchmarks.suites.cgra:map_one"
    if quick:
        picks = [f for f in files if "/sum/" in f or "/mac/" in f or "atax.xml" in f]
        return [Entry(f"{kernel_name(f)} {t}", target, {"path": f, "target": t, "time_limit": 5.0},
                      timeout=60, fixed={"graph": kernel_name(f), "target": t})
                for f in picks for t in ("cgra4x4", "hycube4x4")]
    targets = _chosen(TARGETS_ENV, TARGETS + (SE_TARGET,)) or list(TARGETS + (SE_TARGET,))
    kernels = _chosen(KERNELS_ENV)
    files = [f for f in files if kernels is None or any(k in kernel_name(f) for k in kernels)]
    return [Entry(f"{kernel_name(f)} {t}", target if t != SE_TARGET else
                  "benchmarks.suites.cgra:map_one_se", {"path": f, "target": t},
                  timeout=120 if t != SE_TARGET else 180,
                  fixed={"graph": kernel_name(f), "target": t}) for t in targets for f in files]


# ---------------------------------------------------------------------------------------------
# summary of a finished run (the targets)
# ---------------------------------------------------------------------------------------------
def _num(value: Any) -> float | None:
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


def summarize(rows: list[dict[str, str]]) -> list[str]:
    """Markdown lines per target: mapped, proven minimal (small kernels within 10 s), II
    against the baseline, simulator verdicts.

    Examples
    --------
    >>> rows = [{"target": "cgra4x4", "nodes": "7", "ii": "1", "ii_proven": "yes",
    ...          "seconds": "1.0", "base_ii": "2", "ii_bound": "1", "sim": "ok"}]
    >>> summarize(rows)[5]
    '| cgra4x4 | 1 of 1 | 0 | 0 | 1 of 1 | 1 of 1 | 0 | 1 of 1 | 0 | 1 of 1 |'
    """
    lines = ["", "## Summary", "",
             "| target | mapped | unmappable by a proven rule | not mapped (time) | II proven "
             "minimal (<= 30 nodes, <= 10 s) | II <= baseline | II > baseline | II < baseline "
             "where the baseline is above the bound | no baseline | simulator ok |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for target in sorted({r.get("target", "") for r in rows} - {SE_TARGET}):
        mine = [r for r in rows if r.get("target") == target]
        mapped = [r for r in mine if _num(r.get("ii")) is not None]
        small = [r for r in mine if (_num(r.get("nodes")) or 1e9) <= SMALL_NODES]
        proven = [r for r in small if r.get("ii_proven") == "yes"
                  and (_num(r.get("seconds")) or 1e9) <= PROVEN_SECONDS]
        with_base = [r for r in mapped if _num(r.get("base_ii")) is not None]
        no_worse = [r for r in with_base if _num(r["ii"]) <= _num(r["base_ii"])]
        worse = len(with_base) - len(no_worse)
        above = [r for r in with_base if _num(r["base_ii"]) > (_num(r.get("ii_bound")) or 0)]
        lower = [r for r in above if _num(r["ii"]) < _num(r["base_ii"])]
        sim_ok = [r for r in mapped if r.get("sim") == "ok"]
        rule = [r for r in mine if r.get("status") in ("unmappable (proven)", "bad input")]
        lines.append(f"| {target} | {len(mapped)} of {len(mine)} | {len(rule)} | "
                     f"{len(mine) - len(mapped) - len(rule)} | {len(proven)} of "
                     f"{len(small)} | {len(no_worse)} of {len(with_base)} | {worse} | "
                     f"{len(lower)} of {len(above)} | {len(mapped) - len(with_base)} | "
                     f"{len(sim_ok)} of {len(mapped)} |")
    return lines + _se_summary([r for r in rows if r.get("target") == SE_TARGET]) + [""]


def _se_summary(rows: list[dict[str, str]]) -> list[str]:
    """The Streaming Engine rows: mapped or explained, small kernels proven optimal within
    their limit, the II gap of the others.

    >>> _se_summary([{"nodes": "20", "ii": "9", "ii_bound": "9", "ii_proven": "yes",
    ...               "status": "optimal", "seconds": "3", "sim": "ok"}])[-1]
    '| se16-ii32 | 1 of 1 | 0 | 0 | 1 of 1 | 0 of 0 | 1 of 1 |'
    """
    if not rows:
        return []
    mapped = [r for r in rows if _num(r.get("ii")) is not None]
    rule = [r for r in rows if r.get("status") in ("unmappable (proven)", "bad input")]
    small = [r for r in rows if (_num(r.get("nodes")) or 1e9) <= SE_NODES]
    optimal = [r for r in small if r.get("status") == "optimal"
               and (_num(r.get("seconds")) or 1e9) <= SE_SMALL_LIMIT]
    large = [r for r in mapped if r not in small]
    gap = [r for r in large if r.get("ii_proven") == "yes"]
    sim_ok = [r for r in mapped if r.get("sim") == "ok"]
    return ["", f"| target | mapped | unmappable by a proven rule | not mapped (time) | II and "
                f"cycles proven optimal (<= {SE_NODES} nodes, <= {SE_SMALL_LIMIT:g} s) | II "
                f"proven minimal (larger kernels) | simulator ok |",
            "|---|---|---|---|---|---|---|",
            f"| {SE_TARGET} | {len(mapped)} of {len(rows)} | {len(rule)} | "
            f"{len(rows) - len(mapped) - len(rule)} | {len(optimal)} of {len(small)} | "
            f"{len(gap)} of {len(large)} | {len(sim_ok)} of {len(mapped)} |"]


def append_summary(results: str | Path = "benchmarks/results/cgra") -> None:
    """Append :func:`summarize` of ``<results>.csv`` to ``<results>.md``."""
    replace_summary(results, summarize)


def _value(text: str) -> Any:
    """A CSV cell back as a number when it is one (so the markdown keeps its formats)."""
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text if text != "" else None


def _read_rows(path: Path) -> list[dict[str, Any]]:
    with open(path, newline="", encoding="utf-8") as handle:
        return [{k: _value(v) for k, v in row.items()} for row in csv.DictReader(handle)]


def merge_rows(part: str | Path, results: str | Path = "benchmarks/results/cgra") -> int:
    """Fold the rows of ``part`` (a ``cgra.csv`` of a restricted run) into ``<results>.csv``
    and ``.md``: a row of the same kernel and target is replaced, a new one appended (in the
    suite's order of targets); the notes of ``<results>.md`` are kept, one line says which
    rows were re-run, and the summary is recomputed. Returns the number of rows merged."""
    base = Path(results)
    rows = _read_rows(base.with_suffix(".csv"))
    new = _read_rows(Path(part))
    index = {(r["graph"], r["target"]): k for k, r in enumerate(rows)}
    for row in new:
        key = (row["graph"], row["target"])
        if key in index:
            rows[index[key]] = row
        else:
            index[key] = len(rows)
            rows.append(row)
    order = TARGETS + (SE_TARGET,)
    rows.sort(key=lambda r: order.index(r["target"]) if r["target"] in order else len(order))
    text = base.with_suffix(".md").read_text(encoding="utf-8").split("## Summary")[0]
    notes = [line[2:] for line in text.splitlines() if line.startswith("- ")]
    notes.append(f"{len(new)} rows re-run and merged on "
                 f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())} "
                 f"({', '.join(sorted({r['target'] for r in new}))}).")
    write_tables(base.parent, base.name, SUITE.title, SUITE.columns, rows, notes)
    append_summary(base)
    return len(new)


SUITE = Suite(
    name="cgra",
    title="Loop kernels on generic CGRAs (issue 23): II and cycles of the CP-SAT mapper and "
          "of list scheduling + PathFinder",
    columns=COLUMNS,
    entries=_entries,
    notes=("Presets: cgra4x4 (4 x 4 mesh), cgra4x4-torus, cgra8x8 (mesh), hycube4x4 (one-hop "
           "links, memory on columns 0 and 3); 4 registers per PE, latency 1, one value per "
           "link per cycle, max_ii 32 (all assumed, hardware/README.md). Time limit per kernel "
           f"{SMALL_LIMIT:g} s up to {SMALL_NODES} nodes, {LARGE_LIMIT:g} s above, 1 CP-SAT "
           "worker, seed 0; the baseline (iterative modulo list scheduling + PathFinder, "
           "also --placer list) may use half of it and warm-starts the sweep (a kernel of more "
           "than 40 operations whose baseline found nothing gets a second chance: other seeds, "
           "then iterative modulo scheduling with ejection from II 32 down, on the 4 x 4 corner "
           "of a larger fabric; its mapping is then shown as the baseline); a kernel of "
           "more than 30 operations whose baseline is above the II bound then gets a descent "
           "below the baseline's II (list-scheduling attempts at II b-1, b-2, ... seeded by the "
           "baseline's operation order, other seeds; 0.6 of the time left above 60 operations, "
           "0.25 up to 60) before the sweep; on cgra8x8 the "
           "kernel is also mapped on the 4 x 4 corner first (a warm start, nothing proven "
           "there). 'II bound' = every smaller II proven impossible (ResMII/MemII/RecMII; "
           "RegMII: an operation's operands and its own result written in the same cycle slot "
           "of its PE fit its registers, e.g. at II 1 operands + 1; then "
           "the placement-timing relaxation, which needs no horizon); 'II proven minimal' = "
           "the II reached equals it. 'cycles bound' = cycles of one iteration proven at that "
           "II (destructive lower bounding with the full model); 'status' optimal = II and "
           "cycles proven; 'unmappable (proven)' = a rule with a proof (C5: an operation reads "
           "more distinct operands than a PE has registers; on se16-ii32 the Streaming "
           "Engine's O1/R1 rules); 'bad input' = the graph's same-iteration edges form a cycle "
           "(G0). Both answers are executed by sim.cgra (sim.streaming on se16-ii32) for "
           "several iterations ('sim'). se16-ii32 rows: the Streaming Engine pass "
           f"(pipeline.streaming) with a whole-run limit of {SE_SMALL_LIMIT:g} s up to "
           f"{SE_NODES} nodes, {SE_LARGE_LIMIT:g} s above; 'II bound' there is the II when it "
           "is proven minimal, else the static bound; the baseline is its greedy warm start. "
           "'published II' = a figure reported elsewhere for the same kernel (same DFG), with "
           "its source and how its architecture differs."),
    summary=append_summary,
)


if __name__ == "__main__":
    if sys.argv[1:2] == ["merge"] and len(sys.argv) == 3:
        print(f"merged {merge_rows(sys.argv[2])} rows into benchmarks/results/cgra.csv/.md")
    elif len(sys.argv) > 1:
        print("usage: python -m benchmarks.suites.cgra [merge PART.csv]", file=sys.stderr)
        sys.exit(2)
    else:
        append_summary()
