"""The classic baseline: iterative modulo list scheduling with PathFinder routing.

Scope
-----
:func:`list_schedule` tries II from the lower bound up. At one II (:func:`schedule_at_ii`):

1. **order**: operations by their earliest issue at that II (recurrences included, no hops),
   then by their height (longest latency path to the end of the iteration);
2. **place**: each operation in turn gets the earliest ``(PE, cycle)`` whose slot is free and
   whose hop distances to its placed neighbours fit their issue cycles (loop-carried edges to
   placed consumers cap it from above), among those the one whose operand routes cost least;
   every route is a cheapest time-exact path in the routing resource graph (PE registers per
   cycle, links per cycle, both modulo II) with PathFinder's costs;
3. **negotiate**: rip up and re-route every value with growing present-congestion and
   history costs (PathFinder, McMurchie and Ebeling 1995) until no register or link slot is
   over its capacity, or give up the II.

It is the warm start of the CP-SAT sweep (:mod:`formulations.cgra.sweep`) and, as
``--placer list``, the baseline the benchmark compares against. Deterministic for a seed.

Examples
--------
>>> from hardware import load_hardware
>>> from model.graph import Graph, Node, Edge
>>> from formulations.cgra.problem import problem_from_graph
>>> g = Graph("acc", [Node("a", op="LOAD"), Node("b", op="MUL"), Node("c", op="ADD")],
...           [Edge("a", "b"), Edge("b", "c"), Edge("c", "c", distance=1)])
>>> s = list_schedule(problem_from_graph(g, load_hardware("cgra4x4")))
>>> s.ii, s.length
(1, 5)
"""

from __future__ import annotations

import heapq
import itertools
import math
import random
import time
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Callable, Iterator

import networkx as nx

from formulations.cgra.problem import (CgraInfeasible, CgraProblem, CgraSchedule, Step,
                                       lower_bounds, precheck, time_windows)
from formulations.cgra.work import (PLACE_EDGE_STEPS, PLACE_STEPS, ROUTER_STEPS_PER_SECOND)
from formulations.solver import Budget

__all__ = ["list_schedule", "schedule_at_ii", "schedule_with_ejection", "eject_from_top",
           "descend", "NearMiss", "SPREAD_TIME_WEIGHT",
           "route_fixed", "Router", "NEGOTIATION_ROUNDS", "DESCENT_SEED", "EJECTIONS",
           "CANDIDATES", "GROWTH", "LARGE_KERNEL", "ROUNDS", "LIST_SECONDS", "EJECTION"]

#: PathFinder rounds of rip-up and re-route per II.
NEGOTIATION_ROUNDS = 40
#: PathFinder gives up after this many rounds without less over-use.
STALL_ROUNDS = 10
#: Cost of one register or link slot over capacity when an operation is placed.
OVERUSE_PENALTY = 40.0
#: Placements whose routes are costed per operation (earliest first).
CANDIDATES = 12
#: Each II tried on the way up is this many times the last (at least one more).
GROWTH = 1.25
#: Above this many operations one attempt per II on the way up (they take seconds).
LARGE_KERNEL = 60
#: Upward passes over the IIs (each with other seeds) before the baseline gives up.
ROUNDS = 4
#: Cost of one cycle of delay of an operation, against its routes' cost.
TIME_WEIGHT = 2.0
#: The same in a spread attempt (:func:`schedule_at_ii`), which costs every PE.
SPREAD_TIME_WEIGHT = 0.5
#: Ejections per operation an attempt of :func:`schedule_with_ejection` may make.
EJECTIONS = 20
#: First seed of :func:`descend`'s attempts (far from the seeds :func:`list_schedule` uses).
DESCENT_SEED = 1000
#: The method of a mapping :func:`schedule_with_ejection` found.
EJECTION = "iterative modulo scheduling (ejection) + PathFinder"
#: Planned seconds of :func:`list_schedule` called without a budget.
LIST_SECONDS = 10.0
_BIG = 10**9


@dataclass
class Router:
    """Routing resource usage modulo II and PathFinder's costs.

    ``cells[u]`` maps the ``(PE, cycle)`` cells of value ``u`` to the number of its routes
    through them; ``moves[u]`` its link uses ``(p, q, cycle)`` (p at ``cycle`` to q at
    ``cycle + 1``). ``reg_use`` / ``link_use`` count distinct values per slot.
    """

    problem: CgraProblem
    ii: int
    present: float = 0.5
    reg_use: dict = field(default_factory=lambda: defaultdict(int))
    link_use: dict = field(default_factory=lambda: defaultdict(int))
    reg_hist: dict = field(default_factory=lambda: defaultdict(float))
    link_hist: dict = field(default_factory=lambda: defaultdict(float))
    cells: dict = field(default_factory=lambda: defaultdict(lambda: defaultdict(int)))
    moves: dict = field(default_factory=lambda: defaultdict(lambda: defaultdict(int)))
    paths: dict = field(default_factory=dict)
    over: int = 0
    #: The search's budget: every route spends its steps on it (None: not counted).
    budget: Budget | None = None
    #: Cells examined per PE expanded at one cycle (the PE and its out-links).
    fan: float = field(init=False)

    def __post_init__(self):
        self.fan = 1.0 + len(self.problem.link_list) / max(1, self.problem.pe_count)

    def cell_cost(self, u: int, pe: int, c: int) -> float:
        if self.cells[u].get((pe, c)):
            return 0.0
        key = (pe, c % self.ii)
        over = max(0, self.reg_use[key] + 1 - self.problem.registers)
        return (1.0 + self.reg_hist[key]) * (1.0 + self.present * over * 4)

    def link_cost(self, u: int, p: int, q: int, c: int) -> float:
        if self.moves[u].get((p, q, c)):
            return 0.0
        key = (p, q, c % self.ii)
        over = max(0, self.link_use[key])
        return (1.0 + self.link_hist[key]) * (1.0 + self.present * over * 4)

    def route(self, u: int, src: Step, dst: Step) -> tuple[float, list[Step] | None]:
        """The cheapest time-exact path of value ``u`` from ``src`` to ``dst``.

        Dynamic programming over the cycles ``src..dst``: each cell's cost is evaluated once
        per cycle (not once per incoming link), and PEs that cannot reach ``dst`` in the
        cycles left are never expanded.
        """
        (p0, c0), (p1, c1) = src, dst
        dist = self.problem.dist
        if c1 < c0 or dist[p0][p1] > c1 - c0:
            return float("inf"), None
        links, ii, cap = self.problem.links, self.ii, self.problem.registers
        mine, moved = self.cells[u], self.moves[u]
        reg_use, reg_hist, link_use, link_hist = (self.reg_use, self.reg_hist, self.link_use,
                                                  self.link_hist)
        press = self.present * 4
        to_dst = [row[p1] for row in dist]
        cost = {p0: self.cell_cost(u, p0, c0)}
        back: list[dict[int, int]] = []
        steps = 0
        for c in range(c0, c1):
            steps += len(cost)
            left, slot = c1 - c - 1, (c + 1) % ii
            nxt: dict[int, float] = {}
            prev: dict[int, int] = {}
            cell: dict[int, float] = {}
            for p in sorted(cost):
                base = cost[p]
                for q in [p] + links[p]:
                    if to_dst[q] > left:
                        continue
                    w = cell.get(q)
                    if w is None:
                        if mine.get((q, c + 1)):
                            w = 0.0
                        else:
                            key = (q, slot)
                            over = reg_use.get(key, 0) + 1 - cap
                            w = (1.0 + reg_hist.get(key, 0.0)) * (1.0 + press * over
                                                                  if over > 0 else 1.0)
                        cell[q] = w
                    w += base
                    if q != p and not moved.get((p, q, c)):
                        key = (p, q, c % ii)
                        w += (1.0 + link_hist.get(key, 0.0)) * (1.0 + press * link_use.get(key, 0))
                    if w < nxt.get(q, float("inf")):
                        nxt[q], prev[q] = w, p
            cost = nxt
            back.append(prev)
        if self.budget is not None:
            self.budget.spend(steps * self.fan / ROUTER_STEPS_PER_SECOND)
        if p1 not in cost:
            return float("inf"), None
        path = [(p1, c1)]
        p = p1
        for c in range(c1 - 1, c0 - 1, -1):
            p = back[c - c0][p]
            path.append((p, c))
        return cost[p1], path[::-1]

    def add(self, u: int, key: tuple, path: list[Step]) -> None:
        """Commit ``path`` as the route of edge ``key`` of value ``u``."""
        self.paths[key] = path
        cap = self.problem.registers
        for pe, c in path:
            if self.cells[u][(pe, c)] == 0:
                slot = (pe, c % self.ii)
                self.reg_use[slot] += 1
                self.over += self.reg_use[slot] > cap
            self.cells[u][(pe, c)] += 1
        for (p, c), (q, _) in zip(path, path[1:]):
            if p != q:
                if self.moves[u][(p, q, c)] == 0:
                    slot = (p, q, c % self.ii)
                    self.link_use[slot] += 1
                    self.over += self.link_use[slot] > 1
                self.moves[u][(p, q, c)] += 1

    def remove(self, u: int, key: tuple) -> None:
        """Rip up the route of edge ``key`` of value ``u``."""
        path = self.paths.pop(key)
        cap = self.problem.registers
        for pe, c in path:
            self.cells[u][(pe, c)] -= 1
            if self.cells[u][(pe, c)] == 0:
                del self.cells[u][(pe, c)]
                slot = (pe, c % self.ii)
                self.over -= self.reg_use[slot] > cap
                self.reg_use[slot] -= 1
        for (p, c), (q, _) in zip(path, path[1:]):
            if p != q:
                self.moves[u][(p, q, c)] -= 1
                if self.moves[u][(p, q, c)] == 0:
                    del self.moves[u][(p, q, c)]
                    slot = (p, q, c % self.ii)
                    self.over -= self.link_use[slot] > 1
                    self.link_use[slot] -= 1

    def overused(self) -> int:
        """Register and link slots over their capacity (0: the routes are legal), counted
        with multiplicity (a slot two values over counts 2); kept up to date by
        :meth:`add` and :meth:`remove`."""
        return self.over

    def age(self) -> None:
        """PathFinder's history: every over-used slot costs more from now on."""
        for key, n in self.reg_use.items():
            if n > self.problem.registers:
                self.reg_hist[key] += 0.5 * (n - self.problem.registers)
        for key, n in self.link_use.items():
            if n > 1:
                self.link_hist[key] += 0.5 * (n - 1)


def _sccs(problem: CgraProblem) -> list[int]:
    """Recurrence index per operation (-1 outside every loop-carried cycle)."""
    g = nx.DiGraph()
    g.add_nodes_from(range(problem.n))
    g.add_edges_from((u, v) for u, v, _ in problem.edges if u != v)
    out = [-1] * problem.n
    for k, comp in enumerate(sorted((sorted(c) for c in nx.strongly_connected_components(g)
                                     if len(c) > 1), key=lambda c: c[0])):
        for v in comp:
            out[v] = k
    return out


def _heights(problem: CgraProblem) -> list[int]:
    height = list(problem.latency)
    for _ in range(problem.n):
        changed = False
        for u, v, d in problem.edges:
            if d == 0 and height[v] + problem.latency[u] > height[u]:
                height[u], changed = height[v] + problem.latency[u], True
        if not changed:
            break
    return height


@dataclass
class NearMiss:
    """A list-scheduling attempt at ``ii`` that placed every operation (PE ``pe[v]``, issue
    cycle ``t[v]``) but left ``overused`` register or link slots over capacity; ``hot``: the
    operations at either end of a route that crosses one."""

    ii: int
    overused: int
    pe: list[int]
    t: list[int]
    hot: set[int] = field(default_factory=set)


@dataclass
class _Attempt:
    problem: CgraProblem
    ii: int
    router: Router
    pe: dict[int, int] = field(default_factory=dict)
    t: dict[int, int] = field(default_factory=dict)
    busy: set = field(default_factory=set)
    scc: list[int] = field(default_factory=list)
    #: Weight of the issue cycle against the route cost, and candidates costed per
    #: placement (None: every PE), :data:`TIME_WEIGHT` and :data:`CANDIDATES` unless spread.
    time_weight: float = TIME_WEIGHT
    candidates: int | None = CANDIDATES

    def closing(self, v: int) -> list[tuple[int, int]]:
        """Placed members ``w`` of ``v``'s recurrence and the latest issue of ``v`` that a
        path ``v -> ... -> w`` allows (latencies and distances, no hops)."""
        p, ii = self.problem, self.ii
        if not self.scc or self.scc[v] < 0:
            return []
        mates = [w for w in self.pe if self.scc[w] == self.scc[v]]
        out = []
        for w in mates:
            latest = {w: self.t[w]}
            for _ in range(len(mates) + 2):
                changed = False
                for a, b, d in p.edges:
                    if b in latest and self.scc[a] == self.scc[v] and (a not in self.pe or a == w):
                        cap = latest[b] + d * ii - p.latency[a]
                        if a != w and cap < latest.get(a, _BIG):
                            latest[a], changed = cap, True
                if not changed:
                    break
            if v in latest:
                out.append((w, latest[v]))
        return out

    def window(self, v: int, pe: int) -> tuple[int, int]:
        """Issue cycles of ``v`` on ``pe`` the placed neighbours allow (hops included)."""
        p, lo, hi = self.problem, 0, _BIG
        for u, w, d in p.edges:
            if w == v and u in self.pe:
                lo = max(lo, self.t[u] + p.latency[u] + p.dist[self.pe[u]][pe] - d * self.ii)
            if u == v and w in self.pe and w != v:
                hi = min(hi, self.t[w] + d * self.ii - p.latency[v] - p.dist[pe][self.pe[w]])
        return lo, hi

    def edges_of(self, v: int) -> list[tuple[int, int, int]]:
        """Edges of ``v`` whose both ends are placed once ``v`` is."""
        return [(u, w, d) for u, w, d in self.problem.edges
                if (w == v and (u in self.pe or u == v)) or (u == v and w in self.pe)]

    def route_cost(self, v: int, pe: int, t: int) -> tuple[float, dict]:
        """Cost of ``v``'s routes at ``(pe, t)``, each committed while the next is costed (so
        its operands see each other), plus :data:`OVERUSE_PENALTY` per slot over capacity."""
        self.pe[v], self.t[v] = pe, t
        total, paths = 0.0, {}
        before = self.router.overused()
        try:
            for u, w, d in self.edges_of(v):
                cost, path = self.router.route(u, self._src(u), self._dst(w, d))
                if path is None:
                    return float("inf"), {}
                total += cost
                paths[(u, w, d)] = path
                self.router.add(u, (u, w, d), path)
            return total + OVERUSE_PENALTY * (self.router.overused() - before), paths
        finally:
            for key in paths:
                self.router.remove(key[0], key)
            del self.pe[v], self.t[v]

    def _src(self, u: int) -> Step:
        return self.pe[u], self.t[u] + self.problem.latency[u]

    def _dst(self, w: int, d: int) -> Step:
        return self.pe[w], self.t[w] + d * self.ii

    def place(self, v: int, earliest: int, rng: random.Random) -> bool:
        """Place ``v`` at the cheapest of the earliest feasible candidates (see module)."""
        p = self.problem
        self.charge(v)
        candidates = []
        pes = list(p.allowed[v])
        rng.shuffle(pes)
        closing = self.closing(v)
        for pe in pes:
            lo, hi = self.window(v, pe)
            for w, latest in closing:
                hi = min(hi, latest - p.dist[pe][self.pe[w]])
            lo = max(lo, earliest)
            for t in range(lo, min(hi, lo + self.ii - 1) + 1):
                if (pe, t % self.ii) not in self.busy:
                    candidates.append((t, self._spread(v, pe), pe))
                    break
        if not candidates:
            return False
        best = None
        for t, _, pe in sorted(candidates)[:self.candidates]:
            cost, paths = self.route_cost(v, pe, t)
            score = cost + self.time_weight * t
            if paths is not None and cost < float("inf") and (best is None or score < best[0]):
                best = (score, pe, t, paths)
        if best is None:
            return False
        _, pe, t, paths = best
        self.occupy(v, pe, t, paths)
        return True

    def occupy(self, v: int, pe: int, t: int, paths: dict) -> None:
        """Put ``v`` on ``pe`` at cycle ``t`` with its operands' routed ``paths``."""
        self.pe[v], self.t[v] = pe, t
        self.busy.add((pe, t % self.ii))
        for (u, w, d), path in sorted(paths.items()):
            self.router.add(u, (u, w, d), path)

    def charge(self, v: int) -> None:
        """Count the bookkeeping of placing ``v``: :data:`PLACE_STEPS` router steps, and
        :data:`PLACE_EDGE_STEPS` per candidate PE and edge of the kernel (each candidate's
        window reads every edge)."""
        if self.router.budget is not None:
            steps = PLACE_STEPS + PLACE_EDGE_STEPS * len(self.problem.allowed[v]) * len(
                self.problem.edges)
            self.router.budget.spend(steps / ROUTER_STEPS_PER_SECOND)

    def over(self) -> bool:
        """Whether the attempt's budget is spent (or its wall cap passed)."""
        return self.router.budget is not None and self.router.budget.over()

    def _spread(self, v: int, pe: int) -> int:
        return sum(self.problem.dist[self.pe[u]][pe] for u, w, _ in self.problem.edges
                   if w == v and u in self.pe) + sum(
            self.problem.dist[pe][self.pe[w]] for u, w, _ in self.problem.edges
            if u == v and w in self.pe)

    def unplace(self, w: int) -> None:
        """Take ``w`` off its slot and rip up the routes of its edges."""
        for key in [k for k in self.router.paths if w in (k[0], k[1])]:
            self.router.remove(key[0], key)
        self.busy.discard((self.pe[w], self.t[w] % self.ii))
        del self.pe[w], self.t[w]

    def conflicts(self, v: int, pe: int, t: int, holder: dict | None = None,
                  ends: tuple[list, list] | None = None) -> list[int]:
        """Placed operations that ``v`` at ``(pe, t)`` would eject: the one in its slot and
        the placed consumers (producers) it would reach too late (too early for), hops
        included. ``holder`` (slot -> operation) and ``ends`` (``v``'s placed consumers and
        producers with distances) may be given when many candidates are compared."""
        p, ii = self.problem, self.ii
        if holder is None:
            holder = {(self.pe[w], self.t[w] % ii): w for w in self.pe}
        outs, ins = ends if ends is not None else self._ends(v)
        out = set()
        if (pe, t % ii) in holder:
            out.add(holder[(pe, t % ii)])
        lat, dist = p.latency, p.dist
        for w, d in outs:
            if t + lat[v] + dist[pe][self.pe[w]] > self.t[w] + d * ii:
                out.add(w)
        for u, d in ins:
            if self.t[u] + lat[u] + dist[self.pe[u]][pe] > t + d * ii:
                out.add(u)
        return sorted(out)

    def _ends(self, v: int) -> tuple[list, list]:
        """``v``'s placed consumers and producers (other than itself), with distances."""
        outs = [(w, d) for u, w, d in self.problem.edges if u == v and w != v and w in self.pe]
        ins = [(u, d) for u, w, d in self.problem.edges if w == v and u != v and u in self.pe]
        return outs, ins

    def force(self, v: int, earliest: int) -> list[int] | None:
        """Place ``v`` where it ejects the fewest placed operations (Rau's iterative modulo
        scheduling): on each allowed PE the ``II`` cycles from the first its placed producers
        and ``earliest`` allow, fewest ejections first, then earliest, then the PE. Returns
        the ejected operations (None when ``v`` cannot be routed there at all)."""
        best = None
        self.charge(v)
        holder = {(self.pe[w], self.t[w] % self.ii): w for w in self.pe}
        ends = self._ends(v)
        for pe in sorted(self.problem.allowed[v]):
            lo = max(earliest, self.window(v, pe)[0])     # its placed producers, hops included
            for t in range(lo, lo + self.ii):
                out = self.conflicts(v, pe, t, holder, ends)
                if best is None or (len(out), t, pe) < best[0]:
                    best = ((len(out), t, pe), pe, t, out)
                if not out:
                    break
        _, pe, t, out = best
        for w in out:
            self.unplace(w)
        cost, paths = self.route_cost(v, pe, t)
        if cost == float("inf"):
            return None
        self.occupy(v, pe, t, paths)
        return out

    def near_miss(self) -> NearMiss:
        """This attempt (every operation placed) as a :class:`NearMiss`: its
        over-used slots and the operations at the ends of the routes that cross one."""
        r, ii, cap = self.router, self.ii, self.problem.registers
        hot: set[int] = set()
        for (u, w, _), path in sorted(r.paths.items()):
            if any(r.reg_use.get((pe, c % ii), 0) > cap for pe, c in path) or any(
                    r.link_use.get((p, q, c % ii), 0) > 1
                    for (p, c), (q, _) in zip(path, path[1:]) if p != q):
                hot |= {u, w}
        n = self.problem.n
        return NearMiss(ii, r.overused(), [self.pe[v] for v in range(n)],
                        [self.t[v] for v in range(n)], hot)

    def negotiate(self, rounds: int) -> bool:
        """PathFinder: rip up and re-route every edge until nothing is over-used."""
        router = self.router
        best, since = router.overused(), 0
        for r in range(rounds):
            over = router.overused()
            if over == 0:
                return True
            best, since = (over, 0) if over < best else (best, since + 1)
            if since > STALL_ROUNDS or self.over():
                return False
            router.age()
            router.present = 0.5 * (1.6 ** r)
            nets: dict[int, list] = defaultdict(list)
            for key in sorted(router.paths):
                nets[key[0]].append(key)
            for u, keys in sorted(nets.items()):   # rip up the whole value, then re-route it
                if self.over():
                    return False
                for key in keys:
                    router.remove(u, key)
                for key in sorted(keys, key=lambda k: self._dst(k[1], k[2])[1]):
                    _, path = router.route(u, self._src(u), self._dst(key[1], key[2]))
                    router.add(u, key, path)
        return router.overused() == 0


def route_fixed(problem: CgraProblem, ii: int, pe: list[int], t: list[int],
                budget: Budget | None = None, method: str = "relaxation + PathFinder"
                ) -> CgraSchedule | None:
    """Route a placement and timing fixed elsewhere (e.g. the relaxation's, whose slots and
    hop distances are already legal) with PathFinder, within ``budget``; None when congestion
    remains."""
    attempt = _Attempt(problem, ii, Router(problem, ii, budget=budget))
    for v in range(problem.n):
        attempt.pe[v], attempt.t[v] = pe[v], t[v]
    for u, w, d in sorted(problem.edges, key=lambda e: (e[0], t[e[1]] + e[2] * ii)):
        _, path = attempt.router.route(u, attempt._src(u), attempt._dst(w, d))
        if path is None:
            return None
        attempt.router.add(u, (u, w, d), path)
    if not attempt.negotiate(NEGOTIATION_ROUNDS):
        return None
    sched = _decode(problem, ii, attempt)
    sched.method = method
    return sched


def schedule_at_ii(problem: CgraProblem, ii: int, seed: int = 0,
                   budget: Budget | None = None, guide: CgraSchedule | None = None,
                   misses: list[NearMiss] | None = None, spread: bool = False
                   ) -> CgraSchedule | None:
    """One list-scheduling attempt at ``ii`` within ``budget`` (None when it dead-ends,
    cannot route or its budget is spent).

    ``guide`` (a mapping, e.g. at a larger II) orders the operations by their issue cycles
    in it, scaled to ``ii``, instead of by their earliest issue (:func:`descend`). An
    attempt that placed every operation but whose routes PathFinder left congested is
    appended to ``misses`` (:class:`NearMiss`) when given. ``spread``: every PE's first
    free slot is costed, the issue cycle weighing :data:`SPREAD_TIME_WEIGHT` against the
    routes (operations spread out for their routes' sake: congestion left to repair is then
    a few slots, dwt PartPred on the 4 x 4 torus at II 11: 1-2 where it was 6-20).
    """
    horizon = sum(problem.latency) + problem.n * (ii + problem.diameter) + ii
    windows = time_windows(problem, ii, horizon)
    if windows is None:
        return None
    early = windows[0]
    height = _heights(problem)
    rng = random.Random(seed * 7919 + ii)
    jitter = [rng.random() * (seed % 3) for _ in range(problem.n)]
    if guide is not None:
        scale = ii / guide.ii
        early_of = [guide.cycle[problem.names[v]] * scale for v in range(problem.n)]
    else:
        early_of = early
    order = sorted(range(problem.n), key=lambda v: (early_of[v] + jitter[v], -height[v], v))
    plain = seed % 2 == 1   # every other try: no recurrence look-ahead, earliest issue 0
    attempt = _Attempt(problem, ii, Router(problem, ii, budget=budget),
                       scc=[] if plain else _sccs(problem))
    if spread:
        attempt.time_weight, attempt.candidates = SPREAD_TIME_WEIGHT, None
    for v in order:
        if attempt.over():
            return None
        if not attempt.place(v, 0 if plain else early[v], rng):
            return None
    if not attempt.negotiate(NEGOTIATION_ROUNDS):
        if misses is not None and not attempt.over():
            misses.append(attempt.near_miss())
        return None
    return _decode(problem, ii, attempt)


def schedule_with_ejection(problem: CgraProblem, ii: int, seed: int = 0,
                           budget: Budget | None = None) -> CgraSchedule | None:
    """One iterative modulo scheduling attempt at ``ii`` (Rau 1994, on this list scheduler):
    an operation with no legal ``(PE, cycle)`` is placed anyway where it ejects the fewest
    placed operations (:meth:`_Attempt.force`; the slot's holder and the neighbours it would
    reach out of time), and those go back to the queue; an operation placed again starts one
    cycle after its last issue, so the search moves on. At most :data:`EJECTIONS` x the
    operations are ejected before the attempt gives up. Then PathFinder negotiates. Within
    ``budget`` (None: unbounded)."""
    horizon = sum(problem.latency) + problem.n * (ii + problem.diameter) + ii
    windows = time_windows(problem, ii, horizon)
    if windows is None:
        return None
    early, height = windows[0], _heights(problem)
    rng = random.Random(seed * 7919 + ii)
    rank = {v: k for k, v in enumerate(sorted(range(problem.n),
                                              key=lambda v: (early[v], -height[v], v)))}
    attempt = _Attempt(problem, ii, Router(problem, ii, budget=budget), scc=_sccs(problem))
    queue = [(rank[v], v) for v in range(problem.n)]
    heapq.heapify(queue)
    last: dict[int, int] = {}
    ejections_left = EJECTIONS * problem.n
    while queue:
        if attempt.over():
            return None
        _, v = heapq.heappop(queue)
        if v in attempt.pe:
            continue
        start = max(early[v], last.get(v, -1) + 1)
        if attempt.place(v, start, rng):
            continue
        ejected = attempt.force(v, start)
        if ejected is None:
            return None
        ejections_left -= len(ejected)
        if ejections_left < 0:
            return None
        for w in ejected:
            heapq.heappush(queue, (rank[w], w))
        last[v] = attempt.t[v]
    if not attempt.negotiate(NEGOTIATION_ROUNDS):
        return None
    sched = _decode(problem, ii, attempt)
    sched.method = EJECTION
    return sched


def eject_from_top(problem: CgraProblem, budget: Budget, seed: int = 0, tries: int = 2,
                   progress: Callable[[str], None] | None = None) -> CgraSchedule | None:
    """Iterative modulo scheduling (:func:`schedule_with_ejection`) from ``max_ii`` down: new
    seeds at ``max_ii`` until one maps (or ``budget`` is spent), then each II below gets ``tries``
    attempts; the mapping of the smallest II that mapped (None if none). For kernels whose
    large recurrence defeats the list scheduler at every II (adpcm_coder): at a large II
    ejection has room to settle."""
    say = progress or (lambda line: None)
    low = lower_bounds(problem)["route_ii"]
    best, ii, k, failed = None, problem.max_ii, 0, 0
    while ii >= low and not budget.over():
        found = schedule_with_ejection(problem, ii, seed + k, budget)
        k += 1
        if found is not None:
            best, ii, failed = found, ii - 1, 0
            say(f"ejection: II {best.ii} after {k} attempts")
        elif best is not None:
            failed += 1
            if failed >= tries:
                break
    return best


def _decode(problem: CgraProblem, ii: int, attempt: _Attempt) -> CgraSchedule:
    names = problem.names
    shift = min(attempt.t.values(), default=0)
    shift -= shift % ii  # keep the slots
    routes = {(names[u], names[w], d): [(pe, c - shift) for pe, c in path]
              for (u, w, d), path in attempt.router.paths.items()}
    return CgraSchedule(ii=ii, pe={names[v]: attempt.pe[v] for v in range(problem.n)},
                        cycle={names[v]: attempt.t[v] - shift for v in range(problem.n)},
                        latency={names[v]: problem.latency[v] for v in range(problem.n)},
                        routes=routes, method="list scheduling + PathFinder")


def list_schedule(problem: CgraProblem, seed: int = 0, tries: int = 3,
                  budget: Budget | None = None) -> CgraSchedule:
    """The smallest II at which list scheduling + PathFinder finds a mapping, searched within
    ``budget`` (default :data:`LIST_SECONDS` planned seconds, capped at
    :func:`~formulations.solver.budget.deadline_for` of it); raises :class:`CgraInfeasible`.

    Up from the lower bound with growing steps (two attempts per II, one per ordering mode;
    one above :data:`LARGE_KERNEL` operations; each II :data:`GROWTH` times the last), so a
    kernel that needs an II far above its bound is reached before the time runs out (the
    steps are placed from ``group_ii``, and those below ``route_ii`` are skipped: placed
    from ``route_ii``, one higher on aes_decrypt, the steps 11, 14, 18 failed and gave a
    baseline of 19 on the mesh and cgra8x8, where 10, 13, 17, 22 give 18, and both 15 s
    rows ended one II higher); then
    bisection between the largest II that failed and the smallest that mapped (``tries``
    seeds per II; a large kernel's last failed II gets them first), keeping the best mapping
    found. When a pass reaches ``max_ii`` without a mapping, the next pass (of
    :data:`ROUNDS`) starts one II higher with other seeds.
    """
    reasons = precheck(problem)
    if reasons:
        raise CgraInfeasible(reasons)
    started = time.perf_counter()
    budget = budget if budget is not None else Budget(LIST_SECONDS)
    bounds, best, failed, tried = lower_bounds(problem), None, 0, set()
    start, low = bounds["group_ii"], bounds["route_ii"]
    for rounds in range(ROUNDS):           # each round: other seeds (the other mode first)
        failed, ii = low - 1, min(problem.max_ii, start + rounds)
        while ii <= problem.max_ii and best is None and not budget.over():
            if ii >= low:                  # a rung below the proven bound is skipped
                best = _try_ii(problem, ii, seed + rounds,
                               2 if problem.n <= LARGE_KERNEL else 1, budget)
                tried.add(ii)
            if best is None:
                failed = max(failed, ii)
                ii = ii + 1 if ii == problem.max_ii else \
                    min(problem.max_ii, max(ii + 1, math.ceil(ii * GROWTH)))
        if best is not None or budget.over():
            break
    if best is None:
        raise CgraInfeasible([f"T0 time limit: list scheduling found no mapping within "
                              f"{budget.seconds:.3g} s (IIs {sorted(tried)} tried)"
                              if budget.over() else
                              f"list scheduling found no mapping ({ROUNDS} passes over IIs "
                              f"{sorted(tried)}; nothing proven)"])
    if problem.n > LARGE_KERNEL and failed >= low and not budget.over():
        # the ladder gave its last failed II one attempt: the bisection's ``tries`` first
        found = _try_ii(problem, failed, seed + ROUNDS, tries, budget)
        if found is not None:
            best, failed = found, max([ii for ii in tried if ii < found.ii], default=low - 1)
    while best.ii - failed > 1 and not budget.over():   # bisect down
        mid = (failed + best.ii) // 2
        found = _try_ii(problem, mid, seed, tries, budget)
        if found is not None:
            best = found
        else:
            failed = mid
    best.seconds = time.perf_counter() - started
    return best


def descend(problem: CgraProblem, best: CgraSchedule, budget: Budget, seed: int = 0,
            progress: Callable[[str], None] | None = None,
            attempts: int | None = None, stall: int | None = None,
            numbers: Iterator[int] | None = None) -> CgraSchedule:
    """Below a mapping's II: list-scheduling attempts at ``best.ii - 1`` until one maps or
    ``budget`` is spent, then at the II below that one, and so on down to the lower bound.

    The attempts alternate between the operation order of the best mapping so far (its issue
    cycles scaled to the smaller II: an order known to close every recurrence and route at the
    larger II) and the usual earliest-issue order, each with a seed not used by
    :func:`list_schedule`; both ordering modes (with and without the recurrence look-ahead)
    take turns. ``attempts`` caps the attempts as well, ``stall`` the attempts at one II (then
    the descent stops there). ``numbers`` gives each attempt its number (its seed and order;
    default a fresh count from 0): a descent that goes on from an earlier one passes the
    same iterator, so that it tries new attempts, not the earlier one's again. Returns the
    mapping of the smallest II reached (``best`` when none is lower).

    >>> from hardware import load_hardware
    >>> from model.graph import Graph, Node, Edge
    >>> from formulations.cgra.problem import problem_from_graph
    >>> g = Graph("fan", [Node("a", op="LOAD")] + [Node(f"m{i}", op="MUL") for i in range(6)],
    ...           [Edge("a", f"m{i}") for i in range(6)])
    >>> p = problem_from_graph(g, load_hardware("cgra4x4"))
    >>> descend(p, schedule_at_ii(p, 3), Budget(10)).ii
    1
    """
    say = progress or (lambda line: None)
    low = lower_bounds(problem)["route_ii"]
    cap = attempts if attempts is not None else _BIG
    numbers = itertools.count() if numbers is None else numbers
    done = 0
    while best.ii > low and not budget.over():
        ii, found, here = best.ii - 1, None, 0
        while found is None and done < cap and here < (stall or _BIG) and not budget.over():
            k = next(numbers)
            guide = best if k % 2 == 0 else None
            found = schedule_at_ii(problem, ii, seed + DESCENT_SEED + k, budget, guide)
            done, here = done + 1, here + 1
        if found is None:
            break
        found.method = "list scheduling + PathFinder, descent"
        say(f"descent: II {ii} after {done} attempts")
        best = found
    return best


def _try_ii(problem: CgraProblem, ii: int, seed: int, tries: int, budget: Budget
            ) -> CgraSchedule | None:
    for k in range(tries):
        if budget.over():
            return None
        sched = schedule_at_ii(problem, ii, seed + k, budget)
        if sched is not None:
            return sched
    return None
