"""A combinatorial lower bound on the placement cost (for LNS runs' gap).

Scope
-----
:func:`star_bound` -- a Gilmore-Lawler-style bound, valid for every placement:

1. Give every node pair (weight ``w``) to one *owner*, its endpoint with more
   neighbours (ties: the smaller id). The wirelength is then the sum over nodes of
   ``star(n) = sum of w * dist(site(n), site(m))`` over the pairs ``n`` owns.
2. In any placement, the partners ``m`` of one owner sit on distinct sites, other
   than ``n``'s own, each able to host ``m``'s unit kind. Relax this: group the
   partners by unit kind and let each group pick its sites independently of the
   other groups (a site may serve two groups). Within a group, the cheapest choice
   puts the heaviest partner on the nearest free compatible site, the next on the
   next nearest, ... (rearrangement inequality). So ``star(n) >= S_n(site(n))``,
   with ``S_n(s)`` the sorted weights dotted with the sorted distances from ``s``.
3. Hence cost ``>= sum over owners of min over compatible sites s of S_n(s)``.

The site penalty and the congestion term are non-negative and left out, so the
bound stays valid for the full objective. It costs one sort of the distance
matrix per unit kind and one small dot product per owner and site.

Caveats
-------
The bound sees each node's neighbourhood alone: it is strong where the cost comes
from fan-out (a node with more partners than the 8 sites around it that share a
switch), from type restrictions (AGCU doors, PCU/PMU patterns) and weak where the
cost comes from cycles and conflicts between neighbourhoods. It is often far
below the optimum on large sections; the gap it gives is an honest upper limit on
how far a placement can still be from optimal.
"""

from __future__ import annotations

import numpy as np

__all__ = ["star_bound"]


def star_bound(problem) -> float:
    """A valid lower bound on :func:`formulations.placement.problem.problem_cost`.

    Examples
    --------
    >>> from hardware import build_fabric, load_hardware
    >>> from model.graph import Graph, Node, Edge
    >>> from formulations.placement.problem import placement_problem
    >>> fab = build_fabric(load_hardware("tiny"))
    >>> hub = [Node("h", unit="pcu")] + [Node(f"m{k}", unit="pmu") for k in range(6)]
    >>> g = Graph("star", hub, [Edge("h", f"m{k}") for k in range(6)])
    >>> star_bound(placement_problem(g, fab))   # 4 PMUs share a switch with h, 2 do not
    2.0
    """
    owned = _owned_pairs(problem)
    if not owned:
        return 0.0
    sorted_dist = _sorted_distances(problem)
    total = 0.0
    for node, partners in owned.items():
        total += _best_star(problem, sorted_dist, node, partners)
    return float(total)


def _owned_pairs(problem) -> dict[str, list[tuple[str, float]]]:
    """Each pair goes to the endpoint with more neighbours (ties: the smaller id)."""
    count = {n: 0 for n in problem.nodes}
    for a, b, _ in problem.pairs:
        count[a] += 1
        count[b] += 1
    owned: dict[str, list[tuple[str, float]]] = {}
    for a, b, w in problem.pairs:
        owner, other = (a, b) if (count[a], b) >= (count[b], a) else (b, a)
        owned.setdefault(owner, []).append((other, w))
    return owned


def _sorted_distances(problem) -> dict[str, np.ndarray]:
    """Per unit kind: for every site, the distances to the *other* sites that can host
    that kind, ascending."""
    dist = problem.sites.dist.astype(float).copy()
    np.fill_diagonal(dist, np.inf)
    out = {}
    for unit in ("pcu", "pmu", "agcu", "any"):
        hosts = problem.hosts[unit]
        out[unit] = np.sort(dist[:, hosts], axis=1) if hosts.any() else np.zeros((len(dist), 0))
    return out


def _best_star(problem, sorted_dist, node: str, partners: list[tuple[str, float]]) -> float:
    sites = np.flatnonzero(problem.hosts[problem.units[node]])
    star = np.zeros(len(sites))
    for unit in ("pcu", "pmu", "agcu", "any"):
        weights = sorted((w for m, w in partners if problem.units[m] == unit), reverse=True)
        if not weights:
            continue
        table = sorted_dist[unit][sites, :len(weights)]
        if table.shape[1] < len(weights):   # fewer sites than partners: infeasible anyway
            weights = weights[:table.shape[1]]
        table = np.where(np.isfinite(table), table, 0.0)
        star += table @ np.asarray(weights)
    return float(star.min()) if len(star) else 0.0
