"""The congestion term of the placement cost: demand per switch-mesh cut.

Scope
-----
A *cut* is one line of the switch mesh: the line between switch row ``c`` and
``c + 1`` (axis 0) or between switch column ``c`` and ``c + 1`` (axis 1). A node
pair crosses the cut when one node's switch rectangle lies wholly on one side and
the other's wholly on the other side; the switch-hop distance of the pair is then
exactly the number of cuts it crosses, so wirelength = sum over cuts of crossings.

* demand of a cut = the node pairs crossing it (a net counted once per sink, as in
  the wirelength). Demand is counted in *channels*, not in bandwidth: the router
  gives every net one channel of a link whatever its bandwidth, so a cut crossed by
  a hundred nets of bandwidth 0.01 is as full as one crossed by a hundred nets of
  bandwidth 1;
* capacity of a cut = the channels of the net's network (vector) on all
  switch-to-switch links crossing it, both directions, times ``cut_share``;
* congestion = ``weight * sum over cuts of max(0, demand - capacity)``, with
  ``weight`` = :data:`CONGESTION_WEIGHT` times the mean pair bandwidth, so one
  channel of excess costs about as much as one hop of an average pair and the
  wirelength stays the main term.

Caveats
-------
The estimate ignores that a route may detour; ``cut_share`` < 1 keeps headroom.
On the benchmark sections the cuts are rarely full, and then the term is 0 and
costs nothing: the models and the annealer skip a cut whose demand cannot
exceed its capacity.
"""

from __future__ import annotations

import numpy as np

from hardware import RduFabric

__all__ = ["CONGESTION_WEIGHT", "mesh_cuts", "crossed_cuts", "cut_demand", "congestion_cost"]

#: One channel of excess demand on a cut costs this many mean pair bandwidths.
CONGESTION_WEIGHT = 1.0


def mesh_cuts(fabric: RduFabric, network: str = "vector", cut_share: float = 1.0) -> np.ndarray:
    """Rows ``(axis, line, capacity)``: every cut line of the switch mesh and its channels.

    Examples
    --------
    >>> from hardware import build_fabric, load_hardware
    >>> cuts = mesh_cuts(build_fabric(load_hardware("tiny")))
    >>> len(cuts), cuts[0].tolist()
    (8, [0, 0, 20])
    """
    capacity: dict[tuple[int, int], float] = {}
    for u, v, data in fabric.graph.edges(data=True):
        if not (fabric.is_switch(u) and fabric.is_switch(v)):
            continue
        (cu, ru), (cv, rv) = fabric.graph.nodes[u]["pos"], fabric.graph.nodes[v]["pos"]
        channels = data["capacity"].get(network, 0)
        if int(ru) != int(rv):
            key = (0, min(int(ru), int(rv)))
        elif int(cu) != int(cv):
            key = (1, min(int(cu), int(cv)))
        else:
            continue
        capacity[key] = capacity.get(key, 0) + channels
    rows = [(axis, line, int(cap * cut_share)) for (axis, line), cap in sorted(capacity.items())]
    return np.array(rows, dtype=np.int64).reshape(-1, 3)


def crossed_cuts(rect: np.ndarray, cut_index: dict[tuple[int, int], int], s: int, t: int
                 ) -> list[int]:
    """Indices of the cuts a pair on sites ``s`` and ``t`` crosses (``rect`` rows
    ``(row_lo, row_hi, col_lo, col_hi)``)."""
    out = []
    for axis, (lo, hi) in enumerate(((0, 1), (2, 3))):
        first, last = _span(rect[s, lo], rect[s, hi], rect[t, lo], rect[t, hi])
        out.extend(cut_index[(axis, c)] for c in range(first, last) if (axis, c) in cut_index)
    return out


def _span(lo_a, hi_a, lo_b, hi_b) -> tuple[int, int]:
    """Lines ``c`` in ``[first, last)`` lie between the two intervals (empty if they touch)."""
    if hi_a < lo_b:
        return int(hi_a), int(lo_b)
    if hi_b < lo_a:
        return int(hi_b), int(lo_a)
    return 0, 0


def cut_demand(problem, index: dict[str, int]) -> np.ndarray:
    """Pairs crossing each cut of ``problem.cuts`` for the placement ``index`` (node -> site)."""
    demand = np.zeros(len(problem.cuts), dtype=np.int64)
    if not problem.pairs:
        return demand
    a = np.array([index[p[0]] for p in problem.pairs])
    b = np.array([index[p[1]] for p in problem.pairs])
    for axis, (lo, hi) in enumerate(((0, 1), (2, 3))):
        lo_, hi_ = problem.rect[:, lo], problem.rect[:, hi]
        below, above = hi_[a] < lo_[b], hi_[b] < lo_[a]
        start = np.where(below, hi_[a], np.where(above, hi_[b], 0))
        end = np.where(below, lo_[b], np.where(above, lo_[a], 0))
        lines = int(hi_.max()) + 1
        per_line = np.cumsum(np.bincount(start, minlength=lines + 1)
                             - np.bincount(end, minlength=lines + 1))[:lines]
        for line in range(lines):
            k = problem.cut_index.get((axis, line))
            if k is not None:
                demand[k] += per_line[line]
    return demand


def congestion_cost(problem, index: dict[str, int]) -> float:
    """``problem.congestion_weight`` times the summed excess of demand over capacity."""
    if not problem.congestion_active:
        return 0.0
    excess = np.maximum(0, cut_demand(problem, index) - problem.cuts[:, 2])
    return float(problem.congestion_weight * excess.sum())
