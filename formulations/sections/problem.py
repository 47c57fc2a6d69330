"""The section-cut problem: capacities, sections, demands, traffic and the count bound.

A section is one chip configuration; sections run one after another and pass
data through DRAM. A valid cut is an ordered partition of the nodes whose
quotient graph is acyclic (a section reads only from earlier sections or
DRAM), where every section fits the target's unit counts and never mixes
categories (forward, backward, optimizer). Its cost: fewest sections, then
least DRAM traffic across cuts (:func:`cut_traffic`).

This module holds what the greedy cut (:mod:`formulations.sections.greedy`),
the section model (:mod:`formulations.sections.model`) and the driver
(:mod:`formulations.sections.cut`) share.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from hardware import RduFabric
from model.graph import Graph, Node

__all__ = ["SectionError", "Capacity", "Section", "Scale", "scale_of", "scale_factors",
           "loosest_scale", "unit_demand", "SectionPlan", "edge_traffic", "cut_traffic",
           "lower_bound", "assignment_of", "sections_from", "BufferDemand", "BufferNet",
           "buffer_nets", "buffer_pmus"]


class SectionError(Exception):
    """A node that cannot fit in any section on its own."""


@dataclass(frozen=True)
class Capacity:
    """Units one section may use: PCU sites, PMU sites, both together, AGCUs."""

    pcu: int
    pmu: int
    total: int
    agcu: int

    @classmethod
    def of_fabric(cls, fabric: RduFabric) -> "Capacity":
        units = [s for s in fabric.sites if s.unit != "agcu"]
        return cls(pcu=sum(fabric.can_host(s.id, "pcu") for s in units),
                   pmu=sum(fabric.can_host(s.id, "pmu") for s in units),
                   total=len(units), agcu=len(fabric.sites_of("agcu")))


@dataclass
class Section:
    """One section: its id, nodes in the cut order, and the units they need."""

    id: int
    nodes: list[str] = field(default_factory=list)
    category: str | None = None
    pcu: float = 0.0
    pmu: float = 0.0
    any: float = 0.0
    agcu: float = 0.0
    buffers: float = 0.0     # stage-buffer PMUs its inside edges need (:data:`BufferDemand`)
    _members: set[str] = field(default_factory=set, repr=False, compare=False)

    def fits_with(self, demand: dict[str, float], cap: Capacity, scale: "Scale" = 1.0,
                  buffers: float = 0.0) -> bool:
        """Whether the section still fits with ``demand`` and ``buffers`` more buffer PMUs.

        The scale factors multiply the estimates; buffer PMUs come from the balancing's own
        numbers and are counted as they are."""
        pcu, pmu = self.pcu + demand["pcu"], self.pmu + demand["pmu"]
        flexible = self.any + demand["any"]
        extra = self.buffers + buffers
        on_pcu, on_pmu, on_units = scale_factors(scale)
        return (on_pcu * pcu <= cap.pcu
                and on_pmu * pmu + extra <= cap.pmu
                and on_units * (pcu + pmu + flexible) + extra <= cap.total
                and self.agcu + demand["agcu"] <= cap.agcu)

    @property
    def members(self) -> set[str]:
        """The section's nodes as a set (kept as nodes join)."""
        if len(self._members) != len(self.nodes):
            self._members = set(self.nodes)
        return self._members

    def add(self, node_id: str, demand: dict[str, float]) -> None:
        if len(self._members) == len(self.nodes):
            self._members.add(node_id)
        self.nodes.append(node_id)
        self.pcu += demand["pcu"]
        self.pmu += demand["pmu"]
        self.any += demand["any"]
        self.agcu += demand["agcu"]


#: A resource scale factor: one number for every resource, or one per resource
#: (``{"pcu": s, "pmu": s, "units": s}``; a missing key means 1.0). The cutter
#: plans a section as if its estimates were ``scale`` times larger.
Scale = float | dict[str, float]


def scale_of(scale: Scale, resource: str) -> float:
    """The factor ``scale`` applies to ``resource`` ("pcu", "pmu" or "units").

    Examples
    --------
    >>> scale_of(1.5, "pmu"), scale_of({"pmu": 2.0}, "pmu"), scale_of({"pmu": 2.0}, "pcu")
    (1.5, 2.0, 1.0)
    """
    if isinstance(scale, (int, float)):
        return float(scale)
    return float(scale.get(resource, 1.0))


def scale_factors(scale: Scale) -> tuple[float, float, float]:
    """The factors ``scale`` applies to pcu, pmu and units (:func:`scale_of` of each, in
    one call: the greedy cut asks 10^6 times).

    >>> scale_factors(1.5), scale_factors({"pmu": 2.0})
    ((1.5, 1.5, 1.5), (1.0, 2.0, 1.0))
    """
    if isinstance(scale, (int, float)):
        factor = float(scale)
        return factor, factor, factor
    get = scale.get
    return float(get("pcu", 1.0)), float(get("pmu", 1.0)), float(get("units", 1.0))


def loosest_scale(scales: dict[int, Scale], sections: int) -> dict[str, float]:
    """Per resource, the loosest factor of sections ``0 .. sections - 1`` (1.0 for a
    section without one): what any of them may hold is at most capacity / this.

    A feedback round raises the PMU factor of every section it plans (the stage buffers
    the estimates miss); the bounds built on this then count with it, where one loosest
    factor over every resource stayed at the PCUs' 1.0.

    >>> loosest_scale({0: {"pmu": 2.0}, 1: 1.5}, 2), loosest_scale({0: {"pmu": 2.0}}, 2)
    ({'pcu': 1.0, 'pmu': 1.5, 'units': 1.0}, {'pcu': 1.0, 'pmu': 1.0, 'units': 1.0})
    """
    given = [scale_factors(scales[k]) for k in range(sections) if k in scales]
    unset = [(1.0, 1.0, 1.0)] if len(given) < sections or not given else []
    return dict(zip(("pcu", "pmu", "units"), map(min, zip(*given, *unset))))


#: Stage-buffer PMUs an edge needs when both its ends share a section, by (source, sink):
#: what balancing added on that edge in the sections it has seen (see
#: :mod:`formulations.sections.buffers`). The edges of one net share one buffer chain, each
#: sink tapping it at its own depth, so a section pays per net the most of its inside edges.
BufferDemand = dict[tuple[str, str], float]


@dataclass(frozen=True)
class BufferNet:
    """One net's buffer demand: its driver, and (sink, PMUs) of each edge that needs some."""

    driver: str
    sinks: tuple[tuple[str, float], ...]

    def pmus_in(self, inside) -> float:
        """PMUs the net needs in a section holding the nodes ``inside`` (a set or mapping)."""
        if self.driver not in inside:
            return 0.0
        return max((p for sink, p in self.sinks if sink in inside), default=0.0)


def buffer_nets(graph: Graph, demand: BufferDemand | None) -> list[BufferNet]:
    """The nets of ``graph`` with a buffer demand (edges inside one iteration only).

    Examples
    --------
    >>> from model.graph import Edge
    >>> g = Graph("g", [Node("a"), Node("b"), Node("c")],
    ...           [Edge("a", "b", net="n"), Edge("a", "c", net="n"), Edge("b", "c")])
    >>> buffer_nets(g, {("a", "c"): 2})
    [BufferNet(driver='a', sinks=(('c', 2),))]
    """
    if not demand:
        return []
    nets = []
    for net in graph.nets:
        sinks = tuple((graph.edges[i].dst, demand[graph.edges[i].src, graph.edges[i].dst])
                      for i in net.edges
                      if not graph.edges[i].loop_carried
                      and demand.get((graph.edges[i].src, graph.edges[i].dst), 0) > 0)
        if sinks:
            nets.append(BufferNet(net.driver, sinks))
    return nets


def buffer_pmus(nets: list[BufferNet], nodes) -> float:
    """Buffer PMUs of a section holding ``nodes`` (a set), by :func:`buffer_nets`."""
    return sum(net.pmus_in(nodes) for net in nets)


def unit_demand(node: Node) -> dict[str, float]:
    """Units a node needs: its ``pcu``/``pmu`` estimates, else one unit of its kind.

    Examples
    --------
    >>> unit_demand(Node("a", unit="pmu"))
    {'pcu': 0.0, 'pmu': 1.0, 'any': 0.0, 'agcu': 0.0}
    >>> unit_demand(Node("b", pcu=2, pmu=1))
    {'pcu': 2.0, 'pmu': 1.0, 'any': 0.0, 'agcu': 0.0}
    """
    demand = {"pcu": 0.0, "pmu": 0.0, "any": 0.0, "agcu": 0.0}
    if node.pcu is not None or node.pmu is not None:
        demand["pcu"], demand["pmu"] = float(node.pcu or 0), float(node.pmu or 0)
    else:
        demand[node.unit] = 1.0
    return demand


@dataclass
class SectionPlan:
    """A cut: sections in order, with the bound, the baseline and the solver's word."""

    sections: list[Section]
    lower_bound: int
    greedy_sections: int
    greedy_traffic: float
    traffic: float
    method: str
    status: str = "FEASIBLE"
    bound_traffic: float | None = None
    results: list = field(default_factory=list)     # SolveResult of every model solved
    #: What else the cutter reports (``cut_short``: the wall clock stopped a solve before its
    #: planned work, so the cut may differ from run to run).
    extra: dict = field(default_factory=dict)

    @property
    def count(self) -> int:
        return len(self.sections)


def edge_traffic(edge) -> float:
    """DRAM bytes an edge costs when it crosses a cut: stored once and loaded once.

    ``bytes`` when the graph gives it, else the relative bandwidth.
    """
    return float(edge.bytes) if edge.bytes is not None else float(edge.bandwidth)


def cut_traffic(graph: Graph, sections: list[Section]) -> float:
    """DRAM bytes of every edge whose ends lie in different sections."""
    where = {n: s.id for s in sections for n in s.nodes}
    return sum(edge_traffic(e) for e in graph.edges
               if e.src in where and e.dst in where and where[e.src] != where[e.dst])


def lower_bound(graph: Graph, cap: Capacity, scale: Scale = 1.0) -> int:
    """Fewest sections any cut needs: per category, the largest resource ratio.

    ``max(ΣPCU/PCU capacity, ΣPMU/PMU capacity, Σunits/units, ΣAGCU/AGCUs)``
    rounded up, summed over categories (sections never mix them); each demand times its
    resource's factor in ``scale`` (the loosest of any section: :func:`loosest_scale`).

    Examples
    --------
    >>> g = Graph("g", [Node(f"n{i}", unit="pcu") for i in range(5)], [])
    >>> lower_bound(g, Capacity(pcu=2, pmu=2, total=4, agcu=0))
    3
    """
    totals: dict[str | None, dict[str, float]] = {}
    for node in graph.nodes:
        t = totals.setdefault(node.category, {"pcu": 0.0, "pmu": 0.0, "any": 0.0, "agcu": 0.0})
        for key, value in unit_demand(node).items():
            t[key] += value
    on_pcu, on_pmu, on_units = scale_factors(scale)
    bound = 0
    for t in totals.values():
        ratios = [on_pcu * t["pcu"] / max(cap.pcu, 1e-9), on_pmu * t["pmu"] / max(cap.pmu, 1e-9),
                  on_units * (t["pcu"] + t["pmu"] + t["any"]) / max(cap.total, 1e-9)]
        if t["agcu"]:
            ratios.append(t["agcu"] / max(cap.agcu, 1e-9))
        bound += max(1, math.ceil(max(ratios) - 1e-9))
    return bound


def assignment_of(sections: list[Section]) -> dict[str, int]:
    """Node -> position of its section."""
    return {n: k for k, s in enumerate(sections) for n in s.nodes}


def sections_from(graph: Graph, assignment: dict[str, int],
                  buffers: BufferDemand | None = None) -> list[Section]:
    """Sections in order (empty ones dropped), nodes in topological order, each with the
    buffer PMUs ``buffers`` gives its inside edges."""
    used = sorted(set(assignment.values()))
    sections = [Section(k) for k in range(len(used))]
    rank = {k: i for i, k in enumerate(used)}
    for v in graph.topological_order():
        s = sections[rank[assignment[v]]]
        s.category = graph.node(v).category
        s.add(v, unit_demand(graph.node(v)))
    nets = buffer_nets(graph, buffers)
    for s in sections if nets else ():
        s.buffers = buffer_pmus(nets, set(s.nodes))
    return sections
