"""The section model (source 003 gives none; DESIGN.md fixes the objective).

:func:`build_section_model` reads top to bottom: data (unit demands, the sections
each node can reach: :func:`section_windows`) → variables (``x[node][section]``,
category flags, crossing flags) → constraints (``assignment``, ``order``,
``boundary``, ``capacity``, ``category``, ``traffic``) → objective (bytes crossing
cuts). :func:`solve_section_model` solves it under the run's
:class:`~formulations.solver.SolveSettings` (exporting it first when asked) and
:func:`decode_assignment` reads the cut back. :func:`forced_traffic` is the traffic
every cut pays, a lower bound from the same windows.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Callable

from formulations.sections.costs import CutCosts, cut_nets, net_sections
from formulations.sections.problem import (BufferDemand, Capacity, Scale, buffer_nets,
                                           edge_traffic, loosest_scale, unit_demand, scale_of)
from formulations.solver import Budget, LinearModel, SolveSettings, solve_planned
from model.graph import Graph

__all__ = ["build_section_model", "solve_section_model", "decode_assignment",
           "section_windows", "forced_traffic"]


def build_section_model(graph: Graph, cap: Capacity, count: int, scales: dict[int, Scale],
                        separate: list[tuple[str, str]] = (),
                        buffers: BufferDemand | None = None, costs: CutCosts | None = None,
                        pack: bool = False):
    """The section model with ``count`` ordered sections, as a LinearModel.

    Data: unit demands per node, capacities per section (``cap / scale``), the
    stage-buffer PMUs of each edge whose ends share a section (``buffers``).
    Variables: ``x[v][k] = 1`` when node v is in section k (only for the
    sections v can reach given its ancestors' and descendants' demands), a
    category flag per section, a crossing flag per edge, and per buffered net
    and section the PMUs of its buffer chain there (``w[n][k]``).
    Constraints (families): ``assignment`` (each node in one section),
    ``order`` (an edge never goes back to an earlier section: the quotient is
    acyclic), ``capacity`` (PCU, PMU + buffer PMUs, all units, AGCUs per
    section), ``buffers`` (a net's chain in section k is at least as deep as
    each sink in k with its driver asks: ``w >= p (x[u][k] + x[v][k] - 1)``),
    ``category`` (one category per section), ``boundary`` (separated pairs),
    ``traffic`` (an edge whose ends differ crosses a cut).
    Objective: bytes crossing cuts; with ``costs``, the cut's time per sample
    (:mod:`formulations.sections.costs`: per section ``T[k]`` at least each of its
    stages and its DRAM cycles, families ``makespan`` and ``dram``), the bytes
    crossing cuts only as a tie-break; with ``pack`` (and no ``costs``), the units in the
    last sections, weighted by their position (:func:`_set_packing`: the cut leaves its
    last sections light), the bytes a tie-break.

    Returns
    -------
    model, x, hint_for : the LinearModel, ``x[node][section] -> Var``, and a
        function turning an assignment ``node -> section`` into a complete hint.
    """
    model = LinearModel(f"sections_{graph.name}_{count}")
    windows = section_windows(graph, cap, count, scales)
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
    nets = buffer_nets(graph, buffers)
    chains = _add_buffer_chains(model, nets, x)
    _add_capacities(model, graph, x, cap, count, scales, chains)
    flags = _add_categories(model, graph, x, count)
    crossing = _add_crossings(model, graph, x)
    makespan_hint = (_set_packing(model, graph, x, count, crossing) if pack and costs is None
                     else _set_objective(model, graph, x, count, crossing, costs))

    def hint_for(assignment: dict[str, int]) -> dict:
        hint = {x[v][k]: float(assignment[v] == k) for v in x for k in x[v]}
        hint |= {z: float(assignment[e.src] != assignment[e.dst]) for z, _, e in crossing}
        used = {(assignment[v], graph.node(v).category) for v in x}
        hint |= {flag: float(key in used) for key, flag in flags.items()}
        for (n, k), w in chains.items():
            inside = {v for v in (nets[n].driver, *(t for t, _ in nets[n].sinks))
                      if assignment[v] == k}
            hint[w] = nets[n].pmus_in(inside)
        return hint | makespan_hint(assignment)

    return model, x, hint_for


def _add_order(model, position, a: str, b: str, gap: float, name: str, family: str) -> None:
    """section(b) - section(a) >= gap."""
    vb, kb = position[b]
    va, ka = position[a]
    model.add_row(vb + va, kb + [-k for k in ka], lb=gap, name=name, family=family)


def _add_crossings(model, graph: Graph, x) -> list:
    """A flag per edge that is 1 when its ends lie in different sections: (flag, bytes,
    edge) of each."""
    crossing = []
    for j, e in enumerate(graph.edges):
        if e.src == e.dst:
            continue
        z = model.add_binary(f"cross[{j}]")
        crossing.append((z, edge_traffic(e), e))
        for k in sorted(set(x[e.src]) | set(x[e.dst])):
            coefs = [(z, 1.0)] + ([(x[e.dst][k], -1.0)] if k in x[e.dst] else []) \
                + ([(x[e.src][k], 1.0)] if k in x[e.src] else [])
            model.add_row([c[0] for c in coefs], [c[1] for c in coefs], lb=0,
                          name=f"traffic[{j},{k}]", family="traffic")
    return crossing


def _set_objective(model, graph: Graph, x, count: int, crossing: list,
                   costs: CutCosts | None) -> Callable[[dict[str, int]], dict]:
    """Bytes across cuts, or with ``costs`` the time per sample (bytes a tie-break);
    returns the hint of the time's variables for a cut."""
    scale = max((t for _, t, _ in crossing), default=1.0) or 1.0
    if costs is None:
        model.minimize(sum(round(t / scale * 1e6) * z for z, t, _ in crossing) if crossing else 0)
        # objective units -> bytes; each rounded coefficient is off by at most half a unit
        model.bytes_of_bound = lambda bound: max(0.0, bound - 0.5 * len(crossing)) * scale / 1e6
        return lambda assignment: {}
    makespans, makespan_hint = _add_makespans(model, graph, x, count, costs)
    tie_break = sum(round(t / scale * TIE_BREAK) * z for z, t, _ in crossing)
    model.minimize(TIME_WEIGHT * sum(makespans.values()) + tie_break)
    model.bytes_of_bound = lambda bound: None      # a bound on time, not on bytes
    return makespan_hint


def _set_packing(model, graph: Graph, x, count: int, crossing: list
                 ) -> Callable[[dict[str, int]], dict]:
    """Minimise the units (each node at least 1) in the last :data:`PACKED_TAIL` sections,
    weighted by their position, bytes across cuts a tie-break worth less than one unit:
    the count-reducing step (:meth:`formulations.sections.cut._Cutter.pack_sweep`) moves
    work out of a window's last sections so that its last one empties, where a question
    of fewer sections alone answers only no while a section is short of room.

    Only the tail is weighted: the room that travels is the last section's (the next
    window's first), and the one before it lets a window empty two. Weighting every
    section also asks for an order among the first ones that no later window needs, and
    proving it is what took the time: on bert_L-12 training's forward run (13 sections,
    windows of 4) the first two windows then ran to their plan of 1 planned s, 0.53 and
    0.56 s, gaps 10 and 3 %; with the tail alone every window is proven optimal, the
    first two in 0.45 and 0.33 s, and the first sweep still empties two sections (its
    four windows: 1.37 s instead of 1.67)."""
    scale = max((t for _, t, _ in crossing), default=1.0) or 1.0
    units = {v: sum(unit_demand(graph.node(v))[key] for key in ("pcu", "pmu", "any")) for v in x}
    weight = PACK_UNIT * (len(crossing) + 1)      # one unit outweighs every tie-break
    position = {k: max(0, k - (count - 1 - PACKED_TAIL)) for k in range(count)}
    model.minimize(sum(weight * max(1, round(units[v])) * position[k] * x[v][k]
                       for v in x for k in x[v] if position[k])
                   + sum(round(t / scale * PACK_UNIT) * z for z, t, _ in crossing))
    model.bytes_of_bound = lambda bound: None
    return lambda assignment: {}


#: The last sections of a packing window whose units its objective counts
#: (:func:`_set_packing`).
PACKED_TAIL = 2
#: Objective units of the largest edge in the packing objective's tie-break.
PACK_UNIT = 10


#: Time resolution of the objective: the slowest stage is this many units.
TIME_UNITS = 1000
#: Objective weight of one time unit, and of the largest edge crossing a cut (a tie-break:
#: bytes that no section's DRAM time feels cost a hundredth as much as a unit of time).
TIME_WEIGHT = 100
TIE_BREAK = 1


def _add_makespans(model, graph: Graph, x, count: int, costs: CutCosts):
    """Per section ``T[k]``, in units of the slowest stage / :data:`TIME_UNITS`: at least
    each stage in it (:func:`_add_stages`) and its DRAM cycles (per net,
    :func:`_add_net_traffic`). Returns ``T`` by section and a function giving these
    variables' values for a cut (a hint)."""
    unit = max(map(costs.slowest, x), default=1.0) / TIME_UNITS or 1.0
    makespans = {k: model.add_var(f"T[{k}]", 0.0, 0.0, integer=True) for k in range(count)}
    stage_of = _add_stages(model, x, costs, unit, makespans)
    moved = _add_net_traffic(model, graph, x, costs, costs.dram_per_byte / unit)
    dram: dict[int, list[tuple[object, float]]] = {k: [] for k in range(count)}
    for _, k, d, weight in moved:
        dram[k].append((d, weight))
    top = max([TIME_UNITS, *(math.ceil(costs.slowest(v) / unit) for v in x)])
    for k, terms in dram.items():
        if terms:
            model.add_row([makespans[k]] + [t[0] for t in terms], [1.0] + [-t[1] for t in terms],
                          lb=0, name=f"dram[{k}]", family="dram")
        model.set_bounds(makespans[k], ub=top + sum(t[1] for t in terms))

    def hint_for(assignment: dict[str, int]) -> dict:
        slowest = {k: 0.0 for k in range(count)}
        load = {k: 0.0 for k in range(count)}
        hint = {}
        for v in x:
            here = stage_of(v, assignment, hint)
            slowest[assignment[v]] = max(slowest[assignment[v]], here)
        for net, k, d, weight in moved:
            hint[d] = float(k in net_sections(net, assignment))
            load[k] += weight * hint[d]
        return hint | {makespans[k]: max(slowest[k], load[k]) for k in range(count)}

    return makespans, hint_for


def _add_stages(model, x, costs: CutCosts, unit: float, makespans: dict):
    """``T[k] >= stage_v x[v][k]`` (the fixed part) and, for a streaming stage, ``T[k] >=
    sum_u c_u y[u][v][k]`` with ``y >= x[u][k] + x[v][k] - 1`` (input u moved on chip when
    it shares the section: :meth:`CutCosts.stage_in`). Returns a function giving node v's
    stage in time units for a cut, adding its ``y`` to a hint."""
    fixed = {v: math.ceil(costs.stage.get(v, 0.0) / unit - 1e-9) for v in x}
    shared: dict[tuple[str, int], list[tuple[str, object, int]]] = {}
    for i, v in enumerate(x):
        for k in x[v]:
            if fixed[v] > 0:
                model.add_row([makespans[k], x[v][k]], [1.0, -fixed[v]], lb=0,
                              name=f"makespan[{v},{k}]", family="makespan")
            inputs = [(u, math.ceil(c / unit - 1e-9)) for u, c in costs.streamed.get(v, ())
                      if u == v or k in x.get(u, {})]
            if sum(c for _, c in inputs) <= fixed[v]:
                continue
            terms = shared[v, k] = []
            for j, (u, c) in enumerate(inputs):
                y = x[v][k] if u == v else model.add_var(f"y[{i},{j},{k}]", 0.0, 1.0,
                                                         integer=True)
                if u != v:
                    model.add_row([y, x[u][k], x[v][k]], [1.0, -1.0, -1.0], lb=-1,
                                  name=f"stream[{i},{j},{k}]", family="makespan")
                terms.append((u, y, c))
            model.add_row([makespans[k]] + [y for _, y, _ in terms],
                          [1.0] + [-float(c) for _, _, c in terms], lb=0,
                          name=f"stream_makespan[{i},{k}]", family="makespan")

    def stage_of(v: str, assignment: dict[str, int], hint: dict) -> float:
        here = assignment[v]
        for k in x[v]:
            for u, y, _ in shared.get((v, k), ()):
                if u != v:
                    hint[y] = float(assignment[u] == here == k)
        return max(fixed[v], sum(c for u, _, c in shared.get((v, here), ())
                                 if assignment[u] == here))

    return stage_of


def _add_net_traffic(model, graph: Graph, x, costs: CutCosts, per_byte: float) -> list:
    """``d[n][k] = 1`` when section k moves net n through DRAM (:func:`net_sections`): at
    least ``x[u][k] - x[s][k]`` (k writes it: driver u in k, a sink s elsewhere; ``x[u][k]``
    alone when a sink lies outside the graph) and ``x[s][k] - x[u][k]`` (k reads it) for
    each sink s. Returns (net, section, d, weight in time units) of each."""
    moved = []
    for j, net in enumerate(cut_nets(graph, costs)):
        weight = round(net.bytes * per_byte)
        if weight < 1:
            continue
        at_driver = x[net.driver] if net.driver is not None else {}
        for k in sorted(set(at_driver).union(*(x[s] for s in net.sinks))):
            writes = [(at_driver.get(k), None)] if net.written else [
                (at_driver.get(k), x[s].get(k)) for s in net.sinks]
            reads = [(x[s].get(k), at_driver.get(k)) for s in net.sinks]
            # one row per distinct pair (by identity: a Var's == builds a constraint)
            rows = list({(id(a), id(b)): (a, b) for a, b in writes + reads
                         if a is not None}.values())
            if not rows:
                continue
            d = model.add_var(f"d[{j},{k}]", 0.0, 1.0, integer=True)
            for side, (a, b) in enumerate(rows):
                terms = [(d, 1.0), (a, -1.0)] + ([(b, 1.0)] if b is not None else [])
                model.add_row([t[0] for t in terms], [t[1] for t in terms], lb=0,
                              name=f"dram_cross[{j},{k},{side}]", family="dram")
            moved.append((net, k, d, weight))
    return moved


def _add_buffer_chains(model, nets, x) -> dict[tuple[int, int], object]:
    """``w[n][k]``: the PMUs of net n's buffer chain in section k, at least each sink's
    own where its driver shares the section (the capacity rows keep it no larger)."""
    chains = {}
    for n, net in enumerate(nets):
        at_driver = x[net.driver]
        for k in at_driver:
            taps = [(sink, p) for sink, p in net.sinks if k in x[sink]]
            if not taps:
                continue
            w = chains[n, k] = model.add_var(f"w[{n},{k}]", 0.0, max(p for _, p in taps),
                                             integer=True)
            for j, (sink, p) in enumerate(taps):
                model.add_row([w, at_driver[k], x[sink][k]], [1.0, -p, -p], lb=-p,
                              name=f"buffers[{n},{k},{j}]", family="buffers")
    return chains


def _add_capacities(model, graph: Graph, x, cap: Capacity, count: int,
                    scales: dict[int, Scale], chains: dict | None = None) -> None:
    """Per section and resource: the scaled estimates plus, for PMUs and all units, the
    buffer chains' PMUs as they are (``scale * estimates + buffers <= capacity``)."""
    demand = {v: unit_demand(graph.node(v)) for v in x}
    limits = {"pcu": (("pcu",), cap.pcu), "pmu": (("pmu",), cap.pmu),
              "units": (("pcu", "pmu", "any"), cap.total), "agcu": (("agcu",), cap.agcu)}
    in_section: dict[int, list] = {}
    for (_, k), w in (chains or {}).items():
        in_section.setdefault(k, []).append(w)
    for k in range(count):
        scale = scales.get(k, 1.0)
        for label, (keys, limit) in limits.items():
            terms = [(x[v][k], sum(demand[v][key] for key in keys)) for v in x if k in x[v]]
            terms = [(var, c) for var, c in terms if c]
            if label in ("pmu", "units"):
                terms += [(w, 1.0 / scale_of(scale, label)) for w in in_section.get(k, ())]
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


def solve_section_model(model, settings: SolveSettings, stem: str | None = None,
                        budget: Budget | None = None):
    """Solve ``model`` on ``settings`` (backend, planned seconds as a deterministic work
    limit with the run's deadline as the outer cap, seed); the work used is charged to
    ``budget`` too (when given). When ``stem`` is given and ``settings.export_dir`` is set,
    write it there first as ``<model name>_<stem>.mps``."""
    if stem is not None and settings.export_dir:
        Path(settings.export_dir).mkdir(parents=True, exist_ok=True)
        model.write_mps(str(Path(settings.export_dir) / f"{model.name}_{stem}.mps"))
    planned = (settings.budget() if budget is None
               else Budget(settings.time_limit, parent=budget))
    return solve_planned(model, settings.backend, planned, seed=settings.seed)


def decode_assignment(graph: Graph, x, count: int, result) -> dict[str, int]:
    """Node -> section of a solved model (the section whose ``x`` is largest)."""
    return {v: max(x[v], key=lambda k: result.value(x[v][k])) for v in x}


#: Above this many nodes the traffic bound counts category changes only: the section
#: windows need every node's ancestor and descendant sets (quadratic in the nodes).
WINDOW_NODES = 20_000


def section_windows(graph: Graph, cap: Capacity, count: int,
                     scales: dict[int, Scale]) -> dict[str, list[int]]:
    """Sections each node can reach: its ancestors must fit before it, its descendants after.

    With each kind's loosest capacity (its smallest factor: :func:`loosest_scale`), a
    node whose ancestors (itself included) need ``a`` units of a kind cannot sit before
    section ``ceil(a / cap) - 1``; likewise for descendants from the end. Valid for any
    cut, so it shrinks the model without losing optima.
    """
    order = graph.topological_order()
    pos = {v: i for i, v in enumerate(order)}
    preds = {v: [pos[p] for p in graph.predecessors(v) if _same_iteration(graph, p, v)]
             for v in order}
    succs = {v: [pos[s] for s in graph.successors(v) if _same_iteration(graph, v, s)]
             for v in order}
    loosest = loosest_scale(scales, count)
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
        first = max([0] + [math.ceil(loosest[k] * (anc[v] & masks[k]).bit_count() / c) - 1
                           for k, c in kinds if c])
        last = min([count - 1] + [count - math.ceil(loosest[k] * (desc[v] & masks[k]).bit_count()
                                                    / c) for k, c in kinds if c])
        windows[v] = list(range(first, last + 1)) or list(range(count))
    return windows


def _same_iteration(graph: Graph, a: str, b: str) -> bool:
    return any(not graph.edges[i].loop_carried and graph.edges[i].dst == b
               for i in graph.out_edges(a))


def _closure(order: list[str], parents: dict[str, list[int]], pos: dict[str, int]
             ) -> dict[str, int]:
    """Bitset of each node and everything before it along ``parents`` (in ``order``)."""
    by_pos = {pos[v]: v for v in order}
    closure: dict[str, int] = {}
    for v in order:
        bits = 1 << pos[v]
        for p in parents[v]:
            bits |= closure[by_pos[p]]
        closure[v] = bits
    return closure


def forced_traffic(graph: Graph, cap: Capacity, count: int,
                   scales: dict[int, Scale] | None = None) -> float:
    """DRAM bytes every cut into ``count`` sections pays: a lower bound on traffic.

    An edge crosses a cut in every valid cut when its ends have different
    categories (a section never mixes them), or when no section is reachable
    by both ends (:func:`section_windows`; the quotient order then forces
    them apart).

    Examples
    --------
    >>> from model.graph import Edge, Node
    >>> g = Graph("g", [Node("f", unit="pcu", category="forward"),
    ...                 Node("b", unit="pcu", category="backward")], [Edge("f", "b", bytes=8)])
    >>> forced_traffic(g, Capacity(pcu=4, pmu=4, total=8, agcu=0), 2)
    8.0
    """
    if len(graph.nodes) > WINDOW_NODES:      # the windows' closure is quadratic
        return sum(edge_traffic(e) for e in graph.edges
                   if graph.node(e.src).category != graph.node(e.dst).category)
    windows = {v: set(w) for v, w in section_windows(graph, cap, count,
                                                     dict(scales or {})).items()}
    return sum(edge_traffic(e) for e in graph.edges
               if e.src != e.dst and (graph.node(e.src).category != graph.node(e.dst).category
                                      or not windows[e.src] & windows[e.dst]))
