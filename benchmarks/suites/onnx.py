"""Suite ``onnx``: real ONNX models imported and mapped end to end.

The models are the ones the ``onnx`` wheel ships under
``onnx/backend/test/data/light/`` (AlexNet, DenseNet-121, Inception v1 and v2,
ResNet-50, ShuffleNet, SqueezeNet, VGG-19, ZFNet-512: the real architectures
with weights as ``ConstantOfShape`` nodes) and the repository's
``examples/bert_encoder_layer.onnx`` and ``examples/gpt2_block.onnx`` at
``--dim seq=128``. Each is imported with :func:`model.importers.load_graph`
and mapped with :func:`pipeline.flow.map_graph` (which runs the checker on
every section) on ``plasticine`` and ``sn10``. A row gives the import's nodes,
edges, GFLOPs (2 per multiply-add) and weight bytes, the PCUs the stage-time
rule asks for (sum over operators), the sections, the status and the times.

One more row cross-checks ResNet-50 (:func:`resnet50_crosscheck`): its FLOPs
against the published 4.1 G multiply-adds, and against the MSR DNN
``resnet50_inference`` operator graph (same Caffe2 model): weight tensors,
operator counts per type and Conv/Gemm output bytes (MSR's are at batch 32).
"""

from __future__ import annotations

import collections
import time
from pathlib import Path
from typing import Any

import onnx

from benchmarks.registry import Column, Entry, Suite
from benchmarks.suites.common import graphs_root, shorten
from formulations.sections import estimate_units
from hardware import load_hardware
from model.importers import load_graph
from pipeline.feedback import CheckerRejected, MappingFailed
from pipeline.flow import map_graph
from pipeline.options import RunOptions

__all__ = ["SUITE", "LIGHT", "EXAMPLES", "PRESETS", "map_model", "resnet50_crosscheck",
           "PUBLISHED_RESNET50_MACS"]

#: The real models the onnx wheel ships.
LIGHT = Path(onnx.__file__).parent / "backend" / "test" / "data" / "light"
#: The shipped transformer examples and the dimensions they are mapped at.
EXAMPLES = {"bert_encoder_layer": {"seq": 128}, "gpt2_block": {"seq": 128}}
EXAMPLES_DIR = Path(__file__).resolve().parents[2] / "examples"
PRESETS = ("plasticine", "sn10")
#: Budget of one mapping (seconds, the run's --time-limit) and the entry's timeout.
TIME_LIMIT, QUICK_TIME_LIMIT, ENTRY_TIMEOUT = 120.0, 10.0, 600.0
#: Multiply-adds of ResNet-50 with the stride in the 3x3 convolution (as this Caffe2 model has
#: it: res3_0_branch2b strides 2): the usually quoted 4.1 G; He et al. (2016), Table 1, give
#: 3.8 G for the original with the stride in the first 1x1.
PUBLISHED_RESNET50_MACS = 4.1e9

COLUMNS = (
    Column("model", "model"),
    Column("preset", "preset"),
    Column("nodes", "nodes", "{:,}"),
    Column("edges", "edges", "{:,}"),
    Column("gflops", "GFLOPs", "{:.3f}"),
    Column("weight_mb", "weights (MB)", "{:.2f}"),
    Column("pcus", "PCUs asked", "{:,.0f}"),
    Column("sections", "sections"),
    Column("status", "status"),
    Column("wirelength", "wirelength", "{:,}"),
    Column("import_s", "import (s)", "{:.3f}"),
    Column("total_s", "map (s)", "{:.1f}"),
    Column("peak_mib", "peak MiB", "{:.0f}"),
    Column("note", "note"),
)


def _model_path(model: str) -> tuple[Path, dict[str, int]]:
    if model in EXAMPLES:
        return EXAMPLES_DIR / f"{model}.onnx", EXAMPLES[model]
    return LIGHT / f"light_{model}.onnx", {}


def map_model(model: str, preset: str, time_limit: float = TIME_LIMIT) -> dict[str, Any]:
    """One row: import ``model``, estimate its units on ``preset``, map it, record the result."""
    path, dims = _model_path(model)
    started = time.perf_counter()
    graph = load_graph(path, dims=dims)
    import_s = time.perf_counter() - started
    spec = load_hardware(preset)
    pcus = sum(n.pcu or 0 for n in estimate_units(graph, spec).nodes if n.unit == "pcu")
    row = {"nodes": len(graph.nodes), "edges": len(graph.edges),
           "gflops": graph.attrs["total_flops"] / 1e9,
           "weight_mb": graph.attrs["weight_bytes"] / 1e6,
           "pcus": pcus, "import_s": round(import_s, 4)}
    started = time.perf_counter()
    try:
        mapping = map_graph(graph, spec, RunOptions(time_limit=time_limit))
        row |= {"status": mapping.status, "sections": mapping.metrics.get("sections"),
                "wirelength": mapping.metrics.get("wirelength"),
                "note": f"{mapping.run.get('cut_short', 0)} search(es) cut short"
                if mapping.run.get("cut_short") else None}
    except MappingFailed as exc:
        row |= {"status": "failed", "sections": len(exc.mapping.sections) or None,
                "note": shorten(exc.mapping.diagnosis or str(exc))}
    except CheckerRejected as exc:
        row |= {"status": "rejected", "note": shorten(str(exc))}
    unrated = graph.attrs.get("unrated_ops") or {}
    if unrated:
        row["note"] = "no FLOP rule: " + ", ".join(unrated)
    return row | {"total_s": round(time.perf_counter() - started, 3)}


def resnet50_crosscheck() -> dict[str, Any]:
    """The ONNX ResNet-50 against the published MACs and the MSR operator graph."""
    ours = load_graph(LIGHT / "light_resnet50.onnx")
    macs = sum(n.flops for n in ours.nodes if n.op in ("Conv", "Gemm")) / 2
    notes = [f"Conv+Gemm {macs / 1e9:.3f} G multiply-adds vs {PUBLISHED_RESNET50_MACS / 1e9} G "
             f"published ({macs / PUBLISHED_RESNET50_MACS - 1:+.1%}); total counts 2 FLOPs per "
             "multiply-add"]
    msr_path = graphs_root() / "msr-dnn" / "OperatorGraphs" / "resnet50_inference.json"
    if msr_path.exists():
        notes.append(_msr_overlap(ours, load_graph(msr_path)))
    else:
        notes.append(f"MSR graph absent ({msr_path})")
    return {"nodes": len(ours.nodes), "edges": len(ours.edges),
            "gflops": ours.attrs["total_flops"] / 1e9,
            "weight_mb": ours.attrs["weight_bytes"] / 1e6,
            "status": "cross-check", "note": "; ".join(notes)}


def _msr_overlap(ours, msr) -> str:
    """Weights, operator counts and Conv/Gemm output bytes the two graphs share."""
    weights = {n.id: n.attrs["state_bytes"] for n in msr.nodes if n.unit == "pmu"}
    same = sum(w in ours and ours.node(w).attrs["state_bytes"] == b for w, b in weights.items())
    kinds = collections.Counter(n.op for n in ours.nodes if n.unit == "pcu")
    msr_kinds = collections.Counter(n.id.rstrip("0123456789") for n in msr.nodes if n.unit == "pcu")
    equal_kinds = sum(msr_kinds[k] == c for k, c in kinds.items())
    outputs, batch32 = set(), 0
    for w in weights:
        for m_op, o_op in zip(msr.successors(w), ours.successors(w) if w in ours else []):
            if ours.node(o_op).op in ("Conv", "Gemm") and o_op not in outputs:
                outputs.add(o_op)
                out = max(ours.edges[i].bytes for i in ours.out_edges(o_op))
                batch32 += msr.node(m_op).attrs["state_bytes"] == 32 * out
    return (f"MSR resnet50_inference: {same}/{len(weights)} weight tensors of equal bytes, "
            f"{equal_kinds}/{len(kinds)} operator types of equal count "
            f"({sum(kinds.values())} operators; MSR adds "
            f"{len(msr.nodes) - len(weights) - sum(kinds.values())} "
            f"BN statistics, BN output and pool-mask nodes), {batch32}/{len(outputs)} "
            f"Conv/Gemm outputs = MSR / 32")


def _models() -> list[str]:
    light = sorted(p.stem.removeprefix("light_") for p in LIGHT.glob("light_*.onnx"))
    return light + list(EXAMPLES)


def _entries(quick: bool) -> list[Entry]:
    models = ["zfnet512", "bert_encoder_layer"] if quick else _models()
    presets = ("plasticine",) if quick else PRESETS
    limit = QUICK_TIME_LIMIT if quick else TIME_LIMIT
    entries = [Entry(f"{m} on {p}", "benchmarks.suites.onnx:map_model",
                     {"model": m, "preset": p, "time_limit": limit}, timeout=ENTRY_TIMEOUT,
                     fixed={"model": m, "preset": p}) for m in models for p in presets]
    entries.append(Entry("resnet50 cross-check", "benchmarks.suites.onnx:resnet50_crosscheck",
                         {}, timeout=120, fixed={"model": "resnet50 (cross-check)", "preset": "-"}))
    return entries


SUITE = Suite(
    name="onnx",
    title="ONNX models imported (model/importers/onnx_model.py) and mapped end to end",
    columns=COLUMNS,
    entries=_entries,
    notes=("GFLOPs count a multiply-add as 2 FLOPs, per inference at batch 1; weights are "
           "initialisers and constants (MB = 10^6 bytes); PCUs asked = the stage-time rule's "
           "PCUs summed over operators (formulations/sections/estimates.py); the pipeline "
           f"checks every section. Budget --time-limit {TIME_LIMIT:g} s per mapping "
           f"({QUICK_TIME_LIMIT:g} s quick), entry timeout {ENTRY_TIMEOUT:g} s."),
)
