"""Placement of a section's nodes onto unit sites.

This module holds the sorted-order greedy placer: the claim-level placement of
source 000 (nodes assigned one by one *in the order of the sorter's output*),
the warm start and baseline of the exact placement model (issue 5).

Each node, in order, goes to the free site that can host its unit kind and
minimises the bandwidth-weighted switch-hop distance to its already placed
neighbours (a net counted once per sink, loop-carried edges included). A node
with no placed neighbour goes to the free site nearest the centre of the
chip, so a new connected component grows where there is room. Ties go to the
lower site index (deterministic).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from model.graph import Graph

__all__ = ["PlacementError", "PlacementOutcome", "PLACERS", "greedy_place", "place_greedy",
           "placement_cost"]


class PlacementError(Exception):
    """No free site can host a node; ``unit`` names the kind that ran out."""

    def __init__(self, node: str, unit: str, needed: int, available: int):
        self.node, self.unit, self.needed, self.available = node, unit, needed, available
        super().__init__(f'no free {unit.upper()} site for node "{node}": the section needs '
                         f"{needed} {unit.upper()} sites, the chip has {available}")


@dataclass
class PlacementOutcome:
    """One placer's answer: node -> site id, and how good it is.

    ``objective`` is the bandwidth-weighted switch-hop distance
    (:func:`placement_cost`) unless the placer says otherwise in ``extra``;
    ``bound`` is a proven lower bound when a model gives one.
    """

    placement: dict[str, str]
    method: str
    objective: float
    bound: float | None = None
    status: str = "FEASIBLE"
    backend: str | None = None
    extra: dict = field(default_factory=dict)


@dataclass(frozen=True)
class _Sites:
    ids: list[str]
    index: dict[str, int]
    dist: np.ndarray          # switch hops between sites
    centre: np.ndarray        # hops from the chip's centre, for seeding


def _sites(fabric) -> _Sites:
    ids = [s.id for s in fabric.sites]
    dist = fabric.distance_matrix(ids).astype(float)
    xy = np.array([(fabric.site(s).x, fabric.site(s).y) for s in ids])
    centre = np.abs(xy - xy.mean(axis=0)).sum(axis=1)
    return _Sites(ids, {s: k for k, s in enumerate(ids)}, dist, centre)


def _neighbour_weights(graph: Graph) -> dict[str, dict[str, float]]:
    """Per node, the bandwidth to each neighbour (parallel edges summed, capped at 1)."""
    weights: dict[str, dict[str, float]] = {n: {} for n in graph.node_ids}
    for e in graph.edges:
        if e.src == e.dst:
            continue
        for a, b in ((e.src, e.dst), (e.dst, e.src)):
            weights[a][b] = min(1.0, weights[a].get(b, 0.0) + e.bandwidth)
    return weights


def greedy_place(graph: Graph, fabric, order: list[str]) -> dict[str, str]:
    """Place ``graph``'s nodes in ``order`` on ``fabric``; returns node -> site id.

    Raises
    ------
    PlacementError
        When a node's unit kind has no free site left.
    """
    sites = _sites(fabric)
    hosts = {unit: np.array([fabric.can_host(s, unit) for s in sites.ids])
             for unit in ("pcu", "pmu", "agcu", "any")}
    free = np.ones(len(sites.ids), dtype=bool)
    weights = _neighbour_weights(graph)
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
        cost[~candidates] = np.inf
        choice = int(np.argmin(cost))
        placed[node_id] = choice
        free[choice] = False
    return {n: sites.ids[k] for n, k in placed.items()}


def placement_cost(graph: Graph, fabric, placement: dict[str, str]) -> float:
    """Bandwidth-weighted switch-hop distance summed over all edges."""
    sites = _sites(fabric)
    return float(sum(e.bandwidth * sites.dist[sites.index[placement[e.src]],
                                              sites.index[placement[e.dst]]]
                     for e in graph.edges))


def place_greedy(graph: Graph, fabric, order: list[str], **_options) -> PlacementOutcome:
    """The registry form of :func:`greedy_place` (solver options are ignored)."""
    placement = greedy_place(graph, fabric, order)
    return PlacementOutcome(placement, "sorted-order greedy",
                            placement_cost(graph, fabric, placement))


#: Placers by name, for ``--placer``: ``f(graph, fabric, order, *, backend, time_limit,
#: seed, export_dir) -> PlacementOutcome``; they raise PlacementError when nothing fits.
PLACERS: dict[str, Callable[..., PlacementOutcome]] = {"greedy": place_greedy}
