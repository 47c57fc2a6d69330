"""Cycle-by-cycle executor and legality checker for Streaming Engine mappings (source 004).

Scope
-----
:func:`check_streaming` takes a graph, a :class:`~hardware.StreamingEngineSpec`, a placement
(``node -> {"tile", "slot", "cycle"}``), the II and optionally the delay entries per edge, and
runs a few iterations of the modulo schedule one clock at a time: at cycle ``c`` every tile's
spoke counter is at entry ``c mod II`` (one phase for all tiles), the instruction configured
there fires for iteration ``(c - cycle) / II``, and each operand must be in the tile's input
latch: produced by its source ``issue + L`` cycles after issue (``L`` the spec's
``instruction_latency``: 3 on se16), moved ``lat`` cycles over the synchronous fabric (the
spec's links: 1 for +-1 tile, 2 for +-2 on se16; 0 on the tile's own feedback path), and not yet
overwritten by the next iteration's value (II cycles later, extended by II per delay entry).

Every violation is reported with the rule it breaks (the same names as
:data:`formulations.streaming.problem.RULES`, re-derived here independently: this module
imports only ``model`` and ``hardware``, and every latency comes from the spec, the AF latency
from the caller, as the mapping records it):

``P0 placement`` (each node placed once, tile and slot in range, ``slot == cycle mod II``,
``II <= max_ii``), ``A3 slot`` (one instruction per tile and slot), ``M1 memory`` (variables'
users on one tile), ``M2 capacity``, ``B1 starts``, ``S1 siblings`` (children of a common parent),
``R1 reach``, ``T2 timing``, ``H1 hold`` (slots for instructions and delay entries),
``O1 operands``.

Timing convention (DESIGN.md): an instruction may issue at or after its operands arrive
(arrival = issue + 3 + link latency); a value held ``h`` cycles after its arrival needs
``h // II`` delay entries on the consumer's tile. The paper's FIG. 1 (instruction 0 at tile 3
slot 0, instruction 3 at tile 1 slot 1, II 3) is legal: arrival 0 + 3 + 2 = 5, issue 7, hold 2.
:func:`distance_graph` and :data:`DISTANCE_PLACEMENT` are that example, completed to 7 nodes.

Examples
--------
>>> from hardware import load_hardware
>>> report = check_streaming(distance_graph(), load_hardware("se16"), DISTANCE_PLACEMENT, 3)
>>> report.ok, report.cycles
(True, 18)
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any, Mapping

from hardware import StreamingEngineSpec
from model.graph import Edge, Graph, Node

__all__ = ["StreamingReport", "check_streaming", "check_split", "distance_graph",
           "DISTANCE_PLACEMENT",
           "required_delays"]


@dataclass
class StreamingReport:
    """Outcome of a check: ``ok``, the violations (``"<rule>: <detail>"``), the cycle count of
    one iteration (last ready time), of ``iterations`` iterations, and the delays it needed."""

    ok: bool = True
    violations: list[str] = field(default_factory=list)
    cycles: int = 0
    total_cycles: int = 0
    iterations: int = 0
    delays: dict[tuple[str, str, int], int] = field(default_factory=dict)
    fired: int = 0

    def add(self, rule: str, detail: str) -> None:
        self.ok = False
        self.violations.append(f"{rule}: {detail}")

    @property
    def rules_broken(self) -> list[str]:
        return sorted({v.split(":")[0] for v in self.violations})


def _latency(spec: StreamingEngineSpec, src: int, dst: int) -> int | None:
    return 0 if src == dst else spec.link_latency(src, dst)


def _edges(graph: Graph) -> list[tuple[str, str, int]]:
    return sorted({(e.src, e.dst, int(e.distance)) for e in graph.edges})


def required_delays(graph: Graph, spec: StreamingEngineSpec, placement: Mapping[str, Any],
                    ii: int) -> dict[tuple[str, str, int], int]:
    """Delay entries each edge needs: ``hold // II`` (edges with none are left out)."""
    out = {}
    for u, v, d in _edges(graph):
        lat = _latency(spec, placement[u]["tile"], placement[v]["tile"])
        if lat is None:
            continue
        hold = (placement[v]["cycle"] + d * ii - placement[u]["cycle"] - spec.instruction_latency
                - lat)
        if hold >= ii:
            out[(u, v, d)] = hold // ii
    return out


def check_streaming(graph: Graph, spec: StreamingEngineSpec, placement: Mapping[str, Any],
                    ii: int, delays: Mapping[tuple[str, str, int], int] | None = None,
                    iterations: int = 3) -> StreamingReport:
    """Check and execute a mapping; see the module docstring for the rules.

    Parameters
    ----------
    graph, spec : the instructions and the Streaming Engine.
    placement : ``node -> {"tile", "slot", "cycle"}`` (issue cycle of iteration 0).
    ii : the initiation interval.
    delays : delay entries per edge ``(src, dst, distance)``; None = the ones the hold needs.
    iterations : how many iterations to execute.

    Returns
    -------
    StreamingReport
    """
    report = StreamingReport(iterations=iterations)
    if not _check_placement(graph, spec, placement, ii, report):
        return report
    _check_groups(graph, spec, placement, report)
    need = required_delays(graph, spec, placement, ii)
    report.delays = dict(need) if delays is None else {k: int(v) for k, v in delays.items() if v}
    _check_slots(graph, spec, placement, ii, report)
    _execute(graph, spec, placement, ii, report, iterations)
    ready = [placement[n]["cycle"] + spec.instruction_latency for n in graph.node_ids]
    report.cycles = max(ready, default=0)
    report.total_cycles = report.cycles + (iterations - 1) * ii if ready else 0
    return report


def _check_placement(graph: Graph, spec: StreamingEngineSpec, placement: Mapping[str, Any],
                     ii: int, report: StreamingReport) -> bool:
    if not 1 <= ii <= spec.max_ii:
        report.add("P0 placement", f"II {ii} outside 1..{spec.max_ii}")
        return False
    for nid in graph.node_ids:
        p = placement.get(nid)
        if p is None:
            report.add("P0 placement", f"{nid} is not placed")
            continue
        tile, slot, cycle = p.get("tile"), p.get("slot"), p.get("cycle")
        if not (isinstance(tile, int) and 0 <= tile < spec.tiles):
            report.add("P0 placement", f"{nid} on tile {tile}, outside 0..{spec.tiles - 1}")
        if not (isinstance(slot, int) and 0 <= slot < ii):
            report.add("P0 placement", f"{nid} in slot {slot}, outside 0..{ii - 1}")
        if not isinstance(cycle, int) or cycle < 0 or cycle % ii != slot:
            report.add("P0 placement", f"{nid} issues at cycle {cycle}, not in slot {slot} "
                                       f"(cycle mod II must be the slot)")
    extra = sorted(set(placement) - set(graph.node_ids))
    if extra:
        report.add("P0 placement", f"unknown nodes placed: {', '.join(extra[:5])}")
    return report.ok


def _check_groups(graph: Graph, spec: StreamingEngineSpec, placement: Mapping[str, Any],
                  report: StreamingReport) -> None:
    tile = {n: placement[n]["tile"] for n in graph.node_ids}
    users = defaultdict(list)
    for node in graph.nodes:
        for var in node.mem_vars:
            users[var].append(node.id)
    per_tile_vars = defaultdict(set)
    for var, names in sorted(users.items()):
        tiles = sorted({tile[n] for n in names})
        if len(tiles) > 1:
            report.add("M1 memory", f"users of variable {var} ({', '.join(names[:4])}) on tiles "
                                    f"{tiles}")
        for n in names:
            per_tile_vars[tile[n]].add(var)
    capacity = spec.memories_per_tile * spec.memory_depth
    for t, vars_here in sorted(per_tile_vars.items()):
        if len(vars_here) > capacity:
            report.add("M2 capacity", f"tile {t} holds {len(vars_here)} variables > {capacity}")
    starts = [n.id for n in graph.nodes if n.starts_sdf]
    if not starts:
        has_pred = {e.dst for e in graph.edges if e.distance == 0}
        starts = [n for n in graph.node_ids if n not in has_pred]
    _distinct(report, "B1 starts", "start the data-flow", starts, tile)
    children = defaultdict(list)
    for u, v, _ in _edges(graph):
        if u != v and v not in children[u]:
            children[u].append(v)
    for p, kids in sorted(children.items()):
        _distinct(report, "S1 siblings", f"are children of {p}", kids, tile)
    operands = defaultdict(int)
    for _, v, _ in _edges(graph):
        operands[v] += 1
    for v, k in sorted(operands.items()):
        if k > spec.max_operands:
            report.add("O1 operands", f"{v} has {k} operands > {spec.max_operands}")


def _distinct(report: StreamingReport, rule: str, what: str, names: list[str],
              tile: dict[str, int]) -> None:
    seen: dict[int, str] = {}
    for n in names:
        if tile[n] in seen:
            report.add(rule, f"{seen[tile[n]]} and {n} {what} but share tile {tile[n]}")
        seen.setdefault(tile[n], n)


def _check_slots(graph: Graph, spec: StreamingEngineSpec, placement: Mapping[str, Any], ii: int,
                 report: StreamingReport) -> None:
    used: dict[tuple[int, int], str] = {}
    load = defaultdict(int)
    for n in graph.node_ids:
        key = (placement[n]["tile"], placement[n]["slot"])
        if key in used:
            report.add("A3 slot", f"{used[key]} and {n} both on tile {key[0]} slot {key[1]}")
        used.setdefault(key, n)
        load[key[0]] += 1
    for (u, v, d), count in report.delays.items():
        load[placement[v]["tile"]] += count
    for t, count in sorted(load.items()):
        if count > ii:
            report.add("H1 hold", f"tile {t} needs {count} slots (instructions + delay entries) "
                                  f"but II is {ii}")


def _execute(graph: Graph, spec: StreamingEngineSpec, placement: Mapping[str, Any], ii: int,
             report: StreamingReport, iterations: int) -> None:
    """Run ``iterations`` iterations clock by clock; each firing checks its operands' latches."""
    by_entry = defaultdict(list)  # (tile, slot) -> instructions configured there
    for n in graph.node_ids:
        by_entry[(placement[n]["tile"], placement[n]["slot"])].append(n)
    inputs = defaultdict(list)
    for u, v, d in _edges(graph):
        inputs[v].append((u, d))
    last = max(placement[n]["cycle"] for n in graph.node_ids) + (iterations - 1) * ii
    seen_errors: set[tuple[str, str, str]] = set()
    for c in range(last + 1):
        for t in range(spec.tiles):
            for n in by_entry.get((t, c % ii), ()):
                offset = c - placement[n]["cycle"]
                if offset < 0 or offset % ii or offset // ii >= iterations:
                    continue
                report.fired += 1
                _fire(spec, placement, ii, report, n, offset // ii, c, inputs[n], seen_errors)


def _fire(spec: StreamingEngineSpec, placement: Mapping[str, Any], ii: int,
          report: StreamingReport, n: str, iteration: int, c: int, inputs: list,
          seen: set) -> None:
    t = placement[n]["tile"]
    for u, d in inputs:
        source_iteration = iteration - d
        if source_iteration < 0:
            continue  # the loop's initial value, preloaded
        lat = _latency(spec, placement[u]["tile"], t)
        if lat is None:
            if (u, n, "reach") not in seen:
                seen.add((u, n, "reach"))
                report.add("R1 reach", f"{u} (tile {placement[u]['tile']}) -> {n} (tile {t}): "
                                       f"no direct synchronous-fabric link")
            continue
        arrival = placement[u]["cycle"] + source_iteration * ii + spec.instruction_latency + lat
        if arrival > c and (u, n, "timing") not in seen:
            seen.add((u, n, "timing"))
            report.add("T2 timing", f"{n} issues at cycle {c} (iteration {iteration}) but its "
                                    f"operand from {u} arrives at cycle {arrival}")
        lifetime = ii * (1 + report.delays.get((u, n, d), 0))
        if c - arrival >= lifetime and (u, n, "hold") not in seen:
            seen.add((u, n, "hold"))
            report.add("H1 hold", f"the value of {u} for {n} arrives at cycle {arrival}, is "
                                  f"overwritten at {arrival + lifetime}, but {n} reads it at {c}")


def distance_graph() -> Graph:
    """The distance function of the paper's FIG. 1 (square root left out), 7 instructions.

    ``0..2`` compute the differences (each reads its constant ``x0``/``y0``/``z0``), ``3`` and
    ``4`` square, ``5`` adds, ``6`` squares Δz and adds (fused MS/AL).
    """
    ops = ["sub", "sub", "sub", "mul", "mul", "add", "fma"]
    mem = [("x0",), ("y0",), ("z0",), (), (), (), ()]
    nodes = [Node(str(i), ops[i], mem_vars=mem[i]) for i in range(7)]
    pairs = [(0, 3), (1, 4), (2, 6), (3, 5), (4, 5), (5, 6)]
    return Graph("distance", nodes, [Edge(str(a), str(b)) for a, b in pairs])


#: A legal II-3 mapping of :func:`distance_graph` with FIG. 1's two stated placements
#: (instruction 0 at tile 3 slot 0, instruction 3 at tile 1 slot 1).
DISTANCE_PLACEMENT = {
    "0": {"tile": 3, "slot": 0, "cycle": 0},
    "1": {"tile": 2, "slot": 0, "cycle": 0},
    "2": {"tile": 0, "slot": 0, "cycle": 9},
    "3": {"tile": 1, "slot": 1, "cycle": 7},
    "4": {"tile": 2, "slot": 1, "cycle": 4},
    "5": {"tile": 0, "slot": 2, "cycle": 11},
    "6": {"tile": 1, "slot": 0, "cycle": 15},
}


# ---------------------------------------------------------------------------------------------
# split kernels: several SDFs run as phases, joined over the asynchronous fabric
# ---------------------------------------------------------------------------------------------
#: The op of a pass (copy) instruction inserted to relieve a fan-out.
PASS_OP = "pass"


def check_split(graph: Graph, spec: StreamingEngineSpec, placement: Mapping[str, Any],
                sdfs: list[Mapping[str, Any]], af_latency: int, batch: int,
                original: Graph | None = None, iterations: int = 3) -> StreamingReport:
    """Check a kernel split into SDFs that share the tiles in time (phases).

    Each SDF (``{"id", "nodes", "ii", "start"}``, in phase order) is executed by
    :func:`check_streaming` on the instructions it holds; an edge between two SDFs is carried by
    the asynchronous fabric: its producer's SDF must run in an earlier phase (``AF order``), and
    for every iteration ``j`` of the batch the value of iteration ``j - distance`` must land
    (ready + ``af_latency``) by the time its consumer issues (``AF timing``). Phases must not
    overlap (``AF phases``), and each AF value is buffered for the batch (plus its distance) in
    the consumer tile's memories next to its other variables (``AF buffer``). With
    ``original``, every original edge must be carried by ``graph`` directly or through a chain
    of single-input ``pass`` instructions (``P1 pass tree``).

    Returns
    -------
    StreamingReport
        ``cycles`` is the cycle of the last result of the batch.
    """
    report = StreamingReport(iterations=iterations)
    sdf_of = _sdf_membership(graph, sdfs, report)
    if not report.ok:
        return report
    if original is not None:
        _check_pass_tree(original, graph, report)
    for k, sdf in enumerate(sdfs):
        part = graph.subgraph(sdf["nodes"], f"{graph.name}#sdf{k}")
        sub = check_streaming(part, spec, {n: placement[n] for n in sdf["nodes"]}, sdf["ii"],
                              iterations=iterations)
        for v in sub.violations:
            report.add(v.split(":")[0], f"SDF {k}: {v.split(': ', 1)[-1]}")
        report.fired += sub.fired
    _check_phases(spec, placement, sdfs, batch, report)
    _check_af_edges(graph, spec, placement, sdfs, sdf_of, af_latency, batch, report)
    _check_af_buffers(graph, spec, placement, sdf_of, batch, report)
    last = sdfs[-1]
    report.cycles = last["start"] + max(placement[n]["cycle"] for n in last["nodes"]) \
        + spec.instruction_latency + (batch - 1) * last["ii"]
    report.total_cycles = report.cycles
    return report


def _sdf_membership(graph: Graph, sdfs: list[Mapping[str, Any]], report: StreamingReport
                    ) -> dict[str, int]:
    sdf_of: dict[str, int] = {}
    for k, sdf in enumerate(sdfs):
        for n in sdf["nodes"]:
            if n in sdf_of:
                report.add("P0 placement", f"{n} is in SDF {sdf_of[n]} and SDF {k}")
            sdf_of[n] = k
    missing = [n for n in graph.node_ids if n not in sdf_of]
    if missing:
        report.add("P0 placement", f"not in any SDF: {', '.join(missing[:5])}")
    return sdf_of


def _phase_end(placement: Mapping[str, Any], sdf: Mapping[str, Any], batch: int,
               latency: int) -> int:
    last_issue = max(placement[n]["cycle"] for n in sdf["nodes"])
    return sdf["start"] + last_issue + latency + (batch - 1) * sdf["ii"]


def _check_phases(spec: StreamingEngineSpec, placement: Mapping[str, Any],
                  sdfs: list[Mapping[str, Any]], batch: int, report: StreamingReport) -> None:
    for k in range(1, len(sdfs)):
        end = _phase_end(placement, sdfs[k - 1], batch, spec.instruction_latency)
        if sdfs[k]["start"] < end:
            report.add("AF phases", f"SDF {k} starts at cycle {sdfs[k]['start']} but SDF {k - 1}"
                                    f" holds the tiles until cycle {end}")


def _check_af_edges(graph: Graph, spec: StreamingEngineSpec, placement: Mapping[str, Any],
                    sdfs: list[Mapping[str, Any]], sdf_of: dict[str, int], af_latency: int,
                    batch: int, report: StreamingReport) -> None:
    for u, v, d in _edges(graph):
        p, q = sdf_of[u], sdf_of[v]
        if p == q:
            continue
        if p > q:
            report.add("AF order", f"{u} (SDF {p}) feeds {v} (SDF {q}), an earlier phase")
            continue
        for j in range(d, batch):
            arrival = (sdfs[p]["start"] + placement[u]["cycle"] + (j - d) * sdfs[p]["ii"]
                       + spec.instruction_latency + af_latency)
            issue = sdfs[q]["start"] + placement[v]["cycle"] + j * sdfs[q]["ii"]
            if arrival > issue:
                report.add("AF timing", f"{v} (SDF {q}) issues iteration {j} at cycle {issue} "
                                        f"but the value of {u} (SDF {p}) lands at {arrival}")
                break


def _check_af_buffers(graph: Graph, spec: StreamingEngineSpec, placement: Mapping[str, Any],
                      sdf_of: dict[str, int], batch: int, report: StreamingReport) -> None:
    used: dict[tuple[int, int], int] = defaultdict(int)  # (sdf, tile) -> memory entries
    for node in graph.nodes:
        for _ in node.mem_vars:
            used[(sdf_of[node.id], placement[node.id]["tile"])] += 1
    for u, v, d in _edges(graph):
        if sdf_of[u] != sdf_of[v]:
            used[(sdf_of[v], placement[v]["tile"])] += batch + d
    capacity = spec.memories_per_tile * spec.memory_depth
    for (k, t), count in sorted(used.items()):
        if count > capacity:
            report.add("AF buffer", f"SDF {k} tile {t} needs {count} memory entries (batch "
                                    f"{batch}) but holds {capacity}")


def _check_pass_tree(original: Graph, graph: Graph, report: StreamingReport) -> None:
    """Every original edge is a path through single-input pass instructions; nothing else new."""
    ops = {n.id: n.op for n in graph.nodes}
    added = set(graph.node_ids) - set(original.node_ids)
    for n in sorted(added):
        if ops[n] != PASS_OP or len(graph.in_edges(n)) != 1:
            report.add("P1 pass tree", f"{n} is new but not a single-input pass instruction")
    carried = defaultdict(int)
    for e in graph.edges:
        if e.src in original and e.dst in original:
            carried[(e.src, e.dst, e.distance)] += 1
        elif e.src in original and e.dst in added:
            for dst, dist in _through_passes(graph, e.dst, added):
                carried[(e.src, dst, e.distance + dist)] += 1
    for u, v, d in _edges(original):
        if not carried.get((u, v, d)):
            report.add("P1 pass tree", f"edge {u} -> {v} (distance {d}) is not carried")


def _through_passes(graph: Graph, start: str, added: set[str]) -> list[tuple[str, int]]:
    out = []
    for i in graph.out_edges(start):
        e = graph.edges[i]
        if e.dst in added:
            out += [(dst, e.distance + d) for dst, d in _through_passes(graph, e.dst, added)]
        else:
            out.append((e.dst, e.distance))
    return out
