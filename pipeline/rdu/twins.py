"""Twin sections: sections of one shape are balanced, placed and routed once.

A section's *shape* is what its balancing, placement and routing read of it, with each node
named by its position in the section and each net by the order it first appears: the
nodes' operations, unit kinds, unit counts, latencies and memory variables, and the edges'
ends (as positions), bandwidths, bytes, depths, distances and nets, and every attribute
but the names (``name``, ``msr_id``). Two sections
of one shape are the same graph up to that renaming, so one's answer renamed is an answer
for the other. A twin's renamed placement and routes are checked by :mod:`sim.check` like
any other (a twin the checker refuses is compiled on its own), so this is a saving, never
a source of answers nobody checked.

Long chains and repeated layers cut into equal sections: a chain of 50,000 compute units
is 782 sections of 3 shapes on plasticine, compiled in 3 compiles and 782 checks.

Examples
--------
>>> from model.graph import Edge, Graph, Node
>>> a = Graph("a", [Node("x", unit="pcu"), Node("y", unit="pmu")], [Edge("x", "y")])
>>> b = Graph("b", [Node("u", unit="pcu"), Node("v", unit="pmu")], [Edge("u", "v")])
>>> c = Graph("c", [Node("u", unit="pmu"), Node("v", unit="pcu")], [Edge("u", "v")])
>>> section_shape(a) == section_shape(b) != section_shape(c)
True
>>> renaming(a, b)
{'x': 'u', 'y': 'v'}
"""

from __future__ import annotations

from typing import Hashable

from model.graph import Graph

__all__ = ["section_shape", "renaming", "twins_of"]


#: Node attributes that name a node rather than describe it (left out of the shape).
NAMING_ATTRS = frozenset({"name", "msr_id"})


def section_shape(graph: Graph) -> Hashable:
    """``graph`` with node ids replaced by positions and net ids by first appearance (every
    other field and attribute kept; ``attrs["unit_of"]``, a node id, as its position)."""
    position = {n.id: k for k, n in enumerate(graph.nodes)}
    nets: dict[str, int] = {}

    def described(attrs: dict) -> tuple:
        if not attrs:                   # most: a node's or edge's extra fields
            return ()
        return tuple(sorted((k, position.get(v, v) if k == "unit_of" else repr(v))
                            for k, v in attrs.items() if k not in NAMING_ATTRS))
    nodes = tuple((n.op, n.unit, n.pcu, n.pmu, n.latency, n.category, n.mem_vars, n.starts_sdf,
                   n.flops, described(n.attrs), described(n.extra)) for n in graph.nodes)
    edges = tuple((position[e.src], position[e.dst], e.bandwidth, e.bytes, e.virtual_channel,
                   e.depth, e.distance,
                   None if e.net is None else nets.setdefault(e.net, len(nets)),
                   described(e.attrs), described(e.extra)) for e in graph.edges)
    return nodes, edges


def renaming(source: Graph, target: Graph) -> dict[str, str]:
    """Each node of ``source`` to the node of ``target`` at its position (same shape)."""
    return {a.id: b.id for a, b in zip(source.nodes, target.nodes)}


def twins_of(graphs: list[Graph | None]) -> dict[int, int]:
    """For each graph whose shape an earlier one has, the index of the first of that shape
    (None graphs have no twin)."""
    first: dict[Hashable, int] = {}
    twins = {}
    for k, graph in enumerate(graphs):
        if graph is None:
            continue
        shape = section_shape(graph)
        if shape in first:
            twins[k] = first[shape]
        else:
            first[shape] = k
    return twins
