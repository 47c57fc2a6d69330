"""The exhaustive Streaming Engine oracle: a test fixture, not part of the mapper.

:func:`exhaustive_schedule` finds the smallest II, then the fewest cycles, by branch and bound
over (tile, issue cycle) for graphs of up to :data:`ORACLE_MAX_NODES` nodes. The tests load it
through the ``streaming_oracle`` fixture of ``tests/formulations/conftest.py``.
"""

from __future__ import annotations

import time

import networkx as nx

from formulations.streaming.problem import (StreamingInfeasible, StreamingProblem,
                                            StreamingSchedule, asap_and_tail, delays_needed,
                                            lower_bounds, precheck, problem_from_graph,
                                            schedule_from_lists)
from hardware import StreamingEngineSpec
from model.graph import Graph

__all__ = ["exhaustive_schedule", "ORACLE_MAX_NODES"]

#: Largest graph the exhaustive oracle accepts.
ORACLE_MAX_NODES = 8


def exhaustive_schedule(graph: Graph, spec: StreamingEngineSpec,
                        max_nodes: int = ORACLE_MAX_NODES) -> StreamingSchedule:
    """Smallest II, then fewest cycles, by exhaustive branch and bound (graphs <= 8 nodes).

    Nodes are visited in breadth-first order over the undirected graph, so that every node
    after the first of its component has a placed neighbour (at most ``2 * reach + 1`` tiles);
    solutions are canonical up to translation (smallest tile 0) on a connected graph. Raises
    :class:`StreamingInfeasible` when no II admits a mapping within the issue-cycle horizon.

    Examples
    --------
    >>> from hardware import load_hardware
    >>> from model.graph import Graph, Node, Edge
    >>> g = Graph("g", [Node("a"), Node("b"), Node("c")], [Edge("a", "b"), Edge("a", "c")])
    >>> s = exhaustive_schedule(g, load_hardware("se16"))
    >>> s.ii, s.cycles
    (1, 7)
    """
    problem = problem_from_graph(graph, spec)
    if problem.n > max_nodes:
        raise ValueError(f"the exhaustive oracle takes at most {max_nodes} nodes, got {problem.n}")
    reasons = precheck(problem)
    if reasons:
        raise StreamingInfeasible(reasons)
    started = time.perf_counter()
    for ii in range(lower_bounds(problem)["ii"], spec.max_ii + 1):
        found = _BranchAndBound(problem, ii).run()
        if found is not None:
            sched = schedule_from_lists(problem, ii, *found, method="exhaustive",
                                        status="optimal", proven_ii=True)
            sched.seconds = time.perf_counter() - started
            return sched
    raise StreamingInfeasible([f"exhaustive: no mapping up to II {spec.max_ii}"])


class _BranchAndBound:
    def __init__(self, problem: StreamingProblem, ii: int):
        self.p, self.ii = problem, ii
        self.asap, self.tail = asap_and_tail(problem)
        und = nx.Graph()
        und.add_nodes_from(range(problem.n))
        und.add_edges_from((u, v) for u, v, _ in problem.edges if u != v)
        self.connected = nx.is_connected(und) if problem.n else True
        self.order = []
        for comp_start in range(problem.n):
            if comp_start not in self.order:
                self.order += [x for x in nx.bfs_tree(und, comp_start) if x not in self.order]
        self.edges_of = [[] for _ in range(problem.n)]
        for u, v, d in problem.edges:
            self.edges_of[u].append((u, v, d))
            if u != v:
                self.edges_of[v].append((u, v, d))
        lat = max(problem.latency.values())
        self.L = problem.op_latency
        self.best = (self.L + lat + ii) * (problem.n + 1) + self.L
        self.answer = None
        self.tile = [-1] * problem.n
        self.tau = [-1] * problem.n
        self.load = [0] * problem.tiles
        self.occupied: set[tuple[int, int]] = set()

    def run(self):
        self._dfs(0)
        return self.answer

    def _dfs(self, depth: int) -> None:
        if depth == self.p.n:
            span = max(self.tau) + self.L
            if (not self.connected or min(self.tile) == 0) and span < self.best:
                self.best, self.answer = span, (list(self.tile), list(self.tau))
            return
        v = self.order[depth]
        if self.connected and depth:
            lowest = min(t for t in self.tile if t >= 0)
            if lowest - self.p.reach * (self.p.n - depth) > 0:
                return
        for t in self._tiles(v):
            lo, hi = self._window(v, t)
            for tau in range(lo, hi + 1):
                if (t, tau % self.ii) in self.occupied:
                    continue
                added = self._delay_load(v, t, tau)
                if added is None:
                    continue
                self._set(v, t, tau, added, +1)
                self._dfs(depth + 1)
                self._set(v, t, tau, added, -1)

    def _set(self, v: int, t: int, tau: int, added: dict[int, int], sign: int) -> None:
        key = (t, tau % self.ii)
        if sign > 0:
            self.tile[v], self.tau[v] = t, tau
            self.occupied.add(key)
        else:
            self.tile[v], self.tau[v] = -1, -1
            self.occupied.discard(key)
        self.load[t] += sign
        for tile, c in added.items():
            self.load[tile] += sign * c

    def _tiles(self, v: int) -> list[int]:
        p = self.p
        out = []
        mates = [w for w in p.components[p.component[v]] if w != v and self.tile[w] >= 0]
        for t in range(p.tiles):
            if mates and t != self.tile[mates[0]]:
                continue
            if v in p.starts and any(self.tile[s] == t for s in p.starts if s != v):
                continue
            if any(self.tile[w] == t for u in range(p.n) if v in p.children[u]
                   for w in p.children[u] if w != v):
                continue
            if all((t - self.tile[o]) in p.latency for e in self.edges_of[v]
                   for o in (e[0], e[1]) if o != v and self.tile[o] >= 0):
                out.append(t)
        return out

    def _window(self, v: int, t: int) -> tuple[int, int]:
        p, ii, L = self.p, self.ii, self.L
        lo, hi = self.asap[v], self.best - 1 - L - self.tail[v]
        for u, w, d in self.edges_of[v]:
            if u == w:
                continue
            if w == v and self.tau[u] >= 0:
                lo = max(lo, self.tau[u] + L + p.latency[t - self.tile[u]] - d * ii)
            if u == v and self.tau[w] >= 0:
                hi = min(hi, self.tau[w] + d * ii - L - p.latency[self.tile[w] - t])
        return lo, hi

    def _delay_load(self, v: int, t: int, tau: int) -> dict[int, int] | None:
        p, ii, L = self.p, self.ii, self.L
        added: dict[int, int] = {}
        for u, w, d in self.edges_of[v]:
            if u == w:
                hold, into = d * ii - L, t
            elif w == v and self.tau[u] >= 0:
                hold, into = tau + d * ii - self.tau[u] - L - p.latency[t - self.tile[u]], t
            elif u == v and self.tau[w] >= 0:
                hold, into = (self.tau[w] + d * ii - tau - L - p.latency[self.tile[w] - t],
                              self.tile[w])
            else:
                continue
            if delays_needed(hold, ii):
                added[into] = added.get(into, 0) + delays_needed(hold, ii)
        for tile in set(added) | {t}:
            pending = self._pending(tile, v)
            if self.load[tile] + added.get(tile, 0) + (tile == t) + pending > ii:
                return None
        return added

    def _pending(self, tile: int, v: int) -> int:
        """Unplaced members of memory components already anchored on ``tile`` (not ``v``)."""
        p = self.p
        count = 0
        for members in p.components:
            placed = [w for w in members if self.tile[w] >= 0]
            if placed and self.tile[placed[0]] == tile:
                count += sum(1 for w in members if self.tile[w] < 0 and w != v)
        return count
