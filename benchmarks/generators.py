"""Deterministic generators of synthetic dataflow graphs for benchmarks and tests.

Every generator takes a ``seed`` and draws from one ``numpy.random.Generator``,
so the same arguments always give the same :class:`~model.graph.Graph` (same
node order, edge order, weights and nets). All graphs are acyclic (no
loop-carried edges), every edge joins two existing nodes, and every bandwidth
lies in (0, 1] (multiples of 1/1000).

- :func:`random_dag`: an unstructured DAG of any size, built with vectorised
  numpy so that 10^6 nodes and 2·10^6 edges take a few seconds; it has several
  weakly connected components, multi-sink nets and a few virtual channels.
- :func:`layered_dag`: layers of equal width, each node fed by ``fanin``
  nodes of the previous layer (a DNN-like shape).
- :func:`reconvergent_dag`: a chain of fork-join diamonds whose branches have
  unequal lengths, the input stage-buffer balancing is made for.

Caveats: node ids are positional (``v17``, ``L2_5``, ``d3_b1_0``), so two
graphs from different generators may share ids; resource estimates are one
unit per node (``pmu`` for stored tensors, ``pcu`` for operators) unless
``units="any"`` is asked for.
"""

from __future__ import annotations

import numpy as np

from model.graph import Edge, Graph, Node
from model.graphjson import gc_paused

__all__ = ["random_dag", "layered_dag", "reconvergent_dag", "UNIT_MODES"]

#: How node unit kinds are chosen: "mixed" (sources on PMUs, a share of the
#: other nodes on PMUs, the rest on PCUs) or "any" (placement chooses).
UNIT_MODES = ("mixed", "any")

_BYTES_PER_UNIT_BANDWIDTH = 4096


# -- shared helpers -------------------------------------------------------------
def _bandwidths(rng: np.random.Generator, count: int) -> np.ndarray:
    """``count`` bandwidths in (0, 1], multiples of 1/1000."""
    return rng.integers(1, 1001, size=count) / 1000.0


def _units(rng: np.random.Generator, n_nodes: int, has_input: np.ndarray, units: str,
           pmu_fraction: float) -> list[str]:
    """Unit kind per node: stored tensors (no input) and a random share on PMUs."""
    if units not in UNIT_MODES:
        raise ValueError(f'units must be one of {UNIT_MODES}, got "{units}"')
    if units == "any":
        return ["any"] * n_nodes
    on_pmu = ~has_input | (rng.random(n_nodes) < pmu_fraction)
    return np.where(on_pmu, "pmu", "pcu").tolist()


def _node(node_id: str, op: str, kind: str) -> Node:
    """A node with one unit of its kind as the resource estimate (none for "any")."""
    if kind == "any":
        return Node(node_id, op)
    return Node(node_id, op, kind, int(kind == "pcu"), int(kind == "pmu"))


def _nodes(ids: list[str], kinds: list[str]) -> list[Node]:
    """Nodes named ``ids`` asking for ``kinds``, built in one pass."""
    with gc_paused():
        return [_node(i, "op", k) for i, k in zip(ids, kinds)]


def _edges(ids: list[str], src: np.ndarray, dst: np.ndarray, bandwidth: np.ndarray,
           nets: list[str | None], vc: np.ndarray) -> list[Edge]:
    """Edges from index arrays, built in one pass (``bytes`` follows bandwidth)."""
    nbytes = np.rint(bandwidth * _BYTES_PER_UNIT_BANDWIDTH).astype(np.int64).tolist()
    with gc_paused():
        return [Edge(ids[s], ids[d], b, nb, net, v)  # positional: Edge's field order
                for s, d, b, nb, net, v in zip(src.tolist(), dst.tolist(), bandwidth.tolist(),
                                               nbytes, nets, vc.tolist())]


def _net_ids(src: np.ndarray, is_net_source: np.ndarray, prefix: str) -> list[str | None]:
    """Net id per edge: edges leaving a net source share ``<prefix><src>``."""
    flags = is_net_source[src].tolist()
    return [f"{prefix}{s}" if f else None for s, f in zip(src.tolist(), flags)]


# -- random DAG -----------------------------------------------------------------
def _component_starts(n_nodes: int, components: int) -> np.ndarray:
    """First rank of each component (near-equal contiguous blocks of ranks)."""
    components = max(1, min(components, n_nodes // 2 or 1))
    return np.linspace(0, n_nodes, components + 1).astype(np.int64)[:-1]


def _spanning_edges(rng: np.random.Generator, n_nodes: int, starts: np.ndarray
                    ) -> tuple[np.ndarray, np.ndarray]:
    """A random tree per component: each rank gets one parent of a lower rank."""
    ranks = np.arange(n_nodes, dtype=np.int64)
    block_start = starts[np.searchsorted(starts, ranks, side="right") - 1]
    child = ranks[ranks > block_start]
    offset = child - block_start[child]
    parent = block_start[child] + (rng.random(child.size) * offset).astype(np.int64)
    return parent, child


def _extra_edges(rng: np.random.Generator, n_nodes: int, starts: np.ndarray, count: int,
                 taken: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``count`` new rank pairs (low -> high) inside components, distinct from ``taken``."""
    ends = np.append(starts[1:], n_nodes)
    found = np.empty(0, dtype=np.int64)
    for _ in range(64):
        need = count - found.size
        if need <= 0:
            break
        a = rng.integers(0, n_nodes, size=need + need // 8 + 16)
        block = np.searchsorted(starts, a, side="right") - 1
        b = starts[block] + (rng.random(a.size) * (ends[block] - starts[block])).astype(np.int64)
        keep = a != b
        known = np.concatenate([taken, found])
        keys = np.concatenate([known, np.minimum(a, b)[keep] * n_nodes + np.maximum(a, b)[keep]])
        _, first = np.unique(keys, return_index=True)  # first occurrence of each pair
        fresh = np.sort(first[first >= known.size])     # new pairs, in drawing order
        found = np.concatenate([found, keys[fresh][:need]])
    if found.size < count:
        raise ValueError(f"cannot place {count} distinct extra edges; ask for fewer edges")
    return found // n_nodes, found % n_nodes


def random_dag(n_nodes: int, n_edges: int | None = None, seed: int = 0, *,
               components: int | None = None, net_fraction: float = 0.1,
               vc_fraction: float = 0.001, units: str = "mixed", pmu_fraction: float = 0.2,
               name: str | None = None) -> Graph:
    """A random DAG with the requested numbers of nodes and edges.

    Nodes are ranked by a random permutation; every edge goes from a lower to a
    higher rank, so the graph is acyclic while file order is not a topological
    order. Ranks are split into ``components`` blocks; a random spanning tree
    per block keeps each block weakly connected, and the remaining edges are
    drawn uniformly inside blocks without duplicates.

    Parameters
    ----------
    n_nodes : int
        Number of nodes (>= 1).
    n_edges : int, optional
        Number of edges, at least ``n_nodes - components`` (the spanning trees)
        and at most what fits without duplicates; default ``2 * n_nodes``.
    seed : int
        Seed of the numpy generator; same arguments, same graph.
    components : int, optional
        Weakly connected components; default ``min(8, max(1, n_nodes // 100))``.
    net_fraction : float
        Share of nodes whose out-edges form one multi-sink net (shared ``net``
        id ``m<index>``; a net of one edge is a plain edge).
    vc_fraction : float
        Share of edges outside nets marked ``virtual_channel`` (at least one
        when any edge is eligible and the fraction is positive).
    units : {"mixed", "any"}
        "mixed": nodes without inputs and ``pmu_fraction`` of the others ask for
        a PMU, the rest for a PCU; "any": placement chooses.
    pmu_fraction : float
        Share of operator nodes put on PMUs when ``units="mixed"``.
    name : str, optional
        Graph name; default ``random-<n_nodes>-<n_edges>-s<seed>``.

    Returns
    -------
    Graph
        Nodes ``v0 ... v<n-1>`` in index order, edges in generation order.

    Raises
    ------
    ValueError
        If ``n_edges`` is too small for the components or too large to place.

    Examples
    --------
    >>> g = random_dag(50, 120, seed=1, components=3)
    >>> len(g.nodes), len(g.edges)
    (50, 120)
    >>> g == random_dag(50, 120, seed=1, components=3)
    True
    >>> all(0 < e.bandwidth <= 1 for e in g.edges), len(g.topological_order())
    (True, 50)
    """
    n_edges = 2 * n_nodes if n_edges is None else n_edges
    rng = np.random.default_rng(seed)
    starts = _component_starts(n_nodes, components or min(8, max(1, n_nodes // 100)))
    tree_src, tree_dst = _spanning_edges(rng, n_nodes, starts)
    if n_edges < tree_src.size:
        raise ValueError(f"{n_edges} edges cannot connect {n_nodes} nodes in {starts.size} "
                         f"components: ask for at least {tree_src.size} or more components")
    extra_src, extra_dst = _extra_edges(rng, n_nodes, starts, n_edges - tree_src.size,
                                        np.sort(tree_src * n_nodes + tree_dst))
    order = rng.permutation(n_edges)
    node_of_rank = rng.permutation(n_nodes)
    src = node_of_rank[np.concatenate([tree_src, extra_src])[order]]
    dst = node_of_rank[np.concatenate([tree_dst, extra_dst])[order]]
    ids = [f"v{i}" for i in range(n_nodes)]
    has_input = np.zeros(n_nodes, dtype=bool)
    has_input[dst] = True
    is_net_source = rng.random(n_nodes) < net_fraction
    nets = _net_ids(src, is_net_source, "m")
    vc = _virtual_channels(rng, ~is_net_source[src], vc_fraction)
    nodes = _nodes(ids, _units(rng, n_nodes, has_input, units, pmu_fraction))
    edges = _edges(ids, src, dst, _bandwidths(rng, n_edges), nets, vc)
    return Graph(name or f"random-{n_nodes}-{n_edges}-s{seed}", nodes, edges,
                 {"generator": "random_dag", "seed": seed, "components": int(starts.size)})


def _virtual_channels(rng: np.random.Generator, eligible: np.ndarray, fraction: float
                      ) -> np.ndarray:
    """Flags: a ``fraction`` of the eligible edges (at least one) are virtual channels."""
    vc = eligible & (rng.random(eligible.size) < fraction)
    if fraction > 0 and not vc.any() and eligible.any():
        vc[np.flatnonzero(eligible)[0]] = True
    return vc


# -- layered DAG ----------------------------------------------------------------
def layered_dag(layers: int, width: int, fanin: int = 2, seed: int = 0, *,
                net_fraction: float = 0.5, units: str = "mixed", pmu_fraction: float = 0.2,
                name: str | None = None) -> Graph:
    """Layers of ``width`` nodes, each fed by ``fanin`` distinct nodes of the layer before.

    Parameters
    ----------
    layers : int
        Number of layers (>= 1); layer 0 holds the sources.
    width : int
        Nodes per layer (>= 1).
    fanin : int
        Inputs of every node after layer 0, at most ``width``.
    seed : int
        Seed of the numpy generator.
    net_fraction : float
        Share of nodes whose out-edges form one multi-sink net (id ``m<index>``).
    units, pmu_fraction
        As in :func:`random_dag` (layer 0, having no inputs, is on PMUs when mixed).
    name : str, optional
        Graph name; default ``layered-<layers>x<width>-f<fanin>-s<seed>``.

    Returns
    -------
    Graph
        Nodes ``L<layer>_<k>`` layer by layer; ``(layers - 1) * width * fanin`` edges.

    Examples
    --------
    >>> g = layered_dag(4, 5, fanin=2, seed=3)
    >>> len(g.nodes), len(g.edges)
    (20, 30)
    >>> {n.unit for n in g.nodes if n.id.startswith("L0_")}
    {'pmu'}
    """
    if not 1 <= fanin <= width:
        raise ValueError(f"fanin must be between 1 and width ({width}), got {fanin}")
    rng = np.random.default_rng(seed)
    n_nodes = layers * width
    dst = np.repeat(np.arange(width, n_nodes, dtype=np.int64), fanin)
    picks = rng.random((n_nodes - width, width)).argsort(axis=1)[:, :fanin]
    src = (np.repeat(np.arange(layers - 1, dtype=np.int64), width * fanin) * width
           + picks.ravel())
    src, dst = _sorted_by_source(src, dst)
    ids = [f"L{k // width}_{k % width}" for k in range(n_nodes)]
    has_input = np.arange(n_nodes) >= width
    nets = _net_ids(src, rng.random(n_nodes) < net_fraction, "m")
    nodes = _nodes(ids, _units(rng, n_nodes, has_input, units, pmu_fraction))
    edges = _edges(ids, src, dst, _bandwidths(rng, src.size), nets,
                   np.zeros(src.size, dtype=bool))
    return Graph(name or f"layered-{layers}x{width}-f{fanin}-s{seed}", nodes, edges,
                 {"generator": "layered_dag", "seed": seed})


def _sorted_by_source(src: np.ndarray, dst: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Edges ordered by (source, destination), a stable, readable file order."""
    order = np.lexsort((dst, src))
    return src[order], dst[order]


# -- reconvergent (fork-join) DAG -------------------------------------------------
def reconvergent_dag(diamonds: int, branches: int = 2, max_branch_length: int = 3,
                     seed: int = 0, *, units: str = "mixed", name: str | None = None) -> Graph:
    """A chain of fork-join diamonds with branches of unequal lengths.

    Diamond ``d`` forks at node ``f<d>`` into ``branches`` paths of 1 to
    ``max_branch_length`` nodes (``d<d>_b<b>_<k>``) that join at ``f<d+1>``; the
    last join is ``f<diamonds>``. A fork's out-edges form one multi-sink net
    (the same data to every branch), so the graph has ``diamonds`` joins whose
    input paths differ in depth: the case stage-buffer balancing fixes.

    Parameters
    ----------
    diamonds : int
        Number of fork-join diamonds (>= 1).
    branches : int
        Parallel paths per diamond (>= 2).
    max_branch_length : int
        Longest branch, in nodes (>= 1); lengths are drawn in 1..max.
    seed : int
        Seed of the numpy generator.
    units : {"mixed", "any"}
        "mixed": the first fork is a PMU (a stored tensor), the other forks and
        joins PCUs, branch nodes alternate PCU/PMU; "any": placement chooses.
    name : str, optional
        Graph name; default ``reconvergent-<diamonds>x<branches>-s<seed>``.

    Returns
    -------
    Graph

    Examples
    --------
    >>> g = reconvergent_dag(3, branches=2, max_branch_length=3, seed=0)
    >>> [n.id for n in g.nodes][:1], len(g.predecessors("f1"))
    (['f0'], 2)
    >>> sorted({e.net for e in g.edges if e.net})
    ['fork0', 'fork1', 'fork2']
    """
    if branches < 2 or max_branch_length < 1 or diamonds < 1:
        raise ValueError("need diamonds >= 1, branches >= 2 and max_branch_length >= 1")
    if units not in UNIT_MODES:
        raise ValueError(f'units must be one of {UNIT_MODES}, got "{units}"')
    rng = np.random.default_rng(seed)
    lengths = rng.integers(1, max_branch_length + 1, size=(diamonds, branches)).tolist()
    nodes, edges = [_fork_node(0, units)], []
    for d in range(diamonds):
        _diamond(d, lengths[d], units, nodes, edges)
    for edge, bandwidth in zip(edges, _bandwidths(rng, len(edges)).tolist()):
        edge.bandwidth, edge.bytes = bandwidth, round(bandwidth * _BYTES_PER_UNIT_BANDWIDTH)
    return Graph(name or f"reconvergent-{diamonds}x{branches}-s{seed}", nodes, edges,
                 {"generator": "reconvergent_dag", "seed": seed})


def _fork_node(d: int, units: str) -> Node:
    kind = "any" if units == "any" else ("pmu" if d == 0 else "pcu")
    return _node(f"f{d}", "fork" if d == 0 else "join", kind)


def _diamond(d: int, lengths: list[int], units: str, nodes: list[Node], edges: list[Edge]) -> None:
    """Append the branch nodes of diamond ``d``, its join ``f<d+1>`` and their edges."""
    fork, join = f"f{d}", f"f{d + 1}"
    for b, length in enumerate(lengths):
        prev, net = fork, f"fork{d}"
        for k in range(length):
            kind = "any" if units == "any" else ("pcu" if k % 2 == 0 else "pmu")
            node = _node(f"d{d}_b{b}_{k}", "branch", kind)
            nodes.append(node)
            edges.append(Edge(prev, node.id, net=net))
            prev, net = node.id, None
        edges.append(Edge(prev, join))
    nodes.append(_fork_node(d + 1, units))
