"""Valid bounds and issue windows for the Streaming Engine model (source 004).

Scope
-----
* :func:`sibling_costs` -- the cheapest operand-to-issue delays the children of one instruction
  can have: siblings sit on distinct tiles (S1), so at most one child shares its parent's tile
  (link latency 0), at most two are one tile away (latency 1), two are two tiles away (2).
  A child on its parent's own tile issues in another slot (A3), so when ``3 % II == 0`` it
  waits one cycle more (issue ``+ 4``), and at II 1 a tile holds one instruction (no child on
  the parent's tile at all).
* :func:`tail_bound` -- per instruction, the fewest cycles from its issue to the end of the
  iteration: ``tail[u] = max(3, max_i cost_i + tail[c_i])`` with the children sorted by
  decreasing tail and the sibling costs in increasing order. Giving the cheapest cost to the
  longest tail minimises that maximum (exchange argument), so ``max_u tail[u]`` is a lower bound
  on the cycle count of every legal mapping at that II: :func:`cycle_bound`. It is never below the
  plain critical path (every cost is ``>= 3``).
* :func:`issue_windows` -- earliest and latest issue cycle per instruction at one II, from the
  difference constraints every legal schedule meets: ``L + cost <= tau[v] + d II - tau[u] <=
  L + max link latency + II * II - 1`` (``L`` the instruction latency) (H1: at most
  ``II - 1`` delay entries, so a value waits at most
  ``II * II - 1`` cycles), and the first issue of each weakly connected part within ``[0, II)``.
  All-pairs shortest paths (Floyd-Warshall on the constraint graph) give the windows; a negative
  cycle proves the II infeasible (R2 recurrence with link latencies).

Caveats: the bounds ignore the packing of instructions into ``tiles x II`` slots; at the
smallest feasible II that packing is often what costs most, which only the exact model sees.

Examples
--------
>>> from hardware import load_hardware
>>> from model.graph import Graph, Node, Edge
>>> from formulations.streaming.problem import problem_from_graph
>>> g = Graph("fan", [Node("p")] + [Node(f"c{i}") for i in range(3)],
...           [Edge("p", f"c{i}") for i in range(3)])
>>> p = problem_from_graph(g, load_hardware("se16"))
>>> sibling_costs(p, 2), cycle_bound(p, 2), cycle_bound(p, 3)
([3, 4, 4, 5, 5], 7, 7)
"""

from __future__ import annotations

import networkx as nx
import numpy as np

from formulations.streaming.problem import StreamingProblem

__all__ = ["sibling_costs", "tail_bound", "cycle_bound", "issue_windows", "max_wait"]


def sibling_costs(problem: StreamingProblem, ii: int) -> list[int]:
    """Smallest ``issue(child) - issue(parent)`` of each child, cheapest first (any fan-out).

    >>> from hardware import load_hardware
    >>> from model.graph import Graph, Node
    >>> from formulations.streaming.problem import problem_from_graph
    >>> p = problem_from_graph(Graph("g", [Node("a")], []), load_hardware("se16"))
    >>> sibling_costs(p, 1), sibling_costs(p, 3), sibling_costs(p, 4)
    ([4, 4, 5, 5], [4, 4, 4, 5, 5], [3, 4, 4, 5, 5])
    """
    L = problem.op_latency
    costs = []
    for dt, lat in sorted(problem.latency.items(), key=lambda kv: (kv[1], kv[0])):
        if dt == 0:
            if ii == 1:
                continue  # one slot per tile: the child cannot share its parent's tile
            costs.append(L + (1 if L % ii == 0 else 0))
        else:
            costs.append(L + lat)
    return sorted(costs)


def _same_iteration_children(problem: StreamingProblem) -> list[list[int]]:
    kids = [set() for _ in range(problem.n)]
    for u, v, d in problem.edges:
        if d == 0 and u != v:
            kids[u].add(v)
    return [sorted(k) for k in kids]


def _topological(problem: StreamingProblem) -> list[int]:
    g = nx.DiGraph()
    g.add_nodes_from(range(problem.n))
    g.add_edges_from((u, v) for u, v, d in problem.edges if d == 0 and u != v)
    return list(nx.lexicographical_topological_sort(g))


def tail_bound(problem: StreamingProblem, ii: int) -> list[int]:
    """Fewest cycles from each instruction's issue to the end of the iteration (see module).

    >>> from hardware import load_hardware
    >>> from model.graph import Graph, Node, Edge
    >>> from formulations.streaming.problem import problem_from_graph
    >>> g = Graph("c", [Node("a"), Node("b"), Node("c")], [Edge("a", "b"), Edge("b", "c")])
    >>> tail_bound(problem_from_graph(g, load_hardware("se16")), 2)
    [9, 6, 3]
    """
    costs = sibling_costs(problem, ii)
    kids = _same_iteration_children(problem)
    tail = [problem.op_latency] * problem.n
    for u in reversed(_topological(problem)):
        ranked = sorted(kids[u], key=lambda c: -tail[c])
        for rank, c in enumerate(ranked):
            cost = costs[min(rank, len(costs) - 1)]
            tail[u] = max(tail[u], cost + tail[c])
    return tail


def cycle_bound(problem: StreamingProblem, ii: int) -> int:
    """A lower bound on the cycle count of any legal mapping at ``ii`` (see the module)."""
    return max(tail_bound(problem, ii), default=0)


def max_wait(ii: int) -> int:
    """Longest a value can wait after it arrives (H1: ``II - 1`` delay entries): ``II*II - 1``."""
    return ii * ii - 1


def issue_windows(problem: StreamingProblem, ii: int, horizon: int | None = None,
                  holds: bool = True) -> tuple[list[int], list[int]] | None:
    """Earliest and latest issue cycle per instruction at ``ii``; None if ``ii`` is infeasible.

    ``horizon`` (optional) caps the cycle count (e.g. a known schedule's), so that
    ``tau[v] <= horizon - tail[v]``. ``holds=False`` drops H1 (a value may wait any time,
    the hold relaxation): only the earliest issue and the horizon remain (``horizon`` needed).

    >>> from hardware import load_hardware
    >>> from model.graph import Graph, Node, Edge
    >>> from formulations.streaming.problem import problem_from_graph
    >>> g = Graph("c", [Node("a"), Node("b")], [Edge("a", "b")])
    >>> issue_windows(problem_from_graph(g, load_hardware("se16")), 2)
    ([0, 3], [1, 9])
    """
    n, L = problem.n, problem.op_latency
    if n == 0:
        return [], []
    low_cost = min(sibling_costs(problem, ii))
    high = L + max(problem.latency.values()) + max_wait(ii)
    dist = np.full((n, n), np.inf)
    np.fill_diagonal(dist, 0.0)
    for u, v, d in problem.edges:
        if u == v:  # own feedback path: the value waits d * II - 3 cycles
            if L > d * ii:
                return None
            continue
        lo_gap, hi_gap = low_cost - d * ii, high - d * ii
        if holds:
            dist[u, v] = min(dist[u, v], hi_gap)     # tau_v <= tau_u + hi_gap
        dist[v, u] = min(dist[v, u], -lo_gap)    # tau_u <= tau_v - lo_gap
    for k in range(n):
        dist = np.minimum(dist, dist[:, k:k + 1] + dist[k:k + 1, :])
    if np.any(np.diag(dist) < 0):
        return None
    tail = tail_bound(problem, ii)
    lo, hi = [0] * n, [0] * n
    for x in range(n):
        part = np.isfinite(dist[:, x]) & np.isfinite(dist[x, :])
        before = np.isfinite(dist[x, :])
        lo[x] = int(max(0.0, np.max(-dist[x, before])))    # tau_x >= tau_y - D[x][y], tau_y >= 0
        hi[x] = int(ii - 1 + np.max(dist[part, x])) if holds else horizon  # some y of the part
        if horizon is not None:                                            # issues before II
            hi[x] = min(hi[x], horizon - tail[x])
    if any(lo[x] > hi[x] for x in range(n)):
        return None
    return lo, hi
