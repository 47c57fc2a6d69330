"""Suite ``pipeline``: :func:`pipeline.flow.map_graph` end to end on the MSR DNN graphs.

Every graph of ``msr-dnn/OperatorGraphs`` and ``msr-dnn/LayerGraphs`` (read in
place from the shared graphs folder, smallest first) is mapped on the
``plasticine`` and ``sn10`` presets with default :class:`~pipeline.flow.RunOptions`.
A row gives the mapping's status and metrics, the wall time summed per stage
kind (sections, order, placement, routing), the total and the peak memory. A
graph that cannot be mapped is a row with status ``failed`` and the
diagnosis, shortened; a run the checker rejects is status ``rejected``.

When the shared graphs folder is absent (a fresh clone), the suite has one
skipped entry that says so.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from benchmarks.registry import Column, Entry, Suite
from benchmarks.suites.common import missing_msr_entry, msr_graphs, shorten
from hardware import load_hardware
from model.importers import load_graph
from pipeline.feedback import CheckerRejected, MappingFailed
from pipeline.flow import map_graph
from pipeline.options import RunOptions

__all__ = ["SUITE", "PRESETS", "QUICK_PRESETS", "QUICK_GRAPHS", "STAGE_KINDS",
           "entries_for", "map_file"]

#: Hardware presets of the full run, and of ``--quick`` (sn10 end to end takes hours here;
#: its cuts are in the ``sections`` suite).
PRESETS = ("plasticine",)
QUICK_PRESETS = ("plasticine",)
#: How many of the smallest graphs ``--quick`` maps.
QUICK_GRAPHS = 3
#: Stage kinds whose times are summed into columns ``<kind>_s``.
STAGE_KINDS = ("sections", "order", "placement", "routing")
#: Seconds one entry (one graph on one preset) may take.
ENTRY_TIMEOUT = 900.0

COLUMNS = (
    Column("graph", "graph"),
    Column("preset", "preset"),
    Column("nodes", "nodes", "{:,}"),
    Column("edges", "edges", "{:,}"),
    Column("status", "status"),
    Column("sections", "sections"),
    Column("lower_bound", "sections lower bound"),
    Column("feedback_rounds", "feedback rounds"),
    Column("sections_reused", "sections reused"),
    Column("bank_units", "bank units"),
    Column("buffer_units", "buffer units"),
    Column("wirelength", "wirelength", "{:,}"),
    Column("weighted_distance", "weighted distance", "{:.2f}"),
    Column("max_link_load", "max link load", "{:.2f}"),
    Column("routing_iterations", "routing iterations"),
    Column("dram_bytes", "DRAM bytes", "{:,.0f}"),
    *(Column(f"{kind}_s", f"{kind} (s)", "{:.3f}") for kind in STAGE_KINDS),
    Column("total_s", "total (s)", "{:.3f}"),
    Column("peak_mib", "peak MiB", "{:.0f}"),
    Column("note", "diagnosis / note"),
)


def _stage_times(stages: list[dict[str, Any]]) -> dict[str, float]:
    totals = {f"{kind}_s": 0.0 for kind in STAGE_KINDS}
    for stage in stages:
        key = f"{stage.get('stage')}_s"
        if key in totals:
            totals[key] += stage.get("time") or 0.0
    return {key: round(value, 4) for key, value in totals.items()}


def _mapped_row(mapping) -> dict[str, Any]:
    keys = ("sections", "wirelength", "weighted_distance", "max_link_load",
            "routing_iterations", "dram_bytes", "feedback_rounds", "sections_reused")
    cuts = [s for s in mapping.stages if s.get("stage") == "sections"]
    return ({"status": mapping.status} | {k: mapping.metrics.get(k) for k in keys}
            | {"lower_bound": cuts[0].get("lower_bound") if cuts else None}
            | {k: sum(s.get(k, 0) for s in mapping.sections)
               for k in ("bank_units", "buffer_units")})


def map_file(path: str, preset: str) -> dict[str, Any]:
    """One row: load ``path``, map it on ``preset``, record metrics or the diagnosis."""

    started = time.perf_counter()
    graph, spec = load_graph(path), load_hardware(preset)
    load_s, started = time.perf_counter() - started, time.perf_counter()
    try:
        mapping = map_graph(graph, spec, RunOptions())
        row = _mapped_row(mapping)
    except MappingFailed as exc:
        mapping = exc.mapping
        row = {"status": "failed", "sections": len(mapping.sections) or None,
               "note": shorten(mapping.diagnosis or str(exc))}
    except CheckerRejected as exc:
        mapping, row = None, {"status": "rejected", "note": shorten(str(exc))}
    total_s = time.perf_counter() - started
    stages = _stage_times(mapping.stages) if mapping is not None else {}
    return row | stages | {"nodes": len(graph.nodes), "edges": len(graph.edges),
                           "load_s": round(load_s, 4), "total_s": round(total_s, 4)}


def entries_for(graphs: list[tuple[str, Path, int, int]], presets=PRESETS,
                timeout: float = ENTRY_TIMEOUT) -> list[Entry]:
    """One entry per graph and preset (graph-major order)."""
    return [Entry(f"{name} on {preset}", "benchmarks.suites.pipeline:map_file",
                  {"path": str(path), "preset": preset}, timeout=timeout,
                  fixed={"graph": name, "preset": preset, "nodes": nodes, "edges": edges})
            for name, path, nodes, edges in graphs for preset in presets]


def _entries(quick: bool) -> list[Entry]:
    graphs = msr_graphs()
    if not graphs:
        return [missing_msr_entry()]
    if quick:
        return entries_for(graphs[:QUICK_GRAPHS], QUICK_PRESETS)
    return entries_for(graphs)


SUITE = Suite(
    name="pipeline",
    title="End-to-end mapping (pipeline.flow.map_graph) of the MSR DNN graphs",
    columns=COLUMNS,
    entries=_entries,
    notes=("Default RunOptions; stage columns sum the stage times of all sections; total = "
           "map_graph wall time (graph loading excluded); peak MiB is the entry's whole "
           f"process. Per-entry timeout {ENTRY_TIMEOUT:g} s."),
)
