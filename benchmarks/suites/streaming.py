"""Suite ``streaming``: Streaming Engine modulo placement (source 004) on se16.

Graph families: layered random DAGs (:func:`benchmarks.se_generators.se_random_dag`, 5 to 96
nodes), the radix-2 IFFT (:func:`benchmarks.se_generators.ifft_graph`), the paper's distance
function and the Morpher loop kernels (``../shared/graphs/morpher``). Per graph: the lower bounds
(II: resource, memory, recurrence; cycles: critical path with every operand on its own tile),
then II / cycles / seconds of the greedy sequential placement, the best of 20 random episodes,
the evolutionary search and the CP-SAT II sweep (warm-started by the better of greedy and random; ``time_limit`` per II,
1 worker, seed 0). Every answer is checked by :mod:`sim.streaming` (column ``sim``). A graph no
method maps shows the rule-based diagnosis.

Caveats: "optimal" means the CP-SAT sweep proved every smaller II impossible and the makespan
optimal at its II; the critical-path bound ignores link latency and slot conflicts, so it is
often far below what the fabric allows at a small II.
"""

from __future__ import annotations

import time
from typing import Any

from benchmarks.registry import Column, Entry, Suite
from benchmarks.suites.common import graphs_root, shorten

__all__ = ["SUITE", "map_one", "morpher_files", "RANDOM_SIZES"]

RANDOM_SIZES = (5, 8, 10, 15, 20, 30, 40, 60, 96)
QUICK_RANDOM_SIZES = (5, 10)
METHODS = ("greedy", "random", "evo", "cp")

COLUMNS = (
    Column("graph", "graph"), Column("family", "family"), Column("nodes", "nodes"),
    Column("edges", "edges"), Column("ii_lb", "II LB"), Column("cp_lb", "cycles LB (crit. path)"),
    *[c for m in METHODS for c in (Column(f"{m}_ii", f"{m} II"),
                                   Column(f"{m}_cycles", f"{m} cycles"),
                                   Column(f"{m}_s", f"{m} s", "{:.2f}"))],
    Column("cp_status", "CP-SAT status"), Column("sim", "sim"), Column("note", "note"),
)


def _graph(family: str, spec_arg: Any):
    from benchmarks.se_generators import ifft_graph, se_random_dag
    from model.importers import load_graph
    from sim.streaming import distance_graph

    if family == "random":
        return se_random_dag(int(spec_arg), seed=0)
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
        return None, time.perf_counter() - started, f"{name}: {exc}"


def map_one(family: str, arg: Any, time_limit: float = 5.0, evo_limit: float = 5.0
            ) -> dict[str, Any]:
    """One row: bounds, the four methods, the simulator's verdict on each answer."""
    from formulations.streaming import (StreamingInfeasible, lower_bounds, precheck,
                                        problem_from_graph, solve_streaming)
    from formulations.streaming_env import (evolutionary_schedule, greedy_schedule,
                                            random_schedule)
    from hardware import load_hardware
    from sim.streaming import check_streaming

    se = load_hardware("se16")
    graph = _graph(family, arg)
    row: dict[str, Any] = {"graph": graph.name if family != "morpher" else _short(arg),
                           "family": family, "nodes": len(graph.nodes), "edges": len(graph.edges)}
    try:
        problem = problem_from_graph(graph, se)
    except StreamingInfeasible as exc:
        return row | {"note": shorten("; ".join(exc.reasons), 200), "cp_status": "not mappable"}
    bounds = lower_bounds(problem)
    row |= {"ii_lb": bounds["ii"], "cp_lb": bounds["critical_path"]}
    reasons = precheck(problem)
    if reasons:
        rules = sorted({r.split(":")[0] for r in reasons})
        return row | {"cp_status": "not mappable", "note": shorten(
            f"{', '.join(rules)}: {reasons[0]}", 200)}
    runs = {
        "greedy": _run("greedy", lambda: greedy_schedule(graph, se)),
        "random": _run("random", lambda: random_schedule(graph, se, seed=0, tries=20)),
        "evo": _run("evo", lambda: evolutionary_schedule(graph, se, seed=0, time_limit=evo_limit)),
    }
    heuristics = [r[0] for r in (runs["greedy"], runs["random"]) if r[0] is not None]
    warm = min(heuristics, key=lambda s: (s.ii, s.cycles)) if heuristics else None
    runs["cp"] = _run("cp", lambda: solve_streaming(graph, se, time_limit=time_limit, seed=0,
                                                    workers=1, warm=warm))
    sim_ok, notes = [], []
    for method, (sched, seconds, err) in runs.items():
        row[f"{method}_s"] = round(seconds, 3)
        if sched is None:
            notes.append(shorten(err or "", 80))
            continue
        row[f"{method}_ii"], row[f"{method}_cycles"] = sched.ii, sched.cycles
        placement = {n: {"tile": sched.tile[n], "slot": sched.slot[n], "cycle": sched.cycle[n]}
                     for n in sched.tile}
        report = check_streaming(graph, se, placement, sched.ii, sched.delays)
        sim_ok.append(report.ok and report.cycles == sched.cycles)
    cp = runs["cp"][0]
    row["cp_status"] = (cp.status if cp.method == "cp-sat" else f"kept {cp.method}") if cp else "failed"
    row["sim"] = "all ok" if sim_ok and all(sim_ok) else ("REJECTED" if sim_ok else "—")
    row["note"] = "; ".join(n for n in notes if n) or ""
    return row


def _short(path: Any) -> str:
    text = str(path)
    return text.split("morpher/")[-1].replace("_INNERMOST", "").replace("_DFG.xml", "")[:48]


def morpher_files() -> list[str]:
    root = graphs_root() / "morpher"
    return sorted(str(p) for p in root.rglob("*.xml")) if root.exists() else []


def _entries(quick: bool) -> list[Entry]:
    limit, evo = (2.0, 1.0) if quick else (5.0, 5.0)
    target = "benchmarks.suites.streaming:map_one"
    entries = [Entry("distance", target, {"family": "distance", "arg": 0, "time_limit": limit,
                                          "evo_limit": evo}, timeout=120,
                     fixed={"graph": "distance", "family": "distance"})]
    for n in (QUICK_RANDOM_SIZES if quick else RANDOM_SIZES):
        entries.append(Entry(f"random {n}", target, {"family": "random", "arg": n,
                                                     "time_limit": limit, "evo_limit": evo},
                             timeout=300, fixed={"graph": f"se-random-{n}-s0", "family": "random"}))
    for points in (() if quick else (4, 8)):
        entries.append(Entry(f"ifft {points}", target, {"family": "ifft", "arg": points,
                                                        "time_limit": limit, "evo_limit": evo},
                             timeout=300, fixed={"graph": f"ifft{points}", "family": "ifft"}))
    files = morpher_files()
    if not files:
        return entries + [Entry("morpher", "", fixed={"graph": "morpher"},
                                skip="../shared/graphs/morpher is absent")]
    for path in (files[:3] if quick else files):
        entries.append(Entry(_short(path), target, {"family": "morpher", "arg": path,
                                                    "time_limit": limit, "evo_limit": evo},
                             timeout=300, fixed={"graph": _short(path), "family": "morpher"}))
    return entries


SUITE = Suite(
    name="streaming",
    title="Streaming Engine (source 004): II and cycles of greedy, random, evolutionary, CP-SAT",
    columns=COLUMNS,
    entries=_entries,
    notes=("se16: 16 tiles, II <= 6, instruction latency 3, SF links +-1 (1 cycle) / +-2 "
           "(2 cycles). CP-SAT: II sweep from the lower bound, makespan minimised at each II, "
           "5 s per II (2 s in --quick), 1 worker, seed 0, warm start = better of greedy and random. random = best of "
           "20 episodes per II; evo = (8 + 16) rank-genome search, 5 s. Every answer is "
           "re-checked by sim.streaming. 'not mappable' rows name the rule (pre-check)."),
)
