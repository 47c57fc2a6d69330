"""Suite ``sorter``: the priority-queue sorter (source 000) on random DAGs and FIG. 9.

Each entry generates a :func:`~benchmarks.generators.random_dag` (two edges per
node, seed 0) in a fresh process, times :func:`formulations.sorter.sort_nodes`
on it and checks that the order is a permutation of the nodes. On the small
sizes the literal re-rank-everything reference
(:func:`benchmarks.reference_sorter.reference_sort`) runs on the same graph in the same process, under
its own time limit, giving the "speed-up vs reference" column and a check that
both orders agree. The FIG. 9 graph checks the worked example's order.

Caveats: the peak memory is the whole child process (imports, graph and
sort), measured before the reference runs; sort times under 50 ms are the best
of several repeats.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from benchmarks.generators import random_dag
from benchmarks.reference_sorter import FIG9_ORDER, reference_sort
from benchmarks.registry import Column, Entry, Suite
from benchmarks.suites.common import TimeLimitExceeded, time_limit, timed
from benchmarks.worker import peak_mib
from formulations.sorter import sort_nodes
from model.graphjson import read_graph

__all__ = ["SUITE", "SIZES", "QUICK_SIZES", "REFERENCE_MAX_NODES", "entries_for", "sort_random",
           "sort_fig9"]

#: The worked example of the patent, as shipped.
FIG9 = Path(__file__).resolve().parents[2] / "examples" / "fig9.json"
#: (nodes, edges) of the full run.
SIZES = ((1_000, 2_000), (10_000, 20_000), (100_000, 200_000), (1_000_000, 2_000_000))
#: (nodes, edges) of ``--quick``.
QUICK_SIZES = ((1_000, 2_000), (10_000, 20_000))
#: The reference runs on graphs up to this many nodes (it re-ranks the whole ODS every step).
REFERENCE_MAX_NODES = 10_000
#: Seconds the reference may take on one graph before it is given up ("—").
REFERENCE_TIME_LIMIT = 900.0

COLUMNS = (
    Column("graph", "graph"),
    Column("nodes", "nodes", "{:,}"),
    Column("edges", "edges", "{:,}"),
    Column("generate_s", "generate (s)", "{:.3f}"),
    Column("sort_s", "sort (s)", "{:.4f}"),
    Column("nodes_per_s", "nodes/s", "{:,.0f}"),
    Column("peak_mib", "peak MiB", "{:.0f}"),
    Column("check", "check"),
    Column("reference_s", "reference (s)", "{:.3f}"),
    Column("speedup", "speed-up vs reference", "{:.1f}×"),
    Column("same_order", "same order as reference"),
    Column("status", "status"),
    Column("note", "note"),
)


def _check(graph, order: list[str]) -> str:
    ok = len(order) == len(graph.nodes) and set(order) == set(graph.node_ids)
    return "permutation" if ok else "NOT a permutation"


def _with_reference(graph, order: list[str], sort_s: float, limit: float | None
                    ) -> dict[str, Any]:
    """Time the reference on ``graph`` (within ``limit`` s) and compare it with ``order``."""
    try:
        with time_limit(limit):
            reference_s, result = timed(lambda: reference_sort(graph))
    except TimeLimitExceeded:
        return {"note": f"reference gave up after {limit:g} s (speed-up > {limit / sort_s:,.0f}×)"}
    return {"reference_s": round(reference_s, 4), "speedup": round(reference_s / sort_s, 2),
            "same_order": result.order == order}


def sort_random(n_nodes: int, n_edges: int, seed: int = 0, reference: bool = False,
                reference_limit: float | None = REFERENCE_TIME_LIMIT) -> dict[str, Any]:
    """One row: generate a random DAG, sort it, check it (and run the reference if asked)."""
    generate_s, graph = timed(lambda: random_dag(n_nodes, n_edges, seed=seed), max_repeats=1)
    sort_s, result = timed(lambda: sort_nodes(graph))
    row = {"graph": graph.name, "nodes": len(graph.nodes), "edges": len(graph.edges),
           "generate_s": round(generate_s, 4), "sort_s": round(sort_s, 5),
           "nodes_per_s": round(len(graph.nodes) / sort_s), "peak_mib": peak_mib(),
           "check": _check(graph, result.order), "status": "ok"}
    if reference:
        row |= _with_reference(graph, result.order, sort_s, reference_limit)
    return row


def sort_fig9() -> dict[str, Any]:
    """One row: the FIG. 9 graph must sort to the worked example's order."""
    graph = read_graph(FIG9)
    sort_s, result = timed(lambda: sort_nodes(graph), min_total=0.5, max_repeats=1000)
    check = _check(graph, result.order)
    check += ", FIG. 9 order" if result.order == list(FIG9_ORDER) else ", NOT the FIG. 9 order"
    row = {"graph": "fig9", "nodes": len(graph.nodes), "edges": len(graph.edges),
           "sort_s": round(sort_s, 6), "nodes_per_s": round(len(graph.nodes) / sort_s),
           "peak_mib": peak_mib(), "check": check, "status": "ok"}
    return row | _with_reference(graph, result.order, sort_s, 60.0)


def _fig9_entry() -> list[Entry]:
    return [Entry("fig9", "benchmarks.suites.sorter:sort_fig9", timeout=120)]


def entries_for(sizes=SIZES, reference_max_nodes: int = REFERENCE_MAX_NODES,
                reference_limit: float = REFERENCE_TIME_LIMIT, fig9: bool = True) -> list[Entry]:
    """Entries for random DAGs of ``sizes`` (plus FIG. 9); tests pass small sizes."""
    entries = _fig9_entry() if fig9 else []
    for n_nodes, n_edges in sizes:
        reference = n_nodes <= reference_max_nodes
        timeout = 120 + n_nodes / 1_000 + (reference_limit if reference else 0)
        entries.append(Entry(
            f"random {n_nodes:,} nodes / {n_edges:,} edges", "benchmarks.suites.sorter:sort_random",
            {"n_nodes": n_nodes, "n_edges": n_edges, "reference": reference,
             "reference_limit": reference_limit},
            timeout=timeout, fixed={"graph": f"random-{n_nodes}-{n_edges}-s0", "nodes": n_nodes,
                                    "edges": n_edges}))
    return entries


def _entries(quick: bool) -> list[Entry]:
    if quick:
        return entries_for(QUICK_SIZES, reference_max_nodes=1_000, reference_limit=20)
    return entries_for(SIZES)


SUITE = Suite(
    name="sorter",
    title="Priority-queue sorter (source 000): random DAGs and FIG. 9",
    columns=COLUMNS,
    entries=_entries,
    notes=("random DAGs: random_dag(n, 2n, seed=0) — 10 % multi-sink net drivers, 0.1 % "
           "virtual channels, several weakly connected components. Peak MiB is the entry's "
           "whole process (imports + graph + sort), measured before the reference runs. "
           "Times under 50 ms are the best of repeats. The reference (literal re-rank every "
           f"iteration) runs up to {REFERENCE_MAX_NODES:,} nodes; — = not run."),
)
