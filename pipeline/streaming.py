"""The Streaming Engine pass (source 004): order, warm start, CP-SAT modulo placement, check.

:func:`map_streaming` maps a graph on a ``streaming-engine`` spec: topological order, the
greedy placement of the paper's sequential process as the warm start
(:mod:`formulations.streaming.env`), the II sweep of the CP-SAT model (or the MILP on a linear
``--backend``; :mod:`formulations.streaming.model`), then the independent simulator
(:mod:`sim.streaming`) judges the answer before it is returned. :func:`draw_streaming` draws
tiles x slots; :func:`report_lines` is the markdown fragment of the report.

A kernel that does not fit one synchronous data-flow (SDF) is transformed
(:mod:`formulations.streaming.split`): a value feeding too many consumers (``R1 reach``,
``S1 siblings``) gets a tree of pass instructions; a kernel with more than ``tiles x max_ii``
instructions (``A4 slots``), more SDF starts than tiles (``B1 starts``), or one the one-SDF model
cannot map, is split into several SDFs that run as phases on the same tiles, joined over the
asynchronous fabric (AF). ``mapping.json`` then lists the SDFs in ``sections`` (II, start cycle,
cycles), ``placement[n]["sdf"]``, and the AF edges in ``routes`` (``"via": "af"``). Rules no
transformation can fix (``O1 operands``, ``R2 recurrence``, ``G0 graph``, ``M1``/``M2`` memory)
are reported as not mappable with the reason.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Callable

from formulations.streaming.model import (StreamingInfeasible, StreamingSchedule, build_milp,
                                    lower_bounds, precheck, problem_from_graph, solve_milp,
                                    solve_streaming)
from formulations.streaming.env import greedy_schedule, random_schedule
from formulations.streaming.split import (AF_LATENCY, SplitSchedule, relieve_fan_out,
                                          repair_of, solve_split, stuck_recurrences)
from hardware import StreamingEngineSpec
from model.graph import Graph
from model.mapping import Mapping
from pipeline.feedback import CheckerRejected, MappingFailed
from pipeline.options import RunOptions
from pipeline.section_pass import stage_record
from sim.streaming import check_split, check_streaming

__all__ = ["map_streaming", "draw_streaming", "report_lines", "spoke_entries", "CP_WORKERS"]

#: CP-SAT workers (fixed, so a run is deterministic for a seed).
CP_WORKERS = 1


def map_streaming(graph: Graph, spec: StreamingEngineSpec, options: RunOptions | None = None,
                  progress: Callable[[str], None] | None = None,
                  af_latency: int = AF_LATENCY) -> Mapping:
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
    mapping.order = graph.topological_order() if _acyclic(graph) else graph.node_ids
    mapping.stages.append(stage_record("order", 0, "topological order", started))
    mapping.metrics = {"nodes": len(graph.nodes), "edges": len(graph.edges)}
    try:
        problem = problem_from_graph(graph, spec)
    except StreamingInfeasible as exc:
        _fail(mapping, exc.reasons, started)
    bounds = lower_bounds(problem)
    mapping.metrics = _base_metrics(graph, bounds)
    reasons = precheck(problem)
    if any(repair_of(r) is None for r in reasons):
        _fail(mapping, reasons, started)
    work, passes = graph, []
    if any(repair_of(r) == "pass tree" for r in reasons):
        work, passes = relieve_fan_out(graph, spec)
        mapping.stages.append(stage_record("pass tree", 0, "relieve fan-out", started,
                                           objective=len(passes)))
        say(f"pass tree: {len(passes)} pass instructions")
    stuck = stuck_recurrences(work, spec, time_limit=min(options.time_limit, 5.0),
                              seed=options.seed)
    if stuck:  # proven: neither one SDF nor any split maps it
        _fail(mapping, stuck, started)
    single_error = None
    if not precheck(problem_from_graph(work, spec)):
        try:
            sched = _solve(work, spec, options, _warm_start(work, spec, mapping, say), mapping,
                           say)
            _record_single(mapping, graph, work, spec, sched, bounds, passes, started)
            return mapping
        except StreamingInfeasible as exc:
            if any(repair_of(r) is None for r in exc.reasons):
                _fail(mapping, exc.reasons, started)
            single_error = exc.reasons
            say(f"one SDF does not map ({exc.reasons[0][:60]}); splitting")
    split = _solve_split(work, spec, options, mapping, say, started, af_latency, single_error)
    _record_split(mapping, graph, work, spec, split, bounds, passes, started)
    return mapping


def _acyclic(graph: Graph) -> bool:
    try:
        graph.topological_order()
        return True
    except Exception:  # noqa: BLE001 - a cycle is diagnosed by problem_from_graph (G0)
        return False


def _base_metrics(graph: Graph, bounds: dict) -> dict:
    return {"nodes": len(graph.nodes), "edges": len(graph.edges), "ii_lower_bound": bounds["ii"],
            "res_ii": bounds["res_ii"], "mem_ii": bounds["mem_ii"], "rec_ii": bounds["rec_ii"],
            "critical_path": bounds["critical_path"]}


def _fail(mapping: Mapping, reasons: list[str], started: float) -> None:
    mapping.status = "failed"
    proof = sorted({r.split(":")[0] for r in reasons
                    if repair_of(r) is None and not r.startswith("split:")})
    if proof:
        tail = (f" -- not mappable: neither pass instructions nor splitting into several SDFs "
                f"over the asynchronous fabric can fix {', '.join(proof)} (a recurrence only "
                f"gets slower over the AF; a 4-operand instruction would need its operation "
                f"decomposed; a variable's users must share one tile)")
    else:
        tail = (" -- not mapped: pass trees and splits into several SDFs over the asynchronous "
                "fabric were tried; none mapped every part within the time limit")
    mapping.diagnosis = "; ".join(reasons) + tail
    mapping.metrics["rules"] = sorted({r.split(":")[0] for r in reasons})
    mapping.metrics["seconds"] = round(time.perf_counter() - started, 3)
    raise MappingFailed(mapping)


def _warm_start(graph: Graph, spec: StreamingEngineSpec, mapping: Mapping,
                say: Callable[[str], None], section: int = 0) -> StreamingSchedule | None:
    found = []
    for name, run in (("greedy", lambda: greedy_schedule(graph, spec)),
                      ("random", lambda: random_schedule(graph, spec, seed=0, tries=20))):
        started = time.perf_counter()
        try:
            sched = run()
        except StreamingInfeasible as exc:
            mapping.stages.append(stage_record("warm start", section,
                                               f"{name} sequential placement", started,
                                               status="FAILED", note=str(exc)))
            continue
        found.append(sched)
        mapping.stages.append(stage_record("warm start", section, f"{name} sequential placement",
                                           started, objective=sched.cycles, ii=sched.ii))
        say(f"{name}: II {sched.ii}, {sched.cycles} cycles")
    return min(found, key=lambda s: (s.ii, s.cycles)) if found else None


def _solve(graph: Graph, spec: StreamingEngineSpec, options: RunOptions,
           warm: StreamingSchedule | None, mapping: Mapping, say: Callable[[str], None],
           section: int = 0, explain_failure: bool = True) -> StreamingSchedule:
    """One SDF: the II sweep (raises StreamingInfeasible) with a stage record per model."""
    started = time.perf_counter()
    try:
        if options.backend_for("streaming") == "cp-sat":
            sched = solve_streaming(graph, spec, time_limit=options.time_limit, seed=options.seed,
                                    workers=CP_WORKERS, warm=warm, export_dir=options.export_dir,
                                    progress=say, explain_failure=explain_failure)
        else:
            sched = _milp_sweep(graph, spec, options, warm)
    except StreamingInfeasible:
        mapping.stages.append(stage_record("modulo placement", section, "II sweep", started,
                                           status="INFEASIBLE"))
        raise
    for r in sched.results:
        mapping.stages.append(stage_record(
            "modulo placement", section, f"{r.model_name}", started, objective=r.objective,
            bound=r.bound, status=r.status.name, backend=r.backend, hint=r.hint_status,
            time_solver=round(r.wall_time, 4)))
    if sched.method != "cp-sat" and not sched.method.startswith("milp"):
        mapping.stages.append(stage_record("modulo placement", section, "kept the warm start",
                                           started, objective=sched.cycles))
    return sched


def _solve_split(work: Graph, spec: StreamingEngineSpec, options: RunOptions, mapping: Mapping,
                 say: Callable[[str], None], started: float, af_latency: int,
                 single_error: list[str] | None) -> SplitSchedule:
    parts_tried = [0]

    def solve_one(part: Graph) -> StreamingSchedule:
        parts_tried[0] += 1
        warm = _warm_start(part, spec, mapping, say, section=parts_tried[0])
        return _solve(part, spec, options, warm, mapping, say, section=parts_tried[0],
                      explain_failure=False)

    first = max(2, -(-len(work.nodes) // (spec.tiles * spec.max_ii)))
    try:
        return solve_split(work, spec, solve_one, first=first, af_latency=af_latency, say=say)
    except StreamingInfeasible as exc:
        _fail(mapping, (single_error or []) + exc.reasons, started)


def _milp_sweep(graph: Graph, spec: StreamingEngineSpec, options: RunOptions,
                warm: StreamingSchedule | None) -> StreamingSchedule:
    problem = problem_from_graph(graph, spec)
    results = []
    for ii in range(lower_bounds(problem)["ii"], spec.max_ii + 1):
        if options.export_dir:
            build_milp(problem, ii).write_mps(
                str(Path(options.export_dir) / f"streaming_{problem.name}_ii{ii}.mps"))
        result, sched = solve_milp(problem, ii, options.backend_for("streaming"), options.time_limit, options.seed)
        results.append(result)
        if sched is not None:
            sched.results = results
            return sched
    if warm is not None:
        warm.results = results
        return warm
    raise StreamingInfeasible([f"no II <= {spec.max_ii} admits a mapping ({options.backend_for('streaming')})"])


def _placement(sched: StreamingSchedule) -> dict:
    return {n: {"tile": sched.tile[n], "slot": sched.slot[n], "cycle": sched.cycle[n]}
            for n in sched.tile}


def _check_single(graph: Graph, work: Graph, spec: StreamingEngineSpec,
                  sched: StreamingSchedule, passes: list[str]):
    placement = _placement(sched)
    if not passes:
        report = check_streaming(work, spec, placement, sched.ii, sched.delays)
    else:
        sdf = {"id": 0, "nodes": work.node_ids, "ii": sched.ii, "start": 0}
        report = check_split(work, spec, placement, [sdf], AF_LATENCY, 1, original=graph)
    if not report.ok:
        raise CheckerRejected(0, report.violations)
    return report


def _record_single(mapping: Mapping, graph: Graph, work: Graph, spec: StreamingEngineSpec,
                   sched: StreamingSchedule, bounds: dict, passes: list[str],
                   started: float) -> None:
    report = _check_single(graph, work, spec, sched, passes)
    mapping.status = "mapped"
    mapping.ii = sched.ii
    mapping.order = work.topological_order()
    mapping.placement = {n: p | {"sdf": 0} for n, p in _placement(sched).items()}
    mapping.tiles = spoke_entries(work, spec, sched)
    mapping.memory = _memory(work, sched, spec)
    mapping.sections = [{"id": 0, "kind": "sdf", "nodes": work.node_ids, "ii": sched.ii,
                         "cycles": sched.cycles}]
    mapping.routes = _routes(work, spec, sched)
    mapping.stages.append(stage_record("check", 0, "sim.streaming cycle-by-cycle", started,
                                       status="OK", objective=report.cycles,
                                       fired=report.fired))
    mapping.metrics |= {
        "ii": sched.ii, "cycles": sched.cycles, "cycles_sim": report.cycles,
        "total_cycles_3_iterations": report.total_cycles, "status": sched.status,
        "proven_ii": sched.proven_ii, "method": sched.method, "cycles_bound": sched.bound,
        "delay_entries": sum(sched.delays.values()),
        "tiles_used": len(set(sched.tile.values())), "sdfs": 1, "af_edges": 0,
        "pass_instructions": len(passes), "seconds": round(time.perf_counter() - started, 3)}


def _split_sections(split: SplitSchedule) -> list[dict]:
    return [{"id": part.index, "kind": "sdf", "nodes": part.nodes, "ii": sched.ii,
             "cycles": sched.cycles, "start": start, "status": sched.status}
            for part, sched, start in zip(split.plan.parts, split.schedules, split.starts)]


def _record_split(mapping: Mapping, graph: Graph, work: Graph, spec: StreamingEngineSpec,
                  split: SplitSchedule, bounds: dict, passes: list[str], started: float) -> None:
    sections = _split_sections(split)
    placement = {n: p | {"sdf": part.index} for part, sched in zip(split.plan.parts,
                                                                    split.schedules)
                 for n, p in _placement(sched).items()}
    report = check_split(work, spec, placement, sections, split.af_latency, split.batch,
                         original=graph if passes else None)
    if not report.ok:
        raise CheckerRejected(0, report.violations)
    mapping.status = "mapped"
    mapping.ii = max(s.ii for s in split.schedules)
    mapping.order = work.topological_order()
    mapping.placement = placement
    mapping.sections = sections
    mapping.tiles, mapping.memory, mapping.routes = [], {}, []
    for part, sched in zip(split.plan.parts, split.schedules):
        sub = work.subgraph(part.nodes)
        mapping.tiles += [t | {"sdf": part.index} for t in spoke_entries(part.graph, spec, sched)]
        mapping.memory |= {v: p | {"sdf": part.index}
                           for v, p in _memory(part.graph, sched, spec).items()}
        mapping.routes += [r | {"section": part.index} for r in _routes(sub, spec, sched)]
    mapping.routes += [{"src": e.src, "dst": e.dst, "via": "af", "latency": split.af_latency,
                        "src_sdf": e.src_sdf, "dst_sdf": e.dst_sdf, "distance": e.distance,
                        "variable": e.variable} for e in split.plan.af_edges]
    mapping.stages.append(stage_record("check", None, "sim.streaming phases + AF edges",
                                       started, status="OK", objective=report.cycles,
                                       fired=report.fired))
    proven = all(s.status == "optimal" for s in split.schedules)
    mapping.metrics |= {
        "ii": mapping.ii, "sdf_ii": [s.ii for s in split.schedules],
        "cycles": split.latency, "batch": split.batch, "batch_cycles": split.batch_cycles,
        "cycles_sim": report.cycles, "effective_ii": round(split.effective_ii, 3),
        "status": "split, every SDF optimal" if proven else "split",
        "proven_ii": False, "method": "cp-sat per SDF",
        "delay_entries": sum(sum(s.delays.values()) for s in split.schedules),
        "sdfs": len(split.schedules), "af_edges": len(split.plan.af_edges),
        "af_latency": split.af_latency, "pass_instructions": len(passes),
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
    sdfs = sorted({t.get("sdf", 0) for t in mapping.tiles or []}) or [0]
    fig, axes = plt.subplots(len(sdfs), 1, squeeze=False,
                             figsize=(max(6, spec.tiles * 0.8), (1.5 + ii * 0.7) * len(sdfs)))
    for ax, sdf in zip(axes[:, 0], sdfs):
        tiles = [t for t in mapping.tiles or [] if t.get("sdf", 0) == sdf]
        _draw_sdf(ax, tiles, spec, max((t["ii"] for t in tiles), default=ii))
        title = f"{mapping.graph} on {spec.name}: II {mapping.ii}, " \
                f"{mapping.metrics.get('cycles')} cycles"
        if len(sdfs) > 1:
            title = f"{mapping.graph}, SDF {sdf} of {len(sdfs)} (phase; II " \
                    f"{tiles[0]['ii'] if tiles else '?'})"
        ax.set_title(title, fontsize=9)
    fig.tight_layout()
    path = Path(path)
    tmp = path.with_name(path.stem + ".tmp" + path.suffix)
    fig.savefig(tmp)
    plt.close(fig)
    os.replace(tmp, path)


def _draw_sdf(ax, tiles: list[dict], spec: StreamingEngineSpec, ii: int) -> None:
    """One SDF's tiles x slots on ``ax``."""
    import matplotlib.pyplot as plt

    colours = {"instruction": "#4c72b0", "delay": "#dd8452", "idle": "white"}
    for tile in tiles:
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
    if m.get("sdfs", 1) > 1:
        lines += _split_lines(mapping)
    lines += [f"- II **{mapping.ii}** (lower bound {m.get('ii_lower_bound')}: resource "
              f"{m.get('res_ii')}, memory {m.get('mem_ii')}, recurrence {m.get('rec_ii')}); "
              f"proven smallest: {m.get('proven_ii')}",
              f"- cycles **{m.get('cycles')}** (critical-path bound {m.get('critical_path')}); "
              f"status {m.get('status')} by {m.get('method')}; checked by the simulator "
              f"({m.get('cycles_sim')} cycles)",
              f"- {m.get('nodes')} instructions, {m.get('edges')} edges, "
              f"{m.get('tiles_used', '-')} tiles used, {m.get('delay_entries')} delay entries, "
              f"{m.get('pass_instructions', 0)} pass instructions (fan-out relief), "
              f"{m.get('seconds')} s", "",
              "| tile | slot | entry | instruction | master input | SF outputs |",
              "|---|---|---|---|---|---|"]
    for tile in mapping.tiles or []:
        for e in tile["entries"]:
            if e["kind"] == "idle":
                continue
            what = e.get("instruction") or e.get("holds")
            where = f"S{tile['sdf']}/T{tile['tile']}" if "sdf" in tile else f"T{tile['tile']}"
            lines.append(f"| {where} | {e['slot']} | {e['kind']} | {what} | "
                         f"{e.get('master_input')} | {', '.join(e.get('sf_outputs', []))} |")
    if mapping.memory:
        lines += ["", "| variable | tile | bank | users |", "|---|---|---|---|"]
        for var, p in sorted(mapping.memory.items()):
            lines.append(f"| {var} | T{p['tile']} | {p['bank']} | {', '.join(p['users'])} |")
    return lines + [""]


def _split_lines(mapping: Mapping) -> list[str]:
    """Summary lines of a kernel split into several SDFs (phases joined over the AF)."""
    m = mapping.metrics
    lines = [f"- split into **{m['sdfs']} SDFs** run as phases on the same tiles, "
             f"{m['af_edges']} AF edges ({m['af_latency']} cycles each, assumed), batch "
             f"{m['batch']} iterations per phase, effective II {m['effective_ii']}, "
             f"{m['cycles']} cycles for one iteration through every phase"]
    for s in mapping.sections:
        lines.append(f"- SDF {s['id']}: {len(s['nodes'])} instructions, II {s['ii']}, "
                     f"{s['cycles']} cycles, phase starts at cycle {s['start']} ({s['status']})")
    return lines
