"""A generic CGRA run (issue 23): levels of the feedback loop, then mapping.json.

:func:`map_cgra` maps a loop kernel on a ``cgra`` spec with the same loop as the other
targets (:func:`pipeline.feedback.run_levels`), over the decisions of
:mod:`formulations.cgra.kernel`:

- ``precheck`` -- the kernel as one modulo-scheduled loop (a CGRA kernel is never cut into
  sections): the problem and the pre-checks
  (``C1 slot``, ``C2 memory``, ``C3 operations``, ``C7 recurrence`` against ``max_ii``,
  ``G0 graph``); a violation is ``UNRESOLVABLE`` with its reason (a loop body is not split
  across several configurations);
- ``schedule`` -- the baseline (iterative modulo list scheduling + PathFinder) and, for the
  placer ``model``, the II sweep (placement-timing relaxation, then the CP-SAT model over the
  time-extended routing graph, destructive lower bounding of the length); the backend is the
  ``streaming`` decision's (the modulo-scheduling decision of both modulo targets);
- ``check`` -- the independent cycle-level simulator (:mod:`sim.cgra`) executes the mapping;
  a rejection is :class:`~pipeline.feedback.CheckerRejected` (a bug, never a result).

``mapping.json``: ``placement[n] = {"pe": [row, col], "cycle", "slot"}``, top-level ``ii``,
``routes`` one per edge with its ``steps`` (``{"pe": [row, col], "cycle"}``, registers
included), ``metrics`` with the II reached, its lower bounds (ResMII, MemII, RecMII and the
bound the relaxation proved), the length and its proven bound, the baseline's II beside it.
Its picture is :func:`pipeline.pictures.draw_cgra`, its report lines
:func:`pipeline.report.cgra_lines`.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Callable

from formulations.cgra.kernel import PLACERS, CgraResult, map_kernel
from formulations.cgra.problem import CgraInfeasible, CgraSchedule, precheck, problem_from_graph
from formulations.solver import SolveSettings, was_cut_short
from hardware import CgraSpec
from model.graph import Graph
from model.mapping import Mapping
from pipeline.budget import RunPlan
from pipeline.feedback import (CheckerRejected, ErrorCode, ErrorHandlingData, Level,
                               MappingError, MappingFailed, Unresolvable, run_levels)
from pipeline.options import RunOptions
from pipeline.stage import stage_record
from sim.cgra import CgraReport, check_cgra

__all__ = ["CgraState", "CgraPrecheckLevel", "CgraScheduleLevel", "CgraCheckLevel", "cgra_levels",
           "map_cgra", "cgra_placement", "cgra_routes"]


@dataclass
class CgraState:
    """What the CGRA levels share: inputs, decisions so far, and the trace."""

    graph: Graph
    spec: CgraSpec
    settings: SolveSettings
    placer: str
    say: Callable[[str], None]
    started: float
    result: CgraResult | None = None
    report: CgraReport | None = None
    reasons: list[str] = field(default_factory=list)
    stages: list[dict] = field(default_factory=list)
    trace: list[dict] = field(default_factory=list)


def _error(state: CgraState, code: ErrorCode, level: str, reasons: list[str]) -> MappingError:
    state.reasons = reasons
    return MappingError(ErrorHandlingData(code, level, "; ".join(reasons), first_failed=0,
                                          hints={"reasons": reasons}))


class CgraPrecheckLevel(Level):
    """The kernel as one loop (never cut into sections): the problem and the pre-checks."""

    name = "precheck"

    def run(self, state: CgraState) -> None:
        try:
            reasons = precheck(problem_from_graph(state.graph, state.spec))
        except CgraInfeasible as exc:    # G0 graph
            reasons = exc.reasons
        if reasons:
            raise _error(state, ErrorCode.UNRESOLVABLE, self.name, reasons)



class CgraScheduleLevel(Level):
    """The baseline, then the II sweep (placer ``model``)."""

    name = "schedule"

    def run(self, state: CgraState) -> None:
        try:
            state.result = map_kernel(state.graph, state.spec, state.settings, state.placer,
                                      state.say)
        except CgraInfeasible as exc:
            state.stages.append(stage_record("modulo placement", 0, "II sweep", state.started,
                                             status="INFEASIBLE"))
            raise _error(state, ErrorCode.UNRESOLVABLE, self.name, exc.reasons) from None
        _stages(state, state.result)



class CgraCheckLevel(Level):
    """The independent simulator executes the mapping."""

    name = "check"

    def run(self, state: CgraState) -> None:
        sched = state.result.schedule
        report = check_cgra(state.graph, state.spec, cgra_placement(state.result),
                            sched.ii, cgra_routes(state.graph, state.result))
        if not report.ok:
            raise CheckerRejected(0, report.violations)
        state.report = report
        state.stages.append(stage_record("check", 0, "sim.cgra cycle by cycle", state.started,
                                         status="OK", objective=report.length,
                                         extra=dict(fired=report.fired,
                                                    iterations=report.iterations)))



def cgra_levels() -> list:
    """The levels of a CGRA run, in order."""
    return [CgraPrecheckLevel(), CgraScheduleLevel(), CgraCheckLevel()]


def _stages(state: CgraState, result: CgraResult) -> None:
    """The warm start's stage (``cut_short`` when the wall clock stopped one of the searches
    outside the sweep's solves: list scheduling, descent, ejection, the corner's run) and one
    stage per solve of the sweep (``cut_short`` when the wall clock stopped it)."""
    base = result.baseline
    solves = result.schedule.results
    cut = [was_cut_short(r) for r in solves]
    state.stages.append(stage_record(
        "warm start", 0, "list scheduling + PathFinder", state.started,
        status="FEASIBLE" if base is not None else "FAILED",
        objective=base.length if base is not None else None,
        extra=dict(ii=base.ii if base is not None else None, note=result.baseline_note,
                   time_solver=round(result.baseline_seconds, 4),
                   cut_short=result.cut_short > sum(cut))))
    for r, short in zip(solves, cut):
        state.stages.append(stage_record(
            "modulo placement", 0, r.model_name, state.started, objective=r.objective,
            bound=r.bound, status=r.status.name, backend=r.backend,
            extra=dict(hint=r.hint_status, time_solver=round(r.wall_time, 4), cut_short=short)))


# ---------------------------------------------------------------------------------------------
# mapping.json
# ---------------------------------------------------------------------------------------------
def cgra_placement(result: CgraResult) -> dict:
    """``node -> {"pe": [row, col], "cycle", "slot"}``."""
    sched, pes = result.schedule, result.problem.pes
    return {n: {"pe": list(pes[sched.pe[n]]), "cycle": sched.cycle[n],
                "slot": sched.cycle[n] % sched.ii} for n in sched.pe}


def cgra_routes(graph: Graph, result: CgraResult) -> list[dict]:
    """One route per graph edge: its ``steps`` from birth to read, one per cycle."""
    sched, pes = result.schedule, result.problem.pes
    out = []
    for i, e in enumerate(graph.edges):
        path = sched.routes.get((e.src, e.dst, int(e.distance)), [])
        steps = [{"pe": list(pes[p]), "cycle": c} for p, c in path]
        hops = sum(a != b for (a, _), (b, _) in zip(path, path[1:]))
        out.append({"edge": i, "src": e.src, "dst": e.dst, "distance": e.distance,
                    "section": 0, "steps": steps, "hops": hops,
                    "waits": max(0, len(path) - 1 - hops)})
    return out


def map_cgra(graph: Graph, spec: CgraSpec, options: RunOptions | None = None,
             progress: Callable[[str], None] | None = None) -> Mapping:
    """Map a loop kernel on a CGRA; raises MappingFailed with a rule-based diagnosis.

    Examples
    --------
    >>> from hardware import load_hardware
    >>> from model.graph import Graph, Node, Edge
    >>> g = Graph("acc", [Node("a", op="LOAD"), Node("b", op="ADD")],
    ...           [Edge("a", "b"), Edge("b", "b", distance=1)])
    >>> m = map_cgra(g, load_hardware("cgra4x4"), RunOptions(time_limit=5))
    >>> m.status, m.ii, m.metrics["proven_ii"], m.placement["b"]["pe"] != m.placement["a"]["pe"]
    ('mapped', 1, True, True)
    """
    options = options or RunOptions()
    started = time.perf_counter()
    mapping = Mapping(graph=graph.name, hardware=spec.name)
    placer = "model" if options.placer not in PLACERS else options.placer
    budget = RunPlan(options.work or options.time_limit, wall=options.time_limit,
                    started=options.started)
    settings = budget.settings(options, "streaming", budget.total)
    state = CgraState(graph, spec, settings, placer, progress or (lambda line: None), started)
    mapping.order = graph.node_ids
    try:
        run_levels(state, cgra_levels(), options.max_iterations)
    except Unresolvable as exc:
        mapping.status = "failed"
        mapping.diagnosis = "; ".join(state.reasons or [exc.data.message]) + \
            " -- not mapped on this CGRA"
        mapping.stages, mapping.trace = state.stages, state.trace
        mapping.metrics = {"nodes": len(graph.nodes), "edges": len(graph.edges),
                           "rules": sorted({r.split(":")[0] for r in state.reasons}),
                           "seconds": round(time.perf_counter() - started, 3)}
        mapping.run = options.record(state.stages)
        raise MappingFailed(mapping) from None
    _record(mapping, state)
    mapping.run = options.record(state.stages)
    return mapping


def _record(mapping: Mapping, state: CgraState) -> None:
    result, report = state.result, state.report
    sched: CgraSchedule = result.schedule
    mapping.status = "mapped"
    mapping.ii = sched.ii
    mapping.placement = cgra_placement(result)
    mapping.routes = cgra_routes(state.graph, result)
    mapping.sections = [{"id": 0, "kind": "loop", "nodes": state.graph.node_ids,
                         "ii": sched.ii, "cycles": sched.length}]
    mapping.stages, mapping.trace = state.stages, state.trace
    b, base = result.bounds, result.baseline
    mapping.metrics = {
        "nodes": len(state.graph.nodes), "edges": len(state.graph.edges),
        "ii": sched.ii, "ii_lower_bound": b["ii"], "res_ii": b["res_ii"], "mem_ii": b["mem_ii"],
        "rec_ii": b["rec_ii"], "reg_ii": b["reg_ii"], "ii_bound": sched.ii_bound,
        "proven_ii": sched.proven_ii,
        "ii_gap": sched.ii - sched.ii_bound, "cycles": sched.length,
        "cycles_bound": sched.bound, "critical_path": b["critical_path"],
        "status": sched.status, "method": sched.method, "placer": state.placer,
        "baseline_ii": base.ii if base is not None else None,
        "baseline_cycles": base.length if base is not None else None,
        "baseline_seconds": round(result.baseline_seconds, 3),
        "cycles_sim": report.length, "iterations_sim": report.iterations,
        "registers_peak": report.max_registers, "link_values_peak": report.max_link_values,
        "pes_used": len(set(sched.pe.values())), "pes": result.problem.pe_count,
        "hops": sum(r["hops"] for r in mapping.routes),
        "feedback_rounds": len(state.trace), "cut_short": result.cut_short,
        "work_seconds": round(result.work, 3),
        "seconds": round(time.perf_counter() - state.started, 3)}
