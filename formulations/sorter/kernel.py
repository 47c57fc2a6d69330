"""The inner loop of the sorter on the default keys, on plain integer lists.

:func:`sort_default_keys` runs operations 1020-1080 of source 000 with the three keys of
the worked example (``closes_connection``, ``bandwidth_gap``, ``age``) on a graph already
reduced to lists of ints by :mod:`formulations.sorter.priority_sort`:

* nodes are numbered by the rank of their id (so the last tie-break is the node number);
* every heap entry is one int, ``(key1 rank * gap ranks + gap rank) * span + tie`` with
  ``tie = (n + 1 - insertion) * n + node`` and ``span = n * (n + 1)``; the gap part is
  precomputed per node pair (``g``), the rest per node (``hi``), so an update is one add;
* a node's keys only ever decrease (a larger bandwidth to a sorted node, a closed
  connection; the tie is fixed on insertion), so its live entry is its smallest one and
  surfaces first: an entry whose node is already sorted is stale. No entry bookkeeping.

The order is exactly that of the generic path (``_run`` with ``_Live`` entries) and of the
literal reference; the tests compare all three.
"""

from __future__ import annotations

import heapq
from typing import Any

__all__ = ["sort_default_keys", "closed_by_nets"]


def sort_default_keys(n: int, ranking: list[int], adj: list[tuple[int, int]], first: list[int],
                      mid: list[int], hi0: list[int], dk: list[int], pred_left: list[int],
                      nets: Any, unseen: int) -> tuple[list[int], list[int]]:
    """Sort all components; returns (order, seeds) as node numbers.

    Parameters
    ----------
    n : int
        Number of nodes.
    ranking : list of int
        Seed candidates, best first (operation 1025 takes the first unsorted one).
    adj : list of (int, int)
        Per node pair ``(neighbour, gap part)``; node ``v``'s pairs are
        ``adj[first[v]:first[v + 1]]``, those before ``mid[v]`` lead to a successor
        watched by key1 rule (i) (``v`` is one of its >= 2 distinct predecessors).
    hi0 : list of int
        Per node: its open key1 part plus its number (the entry less the gap part
        and the insertion part).
    dk : list of int
        Per node: how much the entry drops when its connection closes.
    pred_left : list of int
        Per node: distinct predecessors not yet sorted (rule (i); updated).
    nets : object or None
        The multi-sink net state of rules (ii)/(iii) (see :func:`closed_by_nets`).
    unseen : int
        Larger than every gap part; the state of a node not yet in the ODS (the one
        object, so ``is`` tells it apart).
    """
    state = [unseen] * n  # gap part while in the ODS, -1 once sorted
    hi = [0] * n
    closed = [False] * n
    order: list[int] = []
    seeds: list[int] = []
    for seed in ranking:  # 1020/1025
        if state[seed] is unseen:
            seeds.append(seed)
            _component(n, seed, adj, first, mid, hi0, dk, pred_left, nets,
                       (state, hi, closed, order, unseen))
    return order, seeds


def _component(n: int, seed: int, adj: list, first: list[int], mid: list[int], hi0: list[int],
               dk: list[int], pred_left: list[int], nets: Any, live: tuple) -> None:
    """1030-1070 for the component of ``seed``: pop, sort, update the neighbours' keys."""
    state, hi, closed, order, unseen = live
    heappush, heappop, append = heapq.heappush, heapq.heappop, order.append
    member_first = nets.member_off if nets is not None else None
    base = (n + 1 - len(order)) * n  # the insertion part of a node inserted now, plus n
    heap = [seed]  # the seed's entry: alone in the heap, any value will do
    while heap:  # 1035
        cur = heappop(heap) % n  # 1040
        if state[cur] == -1:
            continue  # a stale entry: the node surfaced earlier with a smaller key
        state[cur] = -1  # 1045-1070
        append(cur)
        base -= n
        a, m = first[cur], mid[cur]
        for j, g in adj[a:m]:  # successors watched by rule (i)
            c = state[j]
            if c == -1:
                continue
            left = pred_left[j] = pred_left[j] - 1
            if c is unseen:
                h = hi[j] = hi0[j] + base
            elif g >= c and left:
                continue  # keys unchanged
            else:
                h = hi[j]
            if g < c:
                state[j] = c = g
            if not left and not closed[j]:
                closed[j] = True
                h = hi[j] = h - dk[j]
            heappush(heap, h + c)
        for j, g in adj[m:first[cur + 1]]:  # 1055/1060 and key2
            c = state[j]
            if g < c:  # new (c unseen) or a larger bandwidth to a sorted node; never sorted
                state[j] = g
                if c is unseen:
                    hi[j] = hi0[j] + base
                heappush(heap, hi[j] + g)
        if member_first is not None and member_first[cur] != member_first[cur + 1]:
            for j in closed_by_nets(nets, cur, []):  # rules (ii) and (iii)
                c = state[j]
                if c == -1 or closed[j]:
                    continue
                closed[j] = True
                if c is unseen:  # never happens: a net's members are neighbours
                    hi0[j] -= dk[j]
                    continue
                h = hi[j] = hi[j] - dk[j]
                heappush(heap, h + c)


def closed_by_nets(nets: Any, cur: int, shut: list[int]) -> list[int]:
    """Key1 rules (ii) and (iii) once ``cur`` is sorted: append the nodes it closes to ``shut``.

    ``nets`` holds per multi-sink net whether its driver is sorted, how many sinks are
    unsorted and the sum of their numbers (naming the last one), and per node its nets
    as codes ``net * 4 + role`` (1 driver, 2 sink, 3 both). The driver of a net whose
    sinks are now all sorted closes (ii); once the driver is sorted, the last unsorted
    sink closes (iii).
    """
    driver_sorted, sinks_left, sink_sum = nets.driver_sorted, nets.sinks_left, nets.sink_sum
    for code in nets.member[nets.member_off[cur]:nets.member_off[cur + 1]]:
        k = code >> 2
        if code & 1:
            driver_sorted[k] = True
        if code & 2:
            left = sinks_left[k] = sinks_left[k] - 1
            sink_sum[k] -= cur
        else:
            left = sinks_left[k]
        if driver_sorted[k]:
            if left == 1 and nets.iii_ok[k]:
                shut.append(sink_sum[k])
        elif left == 0 and nets.rule_ii:
            shut.append(nets.driver[k])
    return shut
