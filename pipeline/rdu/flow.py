"""The RDU target's run: the compiler levels in order, inside the feedback loop.

The levels (pipeline.rdu.levels) are section cuts (the section model), stage-buffer
balancing, and per section ordering, placement, routing and the independent
check (`sim`). A level that fails sends error-handling data back to the level
that can fix it (pipeline.feedback); sections compiled before a failure are
reused. mapping.json is written either way: on success with every decision,
on failure with the diagnosis and the trace of every feedback round.
"""

from __future__ import annotations

import math
import time
from typing import Callable

from formulations.placement import PLACERS
from formulations.sections import Capacity, estimate_units
from hardware import RduFabric, build_fabric
from model.graph import Graph
from model.mapping import Mapping
from pipeline.budget import BUFFER_SHARE, CUT_SHARE, MAPPING_SHARE, RunPlan
from pipeline.cluster import Workers, run_batch, timed_call
from pipeline.rdu.buffers_pass import balance_section
from pipeline.feedback import MappingFailed, Unresolvable, run_levels
from pipeline.rdu.levels import PARALLEL_MIN_SECONDS, CompileState, SectionWork, default_levels
from pipeline.options import RunOptions
from pipeline.stage import stage_record
from sim.check import CheckReport
from sim.perf import simulate_mapping

__all__ = ["map_rdu", "may_use_workers"]


Progress = Callable[[str], None]


def map_rdu(graph: Graph, spec, options: RunOptions, progress: Progress | None = None,
            advance: Callable[[], None] | None = None, levels: list | None = None) -> Mapping:
    """Map ``graph`` on the RDU ``spec``; raises MappingFailed with a diagnosis.

    ``progress`` receives log lines; ``advance`` is called once per section
    compiled; ``levels`` replaces the default compiler levels (for tests and
    for plugging in other passes).
    """
    say = progress or (lambda line: None)
    mapping = Mapping(graph=graph.name, hardware=spec.name)
    if options.placer not in PLACERS:
        kind = "the Streaming Engine's" if options.placer == "rl" else "a CGRA"
        return _fail(mapping, f"--placer {options.placer} is {kind} placer; an RDU run takes "
                              f"one of {', '.join(PLACERS)}")
    fabric = build_fabric(spec)
    started = time.perf_counter()
    state = CompileState(estimate_units(graph, spec, options.tile_pmus), spec, fabric, options,
                         say, cap=Capacity.of_fabric(fabric),
                         run_plan=RunPlan.of_options(options, len(graph.nodes)),
                         advance=advance or (lambda: None),
                         workers=Workers(options.workers, options.scheduler))
    levels = levels if levels is not None else default_levels(balance_section)
    try:
        with state.workers:
            if options.scheduler is not None:   # an unreachable cluster is said before any work
                state.workers.client()
            elif may_use_workers(options) and _sections_at_least(state.graph, state.cap) > 1:
                state.workers.start_soon()      # they boot while the sections are cut
            run_levels(state, levels, max_iterations=options.max_iterations)
            _record_mapped(mapping, graph, fabric, state, started)
            _record_performance(mapping, graph, spec, state.workers)
    except Unresolvable as exc:
        _record_state(mapping, state)
        _fail(mapping, f"{exc.data.message} ({exc.reason})")
    return mapping


def _record_mapped(mapping: Mapping, graph: Graph, fabric: RduFabric, state: CompileState,
                   started: float) -> None:
    """Every section's decisions and the run's totals in ``mapping``, now ``mapped``."""
    _record_state(mapping, state)
    total = CheckReport()
    for w in state.work:
        total.merge(w.check)
        _record_section(mapping, graph, fabric, w)
    _record_cross_section_edges(mapping, graph)
    mapping.status = "mapped"
    final = [stage for w in state.work for stage in w.outcome.stages]
    mapping.metrics = _metrics(graph, fabric, mapping, final, total,
                               time.perf_counter() - started)
    twins = sum(1 for w in state.work if any("twin_of" in s for s in w.outcome.stages))
    mapping.metrics |= {"feedback_rounds": len(state.trace), "sections_reused": state.memo.reused,
                        "twin_sections": twins}


def _record_performance(mapping: Mapping, graph: Graph, spec, workers: Workers) -> None:
    """The simulated throughput, latency and bottleneck (:mod:`sim.perf`) in ``metrics``,
    each section's in its ``perf``, and a ``performance`` stage with each section's
    simulation seconds. Always estimated: it takes about a second at most (bert_L-12
    training on plasticine, 2,565 units: 0.2 s), within the part of the time limit the plan
    keeps past the mapping's deadline, and it is the run's headline number. The sections
    are simulated at once on the run's workers when they are up (:func:`run_batch`)."""
    started, seconds = time.perf_counter(), []

    def run_each(function: Callable, tasks: list[tuple]) -> list:
        timed = run_batch(workers, timed_call, [(function, *task) for task in tasks],
                          PERF_SECONDS * len(tasks))
        seconds.extend(round(s, 4) for _, s in timed)
        return [result for result, _ in timed]
    try:
        report = simulate_mapping(graph, spec, mapping, run_each=run_each)
    except ValueError as exc:          # e.g. a cycle of same-iteration edges in a section
        mapping.metrics["performance"] = f"not estimated: {exc}"
        return
    mapping.metrics |= report.metrics()
    for section, row in zip(mapping.sections, report.section_rows()):
        section["perf"] = row
    mapping.stages.append(stage_record("performance", None, "sim.perf", started, status="OK",
                                       extra={"seconds_of_sections": seconds}))


#: Seconds the simulation of a section takes, about (:func:`_record_performance`; what
#: :func:`run_batch` weighs it by): bert_L-12 training on plasticine, 0.2 s for 31 sections.
PERF_SECONDS = 0.01


def may_use_workers(options: RunOptions) -> bool:
    """Whether an RDU run with ``options`` may start local workers (for a graph of several
    sections): more than one worker asked for, and a budget whose sections are worth them."""
    return options.scheduler is None and options.workers > 1 and \
        _place_route_seconds(options.time_limit) >= PARALLEL_MIN_SECONDS


def _place_route_seconds(time_limit: float) -> float:
    """About what a run of ``time_limit`` seconds plans for placement and routing."""
    return time_limit * MAPPING_SHARE * (1 - CUT_SHARE) * (1 - BUFFER_SHARE)


def _sections_at_least(graph: Graph, cap: Capacity) -> int:
    """A lower bound on the sections: the units every node needs over one section's
    sites, and one section per category (sections never mix them)."""
    units = sum((n.pcu or 0) + (n.pmu or 0) for n in graph.nodes)
    categories = len({n.category for n in graph.nodes})
    return max(math.ceil(units / max(cap.total, 1)), categories)


def _fail(mapping: Mapping, diagnosis: str) -> Mapping:
    mapping.status = "failed"
    mapping.diagnosis = diagnosis
    raise MappingFailed(mapping)


def _record_state(mapping: Mapping, state: CompileState) -> None:
    mapping.sections = [{"id": w.section.id, "nodes": w.section.nodes,
                         "category": w.section.category, "pcu": w.section.pcu,
                         "pmu": w.section.pmu, "scale": state.cut.scales.get(w.section.id, {}),
                         "buffer_units": _added_units(w, "buffer_of"),
                         "bank_units": _added_units(w, "unit_of"), "reused": w.reused}
                        for w in state.work]
    mapping.stages = state.stages
    mapping.trace = state.trace
    mapping.run = state.options.record(state.stages)


def _added_units(w: SectionWork, marker: str) -> int:
    """Units a later level added to the section (stage buffers or banks/lanes)."""
    return sum(marker in n.attrs for n in w.graph.nodes) if w.graph else 0


def _record_section(mapping: Mapping, graph: Graph, fabric: RduFabric, w: SectionWork) -> None:
    outcome, section_id = w.outcome, w.section.id
    mapping.order.extend(outcome.order)
    for node_id, site_id in outcome.placement.items():
        site = fabric.site(site_id)
        mapping.placement[node_id] = {"section": section_id, "site": site_id, "x": site.x,
                                      "y": site.y, "unit": site.unit}
    for i, chain in sorted(w.edge_map.items()):
        edge = graph.edges[i]
        links = [link for local in chain for link in outcome.paths.get(local, [])]
        buffers = [w.graph.edges[local].dst for local in chain[:-1]]
        mapping.routes.append({"edge": i, "src": edge.src, "dst": edge.dst,
                               "net": graph.nets[graph.net_of_edge[i]].id,
                               "section": section_id, "links": links}
                              | ({"via_buffers": buffers} if buffers else {}))
        row = w.buffer_rows.get(i, {"original_depth": edge.depth, "final_depth": edge.depth,
                                    "depth_added": 0, "buffer_inserted": False, "pmus": 0})
        mapping.buffers.append({"edge": i, "src": edge.src, "dst": edge.dst} | row
                               | ({"buffer_units": buffers} if buffers else {}))


def _record_cross_section_edges(mapping: Mapping, graph: Graph) -> None:
    routed = {r["edge"] for r in mapping.routes}
    for i, edge in enumerate(graph.edges):
        if i not in routed:
            mapping.routes.append({"edge": i, "src": edge.src, "dst": edge.dst,
                                   "net": graph.nets[graph.net_of_edge[i]].id,
                                   "section": None, "via": "dram", "links": [],
                                   "bytes": edge.bytes})
    mapping.routes.sort(key=lambda r: r["edge"])
    mapping.buffers.sort(key=lambda b: b["edge"])


def _metrics(graph: Graph, fabric: RduFabric, mapping: Mapping, final: list[dict],
             check: CheckReport, elapsed: float) -> dict:
    """Totals over the final sections (``final``: their stage records), as checked."""
    cross = [r for r in mapping.routes if r.get("via") == "dram"]
    return {
        "nodes": len(graph.nodes), "edges": len(graph.edges), "sections": len(mapping.sections),
        "wirelength": check.wirelength, "max_link_load": round(check.max_link_load, 4),
        "weighted_distance": round(sum(s["objective"] for s in final
                                       if s["stage"] == "placement"), 4),
        "routing_iterations": max((s.get("iterations", 0) for s in final), default=0),
        "dram_edges": len(cross), "dram_bytes": sum(r.get("bytes") or 0 for r in cross),
        "units_used": len(mapping.placement), "sites": len(fabric.sites),
        "seconds": round(elapsed, 3),
    }
