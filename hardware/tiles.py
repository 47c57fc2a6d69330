"""Link graphs of tiled targets: Streaming Engine tiles and CGRA PEs.

Scope: :func:`build_tile_graph` turns a
:class:`~hardware.description.StreamingEngineSpec` or
:class:`~hardware.description.CgraSpec` into a :class:`networkx.DiGraph` whose
nodes are tiles (``T{t}``) or PEs (``PE{row}_{col}``) and whose edges are the
direct links, each with its ``latency`` in cycles.

Caveats: only direct links are modelled. Source 004 says nothing about moving a
value more than two tiles along the synchronous fabric (relaying through tiles
or the asynchronous fabric); a modulo scheduler that allows relays must model
the slots they take. A tile's own feedback path (latency 0 extra, assumed) is
not an edge. CGRA link latency 1 is an assumption.
"""

from __future__ import annotations

import networkx as nx

from hardware.description import CgraSpec, StreamingEngineSpec

__all__ = ["build_tile_graph", "pe_id", "tile_id"]



def tile_id(tile: int) -> str:
    """Node id of Streaming Engine tile ``tile`` (``"T3"``)."""
    return f"T{tile}"


def pe_id(row: int, col: int) -> str:
    """Node id of CGRA PE ``(row, col)`` (``"PE1_2"``)."""
    return f"PE{row}_{col}"


def build_tile_graph(spec: StreamingEngineSpec | CgraSpec) -> nx.DiGraph:
    """The directed link graph of a Streaming Engine or a CGRA.

    Parameters
    ----------
    spec : StreamingEngineSpec or CgraSpec

    Returns
    -------
    networkx.DiGraph
        Nodes carry ``kind`` (``"tile"`` or ``"pe"``), ``pos`` ``(x, y)`` and their
        index (``tile``, or ``row`` and ``col``); edges carry ``id`` (``"a->b"``),
        ``kind`` (``"sf"``, ``"mesh"``, ``"diagonal"``) and ``latency`` (cycles).

    Raises
    ------
    TypeError
        For an RDU spec (use :func:`hardware.fabric.build_fabric`).

    Examples
    --------
    >>> from hardware import build_tile_graph, load_hardware
    >>> g = build_tile_graph(load_hardware("se16"))
    >>> g.number_of_nodes(), g.number_of_edges(), g.edges["T3", "T5"]["latency"]
    (16, 58, 2)
    >>> sorted(build_tile_graph(load_hardware("cgra4x4")).successors("PE0_0"))
    ['PE0_1', 'PE1_0']
    """
    if isinstance(spec, StreamingEngineSpec):
        return _se_graph(spec)
    if isinstance(spec, CgraSpec):
        return _cgra_graph(spec)
    raise TypeError(f"build_tile_graph needs a Streaming Engine or CGRA spec, got "
                    f"{type(spec).__name__} (use hardware.build_fabric for an RDU)")


def _se_graph(spec: StreamingEngineSpec) -> nx.DiGraph:
    g = nx.DiGraph(name=spec.name)
    g.add_nodes_from((tile_id(t), {"kind": "tile", "tile": t, "pos": (t + 0.5, 0.5)})
                     for t in range(spec.tiles))
    for t in range(spec.tiles):
        for other, latency in spec.neighbours(t):
            a, b = tile_id(t), tile_id(other)
            g.add_edge(a, b, id=f"{a}->{b}", kind="sf", latency=latency)
    return g


def _cgra_graph(spec: CgraSpec) -> nx.DiGraph:
    g = nx.DiGraph(name=spec.name)
    g.add_nodes_from((pe_id(r, c), {"kind": "pe", "row": r, "col": c, "pos": (c + 0.5, r + 0.5)})
                     for r in range(spec.rows) for c in range(spec.cols))
    for r in range(spec.rows):
        for c in range(spec.cols):
            for nr, nc in spec.neighbours_of(r, c):
                kind = "mesh" if abs(nr - r) + abs(nc - c) == 1 else (
                    "diagonal" if abs(nr - r) == abs(nc - c) == 1 else spec.neighbours)
                a, b = pe_id(r, c), pe_id(nr, nc)
                g.add_edge(a, b, id=f"{a}->{b}", kind=kind, latency=1)
    return g
