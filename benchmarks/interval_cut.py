"""interval_cut.py GRAPH K ROUNDS: the best cut among intervals of one order, with buffers.

A probe of where the room that :mod:`benchmarks.cut_ceiling` leaves lies. Cut one *lazy*
topological order (each node right before the first node that needs it: a tensor next to
its consumer, a leaf next to its producer) into at most K contiguous intervals; any such cut
is valid (its sections never go back along an edge), and an interval's ``cut_time`` part
is exact, since what lies before and after it is known. A dynamic programme finds the
least sum. Stage buffers are then counted exactly: each chosen section is balanced
(:func:`formulations.buffers.solve_buffers`), and when balancing is OPTIMAL its added PMUs
are a floor for every interval holding that one (balancing a section balances each convex
part of it). The programme runs again with those floors until every chosen section fits or
ROUNDS runs out. Each round's least sum is a floor over the interval cuts of this order
that fit after balancing, and the last fitting answer is a cut.
"""

from __future__ import annotations

import sys

import numpy as np

from formulations.buffers import solve_buffers
from formulations.sections import estimate_units
from formulations.sections.costs import cut_costs, cut_nets
from formulations.sections.estimates import tile_pmus
from formulations.sections.problem import Capacity, unit_demand
from formulations.solver import SolveSettings
from hardware import build_fabric, load_hardware
from model.importers import load_graph

GRAPHS = "/work/shared/graphs/msr-dnn/OperatorGraphs"


def lazy_order(graph) -> list[str]:
    """A topological order that emits each node just before the first node needing it."""
    inputs = {v: [graph.edges[e].src for e in graph.in_edges(v)
                  if not graph.edges[e].loop_carried and graph.edges[e].src != v]
              for v in graph.node_ids}
    order, seen = [], set()
    topo = graph.topological_order()
    sinks = [v for v in topo if not any(not graph.edges[e].loop_carried
                                        for e in graph.out_edges(v))]
    for root in sinks + topo:           # each sink pulls in what it needs, just before it
        stack = [(root, False)]
        while stack:
            v, ready = stack.pop()
            if ready:
                order.append(v)
            elif v not in seen:
                seen.add(v)
                stack.append((v, True))
                stack.extend((u, False) for u in reversed(inputs[v]) if u not in seen)
    return _by_category(graph, order, topo)


def _by_category(graph, order: list[str], topo: list[str]) -> list[str]:
    """``order`` with each category in one run (categories in the order they first appear
    in ``topo``), when that keeps every edge forward: a section holds one category, so an
    interval cut of an order that alternates them needs a section per run."""
    rank = {}
    for v in topo:
        rank.setdefault(graph.node(v).category, len(rank))
    grouped = sorted(order, key=lambda v: rank[graph.node(v).category])     # stable
    where = {v: i for i, v in enumerate(grouped)}
    if all(e.loop_carried or where[e.src] <= where[e.dst] for e in graph.edges):
        return grouped
    return order


class Intervals:
    """Exact T of every fitting interval [i, j) of ``order`` (``cost[i][j]``)."""

    def __init__(self, graph, spec, order: list[str], cap: Capacity | None = None):
        self.graph, self.spec, self.order = graph, spec, order
        self.cap = cap or Capacity.of_fabric(build_fabric(spec))
        self.costs = cut_costs(graph, spec)
        self.pos = {v: i for i, v in enumerate(order)}
        demand = [unit_demand(graph.node(v)) for v in order]
        self.pmu = np.concatenate([[0.0], np.cumsum([d["pmu"] for d in demand])])
        self.units = np.concatenate([[0.0], np.cumsum([d["pcu"] + d["pmu"] + d["any"]
                                                        for d in demand])])
        self.pcu = np.concatenate([[0.0], np.cumsum([d["pcu"] for d in demand])])
        self.nets = cut_nets(graph, self.costs)
        self.driven, self.read = {}, {}
        for k, net in enumerate(self.nets):
            self.driven.setdefault(net.driver, []).append(k)
            for s in net.sinks:
                self.read.setdefault(s, []).append(k)
        self.last = [max(self.pos[s] for s in net.sinks) for net in self.nets]
        self.cost = {i: self._from(i) for i in range(len(order))}

    def _from(self, i: int) -> dict[int, float]:
        costs, pos, order = self.costs, self.pos, self.order
        out, stage, written, read, seen, ending = {}, 0.0, 0.0, 0.0, set(), {}
        category = self.graph.node(order[i]).category
        for j in range(i, len(order)):
            v = order[j]
            if (self.graph.node(v).category != category
                    or self.pcu[j + 1] - self.pcu[i] > self.cap.pcu):
                break
            inside = sum(c for u, c in costs.streamed.get(v, ()) if pos[u] >= i)
            stage = max(stage, costs.stage.get(v, 1.0), inside)
            for k in self.read.get(v, ()):
                driver = self.nets[k].driver
                if (driver is None or pos[driver] < i) and k not in seen:
                    seen.add(k)
                    read += self.nets[k].bytes
            for k in self.driven.get(v, ()):
                written += self.nets[k].bytes
                ending.setdefault(self.last[k], []).append(k)
            written -= sum(self.nets[k].bytes for k in ending.pop(j, ()))
            out[j + 1] = max(stage, (written + read) * costs.dram_per_byte)
        return out

    def fits(self, i: int, j: int, buffers: float) -> bool:
        return (self.pmu[j] - self.pmu[i] + buffers <= self.cap.pmu
                and self.units[j] - self.units[i] + buffers <= self.cap.total)


def least_cut(iv: Intervals, most: int, floors: np.ndarray) -> tuple[float, list]:
    """The least sum over cuts into at most ``most`` intervals that fit with the buffer
    floors ``floors[i, j]``, and its intervals."""
    n = len(iv.order)
    best = [0.0] + [np.inf] * n
    backs = []
    done, where = np.inf, None
    for k in range(most):
        nxt, back = [np.inf] * (n + 1), [None] * (n + 1)
        for i in range(n):
            if best[i] < np.inf:
                for j, c in iv.cost[i].items():
                    if best[i] + c < nxt[j] and iv.fits(i, j, floors[i, j]):
                        nxt[j], back[j] = best[i] + c, i
        backs.append(back)
        best = nxt
        if best[n] < done:
            done, where = best[n], k
    if where is None:
        raise ValueError(f"no cut of {most} intervals fits")
    cuts, j = [], n
    for k in range(where, -1, -1):
        i = backs[k][j]
        cuts.append((i, j))
        j = i
    return done, cuts[::-1]


def main(argv: list[str]) -> None:
    name, most, rounds = argv[0], int(argv[1]), int(argv[2])
    spec = load_hardware("plasticine")
    graph = estimate_units(load_graph(f"{GRAPHS}/{name}.json", None), spec, tile_pmus(spec))
    iv = Intervals(graph, spec, lazy_order(graph))
    n = len(iv.order)
    floors = np.zeros((n + 1, n + 1), dtype=np.int32)
    for round_ in range(rounds):
        try:
            value, cuts = least_cut(iv, most, floors)
        except ValueError as exc:
            print(f"round {round_}: {exc} with the buffer floors learned")
            return
        over = 0
        for i, j in cuts:
            sol = solve_buffers(graph.subgraph(iv.order[i:j]),
                                SolveSettings(time_limit=10.0, seed=0), spec)
            added = sol.pmus_after - sol.pmus_before if sol.ok else 0
            if sol.status == "OPTIMAL":
                floors[:i + 1, j:] = np.maximum(floors[:i + 1, j:], added)
            over += not iv.fits(i, j, added)
        print(f"round {round_}: least sum {value / 1e6:.4f} M cycles a sample, "
              f"{len(cuts)} sections, {over} too full after balancing", flush=True)
        if not over:
            for i, j in cuts:
                print(f"  [{iv.order[i]} .. {iv.order[j - 1]}]: {j - i} nodes, "
                      f"T {iv.cost[i][j] / 1e6:.4f} M")
            return


if __name__ == "__main__":
    main(sys.argv[1:])
