"""The generic CGRA modulo-mapping problem: data, rules, bounds, the answer.

Scope
-----
:func:`problem_from_graph` indexes one loop kernel for one :class:`~hardware.CgraSpec`
(:class:`CgraProblem`: operations, latencies, the PEs each may run on, edges with their
iteration distance, the nets (one value, its consumers), the PE links and hop distances).

The rules every model, heuristic and the simulator (:mod:`sim.cgra`) share (:data:`RULES`):

* an operation issues on one PE at one cycle; a PE issues at most one operation per cycle
  slot (cycle mod II);
* its result sits in a register of its PE from ``issue + latency`` on; each cycle a value may
  stay in its PE's registers and/or move one hop to a neighbour PE over a link (one value per
  link per cycle slot); a PE holds at most ``registers`` values per cycle slot (all
  iterations in flight counted);
* an operation reads every operand from its own PE's registers at its issue cycle; the value
  of an edge ``u -> v`` with iteration distance ``d`` must be in ``v``'s PE at
  ``issue(v) + d * II``;
* memory operations run on PEs that reach memory.

:func:`lower_bounds` gives ResMII (operations over PEs), MemII (memory operations over memory
PEs), RecMII (loop-carried cycles with the latencies, no hops), RegMII (:func:`slot_registers`:
an operation's operands and its own result in one cycle slot of its PE), their maximum ``ii``
(the classic lower bound), ``group_ii`` and ``route_ii`` (:func:`tight_recurrences`: the
recurrences with the hops their values cross, without and with the crowded ones; searches
start from ``route_ii``) and the critical path;
:func:`precheck` the violations visible before any search. :class:`CgraSchedule` is the
answer every method returns: per operation a PE and an issue cycle, per edge a route.

Examples
--------
>>> from hardware import load_hardware
>>> from model.graph import Graph, Node, Edge
>>> g = Graph("acc", [Node("ld", op="LOAD"), Node("add", op="ADD")],
...           [Edge("ld", "add"), Edge("add", "add", distance=1)])
>>> p = problem_from_graph(g, load_hardware("cgra4x4"))
>>> lower_bounds(p), precheck(p)
({'res_ii': 1, 'mem_ii': 1, 'rec_ii': 1, 'reg_ii': 1, 'ii': 1, 'group_ii': 1, 'route_ii': 1, \
'critical_path': 2}, [])
"""

from __future__ import annotations

import math
from collections import defaultdict, deque
from dataclasses import dataclass, field

import networkx as nx

from formulations.solver import SolveResult
from hardware import CgraSpec
from model.graph import Graph, same_iteration_cycle_rule

__all__ = ["RULES", "CgraInfeasible", "CgraProblem", "problem_from_graph", "lower_bounds",
           "precheck", "rec_ok", "tight_recurrences", "slot_registers", "time_windows",
           "hop_gap", "length_bound", "CgraSchedule", "Step", "moved_onto", "CYCLE_STEPS"]

#: The rule families, in the order they are explained.
RULES = {
    "C1 slot": "one operation per PE per cycle slot (cycle mod II)",
    "C2 memory": "memory operations on PEs that reach memory",
    "C3 operations": "every operation is one the PEs run",
    "C4 route": "a value moves one hop per cycle over a link or waits in a register",
    "C5 registers": "at most `registers` values per PE per cycle slot",
    "C6 links": "one value per link per cycle slot",
    "C7 recurrence": "loop-carried cycles fit the II",
    "G0 graph": "same-iteration edges form a DAG",
    "T0 time limit": "the search ran out of time (nothing proven)",
}

#: Edges the search for a crowded recurrence (:func:`tight_recurrences`) follows at one II at
#: most, a bound on its cost that does not depend on the machine. On the 55 Morpher kernels
#: (four presets, cgra8x8's corners, every II ``lower_bounds`` and ``precheck`` ask: 680
#: searches) it changes no answer, and the slowest search took 24 ms (adpcm_decoder, II 7).
CYCLE_STEPS = 100_000

#: One step of a route: (PE index, cycle).
Step = tuple[int, int]


class CgraInfeasible(Exception):
    """No legal mapping exists (or none was found); ``reasons`` name the rules in user terms."""

    def __init__(self, reasons: list[str]):
        self.reasons = list(reasons)
        super().__init__("; ".join(self.reasons))


@dataclass
class CgraProblem:
    """Indexed data of one kernel on one CGRA (built by :func:`problem_from_graph`).

    ``edges`` are ``(u, v, distance)`` over operation indices (duplicates removed);
    ``nets[u]`` the ``(v, distance)`` consumers of ``u``'s value; ``allowed[v]`` the PE
    indices ``v`` may run on; ``pes[p]`` the ``(row, col)`` of PE ``p``; ``links[p]`` the PEs
    one hop from ``p``; ``dist[p][q]`` the hops from ``p`` to ``q``.
    """

    names: list[str]
    ops: list[str]
    latency: list[int]
    edges: list[tuple[int, int, int]]
    nets: dict[int, list[tuple[int, int]]]
    allowed: list[list[int]]
    pes: list[tuple[int, int]]
    links: list[list[int]]
    dist: list[list[int]]
    registers: int
    max_ii: int
    memory: list[bool]
    unsupported: list[int] = field(default_factory=list)
    operations: tuple[str, ...] = ()
    name: str = "kernel"
    rows: int = 1
    cols: int = 1
    neighbours: str = "mesh"
    #: :func:`lower_bounds`, once computed
    _bounds: dict[str, int] | None = field(default=None, init=False, repr=False,
                                           compare=False)

    @property
    def n(self) -> int:
        return len(self.names)

    @property
    def pe_count(self) -> int:
        return len(self.pes)

    @property
    def link_list(self) -> list[tuple[int, int]]:
        """Every directed link ``(p, q)``, sorted."""
        return [(p, q) for p in range(self.pe_count) for q in self.links[p]]

    @property
    def diameter(self) -> int:
        return max(max(row) for row in self.dist) if self.dist else 0


def problem_from_graph(graph: Graph, spec: CgraSpec) -> CgraProblem:
    """Index ``graph`` for ``spec`` (raises :class:`CgraInfeasible` for ``G0 graph``).

    Examples
    --------
    >>> from hardware import load_hardware
    >>> from model.graph import Graph, Node, Edge
    >>> g = Graph("g", [Node("a", op="LOAD"), Node("b", op="MUL")], [Edge("a", "b")])
    >>> p = problem_from_graph(g, load_hardware("hycube4x4"))
    >>> p.allowed[0], p.links[0], p.dist[0][15]
    ([0, 3, 4, 7, 8, 11, 12, 15], [1, 2, 4, 8], 4)
    """
    _require_acyclic(graph)
    names = graph.node_ids
    index = {nid: i for i, nid in enumerate(names)}
    edges = sorted({(index[e.src], index[e.dst], int(e.distance)) for e in graph.edges})
    nets: dict[int, list[tuple[int, int]]] = defaultdict(list)
    for u, v, d in edges:
        nets[u].append((v, d))
    pes = [(r, c) for r in range(spec.rows) for c in range(spec.cols)]
    pe_index = {rc: p for p, rc in enumerate(pes)}
    links = [[pe_index[q] for q in spec.neighbours_of(r, c)] for r, c in pes]
    memory_pes = [p for p, (r, c) in enumerate(pes) if spec.reaches_memory(r, c)]
    ops, latency, allowed, memory, unsupported = [], [], [], [], []
    for i, node in enumerate(graph.nodes):
        op = node.op or "nop"
        ops.append(op)
        latency.append(int(node.latency) if node.latency else spec.latency_of(op))
        is_mem = spec.is_memory_op(op)
        memory.append(is_mem)
        allowed.append(list(memory_pes) if is_mem else list(range(len(pes))))
        if not spec.supports(op):
            unsupported.append(i)
    return CgraProblem(names=names, ops=ops, latency=latency, edges=edges,
                       nets={u: sorted(c) for u, c in sorted(nets.items())}, allowed=allowed,
                       pes=pes, links=links, dist=_hops(links), registers=spec.registers,
                       max_ii=spec.max_ii, memory=memory, unsupported=unsupported,
                       operations=spec.operations, name=graph.name, rows=spec.rows,
                       cols=spec.cols, neighbours=spec.neighbours)


def _hops(links: list[list[int]]) -> list[list[int]]:
    """All-pairs hop counts by breadth-first search (unreachable: a large number)."""
    n = len(links)
    out = []
    for s in range(n):
        seen = [10**6] * n
        seen[s] = 0
        queue = deque([s])
        while queue:
            p = queue.popleft()
            for q in links[p]:
                if seen[q] > seen[p] + 1:
                    seen[q] = seen[p] + 1
                    queue.append(q)
        out.append(seen)
    return out


def _require_acyclic(graph: Graph) -> None:
    """G0: same-iteration edges must form a DAG (a cycle needs a loop-carried edge)."""
    broken = same_iteration_cycle_rule(graph)
    if broken:
        raise CgraInfeasible([broken])


# ---------------------------------------------------------------------------------------------
# bounds and pre-checks
# ---------------------------------------------------------------------------------------------
def rec_ok(problem: CgraProblem, ii: int) -> bool:
    """No cycle of positive weight ``latency(u) - ii * distance`` (RecMII test, no hops)."""
    dist = [0] * problem.n
    for _ in range(problem.n + 1):
        changed = False
        for u, v, d in problem.edges:
            w = dist[u] + problem.latency[u] - ii * d
            if w > dist[v]:
                dist[v], changed = w, True
        if not changed:
            return True
    return False


def _asap(problem: CgraProblem) -> list[int]:
    g = nx.DiGraph()
    g.add_nodes_from(range(problem.n))
    g.add_edges_from((u, v) for u, v, d in problem.edges if d == 0 and u != v)
    asap = [0] * problem.n
    for v in nx.lexicographical_topological_sort(g):
        asap[v] = max((asap[u] + problem.latency[u] for u in g.predecessors(v)), default=0)
    return asap


def lower_bounds(problem: CgraProblem) -> dict[str, int]:
    """ResMII, MemII, RecMII, RegMII (the smallest II :func:`slot_registers` allows), the
    smallest ``ii`` at least the first three that :func:`slot_registers` allows (the classic
    bound), ``group_ii``, the smallest II at least ``ii`` that the groups of
    :func:`tight_recurrences` allow (the list scheduler's ladder keeps its rungs where they
    are from it), ``route_ii``, the smallest II at least ``group_ii`` that
    :func:`tight_recurrences` allows, its crowded recurrences included (every smaller II is
    proven impossible: the searches start there), and the critical path (cycles). Computed
    once per problem (``route_ii`` takes up to 60 ms on a large kernel, and every search
    asks)."""
    if problem._bounds is None:
        problem._bounds = _lower_bounds(problem)
    return dict(problem._bounds)


def _lower_bounds(problem: CgraProblem) -> dict[str, int]:
    res_ii = max(1, math.ceil(problem.n / problem.pe_count))
    mem_pes = {p for v in range(problem.n) if problem.memory[v] for p in problem.allowed[v]}
    mem_ops = sum(problem.memory)
    mem_ii = max(1, math.ceil(mem_ops / len(mem_pes))) if mem_pes else 1
    rec_ii = 1
    limit = sum(problem.latency) + 1
    while rec_ii <= limit and not rec_ok(problem, rec_ii):
        rec_ii += 1
    asap = _asap(problem)
    critical = max((asap[v] + problem.latency[v] for v in range(problem.n)), default=0)
    top = max(problem.latency, default=1) + 1          # above every latency: no clash
    reg_ii = next((ii for ii in range(1, top) if not slot_registers(problem, ii)), top)
    ii = max(res_ii, mem_ii, rec_ii)
    while ii < top and slot_registers(problem, ii):
        ii += 1
    group_ii = ii
    while group_ii < problem.max_ii and tight_recurrences(problem, group_ii, crowded=False):
        group_ii += 1
    route_ii = group_ii
    while route_ii < problem.max_ii and tight_recurrences(problem, route_ii):
        route_ii += 1
    return {"res_ii": res_ii, "mem_ii": mem_ii, "rec_ii": rec_ii, "reg_ii": reg_ii,
            "ii": ii, "group_ii": group_ii, "route_ii": route_ii, "critical_path": critical}


def tight_recurrences(problem: CgraProblem, ii: int, crowded: bool = True) -> str | None:
    """Why ``ii`` is impossible because of recurrences that leave no room for hops (None
    when none says so; with ``crowded`` False, the groups of slack at most 1 alone).

    Every mapping meets ``t(v) + d II >= t(u) + latency(u) + hops(pe(u), pe(v))`` per edge
    (C4: one hop per cycle), so the hops a recurrence's values cross sum to at most its
    slack, ``d II`` minus its latencies. A closed walk over the PEs that leaves one PE
    crosses at least 2 hops, so every operation of a recurrence with slack 0 or 1 is on one
    PE, and with it every operation of a recurrence sharing one with it: such a group needs
    a PE all its operations may run on, and one cycle slot each on it (C1). This is what the
    relaxation (:mod:`~formulations.cgra.relax`) would refute at that II, found without a
    search (needwun PartPred: RecMII 14, impossible below 16). A recurrence of slack ``s``
    >= 2 visits at most ``s`` PEs, so its operations, with the groups that meet it, number
    at most ``s`` x ``ii`` (:func:`_crowded_cycle`: aes encrypt and decrypt on the 4 x 4
    torus, impossible below 11).

    >>> from hardware import load_hardware
    >>> from model.graph import Graph, Node, Edge
    >>> loops = [["a", "b", "c", "d"], ["a", "e", "f", "g"]]      # two recurrences, one a
    >>> eight = Graph("eight", [Node(v) for v in "abcdefg"],
    ...               [Edge(x, y, distance=int(y == "a")) for loop in loops
    ...                for x, y in zip(loop, loop[1:] + loop[:1])])
    >>> p = problem_from_graph(eight, load_hardware("cgra4x4"))
    >>> tight_recurrences(p, 5)
    'C4 route: at II 5 a group of 7 operations in recurrences with at most 1 spare cycle \
must share one PE, which has 5 cycle slots'
    >>> tight_recurrences(p, 6), lower_bounds(p)["ii"], lower_bounds(p)["route_ii"]
    (None, 4, 6)
    >>> ring = Graph("ring", [Node(f"n{i}") for i in range(10)],       # distance 3, RecMII 4
    ...              [Edge(f"n{i}", f"n{(i + 1) % 10}", distance=int(i in (3, 6, 9)))
    ...               for i in range(10)])
    >>> p = problem_from_graph(ring, load_hardware("cgra4x4"))
    >>> tight_recurrences(p, 4)
    'C4 route: at II 4 a recurrence with 2 spare cycles holds 10 operations (with the groups \
that must share a PE with one of them), on at most 2 PEs, which have 8 cycle slots'
    >>> lower_bounds(p)["ii"], lower_bounds(p)["route_ii"]
    (4, 5)
    """
    slack = _edge_slack(problem, ii)
    if slack is None:
        return f"C7 recurrence: a loop-carried cycle needs more than II {ii}"
    groups = _tight_groups(problem, ii, slack)
    for group in groups:
        common = set.intersection(*(set(problem.allowed[v]) for v in group))
        if len(group) > ii or not common:
            room = f"which has {ii} cycle slots" if common else "but no PE runs them all"
            return (f"C4 route: at II {ii} a group of {len(group)} operations in recurrences "
                    f"with at most 1 spare cycle must share one PE, {room}")
    return _crowded_cycle(problem, ii, slack, groups) if crowded else None


def _edge_slack(problem: CgraProblem, ii: int) -> dict[tuple[int, int], int] | None:
    """Per edge between two operations, its slack at ``ii``: its reduced cost against the
    longest-path potentials (``latency(u) - ii * distance``), so that the slacks of a cycle's
    edges sum to its slack, ``ii`` x its distance minus its latencies; None when a
    recurrence does not fit ``ii``."""
    gap: dict[tuple[int, int], int] = {}
    for u, v, d in problem.edges:
        if u != v:          # an edge of one operation to itself crosses no hop
            gap[(u, v)] = max(gap.get((u, v), -math.inf), problem.latency[u] - ii * d)
    high = [0] * problem.n
    for _ in range(problem.n + 1):
        changed = False
        for (u, v), w in gap.items():
            if high[u] + w > high[v]:
                high[v], changed = high[u] + w, True
        if not changed:
            break
    else:
        return None
    return {(u, v): high[v] - high[u] - w for (u, v), w in gap.items()}


def _tight_groups(problem: CgraProblem, ii: int,
                  slack: dict[tuple[int, int], int] | None = None) -> list[list[int]] | None:
    """The operations joined by recurrences of slack at most 1 at ``ii`` (groups of two
    or more, see :func:`tight_recurrences`); None when a recurrence does not fit ``ii``.
    ``slack``: :func:`_edge_slack` at ``ii`` (computed when not given); a recurrence of
    slack at most 1 is one of edges of slack 0 with at most one of slack 1."""
    slack = _edge_slack(problem, ii) if slack is None else slack
    if slack is None:
        return None
    out: dict[int, list[tuple[int, int]]] = defaultdict(list)
    for (u, v), s in slack.items():
        if s <= 1:
            out[u].append((v, s))
    joined = {v: v for v in range(problem.n)}

    def root(v: int) -> int:
        while joined[v] != v:
            v = joined[v]
        return v
    for (u, v), s in slack.items():
        if s <= 1 and u in _within(out, v, 1 - s):
            joined[root(u)] = root(v)
    groups: dict[int, list[int]] = defaultdict(list)
    for v in range(problem.n):
        groups[root(v)].append(v)
    return [g for g in groups.values() if len(g) > 1]


def _crowded_cycle(problem: CgraProblem, ii: int, slack: dict[tuple[int, int], int],
                   groups: list[list[int]], steps: int = CYCLE_STEPS) -> str | None:
    """Why ``ii`` is impossible because a recurrence of slack ``s`` >= 2 (its edges' slacks
    summed, :func:`_edge_slack`) has more operations than ``s`` PEs hold; None when none
    is found within ``steps`` edges of a depth-first search of the simple cycles (each from
    its least operation, slack at most ``(n - 1) // ii``, cheapest edges first).

    The hops its values cross sum to at most ``s`` (C4, as in :func:`tight_recurrences`),
    and a closed walk of ``h`` >= 1 hops visits at most ``h`` PEs, so the cycle's
    operations, with every group of :func:`_tight_groups` one of them is in (a group is on
    one PE), sit on at most ``s`` PEs of ``ii`` slots each (C1). On the 4 x 4 torus, aes
    encrypt and decrypt PartPred at II 10 (``route_ii`` before this): four groups of 9
    operations in a cycle of slack 4 through them and 16 operations between them, 52
    operations on at most 4 PEs (40 slots); sample decrypt_LN1 and encrypt_LN1 at II 9,
    48 on 4 (36). The search takes 15 000-32 000 steps (at most 8 ms) there."""
    cap = (problem.n - 1) // ii          # a cycle of more slack fits any kernel's operations
    if cap < 2:
        return None
    home = {v: group for group in groups for v in group}
    out: dict[int, list[tuple[int, int]]] = defaultdict(list)
    for (u, v), s in sorted(slack.items(), key=lambda item: (item[1], item[0])):
        if s <= cap:
            out[u].append((v, s))
    done = 0
    for start in range(problem.n):
        path, spent, on = [start], [0], {start}
        todo = [iter(out[start])]
        while todo:
            step = next(todo[-1], None)
            if step is None:
                todo.pop()
                on.discard(path.pop())
                spent.pop()
                continue
            done += 1
            if done > steps:
                return None
            v, s = step
            total = spent[-1] + s
            if total > cap or (v != start and (v < start or v in on)):
                continue
            if v == start:
                held = set(on).union(*(home.get(w, ()) for w in on))
                if total >= 2 and len(held) > total * ii:
                    return (f"C4 route: at II {ii} a recurrence with {total} spare cycles "
                            f"holds {len(held)} operations (with the groups that must share "
                            f"a PE with one of them), on at most {total} PEs, which have "
                            f"{total * ii} cycle slots")
                continue
            path.append(v)
            spent.append(total)
            on.add(v)
            todo.append(iter(out[v]))
    return None


def _within(out: dict[int, list[tuple[int, int]]], start: int, spare: int) -> set[int]:
    """The operations reached from ``start`` over the edges ``out`` (operation: successor
    and slack) whose slacks sum to at most ``spare``."""
    best = {start: 0}
    todo = deque([start])
    while todo:
        u = todo.popleft()
        for v, s in out[u]:
            if best[u] + s <= spare and best[u] + s < best.get(v, spare + 1):
                best[v] = best[u] + s
                todo.append(v)
    return set(best)


def slot_registers(problem: CgraProblem, ii: int) -> list[str]:
    """C5 at one II: an operation ``v`` reads its operands (one value per producer and
    iteration distance) from its PE's registers at its issue cycle; when its latency is a
    multiple of ``ii``, its own result of iteration ``i - latency / ii`` is written into the
    same PE's registers in that very cycle slot (it sits there at least the cycle it is born,
    if anything reads it). Both sets together (one value counted once: ``v`` reading its own
    result at that distance) must fit the PE's registers. At II 1 with latency 1 an operation
    with as many operands as registers that feeds anything never fits.

    >>> from hardware import CgraSpec
    >>> from model.graph import Graph, Node, Edge
    >>> g = Graph("w", [Node("a", op="LOAD"), Node("b", op="LOAD"), Node("s", op="ADD"),
    ...                 Node("o", op="STORE")], [Edge("a", "s"), Edge("b", "s"), Edge("s", "o")])
    >>> p = problem_from_graph(g, CgraSpec(name="c", rows=2, cols=2, registers=2))
    >>> slot_registers(p, 1), slot_registers(p, 2), lower_bounds(p)["ii"]
    (['C5 registers: at II 1 s reads 2 operands in the cycle slot its own result is written \
in: 3 values in one PE, which holds 2 (raise `registers` or accept II >= 2)'], [], 2)
    """
    operands: dict[int, set] = defaultdict(set)
    for u, v, d in problem.edges:
        operands[v].add((u, d))
    reasons = []
    for v in range(problem.n):
        if not problem.nets.get(v) or problem.latency[v] % ii:
            continue
        held = operands[v] | {(v, problem.latency[v] // ii)}
        if len(held) > problem.registers:
            reasons.append(f"C5 registers: at II {ii} {problem.names[v]} reads "
                           f"{len(operands[v])} operands in the cycle slot its own result is "
                           f"written in: {len(held)} values in one PE, which holds "
                           f"{problem.registers} (raise `registers` or accept II >= {ii + 1})")
    return reasons


def precheck(problem: CgraProblem) -> list[str]:
    """Rule violations visible before any search, each in the user's terms (empty if none).

    >>> from hardware import CgraSpec
    >>> from model.graph import Graph, Node
    >>> spec = CgraSpec(name="c", rows=2, cols=2, max_ii=2, operations=("ADD",))
    >>> precheck(problem_from_graph(Graph("g", [Node(f"n{i}", op="ADD") for i in range(9)]
    ...                                       + [Node("m", op="MUL")], []), spec))[0]
    'C3 operations: m (MUL) is not among the operations the PEs run (ADD)'
    """
    reasons = []
    for v in problem.unsupported:
        reasons.append(f"C3 operations: {problem.names[v]} ({problem.ops[v]}) is not among the "
                       f"operations the PEs run")
    if reasons:
        return [f"{r} ({', '.join(problem.operations)})" for r in reasons]
    bounds = lower_bounds(problem)
    if any(problem.memory) and not any(problem.allowed[v] for v in range(problem.n)
                                       if problem.memory[v]):
        reasons.append("C2 memory: the kernel has memory operations but no PE reaches memory")
    if bounds["res_ii"] > problem.max_ii:
        reasons.append(f"C1 slot: {problem.n} operations need II >= {bounds['res_ii']} on "
                       f"{problem.pe_count} PEs but II <= {problem.max_ii}")
    if bounds["mem_ii"] > problem.max_ii:
        reasons.append(f"C2 memory: {sum(problem.memory)} memory operations need II >= "
                       f"{bounds['mem_ii']} on the PEs that reach memory but II <= "
                       f"{problem.max_ii}")
    if bounds["rec_ii"] > problem.max_ii:
        reasons.append(f"C7 recurrence: a loop-carried cycle needs II >= {bounds['rec_ii']} "
                       f"but II <= {problem.max_ii}")
    elif bounds["ii"] <= problem.max_ii and tight_recurrences(problem, problem.max_ii):
        reasons.append(f"{tight_recurrences(problem, problem.max_ii)} (II <= {problem.max_ii})")
    return reasons + _operand_registers(problem)


def _operand_registers(problem: CgraProblem) -> list[str]:
    """C5: an operation reads every operand (one value per producer and iteration distance)
    from its own PE's registers at its issue cycle, so more distinct operands than registers
    never fit, at any II.

    >>> from hardware import CgraSpec
    >>> from model.graph import Graph, Node, Edge
    >>> g = Graph("wide", [Node(f"a{i}", op="LOAD") for i in range(3)] + [Node("s", op="STORE")],
    ...           [Edge(f"a{i}", "s") for i in range(3)])
    >>> _operand_registers(problem_from_graph(g, CgraSpec(name="c", rows=2, cols=2, registers=2)))
    ['C5 registers: s reads 3 distinct operands at its issue but a PE holds 2 values (raise \
`registers` in the hardware file)']
    """
    operands: dict[int, set] = defaultdict(set)
    for u, v, d in problem.edges:
        operands[v].add((u, d))
    return [f"C5 registers: {problem.names[v]} reads {len(operands[v])} distinct operands at its "
            f"issue but a PE holds {problem.registers} values (raise `registers` in the "
            f"hardware file)" for v in sorted(operands) if len(operands[v]) > problem.registers]


def hop_gap(ii: int) -> int:
    """Cycles a value needs at least between two operations at ``ii`` besides the producer's
    latency: 1 at II 1 (one cycle slot: every operation has a PE of its own, so a value read
    by another operation crosses at least one link, C1 + C4), else 0."""
    return 1 if ii == 1 else 0


def time_windows(problem: CgraProblem, ii: int, horizon: int
                 ) -> tuple[list[int], list[int]] | None:
    """Earliest and latest issue per operation at ``ii`` when every operation ends by
    ``horizon`` (difference constraints ``t_v + d II >= t_u + latency(u) + gap``, the gap
    :func:`hop_gap` between two operations, no other hops); None if they admit no schedule
    (at II 1 this also refutes a recurrence whose latencies and one hop per edge exceed its
    distances).

    >>> from hardware import load_hardware
    >>> from model.graph import Graph, Node, Edge
    >>> g = Graph("c", [Node("a"), Node("b")], [Edge("a", "b")])
    >>> p = problem_from_graph(g, load_hardware("cgra4x4"))
    >>> time_windows(p, 1, 4), time_windows(p, 2, 4)
    (([0, 2], [1, 3]), ([0, 1], [2, 3]))
    """
    lo = [0] * problem.n
    hi = [horizon - problem.latency[v] for v in range(problem.n)]
    gap = hop_gap(ii)
    for _ in range(problem.n + 2):
        changed = False
        for u, v, d in problem.edges:
            step = problem.latency[u] + (gap if u != v else 0) - d * ii
            need = lo[u] + step
            if need > lo[v]:
                lo[v], changed = need, True
            cap = hi[v] - step
            if cap < hi[u]:
                hi[u], changed = cap, True
        if any(lo[v] > hi[v] for v in range(problem.n)):
            return None
        if not changed:
            return lo, hi
    return None


def length_bound(problem: CgraProblem, ii: int) -> int | None:
    """A lower bound on the length of every mapping at ``ii``: the earliest issues of
    :func:`time_windows` (latencies, distances and, at II 1, one hop per edge) plus
    latencies; None when those constraints alone refute ``ii``.

    >>> from hardware import load_hardware
    >>> from model.graph import Graph, Node, Edge
    >>> g = Graph("c", [Node("a"), Node("b"), Node("c")], [Edge("a", "b"), Edge("b", "c")])
    >>> p = problem_from_graph(g, load_hardware("cgra4x4"))
    >>> length_bound(p, 1), length_bound(p, 2)
    (5, 3)
    """
    horizon = sum(problem.latency) + problem.n * (ii + 1) + ii
    windows = time_windows(problem, ii, horizon)
    if windows is None:
        return None
    return max((windows[0][v] + problem.latency[v] for v in range(problem.n)), default=0)


# ---------------------------------------------------------------------------------------------
# the answer
# ---------------------------------------------------------------------------------------------
@dataclass
class CgraSchedule:
    """A modulo mapping: per operation a PE index and an issue cycle, per edge a route.

    ``routes[(u, v, d)]`` (operation names) lists the ``(PE, cycle)`` steps of the value
    from ``(pe(u), issue(u) + latency(u))`` to ``(pe(v), issue(v) + d * II)``, one per
    cycle. ``status`` is ``"optimal"`` (II and length proven), ``"feasible"`` or
    ``"heuristic"``; ``proven_ii`` says every smaller II was proven impossible;
    ``ii_bound`` and ``bound`` are the best proven lower bounds on the II and on the length.
    """

    ii: int
    pe: dict[str, int]
    cycle: dict[str, int]
    latency: dict[str, int]
    routes: dict[tuple[str, str, int], list[Step]]
    method: str = ""
    status: str = "heuristic"
    proven_ii: bool = False
    ii_bound: int = 1
    bound: int | None = None
    results: list[SolveResult] = field(default_factory=list)
    seconds: float = 0.0
    notes: list[str] = field(default_factory=list)

    @property
    def length(self) -> int:
        """Cycles of one iteration: the last ``issue + latency``."""
        return max((self.cycle[n] + self.latency[n] for n in self.cycle), default=0)

    def slot(self, name: str) -> int:
        return self.cycle[name] % self.ii


def moved_onto(problem: CgraProblem, inner: CgraProblem, s: CgraSchedule, where: str
               ) -> CgraSchedule:
    """A mapping of ``inner`` (a corner of ``problem``'s fabric,
    :func:`~formulations.cgra.kernel.region_spec`) moved onto the whole fabric: the same PEs
    by row and column."""
    index = {rc: q for q, rc in enumerate(problem.pes)}
    to = [index[rc] for rc in inner.pes]
    return CgraSchedule(ii=s.ii, pe={n: to[p] for n, p in s.pe.items()}, cycle=dict(s.cycle),
                        latency=dict(s.latency),
                        routes={k: [(to[p], c) for p, c in path] for k, path in s.routes.items()},
                        method=f"{s.method} on {where}")
