"""The greedy section cut: the baseline and the warm start of the section model.

List scheduling into sections (source 003 gives no method): ready nodes are taken
in the position of a category-aware topological order (:func:`category_topological_order`,
which stays in the current category while it can), those of the section's category
first; the first one that fits joins the section, and when none fits the section
closes. Every section holds the ready nodes of a topological order, so the
quotient graph stays acyclic.
"""

from __future__ import annotations

import bisect
import heapq

import numpy as np

from formulations.sections.problem import (BufferDemand, Capacity, Scale, Section,
                                           SectionError, buffer_nets, unit_demand)
from model.graph import Graph, successor_lists

__all__ = ["greedy_cut", "greedy_sections", "category_topological_order", "ReadyNodes"]


def greedy_cut(graph: Graph, cap: Capacity, scale: float = 1.0) -> list[Section]:
    """Cut ``graph`` into sections along a category-aware topological order.

    Parameters
    ----------
    graph : the graph; loop-carried edges are ignored for the order.
    cap : the units one section may use.
    scale : resource scale factor (> 1 leaves headroom for later passes).

    Returns
    -------
    sections : list of Section, in execution order.

    Raises
    ------
    SectionError
        If one node alone exceeds a section's capacity.

    Examples
    --------
    >>> from model.graph import Edge, Node
    >>> g = Graph("chain", [Node(f"n{i}", unit="pcu") for i in range(5)],
    ...           [Edge(f"n{i}", f"n{i+1}") for i in range(4)])
    >>> [s.nodes for s in greedy_cut(g, Capacity(pcu=2, pmu=2, total=4, agcu=4))]
    [['n0', 'n1'], ['n2', 'n3'], ['n4']]
    """
    every_section = {k: scale for k in range(len(graph.nodes) + 1)}   # at most one per node
    return greedy_sections(graph, cap, every_section, [])


def greedy_sections(graph: Graph, cap: Capacity, scales: dict[int, Scale],
                    separate: list[tuple[str, str]] = (),
                    buffers: BufferDemand | None = None) -> list[Section]:
    """List scheduling into sections: fill each with ready nodes that still fit.

    Ready nodes (all same-iteration predecessors placed) are tried in
    topological-position order, those of the section's category first; the
    first one that fits joins the section. When none fits, the section closes.
    Filling past a node that does not fit (a PMU node when PCUs are full) packs
    sections tighter than cutting a fixed order. ``separate`` pairs (a, b) keep
    b out of a's section. A node that ``buffers`` gives stage-buffer PMUs on an
    edge from its section pays them when it joins (per net, the deepest tap).

    Ready nodes wait in one heap per category and demand (:class:`ReadyNodes`),
    so each pick costs the log of the ready nodes, not their number.
    """
    apart: dict[str, set[str]] = {}
    for a, b in separate:
        apart.setdefault(b, set()).add(a)
    starts, targets = successor_lists(len(graph.nodes), *graph.same_iteration_ends)
    waiting = np.bincount(graph.same_iteration_ends[1], minlength=len(graph.nodes)).tolist()
    ready = ReadyNodes(graph, _schedule_priority(graph), apart, _taps(graph, buffers))
    for k in range(len(graph.nodes)):
        if not waiting[k]:
            ready.push(k)
    sections = [Section(0)]
    while ready:
        current = sections[-1]
        scale = scales.get(current.id, 1.0)
        pick = ready.pop_first_fitting(current, cap, scale)
        if pick is None:
            if not current.nodes:
                node = graph.nodes[ready.first()]
                raise SectionError(f'node "{node.id}" needs {_units(unit_demand(node))}, more '
                                   f"than one section offers ({_units_cap(cap)}) at scale {scale}")
            sections.append(Section(len(sections)))
            ready.tapped.clear()
            continue
        current.category = graph.nodes[pick].category
        current.buffers += ready.tap(pick, current)
        current.add(graph.nodes[pick].id, ready.demand_of(pick))
        for nxt in targets[starts[pick]:starts[pick + 1]]:
            waiting[nxt] -= 1
            if not waiting[nxt]:
                ready.push(nxt)
    return sections


def _taps(graph: Graph, buffers: BufferDemand | None) -> dict[int, list[tuple[int, str, float]]]:
    """Node index -> (net, driver, PMUs) of each buffered edge into it."""
    taps: dict[int, list[tuple[int, str, float]]] = {}
    for k, net in enumerate(buffer_nets(graph, buffers)):
        for sink, pmus in net.sinks:
            taps.setdefault(graph.index_of[sink], []).append((k, net.driver, pmus))
    return taps


class ReadyNodes:
    """The ready nodes of the greedy cut, in priority order, ties in the order they
    became ready (as a sorted list with insertion to the right would keep them).

    Nodes of the same category and the same unit demand fit a section alike,
    so they share a heap: the first fitting node is the best top among the
    heaps that fit. Nodes that must stay apart from others (``apart``) or whose
    buffer PMUs depend on the section (``taps``) wait in a short sorted list,
    checked one by one.
    """

    def __init__(self, graph: Graph, priority: np.ndarray, apart: dict[str, set[str]],
                 taps: dict[int, list[tuple[int, str, float]]] | None = None):
        self.graph, self.priority, self.apart = graph, priority.tolist(), apart
        self.taps = taps or {}
        self.tapped: dict[int, float] = {}      # net -> deepest tap in the current section
        self.heaps: dict[tuple, list[tuple[float, int, int]]] = {}
        self.special: list[tuple[float, int, int]] = []    # (priority, arrival, node)
        self.demands: dict[tuple, dict[str, float]] = {}
        self.node_demand: list[dict[str, float] | None] = [None] * len(graph.nodes)
        self.count = self.arrivals = 0

    def __len__(self) -> int:
        return self.count

    def demand_of(self, k: int) -> dict[str, float]:
        """Node ``k``'s unit demand (one shared dict per distinct demand)."""
        demand = self.node_demand[k]
        if demand is None:
            demand = unit_demand(self.graph.nodes[k])
            demand = self.node_demand[k] = self.demands.setdefault(tuple(demand.values()),
                                                                   demand)
        return demand

    def push(self, k: int) -> None:
        node, entry = self.graph.nodes[k], (self.priority[k], self.arrivals, k)
        self.count += 1
        self.arrivals += 1
        if node.id in self.apart or k in self.taps:
            bisect.insort(self.special, entry)
            return
        key = (node.category, tuple(self.demand_of(k).values()))
        heapq.heappush(self.heaps.setdefault(key, []), entry)

    def extra_buffers(self, k: int, current: Section, commit: bool = False) -> float:
        """Buffer PMUs node ``k`` adds to ``current`` (its nets' deeper taps); with
        ``commit``, record them as taken."""
        extra = 0.0
        members = current.members
        for net, driver, pmus in self.taps.get(k, ()):
            if driver in members and pmus > self.tapped.get(net, 0.0):
                extra += pmus - self.tapped.get(net, 0.0)
                if commit:
                    self.tapped[net] = pmus
        return extra

    def tap(self, k: int, current: Section) -> float:
        """Take node ``k``'s buffer PMUs in ``current``; how many it added."""
        return self.extra_buffers(k, current, commit=True) if k in self.taps else 0.0

    def first(self) -> int:
        """The ready node of the smallest priority."""
        return min([h[0] for h in self.heaps.values() if h] + self.special[:1])[2]

    def pop_first_fitting(self, current: Section, cap: Capacity, scale: Scale) -> int | None:
        """Take the first ready node (current category only, once the section has nodes)
        that fits ``current``; None when none does."""
        best, best_heap = None, None
        for (category, demand), heap in self.heaps.items():
            if heap and (best is None or heap[0] < best) and \
                    (not current.nodes or category == current.category) and \
                    current.fits_with(self.demands[demand], cap, scale):
                best, best_heap = heap[0], heap
        special = self._first_special(current, cap, scale)
        if special is not None and (best is None or special < best):
            self.special.remove(special)
            best = special
        elif best is not None:
            heapq.heappop(best_heap)
        else:
            return None
        self.count -= 1
        return best[2]

    def _first_special(self, current: Section, cap: Capacity,
                       scale: Scale) -> tuple[float, int, int] | None:
        members = current.members if self.special else set()
        for entry in self.special:
            node = self.graph.nodes[entry[2]]
            if (not current.nodes or node.category == current.category) and \
                    not self.apart.get(node.id, set()) & members and \
                    current.fits_with(unit_demand(node), cap, scale,
                                      self.extra_buffers(entry[2], current)):
                return entry
        return None



def category_topological_order(graph: Graph) -> list[str]:
    """Kahn's algorithm preferring ready nodes of the category being filled.

    Staying in one category while possible keeps forward and backward nodes
    apart without extra sections; ties go to file order (deterministic). One
    heap of ready positions per category: each pick costs a log.
    """
    return [graph.nodes[k].id for k in _category_order(graph)]


def _category_order(graph: Graph) -> list[int]:
    count, categories = len(graph.nodes), [n.category for n in graph.nodes]
    starts, targets = successor_lists(count, *graph.same_iteration_ends)
    waiting = np.bincount(graph.same_iteration_ends[1], minlength=count).tolist()
    heaps: dict[str | None, list[int]] = {}
    for k in range(count):                      # ascending: each list is a heap
        if not waiting[k]:
            heaps.setdefault(categories[k], []).append(k)
    order: list[int] = []
    category = None
    while len(order) < count:
        heap = heaps.get(category) or min((h for h in heaps.values() if h),
                                          key=lambda h: h[0], default=None)
        if heap is None:
            break                               # a cycle: validation refuses it earlier
        k = heapq.heappop(heap)
        order.append(k)
        category = categories[k]
        for nxt in targets[starts[k]:starts[k + 1]]:
            waiting[nxt] -= 1
            if not waiting[nxt]:
                heapq.heappush(heaps.setdefault(categories[nxt], []), nxt)
    return order


def _schedule_priority(graph: Graph) -> np.ndarray:
    """Position in a category-aware topological order; a source hugs its first consumer.

    Sources (weights, inputs) are all ready at the start; scheduling them by
    their own position would fill the first sections with memory alone.
    """
    count = len(graph.nodes)
    position = np.empty(count, dtype=float)
    position[_category_order(graph)] = np.arange(count, dtype=float)
    src, dst = graph.edge_ends
    consumer = np.full(count, np.inf)
    real = src != dst
    np.minimum.at(consumer, src[real], position[dst[real]])
    has_input = np.bincount(graph.same_iteration_ends[1], minlength=count) > 0
    hugs = ~has_input & np.isfinite(consumer)
    if np.any(hugs[src[real]] & hugs[dst[real]]):
        _hug_in_file_order(graph, position, hugs)    # a source feeds a source: order matters
    else:
        position[hugs] = consumer[hugs] - 0.5
    return position


def _hug_in_file_order(graph: Graph, position: np.ndarray, hugs: np.ndarray) -> None:
    """Move each source before its first consumer, one by one in file order (a source
    later in the file sees the moved position of an earlier one)."""
    for k in np.flatnonzero(hugs).tolist():
        node_id = graph.nodes[k].id
        position[k] = min(position[graph.index_of[s]] for s in graph.successors(node_id)
                          if s != node_id) - 0.5

def _units(demand: dict[str, float]) -> str:
    return ", ".join(f"{v:g} {k.upper()}" for k, v in demand.items() if v) or "no units"


def _units_cap(cap: Capacity) -> str:
    return f"{cap.pcu} PCU, {cap.pmu} PMU, {cap.total} units, {cap.agcu} AGCU"
