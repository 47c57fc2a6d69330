"""The Streaming Engine pass (source 004): order, warm start, CP-SAT modulo placement, check.

:func:`map_streaming` maps a graph on a ``streaming-engine`` spec as one synchronous data-flow
(SDF): topological order, the greedy placement of the paper's sequential process as the warm
start (:mod:`formulations.streaming_env`), the II sweep of the CP-SAT model (or the MILP on a
linear ``--backend``; :mod:`formulations.streaming`), then the independent simulator
(:mod:`sim.streaming`) judges the answer before it is returned. :func:`draw_streaming` draws
tiles x slots; :func:`report_lines` is the markdown fragment of the report.

Caveats: a graph that does not fit one SDF (more than 16 x 6 instructions, or a rule the
pre-check refutes) is reported as not mappable with the rule; splitting it into several SDFs
joined over the asynchronous fabric is not implemented. The ``sdf`` of every placement is 0.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Callable

from formulations.streaming import (SPLIT_PROOF_RULES, StreamingInfeasible, StreamingSchedule, build_milp,
                                    lower_bounds, precheck, problem_from_graph, solve_milp,
                                    solve_streaming)
from formulations.streaming_env import greedy_schedule, random_schedule
from hardware import StreamingEngineSpec
from model.graph import Graph
from model.mapping import Mapping
from pipeline.flow import CheckerRejected, MappingFailed, RunOptions
from pipeline.section_pass import stage_record
from sim.streaming import check_streaming

__all__ = ["map_streaming", "draw_streaming", "report_lines", "spoke_entries", "CP_WORKERS"]

#: CP-SAT workers (fixed, so a run is deterministic for a seed).
CP_WORKERS = 1


def map_streaming(graph: Graph, spec: StreamingEngineSpec, options: RunOptions | None = None,
                  progress: Callable[[str], None] | None = None) -> Mapping:
    """Map ``graph`` on a Streaming Engine; raises MappingFailed with a rule-based diagnosis.

    Examples
    --------
    >>> from hardware import load_hardware
    >>> from sim.streaming import distance_graph
    >>> m = map_streaming(distance_graph(), load_hardware("se16"), RunOptions(time_limit=5))
    >>> m.status, m.ii, m.metrics["cycles"], m.placement["0"]["sdf"]
    ('mapped', 1, 16, 0)
    """
    options = options or RunOptions()
    say = progress or (lambda line: None)
    started = time.perf_counter()
    mapping = Mapping(graph=graph.name, hardware=spec.name)
    mapping.order = graph.topological_order()
    mapping.stages.append(stage_record("order", 0, "topological order", started))
    mapping.metrics = {"nodes": len(graph.nodes), "edges": len(graph.edges)}
    try:
        problem = problem_from_graph(graph, spec)
    except StreamingInfeasible as exc:
        _fail(mapping, exc.reasons, started)
    bounds = lower_bounds(problem)
    mapping.metrics = _base_metrics(graph, bounds)
    reasons = precheck(problem)
    if reasons:
        _fail(mapping, reasons, started)
    warm = _warm_start(graph, spec, mapping, say)
    sched = _solve(graph, spec, options, warm, mapping, say, started)
    report = check_streaming(graph, spec, _placement(sched), sched.ii, sched.delays)
    if not report.ok:
        raise CheckerRejected(0, report.violations)
    _record(mapping, graph, spec, sched, report, bounds, started)
    say(f"II {sched.ii}, {sched.cycles} cycles ({sched.status})")
    return mapping


def _base_metrics(graph: Graph, bounds: dict) -> dict:
    return {"nodes": len(graph.nodes), "edges": len(graph.edges), "ii_lower_bound": bounds["ii"],
            "res_ii": bounds["res_ii"], "mem_ii": bounds["mem_ii"], "rec_ii": bounds["rec_ii"],
            "critical_path": bounds["critical_path"]}


def _fail(mapping: Mapping, reasons: list[str], started: float) -> None:
    mapping.status = "failed"
    proof = sorted({r.split(":")[0] for r in reasons if r.split(":")[0] in SPLIT_PROOF_RULES})
    if proof:
        tail = (f" -- not mappable: splitting into several SDFs cannot fix {', '.join(proof)} "
                f"(instruction form / a recurrence only gets slower over the asynchronous fabric)")
    else:
        tail = " -- splitting into several SDFs over the asynchronous fabric is not implemented"
    mapping.diagnosis = "; ".join(reasons) + tail
    mapping.metrics["rules"] = sorted({r.split(":")[0] for r in reasons})
    mapping.metrics["seconds"] = round(time.perf_counter() - started, 3)
    raise MappingFailed(mapping)


def _warm_start(graph: Graph, spec: StreamingEngineSpec, mapping: Mapping,
                say: Callable[[str], None]) -> StreamingSchedule | None:
    found = []
    for name, run in (("greedy", lambda: greedy_schedule(graph, spec)),
                      ("random", lambda: random_schedule(graph, spec, seed=0, tries=20))):
        started = time.perf_counter()
        try:
            sched = run()
        except StreamingInfeasible as exc:
            mapping.stages.append(stage_record("warm start", 0, f"{name} sequential placement",
                                               started, status="FAILED", note=str(exc)))
            continue
        found.append(sched)
        mapping.stages.append(stage_record("warm start", 0, f"{name} sequential placement",
                                           started, objective=sched.cycles, ii=sched.ii))
        say(f"{name}: II {sched.ii}, {sched.cycles} cycles")
    return min(found, key=lambda s: (s.ii, s.cycles)) if found else None


def _solve(graph: Graph, spec: StreamingEngineSpec, options: RunOptions,
           warm: StreamingSchedule | None, mapping: Mapping, say: Callable[[str], None],
           run_started: float) -> StreamingSchedule:
    started = time.perf_counter()
    try:
        if options.backend in ("cp-sat", "cpsat", None):
            sched = solve_streaming(graph, spec, time_limit=options.time_limit, seed=options.seed,
                                    workers=CP_WORKERS, warm=warm, export_dir=options.export_dir,
                                    progress=say)
        else:
            sched = _milp_sweep(graph, spec, options, warm)
    except StreamingInfeasible as exc:
        mapping.stages.append(stage_record("modulo placement", 0, "II sweep", started,
                                           status="INFEASIBLE"))
        _fail(mapping, exc.reasons, run_started)
    for r in sched.results:
        mapping.stages.append(stage_record(
            "modulo placement", 0, f"{r.model_name}", started, objective=r.objective,
            bound=r.bound, status=r.status.name, backend=r.backend, hint=r.hint_status,
            time_solver=round(r.wall_time, 4)))
    if sched.method != "cp-sat" and not sched.method.startswith("milp"):
        mapping.stages.append(stage_record("modulo placement", 0, "kept the warm start",
                                           started, objective=sched.cycles))
    return sched


def _milp_sweep(graph: Graph, spec: StreamingEngineSpec, options: RunOptions,
                warm: StreamingSchedule | None) -> StreamingSchedule:
    problem = problem_from_graph(graph, spec)
    results = []
    for ii in range(lower_bounds(problem)["ii"], spec.max_ii + 1):
        if options.export_dir:
            build_milp(problem, ii).write_mps(
                str(Path(options.export_dir) / f"streaming_{problem.name}_ii{ii}.mps"))
        result, sched = solve_milp(problem, ii, options.backend, options.time_limit, options.seed)
        results.append(result)
        if sched is not None:
            sched.results = results
            return sched
    if warm is not None:
        warm.results = results
        return warm
    raise StreamingInfeasible([f"no II <= {spec.max_ii} admits a mapping ({options.backend})"])


def _placement(sched: StreamingSchedule) -> dict:
    return {n: {"tile": sched.tile[n], "slot": sched.slot[n], "cycle": sched.cycle[n]}
            for n in sched.tile}


def _record(mapping: Mapping, graph: Graph, spec: StreamingEngineSpec, sched: StreamingSchedule,
            report, bounds: dict, started: float) -> None:
    mapping.status = "mapped"
    mapping.ii = sched.ii
    mapping.placement = {n: p | {"sdf": 0} for n, p in _placement(sched).items()}
    mapping.tiles = spoke_entries(graph, spec, sched)
    mapping.memory = _memory(graph, sched, spec)
    mapping.sections = [{"id": 0, "kind": "sdf", "nodes": graph.node_ids, "ii": sched.ii,
                         "cycles": sched.cycles}]
    mapping.routes = _routes(graph, spec, sched)
    mapping.stages.append(stage_record("check", 0, "sim.streaming cycle-by-cycle", started,
                                       status="OK", objective=report.cycles,
                                       fired=report.fired))
    mapping.metrics |= {
        "ii": sched.ii, "cycles": sched.cycles, "cycles_sim": report.cycles,
        "total_cycles_3_iterations": report.total_cycles, "status": sched.status,
        "proven_ii": sched.proven_ii, "method": sched.method,
        "delay_entries": sum(sched.delays.values()),
        "tiles_used": len(set(sched.tile.values())),
        "seconds": round(time.perf_counter() - started, 3)}


def _port(kind: str, src: int, dst: int) -> str:
    if src == dst:
        return "feedback"
    side = "Up" if dst > src else "Down"
    if kind == "in":
        side = "Down" if dst > src else "Up"  # a value from a lower tile enters from below
    return f"SF {'In' if kind == 'in' else 'Out'} {side}{abs(dst - src)}"


def spoke_entries(graph: Graph, spec: StreamingEngineSpec, sched: StreamingSchedule) -> list[dict]:
    """Per tile: its II and every spoke entry (master input, SF outputs, active instruction).

    The master input of an instruction is where its last operand comes from (the message that
    fires it): an SF input, ``feedback`` (its own tile) or ``tile base`` (no operand: an SDF
    start). A delay entry re-latches a held value on the consumer's tile.
    """
    ii = sched.ii
    by_slot = {(sched.tile[n], sched.slot[n]): n for n in sched.tile}
    ops = {n.id: n.op for n in graph.nodes}
    inputs, outputs = {}, {}
    for e in graph.edges:
        inputs.setdefault(e.dst, []).append(e)
        outputs.setdefault(e.src, []).append(e)
    delay_queue = {}
    for (u, v, d), count in sorted(sched.delays.items()):
        delay_queue.setdefault(sched.tile[v], []).extend([(u, v)] * count)
    tiles = []
    for t in range(spec.tiles):
        entries, ram = [], 0
        pending = list(delay_queue.get(t, []))
        for s in range(ii):
            n = by_slot.get((t, s))
            if n is not None:
                entries.append(_instruction_entry(n, ops[n], ram, t, s, sched, spec,
                                                  inputs.get(n, []), outputs.get(n, [])))
                ram += 1
            elif pending:
                u, v = pending.pop(0)
                entries.append({"slot": s, "kind": "delay", "holds": f"{u}->{v}",
                                "master_input": _port("in", sched.tile[u], t),
                                "sf_outputs": ["feedback"], "instruction": None})
            else:
                entries.append({"slot": s, "kind": "idle", "instruction": None})
        tiles.append({"tile": t, "ii": ii, "entries": entries})
    return tiles


def _instruction_entry(n: str, op: str, ram: int, t: int, s: int, sched: StreamingSchedule,
                       spec: StreamingEngineSpec, ins: list, outs: list) -> dict:
    ii = sched.ii
    if ins:
        def arrival(e):
            lat = spec.link_latency(sched.tile[e.src], t) if sched.tile[e.src] != t else 0
            return sched.cycle[e.src] + spec.instruction_latency + (lat or 0) - e.distance * ii
        last = max(ins, key=arrival)
        master = _port("in", sched.tile[last.src], t)
    else:
        master = "tile base"
    sf_out = sorted({_port("out", t, sched.tile[e.dst]) for e in outs})
    return {"slot": s, "kind": "instruction", "instruction": n, "op": op,
            "instruction_ram": ram, "master_input": master, "sf_outputs": sf_out,
            "cycle": sched.cycle[n]}


def _memory(graph: Graph, sched: StreamingSchedule, spec: StreamingEngineSpec) -> dict:
    """Tile-memory variables: tile, bank (filled in turn) and users."""
    out: dict = {}
    fill = {}
    for node in graph.nodes:
        for var in node.mem_vars:
            if var not in out:
                t = sched.tile[node.id]
                k = fill.get(t, 0)
                fill[t] = k + 1
                out[var] = {"tile": t, "bank": k % spec.memories_per_tile,
                            "entry": k // spec.memories_per_tile, "users": []}
            out[var]["users"].append(node.id)
    return out


def _routes(graph: Graph, spec: StreamingEngineSpec, sched: StreamingSchedule) -> list[dict]:
    routes = []
    for i, e in enumerate(graph.edges):
        a, b = sched.tile[e.src], sched.tile[e.dst]
        routes.append({"edge": i, "src": e.src, "dst": e.dst, "section": 0,
                       "links": [] if a == b else [f"T{a}->T{b}"],
                       "latency": 0 if a == b else spec.link_latency(a, b),
                       "distance": e.distance,
                       "delays": sched.delays.get((e.src, e.dst, e.distance), 0)})
    return routes


# ---------------------------------------------------------------------------------------------
# picture and report
# ---------------------------------------------------------------------------------------------
def draw_streaming(mapping: Mapping, spec: StreamingEngineSpec, path: str | os.PathLike) -> None:
    """Tiles x slots: each spoke entry as a cell (instruction, delay or idle), SVG or PNG.

    Examples
    --------
    >>> import tempfile, os
    >>> from hardware import load_hardware
    >>> from sim.streaming import distance_graph
    >>> se = load_hardware("se16")
    >>> m = map_streaming(distance_graph(), se, RunOptions(time_limit=5))
    >>> path = os.path.join(tempfile.mkdtemp(), "se.svg"); draw_streaming(m, se, path)
    >>> os.path.getsize(path) > 1000
    True
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    ii = mapping.ii or 1
    fig, ax = plt.subplots(figsize=(max(6, spec.tiles * 0.8), 1.5 + ii * 0.7))
    colours = {"instruction": "#4c72b0", "delay": "#dd8452", "idle": "white"}
    for tile in mapping.tiles or []:
        for entry in tile["entries"]:
            x, y = tile["tile"], entry["slot"]
            ax.add_patch(plt.Rectangle((x, y), 0.95, 0.9, facecolor=colours[entry["kind"]],
                                       edgecolor="#555555", linewidth=0.6))
            label = entry.get("instruction") or ("delay" if entry["kind"] == "delay" else "")
            if label:
                ax.text(x + 0.47, y + 0.45, str(label)[:8], ha="center", va="center",
                        fontsize=6, color="white" if entry["kind"] != "idle" else "black")
    ax.set_xlim(0, spec.tiles)
    ax.set_ylim(ii, 0)
    ax.set_xticks([t + 0.47 for t in range(spec.tiles)], [f"T{t}" for t in range(spec.tiles)],
                  fontsize=7)
    ax.set_yticks([s + 0.45 for s in range(ii)], [f"slot {s}" for s in range(ii)], fontsize=7)
    ax.set_title(f"{mapping.graph} on {spec.name}: II {mapping.ii}, "
                 f"{mapping.metrics.get('cycles')} cycles", fontsize=9)
    fig.tight_layout()
    path = Path(path)
    tmp = path.with_name(path.stem + ".tmp" + path.suffix)
    fig.savefig(tmp)
    plt.close(fig)
    os.replace(tmp, path)


def report_lines(mapping: Mapping) -> list[str]:
    """The Streaming Engine part of report.md (markdown).

    >>> from hardware import load_hardware
    >>> from sim.streaming import distance_graph
    >>> lines = report_lines(map_streaming(distance_graph(), load_hardware("se16")))
    >>> lines[0]
    '## Streaming Engine mapping'
    """
    m = mapping.metrics
    lines = ["## Streaming Engine mapping", ""]
    if mapping.status != "mapped":
        return lines + [f"Not mapped: {mapping.diagnosis}", ""]
    lines += [f"- II **{mapping.ii}** (lower bound {m.get('ii_lower_bound')}: resource "
              f"{m.get('res_ii')}, memory {m.get('mem_ii')}, recurrence {m.get('rec_ii')}); "
              f"proven smallest: {m.get('proven_ii')}",
              f"- cycles **{m.get('cycles')}** (critical-path bound {m.get('critical_path')}); "
              f"status {m.get('status')} by {m.get('method')}; checked by the simulator "
              f"({m.get('cycles_sim')} cycles)",
              f"- {m.get('nodes')} instructions, {m.get('edges')} edges, "
              f"{m.get('tiles_used')} tiles used, {m.get('delay_entries')} delay entries, "
              f"{m.get('seconds')} s", "",
              "| tile | slot | entry | instruction | master input | SF outputs |",
              "|---|---|---|---|---|---|"]
    for tile in mapping.tiles or []:
        for e in tile["entries"]:
            if e["kind"] == "idle":
                continue
            what = e.get("instruction") or e.get("holds")
            lines.append(f"| T{tile['tile']} | {e['slot']} | {e['kind']} | {what} | "
                         f"{e.get('master_input')} | {', '.join(e.get('sf_outputs', []))} |")
    if mapping.memory:
        lines += ["", "| variable | tile | bank | users |", "|---|---|---|---|"]
        for var, p in sorted(mapping.memory.items()):
            lines.append(f"| {var} | T{p['tile']} | {p['bank']} | {', '.join(p['users'])} |")
    return lines + [""]
