"""Suite ``sections``: the section model against the greedy cut on the MSR DNN graphs.

Every MSR DNN graph (``OperatorGraphs`` and ``LayerGraphs``, read in place) is
cut for the ``plasticine`` and ``sn10`` presets twice in one run: by the
baseline (the greedy topological cut: a category-aware topological order
filled section by section) and by :func:`formulations.sections.cut_sections`
(the model, warm-started by that cut, 60 s in all), with the resource
estimates the pipeline uses (:mod:`formulations.sections.estimates`). A row gives the
lower bound, the section counts, the DRAM byte totals and their ratios, the
forced bytes (edges every cut must pay: a valid bound), the model's status,
gap and time. The whole feedback loop end to end is the ``pipeline`` suite.
"""

from __future__ import annotations

import time
from typing import Any

from benchmarks.registry import Column, Entry, Suite
from benchmarks.suites.common import missing_msr_entry, msr_graphs
from formulations.sections import (Capacity, Section, category_topological_order, cut_sections,
                                   cut_traffic, estimate_units, unit_demand)
from formulations.solver import SolveSettings
from hardware import build_fabric, load_hardware
from model.importers import load_graph

__all__ = ["SUITE", "cut_file", "NAIVE"]

PRESETS = ("plasticine", "sn10")
TIME_LIMIT = 60.0
#: The baseline the issue names: cut a fixed topological order greedily (no filling).
NAIVE = "naive greedy"

COLUMNS = (
    Column("graph", "graph"),
    Column("preset", "preset"),
    Column("nodes", "nodes", "{:,}"),
    Column("lower_bound", "lower bound"),
    Column("naive_sections", "naive greedy sections"),
    Column("greedy_sections", "greedy (filling) sections"),
    Column("model_sections", "model sections"),
    Column("naive_dram", "naive greedy DRAM bytes", "{:,.0f}"),
    Column("greedy_dram", "greedy DRAM bytes", "{:,.0f}"),
    Column("model_dram", "model DRAM bytes", "{:,.0f}"),
    Column("dram_ratio", "model / greedy bytes", "{:.3f}"),
    Column("naive_ratio", "model / naive bytes (equal counts)", "{:.3f}"),
    Column("status", "model status"),
    Column("bound_dram", "DRAM bytes bound", "{:,.0f}"),
    Column("gap", "gap", "{:.1%}"),
    Column("floor", "forced / greedy bytes", "{:.3f}"),
    Column("model_s", "model (s)", "{:.1f}"),
)


def _naive_cut(graph, cap):
    """Cut a category-aware topological order into runs that fit, in order (no filling)."""
    sections = [Section(0)]
    for node_id in category_topological_order(graph):
        demand = unit_demand(graph.node(node_id))
        current = sections[-1]
        same = not current.nodes or current.category == graph.node(node_id).category
        if not (same and current.fits_with(demand, cap)):
            current = Section(len(sections))
            sections.append(current)
        current.category = graph.node(node_id).category
        current.add(node_id, demand)
    return sections


def cut_file(path: str, preset: str) -> dict[str, Any]:
    """One row: the naive and filling greedy cuts and the model, with the same estimates."""
    spec = load_hardware(preset)
    graph = estimate_units(load_graph(path), spec)      # the estimates the pipeline cuts with
    cap = Capacity.of_fabric(build_fabric(spec))
    naive = _naive_cut(graph, cap)
    started = time.perf_counter()
    plan = cut_sections(graph, cap, SolveSettings("cp-sat", time_limit=TIME_LIMIT, seed=0))
    model_s = time.perf_counter() - started
    return {"nodes": len(graph.nodes), "lower_bound": plan.lower_bound,
            "naive_sections": len(naive), "greedy_sections": plan.greedy_sections,
            "model_sections": plan.count, "naive_dram": cut_traffic(graph, naive),
            "greedy_dram": plan.greedy_traffic, "model_dram": plan.traffic,
            "dram_ratio": plan.traffic / plan.greedy_traffic if plan.greedy_traffic else None,
            "naive_ratio": _naive_ratio(graph, naive, plan),
            "status": plan.status, "bound_dram": plan.bound_traffic, "gap": _gap(plan),
            "floor": plan.bound_traffic / plan.greedy_traffic if plan.greedy_traffic else None,
            "model_s": round(model_s, 2)}


def _naive_ratio(graph, naive, plan) -> float | None:
    """Model bytes over naive-greedy bytes, where both cut into as many sections."""
    naive_bytes = cut_traffic(graph, naive)
    if len(naive) != plan.count or not naive_bytes:
        return None
    return plan.traffic / naive_bytes


def _gap(plan) -> float | None:
    """Relative gap of the DRAM bytes to the model's proven bound."""
    if plan.bound_traffic is None:
        return None
    if plan.traffic <= 0:
        return 0.0
    return max(0.0, (plan.traffic - plan.bound_traffic) / plan.traffic)


def _entries(quick: bool) -> list[Entry]:
    graphs = msr_graphs()
    if not graphs:
        return [missing_msr_entry()]
    presets = PRESETS[:1] if quick else PRESETS
    chosen = graphs[:2] if quick else graphs
    return [Entry(f"{name} on {preset}", "benchmarks.suites.sections:cut_file",
                  {"path": str(path), "preset": preset},
                  timeout=900.0, fixed={"graph": name, "preset": preset})
            for name, path, _, _ in chosen for preset in presets]


SUITE = Suite(
    name="sections",
    title="Section cuts: the model vs the greedy cuts, with bound and gap",
    columns=COLUMNS,
    entries=_entries,
    notes=(f"Model: cp-sat, {TIME_LIMIT:g} s, seed 0, 1 worker; warm start = the filling greedy "
           "cut. 'naive greedy' cuts a fixed topological order (the baseline the issue names); "
           "'greedy (filling)' is this project's improved warm start. DRAM bytes = bytes of every "
           "edge crossing a cut (stored once, loaded once). forced = bytes of edges every cut pays "
           "(ends in different categories, or in sections that cannot overlap): the bound where "
           "the model's own is weaker; a ratio below 'forced / greedy' is impossible. Estimates: "
           "formulations.sections.estimates (a tensor needs ceil(bytes / PMU bytes) PMUs, "
           "at most 1/16 "
           "of the chip's PMUs)."),
)
