"""Resource estimates: the PCUs and PMUs each node of an RDU graph needs.

Source 003 leaves the MAC's resource estimation model open (digest §7); this is
the project's, applied once before the section cut and realised after it:

- a node whose graph.json gives ``pcu`` or ``pmu`` keeps those numbers;
- a stored tensor (``unit = "pmu"``) needs ``ceil(state bytes / PMU bytes)``
  PMUs, at least one and at most :func:`tile_pmus` (a tensor larger than that
  is tiled: its tiles stream from DRAM through those PMUs, as an RDU compiler
  tiles any tensor that does not fit). State bytes are ``attrs.state_bytes``
  (the MSR DNN ``size``), else the largest bytes on one of its out-edges;
- an operator (``unit = "pcu"``) needs one PCU (PAR factor 1): its output
  streams through the stage buffers, which the buffer level sizes. An operator
  with ``flops`` (the ONNX importer counts them) gets a PAR factor from the
  *stage-time rule* (:func:`par_factor`): its stage time on the target is the
  cycles its widest stream (the largest ``bytes`` on one of its in- or
  out-edges) takes through one vector channel (``spec.link_rate("vector")``
  bytes per cycle); when its FLOPs exceed what one PCU does in that time
  (``spec.flops_per_pcu_cycle`` per cycle) it gets
  ``ceil(flops / (flops_per_pcu_cycle * stage cycles))`` PCUs, at most
  :func:`tile_pcus`, so that no operator computes slower than its data arrives;
- a node of unit ``"any"`` needs one unit of either kind.

The cutter plans sections with these numbers times the section's scale factor;
:func:`materialize_banks` turns a node's units beyond its own site into units
of the section (PMU banks of a tiled tensor, PCU lanes of a parallel operator)
so that placement uses what the cutter planned.
"""

from __future__ import annotations

import math

from model.graph import Edge, Graph, Node

__all__ = ["tile_pmus", "tile_pcus", "state_bytes", "node_units", "par_factor", "stage_cycles",
           "estimate_units", "materialize_banks"]

#: A tensor may take at most this share of a section's PMUs before it is tiled.
TILE_SHARE = 16


def tile_pmus(spec) -> int:
    """PMUs one tensor may occupy on ``spec``: a ``1/TILE_SHARE`` share of the PMUs.

    Examples
    --------
    >>> from hardware import load_hardware
    >>> tile_pmus(load_hardware("plasticine")), tile_pmus(load_hardware("sn10"))
    (4, 40)
    """
    return max(1, spec.pmu_count // TILE_SHARE)


def tile_pcus(spec) -> int:
    """PCUs one operator may occupy on ``spec`` (its largest PAR factor): a
    ``1/TILE_SHARE`` share of the PCUs, as for a tensor's PMUs.

    Examples
    --------
    >>> from hardware import load_hardware
    >>> tile_pcus(load_hardware("plasticine")), tile_pcus(load_hardware("sn10"))
    (4, 40)
    """
    return max(1, spec.pcu_count // TILE_SHARE)


def stage_cycles(graph: Graph, node: Node, spec) -> float:
    """The node's stage time on ``spec``: cycles its widest stream takes on one vector channel.

    The widest stream is the largest ``bytes`` on one of its in- or out-edges (an edge
    without ``bytes`` carries one flit); at least one cycle.
    """
    rate = spec.link_rate("vector")
    edges = [graph.edges[i] for i in (*graph.in_edges(node.id), *graph.out_edges(node.id))]
    widest = max((e.bytes if e.bytes is not None else e.bandwidth * rate for e in edges),
                 default=0.0)
    return max(1.0, widest / rate)


def par_factor(graph: Graph, node: Node, spec, max_pcus: int) -> int:
    """PCUs an operator needs so that it computes at the rate its data streams in and out.

    ``ceil(flops / (spec.flops_per_pcu_cycle * stage_cycles))``, from 1 to ``max_pcus``;
    1 for a node without ``flops``.

    Examples
    --------
    A 3x3 convolution, 64 to 64 channels on 56x56 (231 MFLOPs, 784 KiB in and out), and
    a fully connected layer that streams 8 MB of weights for 4 MFLOPs:

    >>> from hardware import load_hardware
    >>> act = 4 * 64 * 56 * 56
    >>> g = Graph("g", [Node("x"), Node("conv", unit="pcu", flops=2 * 64 * 56 * 56 * 64 * 9),
    ...                 Node("w", unit="pmu"), Node("fc", unit="pcu", flops=2 * 2048 * 1000)],
    ...           [Edge("x", "conv", bytes=act), Edge("w", "fc", bytes=4 * 2048 * 1000)])
    >>> spec = load_hardware("sn10")      # 384 FLOPs per PCU cycle, 64 bytes per cycle
    >>> stage_cycles(g, g.node("conv"), spec), par_factor(g, g.node("conv"), spec, 64)
    (12544.0, 48)
    >>> par_factor(g, g.node("conv"), spec, 40), par_factor(g, g.node("fc"), spec, 40)
    (40, 1)
    """
    if not node.flops:
        return 1
    work = node.flops / (spec.flops_per_pcu_cycle * stage_cycles(graph, node, spec))
    return int(min(max(1, math.ceil(work - 1e-9)), max(1, max_pcus)))


def state_bytes(graph: Graph, node: Node) -> float:
    """Bytes a node keeps: ``attrs.state_bytes``, else its largest out-edge's bytes."""
    given = node.attrs.get("state_bytes")
    if given is not None:
        return float(given)
    return max((graph.edges[i].bytes or 0.0 for i in graph.out_edges(node.id)), default=0.0)


def node_units(graph: Graph, node: Node, pmu_bytes: int,
               max_pmus: int) -> tuple[float, float] | None:
    """``(pcu, pmu)`` a node needs, or None for a node of unit "any" without estimates.

    Examples
    --------
    >>> g = Graph("g", [Node("w", unit="pmu", attrs={"state_bytes": 600_000}),
    ...                 Node("op", unit="pcu")],
    ...           [Edge("w", "op")])
    >>> node_units(g, g.node("w"), 262144, 4), node_units(g, g.node("op"), 262144, 4)
    ((0.0, 3.0), (1.0, 0.0))
    """
    if node.pcu is not None or node.pmu is not None:
        return float(node.pcu or 0), float(node.pmu or 0)
    if node.unit == "pmu":
        banks = math.ceil(state_bytes(graph, node) / pmu_bytes) if pmu_bytes else 1
        return 0.0, float(min(max(1, banks), max_pmus))
    if node.unit == "pcu":
        return 1.0, 0.0
    return None


def estimate_units(graph: Graph, spec, max_pmus: int | None = None,
                   max_pcus: int | None = None) -> Graph:
    """A copy of ``graph`` whose nodes carry their ``pcu``/``pmu`` estimates.

    Parameters
    ----------
    graph : the graph; nodes with given estimates keep them.
    spec : the RDU hardware (``pmu_bytes``, ``pmu_count``, ``pcu_count``,
        ``flops_per_pcu_cycle``, ``link_rate``).
    max_pmus : PMUs per tensor before it is tiled (default :func:`tile_pmus`).
    max_pcus : the largest PAR factor of an operator (default :func:`tile_pcus`).
    """
    limit = max_pmus or tile_pmus(spec)
    par_limit = max_pcus or tile_pcus(spec)
    nodes = []
    for node in graph.nodes:
        units = node_units(graph, node, spec.pmu_bytes, limit)
        if units is not None and node.unit == "pcu" and node.pcu is None and node.flops:
            units = (float(par_factor(graph, node, spec, par_limit)), units[1])
        nodes.append(node if units is None else node.with_units(*units))
    return graph.with_nodes(nodes)


def materialize_banks(graph: Graph) -> Graph:
    """Add the units each node needs beyond its own site as nodes of the section.

    A node of unit ``pmu`` with ``pmu = k`` gets ``k - 1`` PMU banks that
    stream their slices into the node along a chain (bank 2 -> bank 1 ->
    node); a node of unit ``pcu`` with ``pcu = k`` gets ``k - 1`` PCU lanes fed
    along a chain from the node (likewise PMUs of a PCU node and PCUs of a PMU
    node). A chain gives every unit one link in and one out, where a star would
    crowd the node's switches. Each link carries the node's widest out-edge, so
    placement keeps banks and lanes close.

    Examples
    --------
    >>> g = Graph("g", [Node("w", unit="pmu", pmu=3), Node("op", unit="pcu")],
    ...           [Edge("w", "op", bandwidth=0.5)])
    >>> new = materialize_banks(g)
    >>> [n.id for n in new.nodes], [(e.src, e.dst) for e in new.edges]
    (['w', 'op', 'w#pmu1', 'w#pmu2'], [('w', 'op'), ('w#pmu1', 'w'), ('w#pmu2', 'w#pmu1')])
    """
    nodes, edges = list(graph.nodes), list(graph.edges)
    for node in graph.nodes:
        own = _own_kind(node)
        for kind in ("pcu", "pmu"):
            wanted = math.ceil(getattr(node, kind) or 0) - (own == kind)
            previous = node.id
            for k in range(1, wanted + 1):
                extra = Node(f"{node.id}#{kind}{k}", op="pmu bank" if kind == "pmu" else "pcu lane",
                             unit=kind, category=node.category, attrs={"unit_of": node.id})
                nodes.append(extra)
                edges.append(_bank_edge(graph, node, previous, extra))
                previous = extra.id
    if len(nodes) == len(graph.nodes):
        return graph
    return Graph(graph.name, nodes, edges, dict(graph.attrs), dict(graph.extra))


def _own_kind(node: Node) -> str | None:
    """The kind of site the node itself takes (for "any": its larger need)."""
    if node.unit in ("pcu", "pmu") or (node.pcu is None and node.pmu is None):
        return node.unit
    return "pcu" if (node.pcu or 0) >= (node.pmu or 0) else "pmu"


def _bank_edge(graph: Graph, node: Node, previous: str, extra: Node) -> Edge:
    """The chain link between ``previous`` and ``extra``: banks feed toward the node."""
    widest = max((graph.edges[i] for i in graph.out_edges(node.id)),
                 key=lambda e: e.bandwidth, default=Edge(node.id, node.id))
    src, dst = (extra.id, previous) if extra.unit == "pmu" else (previous, extra.id)
    return Edge(src, dst, bandwidth=widest.bandwidth, bytes=widest.bytes,
                attrs={"unit_of": node.id})
