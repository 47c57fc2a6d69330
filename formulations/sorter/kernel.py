"""The inner loop of the sorter on the default keys, on plain integer lists.

:func:`sort_default_keys` runs operations 1020-1080 of source 000 with the three keys of
the worked example (``closes_connection``, ``bandwidth_gap``, ``age``) on a graph already
reduced to lists of ints by :mod:`formulations.sorter.priority_sort`:

* nodes are numbered by the rank of their id (so the last tie-break is the node number);
* every heap entry is one int, ``(key1 rank * gap ranks + gap rank) * span + tie`` with
  ``tie = (n + 1 - insertion) * n + node`` and ``span = n * (n + 1)``; per node pair the
  gap part plus the neighbour (``code = gap rank * span + neighbour``: ``code % n`` is the
  neighbour) is precomputed, the rest per node (``hi``), so an update is one add;
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


def sort_default_keys(n: int, ranking: list[int], adj: list[int], first: list[int],
                      mid: list[int], hi0: list[int], dk: list[int], pred_left: list[int],
                      nets: Any, unseen: int) -> tuple[list[int], list[int]]:
    """Sort all components; returns (order, seeds) as node numbers.

    Parameters
    ----------
    n : int
        Number of nodes.
    ranking : list of int
        Seed candidates, best first (operation 1025 takes the first unsorted one).
    adj : list of int
        Per node pair the ``code`` of the neighbour; node ``v``'s pairs are
        ``adj[first[v]:first[v + 1]]``, those before ``mid[v]`` lead to a successor
        watched by key1 rule (i) (``v`` is one of its >= 2 distinct predecessors).
    hi0 : list of int
        Per node: its open key1 part (the entry less the code and the insertion part).
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
    state = [unseen] * n  # the code of its best pair while in the ODS, -1 once sorted
    in_net = nets.in_net if nets is not None else [False] * n
    hi = [0] * n
    closed = [False] * n
    order: list[int] = []
    seeds: list[int] = []
    for seed in ranking:  # 1020/1025
        if state[seed] is unseen:
            seeds.append(seed)
            _component(n, seed, adj, first, mid, hi0, dk, pred_left, nets,
                       (state, hi, closed, order, unseen, in_net))
    return order, seeds


def _component(n: int, seed: int, adj: list, first: list[int], mid: list[int], hi0: list[int],
               dk: list[int], pred_left: list[int], nets: Any, live: tuple) -> None:
    """1030-1070 for the component of ``seed``: pop, sort, update the neighbours' keys.

    The smallest entry pushed in an iteration waits in ``pend`` and goes in with the
    next pop (``heappushpop``): when it is the next node, as it often is, it never
    touches the heap.
    """
    state, hi, closed, order, unseen, in_net = live
    heappush, heappop, heappushpop = heapq.heappush, heapq.heappop, heapq.heappushpop
    append = order.append
    base = (n + 1 - len(order)) * n  # the insertion part of a node inserted now, plus n
    heap: list[int] = []
    pend = seed  # the seed's entry: alone, any value will do
    while True:  # 1035
        if pend is not unseen:
            cur = heappushpop(heap, pend) % n
            pend = unseen  # no entry waits (unseen is above every entry)
        elif heap:
            cur = heappop(heap) % n
        else:
            return
        while state[cur] == -1:  # stale entries: their node surfaced with a smaller key
            if not heap:
                return
            cur = heappop(heap) % n
        state[cur] = -1  # 1040-1070
        append(cur)
        base -= n
        a, m = first[cur], mid[cur]
        for g in adj[a:m]:  # successors watched by rule (i)
            j = g % n
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
            e = h + c
            if e < pend:
                if pend is not unseen:
                    heappush(heap, pend)
                pend = e
            else:
                heappush(heap, e)
        for g in adj[m:first[cur + 1]]:  # 1055/1060 and key2
            j = g % n
            c = state[j]
            if g < c:  # new (c unseen) or a larger bandwidth to a sorted node; never sorted
                state[j] = g
                if c is unseen:
                    e = hi[j] = hi0[j] + base
                    e += g
                else:
                    e = hi[j] + g
                if e < pend:
                    if pend is not unseen:
                        heappush(heap, pend)
                    pend = e
                else:
                    heappush(heap, e)
        if in_net[cur]:
            _close_nets(nets, cur, live, hi0, dk, heap)


def _close_nets(nets: Any, cur: int, live: tuple, hi0: list[int], dk: list[int],
                heap: list[int]) -> None:
    """Rules (ii) and (iii) once ``cur`` is sorted: the nodes it closes get a new entry."""
    state, hi, closed, _, unseen, _ = live
    for j in closed_by_nets(nets, cur, []):
        c = state[j]
        if c == -1 or closed[j]:
            continue
        closed[j] = True
        if c is unseen:  # never happens: a net's members are its driver's neighbours
            hi0[j] -= dk[j]
            continue
        h = hi[j] = hi[j] - dk[j]
        heapq.heappush(heap, h + c)


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
