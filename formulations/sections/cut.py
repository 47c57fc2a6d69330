"""Section cuts: split a graph too big for the chip into sections that fit.

A section is one chip configuration; sections run one after another and pass
data through DRAM. A valid cut is an ordered partition of the nodes whose
quotient graph is acyclic (a section reads only from earlier sections or
DRAM), where every section fits the target's unit counts and never mixes
categories (forward, backward, optimizer).

This module holds the greedy topological cut: the baseline and the warm start
of the section model (source 003). It walks a topological order that stays in
the current category while it can, and closes a section when the next node
would not fit. Contiguous runs of a topological order always have an acyclic
quotient.
"""

from __future__ import annotations

import bisect
import math
import time
from dataclasses import dataclass, field

import networkx as nx

from model.graph import Graph, Node

__all__ = ["Capacity", "Section", "SectionPlan", "SectionError", "unit_demand", "greedy_cut",
           "lower_bound", "cut_sections", "forced_traffic", "Scale", "scale_of", "cut_traffic", "edge_traffic", "build_section_model"]


class SectionError(Exception):
    """A node that cannot fit in any section on its own."""


@dataclass(frozen=True)
class Capacity:
    """Units one section may use: PCU sites, PMU sites, both together, AGCUs."""

    pcu: int
    pmu: int
    total: int
    agcu: int

    @classmethod
    def of_fabric(cls, fabric) -> "Capacity":
        units = [s for s in fabric.sites if s.unit != "agcu"]
        return cls(pcu=sum(fabric.can_host(s.id, "pcu") for s in units),
                   pmu=sum(fabric.can_host(s.id, "pmu") for s in units),
                   total=len(units), agcu=len(fabric.sites_of("agcu")))


@dataclass
class Section:
    """One section: its id, nodes in the cut order, and the units they need."""

    id: int
    nodes: list[str] = field(default_factory=list)
    category: str | None = None
    pcu: float = 0.0
    pmu: float = 0.0
    any: float = 0.0
    agcu: float = 0.0

    def fits_with(self, demand: dict[str, float], cap: Capacity, scale: "Scale" = 1.0) -> bool:
        pcu, pmu = self.pcu + demand["pcu"], self.pmu + demand["pmu"]
        flexible = self.any + demand["any"]
        return (scale_of(scale, "pcu") * pcu <= cap.pcu
                and scale_of(scale, "pmu") * pmu <= cap.pmu
                and scale_of(scale, "units") * (pcu + pmu + flexible) <= cap.total
                and self.agcu + demand["agcu"] <= cap.agcu)

    def add(self, node_id: str, demand: dict[str, float]) -> None:
        self.nodes.append(node_id)
        for key in ("pcu", "pmu", "any", "agcu"):
            setattr(self, key, getattr(self, key) + demand[key])


#: A resource scale factor: one number for every resource, or one per resource
#: (``{"pcu": s, "pmu": s, "units": s}``; a missing key means 1.0). The cutter
#: plans a section as if its estimates were ``scale`` times larger.
Scale = float | dict[str, float]


def scale_of(scale: Scale, resource: str) -> float:
    """The factor ``scale`` applies to ``resource`` ("pcu", "pmu" or "units").

    Examples
    --------
    >>> scale_of(1.5, "pmu"), scale_of({"pmu": 2.0}, "pmu"), scale_of({"pmu": 2.0}, "pcu")
    (1.5, 2.0, 1.0)
    """
    if isinstance(scale, (int, float)):
        return float(scale)
    return float(scale.get(resource, 1.0))


def _smallest_scale(scales: dict[int, Scale]) -> float:
    return min([1.0] + [scale_of(s, r) for s in scales.values() for r in ("pcu", "pmu", "units")])


def unit_demand(node: Node) -> dict[str, float]:
    """Units a node needs: its ``pcu``/``pmu`` estimates, else one unit of its kind.

    Examples
    --------
    >>> unit_demand(Node("a", unit="pmu"))
    {'pcu': 0.0, 'pmu': 1.0, 'any': 0.0, 'agcu': 0.0}
    >>> unit_demand(Node("b", pcu=2, pmu=1))
    {'pcu': 2.0, 'pmu': 1.0, 'any': 0.0, 'agcu': 0.0}
    """
    demand = {"pcu": 0.0, "pmu": 0.0, "any": 0.0, "agcu": 0.0}
    if node.pcu is not None or node.pmu is not None:
        demand["pcu"], demand["pmu"] = float(node.pcu or 0), float(node.pmu or 0)
    else:
        demand[node.unit] = 1.0
    return demand


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
    >>> from model.graph import Edge
    >>> g = Graph("chain", [Node(f"n{i}", unit="pcu") for i in range(5)],
    ...           [Edge(f"n{i}", f"n{i+1}") for i in range(4)])
    >>> [s.nodes for s in greedy_cut(g, Capacity(pcu=2, pmu=2, total=4, agcu=4))]
    [['n0', 'n1'], ['n2', 'n3'], ['n4']]
    """
    every_section = {k: scale for k in range(len(graph.nodes) + 1)}   # at most one per node
    return _greedy_with_scales(graph, cap, every_section, [])


def _category_topological_order(graph: Graph) -> list[str]:
    """Kahn's algorithm preferring ready nodes of the category being filled.

    Staying in one category while possible keeps forward and backward nodes
    apart without extra sections; ties go to file order (deterministic).
    """
    position = {n: k for k, n in enumerate(graph.node_ids)}
    dag = nx.DiGraph()
    dag.add_nodes_from(graph.node_ids)
    dag.add_edges_from((e.src, e.dst) for e in graph.edges if not e.loop_carried)
    indegree = {n: dag.in_degree(n) for n in dag}
    ready = {n for n, d in indegree.items() if d == 0}
    order: list[str] = []
    category = None
    while ready:
        same = [n for n in ready if graph.node(n).category == category]
        pick = min(same or ready, key=position.__getitem__)
        ready.remove(pick)
        order.append(pick)
        category = graph.node(pick).category
        for succ in dag.successors(pick):
            indegree[succ] -= 1
            if indegree[succ] == 0:
                ready.add(succ)
    return order


# ---------------------------------------------------------------------------------------------
# The section model (source 003 gives none; DESIGN.md fixes the objective)
# ---------------------------------------------------------------------------------------------
@dataclass
class SectionPlan:
    """A cut: sections in order, with the bound, the baseline and the solver's word."""

    sections: list[Section]
    lower_bound: int
    greedy_sections: int
    greedy_traffic: float
    traffic: float
    method: str
    status: str = "FEASIBLE"
    bound_traffic: float | None = None
    results: list = field(default_factory=list)     # SolveResult of every model solved

    @property
    def count(self) -> int:
        return len(self.sections)


def edge_traffic(edge) -> float:
    """DRAM bytes an edge costs when it crosses a cut: stored once and loaded once.

    ``bytes`` when the graph gives it, else the relative bandwidth.
    """
    return float(edge.bytes) if edge.bytes is not None else float(edge.bandwidth)


def cut_traffic(graph: Graph, sections: list[Section]) -> float:
    """DRAM bytes of every edge whose ends lie in different sections."""
    where = {n: s.id for s in sections for n in s.nodes}
    return sum(edge_traffic(e) for e in graph.edges
               if e.src in where and e.dst in where and where[e.src] != where[e.dst])


def lower_bound(graph: Graph, cap: Capacity, scale: float = 1.0) -> int:
    """Fewest sections any cut needs: per category, the largest resource ratio.

    ``max(ΣPCU/PCU capacity, ΣPMU/PMU capacity, Σunits/units, ΣAGCU/AGCUs)``
    rounded up, summed over categories (sections never mix them).

    Examples
    --------
    >>> g = Graph("g", [Node(f"n{i}", unit="pcu") for i in range(5)], [])
    >>> lower_bound(g, Capacity(pcu=2, pmu=2, total=4, agcu=0))
    3
    """
    totals: dict[str | None, dict[str, float]] = {}
    for node in graph.nodes:
        t = totals.setdefault(node.category, {"pcu": 0.0, "pmu": 0.0, "any": 0.0, "agcu": 0.0})
        for key, value in unit_demand(node).items():
            t[key] += value
    bound = 0
    for t in totals.values():
        ratios = [scale * t["pcu"] / max(cap.pcu, 1e-9), scale * t["pmu"] / max(cap.pmu, 1e-9),
                  scale * (t["pcu"] + t["pmu"] + t["any"]) / max(cap.total, 1e-9)]
        if t["agcu"]:
            ratios.append(t["agcu"] / max(cap.agcu, 1e-9))
        bound += max(1, math.ceil(max(ratios) - 1e-9))
    return bound


def cut_sections(graph: Graph, cap: Capacity, scales: dict[int, Scale] | None = None, *,
                 separate: list[tuple[str, str]] = (), backend: str = "cp-sat",
                 time_limit: float = 60.0, seed: int = 0, export_dir: str | None = None,
                 first_id: int = 0) -> SectionPlan:
    """Cut ``graph`` into the fewest sections, then the least DRAM traffic.

    The greedy topological cut is the baseline and the warm start. The model
    (:func:`build_section_model`) is tried for every section count from the
    lower bound up to one below the greedy count (fewest sections), then with
    the chosen count it minimises the bytes crossing cuts, hinted with the best
    cut known. Within ``time_limit`` the answer is never worse than greedy.

    Parameters
    ----------
    graph : the nodes to cut (loop-carried edges impose no order).
    cap : units one section may use.
    scales : resource scale factor per section position (default 1.0), a
        number or one per resource (:data:`Scale`).
    separate : node pairs that must land in different sections (a moved
        boundary: the later node goes to a later section).
    backend, time_limit, seed : the solver and its budget (seconds in all).
    export_dir : when given, every model is written there as ``.mps``.
    first_id : the id of the first section (sections are numbered on from it).
    """
    scales = dict(scales or {})
    started = time.perf_counter()
    greedy = _greedy_with_scales(graph, cap, scales, separate)
    greedy_traffic = cut_traffic(graph, greedy)
    bound = lower_bound(graph, cap, _smallest_scale(scales))
    plan = SectionPlan(greedy, bound, len(greedy), greedy_traffic, greedy_traffic,
                       "greedy topological cut")
    if len(graph.nodes) <= 1 or backend in SOLVERLESS:
        plan.bound_traffic = forced_traffic(graph, cap, plan.count, scales)
        return _numbered(plan, first_id)
    best = _as_assignment(greedy)
    for count in range(bound, len(greedy)):
        remaining = time_limit - (time.perf_counter() - started)
        if remaining < 0.5:
            break
        model, x, _ = build_section_model(graph, cap, count, scales, separate)
        _export(model, export_dir, f"sections_k{count}")
        result = model.solve(backend=backend, time_limit=remaining / 2, seed=seed)
        plan.results.append(result)
        if result.has_solution:
            best = _decode(graph, x, count, result)
            break
        if result.status.name != "INFEASIBLE":
            break      # unknown within the budget: keep the greedy count
    count = len(set(best.values()))
    remaining = time_limit - (time.perf_counter() - started)
    if remaining >= 0.5 and len(graph.nodes) * count <= MONOLITHIC_LIMIT:
        model, x, hint_for = build_section_model(graph, cap, count, scales, separate)
        _export(model, export_dir, f"sections_traffic_k{count}")
        model.set_hint(hint_for(best))
        result = model.solve(backend=backend, time_limit=remaining, seed=seed)
        plan.results.append(result)
        if result.has_solution:
            best = _decode(graph, x, count, result)
            plan.status = result.status.name
            if result.bound is not None:
                plan.bound_traffic = model.bytes_of_bound(result.bound)
    elif remaining >= 0.5:
        best = _window_search(graph, cap, best, scales, separate, backend, seed,
                              started + time_limit, plan)
    plan.sections = _sections_from(graph, best)
    plan.traffic = cut_traffic(graph, plan.sections)
    if plan.traffic > greedy_traffic or len(plan.sections) > len(greedy):
        plan.sections, plan.traffic, plan.status = greedy, greedy_traffic, "FEASIBLE"
    else:
        plan.method = "section model"
    forced = forced_traffic(graph, cap, plan.count, scales)
    proven = plan.traffic if plan.status == "OPTIMAL" else 0.0
    plan.bound_traffic = max(plan.bound_traffic or 0.0, forced, proven)
    if plan.traffic <= plan.bound_traffic + 1e-9 * max(1.0, plan.traffic):
        plan.status = "OPTIMAL"
    return _numbered(plan, first_id)


def forced_traffic(graph: Graph, cap: Capacity, count: int,
                   scales: dict[int, Scale] | None = None) -> float:
    """DRAM bytes every cut into ``count`` sections pays: a lower bound on traffic.

    An edge crosses a cut in every valid cut when its ends have different
    categories (a section never mixes them), or when no section is reachable
    by both ends (:func:`_section_windows`; the quotient order then forces
    them apart).

    Examples
    --------
    >>> from model.graph import Edge
    >>> g = Graph("g", [Node("f", unit="pcu", category="forward"),
    ...                 Node("b", unit="pcu", category="backward")], [Edge("f", "b", bytes=8)])
    >>> forced_traffic(g, Capacity(pcu=4, pmu=4, total=8, agcu=0), 2)
    8.0
    """
    windows = _section_windows(graph, cap, count, dict(scales or {}))
    return sum(edge_traffic(e) for e in graph.edges
               if e.src != e.dst and (graph.node(e.src).category != graph.node(e.dst).category
                                      or not set(windows[e.src]) & set(windows[e.dst])))


#: Above this many node-section pairs the traffic phase re-optimises windows of
#: consecutive sections (large-neighbourhood search) instead of one model.
MONOLITHIC_LIMIT = 6000
#: Sections per window of the large-neighbourhood search.
WINDOW = 5


def _window_search(graph: Graph, cap: Capacity, assignment: dict[str, int],
                   scales: dict[int, Scale], separate, backend: str, seed: int,
                   deadline: float, plan: SectionPlan) -> dict[str, int]:
    """Re-cut windows of consecutive sections with the rest fixed, until the deadline.

    Nodes outside a window keep their section, so every edge leaving the
    window stays legal whatever the window's cut; only edges inside it change
    traffic. Sweeps overlapping windows of WINDOW sections left to right; when
    a sweep improves nothing, the windows grow by two sections (a larger
    neighbourhood), and shrink back after the next improvement.
    """
    count = len(set(assignment.values()))
    size = min(WINDOW, count)
    plan.status = "FEASIBLE"
    while time.perf_counter() < deadline - 0.5:
        improved, proven = _sweep(graph, cap, assignment, scales, separate, backend, seed,
                                  deadline, plan, size)
        if proven:                          # the one window was the whole model, solved
            plan.status = "OPTIMAL"
            break
        if improved:
            size = min(WINDOW, count)
        elif size >= count:
            break
        else:
            size = min(size + 2, count)
    return assignment


def _sweep(graph: Graph, cap: Capacity, assignment: dict[str, int], scales: dict[int, Scale],
           separate, backend: str, seed: int, deadline: float, plan: SectionPlan,
           size: int) -> tuple[bool, bool]:
    """One left-to-right pass of windows of ``size`` sections.

    Returns whether any window improved, and whether the cut is proven optimal
    (the window spanned every section and its model was solved to optimality).
    """
    count = len(set(assignment.values()))
    improved = proven = False
    for first in range(0, max(1, count - size + 1), max(1, size - 1)):
        remaining = deadline - time.perf_counter()
        if remaining < 0.5:
            break
        window = [v for v in graph.node_ids if first <= assignment[v] < first + size]
        sub = graph.subgraph(window)
        local = {v: assignment[v] - first for v in window}
        span = len(set(local.values()))
        model, x, hint_for = build_section_model(
            sub, cap, span, {k - first: s for k, s in scales.items()},
            [(a, b) for a, b in separate if a in local and b in local])
        model.set_hint(hint_for(local))
        whole = span == count          # the whole model: worth all the time left
        result = model.solve(backend=backend, seed=seed, time_limit=remaining if whole
                             else min(remaining, WINDOW_SECONDS * size / WINDOW))
        plan.results.append(result)
        if not result.has_solution:
            continue
        proven = whole and result.status.name == "OPTIMAL"
        new = _decode(sub, x, span, result)
        before = cut_traffic(sub, _sections_from(sub, local))
        after = cut_traffic(sub, _sections_from(sub, new))
        if after < before - 1e-9:
            for v in window:
                assignment[v] = new[v] + first
            improved = True
    return improved, proven


#: Seconds per window model.
WINDOW_SECONDS = 5.0


#: Backend names that ask for the greedy cut alone.
SOLVERLESS = ("greedy", "none")


def build_section_model(graph: Graph, cap: Capacity, count: int, scales: dict[int, Scale],
                        separate: list[tuple[str, str]] = ()):
    """The section model with ``count`` ordered sections, as a LinearModel.

    Data: unit demands per node, capacities per section (``cap / scale``).
    Variables: ``x[v][k] = 1`` when node v is in section k (only for the
    sections v can reach given its ancestors' and descendants' demands), a
    category flag per section, a crossing flag per edge.
    Constraints (families): ``assignment`` (each node in one section),
    ``order`` (an edge never goes back to an earlier section: the quotient is
    acyclic), ``capacity`` (PCU, PMU, all units, AGCUs per section),
    ``category`` (one category per section), ``boundary`` (separated pairs),
    ``traffic`` (an edge whose ends differ crosses a cut).
    Objective: bytes crossing cuts.

    Returns
    -------
    model, x, hint_for : the LinearModel, ``x[node][section] -> Var``, and a
        function turning an assignment ``node -> section`` into a complete hint.
    """
    from formulations.solver import LinearModel

    model = LinearModel(f"sections_{graph.name}_{count}")
    windows = _section_windows(graph, cap, count, scales)
    x = {v: {k: model.add_binary(f"x[{i},{k}]") for k in windows[v]}
         for i, v in enumerate(graph.node_ids)}
    position = {v: ([x[v][k] for k in x[v]], [float(k) for k in x[v]]) for v in x}
    for i, v in enumerate(graph.node_ids):
        model.add_row(list(x[v].values()), [1.0] * len(x[v]), 1, 1, name=f"assign[{i}]",
                      family="assignment")
    for j, e in enumerate(graph.edges):
        if not e.loop_carried and e.src != e.dst:
            _add_order(model, position, e.src, e.dst, 0.0, f"order[{j}]", "order")
    for j, (a, b) in enumerate(separate):
        _add_order(model, position, a, b, 1.0, f"boundary[{j}]", "boundary")
    _add_capacities(model, graph, x, cap, count, scales)
    flags = _add_categories(model, graph, x, count)
    crossing = []
    for j, e in enumerate(graph.edges):
        if e.src == e.dst:
            continue
        z = model.add_binary(f"cross[{j}]")
        crossing.append((z, edge_traffic(e), e))
        for k in set(x[e.src]) | set(x[e.dst]):
            coefs = [(z, 1.0)] + ([(x[e.dst][k], -1.0)] if k in x[e.dst] else []) \
                + ([(x[e.src][k], 1.0)] if k in x[e.src] else [])
            model.add_row([c[0] for c in coefs], [c[1] for c in coefs], lb=0,
                          name=f"traffic[{j},{k}]", family="traffic")
    scale = max((t for _, t, _ in crossing), default=1.0) or 1.0
    model.minimize(sum(round(t / scale * 1e6) * z for z, t, _ in crossing) if crossing else 0)
    # objective units -> bytes; each rounded coefficient is off by at most half a unit
    model.bytes_of_bound = lambda bound: max(0.0, bound - 0.5 * len(crossing)) * scale / 1e6

    def hint_for(assignment: dict[str, int]) -> dict:
        hint = {x[v][k]: float(assignment[v] == k) for v in x for k in x[v]}
        hint |= {z: float(assignment[e.src] != assignment[e.dst]) for z, _, e in crossing}
        used = {(assignment[v], graph.node(v).category) for v in x}
        hint |= {flag: float(key in used) for key, flag in flags.items()}
        return hint

    return model, x, hint_for


def _add_order(model, position, a: str, b: str, gap: float, name: str, family: str) -> None:
    """section(b) - section(a) >= gap."""
    vb, kb = position[b]
    va, ka = position[a]
    model.add_row(vb + va, kb + [-k for k in ka], lb=gap, name=name, family=family)


def _add_capacities(model, graph: Graph, x, cap: Capacity, count: int,
                    scales: dict[int, Scale]) -> None:
    demand = {v: unit_demand(graph.node(v)) for v in x}
    limits = {"pcu": (("pcu",), cap.pcu), "pmu": (("pmu",), cap.pmu),
              "units": (("pcu", "pmu", "any"), cap.total), "agcu": (("agcu",), cap.agcu)}
    for k in range(count):
        scale = scales.get(k, 1.0)
        for label, (keys, limit) in limits.items():
            terms = [(x[v][k], sum(demand[v][key] for key in keys)) for v in x if k in x[v]]
            terms = [(var, c) for var, c in terms if c]
            if terms:
                bound = limit if label == "agcu" else limit / scale_of(scale, label)
                model.add_row([t[0] for t in terms], [t[1] for t in terms], ub=bound,
                              name=f"{label}_capacity[{k}]", family="capacity")


def _add_categories(model, graph: Graph, x, count: int) -> dict:
    """One category per section; returns the flags by (section, category)."""
    groups: dict[str | None, list[str]] = {}
    for node in graph.nodes:
        groups.setdefault(node.category, []).append(node.id)
    by_key: dict = {}
    if len(groups) < 2:
        return by_key
    for k in range(count):
        flags = []
        for c, (category, members) in enumerate(groups.items()):
            inside = [x[v][k] for v in members if k in x[v]]
            if not inside:
                continue
            flag = model.add_binary(f"category[{k},{c}]")
            flags.append(flag)
            by_key[(k, category)] = flag
            model.add_row(inside + [flag], [1.0] * len(inside) + [-float(len(inside))], ub=0,
                          name=f"category_use[{k},{c}]", family="category")
        if len(flags) > 1:
            model.add_row(flags, [1.0] * len(flags), ub=1, name=f"one_category[{k}]",
                          family="category")
    return by_key


def _section_windows(graph: Graph, cap: Capacity, count: int,
                     scales: dict[int, Scale]) -> dict[str, list[int]]:
    """Sections each node can reach: its ancestors must fit before it, its descendants after.

    With the loosest capacity (the smallest scale), a node whose ancestors
    (itself included) need ``a`` units of a kind cannot sit before section
    ``ceil(a / cap) - 1``; likewise for descendants from the end. Valid for any
    cut, so it shrinks the model without losing optima.
    """
    order = graph.topological_order()
    pos = {v: i for i, v in enumerate(order)}
    preds = {v: [pos[p] for p in graph.predecessors(v) if _same_iteration(graph, p, v)]
             for v in order}
    succs = {v: [pos[s] for s in graph.successors(v) if _same_iteration(graph, v, s)]
             for v in order}
    loosest = _smallest_scale(scales)
    kinds = [("pcu", cap.pcu), ("pmu", cap.pmu)]
    masks = {kind: 0 for kind, _ in kinds}
    for v in order:
        d = unit_demand(graph.node(v))
        for kind, _ in kinds:
            if d[kind] >= 1:
                masks[kind] |= 1 << pos[v]
    anc = _closure(order, preds, pos)
    desc = _closure(order[::-1], succs, pos)
    windows = {}
    for v in order:
        first = max([0] + [math.ceil(loosest * (anc[v] & masks[k]).bit_count() / c) - 1
                           for k, c in kinds if c])
        last = min([count - 1] + [count - math.ceil(loosest * (desc[v] & masks[k]).bit_count() / c)
                                  for k, c in kinds if c])
        windows[v] = list(range(first, last + 1)) or list(range(count))
    return windows


def _same_iteration(graph: Graph, a: str, b: str) -> bool:
    return any(not graph.edges[i].loop_carried and graph.edges[i].dst == b
               for i in graph.out_edges(a))


def _closure(order: list[str], parents: dict[str, list[int]], pos: dict[str, int]) -> dict[str, int]:
    """Bitset of each node and everything before it along ``parents`` (in ``order``)."""
    by_pos = {pos[v]: v for v in order}
    closure: dict[str, int] = {}
    for v in order:
        bits = 1 << pos[v]
        for p in parents[v]:
            bits |= closure[by_pos[p]]
        closure[v] = bits
    return closure


def _decode(graph: Graph, x, count: int, result) -> dict[str, int]:
    return {v: max(x[v], key=lambda k: result.value(x[v][k])) for v in x}


def _as_assignment(sections: list[Section]) -> dict[str, int]:
    return {n: k for k, s in enumerate(sections) for n in s.nodes}


def _sections_from(graph: Graph, assignment: dict[str, int]) -> list[Section]:
    """Sections in order (empty ones dropped), nodes in topological order."""
    used = sorted(set(assignment.values()))
    sections = [Section(k) for k in range(len(used))]
    rank = {k: i for i, k in enumerate(used)}
    for v in graph.topological_order():
        s = sections[rank[assignment[v]]]
        s.category = graph.node(v).category
        s.add(v, unit_demand(graph.node(v)))
    return sections


def _numbered(plan: SectionPlan, first_id: int) -> SectionPlan:
    for k, s in enumerate(plan.sections):
        s.id = first_id + k
    return plan


def _export(model, export_dir: str | None, stem: str) -> None:
    if export_dir:
        from pathlib import Path
        Path(export_dir).mkdir(parents=True, exist_ok=True)
        model.write_mps(str(Path(export_dir) / f"{model.name}_{stem}.mps"))


def _greedy_with_scales(graph: Graph, cap: Capacity, scales: dict[int, Scale],
                        separate: list[tuple[str, str]]) -> list[Section]:
    """List scheduling into sections: fill each with ready nodes that still fit.

    Ready nodes (all same-iteration predecessors placed) are tried in
    topological-position order, those of the section's category first; the
    first one that fits joins the section. When none fits, the section closes.
    Filling past a node that does not fit (a PMU node when PCUs are full) packs
    sections tighter than cutting a fixed order. ``separate`` pairs (a, b) keep
    b out of a's section.
    """
    position = _schedule_priority(graph)
    apart = {}
    for a, b in separate:
        apart.setdefault(b, set()).add(a)
    dag = nx.DiGraph()
    dag.add_nodes_from(graph.node_ids)
    dag.add_edges_from((e.src, e.dst) for e in graph.edges if not e.loop_carried)
    waiting = {n: dag.in_degree(n) for n in dag}
    ready = sorted((n for n, d in waiting.items() if d == 0), key=position.__getitem__)
    demand = {n: unit_demand(graph.node(n)) for n in graph.node_ids}
    sections = [Section(0)]
    while ready:
        current = sections[-1]
        scale = scales.get(current.id, 1.0)
        pick = _first_fitting(graph, ready, current, demand, cap, scale, apart)
        if pick is None:
            if not current.nodes:
                node_id = ready[0]
                raise SectionError(f'node "{node_id}" needs {_units(demand[node_id])}, more than '
                                   f"one section offers ({_units_cap(cap)}) at scale {scale}")
            sections.append(Section(len(sections)))
            continue
        ready.remove(pick)
        current.category = graph.node(pick).category
        current.add(pick, demand[pick])
        for succ in dag.successors(pick):
            waiting[succ] -= 1
            if waiting[succ] == 0:
                bisect.insort(ready, succ, key=position.__getitem__)
    return sections


def _schedule_priority(graph: Graph) -> dict[str, float]:
    """Position in a category-aware topological order; a source hugs its first consumer.

    Sources (weights, inputs) are all ready at the start; scheduling them by
    their own position would fill the first sections with memory alone.
    """
    position: dict[str, float] = {n: k for k, n in enumerate(_category_topological_order(graph))}
    for node_id in graph.node_ids:
        if not any(not graph.edges[i].loop_carried for i in graph.in_edges(node_id)):
            consumers = [position[s] for s in graph.successors(node_id) if s != node_id]
            if consumers:
                position[node_id] = min(consumers) - 0.5
    return position


def _first_fitting(graph: Graph, ready: list[str], current: Section, demand, cap: Capacity,
                   scale: Scale, apart: dict[str, set[str]]) -> str | None:
    """The first ready node (current category first) that fits ``current``."""
    members = set(current.nodes)
    for same_category_pass in (True, False):
        if not same_category_pass and current.nodes:
            return None            # a section never mixes categories
        for node_id in ready:
            if same_category_pass and current.nodes and \
                    graph.node(node_id).category != current.category:
                continue
            if apart.get(node_id, set()) & members:
                continue
            if current.fits_with(demand[node_id], cap, scale):
                return node_id
    return None


def _units(demand: dict[str, float]) -> str:
    return ", ".join(f"{v:g} {k.upper()}" for k, v in demand.items() if v) or "no units"


def _units_cap(cap: Capacity) -> str:
    return f"{cap.pcu} PCU, {cap.pmu} PMU, {cap.total} units, {cap.agcu} AGCU"
