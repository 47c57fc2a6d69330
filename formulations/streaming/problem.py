"""The Streaming Engine problem (source 004): data, rules, pre-checks, bounds, the answer.

Scope
-----
:func:`problem_from_graph` indexes one synchronous data-flow (SDF) for one Streaming Engine
spec (:class:`StreamingProblem`: edges, siblings, SDF starts, tile-memory components, link
and instruction latencies, all from the spec). :data:`RULES` names the rule families every
model, heuristic and the simulator share; :func:`precheck` finds the violations visible
before any search, :func:`lower_bounds` the resource, memory and recurrence II bounds and the
critical path. :class:`StreamingSchedule` is the answer every method returns
(:func:`schedule_from_lists` builds one from per-index tiles and issue cycles, with the delay
entries the holds need); :class:`StreamingInfeasible` carries the rules that make a kernel
unmappable, in the user's terms.

Examples
--------
>>> from hardware import load_hardware
>>> from model.graph import Graph, Node, Edge
>>> g = Graph("loop", [Node("a"), Node("b")], [Edge("a", "b"), Edge("b", "a", distance=1)])
>>> p = problem_from_graph(g, load_hardware("se16"))
>>> lower_bounds(p)["ii"], precheck(p)
(6, [])
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass, field

import networkx as nx

from formulations.solver import SolveResult
from hardware import StreamingEngineSpec
from model.graph import Graph, same_iteration_cycle_rule

__all__ = [
    "RULES", "WINDOW_FAMILIES", "SPLIT_PROOF_RULES", "StreamingInfeasible", "StreamingProblem",
    "problem_from_graph", "default_horizon", "delays_needed", "asap_and_tail", "lower_bounds",
    "precheck", "StreamingSchedule", "schedule_cycles", "schedule_from_lists", "holds_fit",
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
    broken = same_iteration_cycle_rule(graph)
    if broken:
        raise StreamingInfeasible([broken])


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


def asap_and_tail(problem: StreamingProblem) -> tuple[list[int], list[int]]:
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


def default_horizon(problem: StreamingProblem, ii: int) -> int:
    """An issue-cycle horizon at ``ii`` that never cuts off a sensible schedule."""
    lat = max(problem.latency.values())
    return (problem.op_latency + lat + ii) * (problem.n + 1) + ii


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
    asap, _ = asap_and_tail(problem)
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
                       f"({problem.op_latency} cycles per instruction over its distance) but II <= "
                       f"{problem.max_ii}")
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
                           f"data-flow but share variable "
                           f"{', '.join(problem.component_vars[comp][:3])}")
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
    ``op_latency`` is the hardware's instruction latency (the cycle count's last term).
    """

    ii: int
    tile: dict[str, int]
    slot: dict[str, int]
    cycle: dict[str, int]
    op_latency: int
    delays: dict[tuple[str, str, int], int] = field(default_factory=dict)
    method: str = ""
    status: str = "heuristic"
    proven_ii: bool = False
    bound: int | None = None
    results: list[SolveResult] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def cycles(self) -> int:
        return schedule_cycles(self.cycle, self.op_latency)


def schedule_cycles(cycle: dict[str, int], op_latency: int) -> int:
    """Cycle count of one iteration: the last ready time ``max(issue) + op_latency``.

    >>> schedule_cycles({"a": 0, "b": 4}, 3)
    7
    """
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
                        method: str = "", status: str = "heuristic",
                        proven_ii: bool = False) -> StreamingSchedule:
    """A :class:`StreamingSchedule` from per-index tiles and issue cycles."""
    names = problem.names
    return StreamingSchedule(
        ii=ii, tile={names[i]: tile[i] for i in range(problem.n)},
        slot={names[i]: tau[i] % ii for i in range(problem.n)},
        cycle={names[i]: tau[i] for i in range(problem.n)}, op_latency=problem.op_latency,
        delays=_delays_of(problem, tile, tau, ii), method=method, status=status,
        proven_ii=proven_ii)


def holds_fit(problem: StreamingProblem, schedule: StreamingSchedule) -> bool:
    """H1 on a schedule: every tile's instructions plus the delay entries of the values held
    into them fit its II slots."""
    load = defaultdict(int)
    for t in schedule.tile.values():
        load[t] += 1
    for (_, v, _), count in schedule.delays.items():
        load[schedule.tile[v]] += count
    return max(load.values(), default=0) <= schedule.ii
