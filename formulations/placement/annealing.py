"""Simulated-annealing placement: the field's classic baseline (VPR-style).

Scope
-----
The annealer of VPR (Betz and Rose, 1997) on the RDU grid: random moves and swaps
of one node to a type-compatible site, accepted by the Metropolis rule, with

* the *adaptive temperature schedule* of VPR: the initial temperature is 20 times
  the standard deviation of the cost change of random moves, and the cooling factor
  depends on the acceptance rate (0.5 above 96 %, 0.9 above 80 %, 0.95 above 15 %,
  0.8 below);
* the *range limiter*: a move goes at most ``R`` sites away in each direction, and
  ``R`` follows the acceptance rate towards 44 %;
* ``inner_num * nodes**(4/3)`` moves per temperature: ``inner_num = 1`` (VPR's fast
  setting) for a first anneal that counts how many moves a schedule takes, then one
  anneal with ``inner_num`` chosen to use about half the moves left (VPR fits
  ``inner_num`` to the effort it may spend), then restarts from the best placement
  while moves remain (:func:`anneal_to_budget`);
* a move's target is drawn from the range window clipped to the chip (VPR), so
  proposals rarely fall off the grid; the window never shrinks below ``range_floor``
  (VPR: 1; the placement model's own anneals pass :func:`same_kind_step`, see there);
* the exit rule ``T < 0.005 * cost / pairs`` or the move budget; when the temperatures
  still to go would not fit in the moves left, each gets fewer moves (at least one
  per node), so that a run cools within its budget rather than being cut off hot.
* the budget is a number of moves (proposals), the planned seconds a
  :class:`~formulations.solver.budget.Budget` has left times :data:`MOVES_PER_SECOND`,
  never measured speed: same seed and budget, same placement on any machine and load. The
  moves used are charged to the budget; its deadline is the only wall-clock cap, and when
  it stops a run first, ``stats["cut_short"]`` says so.

Caveats
-------
* The cost is the placement model's own (:func:`formulations.placement.problem.problem_cost`:
  bandwidth-weighted switch-hop distance per edge, the switch-mesh cut congestion
  and the routing feedback's penalty per site) rather than VPR's bounding-box
  wirelength, so greedy, annealing and the exact model are compared on one number.
  The cut demand is kept up to date move by move (:class:`_CutLoad`); a move is
  priced for congestion only when some cut is within reach of its capacity.
* It starts from the sorted-order greedy placement and returns the best placement
  seen, so it is never worse than the greedy one.
* Deterministic for a fixed ``seed`` (numpy's PCG64) and planned seconds, unless the deadline
  clock cuts the run short (``stats["cut_short"]``).
"""

from __future__ import annotations

import math
import time
from dataclasses import replace
from functools import partial
from itertools import chain
from typing import Callable

import numpy as np

from formulations.placement.congestion import cut_demand
from formulations.placement.greedy import greedy_place
from formulations.placement.problem import (PlacementOutcome, PlacementProblem, check_capacity,
                                            cost_terms, placement_problem, problem_cost)
from formulations.placement.settings import PlacementSearch
from formulations.solver import Budget, SolveSettings
from hardware import RduFabric
from model.graph import Graph

__all__ = ["anneal", "anneal_with_restarts", "anneal_to_budget", "place_annealing",
           "same_kind_step", "AnnealStats", "AnnealState", "BlockDraws", "propose_move",
           "fitted_moves", "MOVES_PER_SECOND", "planned_moves", "Keep"]

#: What an anneal offers its states to: ``keep(placement, cost)`` (node -> site id).
Keep = Callable[[dict[str, str], float], None]

#: Moves (proposals) of the annealer per planned second. Calibrated on this project's 2-core
#: machine: 190-420 thousand proposals per wall second (setup included) on the generated
#: 32-96-node sections and bert_l-3_training section 0 of plasticine and sn10, so a budget
#: of moves takes about its planned seconds (half to 1.7 times).
MOVES_PER_SECOND = 250_000


def planned_moves(seconds: float) -> int:
    """The move budget of ``seconds`` planned seconds (:data:`MOVES_PER_SECOND`)."""
    return max(0, int(seconds * MOVES_PER_SECOND))


class AnnealStats(dict):
    """Counters of one run: temperatures, moves, accepted moves, final range limit."""


class AnnealState:
    """The annealer's placement: positions, occupants and the neighbour lists the
    incremental cost needs.

    :meth:`delta` prices moving a node to a site (swapping with its occupant) without
    changing anything; :meth:`apply` makes the move; :meth:`placement` reads the
    placement back as node -> site id.
    """

    def __init__(self, problem: PlacementProblem, fabric: RduFabric, start: dict[str, str]):
        self.problem = problem
        self.nodes = problem.nodes
        self.node_index = {n: k for k, n in enumerate(self.nodes)}
        # plain lists: the move loop reads them one element at a time, where numpy is slow
        self.pos = [problem.sites.index[start[n]] for n in self.nodes]
        self.occupant = [-1] * len(problem.sites.ids)
        for k, site in enumerate(self.pos):
            self.occupant[site] = k
        self.dist_rows = problem.sites.dist.tolist()
        self.adj: list[list[tuple[int, float]]] = [[] for _ in self.nodes]
        for a, b, w in problem.pairs:
            ia, ib = self.node_index[a], self.node_index[b]
            self.adj[ia].append((ib, w))
            self.adj[ib].append((ia, w))
        self.site_cost = [[problem.penalty[s] * problem.degree[n]
                           for s in range(len(problem.sites.ids))] for n in self.nodes]
        self.hosts = [problem.hosts[problem.units[n]].tolist() for n in self.nodes]
        xy = _grid_xy(fabric)
        self.xy_list = [xy[s] for s in problem.sites.ids]
        self.at_xy = {p: k for k, p in enumerate(self.xy_list)}
        xs, ys = [p[0] for p in self.xy_list] or [0], [p[1] for p in self.xy_list] or [0]
        self.x_range, self.y_range = (min(xs), max(xs)), (min(ys), max(ys))
        self.agcu_list = np.flatnonzero(problem.hosts["agcu"]).tolist()
        self.is_agcu = [problem.units[n] == "agcu" for n in self.nodes]
        self.cuts = _CutLoad(problem, self.pos) if problem.congestion_active else None

    def node_cost(self, node: int, site: int, skip: int = -1) -> float:
        """Cost of ``node`` on ``site``: its pairs (but the one with ``skip``) and penalty."""
        cost = self.site_cost[node][site]
        dist, pos = self.dist_rows[site], self.pos
        for other, w in self.adj[node]:
            if other != skip:
                cost += w * dist[pos[other]]
        return cost

    def delta(self, a: int, target: int) -> tuple[float, int]:
        """Cost change of moving ``a`` to ``target`` (swapping with its occupant)."""
        b = self.occupant[target]
        here = self.pos[a]
        before = self.node_cost(a, here, skip=b)
        after = self.node_cost(a, target, skip=b)
        if b >= 0:
            before += self.node_cost(b, target, skip=a)
            after += self.node_cost(b, here, skip=a)
        if self.cuts is not None:
            after += self.problem.congestion_weight * self.cuts.excess_delta(
                self.adj, self.pos, a, here, target, b)
        return after - before, b

    def apply(self, a: int, target: int, b: int) -> None:
        """Move ``a`` to ``target`` and its occupant ``b`` (-1: none) to ``a``'s site."""
        if self.cuts is not None:
            self.cuts.apply(self.adj, self.pos, a, self.pos[a], target, b)
        here = self.pos[a]
        self.pos[a], self.occupant[target] = target, a
        self.occupant[here] = b
        if b >= 0:
            self.pos[b] = here

    def placement(self) -> dict[str, str]:
        """The current placement, node -> site id."""
        ids = self.problem.sites.ids
        return {n: ids[self.pos[k]] for k, n in enumerate(self.nodes)}


class _CutLoad:
    """Pairs crossing every switch-mesh line, kept up to date move by move (plain lists:
    a move touches a few pairs and a few lines, so Python beats numpy here).

    Lines are numbered flat: row lines first, then column lines; a line that is no
    cut of the problem has an unbounded capacity."""

    def __init__(self, problem: PlacementProblem, pos: np.ndarray):
        rect = problem.rect
        self.rows = int(rect[:, 1].max()) + 1
        lines = self.rows + int(rect[:, 3].max()) + 1
        self.lo = [rect[:, 0].tolist(), rect[:, 2].tolist()]
        self.hi = [rect[:, 1].tolist(), rect[:, 3].tolist()]
        self.capacity = [10**9] * lines
        self.demand = [0] * lines
        demand = cut_demand(problem, {n: int(pos[k]) for k, n in enumerate(problem.nodes)})
        for k, (axis, line, cap) in enumerate(problem.cuts.tolist()):
            self.capacity[self._flat(axis, line)] = cap
            self.demand[self._flat(axis, line)] = int(demand[k])
        self.max_over = max(d - c for d, c in zip(self.demand, self.capacity))
        self.pending: tuple | None = None

    def _flat(self, axis: int, line: int) -> int:
        return line if axis == 0 else self.rows + line

    def excess_delta(self, adj, pos, a: int, here: int, target: int, b: int) -> int:
        """Change of the summed excess over capacity if ``a`` moves to ``target`` (and
        ``b`` to ``here``); 0 at once when no line can reach its capacity."""
        moved = len(adj[a]) + (len(adj[b]) if b >= 0 else 0)
        if self.max_over + moved <= 0:
            self.pending = None
            return 0
        change = self._change(adj, pos, a, here, target, b)
        self.pending = ((a, here, target, b), change)
        delta = 0
        for line, d in change.items():
            if d:
                over = self.demand[line] - self.capacity[line]
                delta += max(0, over + d) - max(0, over)
        return delta

    def apply(self, adj, pos, a: int, here: int, target: int, b: int) -> None:
        if self.pending is not None and self.pending[0] == (a, here, target, b):
            change = self.pending[1]
        else:
            change = self._change(adj, pos, a, here, target, b)
        for line, d in change.items():
            self.demand[line] += d
        self.max_over = max(d - c for d, c in zip(self.demand, self.capacity))
        self.pending = None

    def _change(self, adj, pos, a: int, here: int, target: int, b: int) -> dict[int, int]:
        change: dict[int, int] = {}
        moves = [(a, here, target, b)] + ([(b, target, here, a)] if b >= 0 else [])
        for node, old, new, partner in moves:
            for other, _ in adj[node]:
                if other == partner:
                    continue
                where = pos[other]
                for site, sign in ((old, -1), (new, 1)):
                    for axis in (0, 1):
                        for line in self._lines(axis, site, where):
                            change[line] = change.get(line, 0) + sign
        return change

    def _lines(self, axis: int, s: int, t: int) -> range:
        lo, hi = self.lo[axis], self.hi[axis]
        offset = 0 if axis == 0 else self.rows
        if hi[s] < lo[t]:
            return range(offset + hi[s], offset + lo[t])
        if hi[t] < lo[s]:
            return range(offset + hi[t], offset + lo[s])
        return range(0)


class BlockDraws:
    """Uniform numbers in [0, 1) from ``rng``, drawn in blocks: one numpy call per number
    cost more than the rest of a move's proposal. :attr:`next` hands them out one by one
    without a Python frame (the move loops call it millions of times)."""

    def __init__(self, rng: np.random.Generator, block: int = 4096):
        blocks = iter(lambda: rng.random(block).tolist(), None)
        self.next: Callable[[], float] = partial(next, chain.from_iterable(blocks))

    def __call__(self) -> float:
        return self.next()


def propose_move(state: AnnealState, draw: BlockDraws, limit: int) -> tuple[int, int] | None:
    """A random node and a compatible site at most ``limit`` grid steps away, or None."""
    rand = draw.next
    a = int(rand() * len(state.nodes))
    here = state.pos[a]
    if state.is_agcu[a]:
        target = state.agcu_list[int(rand() * len(state.agcu_list))]
    else:
        x, y = state.xy_list[here]  # the range window, clipped to the chip (VPR)
        x_lo, x_hi = max(x - limit, state.x_range[0]), min(x + limit, state.x_range[1])
        y_lo, y_hi = max(y - limit, state.y_range[0]), min(y + limit, state.y_range[1])
        target = state.at_xy.get((x_lo + int(rand() * (x_hi - x_lo + 1)),
                                  y_lo + int(rand() * (y_hi - y_lo + 1))), -1)
    if target < 0 or target == here or not state.hosts[a][target]:
        return None
    b = state.occupant[target]
    if b >= 0 and not state.hosts[b][here]:
        return None
    return a, target


def _moves(state: AnnealState, draw: BlockDraws, count: int, limit: int, temperature: float,
           cost: float, best_cost: float) -> tuple[int, int, float, tuple | None]:
    """``count`` proposals at ``temperature``, each taken by the Metropolis rule: returns the
    moves tried and accepted, the cost reached, and the best (cost, placement) seen when it
    beats ``best_cost`` (else None).

    :func:`propose_move` and :meth:`AnnealState.delta` inlined, the same draws and the same
    arithmetic in the same order (``test_the_move_loop_is_propose_and_delta``): the calls
    cost more than the moves, and most of a section's placement time is this loop.
    """
    rand, pos, occupant, hosts = draw.next, state.pos, state.occupant, state.hosts
    adj, site_cost, dist_rows, cuts = state.adj, state.site_cost, state.dist_rows, state.cuts
    is_agcu, agcu_list, xy_list, at_xy = state.is_agcu, state.agcu_list, state.xy_list, state.at_xy
    nodes, agcus = len(state.nodes), len(agcu_list)
    (x_min, x_max), (y_min, y_max) = state.x_range, state.y_range
    weight = state.problem.congestion_weight
    tried = accepted = 0
    found = None
    for _ in range(count):
        a = int(rand() * nodes)
        here = pos[a]
        if is_agcu[a]:
            target = agcu_list[int(rand() * agcus)]
        else:
            x, y = xy_list[here]
            x_lo = x - limit if x - limit > x_min else x_min
            y_lo = y - limit if y - limit > y_min else y_min
            x_span = (x + limit if x + limit < x_max else x_max) - x_lo + 1
            y_span = (y + limit if y + limit < y_max else y_max) - y_lo + 1
            target = at_xy.get((x_lo + int(rand() * x_span), y_lo + int(rand() * y_span)), -1)
        if target < 0 or target == here or not hosts[a][target]:
            continue
        b = occupant[target]
        if b >= 0 and not hosts[b][here]:
            continue
        tried += 1
        before, after = site_cost[a][here], site_cost[a][target]
        from_here, from_target = dist_rows[here], dist_rows[target]
        for other, w in adj[a]:
            if other != b:
                before += w * from_here[pos[other]]
        for other, w in adj[a]:
            if other != b:
                after += w * from_target[pos[other]]
        if b >= 0:
            moved = site_cost[b][target]
            for other, w in adj[b]:
                if other != a:
                    moved += w * from_target[pos[other]]
            before += moved
            moved = site_cost[b][here]
            for other, w in adj[b]:
                if other != a:
                    moved += w * from_here[pos[other]]
            after += moved
        if cuts is not None:
            after += weight * cuts.excess_delta(adj, pos, a, here, target, b)
        delta = after - before
        if delta <= 0 or (temperature > 0 and rand() < math.exp(-delta / temperature)):
            state.apply(a, target, b)
            cost += delta
            accepted += 1
            if cost < best_cost - 1e-12:
                best_cost = cost
                found = (cost, state.placement())
    return tried, accepted, cost, found


def _initial_temperature(state: AnnealState, draw: BlockDraws, limit: int, factor: float = 20.0
                         ) -> float:
    """``factor`` times the standard deviation of the cost change of random moves (as many
    as there are nodes, at least 20; proposals that miss do not count, or a large chip's
    first estimate could rest on a handful of moves, even none, and start the anneal cold)."""
    deltas = []
    wanted = max(20, len(state.nodes))
    for _ in range(50 * wanted):
        move = propose_move(state, draw, limit)
        if move:
            deltas.append(state.delta(*move)[0])
            if len(deltas) == wanted:
                break
    return factor * float(np.std(deltas)) if deltas else 0.0


def _cooling(rate: float) -> float:
    if rate > 0.96:
        return 0.5
    if rate > 0.8:
        return 0.9
    if rate > 0.15:
        return 0.95
    return 0.8


#: Exit temperature per unit of cost per pair (VPR's ``0.005 * cost / nets``).
EXIT_FACTOR = 0.005
#: Fewest moves per temperature a time-fitted schedule keeps, per node.
MIN_MOVES_PER_NODE = 1


def _exit_temperature(cost_per_pair: float) -> float:
    return EXIT_FACTOR * max(cost_per_pair, 1e-12)


def fitted_moves(moves_per_t: int, nodes: int, temperature: float, cost_per_pair: float,
                 moves_left: int) -> int:
    """Moves at this temperature: VPR's ``moves_per_t``, fewer when the temperatures still
    to go would not all get them from the ``moves_left`` of the budget (VPR fits
    ``inner_num`` to the effort it may spend; a schedule cut off while hot is wasted), but
    never fewer than :data:`MIN_MOVES_PER_NODE` per node (nor more than are left). The
    temperatures to go are counted at the slowest cooling factor, 0.95, as the middle of a
    schedule cools."""
    exit_temperature = _exit_temperature(cost_per_pair)
    if temperature <= exit_temperature:
        return max(0, min(moves_per_t, moves_left))
    to_go = math.log(exit_temperature / temperature) / math.log(0.95) + 1
    affordable = moves_left / to_go
    return max(0, min(moves_left, int(min(moves_per_t, max(MIN_MOVES_PER_NODE * nodes,
                                                           affordable)))))


def anneal(problem: PlacementProblem, fabric: RduFabric, start: dict[str, str], budget: Budget,
           *, seed: int = 0, inner_num: float = 1.0, temperature_factor: float = 20.0,
           range_floor: int = 1, moves: int | None = None, keep: Keep | None = None
           ) -> tuple[dict[str, str], float, AnnealStats]:
    """Anneal from ``start``; returns (best placement, its cost, counters).

    The work is ``moves`` proposals (default: what ``budget`` has left,
    :func:`planned_moves`), charged to ``budget``; its deadline is the outer cap, checked
    once per temperature (``stats["cut_short"]`` when it stopped the run).
    ``temperature_factor`` sets the initial temperature in standard deviations of random
    moves' cost change (VPR: 20, a melt; lower values refine ``start``). ``range_floor``: the
    smallest range limit (VPR: 1).
    ``keep(placement, cost)``, when given, is offered the state at the end of every
    temperature and the best at the end (a
    :class:`~formulations.placement.candidates.CandidatePool`: the search's top-k).

    Examples
    --------
    >>> from hardware import build_fabric, load_hardware
    >>> from model.graph import Graph, Node, Edge
    >>> from formulations.placement.problem import placement_problem
    >>> fab = build_fabric(load_hardware("tiny"))
    >>> g = Graph("t", [Node("a", unit="pcu"), Node("b", unit="pcu")], [Edge("a", "b")])
    >>> best, cost, _ = anneal(placement_problem(g, fab), fab, {"a": "U0_0", "b": "U3_3"},
    ...                        Budget(2))
    >>> cost
    0.0
    """
    moves = planned_moves(budget.left()) if moves is None else int(moves)
    draw = BlockDraws(np.random.default_rng(seed))
    state = AnnealState(problem, fabric, start)
    cost = best_cost = problem_cost(problem, start)
    best = dict(start)
    limit = max(state.x_range[1], state.y_range[1]) + 1
    max_limit = limit
    temperature = _initial_temperature(state, draw, limit, temperature_factor)
    moves_per_t = max(10, int(inner_num * len(state.nodes) ** (4 / 3)))
    stats = AnnealStats(temperatures=0, moves=0, accepted=0, proposals=0)
    pairs = max(1, len(problem.pairs))
    left = moves
    while left > 0 and best_cost > 0:
        if budget.wall_out():
            stats["cut_short"] = True
            break
        accepted = tried = 0
        count = fitted_moves(moves_per_t, len(state.nodes), temperature, cost / pairs, left)
        if count <= 0:
            break
        left -= count
        stats["proposals"] += count
        tried, accepted, cost, found = _moves(state, draw, count, limit, temperature, cost,
                                              best_cost)
        if found is not None:
            best_cost, best = found
        rate = accepted / tried if tried else 0.0
        stats["temperatures"] += 1
        stats["moves"] += tried
        stats["accepted"] += accepted
        temperature *= _cooling(rate)
        limit = int(min(max_limit, max(range_floor, round(limit * (1 - 0.44 + rate)))))
        if keep is not None and accepted:
            keep(state.placement(), cost)
        if temperature < _exit_temperature(cost / pairs):
            break
    if keep is not None:
        keep(best, best_cost)
    budget.spend(stats["proposals"] / MOVES_PER_SECOND)
    stats["range_limit"] = limit
    stats["final_cost"] = cost
    stats["final_temperature"] = temperature
    return best, problem_cost(problem, best), stats


def same_kind_step(problem: PlacementProblem, fabric: RduFabric) -> int:
    """The shortest step along a row or column between two sites of one unit kind, for the
    kind of the problem's nodes that needs the longest one (AGCU nodes aside: they jump).

    VPR's range limit goes down to 1, the next block, which on a homogeneous grid is a
    site of the same type. On a PCU/PMU checkerboard (``plasticine``, ``sn10``) it is 2:
    at range 1 a PCU can only step diagonally. The placement model's anneals use this
    floor: on ``resnet50_training`` section 2 of ``plasticine`` (60 PCU nodes, weights from
    1e-6 to 0.5), five-second warm anneals ended at 4.7e-5 (four seeds) with it and at
    7.1e-5 without (their range limit fell to 1 with about 30 % of the moves accepted).
    The VPR baseline keeps VPR's floor: on a checkerboard VPR's compressed grid of one
    block type is the whole grid, so its range of 1 also leaves diagonal moves only.
    """
    xy = _grid_xy(fabric)
    kinds = {problem.units[n] for n in problem.nodes} - {"agcu"}
    step = 1
    for kind in kinds:
        points = {xy[site] for site, ok in zip(problem.sites.ids, problem.hosts[kind]) if ok}
        step = max(step, _axis_step(points))
    return step


def _grid_xy(fabric: RduFabric) -> dict[str, tuple[int, int]]:
    """Site id -> the integer grid position the range window is measured in."""
    return {s.id: (int(math.floor(s.x)), int(math.floor(s.y))) for s in fabric.sites}


def _axis_step(points: set[tuple[int, int]]) -> int:
    """The shortest distance along an axis between two of ``points`` (1 when none share a
    row or column)."""
    gaps = []
    for axis in (0, 1):
        lines: dict[int, list[int]] = {}
        for p in points:
            lines.setdefault(p[1 - axis], []).append(p[axis])
        gaps += [b - a for line in lines.values() for a, b in zip(sorted(line), sorted(line)[1:])]
    return min(gaps, default=1)


def anneal_with_restarts(problem: PlacementProblem, fabric: RduFabric, start: dict[str, str],
                         budget: Budget, *, seed: int = 0, temperature_factor: float = 20.0,
                         range_floor: int = 1, moves: int | None = None,
                         keep: Keep | None = None
                         ) -> tuple[dict[str, str], float, AnnealStats]:
    """:func:`anneal` again and again from the best placement (seeds ``seed``,
    ``seed + 1``, ...) until its ``moves`` (default: what ``budget`` has left) are spent, a
    zero cost, or the budget's deadline; every anneal offers ``keep``."""
    moves = planned_moves(budget.left()) if moves is None else int(moves)
    best, cost, stats = anneal(problem, fabric, start, budget, seed=seed, moves=moves,
                               temperature_factor=temperature_factor, range_floor=range_floor,
                               keep=keep)
    runs = 1
    left = moves - stats["proposals"]
    while (cost > 0 and left >= max(10, len(problem.nodes)) and not stats.get("cut_short")
           and stats["proposals"] > 0):
        best, cost, more = anneal(problem, fabric, best, budget, seed=seed + runs, moves=left,
                                  temperature_factor=temperature_factor,
                                  range_floor=range_floor, keep=keep)
        runs += 1
        left -= more["proposals"]
        for key in ("temperatures", "moves", "accepted", "proposals"):
            stats[key] += more[key]
        if more.get("cut_short"):
            stats["cut_short"] = True
        if more["proposals"] == 0:
            break
    stats["runs"] = runs
    return best, cost, stats


#: The slow anneal of :func:`anneal_to_budget` gets this share of the moves per temperature
#: that would fill the moves left (a schedule cut by the budget while hot is wasted).
SLOW_COOLING = 0.5


def anneal_to_budget(problem: PlacementProblem, fabric: RduFabric, start: dict[str, str],
                     budget: Budget, *, seed: int = 0, fill: bool = True, range_floor: int = 1,
                     keep: Keep | None = None
                     ) -> tuple[dict[str, str], float, AnnealStats]:
    """VPR's answer to a budget: cool more slowly, rather than restart.

    The work is :func:`planned_moves` of what ``budget`` has left (a move count: the answer
    does not depend on the machine's speed), charged to it; its deadline is the cap. A
    first anneal (cooled within the budget) counts how many moves one schedule takes. When
    the moves left hold more than two such runs, one anneal from ``start`` with
    :data:`SLOW_COOLING` times as many moves per temperature as fit (slow cooling finds
    deeper minima than restarts on large sections); then restarts from the best placement
    until the budget is spent. Without ``fill`` only the first anneal runs. Returns the
    best placement, its cost and counters (``one_run``: the first anneal's moves in planned
    seconds; ``cut_short`` when the wall clock stopped it). Every anneal offers ``keep``
    (see :func:`anneal`).
    """
    moves = planned_moves(budget.left())
    best, cost, stats = anneal(problem, fabric, start, budget, moves=moves, seed=seed,
                               range_floor=range_floor, keep=keep)
    one_run = max(1, stats["proposals"])
    stats["one_run"] = round(one_run / MOVES_PER_SECOND, 6)
    left = moves - one_run if fill else 0
    if left > 2 * one_run and not stats.get("cut_short"):
        slow, slow_cost, more = anneal(problem, fabric, start, budget, moves=left,
                                       seed=seed + 1, inner_num=SLOW_COOLING * left / one_run,
                                       range_floor=range_floor, keep=keep)
        left -= more["proposals"]
        stats["cut_short"] = stats.get("cut_short", False) or more.get("cut_short", False)
        if slow_cost < cost:
            best, cost = slow, slow_cost
    if fill and left >= max(10, len(problem.nodes)) and cost > 0 and not stats.get("cut_short"):
        best, cost, more = anneal_with_restarts(problem, fabric, best, budget, moves=left,
                                                seed=seed + 2, range_floor=range_floor,
                                                keep=keep)
        if more.get("cut_short"):
            stats["cut_short"] = True
    return best, cost, stats


def place_annealing(graph: Graph, fabric: RduFabric, order: list[str], settings: SolveSettings, *,
                    site_penalty: dict[str, float] | None = None,
                    search: PlacementSearch | None = None,
                    keep: Keep | None = None
                    ) -> PlacementOutcome:
    """The registry form: anneal from the greedy placement of ``order``.

    Spends ``settings.budget()`` (planned seconds as a move budget:
    :data:`MOVES_PER_SECOND`; the run's deadline as the outer cap) and uses
    ``settings.seed`` (no solver). With
    ``search.anneal_restarts`` (the default) the annealer fills the time limit
    (:func:`anneal_to_budget`: a fast anneal, a slow one, then restarts from the best
    placement), so it gets the same time budget as the model it is compared with.
    ``search.anneal_congestion=False`` anneals the wirelength (and penalty) only -- a
    surrogate that moves faster while the placement is hot -- and reports the full cost
    of the result (the model's own warm start does this); the default anneals the full
    cost. ``search.cut_share`` sets the congestion term's share of each cut. ``keep``: offered
    the placements the anneals visit (:func:`anneal`), for a cost model to rank.

    Raises
    ------
    PlacementError
        When a unit kind has fewer sites than nodes.

    Examples
    --------
    >>> from hardware import build_fabric, load_hardware
    >>> from model.graph import Graph, Node, Edge
    >>> g = Graph("t", [Node("a", unit="pcu"), Node("b", unit="pmu")], [Edge("a", "b")])
    >>> fab = build_fabric(load_hardware("tiny"))
    >>> place_annealing(g, fab, ["a", "b"], SolveSettings(time_limit=1)).objective
    0.0
    """
    search = search or PlacementSearch()
    started = time.perf_counter()
    problem = placement_problem(graph, fabric, site_penalty, search.cut_share)
    check_capacity(problem)
    moves_on = problem if search.anneal_congestion else replace(problem, congestion_weight=0.0)
    first = greedy_place(graph, fabric, order)
    first_time = time.perf_counter() - started
    budget = settings.budget()
    if search.anneal_restarts:
        best, _, stats = anneal_to_budget(moves_on, fabric, first, budget, seed=settings.seed,
                                          keep=keep)
    else:
        best, _, stats = anneal(moves_on, fabric, first, budget, seed=settings.seed, keep=keep)
    cost = problem_cost(problem, best)
    extra = {"warm_start_cost": round(problem_cost(problem, first), 6),
             **cost_terms(problem, best),
             "first_solution_time": round(first_time, 4),
             "final_time": round(time.perf_counter() - started, 4)} | dict(stats)
    return PlacementOutcome(best, "simulated annealing (VPR schedule)", cost, extra=extra)
