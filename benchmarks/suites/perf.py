"""Suite ``perf``: the performance simulator (:mod:`sim.perf`) on real mappings.

Every MSR DNN graph (``msr-dnn/OperatorGraphs`` and ``LayerGraphs``, read in place, smallest
first) and the repository's two ONNX transformer examples (``bert_encoder_layer``,
``gpt2_block`` at ``--dim seq=128``, whose nodes carry ``flops``; also on ``sn10``) are mapped
once on ``plasticine`` with a modest budget (:data:`TIME_LIMIT` s, the run's ``--time-limit``); the
mapping is then simulated again with :func:`sim.perf.simulate_mapping` and timed (best of
:data:`REPEATS`). A row gives the simulation's wall time and size (units, samples
simulated), the estimate (throughput, latency, the bottleneck, the busiest link), the
normalised throughput of the sections (min and mean) and where a batch's time goes (shares
of compute, on-chip transfer, DRAM, reconfiguration).

The issue's speed target: a bert_L-12 training mapping simulated in under 10 s.

``--quick``: bert_L-12 training and the two ONNX examples. When the shared graphs folder is
absent the MSR rows are one skipped entry.
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
from sim.perf import simulate_mapping

__all__ = ["SUITE", "TIME_LIMIT", "REPEATS", "RETRY", "ONNX_EXAMPLES", "simulate_file"]

#: The mapping's budget (seconds) before the simulation is timed.
TIME_LIMIT = 20.0
#: Simulations timed per mapping (the best is reported).
REPEATS = 3
#: A mapping that runs out of time is retried once with this many times the budget.
RETRY = 3
#: The ONNX examples with flops, and their dimensions.
ONNX_EXAMPLES = {"bert_encoder_layer": {"seq": 128}, "gpt2_block": {"seq": 128}}
EXAMPLES_DIR = Path(__file__).resolve().parents[2] / "examples"
#: The ONNX examples run on both chips (12.3 and 320 TFLOPS peak); the MSR graphs on plasticine.
ONNX_PRESETS = ("plasticine", "sn10")
#: The graph of the issue's speed target.
TARGET_GRAPH = "OperatorGraphs/bert_L-12_training"
ENTRY_TIMEOUT = 600.0

COLUMNS = (
    Column("graph", "graph"),
    Column("preset", "preset"),
    Column("nodes", "nodes", "{:,}"),
    Column("sections", "sections"),
    Column("units", "units placed", "{:,}"),
    Column("map_s", "map (s)", "{:.1f}"),
    Column("sim_s", "simulate (s)", "{:.3f}"),
    Column("samples", "samples simulated", "{:,}"),
    Column("throughput", "samples/s", "{:,.4g}"),
    Column("samples_per_cycle", "samples/cycle", "{:.4g}"),
    Column("latency_s", "latency (s)", "{:.4g}"),
    Column("normalised_min", "normalised min", "{:.3f}"),
    Column("normalised_mean", "normalised mean", "{:.3f}"),
    Column("compute_pct", "compute %", "{:.1f}"),
    Column("transfer_pct", "transfer %", "{:.1f}"),
    Column("dram_pct", "DRAM %", "{:.1f}"),
    Column("reconfig_pct", "reconfig %", "{:.1f}"),
    Column("bottleneck", "bottleneck"),
    Column("busiest_link", "busiest link"),
    Column("note", "note"),
)


def _estimate_row(report) -> dict[str, Any]:
    times = report.breakdowns()
    total = sum(t["total_s"] for t in times) or 1.0
    shares = {f"{k[:-2]}_pct": 100 * sum(t[k] for t in times) / total
              for k in ("compute_s", "transfer_s", "dram_s", "reconfig_s")}
    norm = [s.normalised for s in report.sections]
    return shares | {"throughput": report.throughput, "samples_per_cycle": report.samples_per_cycle,
                     "latency_s": report.latency_s, "bottleneck": shorten(report.bottleneck, 70),
                     "busiest_link": report.busiest_link,
                     "normalised_min": min(norm, default=None),
                     "normalised_mean": sum(norm) / len(norm) if norm else None,
                     "samples": sum(s.samples_simulated for s in report.sections)}


def simulate_file(path: str, preset: str, dims: dict[str, int] | None = None,
                  time_limit: float = TIME_LIMIT) -> dict[str, Any]:
    """One row: map ``path`` on ``preset`` within ``time_limit``, then time the simulation."""
    graph, spec = load_graph(path, dims=dims), load_hardware(preset)
    started = time.perf_counter()
    try:
        mapping, retried = _map(graph, spec, time_limit)
    except MappingFailed as exc:
        return {"status": "failed", "note": shorten(exc.mapping.diagnosis or str(exc))}
    except CheckerRejected as exc:
        return {"status": "rejected", "note": shorten(str(exc))}
    map_s = time.perf_counter() - started
    best, report = float("inf"), None
    for _ in range(REPEATS):
        started = time.perf_counter()
        report = simulate_mapping(graph, spec, mapping)
        best = min(best, time.perf_counter() - started)
    streamed = sum(s.streamed for s in report.sections)
    compute = sum(1 for s in report.sections for t in s.stages if t.pcus)
    unrouted = sum(s.unrouted for s in report.sections)
    notes = ([f"mapped at --time-limit {RETRY * time_limit:g} (ran out at {time_limit:g})"]
             if retried else [])
    notes += ([f"{streamed} of {compute} compute stages without flops (streaming rule)"]
             if streamed else []) + ([f"{unrouted} lane/bank chain edges on assumed shortest "
                                      "routes"] if unrouted else [])
    return _estimate_row(report) | {
        "nodes": len(graph.nodes), "sections": len(mapping.sections),
        "units": len(mapping.placement), "map_s": round(map_s, 2), "sim_s": round(best, 4),
        "note": "; ".join(notes) or None}


def _map(graph, spec, time_limit: float):
    """The mapping, and whether it took the retry with :data:`RETRY` times the budget (a
    shared machine can run the first budget out)."""
    try:
        return map_graph(graph, spec, RunOptions(time_limit=time_limit)), False
    except MappingFailed as exc:
        if "time limit" not in (exc.mapping.diagnosis or ""):
            raise
    return map_graph(graph, spec, RunOptions(time_limit=RETRY * time_limit)), True


def _entries(quick: bool) -> list[Entry]:
    entries = []
    graphs = msr_graphs()
    if not graphs:
        entries.append(missing_msr_entry())
    for name, path, nodes, _ in graphs:
        if quick and name != TARGET_GRAPH:
            continue
        entries.append(Entry(f"{name} on plasticine", "benchmarks.suites.perf:simulate_file",
                             {"path": str(path), "preset": "plasticine"}, timeout=ENTRY_TIMEOUT,
                             fixed={"graph": name, "preset": "plasticine", "nodes": nodes}))
    for preset in ONNX_PRESETS[:1] if quick else ONNX_PRESETS:
        for model, dims in ONNX_EXAMPLES.items():
            entries.append(Entry(f"{model} on {preset}", "benchmarks.suites.perf:simulate_file",
                                 {"path": str(EXAMPLES_DIR / f"{model}.onnx"), "preset": preset,
                                  "dims": dims}, timeout=ENTRY_TIMEOUT,
                                 fixed={"graph": f"examples/{model}.onnx", "preset": preset}))
    return entries


SUITE = Suite(
    name="perf",
    title="Performance simulator (sim.perf.simulate_mapping) on real mappings",
    columns=COLUMNS,
    entries=_entries,
    notes=(f"Each graph mapped once on plasticine with --time-limit {TIME_LIMIT:g}, then "
           f"simulated {REPEATS} times (best wall time shown). Batch of 256 samples, sections "
           "run one after another. MSR graphs carry no flops: their compute stages take the "
           "streaming rule (bytes / (4 x pcu_lanes x pcus)); the ONNX examples carry flops. "
           "Target: bert_L-12 training simulated in < 10 s."),
)
