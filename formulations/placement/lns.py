"""Large-neighbourhood search for the placement model (sections too big to prove).

Scope
-----
:func:`lns` improves a placement by re-solving a *window* of nodes exactly (the
placement model of :func:`formulations.placement.model.build_placement_model`, on CP-SAT
or a MILP backend) with every other node fixed, again and again until the time
limit (a budget of work: planned seconds charged per round and per move, never
measured, so same seed, same answer). Each round:

* picks a *seed node* with probability proportional to its share of the current
  cost (plus a little for every node), so the search works where the cost is;
* grows a window around it with one of three neighbourhoods, taken in turn:
  ``graph`` (a connected subgraph: breadth first from the seed, costliest pairs
  first), ``spatial`` (the nodes on the sites nearest the seed's site: a block of
  the chip that can be permuted), ``net`` (the seed's costliest pair: nodes near
  both of its ends, so the pair can be pulled together);
* lets each window node take its own site, the window's other sites, and the free
  sites near the window and near its fixed partners;
* scales the window's weights on their own (:meth:`PlacementProblem.quantum_of`), so
  light pairs are not rounded away next to heavy ones.

The window size adapts: it grows when windows are solved to optimality quickly and
shrinks when they use up their work limit. After ``patience`` rounds without progress the
search stops; with ``patience=None`` it spends the whole
:class:`~formulations.solver.budget.Budget`, sharing the time between LNS
rounds and VPR anneals from the best placement by their recent rate of improvement.
A window's answer is kept only when its true cost is lower. Without patience the time
goes, slice by slice, to the faster improver of two moves: LNS rounds, and hot anneals
from the incumbent polished by a short robust tabu search
(:mod:`formulations.placement.tabu`; annealing stops near a local optimum, tabu search
finishes the descent with the best of all swaps at every step). Measured over three
seeds at 10 s on the 96- and 128-node generated sections and the bert sections of
``plasticine`` and ``sn10``: these two modes beat annealing by 10-38 % (medians) on all
four; tabu or independent-set matching as slices of their own did no better.

Caveats
-------
A round costs tens to hundreds of milliseconds (model building in Python and a
solver start), against microseconds for an annealing move: on dense sections where
every node can take every site (``unit: any``) the windows find little that the
annealer does not, and the gains there come from the polished anneals. Results vary
from seed to seed by more than the gains on some sections (see the placement benchmark).
"""

from __future__ import annotations

import time
from typing import Callable

import numpy as np

from formulations.placement.annealing import anneal_with_restarts, same_kind_step
from formulations.placement.model import build_placement_model, decode_placement, hint_placement
from formulations.placement.problem import PlacementProblem, problem_cost
from formulations.placement.tabu import tabu_search
from formulations.solver import Budget, was_cut_short, work_of, work_options
from hardware import RduFabric

__all__ = ["lns", "NEIGHBOURHOODS"]

#: The neighbourhoods, taken in turn.
NEIGHBOURHOODS = ("graph", "spatial", "net")
#: Planned seconds of deterministic work one window may use at most.
WINDOW_SECONDS = 0.6
#: Planned seconds charged per round besides its solver's work: choosing the window,
#: building its model and starting a solver. Calibrated on this project's 2-core machine
#: (rounds on the 32-128-node generated sections and the DNN sections of the placement
#: benchmark spent 0.03-0.1 s of wall time outside the solver).
ROUND_SECONDS = 0.01
#: Limits of the adaptive window size.
MIN_WINDOW, MAX_WINDOW = 4, 20
#: Without patience, the search runs in slices of this many planned seconds, each given to
#: LNS rounds or to VPR anneals (restarts from the best placement, started at
#: KICK_TEMPERATURE standard deviations of a random move), whichever improved faster;
#: every EXPLORE_EVERY-th slice goes to the other one.
SLICE_SECONDS, KICK_TEMPERATURE, EXPLORE_EVERY = 1.5, 20.0, 4
#: Share of an annealing slice left to the tabu search that polishes its result.
TABU_POLISH = 0.25
#: The moves of the time-sliced portfolio: LNS rounds, anneals (polished by tabu search).
MODES = ("lns", "anneal")
#: Solver options for the windows, per backend. CP-SAT's presolve costs more than it saves
#: on a window (a few hundred binaries, hinted): without it, and with the LP relaxation's
#: cuts on, 15 windows of 16-20 nodes were proved 1.3-5 times faster (the 20-node windows
#: of the 96-node generated section: 13 of 15 proved within 0.6 s instead of 3). HiGHS
#: restarts its search after presolving fixed columns at the root; without restarts the
#: same windows went 1.2-1.8 times faster on four of five sections (0.5 s -> 0.8 s per 15 on
#: the fifth). HiGHS's presolve, heuristic effort, symmetry detection and objective
#: scaling made no difference.
WINDOW_OPTIONS = {"cp-sat": {"cp_model_presolve": False, "linearization_level": 2},
                  "highs": {"mip_allow_restart": False}}
#: A round improves "significantly" when the cost drops by this share.
MIN_IMPROVEMENT = 1e-3


def lns(problem: PlacementProblem, fabric: RduFabric, index: dict[str, int], cost: float,
        budget: Budget, *, backend: str, seed: int, window: int, patience: int | None,
        one_anneal: float = 0.0,
        keep: Callable[[dict[str, str], float], None] | None = None) -> tuple[dict, float, dict]:
    """Improve ``index`` (node -> site index, cost ``cost``) with what ``budget`` has left.

    The budget is work, never the clock: a round is charged :data:`ROUND_SECONDS` plus
    the deterministic work its window's solve used (CP-SAT's deterministic time, HiGHS's
    nodes; each window may use :data:`WINDOW_SECONDS`), an anneal or tabu slice its move or
    step budget; the budget's deadline is only the outer cap, and ``stats["cut_short"]``
    says when it stopped the search first.

    With a ``patience`` the search stops after that many rounds without a significant
    improvement. Without (``None``) it spends the whole budget as a portfolio of the
    :data:`MODES` in slices of :data:`SLICE_SECONDS` planned seconds: LNS rounds, or VPR
    anneals restarted from the best placement and polished by tabu search (kept only when
    better; such a slice lasts long enough for 1.25 times ``one_anneal``, the planned
    seconds of one anneal, so that it can cool down); after one slice of each, every slice
    goes to the move with the best recent improvement per planned second, and every
    :data:`EXPLORE_EVERY`-th slice to the other, so a stalled move hands the time on.

    ``keep(placement, cost)`` (node -> site id), when given, is offered every improving
    incumbent, every kick's result and the states its anneals visit (a
    :class:`~formulations.placement.candidates.CandidatePool`: the search's top-k).

    Returns
    -------
    (index, cost, stats)
        The best placement found, its cost
        (:func:`~formulations.placement.problem.problem_cost`), and counters (``lns_rounds``,
        ``lns_improved``, ``annealing_kicks``, ``final_window``, improvements per
        neighbourhood, ``work``: planned seconds spent).
    """
    search = _Search(problem, index, cost, budget, backend, seed, window,
                     range_floor=same_kind_step(problem, fabric), keep=keep)
    if patience is not None:
        patience = max(patience, len(problem.nodes) // max(1, window))
        while (budget.left() > 0.05 and search.cost > 0 and search.stale < patience
               and not search.wall_out()):
            search.round(budget)
        return search.index, search.cost, search.finish()
    rates: dict[str, float] = {}
    slices = 0
    while budget.left() > 0.05 and search.cost > 0 and not search.wall_out():
        mode = _next_mode(rates, slices)
        before = search.cost
        length = SLICE_SECONDS
        if mode == "anneal":  # long enough to cool down, plus the tabu polish
            length = max(length, 1.25 * one_anneal / (1 - TABU_POLISH))
        piece = budget.share(length)
        if mode == "anneal":
            search.anneal(fabric, piece)
        else:
            while piece.left() > 0.05 and search.cost > 0 and not search.wall_out():
                search.round(piece)
        rates[mode] = (before - search.cost) / max(before, 1e-300) / max(1e-3, piece.spent)
        search.stats[f"gain_{mode}"] = search.stats.get(f"gain_{mode}", 0.0) + before - search.cost
        slices += 1
    search.stats["slices"] = slices
    return search.index, search.cost, search.finish()


def _next_mode(rates: dict[str, float], slices: int) -> str:
    """Each move once (in :data:`MODES` order), then the fastest improver, and every
    :data:`EXPLORE_EVERY`-th slice the others in turn."""
    for mode in MODES:
        if mode not in rates:
            return mode
    ranked = sorted(MODES, key=lambda m: (-rates[m], m))
    if slices % EXPLORE_EVERY:
        return ranked[0]
    return ranked[1 + (slices // EXPLORE_EVERY) % (len(ranked) - 1)]


class _Search:
    """The incumbent placement, the moves that improve it, and the budget they spend
    (planned seconds, counted, never measured)."""

    def __init__(self, problem, index, cost, budget: Budget, backend, seed, window,
                 range_floor=1, keep=None):
        self.problem, self.index, self.cost = problem, dict(index), cost
        self.budget = budget
        self.backend, self.seed, self.size = backend, seed, window
        self.range_floor = range_floor  # of the kicks' anneals
        self.rng = np.random.default_rng(seed)
        self.adjacency = _adjacency(problem)
        self.stale = 0
        self.keep = keep
        self.stats = {"lns_rounds": 0, "lns_improved": 0, "annealing_kicks": 0}
        self.stats |= {f"improved_{k}": 0 for k in NEIGHBOURHOODS}

    def wall_out(self) -> bool:
        """Whether the run's deadline has passed or the run is interrupted (then the
        search is marked cut short)."""
        if self.budget.wall_out():
            self.stats["cut_short"] = True
            return True
        return False

    def finish(self) -> dict:
        self.stats["work"] = round(self.budget.spent, 6)
        return self.stats

    def round(self, budget: Budget) -> None:
        """One LNS round, charged to ``budget``: a window in the next neighbourhood, solved
        exactly within at most :data:`WINDOW_SECONDS` of what ``budget`` has left."""
        stats = self.stats
        stats["lns_rounds"] += 1
        kind = NEIGHBOURHOODS[stats["lns_rounds"] % len(NEIGHBOURHOODS)]
        free = _window(self.problem, self.index, self.adjacency, self.rng, kind, self.size)
        limit = min(WINDOW_SECONDS, budget.left() - ROUND_SECONDS)
        new_index, solved_fast, cut = _solve_window(
            self.problem, self.index, free, self.backend, budget.share(limit),
            self.seed + stats["lns_rounds"])
        budget.spend(ROUND_SECONDS)
        if cut:
            stats["cut_short"] = True
        self.size = _adapt(self.size, solved_fast, len(self.problem.nodes))
        stats["final_window"] = self.size
        new_cost = (problem_cost(self.problem, self.problem.to_site_ids(new_index)) if new_index
                    else self.cost)
        if new_index and new_cost < self.cost - 1e-12 * max(1.0, self.cost):
            significant = new_cost < self.cost * (1 - MIN_IMPROVEMENT)
            self.stale = 0 if significant else self.stale + 1
            self.index, self.cost = new_index, new_cost
            if self.keep is not None:
                self.keep(self.problem.to_site_ids(new_index), new_cost)
            stats["lns_improved"] += 1
            stats[f"improved_{kind}"] += 1
            stats["last_improvement"] = time.perf_counter()
        else:
            self.stale += 1

    def anneal(self, fabric: RduFabric, budget: Budget) -> None:
        """A VPR anneal from the incumbent, polished by a short tabu search (annealing ends
        near, not at, a local optimum), kept only when better; ``budget`` is spent whole."""
        if budget.seconds < 0.1:
            budget.spend(budget.left())
            return
        self.stats["annealing_kicks"] += 1
        seed = self.seed + 7919 * self.stats["annealing_kicks"]
        index, cut = _kick(self.problem, fabric, self.index,
                           budget.share(budget.seconds * (1 - TABU_POLISH)), seed,
                           self.range_floor, self.keep)
        index, _ = tabu_search(self.problem, index, budget.share(budget.seconds * TABU_POLISH),
                               seed=seed, stats=self.stats)
        budget.spend(budget.left())
        if cut:
            self.stats["cut_short"] = True
        cost = problem_cost(self.problem, self.problem.to_site_ids(index))
        if self.keep is not None:
            self.keep(self.problem.to_site_ids(index), cost)
        if cost < self.cost - 1e-12 * max(1.0, self.cost):
            self.index, self.cost, self.stale = index, cost, 0
            self.stats["last_improvement"] = time.perf_counter()


def _adapt(size: int, solved_fast: bool | None, nodes: int) -> int:
    if solved_fast is None:
        return size
    if solved_fast:
        return min(MAX_WINDOW, nodes, size + 1)
    return max(MIN_WINDOW, size - 2)


def _kick(problem, fabric: RduFabric, index, budget: Budget, seed, range_floor, keep=None
          ) -> tuple[dict[str, int], bool]:
    """Leave a local optimum: a hot anneal from it (its result may be worse); also whether
    the wall clock cut it short. ``keep`` is offered the anneal's states."""
    placed, _, stats = anneal_with_restarts(problem, fabric, problem.to_site_ids(index), budget,
                                            seed=seed, temperature_factor=KICK_TEMPERATURE,
                                            range_floor=range_floor, keep=keep)
    return ({n: problem.sites.index[s] for n, s in placed.items()},
            bool(stats.get("cut_short")))


def _adjacency(problem) -> dict[str, list[tuple[str, float]]]:
    adjacency: dict[str, list[tuple[str, float]]] = {n: [] for n in problem.nodes}
    for a, b, w in problem.pairs:
        adjacency[a].append((b, w))
        adjacency[b].append((a, w))
    return adjacency


def _node_costs(problem, index, adjacency) -> np.ndarray:
    dist = problem.sites.dist
    return np.array([sum(w * dist[index[n], index[m]] for m, w in adjacency[n])
                     for n in problem.nodes])


def _seed_node(problem, index, adjacency, rng) -> str:
    """A node drawn with probability ~ its cost share (every node keeps some chance)."""
    costs = _node_costs(problem, index, adjacency)
    total = costs.sum()
    weights = costs / total + 0.2 / len(costs) if total > 0 else np.ones(len(costs))
    return problem.nodes[int(rng.choice(len(costs), p=weights / weights.sum()))]


def _window(problem, index, adjacency, rng, kind: str, size: int) -> list[str]:
    seed_node = _seed_node(problem, index, adjacency, rng)
    if kind == "graph":
        return _graph_window(problem, index, adjacency, seed_node, size)
    if kind == "net" and adjacency[seed_node]:
        dist = problem.sites.dist
        partner = max(adjacency[seed_node],
                      key=lambda mw: (mw[1] * dist[index[seed_node], index[mw[0]]], mw[0]))[0]
        half = _spatial_window(problem, index, seed_node, (size + 1) // 2)
        rest = [n for n in _spatial_window(problem, index, partner, size) if n not in half]
        return half + rest[:size - len(half)]
    return _spatial_window(problem, index, seed_node, size)


def _graph_window(problem, index, adjacency, seed_node, size) -> list[str]:
    """Breadth first from ``seed_node``, the costliest pairs first."""
    dist = problem.sites.dist
    chosen, frontier = [seed_node], [seed_node]
    taken = {seed_node}
    while frontier and len(chosen) < size:
        nxt = []
        for n in frontier:
            ranked = sorted(adjacency[n], key=lambda mw: (-mw[1] * dist[index[n], index[mw[0]]],
                                                          -mw[1], mw[0]))
            for m, _ in ranked:
                if m not in taken and len(chosen) < size:
                    taken.add(m)
                    chosen.append(m)
                    nxt.append(m)
        frontier = nxt
    return chosen


def _spatial_window(problem, index, seed_node, size) -> list[str]:
    d = problem.sites.dist[index[seed_node]]
    return sorted(problem.nodes, key=lambda n: (d[index[n]], n))[:size]


def _solve_window(problem, index, free, backend, budget: Budget, seed
                  ) -> tuple[dict[str, int] | None, bool | None, bool]:
    """Re-place ``free`` within ``budget`` (the work used is charged to it); returns (new
    index or None, whether it was proved with a quarter of its budget, whether the wall
    clock cut the solve short)."""
    seconds = budget.seconds
    if seconds <= 0.05:
        return None, None, False
    free_set = set(free)
    fixed = {n: s for n, s in index.items() if n not in free_set}
    sites = np.array(_window_sites(problem, index, free, fixed))
    candidates = _window_candidates(problem, index, free, sites)
    model, x = build_placement_model(problem, free, candidates, fixed)
    hint_placement(model, x, index, free)
    # its work limit decides; the wall clock only at the run's deadline
    options = work_options(backend, seconds) | WINDOW_OPTIONS.get(backend, {})
    result = model.solve(backend=backend, time_limit=budget.wall_left(), seed=seed, threads=1,
                         mip_gap=1e-6, options=options)
    used = work_of(result)
    used = seconds if used is None else min(seconds, used)
    budget.spend(used)
    fast = result.status.name == "OPTIMAL" and used < 0.25 * seconds
    if not result.has_solution:
        return None, False, was_cut_short(result)
    return fixed | decode_placement(result, x, free), fast, was_cut_short(result)


def _window_candidates(problem, index, free, sites: np.ndarray, radius: int = 1
                       ) -> dict[str, list[int]]:
    """Per window node, the window sites it can host that lie within ``radius`` of its own
    site or of a partner's current site (its own site always; every window site for a
    node without partners), so windows stay small enough to prove."""
    dist = problem.sites.dist
    partners: dict[str, list[int]] = {n: [index[n]] for n in free}
    free_set = set(free)
    for a, b, _ in problem.pairs:
        if a in free_set:
            partners[a].append(index[b])
        if b in free_set:
            partners[b].append(index[a])
    out = {}
    for n in free:
        near = dist[np.ix_(partners[n], sites)].min(axis=0) <= radius
        ok = near & problem.hosts[problem.units[n]][sites]
        out[n] = sorted({int(s) for s in sites[ok]} | {index[n]})
    return out


def _window_sites(problem, index, free, fixed, radius: int = 2) -> list[int]:
    """The window's own sites, the free sites within ``radius`` of them, and the free
    sites sharing a switch with a fixed partner of a window node."""
    own = [index[n] for n in free]
    taken = set(fixed.values())
    dist = problem.sites.dist
    near = dist[own].min(axis=0) <= radius
    free_set = set(free)
    partners = sorted({fixed[m] for a, b, _ in problem.pairs for n, m in ((a, b), (b, a))
                       if n in free_set and m in fixed})
    if partners:
        near |= dist[partners].min(axis=0) <= 0
    return sorted(set(own) | {int(s) for s in np.flatnonzero(near) if int(s) not in taken})
