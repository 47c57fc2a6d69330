"""The passes in order, for an RDU target: cut, order, place, route, check.

Each section is one chip configuration. For each one the priority-queue
sorter orders its nodes, the greedy placer puts them on sites in that order,
the negotiated-congestion router connects them, and the independent checker
(`sim`) judges the answer before anything is reported. A failure at any level
stops the run with a diagnosis in the user's terms; mapping.json is written
either way.

Passes not built yet (the exact models of issues 3-6) are named in the report
as such; nothing here pretends to have run them.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Callable

from formulations.routing import RouterConfig
from formulations.sections import Capacity, SectionError, greedy_cut
from hardware import build_fabric
from model.graph import Graph
from model.mapping import Mapping
from pipeline.section_pass import map_section, stage_record
from sim.check import CheckReport, check_section

__all__ = ["RunOptions", "MappingFailed", "CheckerRejected", "map_graph"]


@dataclass
class RunOptions:
    """Options of one run (the command line's, with the same defaults)."""

    backend: str = "cp-sat"
    time_limit: float = 60.0
    seed: int = 0
    placer: str = "greedy"
    router: str = "negotiated"
    router_config: RouterConfig = field(default_factory=RouterConfig)
    export_dir: str | None = None

    def solver_options(self) -> dict:
        """The keyword options every model-based pass takes."""
        return {"backend": self.backend, "time_limit": self.time_limit, "seed": self.seed,
                "export_dir": self.export_dir}


class CheckerRejected(Exception):
    """The checker found a heuristic's or model's answer illegal: a bug, never a result."""

    def __init__(self, section: int, violations: list[str]):
        self.section, self.violations = section, violations
        super().__init__(f"the checker rejected section {section}: " + "; ".join(violations[:5]))


class MappingFailed(Exception):
    """The graph could not be mapped; ``mapping`` holds what was done and why."""

    def __init__(self, mapping: Mapping):
        self.mapping = mapping
        super().__init__(mapping.diagnosis)


Progress = Callable[[str], None]


def map_graph(graph: Graph, spec, options: RunOptions | None = None,
              progress: Progress | None = None, advance: Callable[[], None] | None = None
              ) -> Mapping:
    """Map ``graph`` on the hardware ``spec``; raises MappingFailed with a diagnosis.

    ``progress`` receives log lines; ``advance`` is called once per section done.
    """
    options = options or RunOptions()
    say = progress or (lambda line: None)
    mapping = Mapping(graph=graph.name, hardware=spec.name)
    if spec.kind != "rdu":
        return _fail(mapping, f"{spec.kind} targets are not supported by this version: "
                              "only RDU grids map end to end (Streaming Engine mapping is "
                              "planned); choose an RDU preset such as --hardware plasticine")
    fabric = build_fabric(spec)
    started = time.perf_counter()
    sections = _cut(graph, fabric, mapping)
    say(f"{len(sections)} section(s) on {spec.name}")
    total = CheckReport()
    for section in sections:
        sub, global_index = _section_graph(graph, section.nodes, section.id)
        outcome = map_section(sub, fabric, section.id, options, say)
        mapping.order.extend(outcome.order)
        mapping.stages.extend(outcome.stages)
        if outcome.failure:
            _fail(mapping, f"{outcome.failure.level} of section {section.id}: "
                           f"{outcome.failure.message}")
        placement, paths = outcome.placement, outcome.paths
        report = check_section(sub, fabric, placement, paths)
        if not report.ok:
            raise CheckerRejected(section.id, report.violations)
        total.merge(report)
        _record_section(mapping, graph, sub, fabric, section.id, placement, paths, global_index)
        if advance:
            advance()
    _record_cross_section_edges(mapping, graph)
    mapping.status = "mapped"
    mapping.metrics = _metrics(graph, fabric, mapping, total, time.perf_counter() - started)
    return mapping


def _fail(mapping: Mapping, diagnosis: str) -> Mapping:
    mapping.status = "failed"
    mapping.diagnosis = diagnosis
    raise MappingFailed(mapping)


def _cut(graph: Graph, fabric, mapping: Mapping):
    started = time.perf_counter()
    try:
        sections = greedy_cut(graph, Capacity.of_fabric(fabric))
    except SectionError as exc:
        _fail(mapping, f"section cut: {exc}")
    mapping.sections = [{"id": s.id, "nodes": s.nodes, "category": s.category,
                         "pcu": s.pcu, "pmu": s.pmu} for s in sections]
    mapping.stages.append(stage_record("sections", None, "greedy topological cut", started,
                                       objective=len(sections)))
    return sections


def _section_graph(graph: Graph, nodes: list[str], section_id: int) -> tuple[Graph, list[int]]:
    keep = set(nodes)
    global_index = [i for i, e in enumerate(graph.edges) if e.src in keep and e.dst in keep]
    return graph.subgraph(nodes, name=f"{graph.name}/section{section_id}"), global_index


def _record_section(mapping: Mapping, graph: Graph, sub: Graph, fabric, section_id: int,
                    placement: dict[str, str], paths: dict[int, list[str]],
                    global_index: list[int]) -> None:
    for node_id, site_id in placement.items():
        site = fabric.site(site_id)
        mapping.placement[node_id] = {"section": section_id, "site": site_id, "x": site.x,
                                      "y": site.y, "unit": site.unit}
    for local, i in enumerate(global_index):
        edge = graph.edges[i]
        mapping.routes.append({"edge": i, "src": edge.src, "dst": edge.dst,
                               "net": graph.nets[graph.net_of_edge[i]].id,
                               "section": section_id, "links": paths.get(local, [])})
        mapping.buffers.append({"edge": i, "src": edge.src, "dst": edge.dst,
                                "original_depth": edge.depth, "final_depth": edge.depth,
                                "depth_added": 0, "buffer_inserted": False, "pmus": 0})


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


def _metrics(graph: Graph, fabric, mapping: Mapping, check: CheckReport, seconds: float) -> dict:
    cross = [r for r in mapping.routes if r.get("via") == "dram"]
    return {
        "nodes": len(graph.nodes), "edges": len(graph.edges), "sections": len(mapping.sections),
        "wirelength": check.wirelength, "max_link_load": round(check.max_link_load, 4),
        "weighted_distance": round(sum(s["objective"] for s in mapping.stages
                                       if s["stage"] == "placement"), 4),
        "routing_iterations": max((s.get("iterations", 0) for s in mapping.stages), default=0),
        "dram_edges": len(cross), "dram_bytes": sum(r.get("bytes") or 0 for r in cross),
        "units_used": len(mapping.placement), "sites": len(fabric.sites),
        "seconds": round(seconds, 3),
    }
