"""The worked examples of the buffer-balancing patent (source 001) as graphs.

One place for the figures that the doctests of :mod:`formulations.buffers.model` and
:mod:`formulations.buffers.heuristic`, the tests and the simulator's tests use.

Examples
--------
>>> [len(g().edges) for g in (fig11_graph, fig12_graph, fig13_graph, fig14_graph)]
[3, 7, 2, 4]
"""

from __future__ import annotations

from model.graph import Edge, Graph, Node

__all__ = ["fig11_graph", "fig12_graph", "fig13_graph", "fig14_graph"]


def fig11_graph() -> Graph:
    """FIG. 11: S0 feeds S1 and S2, S1 feeds S2 (a two-stage path against a one-stage one)."""
    return Graph("fig11", [Node("S0"), Node("S1"), Node("S2")],
                 [Edge("S0", "S1"), Edge("S1", "S2"), Edge("S0", "S2")])


def fig12_graph() -> Graph:
    """FIG. 12: three paths of depth 5, 3, 4 into two joins sharing path 2."""
    return Graph("fig12", [Node(n) for n in ("L", "P1", "P2", "P3", "J1", "J2")],
                 [Edge("L", "P1"), Edge("L", "P2"), Edge("L", "P3"),
                  Edge("P1", "J1", depth=5), Edge("P2", "J1", depth=3, net="p2"),
                  Edge("P2", "J2", depth=3, net="p2"), Edge("P3", "J2", depth=4)])


def fig13_graph() -> Graph:
    """FIG. 13: two off-chip loads, paths of depth 5 and 3 into one join."""
    return Graph("fig13", [Node("L1"), Node("L2"), Node("J")],
                 [Edge("L1", "J", depth=5), Edge("L2", "J", depth=3)])


def fig14_graph() -> Graph:
    """FIG. 12 / 14 folded: one load feeds buffers of depth 5, 3 (shared by both joins), 4."""
    return Graph("fig14", [Node("L"), Node("J1"), Node("J2")],
                 [Edge("L", "J1", depth=5, net="b1"), Edge("L", "J1", depth=3, net="b2"),
                  Edge("L", "J2", depth=3, net="b2"), Edge("L", "J2", depth=4, net="b3")])
