"""Priority-queue node sorter (source 000: the ordering decision).

The sorter turns an operation unit graph into an *ordered sequence of nodes*
(OSN) that placement and routing consume one node at a time. It follows the
flowchart of US 2025/0258794 A1, FIG. 10 (operations 1010-1080; digest §3.3):

* an outer loop picks a *seed* among the still unsorted nodes and puts it into
  the *ordered data structure* (ODS, a min priority queue); it runs once per
  connected component;
* an inner loop pops the best node of the ODS, appends it to the OSN, adds its
  unsorted neighbours (edge direction ignored) to the ODS, and re-ranks the ODS
  on a lexicographic series of keys.

The default keys are the three of the worked example (digest §3.6), smaller
is better:

1. ``closes_connection``: 1, or 0 when sorting the node would close a
   multi-terminal connection -- (i) all of its >= 2 fan-in nodes are sorted,
   (ii) all sinks of a multi-sink net it drives are sorted, (iii) the driver
   and all other sinks of a multi-sink net it belongs to are sorted -- minus
   ``vc_delta`` when the node touches a virtual channel without end-to-end
   control;
2. ``bandwidth_gap``: 1 - the largest bandwidth of an edge to a sorted node;
3. ``age``: the number of iterations the node has spent in the ODS (1 in the
   iteration it enters), so among equal keys the newest node goes first (LIFO).

Any of the patent's eight ranking criteria (§3.5) can be combined instead, as
a lexicographic series or as one weighted sum (:data:`CRITERIA`). Full ties
are broken by the iteration the node entered the ODS (earlier first), then by
node id, so the result never depends on hash order.

Speed: keys 1 and 2 only change for nodes adjacent to the node just sorted or
sharing a net with it, and the age grows by one for every node of the ODS at
once, so it is ``-insertion_iteration`` in the heap. The ODS is therefore a
binary heap with lazy updates: a node whose keys change gets a fresh entry and
the stale one is skipped when it surfaces. Lexicographic keys are packed into
one integer per entry (each key replaced by its rank among the values it can
take), which the heap compares much faster than tuples. The whole sort is
O(E log V) after an O(V + E) longest-path seed search.

The default keys without a trace (the pipeline's case) run in
:mod:`formulations.sorter.kernel`: nodes numbered by id rank, one int per node pair
(key2 rank and neighbour) and per heap entry, built with numpy from the graph's edge
index (:attr:`model.graph.Graph.edge_ends`), so the loop does list indexing and int
arithmetic only. About 2x networkx's ``topological_sort`` of the same graph at 10^5
nodes and 2*10^5 edges (``benchmarks/results/sorter.md``). Every other configuration
takes the general heap below; both give the order of the literal reference.
The literal re-rank-everything pseudo-code of digest §3.7 lives outside the
production code, in ``benchmarks/reference_sorter.py`` (built on
:class:`LiteralKeys` and :func:`seed_order`), to cross-check it in the tests and
as the sorter benchmark's baseline.

Decisions where the source is silent (digest §8.2):

* Neighbours already waiting in the ODS are not re-added and keep their age (11).
* Rule (i) counts distinct predecessor nodes, self-loops excluded (6); rule
  (iii) fires for nets of fanout >= ``shared_net_min_fanout``, default 2, which
  the worked example needs; 3 is the literal text (5).
* The virtual-channel decrement applies to both ends of a ``virtual_channel``
  edge and stacks with the rules: a closing VC node gets ``0 - vc_delta`` (7, 8).
* Key 2 takes the largest bandwidth over parallel edges of one node pair (9).
* Keys are computed after the popped node joins the sorted set (13); full ties
  go to the earlier insertion, then the smaller id (12).
* Seeds (14-16): each outer pass takes the best seed among the unsorted nodes,
  so the component with the globally longest path goes first. Longest paths
  are hop counts on the DAG left after dropping loop-carried edges and the back
  edges of a depth-first search (roots and successors in file order); sources
  and sinks are those of that DAG, so even a pure cycle has a seed. Ties: the
  highest-bandwidth first edge on a longest path, the widest fanout net, the
  smallest id (sink policies mirror this with the last edge and the fan-in).
* All edges, loop-carried ones included, are adjacency for the keys.
* Under ``combine="weighted_sum"`` with an ``age`` term the heap orders by
  ``-insertion_iteration`` in place of the age: the same order up to the
  floating-point rounding of exact ties.
"""

from __future__ import annotations

import heapq
import math
import random
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from operator import attrgetter
from typing import Any

import numpy as np

from formulations.sorter.kernel import closed_by_nets, sort_default_keys
from model.graph import Graph
from model.graphjson import gc_paused

__all__ = [
    "SEED_POLICIES",
    "CRITERIA",
    "DEFAULT_CRITERIA",
    "KEY1_RULES",
    "SorterConfig",
    "TraceStep",
    "SortResult",
    "sort_nodes",
    "select_seed",
    "longest_hop_paths",
    "cycle_breaking_edges",
    "node_keys",
    "seed_order",
    "LiteralKeys",
]

#: How the outer loop picks the first node of each component (digest §3.4).
SEED_POLICIES = (
    "longest_path_source",  # source of the longest hop path (the worked example)
    "longest_path_sink",  # sink of the longest hop path
    "max_bandwidth_input",  # source with the highest-bandwidth outgoing edge (claim 4)
    "max_bandwidth_output",  # sink with the highest-bandwidth incoming edge (claim 5)
    "first_in_component",  # first unsorted node in file order
    "random",  # first unsorted node of one seeded shuffle
)

#: Ranking criteria; each key is a weighted value, smaller sorts earlier.
#: The first two are the default key1 and key2, the rest the patent's list of
#: eight (§3.5), in its order.
CRITERIA = (
    "closes_connection",  # key1: 1, or 0 when closing a multi-terminal connection, minus VC delta
    "bandwidth_gap",  # key2: 1 - max bandwidth of an edge to a sorted node
    "sorted_neighbours",  # (1) number of sorted nodes connected to the node
    "max_bandwidth",  # (2) max bandwidth of all edges of the node
    "max_bandwidth_to_sorted",  # (3) max bandwidth of an edge to a sorted node
    "min_bandwidth",  # (4) min bandwidth of all edges of the node
    "min_bandwidth_to_sorted",  # (5) min bandwidth of an edge to a sorted node
    "max_fanout",  # (6) largest fanout of a net the node drives
    "virtual_channels",  # (7) number of the node's edges that are virtual channels
    "age",  # (8) iterations spent in the ODS (key3 of the example)
)

#: The three keys of the worked example, compared lexicographically.
DEFAULT_CRITERIA = (("closes_connection", 1.0), ("bandwidth_gap", 1.0), ("age", 1.0))

#: The key1 rules: (i) fan-in closed, (ii) driven net closed, (iii) shared net closed.
KEY1_RULES = ("i", "ii", "iii")


# --------------------------------------------------------------------------
# Configuration and results
# --------------------------------------------------------------------------
@dataclass(frozen=True)
class SorterConfig:
    """The switchable parts of the sorter.

    Parameters
    ----------
    seed_policy : str
        One of :data:`SEED_POLICIES`.
    random_seed : int
        Seed of the ``random`` policy.
    criteria : sequence of (name, weight), mapping or names
        The ranking criteria (:data:`CRITERIA`) with their weights; a bare name
        has weight 1. A negative weight makes larger values sort first.
    combine : {"lexicographic", "weighted_sum"}
        One key per criterion compared in order, or a single key that is the
        weighted sum of all criteria.
    key1_rules : tuple of str
        Which of the ``closes_connection`` rules (:data:`KEY1_RULES`) apply.
    shared_net_min_fanout : int
        Rule (iii) fires only for nets with at least this many sinks.
    vc_delta : float
        Decrement of ``closes_connection`` for a node on a virtual channel.
    trace : bool
        Record the ODS with every node's keys after each iteration.
    """

    seed_policy: str = "longest_path_source"
    random_seed: int = 0
    criteria: Any = DEFAULT_CRITERIA
    combine: str = "lexicographic"
    key1_rules: tuple[str, ...] = KEY1_RULES
    shared_net_min_fanout: int = 2
    vc_delta: float = 1.0
    trace: bool = False

    def __post_init__(self) -> None:
        if self.seed_policy not in SEED_POLICIES:
            raise ValueError(f"seed_policy {self.seed_policy!r}: choose one of "
                             f"{', '.join(SEED_POLICIES)}")
        if self.combine not in ("lexicographic", "weighted_sum"):
            raise ValueError(f"combine {self.combine!r}: choose 'lexicographic' or 'weighted_sum'")
        object.__setattr__(self, "criteria", _normalise_criteria(self.criteria))
        rules = tuple(self.key1_rules)
        if not set(rules) <= set(KEY1_RULES):
            raise ValueError(f"key1_rules {rules!r}: allowed rules are {KEY1_RULES}")
        object.__setattr__(self, "key1_rules", rules)
        if self.shared_net_min_fanout < 2:
            raise ValueError("shared_net_min_fanout must be at least 2")
        if not math.isfinite(self.vc_delta):
            raise ValueError("vc_delta must be finite")

    @property
    def key_names(self) -> tuple[str, ...]:
        """Names of the keys compared, in order."""
        if self.combine == "weighted_sum":
            return ("weighted_sum",)
        return tuple(name for name, _ in self.criteria)


def _normalise_criteria(criteria: Any) -> tuple[tuple[str, float], ...]:
    items = criteria.items() if isinstance(criteria, Mapping) else criteria
    out = []
    for item in items:
        name, weight = (item, 1.0) if isinstance(item, str) else item
        if name not in CRITERIA:
            raise ValueError(f"criterion {name!r}: choose from {', '.join(CRITERIA)}")
        if not math.isfinite(weight):
            raise ValueError(f"criterion {name!r}: weight must be finite, got {weight!r}")
        out.append((name, float(weight)))
    if not out:
        raise ValueError("criteria: give at least one ranking criterion")
    return tuple(out)


@dataclass
class TraceStep:
    """One inner-loop iteration: what was sorted and the re-ranked ODS."""

    iteration: int  # 1-based position of ``popped`` in the order
    popped: str
    new_neighbours: list[str]  # nodes added to the ODS, by id
    ods: list[tuple[str, tuple[float, ...]]]  # (node, keys), best first


@dataclass
class SortResult:
    """The ordered sequence of nodes and how it was found."""

    order: list[str]
    seeds: list[str] = field(default_factory=list)  # one per component, in order
    key_names: tuple[str, ...] = ()
    trace: list[TraceStep] | None = None


# --------------------------------------------------------------------------
# Graph preprocessing (integer indices, numpy-built adjacency)
# --------------------------------------------------------------------------
class _Indexed:
    """The graph as integer arrays; derived structures are built on demand.

    Nodes are numbered in file order. The per-edge Python work is done once
    here; everything derived is built with numpy, so preprocessing stays a
    small part of the sort even at millions of edges.
    """

    def __init__(self, graph: Graph):
        self.name = graph.name
        self.ids = graph.node_ids
        self.n = n = len(self.ids)
        if len(graph.index_of) != n:
            raise ValueError(f"graph {graph.name!r}: node ids are not unique")
        edges = graph.edges
        m = self.n_edges = len(edges)
        try:  # the graph's own index (a reader keeps the one it worked out)
            self.src, self.dst = graph.edge_ends
        except KeyError as exc:
            raise ValueError(
                f"graph {graph.name!r}: an edge names node {exc.args[0]!r}, "
                "which does not exist") from None
        self.bw = np.fromiter(map(attrgetter("bandwidth"), edges), dtype=np.float64, count=m)
        if not np.all((self.bw > 0) & (self.bw <= 1)):
            bad = int(np.flatnonzero(~((self.bw > 0) & (self.bw <= 1)))[0])
            raise ValueError(f"graph {graph.name!r}: edges[{bad}].bandwidth must be in (0, 1], "
                             f"got {edges[bad].bandwidth!r}")
        self._edges = edges

    @cached_property
    def distance(self) -> np.ndarray:
        return np.fromiter(map(attrgetter("distance"), self._edges), dtype=np.int64,
                           count=self.n_edges)

    @cached_property
    def vc(self) -> np.ndarray:
        return np.fromiter(map(bool, map(attrgetter("virtual_channel"), self._edges)),
                           dtype=bool, count=self.n_edges)

    @cached_property
    def by_rank(self) -> list[int]:
        """The nodes in the order of their ids (the last tie-break)."""
        return sorted(range(self.n), key=self.ids.__getitem__)

    @cached_property
    def rank(self) -> np.ndarray:
        """Rank of each node's id in sorted order (the inverse of :attr:`by_rank`)."""
        rank = np.empty(self.n, dtype=np.int64)
        rank[self.by_rank] = np.arange(self.n)
        return rank

    @cached_property
    def idrank(self) -> list[int]:
        """:attr:`rank` as a list."""
        return self.rank.tolist()

    @cached_property
    def _pair_table(self) -> dict[str, np.ndarray]:
        """Distinct node pairs, both directions, sorted by (node, neighbour).

        Parallel edges of one pair merge (max and min bandwidth, whether an
        edge runs node -> neighbour and/or back); self-loops are left out: a
        node is neither its own neighbour nor its own predecessor.
        """
        n, keep = self.n, self.src != self.dst
        s, d, w = self.src[keep], self.dst[keep], self.bw[keep]
        u, v = np.concatenate([s, d]), np.concatenate([d, s])
        w = np.concatenate([w, w])
        outward = np.concatenate([np.ones(len(s), dtype=bool), np.zeros(len(s), dtype=bool)])
        order = np.argsort(u * n + v)
        u, v, w, outward = u[order], v[order], w[order], outward[order]
        first = np.ones(len(u), dtype=bool)
        first[1:] = (u[1:] != u[:-1]) | (v[1:] != v[:-1])
        starts = np.flatnonzero(first)
        if len(starts) == 0:
            return {"node": u, "nbr": v, "wmax": w, "wmin": w, "out": outward, "in": outward}
        return {
            "node": u[starts],
            "nbr": v[starts],
            "wmax": np.maximum.reduceat(w, starts),
            "wmin": np.minimum.reduceat(w, starts),
            "out": np.logical_or.reduceat(outward, starts),
            "in": np.logical_or.reduceat(~outward, starts),
        }

    @cached_property
    def pairs(self) -> tuple[list[int], list[int], list[float]]:
        """Undirected adjacency in CSR form: offsets, neighbours, max bandwidth."""
        t = self._pair_table
        offsets = np.searchsorted(t["node"], np.arange(self.n + 1))
        return offsets.tolist(), t["nbr"].tolist(), t["wmax"].tolist()

    @cached_property
    def pair_min(self) -> list[float]:
        """Min bandwidth of each pair of :attr:`pairs`."""
        return self._pair_table["wmin"].tolist()

    @cached_property
    def fanin(self) -> np.ndarray:
        """Number of distinct predecessors of each node."""
        t = self._pair_table
        return np.bincount(t["node"][t["in"]], minlength=self.n)

    def successors(self, min_fanin: int = 0) -> tuple[list[int], list[int]]:
        """Distinct successors in CSR form (offsets, targets), keeping only the
        successors with at least ``min_fanin`` distinct predecessors."""
        t = self._pair_table
        keep = t["out"] & (self.fanin[t["nbr"]] >= min_fanin)
        offsets = np.searchsorted(t["node"][keep], np.arange(self.n + 1))
        return offsets.tolist(), t["nbr"][keep].tolist()

    @cached_property
    def multi_nets(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Nets with two or more distinct sinks: driver, fanout, and (net, sink) pairs.

        Same grouping as :attr:`model.graph.Graph.nets` (edges with one source
        and one ``net`` id; an edge without a net id is a net of its own).
        """
        edges = self._edges
        named_list = [i for i, e in enumerate(edges) if e.net is not None]
        if not named_list:
            empty = np.zeros(0, dtype=np.int64)
            return empty, empty, empty, empty
        named = np.array(named_list, dtype=np.int64)
        names = [edges[i].net for i in named_list]
        code = {name: k for k, name in enumerate(dict.fromkeys(names))}
        net_code = np.fromiter(map(code.__getitem__, names), dtype=np.int64, count=len(names))
        # distinct (driver, net id, sink) triples, grouped by (driver, net id)
        drv, nid, snk = _unique_rows(self.src[named], net_code, self.dst[named])
        first = np.ones(len(drv), dtype=bool)
        first[1:] = (drv[1:] != drv[:-1]) | (nid[1:] != nid[:-1])
        group = np.cumsum(first) - 1
        size = np.bincount(group)
        multi = size >= 2
        keep = multi[group]
        renumber = np.cumsum(multi) - 1
        return drv[first][multi], size[multi], renumber[group[keep]], snk[keep]

    @cached_property
    def max_fanout(self) -> list[int]:
        """Largest fanout of a net each node drives (0 for a node without fanout)."""
        fan = np.zeros(self.n, dtype=np.int64)
        fan[self.src] = 1
        driver, size, _, _ = self.multi_nets
        np.maximum.at(fan, driver, size)
        return fan.tolist()

    def incident_extreme(self, ufunc: np.ufunc, empty: float) -> list[float]:
        """Max or min bandwidth over each node's edges (``empty`` if it has none)."""
        out = np.full(self.n, np.inf if ufunc is np.minimum else -np.inf)
        ufunc.at(out, self.src, self.bw)
        ufunc.at(out, self.dst, self.bw)
        out[~np.isfinite(out)] = empty
        return out.tolist()

    @cached_property
    def vc_count(self) -> list[int]:
        """Number of virtual-channel edges touching each node (a self-loop once)."""
        vc = self.vc
        count = np.bincount(self.src[vc], minlength=self.n)
        count += np.bincount(self.dst[vc & (self.src != self.dst)], minlength=self.n)
        return count.tolist()

    @cached_property
    def dag(self) -> "_Dag":
        return _Dag(self)


def _unique_rows(*cols: np.ndarray) -> tuple[np.ndarray, ...]:
    """Distinct rows of the given columns, sorted by the first column, then the next."""
    order = np.lexsort(cols[::-1])
    cols = tuple(c[order] for c in cols)
    new = np.ones(len(cols[0]), dtype=bool)
    if len(new) > 1:
        new[1:] = np.any([c[1:] != c[:-1] for c in cols], axis=0)
    return tuple(c[new] for c in cols)


def _distinct(values: np.ndarray) -> np.ndarray:
    """``np.unique(values)`` for integers by sorting (numpy 2's hash table for plain
    ``np.unique`` of int64 takes 40x as long at 2 * 10^5 values)."""
    values = np.sort(values)
    new = np.ones(len(values), dtype=bool)
    new[1:] = values[1:] != values[:-1]
    return values[new]


def _csr(n: int, key: np.ndarray, *columns: np.ndarray) -> tuple[list[int], ...]:
    """Group ``columns`` by ``key`` (stable, so file order within a group)."""
    order = np.argsort(key, kind="stable")
    offsets = np.searchsorted(key[order], np.arange(n + 1))
    return (offsets.tolist(), *(c[order].tolist() for c in columns))


# --------------------------------------------------------------------------
# Cycle breaking and longest hop paths (for the seed)
# --------------------------------------------------------------------------
class _Dag:
    """The same-iteration edges minus DFS back edges, and longest hop paths on them."""

    def __init__(self, ix: _Indexed):
        self.ix = ix
        # loop-carried edges and self-loops never count for path lengths
        self.keep = (ix.distance <= 0) & (ix.src != ix.dst)
        self._checked = False  # True once the kept edges are known to be acyclic

    @cached_property
    def dropped(self) -> list[int]:
        if not self._checked:
            self.longest(outward=True)
        return np.flatnonzero(~self.keep).tolist()

    @property
    def indegree(self) -> np.ndarray:
        return np.bincount(self.ix.dst[self.keep], minlength=self.ix.n)

    @property
    def outdegree(self) -> np.ndarray:
        return np.bincount(self.ix.src[self.keep], minlength=self.ix.n)

    def longest(self, outward: bool) -> tuple[np.ndarray, np.ndarray]:
        """Longest hop path from each node to a sink (``outward``) or from a source.

        Also returns, per node, the highest bandwidth of a first edge (last edge
        when not ``outward``) that lies on such a longest path.
        """
        length = self._peel(outward)
        if length is None:  # a same-iteration cycle: cut it where a DFS closes it
            self._drop_back_edges()
            length = self._peel(outward)
        self._checked = True
        ix, keep = self.ix, self.keep
        lengths = np.asarray(length, dtype=np.int64)
        head, tail = (ix.src, ix.dst) if outward else (ix.dst, ix.src)
        on_path = keep & (lengths[tail] + 1 == lengths[head])
        best_bw = np.zeros(ix.n)
        np.maximum.at(best_bw, head[on_path], ix.bw[on_path])
        return lengths, best_bw

    def _peel(self, outward: bool) -> np.ndarray | None:
        """Kahn's algorithm from the sinks (``outward``) or the sources; the
        level a node is peeled at is its longest path. None if a cycle is left.

        Wide levels are peeled with numpy; once the frontier gets thin (long
        chains) the rest goes one node at a time, relaxing the same lengths.
        """
        ix, keep, n = self.ix, self.keep, self.ix.n
        head, tail = (ix.src[keep], ix.dst[keep]) if outward else (ix.dst[keep], ix.src[keep])
        order = np.argsort(tail)
        back = head[order]  # for each node, the nodes one hop before it
        off = np.searchsorted(tail[order], np.arange(n + 1))
        pending = np.bincount(head, minlength=n)  # hops not yet peeled
        length = np.zeros(n, dtype=np.int64)
        frontier = np.flatnonzero(pending == 0)
        peeled, level = 0, 0
        while len(frontier) >= 64:
            peeled += len(frontier)
            starts, counts = off[frontier], off[frontier + 1] - off[frontier]
            total = int(counts.sum())
            into = np.repeat(starts - (np.cumsum(counts) - counts), counts) + np.arange(total)
            before, hits = np.unique(back[into], return_counts=True)
            level += 1
            length[before] = level
            pending[before] -= hits
            frontier = before[pending[before] == 0]
        if len(frontier) == 0:
            return length if peeled == n else None
        # the arrays as memoryviews: Python ints per item, no conversion of the whole arrays
        # (the thin rest is often a few hundred nodes)
        off_l, back_l, pending_l, length_l = (memoryview(a) for a in (off, back, pending, length))
        queue = frontier.tolist()
        for v in queue:  # the list grows while we walk it
            hop = length_l[v] + 1
            for u in back_l[off_l[v]:off_l[v + 1]]:
                if hop > length_l[u]:
                    length_l[u] = hop
                pending_l[u] -= 1
                if pending_l[u] == 0:
                    queue.append(u)
        return length if peeled + len(queue) == n else None

    def _drop_back_edges(self) -> None:
        """Drop the back edges of an iterative DFS (roots and successors in file order)."""
        ix, n = self.ix, self.ix.n
        eid = np.flatnonzero(self.keep)
        off, succ, eidx = _csr(n, ix.src[eid], ix.dst[eid], eid)
        colour = [0] * n  # 0 new, 1 on the stack, 2 finished
        back: list[int] = []
        for root in range(n):
            if colour[root]:
                continue
            colour[root] = 1
            nodes, ptrs = [root], [off[root]]
            while nodes:
                v, p = nodes[-1], ptrs[-1]
                if p < off[v + 1]:
                    ptrs[-1] = p + 1
                    u = succ[p]
                    if colour[u] == 0:
                        colour[u] = 1
                        nodes.append(u)
                        ptrs.append(off[u])
                    elif colour[u] == 1:
                        back.append(eidx[p])
                else:
                    colour[v] = 2
                    nodes.pop()
                    ptrs.pop()
        self.keep[back] = False


def cycle_breaking_edges(graph: Graph) -> list[int]:
    """Indices of the edges ignored when measuring longest paths.

    These are the loop-carried edges (``distance > 0``), self-loops, and the
    back edges of a depth-first search over the remaining edges, started from
    the nodes in file order and following edges in file order. The rest is
    acyclic.

    Parameters
    ----------
    graph : Graph

    Returns
    -------
    list of int
        Sorted edge indices into ``graph.edges``.

    Examples
    --------
    >>> from model.graph import Edge, Graph, Node
    >>> g = Graph("loop", [Node("a"), Node("b"), Node("c")],
    ...           [Edge("a", "b"), Edge("b", "c"), Edge("c", "a"), Edge("c", "b", distance=1)])
    >>> cycle_breaking_edges(g)
    [2, 3]
    """
    return _Indexed(graph).dag.dropped


def longest_hop_paths(graph: Graph) -> tuple[dict[str, int], dict[str, int]]:
    """Longest path lengths, in hops, on the acyclic part of the graph.

    Parameters
    ----------
    graph : Graph

    Returns
    -------
    to_sink, from_source : dict of str to int
        For each node, the most hops of a path that starts at the node
        (``to_sink``) or ends at it (``from_source``), ignoring the edges of
        :func:`cycle_breaking_edges`.

    Examples
    --------
    >>> from pathlib import Path
    >>> from model.graphjson import read_graph
    >>> fig9 = read_graph(Path(__file__).resolve().parents[2] / "examples" / "fig9.json")
    >>> to_sink, from_source = longest_hop_paths(fig9)
    >>> to_sink["IN0"], to_sink["B0"], from_source["N6"], from_source["N1"]
    (6, 2, 6, 1)
    """
    ix = _Indexed(graph)
    out_len, _ = ix.dag.longest(outward=True)
    in_len, _ = ix.dag.longest(outward=False)
    return dict(zip(ix.ids, out_len.tolist())), dict(zip(ix.ids, in_len.tolist()))


# --------------------------------------------------------------------------
# Seed selection (operation 1025)
# --------------------------------------------------------------------------
def _seed_ranking(ix: _Indexed, config: SorterConfig) -> list[int]:
    """Seed candidates best first; each component's seed is the first unsorted one.

    Components are sorted whole, so the nodes left unsorted are whole
    components, on which lengths, sources and sinks are the same as in the full
    graph: ranking once equals recomputing the seed over the unsorted nodes.
    """
    policy = config.seed_policy
    if policy == "first_in_component":
        return list(range(ix.n))
    if policy == "random":
        perm = list(range(ix.n))
        random.Random(config.random_seed).shuffle(perm)
        return perm
    outward = policy in ("longest_path_source", "max_bandwidth_input")
    dag = ix.dag
    length, end_bw = dag.longest(outward)
    edge_bw = np.zeros(ix.n)
    if outward:
        candidates = np.flatnonzero(dag.indegree == 0)
        width = np.asarray(ix.max_fanout)
        np.maximum.at(edge_bw, ix.src, ix.bw)
    else:  # sink policies mirror the source ones: fan-in width, incoming bandwidth
        candidates = np.flatnonzero(dag.outdegree == 0)
        width = ix.fanin
        np.maximum.at(edge_bw, ix.dst, ix.bw)
    rank = ix.rank[candidates]
    chain = [-length[candidates], -end_bw[candidates], -width[candidates]]
    if policy.startswith("max_bandwidth"):
        chain.insert(0, -edge_bw[candidates])
    order = np.lexsort([rank] + chain[::-1])  # lexsort: the last key is the primary one
    return candidates[order].tolist()


def seed_order(graph: Graph, config: SorterConfig | None = None) -> list[str]:
    """Seed candidates best first, as :func:`sort_nodes` tries them (operation 1025).

    Each component's seed is the first of its nodes in this list.

    Examples
    --------
    >>> from model.graph import Edge, Graph, Node
    >>> seed_order(Graph("g", [Node("a"), Node("b"), Node("c")], [Edge("b", "c")]))
    ['b', 'a']
    """
    ix = _Indexed(graph)
    return [ix.ids[i] for i in _seed_ranking(ix, config or SorterConfig())]


def select_seed(graph: Graph, config: SorterConfig | None = None) -> str:
    """The first node the sorter would take (operation 1025 on the whole graph).

    Parameters
    ----------
    graph : Graph
    config : SorterConfig, optional
        Only ``seed_policy`` and ``random_seed`` matter.

    Returns
    -------
    str
        With ``longest_path_source``: the source of the longest hop path, ties
        broken by the highest-bandwidth first edge on such a path, then the
        widest fanout net, then the smallest id. The sink policies mirror this
        (last edge, widest fan-in); the bandwidth policies rank sources (sinks)
        by their highest-bandwidth outgoing (incoming) edge first, then as
        above. ``first_in_component`` takes the first node in file order,
        ``random`` the first of one shuffle seeded with ``random_seed``.

    Raises
    ------
    ValueError
        If the graph has no nodes.

    Examples
    --------
    >>> from pathlib import Path
    >>> from model.graphjson import read_graph
    >>> fig9 = read_graph(Path(__file__).resolve().parents[2] / "examples" / "fig9.json")
    >>> g = fig9
    >>> select_seed(g), select_seed(g, SorterConfig(seed_policy="longest_path_sink"))
    ('IN0', 'N6')
    """
    ix = _Indexed(graph)
    if ix.n == 0:
        raise ValueError(f"graph {graph.name!r} has no nodes to sort")
    return ix.ids[_seed_ranking(ix, config or SorterConfig())[0]]


# --------------------------------------------------------------------------
# The sorter for any keys: a heap with lazy key updates (the default keys
# without a trace take formulations/sorter/kernel.py, see sort_nodes)
# --------------------------------------------------------------------------
class _Live:
    """Per-node criterion values, updated as nodes get sorted, and heap entries.

    Every list is indexed by node. The age is not stored: it is ``iteration -
    insertion + 1``, the same shift for every node of the ODS, so the heap
    orders by ``-insertion`` instead (list ``neg_ins``). Full ties fall back
    to ``tie = insertion * n + id rank``.

    Heap entries come in two forms. Lexicographic keys (the default) are
    rank-encoded into one integer: every criterion takes values from a set
    known up front (pair bandwidths, degrees, per-node constants, four key1
    values), so each value is replaced by its rank and the ranks, then the
    tie, are packed in mixed radix. Integers compare much faster than tuples
    in the heap. With the age as the last key (weight 1), equal ages mean equal
    insertions, so the age and the tie fold into ``(n + 1 - insertion) * n + id
    rank``. Other configurations use ``(*keys, tie, node)`` tuples.
    """

    def __init__(self, ix: _Indexed, config: SorterConfig):
        n = ix.n
        self.n = n
        self.config = config
        names = [name for name, _ in config.criteria]
        self.track_count = "sorted_neighbours" in names
        self.track_max = bool({"bandwidth_gap", "max_bandwidth_to_sorted"} & set(names))
        self.track_min = "min_bandwidth_to_sorted" in names
        self.track_closing = "closes_connection" in names
        vc = ix.vc_count if self.track_closing else [0] * n
        self.vc_delta = [config.vc_delta if c else 0.0 for c in vc]
        self.values: dict[str, list] = {
            "closes_connection": [1.0 - d for d in self.vc_delta],
            "bandwidth_gap": [1.0] * n,
            "sorted_neighbours": [0] * n,
            "max_bandwidth_to_sorted": [0.0] * n,
            "min_bandwidth_to_sorted": [0.0] * n,
            "age": [0] * n,  # holds -insertion_iteration
        }
        if "max_bandwidth" in names:
            self.values["max_bandwidth"] = ix.incident_extreme(np.maximum, 0.0)
        if "min_bandwidth" in names:
            self.values["min_bandwidth"] = ix.incident_extreme(np.minimum, 0.0)
        if "max_fanout" in names:
            self.values["max_fanout"] = ix.max_fanout
        if "virtual_channels" in names:
            self.values["virtual_channels"] = ix.vc_count
        self.tie = [0] * n
        self.parts = [(self.values[name], w) for name, w in config.criteria]
        lexicographic = config.combine == "lexicographic"
        self.age_last = lexicographic and config.criteria[-1] == ("age", 1.0)
        self.packed = lexicographic and ("age" not in names
                                         or (self.age_last and names.count("age") == 1))
        if self.packed:
            self.entry = self._packed_entry(ix)
        else:
            self.entry = self._tuple_entry()

    def tie_base(self) -> tuple[int, int]:
        """(a, b) such that ``tie = a * insertion + b + id rank``."""
        if self.age_last:
            return (-self.n, (self.n + 1) * self.n) if self.packed else (-self.n, 0)
        return self.n, 0

    def _possible_values(self, ix: _Indexed, name: str) -> np.ndarray:
        """Every value criterion ``name`` can take at a node of the ODS."""
        if name == "closes_connection":
            return np.array([k - d for k in (1.0, 0.0) for d in (0.0, self.config.vc_delta)])
        bandwidths = np.unique(ix.bw)  # every pair's max and min is one of them
        if name == "bandwidth_gap":
            return np.concatenate([[1.0], 1.0 - bandwidths])
        if name in ("max_bandwidth_to_sorted", "min_bandwidth_to_sorted"):
            return np.concatenate([[0.0], bandwidths])
        if name == "sorted_neighbours":
            return np.arange(np.bincount(ix._pair_table["node"], minlength=1).max() + 1)
        return np.asarray(self.values[name])

    def _packed_entry(self, ix: _Indexed):
        n = self.n
        fields = []
        for name, w in self.config.criteria:
            if name == "age":
                continue
            vals = np.unique(w * self._possible_values(ix, name)).tolist()
            fields.append((self.values[name], w, {v: r for r, v in enumerate(vals)}, len(vals)))
        tie, span = self.tie, n * (n + 1)  # tie < span; span is a multiple of n

        def entry(j: int) -> int:
            key = 0
            for arr, w, rank, size in fields:
                key = key * size + rank[w * arr[j]]
            return key * span + tie[j]
        return entry

    def _tuple_entry(self):
        parts, tie = self.parts, self.tie
        if self.config.combine == "weighted_sum":
            def entry(j: int) -> tuple:
                s = 0.0
                for arr, w in parts:
                    s += w * arr[j]
                return (s, tie[j], j)
            return entry
        if self.age_last:
            parts = parts[:-1]
        return lambda j: (*[w * arr[j] for arr, w in parts], tie[j], j)

    def true_keys(self, j: int, iteration: int, inserted: int) -> tuple[float, ...]:
        """The keys as the patent defines them (real age), for the trace."""
        age = self.values["age"]
        vals = [_weighted(w, (iteration - inserted + 1) if arr is age else arr[j])
                for arr, w in self.parts]
        return _combine(vals, self.config)


def _weighted(w: float, value: float) -> float:
    return value if w == 1.0 else w * value


def _combine(values: list[float], config: SorterConfig) -> tuple[float, ...]:
    if config.combine == "weighted_sum":
        s = 0.0
        for v in values:
            s += v
        return (s,)
    return tuple(values)


class _Nets:
    """State of the multi-sink nets for key1 rules (ii) and (iii).

    Per net: whether the driver is sorted, how many sinks are unsorted, and
    the sum of their indices, which names the last one when a single sink is
    left -- so each update is O(1). When a member gets sorted (``_run``):
    the driver of a net whose sinks are now all sorted closes (ii); once the
    driver is sorted, the last unsorted sink closes (iii).
    """

    def __init__(self, ix: _Indexed, config: SorterConfig, relabel: np.ndarray | None = None):
        self.rule_ii = "ii" in config.key1_rules
        rule_iii = "iii" in config.key1_rules
        driver, size, sink_net, sink = ix.multi_nets
        if relabel is not None:  # nodes numbered otherwise (the kernel numbers them by id)
            driver, sink = relabel[driver], relabel[sink]
        m = len(driver)
        self.driver = driver.tolist()
        self.sinks_left = size.tolist()
        self.sink_sum = np.bincount(sink_net, weights=sink, minlength=m).astype(np.int64).tolist()
        self.driver_sorted = [False] * m
        self.iii_ok = (rule_iii & (size >= config.shared_net_min_fanout)).tolist()
        # per node, the nets it belongs to as codes net * 4 + role (1 driver, 2 sink, 3 both)
        node = np.concatenate([driver, sink])
        net = np.concatenate([np.arange(m, dtype=np.int64), sink_net])
        role = np.concatenate([np.ones(m, dtype=np.int64), np.full(len(sink), 2, dtype=np.int64)])
        order = np.lexsort((net, node))
        node, net, role = node[order], net[order], role[order]
        first = np.ones(len(node), dtype=bool)
        first[1:] = (node[1:] != node[:-1]) | (net[1:] != net[:-1])
        starts = np.flatnonzero(first)
        if len(starts):
            role = np.add.reduceat(role, starts)
        node, net = node[starts], net[starts]
        member_off = np.searchsorted(node, np.arange(ix.n + 1))
        self.member_off = member_off.tolist()
        self.in_net = (member_off[1:] > member_off[:-1]).tolist()
        self.member = (net * 4 + role).tolist()


def sort_nodes(graph: Graph, config: SorterConfig | None = None) -> SortResult:
    """Order the nodes of ``graph`` for placement and routing (source 000).

    Parameters
    ----------
    graph : Graph
        Any graph: cyclic, disconnected, with loop-carried edges.
    config : SorterConfig, optional
        Seed policy, ranking criteria and tracing; the default reproduces the
        worked example of the patent (FIG. 9).

    Returns
    -------
    SortResult
        ``order`` is a permutation of the node ids; ``seeds`` the first node of
        each component; ``trace`` the ODS after every iteration when
        ``config.trace`` is set.

    Raises
    ------
    ValueError
        If node ids repeat, an edge names a node that does not exist, or a
        bandwidth lies outside (0, 1].

    Examples
    --------
    >>> from model.graph import Edge, Graph, Node
    >>> g = Graph("g", [Node(x) for x in "ABCDF"],
    ...           [Edge("A", "C", bandwidth=0.2), Edge("B", "C", bandwidth=0.2),
    ...            Edge("A", "D", bandwidth=0.9), Edge("D", "B", bandwidth=1.0),
    ...            Edge("D", "F", bandwidth=0.5)])
    >>> sort_nodes(g).order
    ['A', 'D', 'B', 'C', 'F']
    >>> only_bandwidth = SorterConfig(criteria=["bandwidth_gap", "age"])
    >>> sort_nodes(g, only_bandwidth).order
    ['A', 'D', 'B', 'F', 'C']
    >>> step = sort_nodes(g, SorterConfig(trace=True)).trace[1]
    >>> step.popped, step.new_neighbours, step.ods
    ('D', ['B', 'F'], [('B', (1.0, 0.0, 1)), ('F', (1.0, 0.5, 1)), ('C', (1.0, 0.8, 2))])
    """
    config = config or SorterConfig()
    with gc_paused():  # the sort builds a few objects per edge and frees them all at the end
        return _sort(graph, config)


def _sort(graph: Graph, config: SorterConfig) -> SortResult:
    ix = _Indexed(graph)
    if ix.n == 0:
        return SortResult([], [], config.key_names, [] if config.trace else None)
    ranking = _seed_ranking(ix, config)
    if _kernel_applies(config):
        order, seeds = sort_default_keys(*_kernel_inputs(ix, config, ranking))
        by_id = list(map(ix.ids.__getitem__, ix.by_rank))  # node number -> id
        return SortResult(list(map(by_id.__getitem__, order)), [by_id[r] for r in seeds],
                          config.key_names)
    order, seeds, trace = _run(ix, config, ranking)
    ids = ix.ids
    return SortResult([ids[i] for i in order], [ids[i] for i in seeds], config.key_names, trace)


#: Kernel entries are worked out in int64 while they stay below this, else in Python ints.
INT64_ENTRIES_BELOW = 2**62


def _kernel_applies(config: SorterConfig) -> bool:
    """Whether :func:`formulations.sorter.kernel.sort_default_keys` sorts with ``config``:
    the default keys, compared lexicographically, without a trace."""
    return (config.criteria == DEFAULT_CRITERIA and config.combine == "lexicographic"
            and not config.trace)


def _kernel_inputs(ix: _Indexed, config: SorterConfig, ranking: list[int]) -> tuple:
    """The arguments of :func:`~formulations.sorter.kernel.sort_default_keys`.

    Nodes are numbered by id rank. Entries are ``(key1 rank * s1 + gap rank) * span +
    tie`` (s1 gap values, ``span = n * (n + 1)``), in int64 while they fit, else in
    Python ints. A node in the ODS always has a sorted neighbour, so key2 = 1 (no
    sorted neighbour) needs no rank.
    """
    n, rank = ix.n, ix.rank
    nbr, gap_rank, first, mid, fanin, gaps = _kernel_pairs(ix, rank, "i" in config.key1_rules)
    vcd = np.zeros(n)
    vcd[rank] = np.where(np.asarray(ix.vc_count) > 0, config.vc_delta, 0.0)
    k_open, k_closed = 1.0 - vcd, 0.0 - vcd
    k_values = np.unique([k - v for k in (1.0, 0.0) for v in (0.0, config.vc_delta)])
    r_open, r_closed = np.searchsorted(k_values, k_open), np.searchsorted(k_values, k_closed)
    span = n * (n + 1)
    unit = max(gaps, 1) * span
    unseen = len(k_values) * unit  # above every entry
    exact = np.int64 if unseen < INT64_ENTRIES_BELOW else object  # Python ints past int64
    # a few distinct values: lists of shared objects (no 10^5 ints to allocate and reach)
    hi0 = list(map([r * unit for r in range(len(k_values))].__getitem__, r_open.tolist()))
    dk = list(map([r * unit for r in range(len(k_values))].__getitem__,
                  (r_open - r_closed).tolist()))
    adj = gap_rank.astype(exact) * span + nbr.astype(exact)  # span is a multiple of n
    nets = _Nets(ix, config, relabel=rank) if {"ii", "iii"} & set(config.key1_rules) else None
    seeds = rank[np.asarray(ranking, dtype=np.int64)].tolist()
    return (n, seeds, adj.tolist(), first.tolist(), mid.tolist(), hi0, dk, fanin.tolist(), nets,
            unseen)


def _kernel_pairs(ix: _Indexed, rank: np.ndarray, rule_i: bool) -> tuple:
    """Per node, its neighbours (edge direction ignored, self-loops left out) by ``rank``.

    Returns per entry, grouped by node, the neighbour and the rank of key2 between the two
    (``1 -`` the largest bandwidth, the smallest ``1 - bandwidth``: ranking the edges'
    values keeps their float rounding); per node the start of its group and the end of
    its successors watched by rule (i) (those come first); each node's number of distinct
    predecessors; and the number of key2 values. A neighbour is listed once, or twice when
    it is a watched successor that also feeds the node (both entries count the same).
    """
    n, keep = ix.n, ix.src != ix.dst
    src, dst, gap = ix.src, ix.dst, 1.0 - ix.bw
    if not keep.all():
        src, dst, gap = src[keep], dst[keep], gap[keep]
    gap_values = np.unique(gap)
    s, d, r = rank[src], rank[dst], np.searchsorted(gap_values, gap)
    fanin = np.bincount(_distinct(d * n + s) // n, minlength=n)
    watched = fanin[d] >= 2 if rule_i else np.zeros(len(d), dtype=bool)
    # sort by (node, not watched, neighbour, key2 rank): a group's first entry has the min rank
    key = np.concatenate([(s * 2 + ~watched) * n + d, (d * 2 + 1) * n + s])
    r = np.concatenate([r, r])
    values = max(len(gap_values), 1)
    if 2 * n * n * values < INT64_ENTRIES_BELOW:
        packed = np.sort(key * values + r)
        key, r = packed // values, packed % values
    else:
        order = np.lexsort((r, key))
        key, r = key[order], r[order]
    new = np.ones(len(key), dtype=bool)
    new[1:] = key[1:] != key[:-1]
    key, r = key[new], r[new]
    counts = np.bincount(key // n, minlength=2 * n)  # per node: watched, then the others
    first = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(counts[0::2] + counts[1::2], out=first[1:])
    return key % n, r, first, first[:-1] + counts[0::2], fanin, len(gap_values)


def _run(ix: _Indexed, config: SorterConfig, ranking: list[int]):
    """Operations 1020-1080 with the ODS as a lazily updated heap.

    Only nodes whose keys change get a new heap entry: neighbours of the node
    just sorted (bandwidth and count criteria) and nodes whose connection it
    closes (key1). The entry a node had before becomes stale and is skipped
    when it surfaces (``entry_of`` holds each node's live entry).
    """
    state = _SortState(ix, config)
    order: list[int] = []
    seeds: list[int] = []
    trace: list[TraceStep] | None = [] if config.trace else None
    ods: set[int] = set()  # only kept for the trace
    t = 0
    for seed in ranking:  # 1020/1025: the next component
        if state.ins[seed]:
            continue
        seeds.append(seed)
        t = _sort_component(state, seed, t, order, trace, ods)
    return order, seeds, trace


class _SortState:
    """The arrays :func:`_run` updates, unpacked once from the index and the live keys."""

    def __init__(self, ix: _Indexed, config: SorterConfig):
        n = self.n = ix.n
        self.ix = ix
        live = self.live = _Live(ix, config)
        self.off, self.nbr, self.wmax = ix.pairs
        self.wmin = ix.pair_min if live.track_min else self.wmax
        self.idrank, self.make_entry = ix.idrank, live.entry
        self.tie_mul, self.tie_add = live.tie_base()
        self.by_rank = ix.by_rank  # decoding a packed entry: its last digit is the id rank
        self.packed = live.packed
        values = live.values
        self.tie = live.tie
        self.k1, self.gap, self.neg_ins = (values[k] for k in ("closes_connection",
                                                                "bandwidth_gap", "age"))
        self.nsorted, self.maxw, self.minw = (values[k] for k in (
            "sorted_neighbours", "max_bandwidth_to_sorted", "min_bandwidth_to_sorted"))
        self.track_count, self.track_max = live.track_count, live.track_max
        self.track_min = live.track_min
        self.closing = live.track_closing
        self.rule_i = self.closing and "i" in config.key1_rules
        # rule (i) only watches nodes with two or more distinct predecessors
        self.succ_off, self.succ = ix.successors(min_fanin=2) if self.rule_i else ([], [])
        self.pred_left = ix.fanin.tolist() if self.rule_i else []  # unsorted fan-in per node
        closing_nets = self.closing and {"ii", "iii"} & set(config.key1_rules)
        self.nets = _Nets(ix, config) if closing_nets else None
        self.vc_delta = live.vc_delta
        self.closed = [False] * n
        self.ins = [0] * n  # iteration a node entered the ODS; 0 = not yet, -1 = sorted
        self.entry_of: list[Any] = [None] * n  # the live heap entry of each ODS node


def _sort_component(s: _SortState, seed: int, t: int, order: list[int],
                    trace: list[TraceStep] | None, ods: set[int]) -> int:
    """Sort the component of ``seed`` (1030-1070); returns the iteration count so far.

    The default keys without a trace take the kernel instead
    (:mod:`formulations.sorter.kernel`); this loop serves every configuration.
    """
    n, ins, tie, idrank, entry_of = s.n, s.ins, s.tie, s.idrank, s.entry_of
    off, by_rank, packed, tie_mul, tie_add = s.off, s.by_rank, s.packed, s.tie_mul, s.tie_add
    heappop = heapq.heappop
    ins[seed], s.neg_ins[seed] = t + 1, -(t + 1)
    tie[seed] = tie_mul * (t + 1) + tie_add + idrank[seed]
    entry_of[seed] = s.make_entry(seed)
    heap = [entry_of[seed]]  # 1030
    ods.add(seed)
    while heap:  # 1035
        entry = heappop(heap)  # 1040
        cur = by_rank[entry % n] if packed else entry[-1]
        if entry_of[cur] is not entry:
            continue  # stale: re-ranked since
        entry_of[cur] = None
        if trace is not None:
            ods.discard(cur)
        ins[cur] = -1  # 1045-1050 and 1070: the keys below see cur as sorted
        t += 1
        order.append(cur)
        base = tie_mul * t + tie_add
        new: list[int] = []
        a, b = off[cur], off[cur + 1]
        # 1055/1060: new neighbours enter the ODS; nodes whose keys change get
        # a new entry right away (a node closed below gets one more: the
        # later entry wins)
        _update_neighbours(s, heap, a, b, t, base, new)
        if s.closing:
            _close_connections(s, heap, cur)
        if trace is not None:
            ods.update(new)
            trace.append(_trace_step(s.ix, s.live, ods, cur, new, t, ins))
    return t


def _update_neighbours(s: _SortState, heap: list, a: int, b: int, t: int, base: int,
                       new: list[int]) -> None:
    """1055/1060 for any keys: the neighbours ``nbr[a:b]`` of the node just sorted."""
    ins, tie, idrank, neg_ins, entry_of = s.ins, s.tie, s.idrank, s.neg_ins, s.entry_of
    nsorted, maxw, minw, gap, make_entry = s.nsorted, s.maxw, s.minw, s.gap, s.make_entry
    track_count, track_max, track_min = s.track_count, s.track_max, s.track_min
    for j, w, w_low in zip(s.nbr[a:b], s.wmax[a:b], s.wmin[a:b]):
        x = ins[j]
        if x < 0:
            continue
        changed = fresh = not x
        if fresh:
            ins[j], neg_ins[j], tie[j] = t, -t, base + idrank[j]
            new.append(j)
        if track_count:
            nsorted[j] += 1
            changed = True
        if track_max and w > maxw[j]:
            maxw[j] = w
            gap[j] = 1.0 - w
            changed = True
        if track_min and (fresh or w_low < minw[j]):
            minw[j] = w_low
            changed = True
        if changed:
            e = entry_of[j] = make_entry(j)
            heapq.heappush(heap, e)


def _close_connections(s: _SortState, heap: list, cur: int) -> None:
    """Key1 rules (i)-(iii): nodes whose connection ``cur`` closes get key1 = 0."""
    shut: list[int] = []
    if s.rule_i:  # (i): cur may be the last unsorted fan-in of its successors
        pred_left = s.pred_left
        for j in s.succ[s.succ_off[cur]:s.succ_off[cur + 1]]:
            c = pred_left[j] - 1
            pred_left[j] = c
            if not c:
                shut.append(j)
    if s.nets is not None:  # (ii) and (iii), see _Nets
        closed_by_nets(s.nets, cur, shut)
    ins, closed, k1, vc_delta, entry_of = s.ins, s.closed, s.k1, s.vc_delta, s.entry_of
    for j in shut:
        if ins[j] >= 0 and not closed[j]:
            closed[j] = True
            k1[j] = 0.0 - vc_delta[j]
            e = entry_of[j] = s.make_entry(j)
            heapq.heappush(heap, e)


def _trace_step(ix: _Indexed, live: _Live, ods: set[int], cur: int, new: list[int],
                t: int, ins: list[int]) -> TraceStep:
    ids, idrank = ix.ids, ix.idrank
    ranked = sorted((live.true_keys(j, t, ins[j]), ins[j], idrank[j], j) for j in ods)
    new_ids = [ids[j] for j in sorted(new, key=idrank.__getitem__)]
    return TraceStep(t, ids[cur], new_ids, [(ids[r[-1]], r[0]) for r in ranked])


# --------------------------------------------------------------------------
# Literal definitions: the keys of one node, and the reference sorter
# --------------------------------------------------------------------------
class LiteralKeys:
    """The ranking criteria computed straight from their definitions (§3.5-3.6).

    Reads ``graph`` directly (``Graph.nets``, in/out edges) and shares no
    bookkeeping with the fast path, so the two can check each other (the
    literal reference sorter of the tests and benchmarks,
    ``benchmarks/reference_sorter.py``, ranks with it).
    """

    def __init__(self, graph: Graph, config: SorterConfig):
        self.config = config
        ids = graph.node_ids
        self.edges = edges = graph.edges
        # every edge touching the node; a self-loop once
        self.incident = {v: list(graph.out_edges(v))
                            + [i for i in graph.in_edges(v) if edges[i].src != v]
                         for v in ids}
        self.fanin = {v: set(graph.predecessors(v)) - {v} for v in ids}
        self.nets = [net for net in graph.nets if net.fanout >= 2]
        self.vc_nodes = {x for e in edges if e.virtual_channel for x in (e.src, e.dst)}
        self.fanout = {v: max([net.fanout for net in graph.nets if net.driver == v], default=0)
                       for v in ids}

    def other(self, i: int, v: str) -> str:
        e = self.edges[i]
        return e.dst if e.src == v else e.src

    def closes_connection(self, a: str, s: set[str]) -> float:
        rules, k = self.config.key1_rules, 1.0
        if "i" in rules and len(self.fanin[a]) >= 2 and self.fanin[a] <= s:
            k = 0.0
        for net in self.nets:
            if "ii" in rules and net.driver == a and set(net.sinks) <= s:
                k = 0.0
            if ("iii" in rules and a in net.sinks
                    and net.fanout >= self.config.shared_net_min_fanout
                    and net.driver in s and set(net.sinks) - {a} <= s):
                k = 0.0
        return k - (self.config.vc_delta if a in self.vc_nodes else 0.0)

    def value(self, name: str, a: str, s: set[str], age: int) -> float:
        incident, edges = self.incident[a], self.edges
        to_sorted = [edges[i].bandwidth for i in incident if self.other(i, a) in s]
        every = [edges[i].bandwidth for i in incident]
        if name == "closes_connection":
            return self.closes_connection(a, s)
        if name == "bandwidth_gap":
            return 1 - max(to_sorted, default=0.0)
        if name == "sorted_neighbours":
            return len({self.other(i, a) for i in incident} & s)
        if name in ("max_bandwidth", "max_bandwidth_to_sorted"):
            return max(every if name == "max_bandwidth" else to_sorted, default=0.0)
        if name in ("min_bandwidth", "min_bandwidth_to_sorted"):
            return min(every if name == "min_bandwidth" else to_sorted, default=0.0)
        if name == "max_fanout":
            return self.fanout[a]
        if name == "virtual_channels":
            return sum(edges[i].virtual_channel for i in incident)
        return age

    def keys(self, a: str, s: set[str], age: int) -> tuple[float, ...]:
        vals = [_weighted(w, self.value(name, a, s, age)) for name, w in self.config.criteria]
        return _combine(vals, self.config)


def node_keys(graph: Graph, node: str, sorted_nodes: set[str] | list[str], age: int = 1,
              config: SorterConfig | None = None) -> tuple[float, ...]:
    """The ranking keys of ``node`` once ``sorted_nodes`` are in the order.

    A diagnostic: it evaluates the criteria from their definitions, in
    O(E) per call; :func:`sort_nodes` maintains the same values incrementally.

    Parameters
    ----------
    graph : Graph
    node : str
    sorted_nodes : set or list of str
        The nodes already in the ordered sequence (the one just sorted included).
    age : int
        Iterations the node has spent in the ODS (1 in the one it entered).
    config : SorterConfig, optional

    Returns
    -------
    tuple of float
        One value per key of ``config`` (a single one for a weighted sum).

    Examples
    --------
    The key2 example of [0220]: GRAD0 reaches IN0 at bandwidth 1.0 and B0 at 0.7.

    >>> from pathlib import Path
    >>> from model.graphjson import read_graph
    >>> fig9 = read_graph(Path(__file__).resolve().parents[2] / "examples" / "fig9.json")
    >>> g = fig9
    >>> node_keys(g, "GRAD0", {"B0"}), node_keys(g, "GRAD0", {"IN0", "B0"})
    ((1.0, 0.30000000000000004, 1), (0.0, 0.0, 1))
    """
    config = config or SorterConfig()
    if node not in graph:
        raise ValueError(f"graph {graph.name!r}: node {node!r} does not exist")
    return LiteralKeys(graph, config).keys(node, set(sorted_nodes), age)
