"""Suite ``streaming``: Streaming Engine modulo placement (source 004) on se16.

Graph families: layered random DAGs (:func:`benchmarks.se_generators.se_random_dag`, 5 to 96
nodes, several seeds up to 40 nodes), the radix-2 IFFT
(:func:`benchmarks.se_generators.ifft_graph`), the paper's distance function and the Morpher
loop kernels (``../shared/graphs/morpher``). Per graph: the lower bounds (II: resource,
memory, recurrence; cycles: the plain critical path, the sibling-latency bound of
:mod:`formulations.streaming.bounds` at the II the CP-SAT mapping uses, the best bound the pass
proved at that II (hold relaxation, refuted horizons), and the sibling-latency bound minimised
over every II up to ``max_ii``, valid whatever II a mapping uses), then II / cycles /
seconds of the greedy sequential placement, the best of 20 random episodes, the evolutionary
search, and the full Streaming Engine pass (:func:`pipeline.streaming.map_streaming`: CP-SAT II
sweep warm-started by the better of greedy and random, ``time_limit`` per II, 1 worker, seed 0;
pass trees and several SDFs over the asynchronous fabric when one SDF does not fit). Every
answer is checked by :mod:`sim.streaming` (column ``sim``). A graph nothing maps shows the
rule-based diagnosis.

Caveats: "optimal" means the CP-SAT sweep proved every smaller II impossible and the cycle
count optimal at its II. The sibling-latency bounds ignore the packing of instructions into
tiles x II slots, which at the smallest II is often what costs most; the hold relaxation sees
it (but not the delay entries). Split rows report the II of the
slowest SDF, the cycles of one iteration through every phase (AF latency included) and the
effective II of a batch (cycles per iteration in steady state); their ratios are not comparable
with one-SDF rows and are left out.

Run ``python -m benchmarks.suites.streaming`` after the harness to append the summary
(targets a, b, c) to ``benchmarks/results/streaming.md``.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from benchmarks.registry import Column, Entry, Suite
from benchmarks.se_generators import ifft_graph, se_random_dag
from benchmarks.suites.common import graphs_root, shorten
from benchmarks.tables import replace_summary
from formulations.solver import Budget
from formulations.streaming.bounds import cycle_bound
from formulations.streaming.env import evolutionary_schedule, greedy_schedule, random_schedule
from formulations.streaming.problem import (StreamingInfeasible, lower_bounds, precheck,
                                            problem_from_graph)
from formulations.streaming.split import repair_of
from hardware import InputError, load_hardware
from model.importers import load_graph
from pipeline.feedback import CheckerRejected, MappingFailed
from pipeline.options import RunOptions
from pipeline.streaming import map_streaming
from sim.streaming import check_streaming, distance_graph

__all__ = ["SUITE", "map_one", "morpher_files", "RANDOM_SIZES", "RANDOM_SEEDS", "summarize"]

RANDOM_SIZES = (5, 8, 10, 15, 20, 30, 40, 60, 96)
#: Seeds per size up to 40 nodes (target a); larger sizes use seed 0.
RANDOM_SEEDS = (0, 1)
QUICK_RANDOM_SIZES = (5, 10)
HEURISTICS = ("greedy", "random", "evo")

COLUMNS = (
    Column("graph", "graph"), Column("family", "family"), Column("nodes", "nodes"),
    Column("edges", "edges"), Column("ii_lb", "II LB"), Column("cp_lb", "cycles LB (crit. path)"),
    *[c for m in HEURISTICS for c in (Column(f"{m}_ii", f"{m} II"),
                                      Column(f"{m}_cycles", f"{m} cycles"),
                                      Column(f"{m}_s", f"{m} s", "{:.2f}"))],
    Column("cp_ii", "cp II"), Column("cp_cycles", "cp cycles"), Column("cp_s", "cp s", "{:.2f}"),
    Column("cp_status", "CP-SAT status"), Column("ii_proven", "II proven smallest"),
    Column("sib_lb", "cycles LB (sibling, at cp II)"),
    Column("best_lb", "cycles LB (best proven, at cp II)"),
    Column("any_lb", "cycles LB (any II)"),
    Column("ratio_crit", "cp / crit. path", "{:.2f}"),
    Column("ratio_sib", "cp / sibling LB", "{:.2f}"),
    Column("ratio_best", "cp / best LB", "{:.2f}"),
    Column("sdfs", "SDFs"), Column("af_edges", "AF edges"), Column("passes", "pass instr."),
    Column("eff_ii", "eff. II (split)", "{:.2f}"),
    Column("sim", "sim"), Column("note", "note"),
)


def _graph(family: str, spec_arg: Any, seed: int = 0):

    if family == "random":
        return se_random_dag(int(spec_arg), seed=seed)
    if family == "ifft":
        return ifft_graph(int(spec_arg))
    if family == "distance":
        return distance_graph()
    return load_graph(spec_arg)


def _run(name: str, fn) -> tuple[Any, float, str | None]:
    started = time.perf_counter()
    try:
        return fn(), time.perf_counter() - started, None
    except Exception as exc:  # noqa: BLE001 - a method that fails is a row value
        message = str(exc)  # the methods' own messages mostly start with their name
        prefixed = message if message.startswith(name) else f"{name}: {message}"
        return None, time.perf_counter() - started, prefixed


def map_one(family: str, arg: Any, time_limit: float = 5.0, evo_limit: float = 5.0,
            seed: int = 0) -> dict[str, Any]:
    """One row: bounds, the three heuristics, the full pass, the simulator's verdicts."""
    se = load_hardware("se16")
    try:
        graph = _graph(family, arg, seed)
    except InputError as exc:          # e.g. a kernel with a same-iteration cycle
        return {"graph": _short(arg) if family == "morpher" else str(arg), "family": family,
                "cp_status": "bad input", "note": shorten(str(exc), 200)}
    row: dict[str, Any] = {"graph": graph.name if family != "morpher" else _short(arg),
                           "family": family, "nodes": len(graph.nodes), "edges": len(graph.edges)}
    try:
        problem = problem_from_graph(graph, se)
    except StreamingInfeasible as exc:
        return row | {"note": shorten("; ".join(exc.reasons), 200), "cp_status": "not mappable"}
    bounds = lower_bounds(problem)
    row |= {"ii_lb": bounds["ii"], "cp_lb": bounds["critical_path"]}
    sim_ok, notes = _heuristics(graph, se, problem, evo_limit, row)
    _full_pass(graph, se, problem, time_limit, row, sim_ok, notes)
    row["sim"] = "all ok" if sim_ok and all(sim_ok) else ("REJECTED" if sim_ok else "—")
    row["note"] = "; ".join(n for n in notes if n) or ""
    return row


def _heuristics(graph, se, problem, evo_limit: float, row: dict) -> tuple[list[bool], list[str]]:
    """Greedy, random and evolutionary placements (one SDF only), each checked by the sim."""

    if precheck(problem):
        return [], []
    runs = {
        "greedy": _run("greedy", lambda: greedy_schedule(graph, se)),
        "random": _run("random", lambda: random_schedule(graph, se, seed=0, tries=20)),
        "evo": _run("evo", lambda: evolutionary_schedule(graph, se, seed=0,
                                                              budget=Budget(evo_limit))),
    }
    sim_ok, notes = [], []
    for method, (sched, seconds, err) in runs.items():
        row[f"{method}_s"] = round(seconds, 3)
        if sched is None:
            notes.append(shorten(err or "", 60))
            continue
        row[f"{method}_ii"], row[f"{method}_cycles"] = sched.ii, sched.cycles
        placement = {n: {"tile": sched.tile[n], "slot": sched.slot[n], "cycle": sched.cycle[n]}
                     for n in sched.tile}
        report = check_streaming(graph, se, placement, sched.ii, sched.delays)
        sim_ok.append(report.ok and report.cycles == sched.cycles)
    return sim_ok, notes


def _full_pass(graph, se, problem, time_limit: float, row: dict, sim_ok: list[bool],
               notes: list[str]) -> None:
    """The pipeline's Streaming Engine pass (it re-checks its answer with the simulator)."""

    options = RunOptions(time_limit=time_limit, seed=0)  # validated (backends probed) untimed
    started = time.perf_counter()
    try:
        mapping = map_streaming(graph, se, options)
    except MappingFailed as exc:
        row["cp_s"] = round(time.perf_counter() - started, 3)
        row["cp_status"] = "not mappable" if _unfixable(exc.mapping.diagnosis) else "failed"
        notes.insert(0, shorten(_diagnosis_note(exc.mapping.diagnosis or ""), 240))
        return
    except CheckerRejected as exc:
        row["cp_s"] = round(time.perf_counter() - started, 3)
        row["cp_status"] = "REJECTED"
        sim_ok.append(False)
        notes.insert(0, shorten("; ".join(exc.violations), 200))
        return
    m = mapping.metrics
    row["cp_s"] = round(time.perf_counter() - started, 3)
    row |= {"cp_ii": m["ii"], "cp_cycles": m["cycles"], "cp_status": m["status"],
            "ii_proven": "yes" if m.get("proven_ii") else "no",
            "sdfs": m.get("sdfs", 1), "af_edges": m.get("af_edges", 0),
            "passes": m.get("pass_instructions", 0)}
    sim_ok.append(m["cycles_sim"] is not None)
    if m.get("sdfs", 1) > 1:
        row["eff_ii"] = m["effective_ii"]
    elif not m.get("pass_instructions"):
        tight = cycle_bound(problem, m["ii"])
        best = max(tight, m.get("cycles_bound") or 0)
        any_ii = min(cycle_bound(problem, ii) for ii in range(row["ii_lb"], problem.max_ii + 1))
        row |= {"sib_lb": tight, "best_lb": best, "any_lb": any_ii,
                "ratio_crit": m["cycles"] / max(1, row["cp_lb"]),
                "ratio_sib": m["cycles"] / max(1, tight), "ratio_best": m["cycles"] / max(1, best)}


def _diagnosis_note(diagnosis: str) -> str:
    """``"<rules no transformation fixes>: <first such reason> (also: <other rules>)"``."""

    reasons = diagnosis.split(" -- ")[0].split("; ")
    hard = [r for r in reasons if repair_of(r) is None and not r.startswith("split:")]
    if not hard:  # transformations were tried and failed: say what was tried
        split = [r for r in reasons if r.startswith("split:")]
        return f"one SDF: {reasons[0]}" + (f"; {split[0]}" if split else "")
    first = hard
    rules = sorted({r.split(":")[0] for r in first})
    others = sorted({r.split(":")[0] for r in reasons} - set(rules))
    also = f" (also: {', '.join(others)})" if others else ""
    return f"{', '.join(rules)}: {first[0].split(': ', 1)[-1]}{also}"


def _unfixable(diagnosis: str | None) -> bool:
    return "not mappable" in (diagnosis or "")


def _short(path: Any) -> str:
    text = str(path)
    return text.split("morpher/")[-1].replace("_INNERMOST", "").replace("_DFG.xml", "")[:48]


def morpher_files() -> list[str]:
    root = graphs_root() / "morpher"
    return sorted(str(p) for p in root.rglob("*.xml")) if root.exists() else []


def _random_entries(quick: bool, limit: float, evo: float, target: str) -> list[Entry]:
    entries = []
    for n in (QUICK_RANDOM_SIZES if quick else RANDOM_SIZES):
        for seed in (RANDOM_SEEDS if n <= 40 and not quick else (0,)):
            name = f"se-random-{n}-s{seed}"
            entries.append(Entry(name, target, {"family": "random", "arg": n, "seed": seed,
                                                "time_limit": limit, "evo_limit": evo},
                                 timeout=600, fixed={"graph": name, "family": "random"}))
    return entries


def _entries(quick: bool) -> list[Entry]:
    limit, evo = (2.0, 1.0) if quick else (10.0, 5.0)
    target = "benchmarks.suites.streaming:map_one"
    entries = [Entry("distance", target, {"family": "distance", "arg": 0, "time_limit": limit,
                                          "evo_limit": evo}, timeout=120,
                     fixed={"graph": "distance", "family": "distance"})]
    entries += _random_entries(quick, limit, evo, target)
    for points in (() if quick else (4, 8)):
        entries.append(Entry(f"ifft {points}", target, {"family": "ifft", "arg": points,
                                                        "time_limit": limit, "evo_limit": evo},
                             timeout=600, fixed={"graph": f"ifft{points}", "family": "ifft"}))
    files = morpher_files()
    if not files:
        return entries + [Entry("morpher", "", fixed={"graph": "morpher"},
                                skip="../shared/graphs/morpher is absent")]
    for path in (files[:3] if quick else files):
        entries.append(Entry(_short(path), target, {"family": "morpher", "arg": path,
                                                    "time_limit": limit, "evo_limit": evo},
                             timeout=600, fixed={"graph": _short(path), "family": "morpher"}))
    return entries


# ---------------------------------------------------------------------------------------------
# summary of a finished run (targets a, b, c of the issue)
# ---------------------------------------------------------------------------------------------
def _num(value: str) -> float | None:
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


def summarize(rows: list[dict[str, str]]) -> list[str]:
    """Markdown lines: random DAGs proven optimal (and times), average cycle ratios per bound,
    Morpher kernels mapped in one SDF / with pass trees / split / explained, by reason.

    Examples
    --------
    >>> rows = [{"family": "random", "nodes": "5", "cp_status": "optimal", "cp_s": "0.5",
    ...          "ratio_crit": "1.2", "ratio_sib": "1.0", "sdfs": "1", "passes": "0"}]
    >>> summarize(rows)[2]
    '- (a) random DAGs <= 40 nodes proven optimal (II and cycles): 1 of 1; under 10 s: 1; \
largest proven: 5 nodes; slowest proven: 0.50 s'
    """
    lines = ["", "## Summary"]
    small = [r for r in rows if r.get("family") == "random" and (_num(r.get("nodes")) or 0) <= 40]
    proven = [r for r in small if r.get("cp_status") == "optimal"]
    fast = [r for r in proven if (_num(r.get("cp_s")) or 1e9) < 10]
    lines.append(
        f"- (a) random DAGs <= 40 nodes proven optimal (II and cycles): {len(proven)} of "
        f"{len(small)}; under 10 s: {len(fast)}; largest proven: "
        f"{max((int(_num(r['nodes'])) for r in proven), default=0)} nodes; slowest proven: "
        f"{max((_num(r['cp_s']) for r in proven), default=0):.2f} s")
    ii_proven = [r for r in small if r.get("ii_proven") == "yes"]
    lines.append(f"- (a) random DAGs <= 40 nodes with the smallest II proven (layout relaxation "
                 f"or full model): {len(ii_proven)} of {len(small)}")
    for key, label in (("ratio_crit", "plain critical path"),
                       ("ratio_sib", "sibling-latency bound at the mapping's II"),
                       ("ratio_best", "best bound proven at the mapping's II")):
        values = [_num(r.get(key)) for r in rows if _num(r.get(key)) is not None]
        if values:
            lines.append(f"- (b) cycles / {label}: average {sum(values) / len(values):.3f} over "
                         f"{len(values)} one-SDF mappings (max {max(values):.2f})")
    lines += _cycle_target([r for r in rows if r.get("family") == "random"])
    lines += _morpher_summary([r for r in rows if r.get("family") == "morpher"])
    return lines + [""]


def _cycle_target(rows: list[dict[str, str]]) -> list[str]:
    """Target (b), "cycles within 10% of the critical path on average", against the valid lower
    bounds: if the bound itself averages far above 1.1 x the critical path, no mapping can
    meet the target (at the II the mapping uses, or at any II when the any-II bound does)."""
    rows = [r for r in rows if _num(r.get("best_lb")) and _num(r.get("cp_lb"))]
    if not rows:
        return []

    def mean(key: str, over: str) -> float:
        return sum(_num(r[key]) / _num(r[over]) for r in rows) / len(rows)

    best, any_ii = mean("best_lb", "cp_lb"), mean("any_lb", "cp_lb")
    cycles = mean("cp_cycles", "best_lb")
    verdict = ("out of reach for any mapping" if any_ii > 1.1 else
               "out of reach at the mapped II" if best > 1.1 else "not excluded by the bounds")
    return [f"- (b) target 'cycles within 10% of the critical path on average' is {verdict}: "
            f"over {len(rows)} random DAGs, the best valid cycles lower bound at the mapped II "
            f"averages {best:.3f} x the critical path (sibling-latency bound, hold relaxation "
            f"and refuted horizons); the bound valid at every II <= max II (min over II of the "
            f"sibling-latency bound) averages {any_ii:.3f} x; cp cycles average {cycles:.3f} x "
            f"the best lower bound"]


def _morpher_summary(rows: list[dict[str, str]]) -> list[str]:
    if not rows:
        return []
    mapped = [r for r in rows if _num(r.get("cp_ii")) is not None]
    split = [r for r in mapped if (_num(r.get("sdfs")) or 1) > 1]
    passes = [r for r in mapped if (_num(r.get("passes")) or 0) > 0]
    reasons: dict[str, int] = {}
    for r in rows:
        if r in mapped:
            continue
        if r.get("cp_status") == "failed":
            rules = "not mapped in the time limit (one SDF, pass trees and splits tried)"
        else:
            rules = (r.get("note") or "").split(":")[0] or r.get("cp_status", "?")
        reasons[rules] = reasons.get(rules, 0) + 1
    why = "; ".join(f"{k}: {v}" for k, v in sorted(reasons.items(), key=lambda kv: -kv[1]))
    return [f"- (c) Morpher kernels: {len(rows)}; mapped {len(mapped)} (one SDF "
            f"{len(mapped) - len(split)}, of them with pass trees "
            f"{len([r for r in passes if r not in split])}; split into several SDFs "
            f"{len(split)}); explained {len(rows) - len(mapped)} -- by rules: {why}"]


def append_summary(results: str | Path = "benchmarks/results/streaming") -> None:
    """Append :func:`summarize` of ``<results>.csv`` to ``<results>.md``."""
    replace_summary(results, summarize)


SUITE = Suite(
    name="streaming",
    title="Streaming Engine (source 004): II and cycles of greedy, random, evolutionary, CP-SAT",
    columns=COLUMNS,
    entries=_entries,
    notes=("se16: 16 tiles, II <= 6, instruction latency 3, SF links +-1 (1 cycle) / +-2 "
           "(2 cycles). cp = the Streaming Engine pass: CP-SAT II sweep from the lower bound "
           "(per II: layout relaxation, full model with issue windows and the sibling-latency "
           "bound until its schedules stop improving, top-down proof with tight windows, hold "
           "relaxation, destructive lower bounding), 10 s per II (2 s in --quick; "
           "time an II leaves unused carries over), 1 worker, seed 0, warm start = better of "
           "greedy and random; pass trees / several SDFs over the AF (16 cycles assumed per "
           "transfer, SDFs share the tiles in time, one batch of iterations per phase) when one "
           "SDF does not fit. 'cp s' is the whole pass. random = best of 20 episodes per II; "
           "evo = (8 + 16) rank-genome search, 5 s. Ratios: cp cycles over the plain critical "
           "path, the sibling-latency bound at the cp II and the best bound proven at the cp II "
           "(one-SDF rows without pass instructions only); 'any II' = the sibling-latency "
           "bound minimised over every II <= max II. Every answer is re-checked by "
           "sim.streaming. 'not mappable' rows name the rule no transformation can fix."),
    summary=append_summary,
)
