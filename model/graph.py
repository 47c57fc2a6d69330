"""The dataflow-graph IR: nodes, edges, multi-sink nets.

A :class:`Graph` is what graph.json describes: named nodes (operations) and
directed edges between them. Edges that share a source and a ``net`` id form one
multi-sink net (the same data sent to several consumers); every other edge is a
net of its own. Edges with ``distance > 0`` are loop-carried (they feed the next
iteration) and are the only edges allowed to close a cycle.

The IR is plain dataclasses; reading and validating files is in
:mod:`model.graphjson`.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Iterable

import networkx as nx

__all__ = ["Node", "Edge", "Net", "Graph", "UNIT_KINDS"]

#: Bytes per sample that fit the scalar network (one 32-bit word).
SCALAR_BYTES = 4

#: The unit kinds a node may ask for; "any" lets placement choose.
UNIT_KINDS = ("pcu", "pmu", "agcu", "any")


@dataclass
class Node:
    """One operation of the graph (a logical unit)."""

    id: str
    op: str = ""
    unit: str = "any"
    pcu: float | None = None
    pmu: float | None = None
    latency: int | None = None
    category: str | None = None
    mem_vars: tuple[str, ...] = ()
    starts_sdf: bool = False
    attrs: dict[str, Any] = field(default_factory=dict)
    extra: dict[str, Any] = field(default_factory=dict)  # unknown fields, kept


@dataclass
class Edge:
    """A directed connection from ``src`` to ``dst``."""

    src: str
    dst: str
    bandwidth: float = 1.0
    bytes: float | None = None
    net: str | None = None
    virtual_channel: bool = False
    depth: int | None = None
    distance: int = 0
    attrs: dict[str, Any] = field(default_factory=dict)
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def loop_carried(self) -> bool:
        return self.distance > 0

    @property
    def network(self) -> str:
        """The on-chip network the edge travels on.

        ``attrs["network"]`` when given; else a value of at most one 32-bit
        word per sample (``bytes <= 4``) goes on the scalar network and
        anything else on the vector network.
        """
        if "network" in self.attrs:
            return self.attrs["network"]
        return "scalar" if self.bytes is not None and self.bytes <= SCALAR_BYTES else "vector"


@dataclass(frozen=True)
class Net:
    """One driver sending the same data to one or more sinks.

    ``edges`` are indices into :attr:`Graph.edges`, in sink order.
    """

    id: str
    driver: str
    sinks: tuple[str, ...]
    edges: tuple[int, ...]

    @property
    def fanout(self) -> int:
        return len(self.sinks)


@dataclass
class Graph:
    """A dataflow graph: nodes in file order, edges in file order.

    Derived views (adjacency, nets) are cached; build a new Graph rather than
    mutating one after those are used.

    Examples
    --------
    >>> g = Graph("g", [Node("a"), Node("b"), Node("c")],
    ...           [Edge("a", "b", net="n"), Edge("a", "c", net="n")])
    >>> [(n.driver, n.sinks) for n in g.nets]
    [('a', ('b', 'c'))]
    >>> g.successors("a")
    ['b', 'c']
    """

    name: str
    nodes: list[Node]
    edges: list[Edge]
    attrs: dict[str, Any] = field(default_factory=dict)
    extra: dict[str, Any] = field(default_factory=dict)

    # -- lookups -------------------------------------------------------------
    @cached_property
    def node_by_id(self) -> dict[str, Node]:
        return {n.id: n for n in self.nodes}

    def node(self, node_id: str) -> Node:
        return self.node_by_id[node_id]

    @property
    def node_ids(self) -> list[str]:
        return [n.id for n in self.nodes]

    def __len__(self) -> int:
        return len(self.nodes)

    def __contains__(self, node_id: object) -> bool:
        return node_id in self.node_by_id

    # -- adjacency -----------------------------------------------------------
    @cached_property
    def _out_edges(self) -> dict[str, list[int]]:
        out: dict[str, list[int]] = defaultdict(list)
        for i, e in enumerate(self.edges):
            out[e.src].append(i)
        return out

    @cached_property
    def _in_edges(self) -> dict[str, list[int]]:
        inc: dict[str, list[int]] = defaultdict(list)
        for i, e in enumerate(self.edges):
            inc[e.dst].append(i)
        return inc

    def out_edges(self, node_id: str) -> list[int]:
        """Indices of the edges leaving ``node_id``, in file order."""
        return self._out_edges.get(node_id, [])

    def in_edges(self, node_id: str) -> list[int]:
        """Indices of the edges entering ``node_id``, in file order."""
        return self._in_edges.get(node_id, [])

    def successors(self, node_id: str) -> list[str]:
        return list(dict.fromkeys(self.edges[i].dst for i in self.out_edges(node_id)))

    def predecessors(self, node_id: str) -> list[str]:
        return list(dict.fromkeys(self.edges[i].src for i in self.in_edges(node_id)))

    # -- nets ----------------------------------------------------------------
    @cached_property
    def nets(self) -> list[Net]:
        """Edges grouped into nets: same source and same ``net`` id, else alone."""
        groups: dict[tuple[str, str], list[int]] = {}
        for i, e in enumerate(self.edges):
            key = (e.src, e.net) if e.net is not None else (e.src, f"{e.src}->{e.dst}#{i}")
            groups.setdefault(key, []).append(i)
        nets = []
        for (src, net_id), idx in groups.items():
            sinks = tuple(dict.fromkeys(self.edges[i].dst for i in idx))
            nets.append(Net(net_id, src, sinks, tuple(idx)))
        return nets

    @cached_property
    def net_of_edge(self) -> list[int]:
        """For each edge, the index of its net in :attr:`nets`."""
        owner = [0] * len(self.edges)
        for k, net in enumerate(self.nets):
            for i in net.edges:
                owner[i] = k
        return owner

    # -- conversions ---------------------------------------------------------
    def to_networkx(self, loop_carried: bool = True) -> nx.MultiDiGraph:
        """A networkx multigraph with edge attribute ``index`` (into ``edges``)."""
        g = nx.MultiDiGraph(name=self.name)
        g.add_nodes_from(self.node_ids)
        for i, e in enumerate(self.edges):
            if loop_carried or not e.loop_carried:
                g.add_edge(e.src, e.dst, index=i, bandwidth=e.bandwidth)
        return g

    def subgraph(self, node_ids: Iterable[str], name: str | None = None) -> "Graph":
        """The graph induced by ``node_ids`` (node order kept, edges inside only)."""
        keep = set(node_ids)
        nodes = [n for n in self.nodes if n.id in keep]
        edges = [e for e in self.edges if e.src in keep and e.dst in keep]
        return Graph(name or self.name, nodes, edges, dict(self.attrs))

    def topological_order(self) -> list[str]:
        """Node ids in a deterministic topological order of the non-loop-carried edges.

        Ties are broken by file order. Raises ``networkx.NetworkXUnfeasible`` if
        the same-iteration edges form a cycle.
        """
        position = {n: k for k, n in enumerate(self.node_ids)}
        g = nx.DiGraph()
        g.add_nodes_from(self.node_ids)
        g.add_edges_from((e.src, e.dst) for e in self.edges if not e.loop_carried)
        return list(nx.lexicographical_topological_sort(g, key=position.__getitem__))
