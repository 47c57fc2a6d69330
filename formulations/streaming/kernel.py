"""One kernel on the Streaming Engine (source 004): every decision from the graph to a schedule.

Scope
-----
:func:`schedule_kernel` takes a kernel from its graph to one schedule per synchronous data-flow
(SDF), making the decisions in order:

1. **plan** (:func:`plan_kernel`): the problem (built once), the pre-checks, a pass tree where
   a value feeds too many consumers (:func:`~formulations.streaming.split.relieve_fan_out`),
   and the proof that a recurrence no split can map is stuck
   (:func:`~formulations.streaming.split.stuck_recurrences`); rules no transformation fixes
   make the plan ``unmappable``;
2. **one SDF** (:func:`schedule_sdf`): the greedy and random warm starts, then the II sweep
   on ``settings.backend``: the CP-SAT sweep (:func:`~formulations.streaming.sweep.sweep_ii`)
   or, on a linear backend, the MILP twin (:func:`~formulations.streaming.milp.sweep_milp`);
3. **several SDFs** when one does not fit or does not map: :func:`next_split` cuts the kernel
   into 2, 3, ... up to :data:`MOST_SDFS` SDFs joined over the asynchronous fabric,
   :func:`schedule_part` schedules each part (cached across splits), :func:`finish_split` sizes
   the batch and times the phases with the hardware's AF latency.

The pipeline (:mod:`pipeline.streaming`) runs the same steps as levels of its feedback loop;
:func:`schedule_kernel` runs them in a plain loop.

Examples
--------
>>> from hardware import load_hardware
>>> from formulations.solver import SolveSettings
>>> from model.graph import Graph, Node, Edge
>>> g = Graph("chain", [Node("a"), Node("b"), Node("c")], [Edge("a", "b"), Edge("b", "c")])
>>> result = schedule_kernel(g, load_hardware("se16"), SolveSettings(time_limit=5))
>>> result.ii, result.schedules[0].cycles, result.split is None
(1, 11, True)
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Callable

from formulations.solver import Budget, SolveSettings
from formulations.streaming.env import greedy_schedule, random_schedule
from formulations.streaming.milp import sweep_milp
from formulations.streaming.problem import (SPLIT_PROOF_RULES, StreamingInfeasible,
                                            StreamingProblem, StreamingSchedule, lower_bounds,
                                            precheck, problem_from_graph)
from formulations.streaming.split import (SdfPart, SplitPlan, SplitSchedule, batch_size,
                                          phase_starts, relieve_fan_out, repair_of,
                                          split_into_sdfs, stuck_recurrences)
from formulations.streaming.sweep import sweep_ii
from hardware import StreamingEngineSpec
from model.graph import Graph

__all__ = ["CP_WORKERS", "MOST_SDFS", "RECURRENCE_PROOF_SECONDS",
           "RANDOM_SHARE", "WarmTry", "SdfAnswer",
           "SdfUnmapped", "KernelPlan", "KernelResult", "plan_kernel", "schedule_sdf",
           "part_key", "schedule_part", "next_split", "finish_split", "split_failure",
           "split_proof",
           "schedule_kernel"]

#: CP-SAT workers (fixed, so a run is deterministic for a seed).
CP_WORKERS = 1
#: Most SDFs a kernel is split into.
MOST_SDFS = 8
#: Seconds (at most) of each model of the stuck-recurrence proof.
RECURRENCE_PROOF_SECONDS = 5.0
#: Share of an SDF's budget (in steps) its random warm start may take: 20 tries per II took
#: 3-6 s on 60-160-instruction kernels it never mapped (2mm_unroll4, gemm_nn, dwpt FullPred);
#: Taylor FullPred's second SDF needs 8,263 steps (II 31), its only warm start.
RANDOM_SHARE = 0.2

Progress = Callable[[str], None]


def _quiet(line: str) -> None:
    """Progress sink that drops every line."""


# ---------------------------------------------------------------------------------------------
# data
# ---------------------------------------------------------------------------------------------
@dataclass
class WarmTry:
    """One warm-start heuristic's answer (None when it dead-ended) and its time."""

    method: str
    schedule: StreamingSchedule | None
    seconds: float
    note: str = ""


@dataclass
class SdfAnswer:
    """One SDF's schedule and the warm starts tried before the sweep; ``cut_short``: the
    wall clock stopped a search of its budget (the same seed may then not repeat)."""

    schedule: StreamingSchedule
    warm: list[WarmTry]
    seconds: float
    cut_short: bool = False


class SdfUnmapped(StreamingInfeasible):
    """One SDF has no mapping (found); ``warm`` holds the warm starts tried, ``cut_short``
    whether the wall clock stopped a search of its budget."""

    def __init__(self, reasons: list[str], warm: list[WarmTry], cut_short: bool = False):
        super().__init__(reasons)
        self.warm = warm
        self.cut_short = cut_short


@dataclass
class KernelPlan:
    """What the kernel is mapped as: its problem, the pass tree, one SDF or a split.

    ``problem`` and ``bounds`` are the given graph's; ``work`` is the graph with its pass
    instructions (``passes``) and ``work_problem`` its problem. ``parts`` is 1 for one SDF,
    else the SDF count of ``split`` (or the next count to try). ``unmappable`` holds the
    reasons no transformation fixes (empty when the kernel may map). ``floors`` maps each
    recurrence (its instructions) to the II below which it is proven to have no mapping even
    alone (:func:`~formulations.streaming.split.stuck_recurrences`): :meth:`floor`.
    """

    graph: Graph
    problem: StreamingProblem
    bounds: dict[str, int]
    work: Graph
    work_problem: StreamingProblem
    passes: list[str] = field(default_factory=list)
    pass_seconds: float = 0.0
    unmappable: list[str] = field(default_factory=list)
    parts: int = 1
    first_split: int = 2
    split: SplitPlan | None = None
    tried: set[tuple] = field(default_factory=set)
    single_error: list[str] | None = None
    split_error: list[str] = field(default_factory=list)
    floors: dict[tuple[str, ...], int] = field(default_factory=dict)

    def floor(self, nodes: list[str] | None = None) -> int:
        """The proven II floor of an SDF of ``nodes`` (default: the whole kernel): the
        largest floor among the recurrences it holds (0: none)."""
        inside = None if nodes is None else set(nodes)
        return max((f for names, f in self.floors.items()
                    if inside is None or inside.issuperset(names)), default=0)


@dataclass
class KernelResult:
    """The plan, one answer per SDF (phase order) and, for several SDFs, the split's timing."""

    plan: KernelPlan
    answers: list[SdfAnswer]
    split: SplitSchedule | None = None

    @property
    def schedules(self) -> list[StreamingSchedule]:
        return [a.schedule for a in self.answers]

    @property
    def ii(self) -> int:
        return max(s.ii for s in self.schedules)


# ---------------------------------------------------------------------------------------------
# 1. plan: pre-checks, pass tree, stuck recurrences
# ---------------------------------------------------------------------------------------------
def plan_kernel(graph: Graph, spec: StreamingEngineSpec, settings: SolveSettings,
                progress: Progress | None = None, budget: Budget | None = None
                ) -> KernelPlan:
    """The plan of ``graph`` (see the module); raises StreamingInfeasible for ``G0 graph``.
    The stuck-recurrence proof's models are charged to ``budget`` when given."""
    say = progress or _quiet
    problem = problem_from_graph(graph, spec)
    plan = KernelPlan(graph, problem, lower_bounds(problem), graph, problem)
    reasons = precheck(problem)
    if any(repair_of(r) is None for r in reasons):
        plan.unmappable = reasons
        return plan
    if any(repair_of(r) == "pass tree" for r in reasons):
        started = time.perf_counter()
        plan.work, plan.passes = relieve_fan_out(graph, spec)
        plan.pass_seconds = time.perf_counter() - started
        say(f"pass tree: {len(plan.passes)} pass instructions")
    plan.unmappable = stuck_recurrences(
        plan.work, spec, settings.with_time(min(settings.time_limit, RECURRENCE_PROOF_SECONDS)),
        budget=budget, floors=plan.floors)
    if plan.unmappable:  # proven: neither one SDF nor any split maps it
        return plan
    if plan.passes:
        plan.work_problem = problem_from_graph(plan.work, spec)
    plan.first_split = max(2, math.ceil(plan.work_problem.n / (spec.tiles * spec.max_ii)))
    if precheck(plan.work_problem):  # too big or too many starts for one SDF
        plan.parts = plan.first_split
    return plan


# ---------------------------------------------------------------------------------------------
# 2. one SDF: warm starts, then the II sweep on the chosen backend
# ---------------------------------------------------------------------------------------------
def _warm_starts(graph: Graph, spec: StreamingEngineSpec, seed: int, say: Progress,
                 budget: Budget) -> list[WarmTry]:
    """The greedy and random warm starts, charged to ``budget`` by their placement steps
    (:data:`~formulations.streaming.env.STEP_SECONDS` each); the random one takes at most
    :data:`RANDOM_SHARE` of it."""
    tries = []
    for method in ("greedy", "random"):
        started = time.perf_counter()
        try:        # the greedy one is the warm start that must finish: unlimited
            sched = (greedy_schedule(graph, spec, budget.share(math.inf))
                     if method == "greedy" else
                     random_schedule(graph, spec, seed=seed, tries=20,
                                     budget=budget.share(RANDOM_SHARE * budget.left())))
        except StreamingInfeasible as exc:
            tries.append(WarmTry(method, None, time.perf_counter() - started, str(exc)))
            continue
        tries.append(WarmTry(method, sched, time.perf_counter() - started))
        say(f"{method}: II {sched.ii}, {sched.cycles} cycles")
    return tries


def schedule_sdf(graph: Graph, problem: StreamingProblem, spec: StreamingEngineSpec,
                 settings: SolveSettings, progress: Progress | None = None,
                 explain_failure: bool = True, budget: Budget | None = None,
                 floor: int = 0, proofs: Budget | None = None) -> SdfAnswer:
    """One SDF: the better warm start, then the sweep on ``settings.backend`` (``cp-sat``: the
    CP-SAT sweep with its proofs; any other backend: the MILP twin). Raises SdfUnmapped.

    ``budget`` (default: ``settings.time_limit`` planned seconds, capped by
    ``settings.deadline``) is spent as deterministic work: the warm starts' placement steps,
    then the sweep's solver work (see :func:`~formulations.streaming.sweep.sweep_ii`, which
    starts at the proven ``floor``; once it has a schedule, its proofs may use ``proofs``).
    """
    say = progress or _quiet
    started = time.perf_counter()
    if budget is None:
        budget = settings.budget()
    warm_tries = _warm_starts(graph, spec, settings.seed, say, budget)
    found = [w.schedule for w in warm_tries if w.schedule is not None]
    warm = min(found, key=lambda s: (s.ii, s.cycles)) if found else None
    try:
        if settings.backend == "cp-sat":
            sched = sweep_ii(problem, settings, warm, CP_WORKERS, say, explain_failure, budget,
                             floor, proofs)
        else:
            sched = sweep_milp(problem, settings, warm)
    except StreamingInfeasible as exc:
        raise SdfUnmapped(exc.reasons, warm_tries, budget.cut_short) from None
    return SdfAnswer(sched, warm_tries, time.perf_counter() - started, budget.cut_short)


# ---------------------------------------------------------------------------------------------
# 3. several SDFs over the asynchronous fabric
# ---------------------------------------------------------------------------------------------
def next_split(plan: KernelPlan, spec: StreamingEngineSpec) -> SplitPlan | None:
    """The next partition of ``plan.work`` into ``plan.parts`` or more SDFs (at most
    :data:`MOST_SDFS`) not tried yet; sets ``plan.split`` and ``plan.parts`` (None: none left).
    """
    plan.split = None
    while plan.parts <= MOST_SDFS:
        try:
            split = split_into_sdfs(plan.work, spec, parts=plan.parts)
        except ValueError as exc:
            plan.split_error = [f"A4 slots: {exc}"]
            plan.parts += 1
            continue
        key = tuple(tuple(p.nodes) for p in split.parts)
        if key not in plan.tried:  # a smaller cap may give the same partition
            plan.tried.add(key)
            plan.split = split
            return split
        plan.parts += 1
    return None


def part_key(part: SdfPart) -> tuple:
    """What identifies a part's scheduling problem (its instructions and variables)."""
    return tuple(sorted(part.graph.node_ids)) + tuple(sorted(
        v for n in part.graph.nodes for v in n.mem_vars))


def schedule_part(part: SdfPart, spec: StreamingEngineSpec, settings: SolveSettings,
                  cache: dict[tuple, SdfAnswer | SdfUnmapped],
                  progress: Progress | None = None, budget: Budget | None = None,
                  floor: int = 0) -> SdfAnswer:
    """One part of a split, scheduled once per :func:`part_key` (``cache``) within
    ``budget`` from the II ``floor`` (see :func:`schedule_sdf`); raises SdfUnmapped."""
    key = part_key(part)
    if key not in cache:
        try:
            answer = schedule_sdf(part.graph, problem_from_graph(part.graph, spec), spec,
                                  settings, progress, explain_failure=False, budget=budget,
                                  floor=floor)
            cache[key] = answer
            (progress or _quiet)(f"SDF {part.index} ({len(part.nodes)} instructions): II "
                                 f"{answer.schedule.ii}, {answer.schedule.cycles} cycles")
        except SdfUnmapped as exc:
            cache[key] = exc
    if isinstance(cache[key], SdfUnmapped):
        raise cache[key]
    return cache[key]


def finish_split(plan: KernelPlan, schedules: list[StreamingSchedule],
                 spec: StreamingEngineSpec, af_latency: int) -> SplitSchedule:
    """The batch and phase starts of ``plan.split``; raises StreamingInfeasible (``M2``) when
    the AF buffers of one iteration do not fit a tile's memories."""
    batch = batch_size(plan.split, schedules, spec)
    if batch < 1:
        raise StreamingInfeasible(["M2 capacity: the AF buffers of one iteration do not fit a "
                                   "tile's memories"])
    return SplitSchedule(plan.split, schedules, batch,
                         phase_starts(plan.split, schedules, batch, af_latency), af_latency)


def split_failure(plan: KernelPlan) -> list[str]:
    """The reasons of a kernel no split into up to :data:`MOST_SDFS` SDFs mapped."""
    return ((plan.single_error or [])
            + [f"split: no partition into {plan.first_split}..{MOST_SDFS} SDFs maps every part"]
            + plan.split_error)


def split_proof(reasons: list[str]) -> bool:
    """Whether ``reasons`` name a rule no split can fix (:data:`SPLIT_PROOF_RULES`)."""
    return any(r.split(":")[0] in SPLIT_PROOF_RULES for r in reasons)


# ---------------------------------------------------------------------------------------------
# the whole kernel
# ---------------------------------------------------------------------------------------------
def _schedule_split(plan: KernelPlan, spec: StreamingEngineSpec, settings: SolveSettings,
                    af_latency: int, say: Progress) -> KernelResult:
    cache: dict[tuple, SdfAnswer | SdfUnmapped] = {}
    while next_split(plan, spec) is not None:
        try:
            answers = [schedule_part(p, spec, settings, cache, say, floor=plan.floor(p.nodes))
                       for p in plan.split.parts]
            split = finish_split(plan, [a.schedule for a in answers], spec, af_latency)
            return KernelResult(plan, answers, split)
        except StreamingInfeasible as exc:
            plan.split_error = exc.reasons
            if split_proof(exc.reasons):
                raise StreamingInfeasible((plan.single_error or []) + exc.reasons) from None
            plan.parts += 1
    raise StreamingInfeasible(split_failure(plan))


def schedule_kernel(graph: Graph, spec: StreamingEngineSpec, settings: SolveSettings,
                    af_latency: int | None = None,
                    progress: Progress | None = None) -> KernelResult:
    """Map ``graph`` on ``spec``: plan, one SDF, else a split (see the module).

    ``af_latency`` overrides the spec's (cycles of one AF transfer). Raises
    StreamingInfeasible with the reasons in the user's terms when nothing maps.
    """
    say = progress or _quiet
    plan = plan_kernel(graph, spec, settings, say)
    if plan.unmappable:
        raise StreamingInfeasible(plan.unmappable)
    if plan.parts == 1:
        try:
            return KernelResult(plan, [schedule_sdf(plan.work, plan.work_problem, spec,
                                                    settings, say, floor=plan.floor())])
        except SdfUnmapped as exc:
            if any(repair_of(r) is None for r in exc.reasons):
                raise StreamingInfeasible(exc.reasons) from None
            plan.single_error, plan.parts = exc.reasons, plan.first_split
            say(f"one SDF does not map ({exc.reasons[0][:60]}); splitting")
    return _schedule_split(plan, spec, settings,
                           spec.af_latency if af_latency is None else af_latency, say)
