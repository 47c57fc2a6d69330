"""Suite ``onnx_par``: what the stage-time rule buys, judged by the performance simulator.

Each ONNX model is mapped twice on the same preset and budget: with the PCUs of the
stage-time rule (:func:`formulations.sections.estimates.par_factor`, the default) and with
every operator held to one PCU (``pcu = 1`` given on every operator, so the rule does not
apply; ``flops`` kept). Both mappings are simulated with :func:`sim.perf.simulate_mapping`
(which knows nothing of the rule: a stage's compute time is its ``flops`` over its PCUs'
FLOP rate); a row gives the sections, the units placed, the simulated throughput and the
slowest stage of the slowest section.
"""

from __future__ import annotations

import time
from dataclasses import replace
from typing import Any

from benchmarks.registry import Column, Entry, Suite
from benchmarks.suites.onnx import EXAMPLES, EXAMPLES_DIR, LIGHT
from formulations.sections import estimate_units
from hardware import load_hardware
from model.graph import Graph
from model.importers import load_graph
from pipeline.flow import map_graph
from pipeline.options import RunOptions
from sim.perf import simulate_mapping

__all__ = ["SUITE", "MODELS", "map_and_simulate"]

#: The models (small enough to map in well under a minute on plasticine) and the budget.
MODELS = ("zfnet512", "squeezenet", "bert_encoder_layer", "gpt2_block")
TIME_LIMIT = 40.0

COLUMNS = (
    Column("model", "model"),
    Column("preset", "preset"),
    Column("estimate", "PCUs per operator"),
    Column("pcus", "PCUs asked", "{:,.0f}"),
    Column("sections", "sections"),
    Column("units", "units placed", "{:,}"),
    Column("throughput", "simulated samples/s", "{:,.1f}"),
    Column("slowest", "slowest stage"),
    Column("map_s", "map (s)", "{:.1f}"),
)


def _graph(model: str, par1: bool) -> Graph:
    if model in EXAMPLES:
        graph = load_graph(EXAMPLES_DIR / f"{model}.onnx", dims=EXAMPLES[model])
    else:
        graph = load_graph(LIGHT / f"light_{model}.onnx")
    if not par1:
        return graph
    nodes = [replace(n, pcu=1.0) if n.unit == "pcu" else n for n in graph.nodes]
    return Graph(graph.name, nodes, list(graph.edges), dict(graph.attrs))


def map_and_simulate(model: str, preset: str, par1: bool) -> dict[str, Any]:
    """One row: map ``model`` with the rule (or PAR 1) and simulate the mapping."""
    graph, spec = _graph(model, par1), load_hardware(preset)
    started = time.perf_counter()
    mapping = map_graph(graph, spec, RunOptions(time_limit=TIME_LIMIT))
    seconds = time.perf_counter() - started
    report = simulate_mapping(graph, spec, mapping)
    slowest = report.slowest
    stage = slowest.slowest_stage if slowest is not None else None
    return {"sections": mapping.metrics.get("sections"), "units": len(mapping.placement),
            "pcus": sum(n.pcu or 0 for n in estimate_units(graph, spec).nodes if n.unit == "pcu"),
            "throughput": report.throughput,
            "slowest": f"{stage.node} ({stage.kind}, {stage.pcus} PCU)" if stage else None,
            "map_s": round(seconds, 2)}


def _entries(quick: bool) -> list[Entry]:
    models = MODELS[:1] if quick else MODELS
    return [Entry(f"{m} {'PAR 1' if par1 else 'rule'}",
                  "benchmarks.suites.onnx_par:map_and_simulate",
                  {"model": m, "preset": "plasticine", "par1": par1}, timeout=600,
                  fixed={"model": m, "preset": "plasticine",
                         "estimate": "1 (PAR 1)" if par1 else "stage-time rule"})
            for m in models for par1 in (False, True)]


SUITE = Suite(
    name="onnx_par",
    title="The stage-time rule vs one PCU per operator, simulated (sim.perf)",
    columns=COLUMNS,
    entries=_entries,
    notes=(f"Both rows of a model: same preset, seed and budget ({TIME_LIMIT:g} s); "
           "throughput from sim.perf.simulate_mapping (the slowest section's period, "
           "sections run one after another over a batch)."),
)
