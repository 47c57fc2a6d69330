"""The placement problem of one section: its data, its cost, and what a placer returns.

Scope
-----
* :class:`SiteTable` / :func:`site_table` -- the chip's unit sites in a fixed order, the
  switch-hop distance between every two of them, and each one's distance from the centre.
* :class:`PlacementProblem` / :func:`placement_problem` -- the data every placer and model
  reads: the nodes and their unit kinds, the sites that can host each kind, every site's
  switch rectangle, node pairs weighted by summed bandwidth (a net counted once per sink),
  the switch-mesh cuts with their channels (:mod:`formulations.placement.congestion`) and
  the routing feedback's per-site penalty.
* :func:`problem_cost` / :func:`cost_terms` -- the one cost all placers are compared on:
  weighted switch-hop distance + site penalty + cut congestion; :func:`placement_cost`
  the plain bandwidth-weighted distance over the edges of a graph.
* :func:`check_capacity` -- the user-facing :class:`PlacementError` when a unit kind has
  fewer sites than the section has nodes of that kind.
* :class:`PlacementOutcome` -- one placer's answer.

Caveats
-------
Inside the models weights are integers (:data:`WEIGHT_SCALE`,
:meth:`PlacementProblem.quantum_of`); the costs here are always the true ones.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

from formulations.placement.congestion import CONGESTION_WEIGHT, congestion_cost, mesh_cuts
from hardware import RduFabric
from model.graph import Graph

__all__ = ["PlacementError", "PlacementOutcome", "SiteTable", "site_table", "PlacementProblem",
           "placement_problem", "problem_cost", "cost_terms", "placement_cost",
           "check_capacity", "WEIGHT_SCALE", "UNIT_KINDS"]

#: Inside the models, weights are integers: the heaviest cost a model sees weighs this much
#: (CP-SAT needs integers; the msr-dnn bandwidths span 1e-6..1, so a coarser scale would
#: merge them: at 1000 every pair below 1e-3 looked alike and LNS windows stalled).
WEIGHT_SCALE = 10**6
#: The unit kinds a node may ask for.
UNIT_KINDS = ("pcu", "pmu", "agcu", "any")


class PlacementError(Exception):
    """No free site can host a node; ``unit`` names the kind that ran out."""

    def __init__(self, node: str, unit: str, needed: int, available: int):
        self.node, self.unit, self.needed, self.available = node, unit, needed, available
        super().__init__(f'no free {unit.upper()} site for node "{node}": the section needs '
                         f"{needed} {unit.upper()} sites, the chip has {available}")


@dataclass
class PlacementOutcome:
    """One placer's answer: node -> site id, and how good it is.

    ``objective`` is the placement's :func:`problem_cost` (the greedy, annealing and
    model placers report the same cost); ``bound`` is a proven lower bound when a model
    gives one; ``extra`` holds the cost terms, times and counters.
    """

    placement: dict[str, str]
    method: str
    objective: float
    bound: float | None = None
    status: str = "FEASIBLE"
    backend: str | None = None
    extra: dict = field(default_factory=dict)


@dataclass(frozen=True)
class SiteTable:
    """The chip's unit sites in one fixed order (a site's index is its row everywhere)."""

    ids: list[str]
    index: dict[str, int]
    dist: np.ndarray          # switch hops between sites
    centre: np.ndarray        # hops from the chip's centre, for seeding


def site_table(fabric: RduFabric) -> SiteTable:
    """The :class:`SiteTable` of ``fabric``."""
    ids = [s.id for s in fabric.sites]
    dist = fabric.distance_matrix(ids).astype(float)
    xy = np.array([(fabric.site(s).x, fabric.site(s).y) for s in ids])
    centre = np.abs(xy - xy.mean(axis=0)).sum(axis=1)
    return SiteTable(ids, {s: k for k, s in enumerate(ids)}, dist, centre)


@dataclass(frozen=True)
class PlacementProblem:
    """The data block of the placement model for one section.

    ``pairs`` are undirected node pairs with their summed bandwidth (all edges between
    them, both directions: a net counts once per sink); ``rect`` holds each site's
    switch rectangle ``(row_lo, row_hi, col_lo, col_hi)`` so that the switch-hop
    distance is ``gap(rows) + gap(cols)`` (the closed form of ``fabric.distance``);
    ``penalty`` is a per-site cost added per unit of node degree (congestion feedback).
    """

    nodes: list[str]
    units: dict[str, str]
    sites: SiteTable
    rect: np.ndarray
    hosts: dict[str, np.ndarray]
    pairs: list[tuple[str, str, float]]
    penalty: np.ndarray
    degree: dict[str, float]
    cuts: np.ndarray = field(default_factory=lambda: np.zeros((0, 3), dtype=np.int64))
    congestion_weight: float = 0.0

    @property
    def quantum(self) -> float:
        """The cost of one integer unit of the full model's objective."""
        return self.quantum_of(self.nodes)

    def quantum_of(self, free) -> float:
        """The integer unit of a model whose free nodes are ``free``: the heaviest cost
        that model can see (its pairs, the site penalty, the congestion weight) weighs
        :data:`WEIGHT_SCALE` units, so a window of light pairs keeps its resolution."""
        free = set(free)
        heaviest = max([w for a, b, w in self.pairs if a in free or b in free]
                       + [float(self.penalty.max(initial=0.0)) * max(self.degree.values(),
                                                                     default=0.0),
                          self.congestion_weight if self.congestion_active else 0.0])
        return heaviest / WEIGHT_SCALE if heaviest > 0 else 1.0

    def integer_weight(self, cost: float, quantum: float | None = None) -> int:
        """``cost`` in integer units of ``quantum`` (default: the full model's); a
        positive cost never rounds to zero."""
        quantum = self.quantum if quantum is None else quantum
        return max(1, round(cost / quantum)) if cost > 0 else 0

    @cached_property
    def cut_index(self) -> dict[tuple[int, int], int]:
        """``(axis, line)`` -> row of :attr:`cuts`."""
        return {(int(a), int(c)): k for k, (a, c, _) in enumerate(self.cuts)}

    @property
    def congestion_active(self) -> bool:
        """False when no cut can be over capacity (fewer pairs than the smallest cut's
        channels): the congestion term is then 0 for every placement."""
        return (self.congestion_weight > 0 and len(self.cuts) > 0
                and len(self.pairs) > int(self.cuts[:, 2].min()))

    def to_site_ids(self, index: dict[str, int]) -> dict[str, str]:
        """A placement given as node -> site index, as node -> site id."""
        return {n: self.sites.ids[s] for n, s in index.items()}

    def to_indices(self, placement: dict[str, str]) -> dict[str, int]:
        """A placement given as node -> site id, as node -> site index."""
        return {n: self.sites.index[s] for n, s in placement.items()}


def placement_problem(graph: Graph, fabric: RduFabric, site_penalty: dict[str,
                      float] | None = None,
                      cut_share: float = 1.0, congestion_weight: float | None = None
                      ) -> PlacementProblem:
    """Collect the data of the placement model (sites, distances, weighted pairs, cuts).

    ``cut_share`` is the share of each mesh cut's channels the placement may plan to
    use; ``congestion_weight`` the cost of one channel over (default
    :data:`~formulations.placement.congestion.CONGESTION_WEIGHT` times the mean pair
    bandwidth; 0 switches the congestion term off).

    Examples
    --------
    >>> from hardware import build_fabric, load_hardware
    >>> from model.graph import Graph, Node, Edge
    >>> g = Graph("t", [Node("a", unit="pcu"), Node("b", unit="pmu")],
    ...           [Edge("a", "b", bandwidth=0.5), Edge("b", "a", bandwidth=0.25)])
    >>> problem = placement_problem(g, build_fabric(load_hardware("tiny")))
    >>> problem.pairs, problem.degree
    ([('a', 'b', 0.75)], {'a': 0.75, 'b': 0.75})
    """
    sites = site_table(fabric)
    rect = np.array([_switch_rect(fabric, s) for s in sites.ids], dtype=np.int64)
    hosts = {u: np.array([fabric.can_host(s, u) for s in sites.ids]) for u in UNIT_KINDS}
    pair_w: dict[tuple[str, str], float] = {}
    for e in graph.edges:
        if e.src != e.dst:
            key = (min(e.src, e.dst), max(e.src, e.dst))
            pair_w[key] = pair_w.get(key, 0.0) + e.bandwidth
    penalty = np.zeros(len(sites.ids))
    for site, value in (site_penalty or {}).items():
        if site in sites.index:
            penalty[sites.index[site]] = value
    degree = {n: 0.0 for n in graph.node_ids}
    for (a, b), w in pair_w.items():
        degree[a] += w
        degree[b] += w
    if congestion_weight is None:
        mean = sum(pair_w.values()) / len(pair_w) if pair_w else 0.0
        congestion_weight = CONGESTION_WEIGHT * mean
    return PlacementProblem(list(graph.node_ids), {n.id: n.unit for n in graph.nodes}, sites,
                            rect, hosts, sorted((a, b, w) for (a, b), w in pair_w.items()),
                            penalty, degree, mesh_cuts(fabric, cut_share=cut_share),
                            float(congestion_weight))


def _switch_rect(fabric: RduFabric, site_id: str) -> tuple[int, int, int, int]:
    pos = [fabric.graph.nodes[s]["pos"] for s in fabric.attached_switches(site_id)]
    cols, rows = [int(p[0]) for p in pos], [int(p[1]) for p in pos]
    return min(rows), max(rows), min(cols), max(cols)


def problem_cost(problem: PlacementProblem, placement: dict[str, str]) -> float:
    """The models' objective: weighted wirelength + site penalty + cut congestion."""
    return sum(cost_terms(problem, placement).values())


def cost_terms(problem: PlacementProblem, placement: dict[str, str]) -> dict[str, float]:
    """The three terms of :func:`problem_cost`: ``wirelength``, ``penalty``, ``congestion``."""
    idx = problem.sites.index
    index = {n: idx[placement[n]] for n in problem.nodes}
    wire = sum(w * problem.sites.dist[index[a], index[b]] for a, b, w in problem.pairs)
    penalty = sum(problem.penalty[index[n]] * problem.degree[n] for n in problem.nodes)
    return {"wirelength": float(wire), "penalty": float(penalty),
            "congestion": congestion_cost(problem, index)}


def placement_cost(graph: Graph, fabric: RduFabric, placement: dict[str, str]) -> float:
    """Bandwidth-weighted switch-hop distance summed over all edges."""
    sites = site_table(fabric)
    return float(sum(e.bandwidth * sites.dist[sites.index[placement[e.src]],
                                              sites.index[placement[e.dst]]]
                     for e in graph.edges))


def check_capacity(problem: PlacementProblem) -> None:
    """Raise :class:`PlacementError` in user terms when a unit kind has fewer sites than
    the section has nodes of that kind (``any`` nodes take PCU and PMU sites)."""
    for unit in ("agcu", "pcu", "pmu", "any"):
        kinds = ("pcu", "pmu", "any") if unit == "any" else (unit,)
        needing = [n for n in problem.nodes if problem.units[n] in kinds]
        available = int(np.sum(np.any([problem.hosts[k] for k in kinds], axis=0)))
        if len(needing) > available:
            raise PlacementError(needing[-1], unit, len(needing), available)
