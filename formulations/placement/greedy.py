"""The sorted-order greedy placement: the warm start and the baseline of every placer.

Scope
-----
:func:`greedy_place` is the claim-level placement of source 000: nodes are assigned one
by one *in the order of the sorter's output*; each node goes to the free site that can
host its unit kind and minimises the bandwidth-weighted switch-hop distance to its
already placed neighbours, plus the site's congestion penalty when a routing failure set
one (so that a re-placement moves off the over-used links); a node with no placed
neighbour goes to the free site nearest the centre of the chip. Ties go to the lower site
index. :func:`place_greedy` is its
registry form, reporting the placement's full cost
(:func:`~formulations.placement.problem.cost_terms`).

Caveats
-------
Parallel edges between two nodes count once here (their bandwidth summed, capped at 1);
the cost it reports counts them all, as every placer's does.
"""

from __future__ import annotations

import numpy as np

from formulations.placement.problem import (UNIT_KINDS, PlacementError, PlacementOutcome,
                                            cost_terms, placement_problem, site_table)
from formulations.solver import SolveSettings
from hardware import RduFabric
from model.graph import Graph

__all__ = ["greedy_place", "place_greedy"]


def greedy_place(graph: Graph, fabric: RduFabric, order: list[str],
                 site_penalty: dict[str, float] | None = None) -> dict[str, str]:
    """Place ``graph``'s nodes in ``order`` on ``fabric``, each on the free site of least
    distance to its placed neighbours plus ``site_penalty`` (site id -> cost); returns
    node -> site id.

    Raises
    ------
    PlacementError
        When a node's unit kind has no free site left.

    Examples
    --------
    >>> from hardware import build_fabric, load_hardware
    >>> from model.graph import Graph, Node, Edge
    >>> fab = build_fabric(load_hardware("tiny"))
    >>> g = Graph("t", [Node("a", unit="pcu"), Node("b", unit="pmu")], [Edge("a", "b")])
    >>> placed = greedy_place(g, fab, ["a", "b"])
    >>> fab.distance(placed["a"], placed["b"])
    0
    """
    sites = site_table(fabric)
    hosts = {unit: np.array([fabric.can_host(s, unit) for s in sites.ids]) for unit in UNIT_KINDS}
    free = np.ones(len(sites.ids), dtype=bool)
    weights = _neighbour_weights(graph)
    penalty = np.array([(site_penalty or {}).get(s, 0.0) for s in sites.ids])
    placed: dict[str, int] = {}
    for node_id in order:
        unit = graph.node(node_id).unit
        candidates = free & hosts[unit]
        if not candidates.any():
            needed = sum(graph.node(n).unit == unit for n in graph.node_ids)
            raise PlacementError(node_id, unit, needed, int(hosts[unit].sum()))
        cost = np.zeros(len(sites.ids))
        for nbr, w in weights[node_id].items():
            if nbr in placed:
                cost += w * sites.dist[placed[nbr]]
        if not any(n in placed for n in weights[node_id]):
            cost = sites.centre.copy()
        cost += penalty
        cost[~candidates] = np.inf
        choice = int(np.argmin(cost))
        placed[node_id] = choice
        free[choice] = False
    return {n: sites.ids[k] for n, k in placed.items()}


def _neighbour_weights(graph: Graph) -> dict[str, dict[str, float]]:
    """Per node, the bandwidth to each neighbour (parallel edges summed, capped at 1)."""
    weights: dict[str, dict[str, float]] = {n: {} for n in graph.node_ids}
    for e in graph.edges:
        if e.src == e.dst:
            continue
        for a, b in ((e.src, e.dst), (e.dst, e.src)):
            weights[a][b] = min(1.0, weights[a].get(b, 0.0) + e.bandwidth)
    return weights


def place_greedy(graph: Graph, fabric: RduFabric, order: list[str], settings: SolveSettings, *,
                 site_penalty: dict[str, float] | None = None) -> PlacementOutcome:
    """The registry form of :func:`greedy_place` (``settings`` are not needed: no solve).

    The objective is the placement's full cost, ``site_penalty`` included.

    Examples
    --------
    >>> from hardware import build_fabric, load_hardware
    >>> from model.graph import Graph, Node, Edge
    >>> g = Graph("t", [Node("a", unit="pcu"), Node("b", unit="pmu")], [Edge("a", "b")])
    >>> out = place_greedy(g, build_fabric(load_hardware("tiny")), ["a", "b"], SolveSettings())
    >>> out.method, out.objective
    ('sorted-order greedy', 0.0)
    """
    placement = greedy_place(graph, fabric, order, site_penalty)
    problem = placement_problem(graph, fabric, site_penalty)
    terms = cost_terms(problem, placement)
    return PlacementOutcome(placement, "sorted-order greedy", sum(terms.values()),
                            extra=dict(terms))
