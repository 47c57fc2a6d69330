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

import heapq
from collections import defaultdict
from dataclasses import dataclass, field
from functools import cached_property
from operator import attrgetter
from typing import Any, Iterable

import networkx as nx
import numpy as np

__all__ = ["Node", "Edge", "Net", "Graph", "UNIT_KINDS", "SHARED_EMPTY", "SharedEmpty",
           "ordered_kahn", "is_acyclic", "successor_lists", "successor_arrays",
           "same_iteration_cycle_rule"]

#: Bytes per sample that fit the scalar network (one 32-bit word).
SCALAR_BYTES = 4

#: The unit kinds a node may ask for; "any" lets placement choose.
UNIT_KINDS = ("pcu", "pmu", "agcu", "any")


class SharedEmpty(dict):
    """An empty ``attrs`` or ``extra`` that refuses changes: the one a reader gives every
    node and edge it builds in bulk without them (10^6 own empty dicts cost 0.4 s and
    128 MB). To change a node's, give it its own: ``node.attrs = {"k": 1}``.

    >>> SHARED_EMPTY["k"] = 1
    Traceback (most recent call last):
    ...
    TypeError: this attrs/extra is shared by the nodes and edges read from a file; give the node
    or edge its own dict before changing it
    """

    __slots__ = ()

    def _refuse(self, *args: Any) -> None:
        raise TypeError("this attrs/extra is shared by the nodes and edges read from a file; "
                        "give the node or edge its own dict before changing it")

    __setitem__ = __delitem__ = __ior__ = clear = pop = popitem = setdefault = update = _refuse

    def __reduce__(self) -> str:
        return "SHARED_EMPTY"    # copies and pickles stay the one shared object


#: The shared empty ``attrs``/``extra`` (see :class:`SharedEmpty`).
SHARED_EMPTY = SharedEmpty()


@dataclass(slots=True)
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
    flops: float | None = None  # floating-point operations per sample (performance simulator)

    def with_units(self, pcu: float | None, pmu: float | None) -> "Node":
        """This node with other ``pcu``/``pmu`` (``dataclasses.replace`` is 5x slower:
        1.9 s for 10^6 nodes).

        >>> from dataclasses import replace
        >>> n = Node("w", unit="pmu", attrs={"k": 1}, latency=3, flops=2.0)
        >>> n.with_units(0.0, 2.0) == replace(n, pcu=0.0, pmu=2.0)
        True
        """
        return Node(self.id, self.op, self.unit, pcu, pmu, self.latency, self.category,
                    self.mem_vars, self.starts_sdf, self.attrs, self.extra, self.flops)


@dataclass(slots=True)
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
        if len(self.index_of) < len(self.nodes):       # duplicate ids: not validated
            nodes = [n for n in self.nodes if n.id in keep]
        else:
            nodes = [self.nodes[k] for k in sorted(self.index_of[v] for v in keep
                                                   if v in self.index_of)]
        edges = [self.edges[i] for i in self.induced_edges(keep)]
        return Graph(name or self.name, nodes, edges, dict(self.attrs))

    def induced_edges(self, node_ids: Iterable[str]) -> list[int]:
        """Indices of the edges with both ends in ``node_ids``, in file order.

        Linear in the edges leaving ``node_ids``, not in the whole graph.

        Examples
        --------
        >>> g = Graph("g", [Node("a"), Node("b"), Node("c")],
        ...           [Edge("b", "c"), Edge("a", "b"), Edge("a", "c")])
        >>> g.induced_edges(["a", "b"])
        [1]
        """
        keep = node_ids if isinstance(node_ids, (set, frozenset)) else set(node_ids)
        edges = self.edges
        return sorted(i for v in keep for i in self.out_edges(v) if edges[i].dst in keep)

    def topological_order(self) -> list[str]:
        """Node ids in a deterministic topological order of the non-loop-carried edges.

        Ties are broken by file order. Raises ``networkx.NetworkXUnfeasible`` if
        the same-iteration edges form a cycle.
        """
        order = self._topological_indices
        if len(order) < len(self.nodes):
            raise nx.NetworkXUnfeasible("Graph contains a cycle or graph changed during iteration")
        nodes = self.nodes
        return [nodes[k].id for k in order]

    def is_acyclic(self) -> bool:
        """Whether the same-iteration edges form no cycle.

        Validation asks only this; the ordered walk of :meth:`topological_order`
        (a heap, sequential by nature: 1.9 s at 10^6 nodes) waits for a caller that
        needs the order.
        """
        if "_topological_indices" in self.__dict__:
            return len(self._topological_indices) == len(self.nodes)
        return is_acyclic(len(self.nodes), *self.same_iteration_ends)

    @cached_property
    def _topological_indices(self) -> list[int]:
        return ordered_kahn(len(self.nodes), *self.same_iteration_ends)

    @cached_property
    def same_iteration_ends(self) -> tuple[np.ndarray, np.ndarray]:
        """:attr:`edge_ends` of the edges that are not loop-carried."""
        src, dst = self.edge_ends
        distance = np.fromiter(map(attrgetter("distance"), self.edges), dtype=np.int64,
                               count=len(self.edges))
        return src[distance <= 0], dst[distance <= 0]

    @cached_property
    def index_of(self) -> dict[str, int]:
        """Node id -> position in :attr:`nodes` (the last one of a duplicate id)."""
        return {n.id: k for k, n in enumerate(self.nodes)}

    def with_nodes(self, nodes: list[Node]) -> "Graph":
        """A graph of ``nodes`` (the same ids in the same order, other fields) and these
        edges, keeping the node index and edge ends worked out so far (they depend on
        the ids and edges alone: 4 s to work out again at 10^6 nodes)."""
        graph = Graph(self.name, nodes, list(self.edges), dict(self.attrs), dict(self.extra))
        if "index_of" in self.__dict__ and "edge_ends" in self.__dict__:
            graph.keep_derived(self.index_of, self.edge_ends)
        return graph

    def keep_derived(self, index_of: dict[str, int],
                     edge_ends: tuple[np.ndarray, np.ndarray]) -> None:
        """Keep :attr:`index_of` and :attr:`edge_ends` that a reader already worked
        out while building the graph (they must equal what the properties give)."""
        self.__dict__["index_of"], self.__dict__["edge_ends"] = index_of, edge_ends

    @cached_property
    def edge_ends(self) -> tuple[np.ndarray, np.ndarray]:
        """Positions of every edge's source and destination node (int64 arrays).

        Raises ``KeyError`` for an edge naming a node that does not exist.
        """
        index, edges = self.index_of, self.edges
        if len(index) < len(self.nodes):  # duplicate ids: the last node of each, by value
            return tuple(np.fromiter(map(index.__getitem__, map(attrgetter(end), edges)),
                                     dtype=np.int64, count=len(edges)) for end in ("src", "dst"))
        ids = _IdentityIndex(self.node_ids, index)
        return ids.positions(edges, "src"), ids.positions(edges, "dst")


class _IdentityIndex:
    """Positions of edge ends among unique node ids, matched by object identity first.

    A generator or an importer usually hands an edge the very string object of its
    node's id: comparing addresses with numpy (no hashing, no string compares) then
    finds every end, twice as fast as a dict lookup per end at 10^5 edges, where the
    strings lie scattered in memory. Ends held by other string objects are looked up
    by value (all of them at once when they are most).
    """

    def __init__(self, ids: list[str], index: dict[str, int]):
        self.index = index
        address = np.fromiter(map(id, ids), dtype=np.uint64, count=len(ids))
        self.order = np.argsort(address)
        self.address = address[self.order]

    def positions(self, edges: list[Edge], end: str) -> np.ndarray:
        """``index[edge.<end>]`` for every edge (int64); ``KeyError`` for a missing node."""
        count, get = len(edges), attrgetter(end)
        wanted = np.fromiter(map(id, map(get, edges)), dtype=np.uint64, count=count)
        at = np.minimum(np.searchsorted(self.address, wanted), max(len(self.address) - 1, 0))
        found = self.address[at] == wanted if len(self.address) else np.zeros(count, dtype=bool)
        missed = np.flatnonzero(~found)
        if 2 * len(missed) > count:
            return np.fromiter(map(self.index.__getitem__, map(get, edges)), dtype=np.int64,
                               count=count)
        out = self.order[at] if len(self.address) else np.zeros(count, dtype=np.int64)
        if len(missed):
            out[missed] = [self.index[get(edges[i])] for i in missed.tolist()]
        return out


def ordered_kahn(count: int, src: np.ndarray, dst: np.ndarray) -> list[int]:
    """The indices ``0..count-1`` in topological order of the arcs ``src[i] -> dst[i]``.

    Of the ready indices the smallest goes first (the lexicographically
    smallest order). Indices on or behind a cycle are left out, so the order
    is shorter than ``count`` exactly when the arcs hold a cycle. Linear in the
    arcs, plus ``log count`` per index.

    Examples
    --------
    >>> ordered_kahn(4, np.array([2, 3]), np.array([0, 1]))
    [2, 0, 3, 1]
    >>> ordered_kahn(3, np.array([0, 1]), np.array([1, 0]))
    [2]
    """
    if bool(np.all(src < dst)):   # file order is topological: then it is the smallest order
        return list(range(count))
    starts, targets = successor_arrays(count, src, dst)
    waiting = np.bincount(dst, minlength=count)
    ready = np.flatnonzero(waiting == 0).tolist()   # ascending: already a heap
    # memoryviews read and write the arrays as Python ints, faster than lists
    starts, targets, waiting = memoryview(starts), memoryview(targets), memoryview(waiting)
    order: list[int] = []
    while ready:
        k = heapq.heappop(ready)
        order.append(k)
        for nxt in targets[starts[k]:starts[k + 1]]:
            waiting[nxt] -= 1
            if not waiting[nxt]:
                heapq.heappush(ready, nxt)
    return order


#: Below this many ready indices, :func:`is_acyclic` peels them one at a time (a round of
#: array operations costs tens of microseconds whatever its size: a chain of 10^6 nodes
#: would take 10^6 rounds).
PEEL_MIN = 64


def is_acyclic(count: int, src: np.ndarray, dst: np.ndarray) -> bool:
    """Whether the arcs ``src[i] -> dst[i]`` between indices ``0..count-1`` hold no cycle.

    Kahn's peeling without an order among the ready indices: a whole round of
    them at once with array operations while there are many, one at a time while
    there are few; linear in the arcs either way.

    Examples
    --------
    >>> is_acyclic(3, np.array([2, 0]), np.array([0, 1])), is_acyclic(2, np.array([0, 1]),
    ...                                                                 np.array([1, 0]))
    (True, False)
    """
    if bool(np.all(src < dst)):
        return True
    starts, targets = successor_arrays(count, src, dst)
    waiting = np.bincount(dst, minlength=count)
    ready = np.flatnonzero(waiting == 0)
    peeled = 0
    while ready.size:
        if ready.size >= PEEL_MIN:
            peeled += ready.size
            ready = _peeled_round(ready, starts, targets, waiting)
        else:
            left, done = _peeled_few(ready.tolist(), starts, targets, waiting)
            peeled += done
            ready = np.array(left, dtype=np.int64)
    return peeled == count


def _peeled_round(ready: np.ndarray, starts: np.ndarray, targets: np.ndarray,
                  waiting: np.ndarray) -> np.ndarray:
    """One round of Kahn's peeling on arrays: the indices ``ready`` make ready."""
    lo, size = starts[ready], starts[ready + 1] - starts[ready]
    ends = np.cumsum(size)
    reached = targets[np.repeat(lo - ends + size, size) + np.arange(ends[-1])]
    hit, times = np.unique(reached, return_counts=True)
    waiting[hit] -= times
    return hit[waiting[hit] == 0]


def _peeled_few(ready: list[int], starts: np.ndarray, targets: np.ndarray,
                waiting: np.ndarray) -> tuple[list[int], int]:
    """Kahn's peeling one index at a time until none or :data:`PEEL_MIN` are ready: those
    left ready, and how many were peeled (memoryviews: Python ints, the arrays' memory)."""
    starts, targets, waiting, peeled = memoryview(starts), memoryview(targets), \
        memoryview(waiting), 0
    while ready and len(ready) < PEEL_MIN:
        k = ready.pop()
        peeled += 1
        for nxt in targets[starts[k]:starts[k + 1]]:
            waiting[nxt] -= 1
            if not waiting[nxt]:
                ready.append(nxt)
    return ready, peeled


def successor_arrays(count: int, src: np.ndarray, dst: np.ndarray
                     ) -> tuple[np.ndarray, np.ndarray]:
    """:func:`successor_lists` as int64 arrays."""
    by_source = np.argsort(src, kind="stable")
    starts = np.zeros(count + 1, dtype=np.int64)
    np.cumsum(np.bincount(src, minlength=count), out=starts[1:])
    return starts, dst[by_source]


def successor_lists(count: int, src: np.ndarray, dst: np.ndarray) -> tuple[list[int], list[int]]:
    """The arcs ``src[i] -> dst[i]`` grouped by source: the successors of ``k`` are
    ``targets[starts[k]:starts[k + 1]]`` (in arc order).

    Examples
    --------
    >>> successor_lists(3, np.array([2, 0, 2]), np.array([0, 1, 1]))
    ([0, 1, 1, 3], [1, 0, 1])
    """
    starts, targets = successor_arrays(count, src, dst)
    return starts.tolist(), targets.tolist()


def same_iteration_cycle_rule(graph: Graph) -> str | None:
    """Rule G0 of the modulo schedulers, broken: the cycle of same-iteration edges (a
    cycle needs a loop-carried edge) with the fix, or None when there is none.

    >>> g = Graph("g", [Node("a"), Node("b")], [Edge("a", "b"), Edge("b", "a")])
    >>> same_iteration_cycle_rule(g)
    'G0 graph: same-iteration edges form a cycle a -> b -> a; mark one edge loop-carried
    (distance >= 1)'
    """
    g = nx.DiGraph()
    g.add_edges_from((e.src, e.dst) for e in graph.edges if e.distance == 0)
    try:
        cycle = nx.find_cycle(g)
    except nx.NetworkXNoCycle:
        return None
    path = " -> ".join([u for u, _ in cycle] + [cycle[0][0]])
    return (f"G0 graph: same-iteration edges form a cycle {path}; mark one edge loop-carried "
            "(distance >= 1)")

