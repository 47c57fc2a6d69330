"""The Streaming Engine run (source 004): levels of the feedback loop, then mapping.json.

:func:`map_streaming` maps a graph on a ``streaming-engine`` spec with the same loop as an RDU
run (:func:`pipeline.feedback.run_levels`), over the decisions of
:mod:`formulations.streaming.kernel`:

- ``cut`` -- the SE's section cut: the problem (built once), the pre-checks, a pass tree for a
  value with too many consumers, the stuck-recurrence proof, and one SDF at first (several
  when the kernel has more than ``tiles x max_ii`` instructions or ``tiles`` starts). Its
  ``fix`` of ``INSUFFICIENT_RESOURCES`` splits the kernel into the next count of SDFs joined
  over the asynchronous fabric (AF);
- ``schedule`` -- warm starts and the II sweep of every SDF on the streaming backend (CP-SAT,
  or the MILP twin on a linear backend); one SDF that does not map raises
  ``INSUFFICIENT_RESOURCES``, a rule no transformation fixes (``O1 operands``,
  ``R2 recurrence``, ``G0 graph``, ``M1``/``M2`` memory) ``UNRESOLVABLE`` with the reason;
- ``check`` -- the independent simulator (:mod:`sim.streaming`) judges the answer; a rejection
  is :class:`~pipeline.feedback.CheckerRejected` (a bug, never a result).

``--time-limit`` is one budget for the whole run (the :class:`~pipeline.budget.RunPlan`'s
planned seconds, its deadline carried by ``settings.deadline``), the split path included,
spent as deterministic work (the warm starts' placement steps, CP-SAT's deterministic time:
:func:`~formulations.streaming.model.solve_model`), never read from the wall clock, so the
same seed gives the same mapping whatever the machine's load: the stuck-recurrence proof is
charged to it, one SDF that the greedy warm start does not map gets :data:`ONE_SDF_SHARE` of
what is left (the rest is the splits'; once it has a schedule, its proofs may use all of
it), each part of a split not scheduled yet gets its
share of what is left (in proportion to its instructions; work a part leaves unused carries
over), and no part and no further partition is begun with less than
:data:`~formulations.streaming.sweep.LAST_SECONDS` planned seconds left. The wall-clock
deadline only caps the searches: a search it stops is counted in ``mapping.json``'s
``run.cut_short`` (then the same seed is not promised to repeat), and a run stopped by the
budget or the deadline says so (a ``T0 time limit`` reason and a stage with ``cut_short``).

``mapping.json`` lists the SDFs in ``sections`` (II, start cycle, cycles),
``placement[n]["sdf"]``, the AF edges in ``routes`` (``"via": "af"``), every feedback round in
``trace`` and every model in ``stages``. Its picture is
:func:`pipeline.pictures.draw_streaming`, its report lines
:func:`pipeline.report.streaming_lines`.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Callable

from formulations.solver import Budget, SolveSettings, was_cut_short
from formulations.streaming.env import greedy_schedule
from formulations.streaming.kernel import (KernelPlan, SdfAnswer, SdfUnmapped,
                                           finish_split, next_split, part_key, plan_kernel,
                                           schedule_part, schedule_sdf, split_failure,
                                           split_proof)
from formulations.streaming.problem import StreamingInfeasible, StreamingSchedule
from formulations.streaming.rl import DEFAULT_POLICY, RLPolicy, rl_schedule
from formulations.streaming.split import SplitSchedule, repair_of
from formulations.streaming.sweep import LAST_SECONDS
from hardware import StreamingEngineSpec
from model.graph import Graph
from model.mapping import Mapping
from pipeline.budget import RunPlan
from pipeline.feedback import (CheckerRejected, ErrorCode, ErrorHandlingData, Level,
                               MappingError, MappingFailed, Unresolvable, run_levels)
from pipeline.options import RunOptions
from pipeline.stage import stage_record
from sim.streaming import StreamingReport, check_split, check_streaming

__all__ = ["StreamingState", "StreamingCutLevel", "ScheduleLevel", "StreamingCheckLevel",
           "streaming_levels", "map_streaming", "part_settings", "ONE_SDF_SHARE",
           "spoke_entries"]


@dataclass
class StreamingState:
    """What the Streaming Engine levels share: inputs, decisions so far, and the trace."""

    graph: Graph
    spec: StreamingEngineSpec
    settings: SolveSettings
    af_latency: int
    say: Callable[[str], None]
    started: float
    plan: KernelPlan | None = None
    answers: list[SdfAnswer] = field(default_factory=list)
    split: SplitSchedule | None = None
    cache: dict = field(default_factory=dict)      # part key -> SdfAnswer | SdfUnmapped
    report: StreamingReport | None = None
    reasons: list[str] = field(default_factory=list)   # the diagnosis of a failed run
    stages: list[dict] = field(default_factory=list)
    trace: list[dict] = field(default_factory=list)
    placer: str = "model"                 # "rl": the PPO policy places one-SDF kernels
    policy_file: str | None = None
    budget: Budget | None = None      # the run's planned seconds (set by map_streaming)


#: Share of the planned seconds left that one SDF gets when no greedy warm start maps it
#: (the rest is kept for a split into several SDFs; once the one SDF has a schedule, its
#: proofs may use all of it). 0.4: with 0.6 the split of aes and sample decrypt / encrypt
#: and dwpt FullPred had too little left; the one SDF of gemm_nn and adpcm_decoder PartPred
#: still maps at the same II, adpcm_decoder FullPred and sample dwpt_per map as splits at
#: their recurrence floors (II 23 and 11, proven).
ONE_SDF_SHARE = 0.4


def _run_budget(state: StreamingState) -> Budget:
    """The run's budget (made on first use: ``settings.time_limit`` planned seconds, the
    wall-clock cap ``settings.deadline``)."""
    if state.budget is None:
        state.budget = state.settings.budget()
    return state.budget


def _spent(state: StreamingState) -> bool:
    """Whether the run's budget has less than ``LAST_SECONDS`` planned seconds left or its
    wall-clock deadline passed (nothing more is begun)."""
    budget = _run_budget(state)
    return budget.left() < LAST_SECONDS or budget.wall_out()


def _share(state: StreamingState, seconds: float) -> tuple[SolveSettings, Budget]:
    """Settings and budget of ``seconds`` planned seconds of the run's (at least
    ``LAST_SECONDS``, at most the run's limit)."""
    seconds = max(LAST_SECONDS, min(state.settings.time_limit, seconds))
    return state.settings.with_time(seconds), _run_budget(state).share(seconds)


def part_settings(state: StreamingState, parts: list, k: int
                  ) -> tuple[SolveSettings, Budget] | None:
    """The settings and budget of part ``k`` of a split: its share of the run's planned
    seconds left, in proportion to its instructions among the parts from ``k`` on not
    scheduled yet (never more than the run's own limit); None when less than
    :data:`~formulations.streaming.sweep.LAST_SECONDS` is left or the deadline passed (the
    part is not begun)."""
    if _spent(state):
        return None
    fresh = [p for p in parts[k:] if part_key(p) not in state.cache]
    share = len(parts[k].nodes) / max(1, sum(len(p.nodes) for p in fresh))
    return _share(state, _run_budget(state).left() * share)


def _one_sdf_settings(state: StreamingState, plan: KernelPlan
                      ) -> tuple[SolveSettings, Budget]:
    """The one SDF's settings and budget: all the run's planned seconds left when the greedy
    warm start maps it (the sweep then returns a mapping at worst), else
    :data:`ONE_SDF_SHARE` of them, so that a split into several SDFs still has its share."""
    budget = _run_budget(state)
    try:        # unlimited (the warm start that must finish), charged to the run
        greedy_schedule(plan.work, state.spec, budget.share(math.inf))
        share = 1.0
    except StreamingInfeasible:
        share = ONE_SDF_SHARE
    return _share(state, budget.left() * share)


def _cut_short(state: StreamingState, level: str, what: str, section: int | None = None
               ) -> list[str]:
    """A stage that says the budget (or the deadline) stopped the run, and its ``T0``
    reason."""
    state.stages.append(stage_record(level, section, what, state.started, status="NOT BEGUN",
                                     extra=dict(cut_short=True)))
    if _run_budget(state).wall_out():
        return [f"T0 time limit: the run's deadline passed before its planned work was done "
                f"(a slow or busy machine: give a longer --time-limit or less --work); {what}"]
    limit = state.settings.time_limit
    return [f"T0 time limit: the run's planned work ({limit:g} s of mapping) was spent; {what}"]


def _error(state: StreamingState, code: ErrorCode, level: str, reasons: list[str],
           section: int | None = None) -> MappingError:
    state.reasons = reasons
    return MappingError(ErrorHandlingData(code, level, "; ".join(reasons), first_failed=section,
                                          hints={"reasons": reasons}))


# ---------------------------------------------------------------------------------------------
# the levels
# ---------------------------------------------------------------------------------------------
class StreamingCutLevel(Level):
    """The plan (pre-checks, pass tree, stuck recurrences); one SDF, or a split into SDFs."""

    name = "cut"

    def run(self, state: StreamingState) -> None:
        if state.plan is None:
            self._plan(state)
        plan = state.plan
        if plan.parts > 1 and plan.split is None and next_split(plan, state.spec) is None:
            raise _error(state, ErrorCode.UNRESOLVABLE, self.name, split_failure(plan))

    def _plan(self, state: StreamingState) -> None:
        try:
            state.plan = plan = plan_kernel(state.graph, state.spec, state.settings, state.say,
                                            _run_budget(state))
        except StreamingInfeasible as exc:   # G0 graph
            raise _error(state, ErrorCode.UNRESOLVABLE, self.name, exc.reasons) from None
        if plan.passes:
            state.stages.append(stage_record("pass tree", 0, "relieve fan-out", state.started,
                                             objective=len(plan.passes)))
        if plan.unmappable:
            raise _error(state, ErrorCode.UNRESOLVABLE, self.name, plan.unmappable)

    def fix(self, state: StreamingState, data: ErrorHandlingData) -> str | None:
        plan = state.plan
        if _spent(state):     # the run's budget or deadline: no further partition
            state.reasons = data.hints["reasons"] + _cut_short(
                state, self.name, "no further split into SDFs was tried")
            return None
        if plan.split is None:
            plan.single_error, plan.parts = data.hints["reasons"], plan.first_split
        else:
            plan.split_error, plan.parts = data.hints["reasons"], plan.parts + 1
        if next_split(plan, state.spec) is None:
            state.reasons = split_failure(plan)
            return None
        state.say(f"splitting into {plan.parts} SDFs")
        return f"split into {plan.parts} SDFs over the asynchronous fabric"


class ScheduleLevel(Level):
    """Warm starts and the II sweep of every SDF."""

    name = "schedule"

    def run(self, state: StreamingState) -> None:
        plan = state.plan
        state.answers, state.split, state.report = [], None, None
        if plan.split is None:
            self._one_sdf(state, plan)
            return
        parts = plan.split.parts
        for k, part in enumerate(parts):
            fresh = part_key(part) not in state.cache
            given = part_settings(state, parts, k) if fresh else (state.settings, None)
            if given is None:
                raise _error(state, ErrorCode.UNRESOLVABLE, self.name, _cut_short(
                    state, "modulo placement", f"SDF {part.index} of {len(parts)} was not "
                    f"begun", part.index), part.index)
            try:
                answer = schedule_part(part, state.spec, given[0], state.cache, state.say,
                                       given[1], floor=plan.floor(part.nodes))
            except SdfUnmapped as exc:
                if fresh:
                    _sdf_stages(state, part.index, exc, exc.warm)
                code = (ErrorCode.UNRESOLVABLE if split_proof(exc.reasons)
                        else ErrorCode.INSUFFICIENT_RESOURCES)
                reasons = (plan.single_error or []) + exc.reasons \
                    if code is ErrorCode.UNRESOLVABLE else exc.reasons
                raise _error(state, code, self.name, reasons, part.index) from None
            if fresh:
                _sdf_stages(state, part.index, answer.schedule, answer.warm)
            state.answers.append(answer)
        try:
            state.split = finish_split(plan, [a.schedule for a in state.answers], state.spec,
                                       state.af_latency)
        except StreamingInfeasible as exc:
            raise _error(state, ErrorCode.INSUFFICIENT_RESOURCES, self.name, exc.reasons,
                         None) from None

    def _one_sdf(self, state: StreamingState, plan: KernelPlan) -> None:
        if state.placer == "rl":
            _rl_sdf(state, plan)
            return
        settings, budget = _one_sdf_settings(state, plan)
        try:
            answer = schedule_sdf(plan.work, plan.work_problem, state.spec, settings, state.say,
                                  budget=budget, floor=plan.floor(), proofs=_run_budget(state))
        except SdfUnmapped as exc:
            _sdf_stages(state, 0, exc, exc.warm)
            fixable = all(repair_of(r) is not None for r in exc.reasons)
            if fixable:
                state.say(f"one SDF does not map ({exc.reasons[0][:60]}); splitting")
            raise _error(state, ErrorCode.INSUFFICIENT_RESOURCES if fixable
                         else ErrorCode.UNRESOLVABLE, self.name, exc.reasons, 0) from None
        _sdf_stages(state, 0, answer.schedule, answer.warm)
        state.answers = [answer]



class StreamingCheckLevel(Level):
    """The independent simulator judges every SDF (and the AF edges of a split)."""

    name = "check"

    def run(self, state: StreamingState) -> None:
        plan = state.plan
        if state.split is None:
            sched = state.answers[0].schedule
            placement = _placement(sched)
            if not plan.passes:
                report = check_streaming(plan.work, state.spec, placement, sched.ii,
                                         sched.delays)
            else:
                sdf = {"id": 0, "nodes": plan.work.node_ids, "ii": sched.ii, "start": 0}
                report = check_split(plan.work, state.spec, placement, [sdf],
                                     state.af_latency, 1, original=plan.graph)
            method = "sim.streaming cycle-by-cycle"
        else:
            report = check_split(plan.work, state.spec, _split_placement(state.split),
                                 _split_sections(state.split), state.split.af_latency,
                                 state.split.batch,
                                 original=plan.graph if plan.passes else None)
            method = "sim.streaming phases + AF edges"
        if not report.ok:
            raise CheckerRejected(0, report.violations)
        state.report = report
        state.stages.append(stage_record("check", 0 if state.split is None else None, method,
                                         state.started, status="OK", objective=report.cycles,
                                         extra=dict(fired=report.fired)))



def _rl_sdf(state: StreamingState, plan: KernelPlan) -> None:
    """``--placer rl``: the trained policy maps the one SDF (greedy decoding + 7 samples per
    II); a dead end at every II is UNRESOLVABLE for this placer (``--placer model`` proves)."""
    path = state.policy_file or DEFAULT_POLICY
    try:
        policy = RLPolicy.load(path)
    except ValueError as exc:
        raise _error(state, ErrorCode.UNRESOLVABLE, "schedule", [str(exc)], 0) from None
    started = time.perf_counter()
    try:
        sched = rl_schedule(plan.work, state.spec, policy, samples=8, seed=state.settings.seed)
    except StreamingInfeasible as exc:
        state.stages.append(stage_record("modulo placement", 0, "rl policy", state.started,
                                         status="FAILED"))
        raise _error(state, ErrorCode.UNRESOLVABLE, "schedule",
                     exc.reasons, 0) from None
    state.say(f"rl policy: II {sched.ii}, {sched.cycles} cycles")
    state.stages.append(stage_record("modulo placement", 0, f"rl policy ({path})", state.started,
                                     objective=sched.cycles, extra=dict(ii=sched.ii)))
    state.answers = [SdfAnswer(sched, [], time.perf_counter() - started)]


def streaming_levels() -> list:
    """The levels of a Streaming Engine run, in order."""
    return [StreamingCutLevel(), ScheduleLevel(), StreamingCheckLevel()]


def _sdf_stages(state: StreamingState, section: int,
                outcome: StreamingSchedule | SdfUnmapped, warm: list) -> None:
    """Stage rows of one SDF: each warm start, then each model of the sweep."""
    for w in warm:
        method = f"{w.method} sequential placement"
        if w.schedule is None:
            state.stages.append(stage_record("warm start", section, method, state.started,
                                             status="FAILED", extra=dict(note=w.note)))
        else:
            state.stages.append(stage_record("warm start", section, method, state.started,
                                             objective=w.schedule.cycles,
                                             extra=dict(ii=w.schedule.ii)))
    if isinstance(outcome, SdfUnmapped):
        cut = dict(cut_short=True) if outcome.cut_short else {}
        state.stages.append(stage_record("modulo placement", section, "II sweep", state.started,
                                         status="INFEASIBLE", extra=cut))
        return
    for r in outcome.results:
        cut = dict(cut_short=True) if was_cut_short(r) else {}
        state.stages.append(stage_record(
            "modulo placement", section, f"{r.model_name}", state.started, objective=r.objective,
            bound=r.bound, status=r.status.name, backend=r.backend,
            extra=dict(hint=r.hint_status, time_solver=round(r.wall_time, 4)) | cut))
    if outcome.method != "cp-sat" and not outcome.method.startswith("milp"):
        state.stages.append(stage_record("modulo placement", section, "kept the warm start",
                                         state.started, objective=outcome.cycles))


# ---------------------------------------------------------------------------------------------
# the run
# ---------------------------------------------------------------------------------------------
def map_streaming(graph: Graph, spec: StreamingEngineSpec, options: RunOptions | None = None,
                  progress: Callable[[str], None] | None = None,
                  af_latency: int | None = None) -> Mapping:
    """Map ``graph`` on a Streaming Engine; raises MappingFailed with a rule-based diagnosis.

    The AF latency is ``options.af_latency`` when given, else the hardware's (``af_latency``
    here is the same override, kept for callers that pass it apart).

    Examples
    --------
    >>> from hardware import load_hardware
    >>> from sim.streaming import distance_graph
    >>> m = map_streaming(distance_graph(), load_hardware("se16"), RunOptions(time_limit=5))
    >>> m.status, m.ii, m.metrics["cycles"], m.placement["0"]["sdf"], m.trace
    ('mapped', 1, 16, 0, [])
    """
    options = options or RunOptions()
    started = time.perf_counter()
    af = af_latency or options.af_latency or spec.af_latency
    budget = RunPlan.of_options(options)
    settings = budget.settings(options, "streaming", budget.total)
    state = StreamingState(graph, spec, settings, af, progress or (lambda line: None), started,
                           placer=options.placer, policy_file=options.policy_file,
                           budget=settings.budget())
    mapping = Mapping(graph=graph.name, hardware=spec.name)
    mapping.order = graph.topological_order() if _acyclic(graph) else graph.node_ids
    state.stages.append(stage_record("order", 0, "topological order", started))
    try:
        run_levels(state, streaming_levels(), options.max_iterations)
    except Unresolvable as exc:
        if not state.reasons and state.plan is not None:
            state.reasons = split_failure(state.plan)     # the iteration cap
        mapping.run = options.record(state.stages)
        _fail(mapping, state, state.reasons or [exc.data.message])
    _record(mapping, state)
    mapping.run = options.record(state.stages)
    return mapping


def _acyclic(graph: Graph) -> bool:
    try:
        graph.topological_order()
        return True
    except Exception:  # noqa: BLE001 - a cycle is diagnosed by problem_from_graph (G0)
        return False


def _base_metrics(graph: Graph, plan: KernelPlan | None) -> dict:
    metrics = {"nodes": len(graph.nodes), "edges": len(graph.edges)}
    if plan is None:
        return metrics
    bounds = plan.bounds
    return metrics | {"ii_lower_bound": max(bounds["ii"], plan.floor()),
                      "recurrence_floor": plan.floor(), "res_ii": bounds["res_ii"],
                      "mem_ii": bounds["mem_ii"], "rec_ii": bounds["rec_ii"],
                      "critical_path": bounds["critical_path"]}


def _fail(mapping: Mapping, state: StreamingState, reasons: list[str]) -> None:
    mapping.status = "failed"
    proof = sorted({r.split(":")[0] for r in reasons
                    if repair_of(r) is None and not r.startswith(("split:", "rl:"))})
    if not proof and any(r.startswith("rl:") for r in reasons):
        tail = (" -- not mapped by --placer rl, a learned heuristic: nothing is proven; "
                "--placer model searches exactly")
    elif proof:
        tail = (f" -- not mappable: neither pass instructions nor splitting into several SDFs "
                f"over the asynchronous fabric can fix {', '.join(proof)} (a recurrence only "
                f"gets slower over the AF; a 4-operand instruction would need its operation "
                f"decomposed; a variable's users must share one tile)")
    else:
        tail = (" -- not mapped: pass trees and splits into several SDFs over the asynchronous "
                "fabric were tried; none mapped every part within the time limit")
    mapping.diagnosis = "; ".join(reasons) + tail
    mapping.stages, mapping.trace = state.stages, state.trace
    mapping.metrics = _base_metrics(state.graph, state.plan)
    mapping.metrics["rules"] = sorted({r.split(":")[0] for r in reasons})
    mapping.metrics["seconds"] = round(time.perf_counter() - state.started, 3)
    raise MappingFailed(mapping)


def _placement(sched: StreamingSchedule) -> dict:
    return {n: {"tile": sched.tile[n], "slot": sched.slot[n], "cycle": sched.cycle[n]}
            for n in sched.tile}


def _record(mapping: Mapping, state: StreamingState) -> None:
    plan = state.plan
    mapping.status = "mapped"
    mapping.order = plan.work.topological_order()
    mapping.stages, mapping.trace = state.stages, state.trace
    mapping.metrics = _base_metrics(state.graph, plan)
    if state.split is None:
        _record_single(mapping, state, state.answers[0].schedule)
    else:
        _record_split(mapping, state, state.split)
    mapping.metrics |= {"pass_instructions": len(plan.passes),
                        "feedback_rounds": len(state.trace),
                        "seconds": round(time.perf_counter() - state.started, 3)}


def _record_single(mapping: Mapping, state: StreamingState, sched: StreamingSchedule) -> None:
    work, spec, report = state.plan.work, state.spec, state.report
    mapping.ii = sched.ii
    mapping.placement = {n: p | {"sdf": 0} for n, p in _placement(sched).items()}
    mapping.tiles = spoke_entries(work, spec, sched)
    mapping.memory = _memory(work, sched, spec)
    mapping.sections = [{"id": 0, "kind": "sdf", "nodes": work.node_ids, "ii": sched.ii,
                         "cycles": sched.cycles}]
    mapping.routes = _routes(work, spec, sched)
    mapping.metrics |= {
        "ii": sched.ii, "cycles": sched.cycles, "cycles_sim": report.cycles,
        "total_cycles_3_iterations": report.total_cycles, "status": sched.status,
        "proven_ii": sched.proven_ii, "method": sched.method, "cycles_bound": sched.bound,
        "delay_entries": sum(sched.delays.values()),
        "tiles_used": len(set(sched.tile.values())), "sdfs": 1, "af_edges": 0}


def _split_sections(split: SplitSchedule) -> list[dict]:
    return [{"id": part.index, "kind": "sdf", "nodes": part.nodes, "ii": sched.ii,
             "cycles": sched.cycles, "start": start, "status": sched.status}
            for part, sched, start in zip(split.plan.parts, split.schedules, split.starts)]


def _split_placement(split: SplitSchedule) -> dict:
    return {n: p | {"sdf": part.index}
            for part, sched in zip(split.plan.parts, split.schedules)
            for n, p in _placement(sched).items()}


def _record_split(mapping: Mapping, state: StreamingState, split: SplitSchedule) -> None:
    work, spec = state.plan.work, state.spec
    mapping.ii = max(s.ii for s in split.schedules)
    mapping.placement = _split_placement(split)
    mapping.sections = _split_sections(split)
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
    proven = all(s.status == "optimal" for s in split.schedules)
    floor = state.plan.floor()   # every mapping holds the recurrence in one SDF
    mapping.metrics |= {
        "ii": mapping.ii, "sdf_ii": [s.ii for s in split.schedules],
        "cycles": split.latency, "batch": split.batch, "batch_cycles": split.batch_cycles,
        "cycles_sim": state.report.cycles, "effective_ii": round(split.effective_ii, 3),
        "status": "split, every SDF optimal" if proven else "split",
        "proven_ii": bool(floor) and mapping.ii <= floor, "method": "cp-sat per SDF",
        # the whole kernel's ResMII bounds one SDF, not a split; RecMII, MemII, the floor do
        "ii_lower_bound": max(state.plan.bounds["rec_ii"], state.plan.bounds["mem_ii"], floor),
        "delay_entries": sum(sum(s.delays.values()) for s in split.schedules),
        "sdfs": len(split.schedules), "af_edges": len(split.plan.af_edges),
        "af_latency": split.af_latency}


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
