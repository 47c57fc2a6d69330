"""Alternative placements for a cost model to rank (source 002, §IV-C).

Scope
-----
:func:`placement_candidates` returns the placer's answer followed by up to ``count - 1``
distinct alternatives of about the same wirelength: anneals that start from the answer at
a low temperature (a refinement, not a melt) with their own seeds, each taking an equal
share of the planned seconds (a move budget: deterministic for a seed). They are the
annealer's local optima around the incumbent -- the placements a wirelength objective
cannot tell apart but a throughput model can. The pipeline routes them, scores them
with the chosen cost model (:mod:`pipeline.cost_model`) and keeps the best; formulations
never import the simulator, so the scoring stays outside.

Caveats
-------
The candidates are not the annealer's or the LNS's internal top-k nor CP-SAT's solution
pool: collecting those would put a cost model inside every search loop. Refining the
final answer gives neighbours of the best wirelength, which is where a ranking pays off.

Examples
--------
>>> from hardware import build_fabric, load_hardware
>>> from model.graph import Graph, Node, Edge
>>> fab = build_fabric(load_hardware("tiny"))
>>> g = Graph("t", [Node("a", unit="pcu"), Node("b", unit="pmu"), Node("c", unit="pcu")],
...           [Edge("a", "b"), Edge("b", "c")])
>>> first = {"a": "U0_0", "b": "U0_1", "c": "U0_2"}
>>> found = placement_candidates(g, fab, first, count=4, seconds=0.5, seed=1)
>>> found[0] == first, len(found) >= 1, len({tuple(sorted(p.items())) for p in found}) == len(found)
(True, True, True)
"""

from __future__ import annotations

import math

import numpy as np

from formulations.placement.annealing import AnnealState, BlockDraws, planned_moves, propose_move
from formulations.placement.problem import placement_problem, problem_cost
from model.graph import Graph

__all__ = ["placement_candidates", "WALK_TEMPERATURE", "MAX_WORSE", "WALK_RANGE"]

#: Temperature of a candidate walk, in standard deviations of random moves' cost change
#: (VPR melts at 20; this only lets near-neutral moves through).
WALK_TEMPERATURE = 0.05
#: Range limit of a walk's moves (grid steps).
WALK_RANGE = 3
#: A state whose wirelength cost exceeds the answer's by more than this share is never kept
#: (the ranking chooses among near-equal placements).
MAX_WORSE = 0.25


def placement_candidates(graph: Graph, fabric, start: dict[str, str], *, count: int,
                         seconds: float, seed: int = 0,
                         site_penalty: dict[str, float] | None = None) -> list[dict[str, str]]:
    """``start`` and up to ``count - 1`` distinct placements near it.

    Walk ``k`` (seed ``seed + k``) is a Metropolis walk at the fixed temperature
    :data:`WALK_TEMPERATURE` from ``start`` for ``seconds / (count - 1)`` planned seconds
    of moves; it returns the cheapest state it visited other than ``start`` itself,
    kept when new and within ``(1 + MAX_WORSE)`` of ``start``'s placement cost.
    """
    found = [dict(start)]
    if count <= 1 or len(graph.nodes) < 2:
        return found
    problem = placement_problem(graph, fabric, site_penalty)
    base = problem_cost(problem, start)
    limit = base * (1 + MAX_WORSE) + 1e-12
    seen = {tuple(sorted(start.items()))}
    moves = max(len(graph.nodes), planned_moves(seconds / (count - 1)))
    for k in range(1, count):
        placed = _walk(problem, fabric, start, moves, seed + k)
        if placed is None:
            continue
        key = tuple(sorted(placed.items()))
        if key not in seen and problem_cost(problem, placed) <= limit:
            seen.add(key)
            found.append(placed)
    return found


def _walk(problem, fabric, start: dict[str, str], moves: int, seed: int
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
