"""Suite ``buffers``: stage-buffer balancing (source 001) on the real MSR DNN graphs.

Each entry balances one whole graph as one section (the hardest case: every join of the
graph in one model) on one backend, in a fresh process: edges without a depth get depth 1,
and each buffer's ``depth_per_PMU`` comes from the preset's PMU bytes and the edge's bytes
per sample (``RduSpec.pmu_depth``). It records the model build time (problem, model, warm
start), the solve time (PMU MIP plus the least-added-depth LP), PMUs before and after, the
LP relaxation's bound and the gap to the optimum, and, in the ``highs`` row of each graph,
the pairwise "raise the lesser" heuristic (FIG. 12; one pass over the joins in
topological order, tuning a buffer with one consumer and inserting next to the join for a
shared one, no load shifting) beside the optimum without load shifting, and the
steady-state throughput the back-pressure simulator measures before and after.

Caveats: times are wall clock on a shared 2-core machine, single-threaded solvers; a whole
training graph balanced as one section needs very deep buffers on its long skip edges
(forward activations consumed by the backward pass), which is why PMUs grow so much — the
pipeline balances per section, where DRAM cuts those edges.
"""

from __future__ import annotations

import time
from typing import Any

from benchmarks.registry import Column, Entry, Suite
from benchmarks.suites.common import missing_msr_entry, msr_graphs
from formulations.buffers import (BufferOptions, build_buffer_model, buffer_problem,
                                  pairwise_balance, solve_buffers)
from formulations.solver import SolveSettings, available_backends
from hardware import load_hardware
from model.importers import load_graph
from sim.backpressure import simulate

__all__ = ["SUITE", "BACKENDS", "QUICK_BACKENDS", "balance_graph", "entries_for"]

#: Backends of the full run (those available), and of ``--quick``.
BACKENDS = ("highs", "scip", "cp-sat", "pyomo-highs")
QUICK_BACKENDS = ("highs",)
#: Seconds per solve, and per entry.
TIME_LIMIT = 60.0
ENTRY_TIMEOUT = 400.0
PRESET = "plasticine"

COLUMNS = (
    Column("graph", "graph"),
    Column("nodes", "nodes", "{:,}"),
    Column("edges", "edges", "{:,}"),
    Column("joins", "joins", "{:,}"),
    Column("backend", "backend"),
    Column("build_s", "build (s)", "{:.3f}"),
    Column("solve_s", "solve (s)", "{:.3f}"),
    Column("status", "status"),
    Column("pmus_before", "PMUs before", "{:,}"),
    Column("pmus_after", "PMUs after", "{:,}"),
    Column("lp_bound", "LP bound", "{:,.1f}"),
    Column("lp_gap", "LP gap", "{:.2%}"),
    Column("mip_gap", "MIP gap", "{:.2%}"),
    Column("added_depth", "depth added", "{:,}"),
    Column("inserted", "buffers inserted", "{:,}"),
    Column("opt_fixed_loads", "optimum, loads fixed", "{:,}"),
    Column("heuristic_pmus", "pairwise heuristic PMUs", "{:,}"),
    Column("heuristic_unbalanced", "heuristic: joins left unbalanced", "{:,}"),
    Column("throughput_before", "throughput before", "{:.4f}"),
    Column("throughput_after", "throughput after", "{:.4f}"),
    Column("sim_s", "simulate (s)", "{:.1f}"),
    Column("note", "note"),
)


def balance_graph(path: str, backend: str, preset: str = PRESET, extras: bool = False,
                  time_limit: float = TIME_LIMIT) -> dict[str, Any]:
    """One row: balance ``path`` on ``backend``; with ``extras`` also heuristic and simulator."""
    graph, spec = load_graph(path), load_hardware(preset)
    settings = SolveSettings(backend, time_limit=time_limit)
    sol = solve_buffers(graph, settings, spec, BufferOptions())
    first = sol.result
    row = {"nodes": len(graph.nodes), "edges": len(graph.edges),
           "joins": len(sol.problem.joins), "backend": backend,
           "build_s": round(sol.build_time, 4), "solve_s": round(sol.solve_time, 4),
           "status": sol.status, "pmus_before": sol.pmus_before,
           "pmus_after": sol.pmus_after if sol.ok else None,
           "added_depth": sol.added_depth if sol.ok else None,
           "inserted": len(sol.inserted_buffers()) if sol.ok else None,
           "mip_gap": None if first is None else first.gap,
           "note": sol.diagnosis or _solve_note(sol)}
    row |= _lp_bound(sol)
    if extras and sol.ok:
        row |= _extras(graph, spec, sol, settings)
    return row


def _solve_note(sol) -> str:
    if sol.result is None:
        return sol.method
    phases = " + ".join(f"{r.status.name.lower()} {r.wall_time:.2f} s" for r in sol.results)
    return f"{sol.method}: {phases}"


def _lp_bound(sol) -> dict[str, Any]:
    """The LP relaxation's optimum and its gap to the answer (PMUs)."""
    if sol.result is None:
        return {}
    model, _ = build_buffer_model(sol.problem, relax=True)
    lp = model.solve(backend="highs", time_limit=TIME_LIMIT)
    if not lp.has_solution or not sol.ok:
        return {}
    gap = (sol.pmus_after - lp.objective) / sol.pmus_after if sol.pmus_after else 0.0
    return {"lp_bound": round(lp.objective, 3), "lp_gap": max(0.0, gap)}


def _extras(graph, spec, sol, settings: SolveSettings) -> dict[str, Any]:
    fixed = solve_buffers(graph, settings, spec, BufferOptions(load_shift=False))
    heuristic = pairwise_balance(buffer_problem(graph, spec, BufferOptions(load_shift=False)))
    started = time.perf_counter()
    rows = sol.edge_rows()
    before = simulate(graph).throughput
    tuned = {i: r["tuned_depth"] for i, r in rows.items() if r["balanced"]}
    inserted = {i: r["inserted_depth"] for i, r in rows.items() if r["inserted_depth"]}
    after = simulate(graph, depths=tuned, inserted=inserted, loads=sol.loads).throughput
    return {"opt_fixed_loads": fixed.pmus_after if fixed.ok else None,
            "heuristic_pmus": heuristic.pmus, "heuristic_unbalanced": len(heuristic.unbalanced),
            "throughput_before": round(before, 6), "throughput_after": round(after, 6),
            "sim_s": round(time.perf_counter() - started, 2)}


def entries_for(graphs, backends=BACKENDS, timeout: float = ENTRY_TIMEOUT) -> list[Entry]:
    """One entry per graph and available backend; the first backend's row has the extras."""
    here = [b for b in backends if b in available_backends()]
    return [Entry(f"{name} on {backend}", "benchmarks.suites.buffers:balance_graph",
                  {"path": str(path), "backend": backend, "extras": k == 0}, timeout=timeout,
                  fixed={"graph": name, "backend": backend, "nodes": nodes, "edges": edges})
            for name, path, nodes, edges in graphs for k, backend in enumerate(here)]


def _entries(quick: bool) -> list[Entry]:
    graphs = msr_graphs()
    if not graphs:
        return [missing_msr_entry()]
    if quick:
        return entries_for(graphs[:3], QUICK_BACKENDS, timeout=50)
    return entries_for(graphs)


SUITE = Suite(
    name="buffers",
    title="Stage-buffer balancing (source 001): one MIP per whole MSR DNN graph",
    columns=COLUMNS,
    entries=_entries,
    notes=("Whole graph = one section; depth 1 where the graph has none; depth_per_PMU = "
           f"{PRESET} PMU bytes / edge bytes. Solve = PMU MIP + least-added-depth LP; LP gap = "
           "(optimum - LP relaxation) / optimum. The heuristic (pairwise raise-the-lesser, "
           "one topological pass, loads fixed) compares with 'optimum, loads fixed'. Throughput = "
           "slowest sink's batches per step in the back-pressure simulator (highs rows)."),
)
