"""Alternative placements for a cost model to rank (source 002, §IV-C).

Scope
-----
Two sources of alternatives, both deterministic for a seed:

* :class:`CandidatePool` -- the searches' own top-k. A placer given ``keep=pool``
  (:func:`~formulations.placement.search.place_model`,
  :func:`~formulations.placement.annealing.place_annealing`) offers it the placements it
  visits anyway: the annealer's state at the end of every temperature and every restart's
  best, the LNS's improving incumbents and its kicks' anneals, the exact model's (or site
  model's) answer beside its warm start. The pool keeps the ``size`` cheapest that differ
  from each other by at least ``min_moved`` nodes (a newcomer close to a kept placement
  replaces it only when cheaper), so the alternatives come from different temperatures,
  restarts and windows rather than one basin. Collecting costs no search time.
* :func:`placement_candidates` -- the placer's answer, then the pool's members within
  :data:`MAX_WORSE` of its cost (cheapest first, re-costed on the full objective), then,
  when fewer than ``count``, anneals that start from the answer at a low temperature (a
  refinement, not a melt) with their own seeds, on an equal share of the planned seconds
  (a move budget).

The pipeline routes the candidates, scores them with the chosen cost model
(:mod:`pipeline.cost_model`) and keeps the best; formulations never import the simulator,
so the scoring stays outside.

Caveats
-------
CP-SAT's own intermediate solutions are not collected (the solver wrapper takes no
solution callback); the exact model contributes its answer and its warm start, and the
warm start's anneal its temperatures. The pool's admission compares the cost each search
reports (the warm anneals report the wirelength without the congestion term);
:func:`placement_candidates` re-costs every member on the full objective.

Examples
--------
>>> from hardware import build_fabric, load_hardware
>>> from model.graph import Graph, Node, Edge
>>> fab = build_fabric(load_hardware("tiny"))
>>> g = Graph("t", [Node("a", unit="pcu"), Node("b", unit="pmu"), Node("c", unit="pcu")],
...           [Edge("a", "b"), Edge("b", "c")])
>>> from formulations.solver import Budget
>>> first = {"a": "U0_0", "b": "U0_1", "c": "U0_2"}
>>> found = placement_candidates(g, fab, first, count=4, budget=Budget(0.5), seed=1)
>>> found[0] == first, len(found) >= 1, len({tuple(sorted(p.items())) for p in found}) == len(found)
(True, True, True)
"""

from __future__ import annotations

import math
from typing import Sequence

import numpy as np

from formulations.placement.annealing import (MOVES_PER_SECOND, AnnealState, BlockDraws,
                                              planned_moves, propose_move)
from formulations.placement.problem import placement_problem, problem_cost
from formulations.solver import Budget
from hardware import RduFabric
from model.graph import Graph

__all__ = ["placement_candidates", "CandidatePool", "WALK_TEMPERATURE", "MAX_WORSE",
           "WALK_RANGE", "MIN_MOVED_SHARE"]

#: Temperature of a candidate walk, in standard deviations of random moves' cost change
#: (VPR melts at 20; this only lets near-neutral moves through).
WALK_TEMPERATURE = 0.05
#: Range limit of a walk's moves (grid steps).
WALK_RANGE = 3
#: A state whose wirelength cost exceeds the answer's by more than this share is never kept
#: (the ranking chooses among near-equal placements).
MAX_WORSE = 0.25
#: Two pool members differ by at least this share of the nodes (and at least one node).
MIN_MOVED_SHARE = 0.02


class CandidatePool:
    """The ``size`` cheapest mutually distant placements a search offers (its top-k).

    Call it with ``(placement, cost)`` (node -> site id, the search's cost). A newcomer
    that moves fewer than ``min_moved`` nodes from a kept member replaces that member when
    cheaper and is dropped otherwise; a distant one enters when the pool has room or it is
    cheaper than the dearest member (which leaves). Ties keep the earlier offer, so the
    pool depends only on the order of the offers (deterministic for a seed).

    Examples
    --------
    >>> pool = CandidatePool(2, min_moved=1)
    >>> pool({"a": "s0", "b": "s1"}, 3.0); pool({"a": "s1", "b": "s0"}, 2.0)
    >>> pool({"a": "s0", "b": "s1"}, 3.0); pool({"a": "s2", "b": "s1"}, 1.0)
    >>> [(p["a"], c) for p, c in pool.members()]
    [('s2', 1.0), ('s1', 2.0)]
    """

    def __init__(self, size: int, min_moved: int | None = None):
        self.size = int(size)
        self.min_moved = min_moved
        self.offers = 0
        self._kept: list[tuple[float, int, dict[str, str]]] = []

    def __call__(self, placement: dict[str, str], cost: float) -> None:
        self.offers += 1
        if self.size <= 0 or (len(self._kept) >= self.size
                              and cost >= self._kept[-1][0] - 1e-12):
            return        # full, and dearer than every member: it could replace none
        need = self.min_moved if self.min_moved is not None else max(
            1, math.ceil(MIN_MOVED_SHARE * len(placement)))
        entry = (float(cost), self.offers, dict(placement))
        for k, (kept_cost, _, kept) in enumerate(self._kept):
            if _moved(kept, placement) < need:
                if cost < kept_cost - 1e-12:
                    self._kept[k] = entry
                    self._kept.sort(key=lambda e: (e[0], e[1]))
                return
        if len(self._kept) < self.size or cost < self._kept[-1][0] - 1e-12:
            self._kept = sorted(self._kept + [entry], key=lambda e: (e[0], e[1]))[:self.size]

    def members(self) -> list[tuple[dict[str, str], float]]:
        """The kept placements and their offered costs, cheapest first."""
        return [(dict(p), c) for c, _, p in self._kept]

    def complete(self, fill) -> None:
        """Replace every member ``p`` by ``fill(p)`` (dropped when None): the idle nodes a
        placer set aside and placed last."""
        done = [(c, k, fill(p)) for c, k, p in self._kept]
        self._kept = [(c, k, p) for c, k, p in done if p is not None]


def _moved(a: dict[str, str], b: dict[str, str]) -> int:
    """How many nodes sit on different sites in ``a`` and ``b`` (nodes of one only count)."""
    return sum(1 for n, s in a.items() if b.get(n) != s) + sum(1 for n in b if n not in a)


def placement_candidates(graph: Graph, fabric: RduFabric, start: dict[str, str], *, count: int,
                         budget: Budget, seed: int = 0,
                         site_penalty: dict[str, float] | None = None,
                         pool: Sequence[dict[str, str]] = ()) -> list[dict[str, str]]:
    """``start`` and up to ``count - 1`` distinct placements near it.

    First the ``pool`` placements (the search's own top-k, :class:`CandidatePool`) that
    place the same nodes, are new and cost at most ``(1 + MAX_WORSE)`` times ``start``'s
    placement cost, cheapest first (ties: pool order). When fewer than ``count`` are
    found, walks fill up: walk ``k`` (seed ``seed + k``) is a Metropolis walk at the fixed
    temperature :data:`WALK_TEMPERATURE` from ``start`` for an equal share of what
    ``budget`` has left, as moves; it returns the cheapest state it visited other than
    ``start`` itself, kept under the same rules. The budget is charged only for walks that
    run (a full pool costs none).
    """
    found = [dict(start)]
    if count <= 1 or len(graph.nodes) < 2:
        return found
    problem = placement_problem(graph, fabric, site_penalty)
    base = problem_cost(problem, start)
    limit = base * (1 + MAX_WORSE) + 1e-12
    seen = {tuple(sorted(start.items()))}
    costed = sorted(((problem_cost(problem, p), k, p) for k, p in enumerate(pool)
                     if set(p) == set(start)), key=lambda e: (e[0], e[1]))
    for cost, _, placed in costed:
        key = tuple(sorted(placed.items()))
        if len(found) < count and key not in seen and cost <= limit:
            seen.add(key)
            found.append(dict(placed))
    moves = max(len(graph.nodes), planned_moves(budget.left() / (count - 1)))
    for k in range(1, count - len(found) + 1):
        if budget.wall_out():
            break
        placed = _walk(problem, fabric, start, moves, seed + k)
        budget.spend(moves / MOVES_PER_SECOND)
        if placed is None:
            continue
        key = tuple(sorted(placed.items()))
        if key not in seen and problem_cost(problem, placed) <= limit:
            seen.add(key)
            found.append(placed)
    return found


def _walk(problem, fabric: RduFabric, start: dict[str, str], moves: int, seed: int
          ) -> dict[str, str] | None:
    """The cheapest state other than ``start`` that a fixed-temperature walk visits."""
    state = AnnealState(problem, fabric, start)
    draw = BlockDraws(np.random.default_rng(seed))
    deltas = [state.delta(*m)[0] for m in (propose_move(state, draw, WALK_RANGE)
                                          for _ in range(200)) if m]
    temperature = WALK_TEMPERATURE * float(np.std(deltas)) if deltas else 0.0
    cost, best_cost, best = 0.0, math.inf, None
    for _ in range(moves):
        move = propose_move(state, draw, WALK_RANGE)
        if move is None:
            continue
        delta, b = state.delta(*move)
        if delta <= 0 or (temperature > 0 and draw() < math.exp(-delta / temperature)):
            state.apply(move[0], move[1], b)
            cost += delta
            if cost < best_cost - 1e-12 or best is None:
                here = state.placement()
                if here != start:
                    best_cost, best = cost, here
    return best
