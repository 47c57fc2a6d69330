"""The balanced section as placement sees it: stage buffers as PMU units on their edges.

Scope
-----
:func:`materialize_buffers` is the graph rewrite that the balancing decision implies: each
edge's added depth becomes that many ``stage buffer`` units (``unit: pmu``) in series, with
the edges of one multi-sink net sharing one chain. The cut (which asks whether a section
still fits with its buffers), the buffer level and the place-and-route level all see a
balanced section through it.
"""

from __future__ import annotations

from dataclasses import replace

from model.graph import Edge, Graph, Node

__all__ = ["materialize_buffers"]


def materialize_buffers(sub: Graph, added: dict[int, int]) -> tuple[Graph, dict[int, list[int]]]:
    """Insert ``added[e]`` PMU buffer units in series on edge ``e`` of ``sub``.

    Edges of one multi-sink net share their buffer chain (the patent's buffer
    shared by several consumers): the chain hangs off the driver once, as long
    as the deepest sink asks, and every sink taps it after its own number of
    units, so each path gets exactly the depth its balancing chose. What leaves
    one unit (the next unit and the sinks tapping there) is one net. Returns the
    new graph and, per original local edge, the local edges from its source to
    its sink.

    Examples
    --------
    >>> g = Graph("g", [Node("a"), Node("b"), Node("c")],
    ...           [Edge("a", "b", net="n"), Edge("a", "c", net="n")])
    >>> new, chains = materialize_buffers(g, {0: 2, 1: 1})
    >>> [n.id for n in new.nodes][3:], chains
    (['buf[a->n].0', 'buf[a->n].1'], {0: [0, 1, 2], 1: [0, 3]})
    >>> [(e.src, e.dst, e.net) for e in new.edges]
    [('a', 'buf[a->n].0', 'n:buf1'), ('buf[a->n].0', 'buf[a->n].1', 'n:buf2'),
     ('buf[a->n].1', 'b', 'n:buf3'), ('buf[a->n].0', 'c', 'n:buf2')]
    """
    nodes = list(sub.nodes)
    edges: list[Edge] = []
    chains: dict[int, list[int]] = {}
    for net in sub.nets:
        wanted = [i for i in net.edges if added.get(i, 0) > 0]
        for i in net.edges:
            if i not in wanted:
                chains[i] = [len(edges)]
                edges.append(sub.edges[i])
        if not wanted:
            continue
        first = sub.edges[wanted[0]]
        label = first.net if first.net is not None else f"{first.dst}#{wanted[0]}"
        names = [f"buf[{net.driver}->{label}].{k}" for k in range(max(added[i] for i in wanted))]
        nodes += [Node(n, op="stage buffer", unit="pmu", category=sub.node(first.dst).category,
                       attrs={"buffer_of": wanted}) for n in names]
        trunk = []
        for a, b in zip([net.driver] + names, names):
            trunk.append(len(edges))
            edges.append(replace(first, src=a, dst=b, net=f"{label}:buf{len(trunk)}"))
        for i in wanted:             # each sink taps the chain after its own depth
            depth = added[i]
            chains[i] = trunk[:depth] + [len(edges)]
            edges.append(replace(sub.edges[i], src=names[depth - 1], net=f"{label}:buf{depth + 1}"))
    return Graph(sub.name, nodes, edges, dict(sub.attrs)), {i: chains[i] for i in sorted(chains)}
