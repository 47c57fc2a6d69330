"""The stage-buffer balancing problem (source 001): buffers, joins, slots and arrival depths.

Every multi-sink net of a section is one *stage buffer* (its edges share the depth, as
graph.json says). When two or more buffers feed one node (a *join*), every path into the
join must carry the same total buffer depth. :func:`buffer_problem` reads a graph into a
:class:`BufferProblem` (buffers with their original depth and PMU capacity, joins, insertion
slots, sources); :func:`arrival_depths` and :func:`unbalanced_joins` judge any answer, and
:func:`balanced_as_is` finds load times that balance a graph without changing a depth.

Both the model (:mod:`formulations.buffers.model`) and the pairwise heuristic
(:mod:`formulations.buffers.heuristic`) read this module.
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass

import networkx as nx

from model.graph import Graph

__all__ = ["MODES", "DEFAULT_DEPTH", "BufferOptions", "StageBuffer", "InsertionSlot",
           "BufferProblem", "BufferBalancingError", "buffer_problem", "buffer_capacity",
           "edge_depth", "arrival_depths", "unbalanced_joins", "balanced_as_is", "pmus_for"]

#: Balancing modes: tune existing buffers only, insert new ones only, or both (default).
MODES = ("both", "tune", "insert")
#: Depth of an edge whose graph.json entry has none.
DEFAULT_DEPTH = 1


class BufferBalancingError(ValueError):
    """Bad input to the balancing model (names the edge or node and the fix)."""


# ---------------------------------------------------------------------------------------------
# data
# ---------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class BufferOptions:
    """What the balancing model may change.

    Parameters
    ----------
    mode : {"both", "tune", "insert"}
        Tune existing depths, insert whole new buffers next to joins, or both.
    load_shift : bool, default True
        Let the load time of every off-chip input (source node) move (free, [0176]).
    strict_new_capacity : bool, default False
        The patent's literal ``new_pmu·D > new_depth`` for inserted buffers (one sample of
        headroom), through an indicator so unused slots cost nothing.
    depth_per_pmu : int, optional
        Samples one PMU holds, for every buffer; default per buffer from the spec and bytes.
    tie_break : {"lp", "exact", "none"}, default "lp"
        Among answers with the fewest PMUs, prefer least added depth: "lp" keeps the PMU
        count of every buffer found by the first solve and minimises added depth (a network
        LP, fast, integral); "exact" minimises added depth over all answers with the optimal
        PMU total (a second MIP); "none" skips it (answers may then carry slack depth).

    Examples
    --------
    >>> BufferOptions(mode="tune").mode
    'tune'
    >>> BufferOptions(mode="shrink")
    Traceback (most recent call last):
    ...
    ValueError: mode must be one of ('both', 'tune', 'insert'), got 'shrink'
    """

    mode: str = "both"
    load_shift: bool = True
    strict_new_capacity: bool = False
    depth_per_pmu: int | None = None
    tie_break: str = "lp"

    def __post_init__(self) -> None:
        if self.mode not in MODES:
            raise ValueError(f"mode must be one of {MODES}, got {self.mode!r}")
        if self.depth_per_pmu is not None and (int(self.depth_per_pmu) != self.depth_per_pmu
                                               or self.depth_per_pmu < 1):
            raise ValueError(f"depth_per_pmu must be a positive integer, "
                             f"got {self.depth_per_pmu!r}")
        if self.tie_break not in ("lp", "exact", "none"):
            raise ValueError(f"tie_break must be 'lp', 'exact' or 'none', got {self.tie_break!r}")

    @property
    def tuning(self) -> bool:
        return self.mode in ("both", "tune")

    @property
    def insertion(self) -> bool:
        return self.mode in ("both", "insert")


@dataclass(frozen=True)
class StageBuffer:
    """One stage buffer: the edges of one net (not loop-carried), sharing one depth."""

    index: int
    net: str
    driver: str
    edges: tuple[int, ...]
    sinks: tuple[str, ...]
    original_depth: int
    capacity: int  # samples per PMU (depth_per_PMU of this buffer)


@dataclass(frozen=True)
class InsertionSlot:
    """Where a whole new buffer may go: on buffer ``buffer``'s edges into join ``join``."""

    index: int
    buffer: int
    join: str
    edges: tuple[int, ...]
    capacity: int


@dataclass(frozen=True)
class BufferProblem:
    """The data of one balancing model (see :func:`buffer_problem`)."""

    graph: Graph
    options: BufferOptions
    nodes: tuple[str, ...]          # nodes on some balanced edge, topological order
    sources: tuple[str, ...]        # nodes without balanced in-edges (off-chip loads)
    joins: tuple[str, ...]          # nodes fed by two or more buffers
    buffers: tuple[StageBuffer, ...]
    slots: tuple[InsertionSlot, ...]
    inputs: dict[str, tuple[int, ...]]  # node -> buffers feeding it
    loop_edges: tuple[int, ...]
    horizon: int
    notes: tuple[str, ...] = ()

    @property
    def pmus_before(self) -> int:
        """PMUs of the original buffers (``Σ ceil(d0_b / D_b)``)."""
        return sum(pmus_for(b.original_depth, b.capacity) for b in self.buffers)

    @property
    def network(self) -> bool:
        """True when the model is a network LP (every ``D = 1``, no strict capacity)."""
        caps = [b.capacity for b in self.buffers] + [k.capacity for k in self.slots]
        return all(c == 1 for c in caps) and not (self.options.strict_new_capacity and self.slots)

    def slot_of(self, buffer: int, join: str) -> InsertionSlot | None:
        """The insertion slot of ``buffer`` into ``join``, if any."""
        return self._slot_index.get((buffer, join))

    @property
    def _slot_index(self) -> dict[tuple[int, str], InsertionSlot]:
        cache = self.__dict__.get("_slots_by_key")
        if cache is None:
            cache = {(k.buffer, k.join): k for k in self.slots}
            object.__setattr__(self, "_slots_by_key", cache)
        return cache


def pmus_for(depth: int, capacity: int, strict: bool = False) -> int:
    """PMUs a buffer of ``depth`` samples needs: ``ceil(depth/D)``; strict: ``floor(depth/D)+1``.

    A depth of 0 needs no PMU in either form (an unused slot).

    Examples
    --------
    >>> pmus_for(5, 2), pmus_for(4, 2), pmus_for(4, 2, strict=True), pmus_for(0, 2, strict=True)
    (3, 2, 3, 0)
    """
    if depth <= 0:
        return 0
    return depth // capacity + 1 if strict else -(-depth // capacity)


def buffer_capacity(edge, spec=None, depth_per_pmu: int | None = None) -> int:
    """Samples one PMU holds for ``edge``'s buffer (the buffer's ``depth_per_PMU``).

    The override when given; else ``spec.pmu_depth(bytes)`` (a 0-byte edge: ``spec.pmu_bytes``);
    1 without a spec or without ``bytes``.

    Examples
    --------
    >>> from model.graph import Edge
    >>> buffer_capacity(Edge("a", "b", bytes=4096)), buffer_capacity(Edge("a", "b"), None, 8)
    (1, 8)
    """
    if depth_per_pmu is not None:
        return int(depth_per_pmu)
    if spec is None or edge.bytes is None or not hasattr(spec, "pmu_depth"):
        return 1
    if edge.bytes <= 0:
        return max(1, int(spec.pmu_bytes))
    return spec.pmu_depth(max(1, math.ceil(edge.bytes)))


def edge_depth(graph: Graph, i: int) -> int:
    depth = graph.edges[i].depth
    if depth is None:
        return DEFAULT_DEPTH
    if isinstance(depth, bool) or int(depth) != depth or depth < 0:
        e = graph.edges[i]
        raise BufferBalancingError(f"{graph.name}: edges[{i}] ({e.src} -> {e.dst}): depth must be "
                                   f"a non-negative integer, got {depth!r}")
    return int(depth)


def buffer_problem(graph: Graph, spec=None, options: BufferOptions | None = None) -> BufferProblem:
    """Collect buffers, joins, slots and sources of ``graph`` (one section, or several).

    Parameters
    ----------
    graph : Graph
    spec : RduSpec, optional
        Gives each buffer's PMU capacity from its bytes per sample.
    options : BufferOptions, optional

    Returns
    -------
    BufferProblem

    Raises
    ------
    BufferBalancingError
        For a bad depth or a cycle of same-iteration edges.

    Examples
    --------
    >>> from model.graph import Graph, Node, Edge
    >>> g = Graph("d", [Node(n) for n in "fabj"], [Edge("f", "a"), Edge("a", "j"),
    ...                                             Edge("f", "b"), Edge("b", "j")])
    >>> p = buffer_problem(g)
    >>> p.joins, p.sources, len(p.buffers), len(p.slots)
    (('j',), ('f',), 4, 2)
    """
    options = options or BufferOptions()
    order = _topological_order(graph)
    loop_edges = tuple(i for i, e in enumerate(graph.edges) if e.loop_carried)
    buffers, notes = _buffers(graph, spec, options)
    inputs: dict[str, list[int]] = defaultdict(list)
    for b in buffers:
        for sink in b.sinks:
            inputs[sink].append(b.index)
    joins = tuple(v for v in order if len(inputs.get(v, ())) >= 2)
    slots = _slots(buffers, joins, inputs, graph) if options.insertion else ()
    used = {b.driver for b in buffers} | {s for b in buffers for s in b.sinks}
    nodes = tuple(v for v in order if v in used)
    sources = tuple(v for v in nodes if not inputs.get(v))
    horizon = sum(b.original_depth for b in buffers) + len(nodes) + 8
    if loop_edges:
        notes.append(f"{len(loop_edges)} loop-carried edge(s) not balanced (depth kept)")
    return BufferProblem(graph, options, nodes, sources, joins, tuple(buffers), tuple(slots),
                         {v: tuple(bs) for v, bs in inputs.items()}, loop_edges, horizon,
                         tuple(notes))


def _topological_order(graph: Graph) -> list[str]:
    try:
        return graph.topological_order()
    except nx.NetworkXUnfeasible:
        g = nx.DiGraph((e.src, e.dst) for e in graph.edges if not e.loop_carried)
        cycle = " -> ".join(u for u, _ in nx.find_cycle(g))
        raise BufferBalancingError(
            f"{graph.name}: same-iteration edges form a cycle ({cycle}); mark the edge that "
            f"feeds the next iteration with \"distance\": 1") from None


def _buffers(graph: Graph, spec, options: BufferOptions) -> tuple[list[StageBuffer], list[str]]:
    buffers, notes = [], []
    for net in graph.nets:
        edges = tuple(i for i in net.edges if not graph.edges[i].loop_carried)
        if not edges:
            continue
        depths = sorted({edge_depth(graph, i) for i in edges})
        if len(depths) > 1:
            notes.append(f"net {net.id} of {net.driver}: edges disagree on depth {depths}; "
                         f"using {depths[-1]}")
        capacity = min(buffer_capacity(graph.edges[i], spec, options.depth_per_pmu) for i in edges)
        sinks = tuple(dict.fromkeys(graph.edges[i].dst for i in edges))
        buffers.append(StageBuffer(len(buffers), net.id, net.driver, edges, sinks, depths[-1],
                                   capacity))
    return buffers, notes


def _slots(buffers, joins, inputs, graph: Graph) -> list[InsertionSlot]:
    slots = []
    for v in joins:
        for b in inputs[v]:
            buf = buffers[b]
            edges = tuple(i for i in buf.edges if graph.edges[i].dst == v)
            slots.append(InsertionSlot(len(slots), b, v, edges, buf.capacity))
    return slots


# ---------------------------------------------------------------------------------------------
# balance checks on plain numbers (also used to skip balanced sections, step 940)
# ---------------------------------------------------------------------------------------------
def arrival_depths(problem: BufferProblem, depths, new_depths=None, loads=None) -> dict[str, int]:
    """Arrival depth of every node: the latest input (sources at their load time, default 0)."""
    new_depths = new_depths or [0] * len(problem.slots)
    loads = loads or {}
    arrival: dict[str, int] = {}
    for v in problem.nodes:
        ins = problem.inputs.get(v, ())
        if not ins:
            arrival[v] = int(loads.get(v, 0))
            continue
        arrival[v] = max(_input_arrival(problem, arrival, b, v, depths, new_depths) for b in ins)
    return arrival


def _input_arrival(problem, arrival, b, v, depths, new_depths) -> int:
    buf = problem.buffers[b]
    slot = problem.slot_of(b, v)
    return arrival[buf.driver] + depths[b] + (new_depths[slot.index] if slot else 0)


def unbalanced_joins(problem: BufferProblem, depths, new_depths=None, loads=None) -> list[str]:
    """Joins whose inputs arrive at different depths (loads as given, default 0).

    Examples
    --------
    >>> from model.graph import Graph, Node, Edge
    >>> g = Graph("d", [Node(n) for n in "fabj"], [Edge("f", "a"), Edge("a", "j", depth=2),
    ...                                             Edge("f", "b"), Edge("b", "j")])
    >>> p = buffer_problem(g)
    >>> unbalanced_joins(p, [b.original_depth for b in p.buffers])
    ['j']
    """
    new_depths = new_depths or [0] * len(problem.slots)
    arrival = arrival_depths(problem, depths, new_depths, loads)
    return [v for v in problem.joins
            if len({_input_arrival(problem, arrival, b, v, depths, new_depths)
                    for b in problem.inputs[v]}) > 1]


def balanced_as_is(problem: BufferProblem) -> dict[str, int] | None:
    """Load times that balance the original depths (all 0 without load shifting), or None."""
    depths = [b.original_depth for b in problem.buffers]
    if not problem.options.load_shift:
        return {} if not unbalanced_joins(problem, depths) else None
    offsets = _consistent_offsets(problem, depths)
    if offsets is None:
        return None
    return {s: offsets[s] for s in problem.sources}


def _consistent_offsets(problem: BufferProblem, depths) -> dict[str, int] | None:
    """Potentials with ``A_v - A_u = depth`` on every buffer edge, each component's min 0."""
    adjacency: dict[str, list[tuple[str, int]]] = defaultdict(list)
    for b in problem.buffers:
        for sink in b.sinks:
            adjacency[b.driver].append((sink, depths[b.index]))
            adjacency[sink].append((b.driver, -depths[b.index]))
    potential: dict[str, int] = {}
    for root in problem.nodes:
        if root in potential:
            continue
        component, stack = [root], [root]
        potential[root] = 0
        while stack:
            u = stack.pop()
            for v, w in adjacency[u]:
                if v not in potential:
                    potential[v] = potential[u] + w
                    component.append(v)
                    stack.append(v)
                elif potential[v] != potential[u] + w:
                    return None
        low = min(potential[v] for v in component)
        for v in component:
            potential[v] -= low
    return potential
