"""Kernels too big for one synchronous data-flow: pass trees and SDFs joined over the AF.

Scope
-----
Two graph transformations that keep a kernel's meaning and make it fit the Streaming Engine
(source 004), each followed by the ordinary one-SDF sweep per part
(:mod:`formulations.streaming.kernel`
decides when and schedules the parts):

* :func:`relieve_fan_out` -- **pass trees** for ``R1 reach`` / ``S1 siblings``. A value feeding
  more consumers than fit within reach (``2 * reach + 1 = 5`` distinct tiles on se16), or feeding
  two siblings that share a tile-memory variable, is re-sent by ``pass`` instructions: the
  producer keeps ``fan_out - 1`` consumers and feeds one pass instruction, which takes the rest
  (recursively). A pass instruction is modelled like any other (it takes a slot and adds the
  instruction latency: DESIGN.md, routing through tiles "if modelled the same way").
* :func:`split_into_sdfs` -- **several SDFs joined over the asynchronous fabric (AF)** for
  ``A4 slots`` (more than ``tiles x max_ii`` instructions), ``B1 starts`` (more than ``tiles``
  SDF starts) or a part the one-SDF model cannot map. The partition is a sound heuristic: units
  are the strongly connected components of the graph *with* its loop-carried edges (a
  recurrence never crosses the AF) merged with the tile-memory components (a variable lives on
  one tile), contracted again until the quotient is acyclic; units are packed in topological
  order into parts of at most ``capacity`` instructions (balanced), at most ``tiles`` SDF starts
  and at most ``2 * reach + 1`` in-part consumers per producer. An edge between parts is an
  **AF edge**: the producer's result is written over the AF into a tile memory of the consumer's
  SDF (digest §2.4: "a data transfer from another synchronous domain"), where the consumer reads
  it as a tile-memory variable ``af:<src>><dst>:<distance>`` (one per edge, so that no two
  consumers are forced onto one tile).

Execution model of a split kernel (our decision; the paper has none): the SDFs **share the 16
tiles in time**. They run one after another as phases, each over a batch of ``B`` iterations at
its own II; phase ``p + 1`` starts when phase ``p`` has finished and its AF writes have landed
(``af_latency`` cycles: the hardware description's ``af_latency``, an assumption, digest §9).
Splitting the tiles in space
instead would not relieve ``A4 slots`` (the parts would still share 96 slots). The batch is
limited by the consumer tiles' memories (``B`` values per AF variable). Because every AF edge
goes from an earlier phase to a later one, a loop-carried AF edge reads a value of an earlier
iteration that is already in memory. Recurrences stay inside one SDF: splitting one would put
the AF latency inside the loop and only lengthen it.

Not fixable by either transformation (reported with the reason): ``R2 recurrence`` (see above;
:func:`stuck_recurrences` also proves a recurrence within the II bound unmappable when its
instructions alone have no mapping),
``O1 operands`` (a 4-operand instruction would need its operation decomposed, which changes the
instruction set semantics), ``G0 graph``, ``M1 memory`` / ``M2 capacity`` (a variable's users
must share one tile in every SDF) and two SDF starts sharing a variable.

Examples
--------
>>> from hardware import load_hardware
>>> from model.graph import Graph, Node, Edge
>>> g = Graph("fan8", [Node("p")] + [Node(f"c{i}") for i in range(8)],
...           [Edge("p", f"c{i}") for i in range(8)])
>>> g2, passes = relieve_fan_out(g, load_hardware("se16"))
>>> passes, sorted(g2.successors("p"))
(['pass.p.0'], ['c0', 'c1', 'c2', 'c3', 'pass.p.0'])
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass, field

import networkx as nx

from formulations.solver import Budget, SolveSettings, SolveStatus
from formulations.streaming.model import build_cp_model, solve_model
from formulations.streaming.problem import (RULES, StreamingProblem, StreamingSchedule,
                                            lower_bounds, problem_from_graph)
from hardware import StreamingEngineSpec
from model.graph import Edge, Graph, Node

__all__ = ["PASS_OP", "AfEdge", "SdfPart", "SplitPlan", "SplitSchedule", "relieve_fan_out",
           "repair_of", "phase_end", "phase_starts", "batch_size", "part_graph",
           "stuck_recurrences", "split_into_sdfs", "af_variable", "max_fan_out"]

#: The op of an inserted pass (copy) instruction.
PASS_OP = "pass"


@dataclass
class AfEdge:
    """An edge between two SDFs, carried by the asynchronous fabric."""

    src: str
    dst: str
    distance: int
    src_sdf: int
    dst_sdf: int

    @property
    def variable(self) -> str:
        return af_variable(self.src, self.dst, self.distance)


@dataclass
class SdfPart:
    """One SDF: its instructions and the graph the one-SDF model maps (AF inputs as variables)."""

    index: int
    nodes: list[str]
    graph: Graph


@dataclass
class SplitPlan:
    """The parts in phase order, the AF edges between them and the graph they come from."""

    graph: Graph
    parts: list[SdfPart]
    af_edges: list[AfEdge] = field(default_factory=list)


def af_variable(src: str, dst: str, distance: int) -> str:
    """Name of the tile-memory variable an AF edge writes.

    >>> af_variable("a", "b", 0)
    'af:a>b:0'
    """
    return f"af:{src}>{dst}:{distance}"


def max_fan_out(spec: StreamingEngineSpec) -> int:
    """Most consumers one value can feed on the synchronous fabric: distinct tiles within reach.

    >>> from hardware import load_hardware
    >>> max_fan_out(load_hardware("se16"))
    5
    """
    reach = max(offset for offset, _ in spec.links)
    return min(spec.tiles, 2 * reach + 1)


# ---------------------------------------------------------------------------------------------
# pass trees (R1 reach, S1 siblings)
# ---------------------------------------------------------------------------------------------
def relieve_fan_out(graph: Graph, spec: StreamingEngineSpec) -> tuple[Graph, list[str]]:
    """Insert pass instructions so that no value feeds more than :func:`max_fan_out`
    consumers and no two siblings share a tile-memory variable; returns the graph and the
    names of the pass instructions (none: the graph itself)."""
    limit = max_fan_out(spec)
    nodes = list(graph.nodes)
    edges = list(graph.edges)
    var_users = _var_users(graph)
    inserted: list[str] = []
    for producer in graph.node_ids:
        out = [e for e in edges if e.src == producer and e.dst != producer]
        keep, moved = _choose_moved(out, limit, var_users)
        if not moved:
            continue
        edges = [e for e in edges if not (e.src == producer and e in moved)]
        tree_nodes, tree_edges = _pass_tree(producer, moved, limit, var_users)
        nodes += tree_nodes
        edges += tree_edges
        inserted += [n.id for n in tree_nodes]
    if not inserted:
        return graph, []
    return Graph(graph.name, nodes, edges, dict(graph.attrs) | {"pass_instructions": len(inserted)}
                 ), inserted


def _var_users(graph: Graph) -> dict[str, set[str]]:
    """Instruction -> the instructions it shares a tile-memory component with (itself too)."""
    g = nx.Graph()
    g.add_nodes_from(graph.node_ids)
    for node in graph.nodes:
        for var in node.mem_vars:
            g.add_edge(node.id, ("var", var))
    out = {}
    for comp in nx.connected_components(g):
        names = {c for c in comp if isinstance(c, str)}
        for n in names:
            out[n] = names
    return out


def _choose_moved(out: list[Edge], limit: int, var_users: dict[str, set[str]]
                  ) -> tuple[list[Edge], list[Edge]]:
    """Edges kept on the producer and edges moved behind a pass instruction."""
    keep, moved, taken = [], [], set()
    for e in out:
        clash = e.dst in taken or bool(var_users[e.dst] & taken - {e.dst})
        if clash or len(keep) >= limit:
            moved.append(e)
        else:
            keep.append(e)
            taken |= var_users[e.dst]
    if moved and len(keep) >= limit:  # the pass instruction takes one of the producer's places
        moved.insert(0, keep.pop())
    return keep, moved


def _pass_tree(producer: str, moved: list[Edge], limit: int, var_users: dict[str, set[str]],
               depth: int = 0) -> tuple[list[Node], list[Edge]]:
    """One pass instruction fed by ``producer`` taking ``moved``; recursive when needed."""
    name = f"pass.{producer}.{depth}"
    nodes = [Node(name, PASS_OP, attrs={"pass_of": producer})]
    edges = [Edge(producer, name)]
    redirected = [Edge(name, e.dst, e.bandwidth, e.bytes, None, e.virtual_channel, e.depth,
                       e.distance, dict(e.attrs)) for e in moved]
    keep, rest = _choose_moved(redirected, limit, var_users)
    edges += keep
    if rest:
        sub_nodes, sub_edges = _pass_tree(producer, rest, limit, var_users, depth + 1)
        sub_edges[0] = Edge(name, sub_nodes[0].id)
        nodes += sub_nodes
        edges += sub_edges
    return nodes, edges


# ---------------------------------------------------------------------------------------------
# several SDFs over the asynchronous fabric
# ---------------------------------------------------------------------------------------------
def split_into_sdfs(graph: Graph, spec: StreamingEngineSpec, parts: int | None = None,
                    capacity: int | None = None) -> SplitPlan:
    """Partition ``graph`` into SDFs (see the module): consecutive runs of units, each a legal
    SDF by the pre-checks (at most ``capacity`` instructions, by default ``tiles x max_ii``, or
    ``ceil(n / parts)`` when ``parts`` is given, but never fewer than the largest unit's, so
    that a recurrence larger than an even share still gets a part of its own, e.g. the
    80-instruction round of aes decrypt among 118; at most ``tiles`` starts, no two starts sharing a
    variable, bounded fan-out), as few as possible, then as balanced as possible (dynamic
    programming over the cut positions).

    Raises ``ValueError`` when no such partition exists (e.g. one recurrence with its
    memory-sharing instructions is larger than an SDF).

    Examples
    --------
    >>> from hardware import load_hardware
    >>> from model.graph import Graph, Node, Edge
    >>> g = Graph("chain", [Node(f"n{i}") for i in range(6)],
    ...           [Edge(f"n{i}", f"n{i + 1}") for i in range(5)])
    >>> plan = split_into_sdfs(g, load_hardware("se16"), parts=2)
    >>> [p.nodes for p in plan.parts], [(e.src, e.dst) for e in plan.af_edges]
    ([['n0', 'n1', 'n2'], ['n3', 'n4', 'n5']], [('n2', 'n3')])
    >>> plan.parts[1].graph.node("n3").mem_vars
    ('af:n2>n3:0',)
    """
    limit = spec.tiles * spec.max_ii
    capacity = min(limit, capacity or limit)
    units = _units(graph)
    if parts:   # balanced, but never below the largest unit (a recurrence is never cut)
        even = max(1, math.ceil(len(graph.nodes) / parts))
        capacity = min(capacity, max(even, max((len(u) for u in units), default=1)))
    groups = _best_cuts(graph, units, capacity, spec)
    if groups is None:
        raise ValueError(f"no partition into SDFs of at most {capacity} instructions keeps every "
                         f"SDF legal (starts, shared variables, fan-out, recurrences)")
    return _plan(graph, groups)


def _units(graph: Graph) -> list[list[str]]:
    """Recurrences merged with memory components, contracted until the quotient is acyclic;
    in a deterministic topological order."""
    position = {n: i for i, n in enumerate(graph.node_ids)}
    g = nx.DiGraph()
    g.add_nodes_from(graph.node_ids)
    g.add_edges_from((e.src, e.dst) for e in graph.edges if e.src != e.dst)
    users: dict[str, list[str]] = defaultdict(list)
    for node in graph.nodes:
        for var in node.mem_vars:
            users[var].append(node.id)
    for names in users.values():  # memory sharers: both directions, so they condense together
        for a, b in zip(names, names[1:]):
            g.add_edge(a, b)
            g.add_edge(b, a)
    quotient = nx.condensation(g)
    members = {c: sorted(quotient.nodes[c]["members"], key=position.get) for c in quotient}
    order = nx.lexicographical_topological_sort(quotient, key=lambda c: position[members[c][0]])
    return [members[c] for c in order]


def _best_cuts(graph: Graph, units: list[list[str]], capacity: int, spec: StreamingEngineSpec
               ) -> list[list[str]] | None:
    """Fewest legal consecutive parts, then the smallest largest part (dynamic programming)."""
    check = _PartCheck(graph, spec)
    sizes = [0]
    for unit in units:
        sizes.append(sizes[-1] + len(unit))
    best: list[tuple[int, int, int] | None] = [None] * (len(units) + 1)
    best[0] = (0, 0, -1)
    for j in range(1, len(units) + 1):
        for i in range(j - 1, -1, -1):
            size = sizes[j] - sizes[i]
            if size > capacity:
                break
            if best[i] is None or not check.legal([n for u in units[i:j] for n in u]):
                continue
            cand = (best[i][0] + 1, max(best[i][1], size), i)
            if best[j] is None or cand[:2] < best[j][:2]:
                best[j] = cand
    if best[-1] is None:
        return None
    groups, j = [], len(units)
    while j > 0:
        i = best[j][2]
        groups.append([n for u in units[i:j] for n in u])
        j = i
    return groups[::-1]


class _PartCheck:
    """Pre-checks of one candidate SDF (a set of instructions of the graph)."""

    def __init__(self, graph: Graph, spec: StreamingEngineSpec):
        self.spec = spec
        self.preds: dict[str, set[str]] = defaultdict(set)
        self.kids: dict[str, set[str]] = defaultdict(set)
        for e in graph.edges:
            if e.src != e.dst:
                self.kids[e.src].add(e.dst)
                if e.distance == 0:
                    self.preds[e.dst].add(e.src)
        self.flagged = {n.id for n in graph.nodes if n.starts_sdf}
        self.vars = {n.id: set(n.mem_vars) for n in graph.nodes}

    def legal(self, nodes: list[str]) -> bool:
        inside = set(nodes)
        if inside & self.flagged:
            starts = [n for n in nodes if n in self.flagged]
        else:
            starts = [n for n in nodes if not self.preds[n] & inside]
        if len(starts) > self.spec.tiles:
            return False
        seen: set[str] = set()
        for n in starts:
            if self.vars[n] & seen:
                return False  # two starts sharing a variable would need one tile (B1 vs M1)
            seen |= self.vars[n]
        return all(len(self.kids[n] & inside) <= max_fan_out(self.spec) for n in nodes)


def _plan(graph: Graph, groups: list[list[str]]) -> SplitPlan:
    sdf_of = {n: i for i, group in enumerate(groups) for n in group}
    af_edges = [AfEdge(e.src, e.dst, e.distance, sdf_of[e.src], sdf_of[e.dst])
                for e in graph.edges if sdf_of[e.src] != sdf_of[e.dst]]
    parts = [SdfPart(i, group, part_graph(graph, group, af_edges, i))
             for i, group in enumerate(groups)]
    return SplitPlan(graph, parts, af_edges)


def part_graph(graph: Graph, nodes: list[str], af_edges: list[AfEdge], index: int) -> Graph:
    """The graph of one SDF: its instructions, the edges inside, AF inputs as variables."""
    keep = set(nodes)
    extra: dict[str, list[str]] = defaultdict(list)
    for e in af_edges:
        if e.dst_sdf == index:
            extra[e.dst].append(e.variable)
    part_nodes = [Node(n.id, n.op, n.unit, n.pcu, n.pmu, n.latency, n.category,
                       tuple(n.mem_vars) + tuple(extra.get(n.id, ())), n.starts_sdf,
                       dict(n.attrs), dict(n.extra))
                  for n in graph.nodes if n.id in keep]
    part_edges = [e for e in graph.edges if e.src in keep and e.dst in keep]
    return Graph(f"{graph.name}#sdf{index}", part_nodes, part_edges, dict(graph.attrs))


# ---------------------------------------------------------------------------------------------
# mapping every part and timing the phases
# ---------------------------------------------------------------------------------------------
@dataclass
class SplitSchedule:
    """A split mapping: the plan, one schedule per SDF (phase order), the batch of iterations
    each phase runs, the phase start cycles for that batch and the AF latency assumed."""

    plan: SplitPlan
    schedules: list[StreamingSchedule]
    batch: int
    starts: list[int]
    af_latency: int

    @property
    def latency(self) -> int:
        """Cycles from the first issue to the last result of one iteration (batch of 1)."""
        starts = phase_starts(self.plan, self.schedules, 1, self.af_latency)
        return starts[-1] + self.schedules[-1].cycles

    @property
    def batch_cycles(self) -> int:
        """Cycles to run one batch through every phase."""
        last = self.schedules[-1]
        return self.starts[-1] + last.cycles + (self.batch - 1) * last.ii

    @property
    def effective_ii(self) -> float:
        """Cycles per iteration in steady state (batch cycles / batch)."""
        return self.batch_cycles / self.batch


def phase_end(schedule: StreamingSchedule, start: int, batch: int) -> int:
    """Cycle at which a phase's last result of the batch is ready."""
    return start + schedule.cycles + (batch - 1) * schedule.ii


def phase_starts(plan: SplitPlan, schedules: list[StreamingSchedule], batch: int,
                 af_latency: int) -> list[int]:
    """Start cycle of each phase: after the previous phase ends and after every AF value of the
    batch it reads has landed (ready + ``af_latency``) by the time its consumer issues."""
    starts: list[int] = []
    for p, sched in enumerate(schedules):
        start = 0 if p == 0 else phase_end(schedules[p - 1], starts[-1], batch)
        for e in plan.af_edges:
            if e.dst_sdf != p:
                continue
            src = schedules[e.src_sdf]
            for j in sorted({e.distance, batch - 1}):  # the worst case is an end of the batch
                if j < e.distance or j >= batch:
                    continue  # earlier iterations' values come from the previous batch
                arrival = (starts[e.src_sdf] + src.cycle[e.src] + (j - e.distance) * src.ii
                           + src.op_latency + af_latency)
                start = max(start, arrival - sched.cycle[e.dst] - j * sched.ii)
        starts.append(start)
    return starts


def batch_size(plan: SplitPlan, schedules: list[StreamingSchedule], spec: StreamingEngineSpec
               ) -> int:
    """Iterations per phase: each AF variable buffers a batch (plus its distance) in the
    consumer tile's memories, next to the tile's other variables; at most ``memory_depth``."""
    capacity = spec.memories_per_tile * spec.memory_depth
    best = spec.memory_depth
    for part, sched in zip(plan.parts, schedules):
        fixed: dict[int, int] = defaultdict(int)
        af_vars: dict[int, int] = defaultdict(int)
        for node in part.graph.nodes:
            t = sched.tile[node.id]
            for var in node.mem_vars:
                if var.startswith("af:"):
                    af_vars[t] += 1
                    fixed[t] += int(var.rsplit(":", 1)[1])
                else:
                    fixed[t] += 1
        for t, count in af_vars.items():
            best = min(best, (capacity - fixed[t]) // count)
    return max(best, 0)


def stuck_recurrences(graph: Graph, spec: StreamingEngineSpec, settings: SolveSettings,
                      budget: Budget | None = None,
                      floors: dict[tuple[str, ...], int] | None = None) -> list[str]:
    """Recurrences no split can map: ``R2 recurrence`` reasons, one per such recurrence.

    A recurrence (a strongly connected component with its loop-carried edges) stays inside
    one SDF in every split (see the module). Its instructions alone, with ``B1 starts``
    dropped, are a relaxation of any SDF that contains them: the other rules only lose
    terms (fewer siblings, edges, variables, holds). So when the model proves that
    relaxation INFEASIBLE at every II up to ``max_ii``, no split maps the kernel. Each reason
    names the recurrence's instructions and the rules without which it would map (each
    relaxation solved in ``settings.time_limit`` planned seconds of deterministic work,
    seed ``settings.seed``, charged to ``budget``, default ``settings.budget()``).

    ``floors`` (when given) receives, per recurrence that may map (its instructions in graph
    order), the smallest II the relaxation was not proven INFEASIBLE at: a proven lower
    bound on the II of every SDF that contains the recurrence, so of the kernel in every
    mapping, one SDF or several (e.g. 29 for aes decrypt's round, whose RecMII is 27).
    """
    cycles = nx.DiGraph()
    cycles.add_edges_from((e.src, e.dst) for e in graph.edges if e.src != e.dst)
    position = {n: i for i, n in enumerate(graph.node_ids)}
    budget = budget if budget is not None else settings.budget()
    reasons = []
    for members in nx.strongly_connected_components(cycles):
        if len(members) < 2:
            continue
        names = sorted(members, key=position.get)
        problem = problem_from_graph(graph.subgraph(names), spec)
        low = lower_bounds(problem)["ii"]
        if low > problem.max_ii:
            continue  # the pre-check already says so (R2 recurrence)
        keep = set(RULES) - {"B1 starts"}
        floor = next((ii for ii in range(low, problem.max_ii + 1)
                      if _mappable(problem, ii, keep, settings, budget) is not False),
                     None)
        if floor is not None:
            if floors is not None:
                floors[tuple(names)] = floor
            continue
        culprits = [rule for rule in sorted(keep)
                    if _mappable(problem, problem.max_ii, keep - {rule}, settings, budget)]
        shown = ", ".join(names[:6]) + (f" and {len(names) - 6} more" if len(names) > 6 else "")
        reasons.append(
            f"R2 recurrence: the loop-carried cycle through {shown} needs II >= {low} and has "
            f"no mapping at any II <= {problem.max_ii} even as an SDF of its own (proven by "
            f"the model" + (f", which maps it only with {' or '.join(culprits)} relaxed"
                            if culprits else "")
            + "), and a recurrence cannot cross the asynchronous fabric")  # no "; ": a list
    return reasons


def _mappable(problem: StreamingProblem, ii: int, families: set[str], settings: SolveSettings,
              budget: Budget) -> bool | None:
    """Whether the model with only ``families`` has a mapping at ``ii`` (None: unknown), in
    ``settings.time_limit`` planned seconds charged to ``budget``."""
    model, _ = build_cp_model(problem, ii, families=families)
    model.clear_objective()
    result = solve_model(model, Budget(settings.time_limit, parent=budget), seed=settings.seed)
    if result.status is SolveStatus.INFEASIBLE:
        return False
    return True if result.has_solution else None


def repair_of(reason: str) -> str | None:
    """Which transformation can fix a pre-check reason: ``"pass tree"``, ``"split"`` or None.

    >>> repair_of("A4 slots: 105 instructions but 16 tiles x 6 slots = 96")
    'split'
    >>> repair_of("R1 reach: x feeds 10 instructions, ..."), repair_of("R2 recurrence: ...")
    ('pass tree', None)
    """
    rule = reason.split(":")[0]
    if "without it a mapping exists" in reason:
        return "split"  # the one-SDF search failed on a conflict: smaller SDFs may map
    if rule in ("R1 reach", "S1 siblings"):
        return "pass tree"
    if rule == "A4 slots" or (rule == "B1 starts" and "start a data-flow but" in reason):
        return "split"
    if rule in ("T0 time limit", "H1 hold", "T2 timing") or reason.startswith("no II"):
        return "split"  # the one-SDF search failed: smaller SDFs may map
    return None
