"""Independent-set matching: the placement model on a window it can solve in milliseconds.

Scope
-----
When no two nodes of a window share a pair, every pair of a window node ends at a fixed
node, so the placement model restricted to the window has no quadratic term: placing node
``n`` on site ``s`` costs ``c[n, s] = sum_m w(n, m) * dist(s, site(m)) + penalty(s) *
degree(n)`` whatever the other window nodes do. The model is then a linear assignment
problem, whose LP relaxation is integral; the Hungarian-type solver of OR-Tools
(``SimpleLinearSumAssignment``) proves its optimum in about a millisecond for a few dozen
nodes, against tens to hundreds of milliseconds for a general window through a MILP or
CP-SAT. This is the *independent set matching* of detailed placers (FastPlace-DP,
NTUplace3), here as one more exact neighbourhood of the LNS
(:mod:`formulations.placement_lns`).

:func:`match_window` picks the window: starting from a seed node, the nodes nearest to it
that share no pair with a node already taken; its sites are their own sites and the free
sites around them.

Caveats
-------
The congestion term is not linear in one node's site; the assignment ignores it and the
caller keeps a new placement only when its full cost (:func:`problem_cost`) is lower.
"""

from __future__ import annotations

import numpy as np
from ortools.graph.python import linear_sum_assignment

__all__ = ["match_window", "solve_matching"]

#: Assignment costs are integers: the costliest finite entry becomes this many units.
COST_RESOLUTION = 10**9
#: Free sites within this many switch hops of a window node join the window.
FREE_RADIUS = 1


def match_window(problem, index: dict[str, int], adjacency: dict, seed_node: str,
                 size: int) -> list[str]:
    """``seed_node`` and up to ``size - 1`` more pairwise unconnected nodes, nearest first."""
    dist = problem.sites.dist[index[seed_node]]
    chosen: list[str] = []
    blocked: set[str] = set()
    for n in sorted(problem.nodes, key=lambda n: (n != seed_node, dist[index[n]], n)):
        if n in blocked:
            continue
        chosen.append(n)
        blocked.add(n)
        blocked.update(m for m, _ in adjacency[n])
        if len(chosen) == size:
            break
    return chosen


def solve_matching(problem, index: dict[str, int], adjacency: dict, window: list[str]
                   ) -> dict[str, int] | None:
    """The optimal re-placement of the unconnected ``window`` onto its sites and the free
    sites near them (node -> site index), or None when nothing changes."""
    sites = _window_sites(problem, index, window)
    cost = _assignment_costs(problem, index, adjacency, window, sites)
    chosen = _assign(cost)
    moved = {n: int(sites[j]) for n, j in zip(window, chosen) if sites[j] != index[n]}
    return (index | moved) if moved else None


def _window_sites(problem, index, window) -> np.ndarray:
    own = np.array([index[n] for n in window])
    taken = np.zeros(len(problem.sites.ids), dtype=bool)
    taken[list(index.values())] = True
    near = problem.sites.dist[own].min(axis=0) <= FREE_RADIUS
    return np.concatenate([own, np.flatnonzero(near & ~taken)])


def _assignment_costs(problem, index, adjacency, window, sites) -> np.ndarray:
    """``c[i, j]``: wirelength to the (fixed) partners plus the site penalty; ``inf`` where
    the site cannot host the node's unit."""
    dist = problem.sites.dist
    cost = np.empty((len(window), len(sites)))
    for i, n in enumerate(window):
        partners = [index[m] for m, _ in adjacency[n]]
        weights = np.array([w for _, w in adjacency[n]])
        wire = weights @ dist[np.ix_(partners, sites)] if partners else 0.0
        cost[i] = wire + problem.penalty[sites] * problem.degree[n]
        cost[i, ~problem.hosts[problem.units[n]][sites]] = np.inf
    return cost


def _assign(cost: np.ndarray) -> list[int]:
    """Column chosen per row of the minimum-cost assignment; spare columns go to dummy
    rows at cost 0 (the solver wants as many rows as columns)."""
    rows, cols = cost.shape
    finite = np.isfinite(cost)
    top = cost[finite].max(initial=0.0)
    units = np.zeros_like(cost, dtype=np.int64)
    if top > 0:
        units[finite] = np.rint(cost[finite] * (COST_RESOLUTION / top)).astype(np.int64)
    r, c = np.nonzero(finite)
    dummy_r, dummy_c = np.divmod(np.arange((cols - rows) * cols), cols)
    solver = linear_sum_assignment.SimpleLinearSumAssignment()
    solver.add_arcs_with_cost(np.concatenate([r, rows + dummy_r]).astype(np.int32),
                              np.concatenate([c, dummy_c]).astype(np.int32),
                              np.concatenate([units[r, c], np.zeros(len(dummy_r), np.int64)]))
    if solver.solve() != solver.OPTIMAL:
        raise RuntimeError("the window's own sites are always an assignment")
    return [solver.right_mate(i) for i in range(rows)]
