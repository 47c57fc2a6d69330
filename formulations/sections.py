"""Section cuts: split a graph too big for the chip into sections that fit.

A section is one chip configuration; sections run one after another and pass
data through DRAM. A valid cut is an ordered partition of the nodes whose
quotient graph is acyclic (a section reads only from earlier sections or
DRAM), where every section fits the target's unit counts and never mixes
categories (forward, backward, optimizer).

This module holds the greedy topological cut: the baseline and the warm start
of the section model (source 003). It walks a topological order that stays in
the current category while it can, and closes a section when the next node
would not fit. Contiguous runs of a topological order always have an acyclic
quotient.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import networkx as nx

from model.graph import Graph, Node

__all__ = ["Capacity", "Section", "unit_demand", "greedy_cut", "SectionError"]


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
    def of_fabric(cls, fabric) -> "Capacity":
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

    def fits_with(self, demand: dict[str, float], cap: Capacity, scale: float = 1.0) -> bool:
        pcu, pmu = self.pcu + demand["pcu"], self.pmu + demand["pmu"]
        flexible = self.any + demand["any"]
        return (scale * pcu <= cap.pcu and scale * pmu <= cap.pmu
                and scale * (pcu + pmu + flexible) <= cap.total
                and self.agcu + demand["agcu"] <= cap.agcu)

    def add(self, node_id: str, demand: dict[str, float]) -> None:
        self.nodes.append(node_id)
        for key in ("pcu", "pmu", "any", "agcu"):
            setattr(self, key, getattr(self, key) + demand[key])


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


def greedy_cut(graph: Graph, cap: Capacity, scale: float = 1.0) -> list[Section]:
    """Cut ``graph`` into sections along a category-aware topological order.

    Parameters
    ----------
    graph : the graph; loop-carried edges are ignored for the order.
    cap : the units one section may use.
    scale : resource scale factor (> 1 leaves headroom for later passes).

    Returns
    -------
    sections : list of Section, in execution order.

    Raises
    ------
    SectionError
        If one node alone exceeds a section's capacity.

    Examples
    --------
    >>> from model.graph import Edge
    >>> g = Graph("chain", [Node(f"n{i}", unit="pcu") for i in range(5)],
    ...           [Edge(f"n{i}", f"n{i+1}") for i in range(4)])
    >>> [s.nodes for s in greedy_cut(g, Capacity(pcu=2, pmu=2, total=4, agcu=4))]
    [['n0', 'n1'], ['n2', 'n3'], ['n4']]
    """
    sections = [Section(0)]
    for node_id in _category_topological_order(graph):
        node = graph.node(node_id)
        demand = unit_demand(node)
        current = sections[-1]
        same_category = not current.nodes or current.category == node.category
        if not (same_category and current.fits_with(demand, cap, scale)):
            current = Section(len(sections))
            sections.append(current)
            if not current.fits_with(demand, cap, scale):
                raise SectionError(f'node "{node_id}" needs {demand} units, more than one '
                                   f"section offers ({cap}) at scale {scale}")
        current.category = node.category
        current.add(node_id, demand)
    return [s for s in sections if s.nodes]


def _category_topological_order(graph: Graph) -> list[str]:
    """Kahn's algorithm preferring ready nodes of the category being filled.

    Staying in one category while possible keeps forward and backward nodes
    apart without extra sections; ties go to file order (deterministic).
    """
    position = {n: k for k, n in enumerate(graph.node_ids)}
    dag = nx.DiGraph()
    dag.add_nodes_from(graph.node_ids)
    dag.add_edges_from((e.src, e.dst) for e in graph.edges if not e.loop_carried)
    indegree = {n: dag.in_degree(n) for n in dag}
    ready = {n for n, d in indegree.items() if d == 0}
    order: list[str] = []
    category = None
    while ready:
        same = [n for n in ready if graph.node(n).category == category]
        pick = min(same or ready, key=position.__getitem__)
        ready.remove(pick)
        order.append(pick)
        category = graph.node(pick).category
        for succ in dag.successors(pick):
            indegree[succ] -= 1
            if indegree[succ] == 0:
                ready.add(succ)
    return order
