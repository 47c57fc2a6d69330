"""Robust tabu search for placement: every swap and move priced at once, the best one taken.

Scope
-----
The placement cost without its congestion term is a quadratic assignment:
``sum_pairs w(a, b) * dist(site(a), site(b)) + sum_n penalty(site(n)) * degree(n)``.
With ``C[n, s]`` the cost of node ``n`` on site ``s`` while every other node stays (its
pairs' distances plus the penalty), a swap of nodes ``i`` and ``j`` changes the cost by

    ``C[i, site(j)] - C[i, site(i)] + C[j, site(i)] - C[j, site(j)] + 2 w(i, j) dist(i, j)``

(the last term puts back the pair ``(i, j)``, whose length a swap keeps), and a move of
``i`` to a free site ``s`` by ``C[i, s] - C[i, site(i)]``. So one numpy expression prices
the whole neighbourhood, and a move updates ``C`` only in the rows of the moved nodes'
partners. Each iteration takes the best move that is not tabu (Taillard's robust tabu
search for the QAP, 1991): a node may not go back to a site it left for a random tenure
of iterations, unless the move reaches a new best (aspiration). Unlike annealing, every
step is the best of all ``n^2 / 2`` swaps, and uphill steps leave local optima without
a temperature schedule.

Caveats
-------
The congestion term is left out (as in the model's warm anneals); callers keep an answer
only when its full cost (:func:`formulations.placement.problem.problem_cost`) is lower. An
iteration costs ``O(n^2 + n * free sites)``: about 0.1 ms at a hundred nodes, a few
milliseconds at six hundred. The work is a step count planned from the seconds a
:class:`~formulations.solver.budget.Budget` has left (:func:`planned_steps`), so same seed
and budget, same answer.
"""

from __future__ import annotations

import numpy as np

from formulations.solver import Budget

__all__ = ["tabu_search", "TabuSearch", "planned_steps", "ENTRIES_PER_SECOND"]

#: Neighbourhood entries (swaps and moves) a tabu step prices per planned second. Calibrated
#: on this project's 2-core machine: the 32-96-node generated sections and bert_l-3_training
#: section 0 on plasticine and sn10 priced 15-25 million entries per wall second (a step is
#: a few numpy passes over the ``n x n`` and ``n x free`` matrices), so a step budget takes
#: about its planned seconds.
ENTRIES_PER_SECOND = 15_000_000

#: The tabu tenure is drawn from this range, times the number of nodes (Taillard's
#: robust tabu search draws it around n).
TENURE = (0.2, 0.4)


def tabu_search(problem, index: dict[str, int], budget: Budget, seed: int = 0,
                stats: dict | None = None) -> tuple[dict[str, int], float]:
    """Tabu search from ``index`` (node -> site index) for what ``budget`` has left
    (:func:`planned_steps`: a step count, the same on every machine), charged to it; its
    deadline is the outer cap, and ``stats["cut_short"]`` is set when it stopped the search
    first. Returns the best placement seen and its cost without the congestion term."""
    search = TabuSearch(problem, index, np.random.default_rng(seed))
    planned = budget.left()
    steps = planned_steps(problem, index, planned)
    done = 0
    while done < steps and search.best_cost > 0:
        if budget.wall_out():
            if stats is not None:
                stats["cut_short"] = True
            break
        for _ in range(min(20, steps - done)):
            search.step()
        done += 20
    budget.spend(planned * min(1.0, done / steps))
    return dict(zip(problem.nodes, map(int, search.best))), search.best_cost


def planned_steps(problem, index: dict[str, int], seconds: float) -> int:
    """Tabu steps in ``seconds`` planned seconds: a step prices every swap and every move to a
    free site, ``n^2 + n * free sites`` entries, at :data:`ENTRIES_PER_SECOND`."""
    n = len(problem.nodes)
    free = len(problem.sites.ids) - n
    entries = max(1, n * n + n * max(0, free))
    return max(1, int(seconds * ENTRIES_PER_SECOND / entries))


class TabuSearch:
    """The state of one robust tabu search: positions, the cost matrix ``C``, the tabu list.

    ``TabuSearch(problem, index, rng)`` starts from ``index`` (node -> site index);
    each :meth:`step` takes the best allowed swap or move. ``pos`` holds the current site
    index of every node (in ``problem.nodes`` order) and ``cost`` its cost without the
    congestion term; ``best`` and ``best_cost`` the best seen.
    """

    def __init__(self, problem, index, rng):
        nodes = problem.nodes
        n = len(nodes)
        k = {v: i for i, v in enumerate(nodes)}
        self.rng = rng
        self.dist = problem.sites.dist
        self.weight = np.zeros((n, n))
        for a, b, w in problem.pairs:
            self.weight[k[a], k[b]] += w
            self.weight[k[b], k[a]] += w
        self.partners = [np.flatnonzero(row) for row in self.weight]
        self.pos = np.array([index[v] for v in nodes])
        degree = np.array([problem.degree[v] for v in nodes])
        self.cost_at = self.weight @ self.dist[self.pos] + np.outer(degree, problem.penalty)
        self.hosts = np.array([problem.hosts[problem.units[v]] for v in nodes])
        self.free = np.ones(len(problem.sites.ids), dtype=bool)
        self.free[self.pos] = False
        self.tabu_until = np.zeros_like(self.cost_at, dtype=np.int64)
        self.cost = float(np.sum(self.weight * self.dist[np.ix_(self.pos, self.pos)]) / 2
                          + degree @ problem.penalty[self.pos])
        self.best, self.best_cost = self.pos.copy(), self.cost
        self.iteration = 0
        self.tenure = [max(1, int(f * n)) for f in TENURE]

    def step(self) -> None:
        """Take the best allowed swap or move (the least bad one when none improves)."""
        self.iteration += 1
        swap_delta = self._swap_deltas()
        i, j = self._pick(swap_delta)
        sites, move_delta = self._move_deltas()
        best_move = np.inf
        if sites.size:
            m, k = self._pick(move_delta)
            s, best_move = sites[k], move_delta[m, k]
        if min(swap_delta[i, j], best_move) == np.inf:
            return
        if swap_delta[i, j] <= best_move:
            pi, pj = self.pos[i], self.pos[j]
            self.cost += swap_delta[i, j]
            self._relocate(i, pj)
            self._relocate(j, pi)
        else:
            self.cost += best_move
            self.free[self.pos[m]], self.free[s] = True, False
            self._relocate(m, s)
        if self.cost < self.best_cost - 1e-12:
            self.best, self.best_cost = self.pos.copy(), self.cost

    def _pick(self, delta: np.ndarray) -> tuple[int, int]:
        """A random one of the cheapest entries (ties are common: many sites are alike)."""
        low = delta.min()
        ties = np.flatnonzero(delta <= low + 1e-9 * max(1.0, abs(low))) if low < np.inf else [0]
        return np.unravel_index(self.rng.choice(ties), delta.shape)

    def _swap_deltas(self) -> np.ndarray:
        here = self.cost_at[:, self.pos]                  # here[i, j] = C[i, site(j)]
        own = np.diag(here)
        delta = (here + here.T - own[:, None] - own[None, :]
                 + 2 * self.weight * self.dist[np.ix_(self.pos, self.pos)])
        legal = self.hosts[:, self.pos] & self.hosts[:, self.pos].T
        tabu = self.tabu_until[:, self.pos] > self.iteration
        allowed = legal & ~(tabu & tabu.T) | (self.cost + delta < self.best_cost - 1e-12)
        allowed &= legal
        return np.where(np.triu(allowed, 1), delta, np.inf)

    def _move_deltas(self) -> tuple[np.ndarray, np.ndarray]:
        """The free sites and, per node and free site, the cost change of moving there."""
        sites = np.flatnonzero(self.free)
        delta = self.cost_at[:, sites] - self.cost_at[np.arange(len(self.pos)), self.pos][:, None]
        tabu = self.tabu_until[:, sites] > self.iteration
        allowed = self.hosts[:, sites] & (~tabu | (self.cost + delta < self.best_cost - 1e-12))
        return sites, np.where(allowed, delta, np.inf)

    def _relocate(self, node: int, site: int) -> None:
        old = self.pos[node]
        self.tabu_until[node, old] = self.iteration + self.rng.integers(*self.tenure,
                                                                         endpoint=True)
        partners = self.partners[node]
        self.cost_at[partners] += np.outer(self.weight[partners, node],
                                           self.dist[site] - self.dist[old])
        self.pos[node] = site
