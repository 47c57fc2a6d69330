"""Example graphs for the priority-queue sorter (source 000).

The FIG. 9 operation unit graph of the patent (US 2025/0258794 A1) as the
source digest reconstructs it (§6.1: 18 nodes, 17 weighted edges, the
multi-sink nets NET_A, NET_B and NET_C), and the small derived graphs of §6.5.
The edge weights are not printed in the patent; they are the values that
reproduce every key the text states, so tests and benchmarks can rely on them.

Examples
--------
>>> g = fig9_graph()
>>> len(g.nodes), len(g.edges), sorted(n.id for n in g.nets if n.fanout > 1)
(18, 17, ['NET_A', 'NET_B', 'NET_C'])
"""

from __future__ import annotations

from model.graph import Edge, Graph, Node

__all__ = ["FIG9_ORDER", "fig9_graph", "fanin_example_graph", "two_component_graph"]

#: The order FIG. 9 must sort to (the patent's final list [0302] drops GRAD1
#: by mistake; the step-by-step text puts it at position 7).
FIG9_ORDER = (
    "IN0 GRAD0 LOSS0 B0 IN1 LOSS1 GRAD1 IN2 GRAD2 LOSS2 B2 B1 N6 N5 N4 N3 N2 N1"
).split()

# (src, dst, bandwidth, net) -- digest §6.1, in the table's order.
_FIG9_EDGES = [
    ("IN0", "GRAD0", 1.0, "NET_A"),
    ("IN0", "LOSS0", 0.5, "NET_A"),
    ("IN0", "N1", 0.1, None),
    ("B0", "GRAD0", 0.7, None),
    ("GRAD0", "N2", 0.1, None),
    ("LOSS0", "IN1", 0.5, None),
    ("IN1", "GRAD1", 0.5, "NET_B"),
    ("IN1", "LOSS1", 1.0, "NET_B"),
    ("IN1", "N3", 0.1, None),
    ("B1", "GRAD1", 0.7, None),
    ("GRAD1", "N4", 0.1, None),
    ("LOSS1", "IN2", 1.0, None),
    ("IN2", "GRAD2", 1.0, "NET_C"),
    ("IN2", "LOSS2", 0.05, "NET_C"),
    ("IN2", "N5", 0.1, None),
    ("B2", "GRAD2", 0.7, None),
    ("GRAD2", "N6", 0.1, None),
]

# Nodes in the order of the figure's reference numerals (911-916, 920-923, 930-937).
_FIG9_NODES = [
    ("N1", "out"), ("N2", "out"), ("N3", "out"), ("N4", "out"), ("N5", "out"), ("N6", "out"),
    ("IN0", "in"), ("B0", "in"), ("B1", "in"), ("B2", "in"),
    ("GRAD0", "grad"), ("LOSS0", "loss"), ("IN1", "in"), ("GRAD1", "grad"),
    ("LOSS1", "loss"), ("IN2", "in"), ("GRAD2", "grad"), ("LOSS2", "loss"),
]


def fig9_graph() -> Graph:
    """The FIG. 7/9 graph of source 000 with its 17 weighted edges and 3 nets.

    Returns
    -------
    Graph
        Nodes in reference-numeral order (N1 ... N6, IN0, B0 ... B2, GRAD0 ...
        LOSS2); GRAD0, GRAD1 and GRAD2 ask for a PCU ([0185]).

    Examples
    --------
    >>> g = fig9_graph()
    >>> g.successors("IN0")
    ['GRAD0', 'LOSS0', 'N1']
    """
    nodes = [Node(name, op=op, unit="pcu" if op == "grad" else "any") for name, op in _FIG9_NODES]
    edges = [Edge(s, d, bandwidth=w, net=net) for s, d, w, net in _FIG9_EDGES]
    return Graph("fig9", nodes, edges)


def fanin_example_graph(virtual_channel: bool = False) -> Graph:
    """The derived graph T-K1-fanin / T-VC of digest §6.5.

    A->C 0.2, B->C 0.2, A->D 0.9, D->B 1.0, D->F 0.5. With the default keys it
    sorts to ``A, D, B, C, F`` (rule (i) closes C's fan-in); with
    ``virtual_channel=True`` the edge D->F is a virtual channel without
    end-to-end control and the order becomes ``A, D, F, B, C``.

    Examples
    --------
    >>> [(e.src, e.dst) for e in fanin_example_graph().edges][:2]
    [('A', 'C'), ('B', 'C')]
    """
    nodes = [Node(x) for x in "ABCDF"]
    edges = [
        Edge("A", "C", bandwidth=0.2),
        Edge("B", "C", bandwidth=0.2),
        Edge("A", "D", bandwidth=0.9),
        Edge("D", "B", bandwidth=1.0),
        Edge("D", "F", bandwidth=0.5, virtual_channel=virtual_channel),
    ]
    return Graph("fanin_example", nodes, edges)


def two_component_graph() -> Graph:
    """FIG. 9 plus a disjoint chain X->Y (0.4), Y->Z (0.9): digest §6.5 T-components.

    Examples
    --------
    >>> len(two_component_graph())
    21
    """
    g = fig9_graph()
    nodes = g.nodes + [Node("X"), Node("Y"), Node("Z")]
    edges = g.edges + [Edge("X", "Y", bandwidth=0.4), Edge("Y", "Z", bandwidth=0.9)]
    return Graph("fig9_plus_chain", nodes, edges)
