"""Stage-buffer depth balancing as one global MIP per section (source 001, pass 2).

Every multi-sink net of a section is one *stage buffer* (its edges share the depth, as
graph.json says). When two or more buffers feed one node (a *join*), every path into the
join must carry the same total buffer depth, or the shorter path fills up and back pressure
throttles the section (digest §1.4). The model gives every node an *arrival depth* ``A_v``
(node-potential form, digest §3.7), so no path is ever enumerated; nested joins, joins with
three or more inputs and buffers shared by several consumers follow from the same rows.

The model, read top to bottom (OR-Tools-sample style):

* **data** (:func:`buffer_problem`): buffers (one per net, original depth ``d0_b``, PMU
  capacity ``D_b`` in samples), joins, insertion slots (one per (buffer, join) input, at the
  end of the path next to the join, [0187]), sources (off-chip loads);
* **variables**: ``A_v`` per node, ``B_b`` (the depth at which buffer ``b`` delivers),
  ``depth_b >= d0_b``, ``pmu_b``, per slot ``new_depth_k``, ``new_pmu_k`` (and a binary
  ``used_k`` in the strict variant); a source's ``A_s`` is its load time;
* **constraints** (families, used by the infeasibility diagnosis):
  ``buffer-depth`` ``B_b = A_u + depth_b``; ``balance`` ``A_v = B_b + new_depth_k`` for every
  input of every node; ``depth-only-grows`` ``depth_b >= d0_b``; ``tuning-disabled``
  (insert-only mode) ``depth_b = d0_b``; ``load-time`` (load shifting off) ``A_s = 0``;
  ``capacity`` ``pmu_b·D_b >= depth_b``; ``new-capacity`` ``new_pmu_k·D_k >= new_depth_k``
  (strict: ``>= new_depth_k + used_k`` with ``new_depth_k <= H·used_k``, so an unused slot
  costs nothing);
* **objective**: fewest PMUs ``Σ pmu_b + Σ new_pmu_k``; then, as a deterministic
  tie-break, least added depth: by default a network LP with every buffer's PMU count fixed
  at the first answer (``tie_break="lp"``), or a second MIP over every answer with the
  optimal PMU total (``"exact"``); skipped when PMUs equal depths (``D = 1``);
* **decode**: final depth per buffer, inserted buffers, load times, PMUs.

When every ``D_b = 1`` and new buffers use ``>=``, PMUs equal depths and the rows are
difference constraints on the potentials, each with a private slack column: the matrix is a
network matrix (totally unimodular), so the LP relaxation is integral. The model is then
solved as an LP (on every backend that takes continuous variables) and the result says so.

Caveats
-------
* Loop-carried edges (``distance > 0``) are not balanced (their depth is left as it is);
  :attr:`BufferProblem.loop_edges` lists them so reports can say so.
* An edge without ``depth`` counts as depth :data:`DEFAULT_DEPTH` (1). Edges of one net
  that disagree on depth use the largest (a note says so).
* Only PMU counts need to be integer: with them fixed, the rest is a network LP whose
  vertices are integral, so HiGHS, SCIP and Pyomo get continuous depths (CP-SAT integer
  ones); a ``D_b = 1`` buffer's PMU count is its depth, and a buffer whose one PMU holds
  any depth the model allows costs a constant 1, so neither adds an integer variable.
* ``D_b`` (samples per PMU): the ``depth_per_pmu`` override when given; else, with a
  hardware spec, ``spec.pmu_depth(bytes)`` for the net's bytes per sample (a net that
  carries 0 bytes fits any depth in one PMU); without a spec or bytes, 1.
* Potentials are bounded by ``H = Σ d0 + #nodes + 8`` (finite domains for CP-SAT); a solution
  that needs larger arrival depths is not searched.
* The joint multi-section solve is the same call on the whole graph (sections joined through
  DRAM become independent sources when load shifting is on).

Examples
--------
FIG. 12 of the patent: three paths of depth 5, 3, 4 into two joins sharing path 2.

>>> from formulations.buffer_examples import fig12_graph
>>> sol = solve_buffers(fig12_graph(), options=BufferOptions(mode="tune", depth_per_pmu=1))
>>> sol.status, [sol.depths[b.index] for b in sol.problem.buffers if b.original_depth > 1]
('OPTIMAL', [5, 5, 5])
"""

from __future__ import annotations

import math
import re
import time
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import networkx as nx

from formulations.solver import (LinearModel, SolveResult, SolveStatus, explain_infeasible,
                                 get_backend, quicksum, write_model_file)
from model.graph import Graph

__all__ = ["MODES", "DEFAULT_DEPTH", "BufferOptions", "StageBuffer", "InsertionSlot",
           "BufferProblem", "BufferVars", "BufferSolution", "BufferBalancingError",
           "buffer_problem", "build_buffer_model", "solve_buffers", "buffer_capacity",
           "arrival_depths", "unbalanced_joins", "pmus_for"]

#: Balancing modes: tune existing buffers only, insert new ones only, or both (default).
MODES = ("both", "tune", "insert")
#: Depth of an edge whose graph.json entry has none.
DEFAULT_DEPTH = 1
#: Backends that need an all-integer model (no LP relaxation there).
_INTEGER_ONLY = ("cp-sat",)


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


def _edge_depth(graph: Graph, i: int) -> int:
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
        depths = sorted({_edge_depth(graph, i) for i in edges})
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


def _balanced_as_is(problem: BufferProblem) -> dict[str, int] | None:
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


# ---------------------------------------------------------------------------------------------
# variables, constraints, objective
# ---------------------------------------------------------------------------------------------
@dataclass
class BufferVars:
    """The variables of one balancing model, by problem index.

    ``pmu[b]`` is a variable, the depth variable itself (``D_b = 1``: PMUs equal depth) or a
    constant (``D_b`` so large that one PMU holds any depth the model allows); likewise
    ``new_pmu[k]``. ``used`` holds the strict variant's indicators.
    """

    arrival: dict[str, Any]
    delivered: list[Any]
    depth: list[Any]
    pmu: list[Any]
    new_depth: list[Any]
    new_pmu: list[Any]
    used: list[Any] | None

    def pmu_terms(self) -> list[Any]:
        """The PMU count as a list of terms (variables and constants)."""
        return list(self.pmu) + list(self.new_pmu)

    def pmu_vars(self) -> list[Any]:
        """The PMU variables that are not depth variables or constants."""
        depth_ids = {id(v) for v in self.depth} | {id(v) for v in self.new_depth}
        return [v for v in self.pmu_terms() if not isinstance(v, int) and id(v) not in depth_ids]

    def added_depth_terms(self) -> list[Any]:
        return list(self.depth) + list(self.new_depth)


_UNSAFE = re.compile(r"[^A-Za-z0-9_.\-]")


def _safe(name: str) -> str:
    """A name part without whitespace or odd characters, at most 40 characters (names made
    of several parts carry an index that keeps them unique)."""
    return _UNSAFE.sub("_", str(name))[:40] or "_"


def build_buffer_model(problem: BufferProblem, *, relax: bool = False,
                       integer_depths: bool = True, objective: str = "pmus",
                       pmu_cap: float | None = None) -> tuple[LinearModel, BufferVars]:
    """The balancing MIP of ``problem``.

    Parameters
    ----------
    problem : BufferProblem
    relax : bool, default False
        Continuous variables everywhere (the LP relaxation).
    integer_depths : bool, default True
        Integer depths and arrival depths. False keeps only PMU counts (and indicators)
        integer: with integer PMU counts the rest is a network LP, whose vertices are
        integral, so nothing is lost (CP-SAT needs True).
    objective : {"pmus", "depth"}
        Minimise total PMUs, or added depth (the tie-break; with ``pmu_cap``).
    pmu_cap : float, optional
        Add ``Σ PMUs <= pmu_cap`` (family ``pmu-total``).

    Returns
    -------
    (LinearModel, BufferVars)

    Examples
    --------
    >>> from model.graph import Graph, Node, Edge
    >>> g = Graph("d", [Node(n) for n in "fabj"], [Edge("f", "a"), Edge("a", "j", depth=2),
    ...                                             Edge("f", "b"), Edge("b", "j")])
    >>> m, v = build_buffer_model(buffer_problem(g, options=BufferOptions(depth_per_pmu=1)))
    >>> m.solve(backend="highs").objective
    6.0
    """
    if objective not in ("pmus", "depth"):
        raise ValueError(f"objective must be 'pmus' or 'depth', got {objective!r}")
    model = LinearModel(f"buffers_{_safe(problem.graph.name)}")
    bvars = _add_variables(model, problem, integer=not relax, integer_depths=integer_depths)
    _add_depth_rows(model, problem, bvars)
    _add_balance_rows(model, problem, bvars)
    _add_load_rows(model, problem, bvars)
    _add_capacity_rows(model, problem, bvars)
    if pmu_cap is not None:
        model.add(quicksum(bvars.pmu_terms()) <= pmu_cap, name="pmu_total", family="pmu-total")
    if objective == "pmus":
        model.minimize(quicksum(bvars.pmu_terms()))
    else:
        base = sum(b.original_depth for b in problem.buffers)
        model.minimize(quicksum(bvars.added_depth_terms()) - base)
    return model, bvars


def _add_variables(model: LinearModel, p: BufferProblem, integer: bool,
                   integer_depths: bool) -> BufferVars:
    H, whole = p.horizon, integer and integer_depths
    arrival = {v: model.add_var(f"A_{k}_{_safe(v)}", 0, H, whole) for k, v in enumerate(p.nodes)}
    delivered = [model.add_var(f"B_{b.index}", 0, H, whole) for b in p.buffers]
    depth = [model.add_var(f"depth_{b.index}_{_safe(b.driver)}", 0, H, whole) for b in p.buffers]
    new_depth = [model.add_var(f"new_depth_{k.index}_{_safe(k.join)}", 0, H, whole)
                 for k in p.slots]
    strict = p.options.strict_new_capacity
    pmu = [_pmu_var(model, f"pmu_{b.index}", depth[b.index], b.capacity, H, integer,
                    lower=pmus_for(b.original_depth, b.capacity)) for b in p.buffers]
    new_pmu = [_pmu_var(model, f"new_pmu_{k.index}", new_depth[k.index], k.capacity, H, integer,
                        strict=strict) for k in p.slots]
    used = [model.add_var(f"used_{k.index}", 0, 1, integer) for k in p.slots] if strict else None
    return BufferVars(arrival, delivered, depth, pmu, new_depth, new_pmu, used)


def _pmu_var(model: LinearModel, name: str, depth_var, capacity: int, H: int, integer: bool,
             lower: int = 0, strict: bool = False):
    """PMUs of one buffer: the depth itself (D = 1), 1 (one PMU holds any depth), or a variable."""
    if capacity == 1 and not strict:
        return depth_var
    if lower >= 1 and capacity >= H and not strict:
        return 1
    return model.add_var(name, lower, pmus_for(H, capacity, strict), integer)


def _add_depth_rows(model: LinearModel, p: BufferProblem, v: BufferVars) -> None:
    for b in p.buffers:
        tag = f"{b.index}_{_safe(b.driver)}"
        model.add_row([v.delivered[b.index], v.arrival[b.driver], v.depth[b.index]],
                      [1, -1, -1], 0, 0, name=f"buffer_depth_{tag}", family="buffer-depth")
        model.add_row([v.depth[b.index]], [1], lb=b.original_depth, name=f"grow_{tag}",
                      family="depth-only-grows")
        if not p.options.tuning:
            model.add_row([v.depth[b.index]], [1], ub=b.original_depth, name=f"no_tuning_{tag}",
                          family="tuning-disabled")


def _add_balance_rows(model: LinearModel, p: BufferProblem, v: BufferVars) -> None:
    for b in p.buffers:
        for position, sink in enumerate(b.sinks):
            slot = p.slot_of(b.index, sink)
            cols, coefs = [v.arrival[sink], v.delivered[b.index]], [1, -1]
            if slot is not None:
                cols.append(v.new_depth[slot.index])
                coefs.append(-1)
            model.add_row(cols, coefs, 0, 0, name=f"balance_{_safe(sink)}_from_{_safe(b.driver)}"
                          f"_b{b.index}_{position}", family="balance")


def _add_load_rows(model: LinearModel, p: BufferProblem, v: BufferVars) -> None:
    if p.options.load_shift:
        return
    for k, s in enumerate(p.sources):
        model.add_row([v.arrival[s]], [1], 0, 0, name=f"load_fixed_{k}_{_safe(s)}",
                      family="load-time")


def _add_capacity_rows(model: LinearModel, p: BufferProblem, v: BufferVars) -> None:
    for b in p.buffers:
        pmu = v.pmu[b.index]
        if pmu is not v.depth[b.index] and not isinstance(pmu, int):
            model.add_row([pmu, v.depth[b.index]], [b.capacity, -1], lb=0,
                          name=f"capacity_{b.index}", family="capacity")
    for k in p.slots:
        pmu, depth = v.new_pmu[k.index], v.new_depth[k.index]
        if v.used is not None:
            used = v.used[k.index]
            model.add_row([pmu, depth, used], [k.capacity, -1, -1], lb=0,
                          name=f"new_capacity_{k.index}", family="new-capacity")
            model.add_row([depth, used], [1, -p.horizon], ub=0, name=f"new_used_{k.index}",
                          family="new-buffer-used")
        elif pmu is not depth:
            model.add_row([pmu, depth], [k.capacity, -1], lb=0, name=f"new_capacity_{k.index}",
                          family="new-capacity")


# ---------------------------------------------------------------------------------------------
# warm start
# ---------------------------------------------------------------------------------------------
def _hint(problem: BufferProblem, bvars: BufferVars) -> dict[Any, float] | None:
    """A feasible start: the heuristic's answer (see formulations.buffers.heuristic)."""
    from formulations.buffers.heuristic import warm_start

    start = warm_start(problem)
    if start is None:
        return None
    depths, new_depths, arrival = start
    hint: dict[Any, float] = {bvars.arrival[v]: arrival[v] for v in problem.nodes}
    strict = problem.options.strict_new_capacity
    for b in problem.buffers:
        hint[bvars.delivered[b.index]] = arrival[b.driver] + depths[b.index]
        hint[bvars.depth[b.index]] = depths[b.index]
        if _is_own_var(bvars.pmu[b.index], bvars.depth[b.index]):
            hint[bvars.pmu[b.index]] = pmus_for(depths[b.index], b.capacity)
    for k in problem.slots:
        hint[bvars.new_depth[k.index]] = new_depths[k.index]
        if _is_own_var(bvars.new_pmu[k.index], bvars.new_depth[k.index]):
            hint[bvars.new_pmu[k.index]] = pmus_for(new_depths[k.index], k.capacity, strict)
        if bvars.used is not None:
            hint[bvars.used[k.index]] = 1 if new_depths[k.index] > 0 else 0
    return hint


def _is_own_var(pmu, depth) -> bool:
    return pmu is not depth and not isinstance(pmu, int)


# ---------------------------------------------------------------------------------------------
# solve and decode
# ---------------------------------------------------------------------------------------------
@dataclass
class BufferSolution:
    """The decoded answer of :func:`solve_buffers`.

    ``depths`` (per buffer) and ``new_depths`` (per slot) are final; ``loads`` maps each
    source to its load time. ``status`` is a :class:`SolveStatus` name or ``"SKIPPED"``
    (already balanced, nothing to solve); on INFEASIBLE/ERROR the depths are the original
    ones and ``diagnosis`` says why.
    """

    problem: BufferProblem
    status: str
    depths: list[int]
    new_depths: list[int]
    loads: dict[str, int]
    method: str
    results: list[SolveResult] = field(default_factory=list)
    lp_integral: bool | None = None
    build_time: float = 0.0
    solve_time: float = 0.0
    diagnosis: str = ""

    @property
    def ok(self) -> bool:
        return self.status in ("OPTIMAL", "FEASIBLE", "SKIPPED")

    @property
    def buffer_pmus(self) -> list[int]:
        return [pmus_for(self.depths[b.index], b.capacity) for b in self.problem.buffers]

    @property
    def slot_pmus(self) -> list[int]:
        strict = self.problem.options.strict_new_capacity
        return [pmus_for(self.new_depths[k.index], k.capacity, strict) for k in self.problem.slots]

    @property
    def pmus_before(self) -> int:
        return self.problem.pmus_before

    @property
    def pmus_after(self) -> int:
        return sum(self.buffer_pmus) + sum(self.slot_pmus)

    @property
    def added_depth(self) -> int:
        return (sum(self.depths) - sum(b.original_depth for b in self.problem.buffers)
                + sum(self.new_depths))

    @property
    def result(self) -> SolveResult | None:
        """The main (PMU) solve, None when skipped."""
        return self.results[0] if self.results else None

    def unbalanced(self) -> list[str]:
        """Joins left unbalanced by this answer (empty for a solved model)."""
        return unbalanced_joins(self.problem, self.depths, self.new_depths, self.loads)

    def edge_rows(self) -> dict[int, dict[str, Any]]:
        """Per edge of the graph: the ``buffers`` row of mapping.json.

        Keys: ``original_depth``, ``final_depth`` (tuned buffer plus inserted buffer),
        ``depth_added``, ``buffer_inserted``, ``pmus`` (the edge's stage buffer, shared by its
        net, plus an inserted buffer), and the split ``tuned_depth``, ``inserted_depth``,
        ``buffer_pmus``, ``inserted_pmus``, ``pmus_added`` (PMUs balancing added for this
        edge: its buffer's growth, shared by the net, plus the inserted buffer),
        ``depth_per_pmu``, ``balanced`` (False for loop-carried edges).
        """
        p = self.problem
        rows: dict[int, dict[str, Any]] = {}
        buffer_pmus, slot_pmus = self.buffer_pmus, self.slot_pmus
        for b in p.buffers:
            for i in b.edges:
                slot = p.slot_of(b.index, p.graph.edges[i].dst)
                added = self.new_depths[slot.index] if slot else 0
                extra = slot_pmus[slot.index] if slot else 0
                original = _edge_depth(p.graph, i)
                final = self.depths[b.index] + added
                rows[i] = {"original_depth": original, "final_depth": final,
                           "depth_added": final - original, "buffer_inserted": added > 0,
                           "pmus": buffer_pmus[b.index] + extra,
                           "tuned_depth": self.depths[b.index], "inserted_depth": added,
                           "buffer_pmus": buffer_pmus[b.index], "inserted_pmus": extra,
                           "pmus_added": buffer_pmus[b.index] + extra
                           - pmus_for(b.original_depth, b.capacity),
                           "depth_per_pmu": b.capacity, "balanced": True}
        for i in p.loop_edges:
            d = _edge_depth(p.graph, i)
            rows[i] = {"original_depth": d, "final_depth": d, "depth_added": 0,
                       "buffer_inserted": False, "pmus": 0, "tuned_depth": d,
                       "inserted_depth": 0, "buffer_pmus": 0, "inserted_pmus": 0,
                       "pmus_added": 0, "depth_per_pmu": None, "balanced": False}
        return dict(sorted(rows.items()))

    def inserted_buffers(self) -> list[dict[str, Any]]:
        """The whole buffers inserted: on which edges, before which join, depth and PMUs."""
        out = []
        for k, depth, pmus in zip(self.problem.slots, self.new_depths, self.slot_pmus):
            if depth > 0:
                buf = self.problem.buffers[k.buffer]
                out.append({"edges": list(k.edges), "src": buf.driver, "join": k.join,
                            "net": buf.net, "depth": depth, "pmus": pmus})
        return out


def solve_buffers(graph: Graph, spec=None, options: BufferOptions | None = None, *,
                  backend: str = "highs", time_limit: float = 60.0, seed: int = 0,
                  export_path: str | Path | None = None, hint: bool = True,
                  problem: BufferProblem | None = None) -> BufferSolution:
    """Balance every join of ``graph`` with the fewest PMUs (then the least added depth).

    Parameters
    ----------
    graph : Graph
        One section (or several solved jointly).
    spec : RduSpec, optional
        PMU capacity per buffer from bytes per sample (see :func:`buffer_capacity`).
    options : BufferOptions, optional
    backend : str
        A name of :func:`formulations.solver.available_backends`.
    time_limit : float
        Seconds per solve.
    seed : int
    export_path : str or Path, optional
        Write the model there (``.mps`` or ``.lp``).
    hint : bool, default True
        Warm-start the solver with the heuristic's answer.
    problem : BufferProblem, optional
        A problem already built from ``graph`` (skips :func:`buffer_problem`).

    Returns
    -------
    BufferSolution
        Never raises for an infeasible model: the status says so and ``diagnosis`` names the
        joins and constraint families (e.g. tune-only with a buffer shared by two joins that
        need different depths).

    Raises
    ------
    BufferBalancingError
        For bad input (a depth that is not a non-negative integer, a cycle).
    ValueError
        For an unknown backend.

    Examples
    --------
    >>> from formulations.buffer_examples import fig11_graph
    >>> sol = solve_buffers(fig11_graph(), options=BufferOptions(depth_per_pmu=1))
    >>> sol.pmus_before, sol.pmus_after, sol.lp_integral, sol.unbalanced()
    (3, 4, True, [])
    """
    get_backend(backend)  # unknown name: ValueError listing the available ones
    started = time.perf_counter()
    problem = problem or buffer_problem(graph, spec, options)
    original = [b.original_depth for b in problem.buffers]
    loads = _balanced_as_is(problem) if problem.joins else {}
    if loads is not None:
        return BufferSolution(problem, "SKIPPED", original, [0] * len(problem.slots), loads,
                              "already balanced: no model solved",
                              build_time=time.perf_counter() - started)
    integer_only = backend in _INTEGER_ONLY
    as_lp = problem.network and not integer_only
    model, bvars = build_buffer_model(problem, relax=as_lp, integer_depths=integer_only)
    if hint:
        start = _hint(problem, bvars)
        if start is not None:
            model.set_hint(start)
    build_time = time.perf_counter() - started
    if export_path:
        Path(export_path).parent.mkdir(parents=True, exist_ok=True)
        write_model_file(model, export_path)
    result = model.solve(backend=backend, time_limit=time_limit, seed=seed,
                         mip_gap=None if as_lp else 0.0)
    if not result.has_solution:
        fallback = _fallback(problem, result, build_time)
        if fallback is not None:
            return fallback
        return _failed(problem, model, result, backend, seed, time_limit, build_time)
    results, values = [result], result.values
    lp_integral = _integral(problem, values) if problem.network else None
    if _needs_second_solve(problem, bvars, values):
        second = _second_solve(problem, values, result, backend, time_limit, seed)
        results.append(second)
        if second.has_solution:
            values = second.values
    return _decode(problem, values, results, lp_integral, build_time, as_lp)


def _integral(problem: BufferProblem, values) -> bool:
    return all(abs(x - round(x)) <= 1e-6 for x in values.values())


def _needs_second_solve(problem: BufferProblem, bvars: BufferVars, values) -> bool:
    """Tie-break (added depth > 0 and PMUs are not depths) or non-vertex depths to polish."""
    if problem.network:
        return False  # PMUs = depths: the first solve already minimised added depth
    if not _integral(problem, values):
        return True
    added = sum(values[v.name] for v in bvars.added_depth_terms()) - sum(
        b.original_depth for b in problem.buffers)
    return problem.options.tie_break != "none" and added > 0.5


def _second_solve(problem: BufferProblem, values, first: SolveResult, backend: str,
                  time_limit: float, seed: int) -> SolveResult:
    """Least added depth: over all PMU-optimal answers ("exact", a MIP), or with every
    buffer's PMU count fixed at the first answer and no ``D = 1`` buffer deeper than there
    ("lp": bounds only, so a network LP with an integral optimum)."""
    if problem.options.tie_break == "exact":
        model, _ = build_buffer_model(problem, objective="depth", pmu_cap=round(first.objective))
        model.set_hint(dict(values))
        return model.solve(backend=backend, time_limit=time_limit, seed=seed, mip_gap=0.0)
    model, bvars = build_buffer_model(problem, relax=True, objective="depth")
    for var in bvars.pmu_vars() + list(bvars.used or []):
        value = round(values[var.name])
        model.set_bounds(var, value, value)
    for var in _depths_counted_as_pmus(bvars):  # D = 1: PMUs are the depth; none may grow
        model.set_bounds(var, ub=math.ceil(values[var.name] - 1e-6))
    lp_backend = "highs" if backend in _INTEGER_ONLY else backend
    return model.solve(backend=lp_backend, time_limit=time_limit, seed=seed)


def _fallback(problem: BufferProblem, result: SolveResult, build_time: float):
    """The warm start as the answer when the solver stopped without one (not infeasible)."""
    from formulations.buffers.heuristic import warm_start

    if result.status is SolveStatus.INFEASIBLE:
        return None
    start = warm_start(problem)
    if start is None:
        return None
    depths, new_depths, arrival = start
    loads = {s: arrival[s] for s in problem.sources}
    return BufferSolution(problem, "FEASIBLE", depths, new_depths, loads,
                          f"heuristic warm start (solver: {result.status.name}: "
                          f"{result.message[:120]})", [result], build_time=build_time,
                          solve_time=result.wall_time)


def _depths_counted_as_pmus(bvars: BufferVars) -> list[Any]:
    depth_ids = {id(v) for v in bvars.depth} | {id(v) for v in bvars.new_depth}
    return [v for v in bvars.pmu_terms() if not isinstance(v, int) and id(v) in depth_ids]


def _failed(problem: BufferProblem, model: LinearModel, result: SolveResult, backend: str,
            seed: int, time_limit: float, build_time: float) -> BufferSolution:
    diagnosis = result.message
    if result.status is SolveStatus.INFEASIBLE:
        diag_backend = "highs" if backend in _INTEGER_ONLY else backend
        diag = explain_infeasible(model.copy(name=f"{model.name}_diag"), backend=diag_backend,
                                  time_limit=min(time_limit, 30.0), seed=seed,
                                  keep=["buffer-depth", "balance"])
        diagnosis = _explain(problem, diag)
    original = [b.original_depth for b in problem.buffers]
    return BufferSolution(problem, result.status.name, original, [0] * len(problem.slots), {},
                          "global MIP", [result], build_time=build_time,
                          solve_time=result.wall_time, diagnosis=diagnosis)


def _explain(problem: BufferProblem, diag) -> str:
    """The infeasibility diagnosis in the graph's terms (buffers, joins, loads)."""
    words = _constraint_words(problem)
    blamed = [words.get(name, name) for fam in diag.families
              for name in diag.constraints.get(fam, ())]
    mode = problem.options.mode
    text = (f"no balancing exists in mode {mode!r}"
            f"{'' if problem.options.load_shift else ' without load shifting'}: the joins "
            f"cannot all be balanced while " + "; ".join(blamed or [str(diag)]))
    fixes = [] if problem.options.insertion else ["allow insertion (mode 'both')"]
    fixes += [] if problem.options.load_shift else ["allow load shifting"]
    return text + (f". Fix: {' or '.join(fixes)}" if fixes else "")


def _constraint_words(problem: BufferProblem) -> dict[str, str]:
    words = {}
    for b in problem.buffers:
        tag, edge = f"{b.index}_{_safe(b.driver)}", f"{b.driver} -> {', '.join(b.sinks)}"
        words[f"grow_{tag}"] = f"buffer {edge} keeps depth >= {b.original_depth}"
        words[f"no_tuning_{tag}"] = f"buffer {edge} stays at depth {b.original_depth} (no tuning)"
    for k, s in enumerate(problem.sources):
        words[f"load_fixed_{k}_{_safe(s)}"] = f"load time of {s} is fixed at 0"
    return words


def _decode(problem: BufferProblem, values, results, lp_integral, build_time,
            as_lp: bool) -> BufferSolution:
    def val(name: str) -> int:
        return int(round(values[name]))

    depths = [val(_var_name("depth", b.index, b.driver)) for b in problem.buffers]
    new_depths = [val(_var_name("new_depth", k.index, k.join)) for k in problem.slots]
    position = {v: k for k, v in enumerate(problem.nodes)}
    loads = {s: val(f"A_{position[s]}_{_safe(s)}") for s in problem.sources}
    optimal = results[0].status is SolveStatus.OPTIMAL and all(
        r.status is SolveStatus.OPTIMAL for r in results[1:])
    method = "network LP (integral relaxation)" if as_lp else "global MIP"
    if len(results) > 1:
        method += {"exact": " + least-added-depth MIP",
                   "lp": " + least-added-depth LP (PMUs fixed)"}.get(
            problem.options.tie_break, " + vertex polish LP")
    solution = BufferSolution(problem, "OPTIMAL" if optimal else "FEASIBLE", depths, new_depths,
                              loads, method, list(results), lp_integral, build_time,
                              sum(r.wall_time for r in results))
    if solution.unbalanced():
        solution.status = "ERROR"
        solution.diagnosis = ("decoded answer leaves joins unbalanced: "
                              + ", ".join(solution.unbalanced()[:5]))
    return solution


def _var_name(kind: str, index: int, who: str) -> str:
    return f"{kind}_{index}_{_safe(who)}"
