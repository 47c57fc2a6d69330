"""Streaming Engine modulo placement (source 004): tile, slot, issue cycle and II in one model.

Scope
-----
Every instruction ``n`` of one synchronous data-flow (SDF) gets a tile, a slot ``< II`` and an
issue cycle ``tau[n]`` with ``tau[n] = slot[n] + II * k[n]`` (one spoke counter, common phase).
The CP-SAT model reads top to bottom as data -> variables -> constraints -> objective -> solve ->
decode, with the constraint families named as in the digest (§4.4):

* ``A3 slot``      one instruction per (tile, slot): ``AllDifferent(tile * II + slot)``;
* ``M1 memory``    instructions sharing a tile-memory variable (transitively) on one tile;
* ``M2 capacity``  tile-memory variables of a tile fit its memories (``memories x depth``);
* ``B1 starts``    instructions that start the SDF on distinct tiles;
* ``S1 siblings``  children of a common parent on distinct tiles;
* ``R1 reach``     ``|tile[v] - tile[u]| <= 2`` with the link latency (1 or 2 cycles);
* ``T2 timing``    operand arrival ``tau[u] + 3 + lat`` <= issue ``tau[v] + d * II`` (``d`` the
  loop-carried distance);
* ``H1 hold``      the fabric has no queues: a value held ``h`` cycles after it arrives needs
  ``h // II`` delay entries (pass slots) on the consumer's tile, which count against its II slots.

Objective: the smallest II (swept from the lower bound up to ``max_ii``; a smaller II is proven
impossible when its model is INFEASIBLE), then the fewest cycles (makespan = last ready time,
``max tau + 3``). :func:`build_milp` is the same model as a MILP (:class:`LinearModel`, exportable
to ``.mps``) for a fixed II. Per II, :func:`solve_streaming` first tries to refute the II with
the tile layout relaxation (:mod:`formulations.streaming.layout`), then times the layout's
tiles (a warm start), solves the full model (issue windows and the sibling-latency cycle bound
of :mod:`formulations.streaming.bounds`; it refutes a small II fastest) until its schedules stop
improving, then asks for one cycle fewer with tight issue windows (:func:`prove_from_above`)
until that is refuted; if that runs out of time, the hold relaxation (:func:`relax_holds`: the
model without H1, a cycle bound often equal to the optimum) and destructive lower bounding from
that bound (:func:`close_gap`). Every CP-SAT model runs without its LP relaxation
(:data:`CP_PARAMS`, measured). :func:`explain` names the rule that makes an instance
unmappable, in the user's terms, before any search (pre-checks) or by relaxing rule families
one at a time.

Caveats
-------
* Delay semantics (DESIGN.md leaves the exact mechanism open): a delay entry is a slot of the
  consumer's tile that re-latches the held value for another II cycles (a shift register of
  ``h // II`` entries); any free slot of that tile serves. The simulator (:mod:`sim.streaming`)
  checks the same rule.
* One SF output per spoke entry (the paper's singular) is not enforced: a producer may send to
  consumers in several directions; the spoke entry lists every SF output it drives.
* Direct links only (``|dtile| <= max link offset``); no relay through tiles or the AF inside
  one SDF (pass trees and AF splits: :mod:`formulations.streaming.split`).

Examples
--------
>>> from hardware import load_hardware
>>> from model.graph import Graph, Node, Edge
>>> g = Graph("chain", [Node("a"), Node("b"), Node("c")], [Edge("a", "b"), Edge("b", "c")])
>>> sched = solve_streaming(g, load_hardware("se16"), time_limit=5)
>>> sched.ii, sched.cycles, sched.status
(1, 11, 'optimal')
"""

from __future__ import annotations

import math
import time
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable

import networkx as nx
from ortools.sat.python import cp_model

from formulations.solver import LinearModel, SolveResult, SolveStatus, quicksum
from formulations.solver.cp import export_cp_model, solve_cp_model
from formulations.streaming.bounds import cycle_bound, issue_windows
from formulations.streaming.layout import solve_layout
from hardware import StreamingEngineSpec
from model.graph import Graph

__all__ = [
    "StreamingProblem", "StreamingSchedule", "StreamingInfeasible", "RULES", "SPLIT_PROOF_RULES",
    "problem_from_graph", "lower_bounds", "precheck", "delays_needed", "schedule_cycles",
    "build_cp_model", "solve_model", "solve_at_ii", "solve_streaming", "relax_holds", "holds_fit",
    "close_gap", "prove_from_above", "build_milp", "solve_milp", "explain",
]

#: The rule families, in the order they are explained.
RULES = {
    "A4 slots": "instructions fit tiles x II slots",
    "A3 slot": "one instruction per (tile, slot)",
    "M1 memory": "instructions sharing a tile-memory variable on one tile",
    "M2 capacity": "tile-memory variables fit the tile's memories",
    "B1 starts": "instructions that start the data-flow on distinct tiles",
    "S1 siblings": "children of a common parent on distinct tiles",
    "R1 reach": "consumers within reach of the synchronous fabric",
    "T2 timing": "an operand arrives (issue + latency + link) before its consumer issues",
    "H1 hold": "values held >= II cycles need delay slots on the consumer's tile",
    "O1 operands": "at most max_operands operands per instruction",
    "R2 recurrence": "loop-carried cycles fit the II",
    "G0 graph": "same-iteration edges form a DAG",
    "T0 time limit": "the search ran out of time (nothing proven)",
}

#: Families the issue windows and the cycle bound rely on (all kept: the windows are valid).
#: Without ``H1 hold`` (the hold relaxation) the earliest issue and the cycle bound still hold.
WINDOW_FAMILIES = frozenset({"T2 timing", "R1 reach", "S1 siblings", "A3 slot"})

#: Rules no split into several SDFs can fix (the instruction form; a recurrence only gets
#: slower over the asynchronous fabric).
SPLIT_PROOF_RULES = ("O1 operands", "R2 recurrence", "G0 graph")


class StreamingInfeasible(Exception):
    """No legal mapping exists; ``reasons`` name the rules (see :data:`RULES`) in user terms."""

    def __init__(self, reasons: list[str]):
        self.reasons = list(reasons)
        super().__init__("; ".join(self.reasons))


# ---------------------------------------------------------------------------------------------
# data
# ---------------------------------------------------------------------------------------------
@dataclass
class StreamingProblem:
    """Indexed data of one SDF on one Streaming Engine (built by :func:`problem_from_graph`).

    ``edges`` are ``(u, v, distance)`` over node indices (duplicates removed); ``children[p]``
    the distinct successors of ``p`` other than ``p``; ``component[n]`` the index of ``n``'s
    tile-memory component (:attr:`components` lists its members and :attr:`component_vars` its
    variables); ``starts`` the instructions that start the SDF; ``latency`` maps a tile offset
    ``dt`` (``-R..R``) to its link latency (0 for the tile's own feedback path).
    """

    names: list[str]
    edges: list[tuple[int, int, int]]
    children: list[list[int]]
    starts: list[int]
    components: list[list[int]]
    component_vars: list[list[str]]
    component: list[int]
    latency: dict[int, int]
    tiles: int
    max_ii: int
    op_latency: int
    var_capacity: int
    max_operands: int
    operands: list[int]
    name: str = "sdf"

    @property
    def n(self) -> int:
        return len(self.names)

    @property
    def reach(self) -> int:
        return max(abs(dt) for dt in self.latency)


def problem_from_graph(graph: Graph, spec: StreamingEngineSpec) -> StreamingProblem:
    """Index ``graph`` for ``spec``: edges, siblings, SDF starts, memory components, latencies.

    Examples
    --------
    >>> from hardware import load_hardware
    >>> from model.graph import Graph, Node, Edge
    >>> g = Graph("g", [Node("a", mem_vars=("v",)), Node("b"), Node("c", mem_vars=("v",))],
    ...           [Edge("a", "b"), Edge("a", "c")])
    >>> p = problem_from_graph(g, load_hardware("se16"))
    >>> p.children[0], p.starts, p.components[p.component[0]], p.latency[-2]
    ([1, 2], [0], [0, 2], 2)
    """
    names = graph.node_ids
    index = {nid: i for i, nid in enumerate(names)}
    edges = sorted({(index[e.src], index[e.dst], int(e.distance)) for e in graph.edges})
    children = [sorted({v for u, v, _ in edges if u == p and v != p}) for p in range(len(names))]
    same_iteration_preds = defaultdict(set)
    operands = [0] * len(names)
    for u, v, d in edges:
        operands[v] += 1
        if d == 0:
            same_iteration_preds[v].add(u)
    _require_acyclic(graph)
    flagged = [i for i, node in enumerate(graph.nodes) if node.starts_sdf]
    starts = flagged or [i for i in range(len(names)) if not same_iteration_preds[i]]
    comp_of, members, comp_vars = _memory_components(graph, index)
    latency = {0: 0}
    for offset, lat in spec.links:
        latency[offset] = latency[-offset] = lat
    return StreamingProblem(
        names=names, edges=edges, children=children, starts=starts, components=members,
        component_vars=comp_vars, component=comp_of, latency=latency, tiles=spec.tiles,
        max_ii=spec.max_ii, op_latency=spec.instruction_latency,
        var_capacity=spec.memories_per_tile * spec.memory_depth, max_operands=spec.max_operands,
        operands=operands, name=graph.name)


def _require_acyclic(graph: Graph) -> None:
    """G0: same-iteration edges must form a DAG (a cycle needs a loop-carried edge)."""
    g = nx.DiGraph()
    g.add_edges_from((e.src, e.dst) for e in graph.edges if e.distance == 0)
    try:
        cycle = nx.find_cycle(g)
    except nx.NetworkXNoCycle:
        return
    path = " -> ".join([u for u, _ in cycle] + [cycle[0][0]])
    raise StreamingInfeasible([f"G0 graph: same-iteration edges form a cycle {path}; mark one "
                               f"edge loop-carried (distance >= 1)"])


def _memory_components(graph: Graph, index: dict[str, int]
                       ) -> tuple[list[int], list[list[int]], list[list[str]]]:
    """Union of instructions sharing tile-memory variables (R1 is transitive)."""
    g = nx.Graph()
    g.add_nodes_from(("n", i) for i in range(len(index)))
    for node in graph.nodes:
        for var in node.mem_vars:
            g.add_edge(("n", index[node.id]), ("v", var))
    comps = sorted((sorted(c) for c in nx.connected_components(g)), key=lambda c: c[0])
    comp_of = [0] * len(index)
    members, comp_vars = [], []
    for comp in comps:
        nodes = sorted(i for kind, i in comp if kind == "n")
        if not nodes:
            continue
        for i in nodes:
            comp_of[i] = len(members)
        members.append(nodes)
        comp_vars.append(sorted(v for kind, v in comp if kind == "v"))
    order = sorted(range(len(members)), key=lambda c: members[c][0])
    remap = {old: new for new, old in enumerate(order)}
    return ([remap[c] for c in comp_of], [members[c] for c in order],
            [comp_vars[c] for c in order])


# ---------------------------------------------------------------------------------------------
# bounds and pre-checks
# ---------------------------------------------------------------------------------------------
def delays_needed(hold: int, ii: int) -> int:
    """Delay entries a value held ``hold`` cycles after arrival needs at ``ii`` (``hold // ii``).

    >>> delays_needed(2, 3), delays_needed(3, 3), delays_needed(7, 3)
    (0, 1, 2)
    """
    return max(0, hold) // ii


def _recurrence_ok(problem: StreamingProblem, ii: int) -> bool:
    """No cycle of positive length with weights ``op_latency - ii * distance``."""
    dist = [0] * problem.n
    for _ in range(problem.n + 1):
        changed = False
        for u, v, d in problem.edges:
            w = dist[u] + problem.op_latency - ii * d
            if w > dist[v]:
                dist[v], changed = w, True
        if not changed:
            return True
    return False


def _asap_and_tail(problem: StreamingProblem) -> tuple[list[int], list[int]]:
    """Earliest issue (all on one tile) and the shortest work after each node (same iteration)."""
    g = nx.DiGraph()
    g.add_nodes_from(range(problem.n))
    g.add_edges_from((u, v) for u, v, d in problem.edges if d == 0 and u != v)
    order = list(nx.topological_sort(g))
    asap, tail = [0] * problem.n, [0] * problem.n
    for v in order:
        asap[v] = max((asap[u] + problem.op_latency for u in g.predecessors(v)), default=0)
    for u in reversed(order):
        tail[u] = max((tail[v] + problem.op_latency for v in g.successors(u)), default=0)
    return asap, tail


def lower_bounds(problem: StreamingProblem) -> dict[str, int]:
    """Resource, memory and recurrence II bounds and the critical-path cycle bound.

    Examples
    --------
    >>> from hardware import load_hardware
    >>> from model.graph import Graph, Node, Edge
    >>> g = Graph("loop", [Node("a"), Node("b")], [Edge("a", "b"), Edge("b", "a", distance=1)])
    >>> lower_bounds(problem_from_graph(g, load_hardware("se16")))
    {'res_ii': 1, 'mem_ii': 1, 'rec_ii': 6, 'ii': 6, 'critical_path': 6}
    """
    res_ii = max(1, math.ceil(problem.n / problem.tiles))
    mem_ii = max((len(c) for c in problem.components), default=1)
    rec_ii = 1
    while not _recurrence_ok(problem, rec_ii) and rec_ii <= 64 * problem.max_ii:
        rec_ii += 1
    asap, _ = _asap_and_tail(problem)
    critical = max((a + problem.op_latency for a in asap), default=0)
    return {"res_ii": res_ii, "mem_ii": mem_ii, "rec_ii": rec_ii,
            "ii": max(res_ii, mem_ii, rec_ii), "critical_path": critical}


def precheck(problem: StreamingProblem) -> list[str]:
    """Rule violations visible before any search, each in the user's terms (empty if none).

    Examples
    --------
    >>> from hardware import load_hardware
    >>> from model.graph import Graph, Node, Edge
    >>> g = Graph("g", [Node("p"), Node("a", mem_vars=("v",)), Node("b", mem_vars=("v",))],
    ...           [Edge("p", "a"), Edge("p", "b")])
    >>> precheck(problem_from_graph(g, load_hardware("se16")))
    ['S1 siblings: siblings a and b (children of p) share variable v, so R1 puts them on one tile']
    """
    reasons: list[str] = []
    name = problem.names
    slots = problem.tiles * problem.max_ii
    if problem.n > slots:
        reasons.append(f"A4 slots: {problem.n} instructions but {problem.tiles} tiles x "
                       f"{problem.max_ii} slots = {slots}")
    if len(problem.starts) > problem.tiles:
        reasons.append(f"B1 starts: {len(problem.starts)} instructions start a data-flow but "
                       f"there are {problem.tiles} tiles")
    reasons += _operand_reasons(problem)
    reasons += _sibling_reasons(problem)
    reasons += _memory_reasons(problem)
    bounds = lower_bounds(problem)
    if bounds["rec_ii"] > problem.max_ii:
        reasons.append(f"R2 recurrence: a loop-carried cycle needs II >= {bounds['rec_ii']} "
                       f"(3 cycles per instruction over its distance) but II <= {problem.max_ii}")
    return reasons


def _operand_reasons(problem: StreamingProblem) -> list[str]:
    return [f"O1 operands: {problem.names[v]} has {k} operands, at most {problem.max_operands} "
            f"((MS_in1 x MS_in2) + AL_in2)"
            for v, k in enumerate(problem.operands) if k > problem.max_operands]


def _sibling_reasons(problem: StreamingProblem) -> list[str]:
    reasons = []
    name, reach = problem.names, problem.reach
    for p, kids in enumerate(problem.children):
        if len(kids) > problem.tiles:
            reasons.append(f"S1 siblings: {name[p]} has {len(kids)} children (siblings need "
                           f"distinct tiles) but there are {problem.tiles} tiles")
        elif len(kids) > min(problem.tiles, 2 * reach + 1):
            reasons.append(f"R1 reach: {name[p]} feeds {len(kids)} instructions, which must sit "
                           f"on distinct tiles within {reach} tiles of it (at most "
                           f"{min(problem.tiles, 2 * reach + 1)})")
        by_comp = defaultdict(list)
        for c in kids:
            by_comp[problem.component[c]].append(c)
        for comp, same in sorted(by_comp.items()):
            if len(same) > 1:
                a, b = same[0], same[1]
                why = ", ".join(problem.component_vars[comp][:3])
                reasons.append(f"S1 siblings: siblings {name[a]} and {name[b]} (children of "
                               f"{name[p]}) share variable {why}, so R1 puts them on one tile")
    return reasons


def _memory_reasons(problem: StreamingProblem) -> list[str]:
    reasons = []
    name = problem.names
    by_comp = defaultdict(list)
    for s in problem.starts:
        by_comp[problem.component[s]].append(s)
    for comp, same in sorted(by_comp.items()):
        if len(same) > 1:
            reasons.append(f"B1 starts: {name[same[0]]} and {name[same[1]]} both start the "
                           f"data-flow but share variable {', '.join(problem.component_vars[comp][:3])}")
    for comp, members in enumerate(problem.components):
        if len(members) > problem.max_ii:
            reasons.append(f"M1 memory: {len(members)} instructions share variables "
                           f"{', '.join(problem.component_vars[comp][:4])} and must sit on one "
                           f"tile, which has {problem.max_ii} slots")
        if len(problem.component_vars[comp]) > problem.var_capacity:
            reasons.append(f"M2 capacity: {len(problem.component_vars[comp])} variables must "
                           f"share one tile, whose memories hold {problem.var_capacity}")
    return reasons


# ---------------------------------------------------------------------------------------------
# the answer
# ---------------------------------------------------------------------------------------------
@dataclass
class StreamingSchedule:
    """A modulo placement: per node ``(tile, slot, cycle)``, the II and the delay entries.

    ``delays`` maps an edge ``(u, v, distance)`` (node names) to its number of delay entries on
    ``v``'s tile. ``status`` is ``"optimal"`` (II and cycles proven), ``"feasible"`` or
    ``"heuristic"``. ``proven_ii`` says every smaller II was proven impossible.
    """

    ii: int
    tile: dict[str, int]
    slot: dict[str, int]
    cycle: dict[str, int]
    delays: dict[tuple[str, str, int], int] = field(default_factory=dict)
    method: str = ""
    status: str = "heuristic"
    proven_ii: bool = False
    bound: int | None = None
    results: list[SolveResult] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def cycles(self) -> int:
        return schedule_cycles(self.cycle)


def schedule_cycles(cycle: dict[str, int], op_latency: int = 3) -> int:
    """Cycle count of one iteration: the last ready time ``max(issue) + op_latency``."""
    return max(cycle.values()) + op_latency if cycle else 0


def _delays_of(problem: StreamingProblem, tile: list[int], tau: list[int], ii: int
               ) -> dict[tuple[str, str, int], int]:
    out = {}
    for u, v, d in problem.edges:
        hold = tau[v] + d * ii - tau[u] - problem.op_latency - problem.latency[tile[v] - tile[u]]
        if delays_needed(hold, ii):
            out[(problem.names[u], problem.names[v], d)] = delays_needed(hold, ii)
    return out


def schedule_from_lists(problem: StreamingProblem, ii: int, tile: list[int], tau: list[int],
                        **info: Any) -> StreamingSchedule:
    """A :class:`StreamingSchedule` from per-index tiles and issue cycles."""
    names = problem.names
    return StreamingSchedule(
        ii=ii, tile={names[i]: tile[i] for i in range(problem.n)},
        slot={names[i]: tau[i] % ii for i in range(problem.n)},
        cycle={names[i]: tau[i] for i in range(problem.n)},
        delays=_delays_of(problem, tile, tau, ii), **info)


def _decoded(problem: StreamingProblem, ii: int, cp: "_CpVars", result: SolveResult,
             **info: Any) -> StreamingSchedule:
    """The schedule of a solved model (reported with :func:`_reported`)."""
    tile = [int(result.values[cp.tile[i].name]) for i in range(problem.n)]
    tau = [int(result.values[cp.tau[i].name]) for i in range(problem.n)]
    return schedule_from_lists(problem, ii, tile, tau, **info)


def _reported(cp: "_CpVars") -> dict:
    """The variables a schedule is decoded from, by name."""
    return {v.name: v for v in cp.tile + cp.tau}


# ---------------------------------------------------------------------------------------------
# the CP-SAT model for one II
# ---------------------------------------------------------------------------------------------
#: CP-SAT parameters of the streaming models: no linear relaxation. The models are disjunctive
#: (tiles, slots, holds); their LP only gives the critical path and costs time. Measured at 1
#: worker on random DAGs of 20-40 nodes: the same proofs 1.2-8x faster (e.g. the hold
#: relaxation of se-random-30-s0 at II 4 in 3.7 s instead of 24 s). One presolve pass with
#: light probing: the default three passes of probing took 2.8 s of the 9 s that refuting 34
#: cycles on se-random-40-s1 at II 4 took (6.5-7.1 s over four seeds with these settings).
CP_PARAMS = {"linearization_level": 0, "max_presolve_iterations": 1, "cp_model_probing_level": 1}


def solve_model(model: cp_model.CpModel, time_limit: float, seed: int = 0, workers: int = 1,
                hint: dict | None = None, variables: dict | None = None,
                name: str | None = None, stall: float | None = None) -> SolveResult:
    """:func:`~formulations.solver.solve_cp_model` with :data:`CP_PARAMS`; ``variables`` maps
    names to the variables to report (default none); ``stall`` stops the search after that
    many seconds without a better solution."""
    return solve_cp_model(model, time_limit=time_limit, seed=seed, workers=workers,
                          hint=hint or None, variables=variables or {}, name=name,
                          params=CP_PARAMS, stall=stall)


@dataclass
class _CpVars:
    tile: list[Any]
    slot: list[Any]
    tau: list[Any]
    makespan: Any


def _horizon(problem: StreamingProblem, ii: int) -> int:
    """An issue-cycle horizon that never cuts off a sensible schedule."""
    lat = max(problem.latency.values())
    return (problem.op_latency + lat + ii) * (problem.n + 1) + ii


def build_cp_model(problem: StreamingProblem, ii: int, horizon: int | None = None,
                   families: Iterable[str] | None = None) -> tuple[cp_model.CpModel, _CpVars]:
    """The CP-SAT model of one SDF at a fixed ``ii`` (objective: makespan).

    ``families`` keeps only those rule families (for :func:`explain`); default all.
    """
    keep = set(RULES) if families is None else set(families)
    holds = "H1 hold" in keep
    if not holds:
        horizon = horizon or _horizon(problem, ii)
    windows = None
    if WINDOW_FAMILIES <= keep:
        windows = issue_windows(problem, ii, horizon, holds)
    horizon = horizon or _horizon(problem, ii)
    asap, tail = _asap_and_tail(problem)
    lo = asap if "T2 timing" in keep else [0] * problem.n
    hi = [max(asap[i], horizon - tail[i]) for i in range(problem.n)]
    if windows is not None:
        lo, hi = windows
        horizon = max(hi, default=0)
    model = cp_model.CpModel()
    model.name = f"{problem.name}_ii{ii}"
    # -- variables: tile, slot, k and issue cycle per instruction (one tile per memory component)
    comp_tile = [model.new_int_var(0, problem.tiles - 1, f"ctile{c}")
                 for c in range(len(problem.components))]
    if "M1 memory" in keep:
        tile = [comp_tile[problem.component[i]] for i in range(problem.n)]
    else:
        tile = [model.new_int_var(0, problem.tiles - 1, f"tile{i}") for i in range(problem.n)]
    slot = [model.new_int_var(0, ii - 1, f"slot{i}") for i in range(problem.n)]
    tau = [model.new_int_var(lo[i], hi[i], f"tau{i}") for i in range(problem.n)]
    k = [model.new_int_var(0, horizon // ii + 1, f"k{i}") for i in range(problem.n)]
    for i in range(problem.n):
        model.add(tau[i] == slot[i] + ii * k[i]).with_name(f"T1_modulo_{i}")
    _anchor(model, problem, ii, tau)
    if "R1 reach" in keep:  # the symmetry holds for the full rule set (explain relaxes some)
        _canonical_tiles(model, problem, tile)
    # -- constraints, by family
    if "A3 slot" in keep:
        model.add_all_different([tile[i] * ii + slot[i] for i in range(problem.n)]
                                ).with_name("A3_slot")
    if "B1 starts" in keep and len(problem.starts) > 1:
        model.add_all_different([tile[i] for i in problem.starts]).with_name("B1_starts")
    if "S1 siblings" in keep:
        for p, kids in enumerate(problem.children):
            if len(kids) > 1:
                model.add_all_different([tile[c] for c in kids]).with_name(f"S1_siblings_{p}")
    _add_edges(model, problem, ii, tile, tau, keep, horizon)
    if "M2 capacity" in keep:
        _add_var_capacity(model, problem, comp_tile)
    # -- objective: fewest cycles (never below the sibling-latency bound when it applies)
    floor = cycle_bound(problem, ii) if WINDOW_FAMILIES <= keep else 0
    makespan = model.new_int_var(0, max(floor, horizon + problem.op_latency), "makespan")
    model.add(makespan >= floor).with_name("O1_cycle_bound")
    if WINDOW_FAMILIES <= keep and windows is None:  # no schedule within the horizon / at ii
        model.add(makespan < floor).with_name("T2_windows_empty")
    for i in range(problem.n):
        model.add(makespan >= tau[i] + problem.op_latency)
    model.minimize(makespan)
    return model, _CpVars(tile, slot, tau, makespan)


def _anchor(model: cp_model.CpModel, problem: StreamingProblem, ii: int, tau: list) -> None:
    """Break time-translation symmetry: each weakly connected part starts within one II."""
    und = nx.Graph()
    und.add_nodes_from(range(problem.n))
    und.add_edges_from((u, v) for u, v, _ in problem.edges)
    for part in sorted((sorted(c) for c in nx.connected_components(und)), key=lambda c: c[0]):
        first = model.new_int_var(0, ii - 1, f"anchor{part[0]}")
        model.add_min_equality(first, [tau[i] for i in part])
    if problem.n:
        model.add_min_equality(model.new_constant(0), tau)  # shift everything to start at 0


def _canonical_tiles(model: cp_model.CpModel, problem: StreamingProblem, tile: list) -> None:
    """Break translation and mirror symmetry of the tile line: the smallest tile used is 0, and
    the first instruction sits in the left half of the span used."""
    if not problem.n:
        return
    highest = model.new_int_var(0, problem.tiles - 1, "highest_tile")
    model.add_min_equality(model.new_constant(0), tile)
    model.add_max_equality(highest, tile)
    model.add(2 * tile[0] <= highest)


def canonical_schedule(schedule: "StreamingSchedule", tiles: int) -> "StreamingSchedule":
    """The same schedule shifted to tile 0 and mirrored so that its first node is in the left
    half (the canonical form :func:`build_cp_model` searches), and started at cycle 0."""
    first = next(iter(schedule.tile))
    low, high = min(schedule.tile.values()), max(schedule.tile.values())
    tile = {n: t - low for n, t in schedule.tile.items()}
    if 2 * tile[first] > high - low:
        tile = {n: high - low - t for n, t in tile.items()}
    start = min(schedule.cycle.values())
    shift = start - start % schedule.ii
    cycle = {n: c - shift for n, c in schedule.cycle.items()}
    if start % schedule.ii:  # shifting by less than II changes slots: shift all slots too
        cycle = {n: c - start % schedule.ii for n, c in cycle.items()}
    return StreamingSchedule(ii=schedule.ii, tile=tile,
                             slot={n: c % schedule.ii for n, c in cycle.items()},
                             cycle=cycle, delays=dict(schedule.delays), method=schedule.method,
                             status=schedule.status)


def _add_edges(model: cp_model.CpModel, problem: StreamingProblem, ii: int, tile: list,
               tau: list, keep: set[str], horizon: int) -> None:
    """R1 reach + link latency, T2 timing, H1 hold with delay entries counted per tile."""
    table = sorted(problem.latency.items())
    reach = problem.reach if "R1 reach" in keep else problem.tiles
    max_delays = ii - 1  # the consumer's tile has II slots and the consumer takes one
    delay_load: dict[int, list] = defaultdict(list)  # consumer -> its delay counts
    fan_out: dict[int, list] = defaultdict(list)  # producer -> link latencies to its children
    for e, (u, v, d) in enumerate(problem.edges):
        if u == v:
            lat = 0
        else:
            dt = model.new_int_var(-reach, reach, f"dt{e}")
            model.add(dt == tile[v] - tile[u]).with_name(f"R1_reach_{e}")
            if "R1 reach" in keep:
                lat = model.new_int_var(0, max(problem.latency.values()), f"lat{e}")
                model.add_allowed_assignments([dt, lat], table).with_name(f"R1_latency_{e}")
                fan_out[u].append(lat)
            else:
                lat = 0
        if "T2 timing" not in keep:
            continue
        longest = ii * (max_delays + 1) - 1 if "H1 hold" in keep else horizon + d * ii
        hold = model.new_int_var(0, longest, f"hold{e}")
        model.add(hold == tau[v] + d * ii - tau[u] - problem.op_latency - lat
                  ).with_name(f"T2_timing_{e}")
        if "H1 hold" in keep:
            delays = model.new_int_var(0, max_delays, f"delays{e}")
            model.add(hold >= ii * delays).with_name(f"H1_hold_lo_{e}")
            model.add(hold <= ii * delays + ii - 1).with_name(f"H1_hold_hi_{e}")
            delay_load[v].append(delays)
    if "S1 siblings" in keep:
        _add_sibling_latency_sums(model, problem, fan_out)
    if delay_load and "H1 hold" in keep and ii > 1:
        _add_slot_capacity(model, problem, ii, tile, delay_load, max_delays)


def _add_sibling_latency_sums(model: cp_model.CpModel, problem: StreamingProblem,
                              fan_out: dict[int, list]) -> None:
    """Redundant S1 x R1: ``k`` children on distinct tiles have link latencies summing to at
    least the ``k`` smallest latencies of the tile line (0, 1, 1, 2, 2)."""
    cheapest = sorted(problem.latency.values())
    for u, lats in sorted(fan_out.items()):
        if len(lats) > 1:
            model.add(sum(lats) >= sum(cheapest[:len(lats)])).with_name(f"S1_latency_sum_{u}")


def _add_slot_capacity(model: cp_model.CpModel, problem: StreamingProblem, ii: int, tile: list,
                       delay_load: dict[int, list], max_delays: int) -> None:
    """Per tile: instructions + delay entries of the edges into it <= II."""
    on = {}
    for i in range(problem.n):
        row = [model.new_bool_var(f"on{i}_{t}") for t in range(problem.tiles)]
        model.add_exactly_one(row)
        model.add(tile[i] == sum(t * b for t, b in enumerate(row)))
        on[i] = row
    per_tile: list[list] = [[] for _ in range(problem.tiles)]
    for v, counts in sorted(delay_load.items()):
        total = model.new_int_var(0, max_delays * len(counts), f"delays_into{v}")
        model.add(total == sum(counts))
        for t in range(problem.tiles):
            q = model.new_int_var(0, min(ii, max_delays * len(counts)), f"dq{v}_{t}")
            model.add(q == total).only_enforce_if(on[v][t])
            model.add(q == 0).only_enforce_if(on[v][t].Not())
            per_tile[t].append(q)
    for t in range(problem.tiles):
        model.add(sum(on[i][t] for i in range(problem.n)) + sum(per_tile[t]) <= ii
                  ).with_name(f"H1_slots_{t}")


def _add_var_capacity(model: cp_model.CpModel, problem: StreamingProblem, comp_tile: list) -> None:
    """M2: tile-memory variables per tile <= memories x depth (only when it can bind)."""
    sizes = [len(v) for v in problem.component_vars]
    if sum(sizes) <= problem.var_capacity:
        return
    for t in range(problem.tiles):
        here = []
        for c, size in enumerate(sizes):
            if size:
                b = model.new_bool_var(f"mem{c}_{t}")
                model.add(comp_tile[c] == t).only_enforce_if(b)
                model.add(comp_tile[c] != t).only_enforce_if(b.Not())
                here.append(size * b)
        model.add(sum(here) <= problem.var_capacity).with_name(f"M2_capacity_{t}")


def _hint(problem: StreamingProblem, cp: _CpVars, warm: StreamingSchedule | None, ii: int
          ) -> dict | None:
    if warm is None or warm.ii != ii:
        return None
    warm = canonical_schedule(warm, problem.tiles)
    hint = {}
    for i, nid in enumerate(problem.names):
        hint[cp.slot[i]] = warm.slot[nid]
        hint[cp.tau[i]] = warm.cycle[nid]
        hint[cp.tile[i]] = warm.tile[nid]
    hint[cp.makespan] = warm.cycles
    return hint


#: Share of the per-II time limit the layout relaxation may use before the full model.
LAYOUT_SHARE = 0.5
#: Shares of the time left at one II: the full model first (``COLD_SHARE`` without a warm
#: start: a first schedule, or the II's refutation, is worth most), then the hold relaxation
#: (the rest closes the gap, :func:`close_gap`).
FULL_SHARE = 0.4
COLD_SHARE = 0.8
RELAX_SHARE = 0.5
#: The full model stops after this many seconds without a better schedule; the top-down proof
#: (:func:`prove_from_above`) gets ``ABOVE_SHARE`` of the time left, the hold relaxation and
#: destructive lower bounding the rest.
STALL_SECONDS = 0.5
ABOVE_SHARE = 0.85


def relax_holds(problem: StreamingProblem, ii: int, time_limit: float, seed: int = 0,
                workers: int = 1, warm: StreamingSchedule | None = None
                ) -> tuple[SolveResult, StreamingSchedule | None]:
    """The hold relaxation: the full model without H1 (a value may wait any time, no delay
    entries). It sees tiles, slots, reach and timing together, so its bound is a lower bound on
    the cycle count at ``ii`` far above :func:`cycle_bound` at small II, and INFEASIBLE proves
    ``ii`` impossible. Without the delay-entry slot counts CP-SAT solves it in a fraction of the
    full model's time. Returns the result and its schedule (which may break H1: see
    :func:`holds_fit`). ``warm`` (at ``ii``) is the hint; the layout's tiles are not (measured:
    they slow the proof down up to 2x).
    """
    horizon = warm.cycles if warm is not None and warm.ii == ii else None
    model, cp = build_cp_model(problem, ii, horizon, families=set(RULES) - {"H1 hold"})
    result = solve_model(model, time_limit=time_limit, seed=seed, workers=workers,
                         hint=_hint(problem, cp, warm, ii), variables=_reported(cp),
                         name=f"{model.name}_holds_relaxed")
    if not result.has_solution:
        return result, None
    return result, _decoded(problem, ii, cp, result, method="hold relaxation")


def holds_fit(problem: StreamingProblem, schedule: StreamingSchedule) -> bool:
    """H1 on a schedule: every tile's instructions plus the delay entries of the values held
    into them fit its II slots."""
    load = defaultdict(int)
    for t in schedule.tile.values():
        load[t] += 1
    for (_, v, _), count in schedule.delays.items():
        load[schedule.tile[v]] += count
    return max(load.values(), default=0) <= schedule.ii


def _layout_first(problem: StreamingProblem, ii: int, time_limit: float, seed: int,
                  warm: StreamingSchedule | None
                  ) -> tuple[SolveResult | None, list[int] | None, float]:
    """Decomposition: the tile layout relaxation first (:mod:`formulations.streaming.layout`).

    Returns its result when it proves ``ii`` INFEASIBLE (else None), its tiles (a hint for
    the full model) and the time left for the rest of the II.
    """
    if warm is not None and warm.ii == ii:
        return None, None, time_limit  # a mapping exists: nothing to refute
    layout, tiles = solve_layout(problem, ii, time_limit * LAYOUT_SHARE, seed)
    if layout.status is SolveStatus.INFEASIBLE:
        return layout, None, 0.0
    return None, tiles, max(0.5, time_limit - layout.wall_time)


def _tile_hint(problem: StreamingProblem, cp: _CpVars, tiles: list[int] | None) -> dict | None:
    """A partial hint: the tiles only, in the canonical (mirrored) form the model searches."""
    if not tiles:
        return None
    low, high = min(tiles), max(tiles)
    tiles = [t - low for t in tiles]
    if 2 * tiles[0] > high - low:
        tiles = [high - low - t for t in tiles]
    hint = {}
    for i, var in enumerate(cp.tile):
        hint.setdefault(var.index, (var, tiles[i]))
    return dict(hint.values())


#: Share of the remaining time for the timing model with the layout's tiles fixed.
FIXED_SHARE = 0.3


def close_gap(problem: StreamingProblem, ii: int, incumbent: StreamingSchedule,
              result: SolveResult | None, time_limit: float, seed: int = 0, workers: int = 1,
              low: int = 0) -> tuple[StreamingSchedule, bool, list[SolveResult]]:
    """Destructive lower bounding: is there a schedule of at most ``H`` cycles, for ``H`` from
    the best bound up to the incumbent's cycles - 1? Each question is the full model with the
    horizon ``H`` (tight issue windows, strong propagation). The first feasible ``H`` is optimal
    (every smaller one was refuted); refuting every ``H`` proves the incumbent optimal.

    ``low`` is a known lower bound (e.g. the hold relaxation's). Returns the best schedule,
    whether it is proven optimal at ``ii``, and the results.
    """
    deadline = time.perf_counter() + time_limit
    low = _floor(problem, ii, result, low)
    results: list[SolveResult] = []
    for horizon in range(low, incumbent.cycles):
        left = deadline - time.perf_counter()
        if left < 0.1:
            return incumbent, False, results
        found, sched = _within(problem, ii, horizon, left, seed, workers)
        results.append(found)
        if found.status is SolveStatus.INFEASIBLE:
            continue
        if sched is None:
            return incumbent, False, results
        return sched, True, results
    return incumbent, True, results


def prove_from_above(problem: StreamingProblem, ii: int, incumbent: StreamingSchedule,
                     time_limit: float, seed: int = 0, workers: int = 1
                     ) -> tuple[StreamingSchedule, bool, list[SolveResult]]:
    """Top-down: is there a schedule of at most the incumbent's cycles - 1? INFEASIBLE proves
    the incumbent optimal, OPTIMAL proves the better schedule found; a better schedule without
    a proof (the search stops when its schedules stop improving) becomes the incumbent of the
    next, tighter question. The question's tight issue windows make its presolve and
    propagation far stronger than the open model's: on se-random-30-s1 and -40-s1 at II 4 it
    refutes 38 and 34 cycles in 4-7 s where the open model, holding the optimum, needed 8 s
    more to prove it.

    Returns the best schedule, whether it is proven optimal at ``ii``, and the results.
    """
    deadline = time.perf_counter() + time_limit
    results: list[SolveResult] = []
    while (left := deadline - time.perf_counter()) >= 0.1:
        found, sched = _within(problem, ii, incumbent.cycles - 1, left, seed, workers,
                               stall=STALL_SECONDS)
        results.append(found)
        if found.status is SolveStatus.INFEASIBLE:
            return incumbent, True, results
        if sched is None:
            break
        incumbent = sched
        if found.status is SolveStatus.OPTIMAL:
            return incumbent, True, results
    return incumbent, False, results


def _within(problem: StreamingProblem, ii: int, horizon: int, time_limit: float, seed: int,
            workers: int, stall: float | None = None
            ) -> tuple[SolveResult, StreamingSchedule | None]:
    """The full model with at most ``horizon`` cycles (tight issue windows)."""
    model, cp = build_cp_model(problem, ii, horizon)
    found = solve_model(model, time_limit=time_limit, seed=seed, workers=workers,
                        variables=_reported(cp), name=f"{model.name}_h{horizon}", stall=stall)
    return found, (_decoded(problem, ii, cp, found) if found.has_solution else None)


def _timing_for_layout(problem: StreamingProblem, ii: int, tiles: list[int], time_limit: float,
                       seed: int) -> tuple[StreamingSchedule | None, float]:
    """Solution first: the full model with the layout relaxation's tiles fixed (slots and
    issue cycles only, fast); its schedule warm-starts the full model. Returns it (None if the
    layout admits no timing in time) and the seconds spent."""
    started = time.perf_counter()
    model, cp = build_cp_model(problem, ii)
    low, high = min(tiles), max(tiles)
    tiles = [t - low for t in tiles]
    if 2 * tiles[0] > high - low:
        tiles = [high - low - t for t in tiles]
    for i, t in enumerate(tiles):
        model.add(cp.tile[i] == t)
    result = solve_model(model, time_limit=time_limit, seed=seed, variables=_reported(cp))
    spent = time.perf_counter() - started
    if not result.has_solution:
        return None, spent
    return _decoded(problem, ii, cp, result, method="layout + timing"), spent


def solve_at_ii(problem: StreamingProblem, ii: int, time_limit: float = 10.0, seed: int = 0,
                workers: int = 1, warm: StreamingSchedule | None = None,
                export_dir: str | None = None, tile_hint: list[int] | None = None,
                stall: float | None = None) -> tuple[SolveResult, StreamingSchedule | None]:
    """Solve the CP-SAT model at one II; the result and the decoded schedule (None if none).

    The horizon is generous (so INFEASIBLE is a proof), or the warm start's cycle count when it
    has this II (a better schedule lies inside it). ``tile_hint`` (a tile per instruction,
    e.g. from the layout relaxation) is a partial hint when no warm start has this II.
    ``stall`` stops the search after that many seconds without a better schedule.
    """
    horizon = _horizon(problem, ii)
    if warm is not None and warm.ii == ii:
        horizon = min(horizon, warm.cycles)
    model, cp = build_cp_model(problem, ii, horizon)
    _export(problem, ii, export_dir, model)
    hint = _hint(problem, cp, warm, ii) or _tile_hint(problem, cp, tile_hint)
    result = solve_model(model, time_limit=time_limit, seed=seed, workers=workers,
                         hint=hint, variables=_reported(cp), stall=stall)
    return result, (_decoded(problem, ii, cp, result) if result.has_solution else None)


def _better(a: StreamingSchedule | None, b: StreamingSchedule | None, ii: int
            ) -> StreamingSchedule | None:
    """The schedule with fewer cycles among those at ``ii`` (None if neither is)."""
    at_ii = [s for s in (a, b) if s is not None and s.ii == ii]
    return min(at_ii, key=lambda s: s.cycles) if at_ii else None


def _solve_ii(problem: StreamingProblem, ii: int, deadline: float, seed: int, workers: int,
              warm: StreamingSchedule | None, tiles: list[int] | None,
              results: list[SolveResult], export_dir: str | None, say: Callable[[str], None]
              ) -> tuple[StreamingSchedule | None, bool, int, bool]:
    """At one II: the full model first (warm-started by the timing of the layout's tiles; it
    refutes a small II fastest) until its schedules stop improving (:data:`STALL_SECONDS`),
    then the top-down proof (:func:`prove_from_above`); when that runs out of its share of
    time, the hold relaxation for a cycle bound (its tiles timed when its schedule breaks H1),
    then destructive lower bounding from that bound.

    Appends its results; returns the best schedule (None if none), whether it is proven optimal
    at ``ii``, the cycle bound proven, and whether the II is proven impossible.
    """
    start = _better(warm, None, ii)
    if start is None and tiles is not None:
        start = _timed(problem, ii, tiles, deadline, seed, say)
    share = FULL_SHARE if start is not None else COLD_SHARE
    result, sched = solve_at_ii(problem, ii, max(0.5, _left(deadline) * share), seed,
                                workers, start, export_dir, tile_hint=tiles, stall=STALL_SECONDS)
    results.append(result)
    say(f"II {ii}: {result.status.value} ({result.wall_time:.2f} s)")
    sched = _better(sched, start, ii)
    if result.status is SolveStatus.INFEASIBLE:
        return None, False, 0, True
    if sched is not None and result.status is SolveStatus.OPTIMAL:
        return sched, True, sched.cycles, False
    if sched is not None:
        sched, proven, extra = prove_from_above(problem, ii, sched, _left(deadline) * ABOVE_SHARE,
                                                seed, workers)
        results += extra
        say(f"II {ii}: {'optimal' if proven else 'feasible'} from above ({len(extra)} models), "
            f"{sched.cycles} cycles")
        if proven:
            return sched, True, sched.cycles, False
    relaxed, loose = relax_holds(problem, ii, _left(deadline) * RELAX_SHARE, seed, workers, sched)
    results.append(relaxed)
    say(f"II {ii}: hold relaxation {relaxed.status.value}, bound {relaxed.bound} "
        f"({relaxed.wall_time:.2f} s)")
    low = math.ceil(relaxed.bound or 0) if relaxed.has_solution else 0
    if loose is not None and holds_fit(problem, loose):
        sched = _better(sched, loose, ii)
    elif loose is not None and (sched is None or sched.cycles > low):
        sched = _better(sched, _timed(problem, ii, [loose.tile[n] for n in problem.names],
                                      deadline, seed, say), ii)
    if sched is None:
        return None, False, 0, relaxed.status is SolveStatus.INFEASIBLE
    sched, proven, extra = close_gap(problem, ii, sched, result, _left(deadline), seed, workers,
                                     low=low)
    results += extra
    say(f"II {ii}: {'optimal' if proven else 'feasible'} after lower-bounding "
        f"({len(extra)} models), {sched.cycles} cycles")
    refuted = sum(r.status is SolveStatus.INFEASIBLE for r in extra)  # horizons low, low + 1..
    bound = sched.cycles if proven else _floor(problem, ii, result, low) + refuted
    return sched, proven, bound, False


def _timed(problem: StreamingProblem, ii: int, tiles: list[int], deadline: float, seed: int,
           say: Callable[[str], None]) -> StreamingSchedule | None:
    """The timing model on fixed tiles (a warm start), in a share of the time left."""
    timed, seconds = _timing_for_layout(problem, ii, tiles, _left(deadline) * FIXED_SHARE, seed)
    say(f"II {ii}: timing of fixed tiles: {timed.cycles if timed else 'none'} ({seconds:.2f} s)")
    return timed


def _floor(problem: StreamingProblem, ii: int, result: SolveResult | None, low: int = 0) -> int:
    """The best cycle bound at ``ii``: ``low``, the sibling-latency bound, the model's bound."""
    return max(low, cycle_bound(problem, ii), math.ceil(getattr(result, "bound", 0) or 0))


def _export(problem: StreamingProblem, ii: int, export_dir: str | None,
            model: cp_model.CpModel | None = None) -> None:
    """Write the full model at ``ii`` (built unless given) when ``export_dir`` is set."""
    if export_dir:
        export_cp_model(model or build_cp_model(problem, ii)[0],
                        f"{export_dir}/streaming_{problem.name.replace('/', '_')}_ii{ii}.pb.txt")


def _left(deadline: float) -> float:
    return max(0.0, deadline - time.perf_counter())


def solve_streaming(graph: Graph, spec: StreamingEngineSpec, time_limit: float = 10.0,
                    seed: int = 0, workers: int = 1, warm: StreamingSchedule | None = None,
                    export_dir: str | None = None,
                    progress: Callable[[str], None] | None = None,
                    explain_failure: bool = True) -> StreamingSchedule:
    """Smallest II, then fewest cycles: sweep II from the lower bound with one CP-SAT model each.

    ``time_limit`` is per II; time an II leaves unused carries over to the next. Per II: the
    layout relaxation (refutes the II), then :func:`_solve_ii` (full model, hold relaxation,
    destructive lower bounding). Raises :class:`StreamingInfeasible` (with :func:`explain`'s
    reasons unless ``explain_failure`` is False) when no II up to ``max_ii`` admits a mapping.

    Examples
    --------
    >>> from hardware import load_hardware
    >>> from model.graph import Graph, Node, Edge
    >>> g = Graph("fan", [Node("p")] + [Node(f"c{i}") for i in range(3)],
    ...           [Edge("p", f"c{i}") for i in range(3)])
    >>> s = solve_streaming(g, load_hardware("se16"), time_limit=5)
    >>> s.ii, s.cycles, len(set(s.tile[f"c{i}"] for i in range(3)))
    (1, 8, 3)
    """
    started = time.perf_counter()
    say = progress or (lambda line: None)
    problem = problem_from_graph(graph, spec)
    reasons = precheck(problem)
    if reasons:
        raise StreamingInfeasible(reasons)
    bounds = lower_bounds(problem)
    results: list[SolveResult] = []
    all_proven = True
    open_ii: list[int] = []
    for ii in range(bounds["ii"], problem.max_ii + 1):
        spent = time.perf_counter() - started  # time an II leaves unused carries over
        allowed = max(0.5, time_limit * (ii - bounds["ii"] + 1) - spent)
        proof, tiles, budget = _layout_first(problem, ii, allowed, seed, warm)
        if proof is not None:
            results.append(proof)
            say(f"II {ii}: infeasible by the layout relaxation ({proof.wall_time:.2f} s)")
            continue
        sched, optimal_at_ii, bound, refuted = _solve_ii(
            problem, ii, time.perf_counter() + budget, seed, workers, warm, tiles, results,
            export_dir, say)
        if sched is not None:
            optimal = optimal_at_ii and all_proven
            sched.method, sched.results = "cp-sat", results
            sched.status = "optimal" if optimal else "feasible"
            sched.proven_ii = all_proven
            sched.bound = bound
            sched.seconds = time.perf_counter() - started
            if warm is not None and warm.ii < ii:  # the warm start beat an unproven sweep
                return warm
            return sched
        all_proven &= refuted
        if not refuted:
            open_ii.append(ii)
    if warm is not None:
        return warm
    if not all_proven:
        raise StreamingInfeasible([f"T0 time limit: no mapping found within {time_limit:g} s per "
                                   f"II and none proven impossible at II {open_ii} (raise "
                                   f"--time-limit)"])
    if not explain_failure:
        raise StreamingInfeasible([f"no II <= {problem.max_ii} admits a mapping (proven, "
                                   f"not explained further)"])
    raise StreamingInfeasible(explain(problem, time_limit=min(time_limit, 5.0), seed=seed))


# ---------------------------------------------------------------------------------------------
# explanation
# ---------------------------------------------------------------------------------------------
def explain(problem: StreamingProblem, time_limit: float = 5.0, seed: int = 0) -> list[str]:
    """Why no II admits a mapping: the pre-check rules, else the families whose relaxation helps.

    Examples
    --------
    >>> from hardware import load_hardware
    >>> from model.graph import Graph, Node
    >>> g = Graph("starts", [Node(f"s{i}") for i in range(17)], [])
    >>> explain(problem_from_graph(g, load_hardware("se16")))
    ['B1 starts: 17 instructions start a data-flow but there are 16 tiles']
    """
    reasons = precheck(problem)
    if reasons:
        return reasons
    ii = problem.max_ii
    relaxable = ["H1 hold", "R1 reach", "S1 siblings", "B1 starts", "M1 memory"]
    culprits = []
    for family in relaxable:
        keep = [f for f in RULES if f != family]
        model, _ = build_cp_model(problem, ii, families=keep)
        result = solve_model(model, time_limit=time_limit, seed=seed)
        if result.has_solution:
            culprits.append(f"{family}: without it a mapping exists at II {ii} "
                            f"({RULES[family]})")
    if not culprits:
        culprits.append(f"no II <= {ii} admits a mapping: slots, reach, siblings, timing and "
                        f"holds conflict together (no single rule family is to blame)")
    return culprits


# ---------------------------------------------------------------------------------------------
# the MILP version (fixed II), exportable to .mps
# ---------------------------------------------------------------------------------------------
def build_milp(problem: StreamingProblem, ii: int, horizon: int | None = None) -> LinearModel:
    """The same model as a MILP over ``x[n,t,s]`` binaries (HiGHS/SCIP/.mps), for one II.

    Examples
    --------
    >>> from hardware import load_hardware
    >>> from model.graph import Graph, Node, Edge
    >>> g = Graph("chain", [Node("a"), Node("b")], [Edge("a", "b")])
    >>> m = build_milp(problem_from_graph(g, load_hardware("se16")), 1)
    >>> m.solve(backend="highs", time_limit=10).objective
    7.0
    """
    horizon = horizon or _horizon(problem, ii)
    T, n, L = problem.tiles, problem.n, problem.op_latency
    asap, tail = _asap_and_tail(problem)
    m = LinearModel(f"{problem.name}_ii{ii}".replace("/", "_").replace(" ", "_"))
    x = {(i, t, s): m.add_binary(f"x_{i}_{t}_{s}") for i in range(n) for t in range(T)
         for s in range(ii)}
    y = {(i, t): quicksum(x[i, t, s] for s in range(ii)) for i in range(n) for t in range(T)}
    pos = [quicksum(t * y[i, t] for t in range(T)) for i in range(n)]
    slot = [quicksum(s * x[i, t, s] for t in range(T) for s in range(ii)) for i in range(n)]
    tau = [m.add_var(f"tau_{i}", asap[i], max(asap[i], horizon - tail[i]), integer=True)
           for i in range(n)]
    k = [m.add_var(f"k_{i}", 0, horizon // ii + 1, integer=True) for i in range(n)]
    for i in range(n):
        m.add(quicksum(x[i, t, s] for t in range(T) for s in range(ii)) == 1, family="A1_place")
        m.add(tau[i] - ii * k[i] - slot[i] == 0, family="T1_modulo")
    for t in range(T):
        for s in range(ii):
            m.add(quicksum(x[i, t, s] for i in range(n)) <= 1, family="A3_slot")
    _milp_groups(m, problem, y)
    delay_q = _milp_edges(m, problem, ii, pos, tau, y, horizon)
    for t in range(T):
        m.add(quicksum(y[i, t] for i in range(n)) + quicksum(q[t] for q in delay_q) <= ii,
              family="H1_hold")
    makespan = m.add_var("makespan", 0, horizon + L, integer=True)
    for i in range(n):
        m.add(makespan - tau[i] >= L, family="O1_makespan")
    m.minimize(makespan)
    return m


def _milp_groups(m: LinearModel, problem: StreamingProblem, y: dict) -> None:
    T = problem.tiles
    for members in problem.components:
        for i in members[1:]:
            for t in range(T):
                m.add(y[i, t] - y[members[0], t] == 0, family="M1_memory")
    groups = [("B1_starts", problem.starts)] + [("S1_siblings", kids) for kids in problem.children]
    for family, group in groups:
        if len(group) > 1:
            for t in range(T):
                m.add(quicksum(y[i, t] for i in group) <= 1, family=family)


def _milp_edges(m: LinearModel, problem: StreamingProblem, ii: int, pos: list, tau: list,
                y: dict, horizon: int) -> list[list]:
    """Reach, exact |dtile| latency (se16 links: latency = |dtile|), timing and delay entries."""
    T, L, R = problem.tiles, problem.op_latency, problem.reach
    if any(problem.latency[dt] != abs(dt) for dt in problem.latency):
        raise NotImplementedError("the MILP version assumes link latency = |dtile| (se16)")
    max_delays = ii - 1  # the consumer's tile has II slots and the consumer takes one
    delay_q = []
    for e, (u, v, d) in enumerate(problem.edges):
        plus = m.add_var(f"dp_{e}", 0, R, integer=True)
        minus = m.add_var(f"dm_{e}", 0, R, integer=True)
        sign = m.add_binary(f"sg_{e}")
        m.add(pos[v] - pos[u] - plus + minus == 0, family="R1_reach")
        m.add(plus - R * sign <= 0, family="R1_reach")
        m.add(minus + R * sign <= R, family="R1_reach")
        hold = tau[v] - tau[u] - plus - minus + d * ii - L
        delays = m.add_var(f"p_{e}", 0, max_delays, integer=True)
        m.add(hold >= 0, family="T2_timing")
        m.add(hold - ii * delays >= 0, family="H1_hold")
        m.add(hold - ii * delays <= ii - 1, family="H1_hold")
        q = [m.add_var(f"q_{e}_{t}", 0, ii, integer=True) for t in range(T)]
        for t in range(T):
            m.add(q[t] - ii * y[v, t] <= 0, family="H1_hold")
        m.add(quicksum(q) - delays >= 0, family="H1_hold")
        delay_q.append(q)
    return delay_q


def solve_milp(problem: StreamingProblem, ii: int, backend: str = "highs",
               time_limit: float = 30.0, seed: int = 0) -> tuple[SolveResult, StreamingSchedule | None]:
    """Solve :func:`build_milp` on a linear backend and decode it."""
    m = build_milp(problem, ii)
    result = m.solve(backend=backend, time_limit=time_limit, seed=seed)
    if not result.has_solution:
        return result, None
    tile, tau = [], []
    for i in range(problem.n):
        on = [(t, s) for t in range(problem.tiles) for s in range(ii)
              if result.values.get(f"x_{i}_{t}_{s}", 0) > 0.5]
        tile.append(on[0][0])
        tau.append(int(round(result.values[f"tau_{i}"])))
    return result, schedule_from_lists(problem, ii, tile, tau, method=f"milp:{backend}",
                                       status="optimal" if result.status is SolveStatus.OPTIMAL
                                       else "feasible")
