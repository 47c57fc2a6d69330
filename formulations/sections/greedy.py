"""The greedy section cut: the baseline and the warm start of the section model.

List scheduling into sections (source 003 gives no method): ready nodes are taken
in the position of a category-aware topological order (:func:`category_topological_order`,
which stays in the current category while it can), those of the section's category
first; the first one that fits joins the section, and when none fits the section
closes. Every section holds the ready nodes of a topological order, so the
quotient graph stays acyclic.
"""

from __future__ import annotations

import bisect

import networkx as nx

from formulations.sections.problem import (Capacity, Scale, Section, SectionError,
                                           unit_demand)
from model.graph import Graph

__all__ = ["greedy_cut", "greedy_sections", "category_topological_order"]


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
    >>> from model.graph import Edge, Node
    >>> g = Graph("chain", [Node(f"n{i}", unit="pcu") for i in range(5)],
    ...           [Edge(f"n{i}", f"n{i+1}") for i in range(4)])
    >>> [s.nodes for s in greedy_cut(g, Capacity(pcu=2, pmu=2, total=4, agcu=4))]
    [['n0', 'n1'], ['n2', 'n3'], ['n4']]
    """
    every_section = {k: scale for k in range(len(graph.nodes) + 1)}   # at most one per node
    return greedy_sections(graph, cap, every_section, [])


def greedy_sections(graph: Graph, cap: Capacity, scales: dict[int, Scale],
                    separate: list[tuple[str, str]] = ()) -> list[Section]:
    """List scheduling into sections: fill each with ready nodes that still fit.

    Ready nodes (all same-iteration predecessors placed) are tried in
    topological-position order, those of the section's category first; the
    first one that fits joins the section. When none fits, the section closes.
    Filling past a node that does not fit (a PMU node when PCUs are full) packs
    sections tighter than cutting a fixed order. ``separate`` pairs (a, b) keep
    b out of a's section.
    """
    position = _schedule_priority(graph)
    apart = {}
    for a, b in separate:
        apart.setdefault(b, set()).add(a)
    dag = nx.DiGraph()
    dag.add_nodes_from(graph.node_ids)
    dag.add_edges_from((e.src, e.dst) for e in graph.edges if not e.loop_carried)
    waiting = {n: dag.in_degree(n) for n in dag}
    ready = sorted((n for n, d in waiting.items() if d == 0), key=position.__getitem__)
    demand = {n: unit_demand(graph.node(n)) for n in graph.node_ids}
    sections = [Section(0)]
    while ready:
        current = sections[-1]
        scale = scales.get(current.id, 1.0)
        pick = _first_fitting(graph, ready, current, demand, cap, scale, apart)
        if pick is None:
            if not current.nodes:
                node_id = ready[0]
                raise SectionError(f'node "{node_id}" needs {_units(demand[node_id])}, more than '
                                   f"one section offers ({_units_cap(cap)}) at scale {scale}")
            sections.append(Section(len(sections)))
            continue
        ready.remove(pick)
        current.category = graph.node(pick).category
        current.add(pick, demand[pick])
        for succ in dag.successors(pick):
            waiting[succ] -= 1
            if waiting[succ] == 0:
                bisect.insort(ready, succ, key=position.__getitem__)
    return sections


def category_topological_order(graph: Graph) -> list[str]:
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


def _schedule_priority(graph: Graph) -> dict[str, float]:
    """Position in a category-aware topological order; a source hugs its first consumer.

    Sources (weights, inputs) are all ready at the start; scheduling them by
    their own position would fill the first sections with memory alone.
    """
    position: dict[str, float] = {n: k for k, n in enumerate(category_topological_order(graph))}
    for node_id in graph.node_ids:
        if not any(not graph.edges[i].loop_carried for i in graph.in_edges(node_id)):
            consumers = [position[s] for s in graph.successors(node_id) if s != node_id]
            if consumers:
                position[node_id] = min(consumers) - 0.5
    return position


def _first_fitting(graph: Graph, ready: list[str], current: Section, demand, cap: Capacity,
                   scale: Scale, apart: dict[str, set[str]]) -> str | None:
    """The first ready node (current category first) that fits ``current``."""
    members = set(current.nodes)
    for same_category_pass in (True, False):
        if not same_category_pass and current.nodes:
            return None            # a section never mixes categories
        for node_id in ready:
            if same_category_pass and current.nodes and \
                    graph.node(node_id).category != current.category:
                continue
            if apart.get(node_id, set()) & members:
                continue
            if current.fits_with(demand[node_id], cap, scale):
                return node_id
    return None


def _units(demand: dict[str, float]) -> str:
    return ", ".join(f"{v:g} {k.upper()}" for k, v in demand.items() if v) or "no units"


def _units_cap(cap: Capacity) -> str:
    return f"{cap.pcu} PCU, {cap.pmu} PMU, {cap.total} units, {cap.agcu} AGCU"
