"""Cycle-level executor and legality checker for generic CGRA modulo mappings.

Scope
-----
:func:`check_cgra` takes a loop kernel, a :class:`~hardware.CgraSpec`, a placement
(``node -> {"pe": [row, col], "cycle": c}``), the II and one route per edge (``{"src",
"dst", "distance", "steps": [{"pe": [row, col], "cycle": c}, ...]}``, the form of
``mapping.json``), and executes ``iterations`` iterations of the loop one clock at a time:

* iteration ``i`` of operation ``v`` issues at ``cycle(v) + i * II`` on its PE, reads every
  operand from that PE's registers, and its result appears in a register of its PE
  ``latency`` cycles later (the spec's latency of the operation, or the node's own);
* every cycle, each value in flight follows its routes: it stays in its PE's registers or
  moves one hop to a neighbour PE (the spec's neighbour pattern) over a link;
* an operand of edge ``u -> v`` with distance ``d`` read by iteration ``i`` of ``v`` is the
  value of iteration ``i - d`` of ``u`` (a value from before the loop, ``i - d < 0``, is
  preloaded);
* operations compute a deterministic mix of their operation name and operand values; every
  result is compared with a plain sequential interpretation of the loop (so a value read in
  the wrong place, at the wrong time or from the wrong iteration is caught).

Rules checked, each named in the report (independent of :mod:`formulations.cgra`; this module
imports only ``model`` and ``hardware``): ``P0 placement`` (every node placed once on a PE of
the array, ``II <= max_ii``), ``C1 slot`` (one operation per PE per cycle), ``C2 memory``,
``C3 operations``, ``C4 route`` (a route starts where and when its value is produced, ends
where and when it is read, one hop or one wait per cycle), ``C5 registers`` (at most
``registers`` values in a PE per cycle), ``C6 links`` (one value per link per cycle),
``C7 value`` (the value read is the one the sequential loop computes).

Examples
--------
>>> from hardware import load_hardware
>>> from model.graph import Graph, Node, Edge
>>> g = Graph("acc", [Node("a", op="LOAD"), Node("b", op="ADD")],
...           [Edge("a", "b"), Edge("b", "b", distance=1)])
>>> placement = {"a": {"pe": [0, 0], "cycle": 0}, "b": {"pe": [0, 1], "cycle": 2}}
>>> routes = [{"src": "a", "dst": "b", "distance": 0,
...            "steps": [{"pe": [0, 0], "cycle": 1}, {"pe": [0, 1], "cycle": 2}]},
...           {"src": "b", "dst": "b", "distance": 1,
...            "steps": [{"pe": [0, 1], "cycle": 3}]}]
>>> check_cgra(g, load_hardware("cgra4x4"), placement, 1, routes).ok
True
>>> bad = dict(placement, b={"pe": [1, 1], "cycle": 2})
>>> check_cgra(g, load_hardware("cgra4x4"), bad, 1, routes).rules_broken
['C4 route']
"""

from __future__ import annotations

import hashlib
import math
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

from hardware import CgraSpec
from model.graph import Graph

__all__ = ["CgraReport", "check_cgra"]

Cell = tuple[tuple[int, int], int]   # ((row, col), cycle)


@dataclass
class CgraReport:
    """Outcome of a check: ``ok``, the violations (``"<rule>: <detail>"``), the length of one
    iteration, the cycles and iterations executed, and the peak register and link use."""

    ok: bool = True
    violations: list[str] = field(default_factory=list)
    length: int = 0
    cycles: int = 0
    iterations: int = 0
    fired: int = 0
    max_registers: int = 0
    max_link_values: int = 0

    def add(self, rule: str, detail: str) -> None:
        if len(self.violations) < 50:
            self.violations.append(f"{rule}: {detail}")
        self.ok = False

    @property
    def rules_broken(self) -> list[str]:
        return sorted({v.split(":")[0] for v in self.violations})


def _mix(*parts: Any) -> int:
    data = repr(parts).encode()
    return int.from_bytes(hashlib.blake2b(data, digest_size=8).digest(), "little")


def _rc(value: Any) -> tuple[int, int] | None:
    if isinstance(value, (list, tuple)) and len(value) == 2 and all(
            isinstance(x, int) and not isinstance(x, bool) for x in value):
        return int(value[0]), int(value[1])
    return None


def check_cgra(graph: Graph, spec: CgraSpec, placement: Mapping[str, Any], ii: int,
               routes: Sequence[Mapping[str, Any]], iterations: int | None = None
               ) -> CgraReport:
    """Check and execute a CGRA modulo mapping (see the module); ``iterations`` defaults to
    enough for the steady state (every stage of the pipeline busy at once)."""
    report = CgraReport()
    latency = {n.id: int(n.latency) if n.latency else spec.latency_of(n.op or "nop")
               for n in graph.nodes}
    where = _check_placement(graph, spec, placement, ii, report)
    if not report.ok:
        return report
    length = max((where[n][1] + latency[n] for n in where), default=0)
    report.length = length
    paths = _check_routes(graph, spec, where, latency, ii, routes, report)
    if not report.ok:
        return report
    span = max([length] + [p[-1][1] + 1 for p in paths.values() if p])
    iterations = iterations or max(3, math.ceil(span / ii) + 2)
    _execute(graph, spec, where, latency, ii, paths, iterations, report)
    return report


def _check_placement(graph: Graph, spec: CgraSpec, placement: Mapping[str, Any], ii: int,
                     report: CgraReport) -> dict[str, tuple[tuple[int, int], int]]:
    if not isinstance(ii, int) or ii < 1 or ii > spec.max_ii:
        report.add("P0 placement", f"II {ii} is not within 1..{spec.max_ii}")
        return {}
    where = {}
    slots: dict[tuple[tuple[int, int], int], str] = {}
    for node in graph.nodes:
        entry = placement.get(node.id)
        rc = _rc(entry.get("pe")) if isinstance(entry, Mapping) else None
        cycle = entry.get("cycle") if isinstance(entry, Mapping) else None
        if rc is None or not isinstance(cycle, int) or not (
                0 <= rc[0] < spec.rows and 0 <= rc[1] < spec.cols):
            report.add("P0 placement", f"{node.id} has no PE of the {spec.rows} x {spec.cols} "
                                       f"array and integer cycle ({entry!r})")
            continue
        op = node.op or "nop"
        if spec.is_memory_op(op) and not spec.reaches_memory(*rc):
            report.add("C2 memory", f"{node.id} ({op}) on PE {list(rc)}, which does not reach "
                                    f"memory")
        if not spec.supports(op):
            report.add("C3 operations", f"{node.id} ({op}) is not an operation the PEs run")
        key = (rc, cycle % ii)
        if key in slots:
            report.add("C1 slot", f"{slots[key]} and {node.id} both on PE {list(rc)} in slot "
                                  f"{cycle % ii}")
        slots[key] = node.id
        where[node.id] = (rc, cycle)
    return where


def _check_routes(graph: Graph, spec: CgraSpec, where: dict, latency: dict[str, int], ii: int,
                  routes: Sequence[Mapping[str, Any]], report: CgraReport
                  ) -> dict[tuple[str, str, int], list[Cell]]:
    """Every edge has a route from its value's birth to its read, one hop or wait a cycle."""
    given: dict[tuple[str, str, int], list[Cell]] = {}
    for r in routes:
        key = (r.get("src"), r.get("dst"), int(r.get("distance", 0) or 0))
        steps = []
        for s in r.get("steps") or []:
            rc = _rc(s.get("pe")) if isinstance(s, Mapping) else None
            if rc is None or not isinstance(s.get("cycle"), int):
                report.add("C4 route", f"{key[0]}->{key[1]}: a step is not "
                                       f'{{"pe": [row, col], "cycle": c}} ({s!r})')
                break
            steps.append((rc, s["cycle"]))
        given[key] = steps
    for e in graph.edges:
        key = (e.src, e.dst, int(e.distance))
        path = given.get(key)
        if not path:
            report.add("C4 route", f"{e.src}->{e.dst} (distance {e.distance}) has no route")
            continue
        birth = (where[e.src][0], where[e.src][1] + latency[e.src])
        read = (where[e.dst][0], where[e.dst][1] + e.distance * ii)
        if path[0] != birth:
            report.add("C4 route", f"{e.src}->{e.dst} starts at PE {list(path[0][0])} cycle "
                                   f"{path[0][1]}, but the value appears at PE {list(birth[0])} "
                                   f"cycle {birth[1]}")
        if path[-1] != read:
            report.add("C4 route", f"{e.src}->{e.dst} ends at PE {list(path[-1][0])} cycle "
                                   f"{path[-1][1]}, but {e.dst} reads it at PE {list(read[0])} "
                                   f"cycle {read[1]}")
        for (a, ca), (b, cb) in zip(path, path[1:]):
            if cb != ca + 1 or (a != b and b not in spec.neighbours_of(*a)):
                report.add("C4 route", f"{e.src}->{e.dst}: PE {list(a)} cycle {ca} to PE "
                                       f"{list(b)} cycle {cb} is neither a wait nor one hop")
                break
    return given


def _reference(graph: Graph, iterations: int) -> dict[tuple[str, int], int]:
    """The loop run sequentially: every (operation, iteration) value."""
    ins = defaultdict(list)
    for i, e in enumerate(graph.edges):
        ins[e.dst].append((i, e))
    order = _topo(graph)
    value: dict[tuple[str, int], int] = {}
    for it in range(iterations):
        for n in order:
            operands = [value[(e.src, it - e.distance)] if it - e.distance >= 0
                        else _mix("init", e.src, it - e.distance) for _, e in ins[n]]
            value[(n, it)] = _mix(graph.node(n).op, n, operands)
    return value


def _topo(graph: Graph) -> list[str]:
    preds = defaultdict(set)
    for e in graph.edges:
        if e.distance == 0:
            preds[e.dst].add(e.src)
    done: list[str] = []
    seen: set[str] = set()
    pending = list(graph.node_ids)
    while pending:
        rest = []
        for n in pending:
            if preds[n] <= seen:
                done.append(n)
                seen.add(n)
            else:
                rest.append(n)
        if len(rest) == len(pending):
            raise ValueError("same-iteration edges form a cycle")
        pending = rest
    return done


def _nets(graph: Graph, paths: dict) -> tuple[dict, dict]:
    """Per value (producer): its cells ``(pe, cycle)`` and its moves ``(pe, pe', cycle)``."""
    cells: dict[str, set] = defaultdict(set)
    moves: dict[str, set] = defaultdict(set)
    for (src, _, _), path in paths.items():
        cells[src].update(path)
        for (a, ca), (b, _) in zip(path, path[1:]):
            if a != b:
                moves[src].add((a, b, ca))
    return cells, moves


def _execute(graph: Graph, spec: CgraSpec, where: dict, latency: dict[str, int], ii: int,
             paths: dict, iterations: int, report: CgraReport) -> None:
    """Run ``iterations`` iterations clock by clock (see the module)."""
    reference = _reference(graph, iterations)
    ops = {n.id: n.op for n in graph.nodes}
    cells, moves = _nets(graph, paths)
    ins = defaultdict(list)
    for e in graph.edges:
        ins[e.dst].append(e)
    by_cycle: dict[int, list] = defaultdict(list)          # cycle -> (net, iteration, pe)
    for net, owned in cells.items():
        for pe, c in owned:
            for it in range(iterations):
                by_cycle[c + it * ii].append((net, it, pe))
    fires: dict[int, list] = defaultdict(list)
    for n, (pe, c) in where.items():
        for it in range(iterations):
            fires[c + it * ii].append((n, it, pe))
    link_use: dict[int, list] = defaultdict(list)
    for net, owned in moves.items():
        for a, b, c in owned:
            for it in range(iterations):
                link_use[c + it * ii].append((a, b))
    last = max(list(by_cycle) + list(fires) + [0])
    report.iterations, report.cycles = iterations, last + 1
    regs: dict[tuple[int, int], dict] = defaultdict(dict)   # pe -> (net, it) -> value
    born: dict[tuple[str, int], int] = {}
    for c in range(min(list(by_cycle) + list(fires) + [0]), last + 1):
        regs = _step(c, regs, by_cycle, born, where, latency, moves, ii, spec, report)
        _fire(c, fires, regs, ins, (reference, ops), born, report)
        _capacity(c, regs, link_use, spec, report)


def _step(c: int, regs: dict, by_cycle: dict, born: dict, where: dict, latency: dict,
          moves: dict, ii: int, spec: CgraSpec, report: CgraReport) -> dict:
    """The registers at cycle ``c``: each value born, kept or moved in over a link."""
    new: dict[tuple[int, int], dict] = defaultdict(dict)
    for net, it, pe in sorted(by_cycle.get(c, [])):
        value = None
        if (pe, c) == (where[net][0], where[net][1] + latency[net] + it * ii):
            value = born.get((net, it))
        if value is None:
            value = regs.get(pe, {}).get((net, it))
        if value is None:
            base = c - it * ii - 1
            for a, b, mc in moves.get(net, ()):
                if b == pe and mc == base and (net, it) in regs.get(a, {}):
                    value = regs[a][(net, it)]
                    break
        if value is None:
            report.add("C4 route", f"value of {net} (iteration {it}) is expected in PE "
                                   f"{list(pe)} at cycle {c} but nothing brings it there")
            continue
        new[pe][(net, it)] = value
    return new


def _fire(c: int, fires: dict, regs: dict, ins: dict, truth: tuple[dict, dict], born: dict,
          report: CgraReport) -> None:
    """Every operation issuing at ``c`` reads its operands and computes (checked)."""
    reference, ops = truth
    for n, it, pe in sorted(fires.get(c, [])):
        operands = []
        for e in ins[n]:
            src_it = it - e.distance
            if src_it < 0:
                operands.append(_mix("init", e.src, src_it))
                continue
            value = regs.get(pe, {}).get((e.src, src_it))
            if value is None:
                report.add("C4 route", f"{n} (iteration {it}) on PE {list(pe)} at cycle {c}: "
                                       f"operand {e.src} (iteration {src_it}) is not in its "
                                       f"registers")
                operands.append(None)
            else:
                operands.append(value)
        result = _mix(ops[n], n, operands) if None not in operands else None
        if result is not None and result != reference[(n, it)]:
            report.add("C7 value", f"{n} (iteration {it}) computed a value the sequential "
                                   f"loop does not")
        born[(n, it)] = reference[(n, it)] if result is None else result
        report.fired += 1


def _capacity(c: int, regs: dict, link_use: dict, spec: CgraSpec, report: CgraReport) -> None:
    for pe, held in sorted(regs.items()):
        report.max_registers = max(report.max_registers, len(held))
        if len(held) > spec.registers:
            report.add("C5 registers", f"PE {list(pe)} holds {len(held)} values at cycle {c} "
                                       f"(it has {spec.registers} registers)")
    count: dict[tuple, int] = defaultdict(int)
    for link in link_use.get(c, []):
        count[link] += 1
    for (a, b), k in sorted(count.items()):
        report.max_link_values = max(report.max_link_values, k)
        if k > 1:
            report.add("C6 links", f"link PE {list(a)} -> PE {list(b)} carries {k} values at "
                                   f"cycle {c}")
