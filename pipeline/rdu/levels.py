"""The compiler levels of an RDU run, in order: cut, buffers, place-and-route.

Each level works on a shared :class:`CompileState`, raises
:class:`~pipeline.feedback.MappingError` when it cannot finish, and knows how
to adjust its own decisions when an error comes back to it (``fix``):

- ``cut`` (section cuts and resource estimation): the section model, with each
  section's stage-buffer PMUs (:mod:`formulations.sections.buffers`: learned by
  probing greedy cuts with the balancer before the first cut); when the buffer
  level finds a section too full it learns that section's buffers and re-cuts,
  and on other resource errors (or when nothing was learned) it raises the scale
  factor of the first failed section and re-cuts that section and those after
  it, keeping the earlier ones; on a latency bottleneck it forces a boundary
  between the two operations;
- ``buffers`` (stage-buffer insertion): balances every new section and turns
  the PMUs it adds into buffer units of the section; a section whose units no
  longer fit is reported before placement (predicted shortfall);
- ``place-route``: orders, places, routes and checks every section not yet
  compiled, stopping at the first failure; it fixes a routing failure itself
  first (``PNR_LOCAL``): placed again with a penalty on the sites around the
  over-used links (:data:`REPLACE_ROUNDS` times), then with a new seed and a
  more patient router (:data:`LOCAL_RETRIES` times), before sending it up to
  the cut as a resource error. Every attempt is a round of the trace.

Sections already compiled are reused across iterations (keyed by their nodes
and buffers), so a re-cut never recompiles the sections before it.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field, replace
from typing import Callable

from formulations.buffers import materialize_buffers
from formulations.sections import (Capacity, Section, SectionError, SectionPlan, cut_sections,
                                   cut_traffic, greedy_sections, materialize_banks)
from formulations.sections.buffers import fits_after_balancing, learn_demand
from formulations.sections.costs import cut_costs, cut_time
from formulations.sections.cut import better, cut_cost
from formulations.sections.problem import assignment_of
from formulations.sections.portfolio import RunAll
from formulations.solver import to_epoch
from hardware import RduFabric, RduSpec
from model.graph import Graph
from pipeline.budget import CUT_WALL_SHARE, MAPPING_SHARE, RunPlan
from pipeline.feedback import (CheckerRejected, ErrorCode, ErrorHandlingData, Level,
                               MappingError, SectionUsage)
from pipeline.cluster import Workers, run_batch
from pipeline.options import RunOptions
from pipeline.rdu.section_pass import SectionFailure, SectionOutcome, congestion_penalty
from pipeline.rdu.section_task import (FAST_PATH_SECONDS, PAST_DEADLINE, BufferResult, BufferTask,
                                   SectionResult, SectionTask, balance_buffers, compile_section,
                                   section_seed)
from pipeline.rdu.twins import renaming, twins_of
from pipeline.stage import stage_record
from sim.check import CheckReport, check_section

__all__ = ["CompileState", "SectionWork", "CutLevel", "BufferLevel", "PlaceRouteLevel",
           "default_levels", "fast_path_reason", "SCALE_STEP", "REPLACE_ROUNDS", "LOCAL_RETRIES",
           "FAST_PATH_SECONDS", "PAST_DEADLINE", "PARALLEL_MIN_SECONDS"]

#: A raised scale factor grows by at least this much per feedback round.
SCALE_STEP = 1.25
#: Re-placements of a section with a congestion penalty after a routing failure.
REPLACE_ROUNDS = 2
#: Then place-and-route retries with a new seed, before a resource error.
LOCAL_RETRIES = 1
#: Planned seconds of a level's sections together from which the level starts workers that
#: the run has not started (their boot costs a second of two cores). Workers already started
#: take any batch worth a round trip (:data:`~pipeline.cluster.BATCH_PARALLEL_SECONDS`).
PARALLEL_MIN_SECONDS = 8.0
#: Greedy cuts probed at most before the first cut, to learn each edge's buffer PMUs.
PROBE_ROUNDS = 6
#: Planned seconds of one section's balancing in a probe (below the balancer's threshold
#: for simulating the section: the probe needs the PMUs only).
PROBE_SECONDS = 0.05
#: Share of the cut's planned seconds the probes may use (a probe is begun only when all of
#: its balancing fits in what is left of it): bert_L-12 training at 20 s probed 4 greedy cuts
#: of 32 sections, 6.1 planned seconds and 9 s of wall time, when the whole cut was planned
#: 4.4 s and the mapping's deadline was 17.4 s away.
PROBE_SHARE = 0.5
#: Whole re-cuts at most when the first cut's own sections, balanced, do not fit
#: (:meth:`CutLevel._confirmed`).
CONFIRM_ROUNDS = 2
#: Least share of the run's plan, in planned seconds the first cut left unspent, for which
#: the cut level also tries the plain least-traffic cut when it cuts again
#: (:meth:`CutLevel._recut`).
PLAIN_MIN_SHARE = 0.01


@dataclass
class SectionWork:
    """One section on its way down the levels."""

    section: Section
    graph: Graph | None = None                  # with buffer units, after the buffer level
    edge_map: dict[int, list[int]] = field(default_factory=dict)  # global edge -> local edges
    buffer_rows: dict[int, dict] = field(default_factory=dict)    # global edge -> row
    buffer_lines: list[str] = field(default_factory=list)
    outcome: SectionOutcome | None = None
    check: CheckReport | None = None
    reused: bool = False

    @property
    def key(self) -> tuple:
        return tuple(self.section.nodes)

    @property
    def size(self) -> int:
        """Nodes to compile: buffer units included once balanced."""
        return len(self.graph.nodes) if self.graph else len(self.section.nodes)


@dataclass
class CutDecisions:
    """What the cut decided and learned, which the feedback revises between rounds."""

    plan: SectionPlan | None = None                # the last cut of the whole graph
    scales: dict[int, dict[str, float]] = field(default_factory=dict)   # per section
    default_scale: dict[str, float] = field(
        default_factory=lambda: {"pcu": 1.0, "pmu": 1.0, "units": 1.0})
    buffer_demand: dict[tuple[str, str], float] = field(default_factory=dict)  # per edge
    separate: list[tuple[str, str]] = field(default_factory=list)  # nodes kept apart
    recut_from: int | None = None                  # the section a re-cut starts from


@dataclass
class SectionMemo:
    """What is known of each section (keyed by its nodes) across feedback rounds."""

    compiled: dict[tuple, SectionWork] = field(default_factory=dict)
    buffered: dict[tuple, SectionWork] = field(default_factory=dict)
    retries: dict[tuple, int] = field(default_factory=dict)    # local fixes per section
    penalties: dict[tuple, dict[str, float]] = field(default_factory=dict)  # site penalties
    failures: dict[tuple, SectionFailure] = field(default_factory=dict)  # the last one
    reused: int = 0                                # sections compiled once, used again


@dataclass
class CompileState:
    """Everything the levels share: the inputs and the run's services, the sections on
    their way down, the cut's decisions, what is known per section, and the record."""

    graph: Graph
    spec: RduSpec
    fabric: RduFabric
    options: RunOptions
    say: Callable[[str], None] = lambda line: None
    cap: Capacity | None = None
    run_plan: RunPlan = field(default_factory=lambda: RunPlan(60.0))
    advance: Callable[[], None] = lambda: None    # one section compiled (progress bars)
    workers: Workers = field(default_factory=Workers)   # where sections compile
    work: list[SectionWork] = field(default_factory=list)
    cut: CutDecisions = field(default_factory=CutDecisions)
    memo: SectionMemo = field(default_factory=SectionMemo)
    stages: list[dict] = field(default_factory=list)     # the stage records, in order
    trace: list[dict] = field(default_factory=list)      # the feedback rounds

    def nodes_left(self) -> int:
        """Nodes of the sections not compiled yet (buffer units included where known).

        Linear in the sections: the levels call it once per run and keep the
        count as they go, so thousands of sections stay linear.
        """
        return sum(w.size for w in self.work if w.outcome is None)

    def usage(self, failed: int | None = None, lack: bool = False) -> list[SectionUsage]:
        """Every section's sites needed (buffer units included) against capacity."""
        rows = []
        for w in self.work:
            graph = w.graph or self.graph.subgraph(w.section.nodes)
            d = sites_needed(graph)
            s = w.section
            rows.append(SectionUsage(s.id, d["pcu"], d["pmu"], d["units"], self.cap.pcu,
                                     self.cap.pmu, self.cap.total,
                                     s.pcu + s.pmu + s.any + s.buffers,
                                     failed=s.id == failed,
                                     lack_of_resource=lack and s.id == failed,
                                     estimated_pcu=s.pcu, estimated_pmu=s.pmu + s.buffers))
        return rows


def sites_needed(graph: Graph) -> dict[str, float]:
    """Sites placement will use: one of its unit kind per node.

    ``graph`` is a section after the buffer level: stage buffers and the banks
    and lanes of multi-unit nodes are nodes of their own, so this is the
    actual usage the feedback compares with the cutter's estimates.
    """
    total = {"pcu": 0.0, "pmu": 0.0, "any": 0.0, "agcu": 0.0}
    for node in graph.nodes:
        total[node.unit] += 1
    total["units"] = total["pcu"] + total["pmu"] + total["any"]
    return total


# ---------------------------------------------------------------------------------------------
class CutLevel(Level):
    """Section cuts with the section model; fixes resource errors and latency bottlenecks.

    With a ``balancer`` (the buffer level's), the first cut probes greedy cuts to learn
    each edge's stage-buffer PMUs (:meth:`_probe`), so that its sections fit after
    balancing."""

    name = "cut"

    def __init__(self, balancer: "Balancer | None" = None):
        self.balancer = balancer
        #: The first cut's own balancing found a section too full and the cut's wall share
        #: ran out before it could cut again (:meth:`_confirmed`).
        self.uncut = False

    def run(self, state: CompileState) -> None:
        if state.work and state.cut.recut_from is None:
            return
        if state.work and state.run_plan.overdue():     # a re-cut nothing could place in time
            raise _out_of_time(state, state.work[state.cut.recut_from], 0, 0.0, self.name)
        keep = state.work[:state.cut.recut_from] if state.work else []
        kept_nodes = {n for w in keep for n in w.section.nodes}
        rest = [n for n in state.graph.node_ids if n not in kept_nodes]
        started = time.perf_counter()
        scales = {k - len(keep): s for k, s in state.cut.scales.items() if k >= len(keep)}
        scales = {k: scales.get(k, state.cut.default_scale) for k in range(len(rest) + 1)}
        graph = state.graph.subgraph(rest)
        separate = [p for p in state.cut.separate if p[0] in rest]
        try:
            settings = _cut_settings(state.options, state.run_plan)
            first = not state.work
            probe = self._probe(state, graph, scales, separate,
                                PROBE_SHARE * settings.time_limit,
                                settings.deadline) if first else {}
            settings = replace(settings, time_limit=settings.time_limit
                               - probe.get("probe_planned", 0.0))
            plan = _cut(state, graph, settings, scales, separate, len(keep))
            if first:
                plan = self._confirmed(state, graph, plan, scales, separate, settings.deadline)
        except SectionError as exc:
            raise MappingError(ErrorHandlingData(ErrorCode.UNRESOLVABLE, self.name, str(exc)))
        plan.extra |= probe
        if "bound_with_buffers" in plan.extra:
            plan.extra["bound_with_buffers"] += len(keep)
        state.work = keep + [SectionWork(s) for s in plan.sections]
        state.cut.plan = plan if not keep else state.cut.plan
        state.cut.recut_from = None
        last = plan.results[-1] if plan.results else None
        state.stages.append(stage_record(
            "sections", None, plan.method, started, objective=plan.traffic,
            bound=plan.bound_traffic, status=plan.status,
            backend=last.backend if last else None,
            extra=dict(sections=plan.count, lower_bound=plan.lower_bound + len(keep),
                       greedy_sections=plan.greedy_sections, greedy_traffic=plan.greedy_traffic,
                       recut_from=len(keep) if keep else None) | plan.extra))
        buffered = plan.extra.get("bound_with_buffers")
        state.say(f"{plan.count + len(keep)} section(s) (lower bound "
                  f"{plan.lower_bound + len(keep)}"
                  + (f", {buffered} with stage buffers" if buffered is not None else "")
                  + f", greedy {plan.greedy_sections + len(keep)})")

    def _probe(self, state: CompileState, graph: Graph, scales: dict, separate: list,
               seconds: float, until: float) -> dict:
        """Learn each edge's buffer PMUs (``state.cut.buffer_demand``) from greedy cuts: cut
        with the demand learned so far, balance every section (at once on the run's
        workers), learn what balancing added, until the greedy cut fits after balancing,
        a probe raises no edge's demand (the next would be the same cut, balanced alike),
        or :data:`PROBE_ROUNDS` probes, or until the next probe's balancing would pass
        ``seconds`` planned or the cut's wall-clock cap ``until`` (``time.monotonic()``).
        Deterministic: each balancing is planned :data:`PROBE_SECONDS`.
        Returns what the stage record reports."""
        if self.balancer is None:
            return {}
        planned, rounds, overfull, batches = 0.0, 0, 0, []
        while rounds < PROBE_ROUNDS and state.run_plan.clock() < until:
            sections = greedy_sections(graph, state.cap, scales, separate, state.cut.buffer_demand)
            probe = _Probe(state, self.balancer, graph, sections, until)
            if planned + probe.planned > seconds:
                break                 # the cut's share would not cover this probe
            rounds += 1
            planned += probe.planned
            results = probe.balanced()
            overfull = raised = 0
            batches.append(probe.seconds(results))
            for s, sub, result in zip(sections, probe.subs, results):
                raised += learn_demand(state.cut.buffer_demand, sub.edges, result.added)
                overfull += not fits_after_balancing(s, sum(result.added.values()), state.cap)
            if not overfull or not raised:
                break         # fits, or the next probe would repeat this one exactly
        if rounds > 1 or overfull:
            state.say(f"stage buffers learned from {rounds} greedy cut(s): "
                      f"{sum(state.cut.buffer_demand.values()):g} PMUs on "
                      f"{len(state.cut.buffer_demand)} edges")
        return {"probe_rounds": rounds, "probe_planned": planned,
                "buffer_demand_pmus": sum(state.cut.buffer_demand.values()),
                "seconds_of_probe_batches": batches}

    def _confirmed(self, state: CompileState, graph: Graph, plan: SectionPlan, scales: dict,
                   separate: list, until: float) -> SectionPlan:
        """The first cut with its own sections balanced once (one probe of the model's cut,
        :data:`PROBE_SECONDS` a section), so that the buffer level finds them fitting.

        The greedy probes teach only the edges that greedy cuts put inside a section; the
        model's cut puts others together (gnmt training on plasticine: its section 2 needed
        183 PMUs with its stage buffers, 64 fit, and the feedback's re-cut from section 2
        left 5 sections at 0.908x the old code's throughput). A section that overflows
        after balancing teaches its edges (the lazily added cut) and the graph is cut again
        (:meth:`_recut`), at most :data:`CONFIRM_ROUNDS` times, all before the cut's
        wall-clock cap ``until``; past it the feedback re-cuts from the section too full.
        What the balancing of a fitting cut cannot know (routing) stays with the feedback."""
        if self.balancer is None:
            return plan
        costs = cut_costs(graph, state.spec)
        recuts, learned, batches, plain = 0, [], [], None
        left = _unspent(plan)
        overfull = self._confirm(state, graph, plan, until, batches, learned)
        while overfull and recuts < CONFIRM_ROUNDS and state.run_plan.clock() < until:
            state.say(f"section(s) {', '.join(map(str, overfull))} of the cut need more PMUs "
                      f"with their stage buffers than the chip has; cut again with "
                      f"{sum(state.cut.buffer_demand.values()):g} buffer PMUs learned")
            recuts += 1
            plan, overfull, plain = self._recut(state, graph, plan, overfull, scales, separate,
                                                until, batches, learned, plain, left)
        self.uncut = bool(overfull)
        plan.extra.setdefault("estimated_cycles_per_sample",
                              cut_time(graph, assignment_of(plan.sections), costs))
        plan.extra |= {"confirm_recuts": recuts, "confirm_overfull": learned,
                       "seconds_of_confirm_batches": batches,
                       "plain_cut_kept": plan is plain}
        return plan

    def _recut(self, state: CompileState, graph: Graph, plan: SectionPlan, overfull: list,
               scales: dict, separate: list, until: float, batches: list, learned: list,
               plain: SectionPlan | None, left: float
               ) -> tuple[SectionPlan, list[int], SectionPlan | None]:
        """``plan``, whose sections ``overfull`` are too full, cut again with the buffer
        demand learned so far, on a fresh cut share of the plan (what a feedback round's
        re-cut takes): the candidates below, each balanced likewise; the fitting one of
        fewest sections, then least estimated time (:func:`_fastest`), with the sections
        still too full; and the plain candidate, made once.

        - The repair (:func:`_repaired`): the sections from the first too full to one past
          the last cut again, the others kept, on the share's part in proportion to its
          nodes. A large graph's first cut spends its plan on a search that a re-cut of
          the whole on one share does not match: resnet50 training on plasticine, first
          cut 170 M cycles a sample estimated; the whole re-cut on a share 178 M (7.83
          samples/s), on half a share 192 M (6.95); the feedback's 174 M (8.10).
        - The whole graph, on the rest of the share, unless the repair fits in as many
          sections as ``plan``: then what the whole re-cut could gain is time alone, and
          its wall time (resnet50 training: 10-25 s, most of the cut's wall share on this
          2-core machine) is worth more to placement and routing.
        - Once, first, the cut of least traffic that counts no buffers (the code before
          issue 33's), on the ``left`` planned seconds the first cut left unspent (a proven
          optimum early), when they are at least :data:`PLAIN_MIN_SHARE` of the run's
          plan: it takes nothing from placement and routing. The learned demand is each
          edge's largest over the cuts balanced, while balancing spreads a section's delay
          over its edges in more than one way: on gnmt training, 8 edges carried 128
          learned PMUs that the plain cut's section 3 needs none of (its first cut was
          proven optimal on a fifth of its plan; the plain cut is kept: 4 sections, 104.2
          samples/s). Its balancing is learned after the others, whose demand stays what
          the cuts before taught."""
        if plain is None and left >= PLAIN_MIN_SHARE * state.run_plan.total:
            plain = _cut(state, graph, _cut_settings(state.options, state.run_plan, left),
                         scales, separate, 0, buffers={}, costs=None)
        share = _cut_settings(state.options, state.run_plan)
        window = sum(len(s.nodes) for s in plan.sections[min(overfull):max(overfull) + 2])
        repair = _repaired(state, graph, plan, overfull, scales, separate, share.with_time(
            share.time_limit * window / len(graph.nodes)))
        candidates = [(repair, self._confirm(state, graph, repair, until, batches, learned))
                      ] if repair else []
        if not candidates or candidates[0][1] or repair.count > plan.count:
            spent = repair.extra["planned_spent"] if repair else 0.0
            whole = _cut(state, graph, share.with_time(share.time_limit - spent), scales,
                         separate, 0)
            candidates.insert(0, (whole, self._confirm(state, graph, whole, until, batches,
                                                       learned)))
        if plain is not None and "overfull" not in plain.extra:
            plain.extra["overfull"] = self._confirm(state, graph, plain, until, batches,
                                                    learned)
        if plain is not None:
            candidates.append((plain, plain.extra["overfull"]))
        return _fastest(graph, cut_costs(graph, state.spec), candidates) + (plain,)

    def _confirm(self, state: CompileState, graph: Graph, plan: SectionPlan, until: float,
                 batches: list, learned: list) -> list[int]:
        """Balance ``plan``'s sections, learn their edges' buffer PMUs; the ids of the
        sections that fit without them and not with them (as the buffer level counts:
        :func:`_fits_balanced`; a section too full without them is the estimates' error,
        which the feedback's scale factor fixes), also appended to ``learned``. The balancings'
        wall seconds go to ``batches``."""
        probe = _Probe(state, self.balancer, graph, plan.sections, until)
        results = probe.balanced()
        batches.append(probe.seconds(results))
        overfull = []
        for s, sub, result in zip(plan.sections, probe.subs, results):
            learn_demand(state.cut.buffer_demand, sub.edges, result.added)
            if _fits_balanced(sub, {}, state.cap) and not _fits_balanced(sub, result.added,
                                                                          state.cap):
                overfull.append(s.id)
        learned.append(overfull)
        return overfull

    def fix(self, state: CompileState, data: ErrorHandlingData) -> str | None:
        if data.code == ErrorCode.LATENCY_BOTTLENECK:
            return self._separate(state, data)
        k = data.first_failed
        work = state.work[k]
        if len(work.section.nodes) <= 1:
            return None          # one node that does not fit: nothing to cut
        if data.code == ErrorCode.RESOURCE_TOO_LOW_PREDICTED and self._demand_unused(state):
            state.cut.recut_from = k
            return (f"section {k} needs more PMUs with its stage buffers than its cut "
                    f"counted; buffer demand learned from the balanced sections "
                    f"({sum(state.cut.buffer_demand.values()):g} PMUs); re-cut from section {k}")
        usage = data.sections[k] if k < len(data.sections) else None
        old = dict(state.cut.scales.get(k, state.cut.default_scale))
        unit = {"any": "units"}.get(data.hints.get("unit"), data.hints.get("unit"))
        new = _clamped(_raised_scale(old, usage, unit), old, state)
        if new == old:
            return None          # every node already fills a section at this scale
        state.cut.scales[k] = new
        # the estimate error seen here is likely systematic: plan later sections alike
        state.cut.default_scale = {r: max(state.cut.default_scale.get(r, 1.0), v)
                                   for r, v in new.items()}
        state.cut.recut_from = k
        return (f"scale factor of section {k}: {_show(old)} -> {_show(new)}; "
                f"re-cut from section {k}")

    def _demand_unused(self, state: CompileState) -> bool:
        """Whether the cut has buffer demand it has not cut with: learned now from the
        balanced sections (:meth:`_learned`), or by its own balancing of a cut it then had no
        time to cut again (:meth:`_confirmed`: learned, but not yet used)."""
        unused = self._learned(state) or self.uncut
        self.uncut = False
        return unused

    @staticmethod
    def _learned(state: CompileState) -> bool:
        """Learn the buffer PMUs of every balanced section (the lazily added cut: the
        demand that forbids the section found too full); whether anything was new."""
        raised = 0
        for w in state.work:
            added = {i: row.get("pmus_added") or 0 for i, row in w.buffer_rows.items()}
            raised += learn_demand(state.cut.buffer_demand, state.graph.edges, added)
        return raised > 0

    def _separate(self, state: CompileState, data: ErrorHandlingData) -> str | None:
        a, b = data.hints["pair"]
        if (a, b) in state.cut.separate:
            return None
        state.cut.separate.append((a, b))
        where = {n: w.section.id for w in state.work for n in w.section.nodes}
        state.cut.recut_from = where[a]
        return f'stage boundary moved between "{a}" and "{b}"; re-cut from section {where[a]}'


def _fastest(graph: Graph, costs, candidates: list[tuple[SectionPlan, list[int]]]
             ) -> tuple[SectionPlan, list[int]]:
    """Of ``candidates`` (a cut, its sections too full), the fitting one of fewest sections,
    then least estimated time (the earlier on a tie); the first when none fits."""
    best = candidates[0]
    for plan, overfull in candidates[1:]:
        if not overfull and (best[1] or plan.count < best[0].count or (
                plan.count == best[0].count and better(
                    cut_cost(graph, assignment_of(plan.sections), costs),
                    cut_cost(graph, assignment_of(best[0].sections), costs)))):
            best = (plan, overfull)
    return best


def _repaired(state: CompileState, graph: Graph, plan: SectionPlan, overfull: list[int],
              scales: dict, separate: list, settings) -> SectionPlan | None:
    """``plan`` with only its sections from the first too full to one past the last cut
    again, with the demand learned (the feedback's partial re-cut, which keeps the sections
    after too); None when that window is the whole graph."""
    first, last = min(overfull), min(max(overfull) + 1, plan.count - 1)
    if first == 0 and last == plan.count - 1:
        return None
    nodes = [v for s in plan.sections[first:last + 1] for v in s.nodes]
    sub = graph.subgraph(nodes)
    part = _cut(state, sub, settings, {k - first: scale for k, scale in scales.items()
                                       if k >= first}, [p for p in separate if p[0] in sub],
                first)
    sections = [replace(s) for s in plan.sections[:first]] + part.sections + [
        replace(s) for s in plan.sections[last + 1:]]
    for k, section in enumerate(sections):
        section.id = k
    return replace(plan, sections=sections, traffic=cut_traffic(graph, sections),
                   results=plan.results + part.results, method=f"{plan.method}, repaired",
                   extra={key: plan.extra[key] for key in ("bound_with_buffers",)
                          if key in plan.extra} | {"repaired": [first, last],
                                                   "planned": part.extra.get("planned"),
                                                   "planned_spent": part.extra.get(
                                                       "planned_spent", 0.0)})


def _unspent(plan: SectionPlan) -> float:
    """Planned seconds the cut ``plan`` left unspent (it stopped at a proven optimum); none
    when the wall clock cut it short."""
    if plan.extra.get("cut_short") or "planned_spent" not in plan.extra:
        return 0.0
    return max(0.0, plan.extra["planned"] - plan.extra["planned_spent"])


def _cut(state: CompileState, graph: Graph, settings, scales: dict, separate: list,
         first_id: int, **how) -> SectionPlan:
    """The section cut of ``graph`` (:func:`~formulations.sections.cut_sections`): with the
    buffer demand learned so far and the time objective, unless ``how`` says otherwise
    (``buffers``, ``costs``)."""
    how = {"buffers": state.cut.buffer_demand, "costs": cut_costs(graph, state.spec)} | how
    return cut_sections(graph, state.cap, settings, scales, separate=separate,
                        first_id=first_id, run_all=_cut_runner(state), **how)


@dataclass
class _Probe:
    """One balancing of every section of a cut, :data:`PROBE_SECONDS` planned each (below
    the balancer's threshold for simulating: a probe needs the PMUs only), twins once."""

    state: CompileState
    balancer: "Balancer"
    graph: Graph
    sections: list[Section]
    until: float                # the cut's wall-clock cap (``state.run_plan.clock()``)
    subs: list[Graph] = field(init=False)
    tasks: list[BufferTask] = field(init=False)
    twins: dict[int, int] = field(init=False)

    def __post_init__(self):
        state = self.state
        settings = replace(state.run_plan.settings(state.options, "buffers", PROBE_SECONDS),
                           deadline=None, export_dir=None)
        deadline = to_epoch(self.until, state.run_plan.clock)
        self.subs = [self.graph.subgraph(s.nodes, name=f"{self.graph.name}/probe{s.id}")
                     for s in self.sections]
        self.twins = twins_of(self.subs)
        self.tasks = [BufferTask(sub, state.spec, s.id, state.options, settings, self.balancer,
                                 deadline)
                      for k, (s, sub) in enumerate(zip(self.sections, self.subs))
                      if k not in self.twins]

    @property
    def planned(self) -> float:
        return PROBE_SECONDS * len(self.tasks)

    def balanced(self) -> list[BufferResult]:
        return _balanced(self.state, self.tasks, self.twins, [s.id for s in self.sections])

    @staticmethod
    def seconds(results: list[BufferResult]) -> list[float]:
        """The wall seconds of the balancings that ran (a batch of the cut)."""
        return [round(r.stage.get("time") or 0.0, 3) for r in results
                if "twin_of" not in r.stage]


def _raised_scale(old: dict[str, float], usage: SectionUsage | None,
                  unit: str | None) -> dict[str, float]:
    """Raise the scale of each resource the section overflowed.

    To at least SCALE_STEP times the old factor, and to the ratio of sites used
    to sites estimated (so one round usually suffices). A placement failure
    names the unit kind that ran out even when the counts looked fine.
    """
    new = dict(old)
    if usage is None:
        return {r: v * SCALE_STEP for r, v in old.items()}
    checks = {"pcu": (usage.pcu, usage.estimated_pcu, usage.pcu_capacity),
              "pmu": (usage.pmu, usage.estimated_pmu, usage.pmu_capacity),
              "units": (usage.units, usage.estimated_units, usage.unit_capacity)}
    for resource, (used, estimated, capacity) in checks.items():
        if used > capacity or resource == unit:
            ratio = used / estimated if estimated else SCALE_STEP
            new[resource] = max(old.get(resource, 1.0) * SCALE_STEP, ratio * 1.02)
    if new == old:
        new = {r: v * SCALE_STEP for r, v in old.items()}
    return new


def _clamped(new: dict[str, float], old: dict[str, float], state: CompileState
             ) -> dict[str, float]:
    """``new`` with no factor beyond what lets the largest node still fit one section:
    a section whose estimate was near zero (its PMUs came from stage buffers) would
    otherwise raise the factor a thousandfold and make single nodes unplaceable.

    Never below ``old`` (a clamp to ``old`` means no progress is left)."""
    largest = {"pcu": 0.0, "pmu": 0.0, "units": 0.0}
    for n in state.graph.nodes:
        pcu, pmu = n.pcu or 0.0, n.pmu or 0.0
        largest = {"pcu": max(largest["pcu"], pcu), "pmu": max(largest["pmu"], pmu),
                   "units": max(largest["units"], pcu + pmu)}
    capacity = {"pcu": state.cap.pcu, "pmu": state.cap.pmu, "units": state.cap.total}
    return {r: max(old.get(r, 1.0), min(v, capacity[r] / largest[r]))
            if largest.get(r) else v for r, v in new.items()}


def _show(scale: dict[str, float]) -> str:
    return "{" + ", ".join(f"{r} {v:.3g}" for r, v in sorted(scale.items())) + "}"


def _cut_runner(state: CompileState) -> RunAll | None:
    """Where the cut's solves run (:func:`~pipeline.cluster.run_batch`); the cut is the same
    either way."""
    if not state.workers.started:
        return None

    def run_all(function: Callable, tasks: list[tuple], done: Callable) -> list | None:
        planned = sum(task[0].seconds for task in tasks)
        return run_batch(state.workers, function, tasks, planned, done, here=None,
                         sizes=[len(task[0].graph.nodes) for task in tasks])
    return run_all


def _balanced(state: CompileState, tasks: list[BufferTask], twins: dict[int, int],
              sections: list[int]) -> list[BufferResult]:
    """The balancing of each of ``sections`` (ids), in order: ``tasks`` are those of the
    sections that are no twin (:mod:`pipeline.rdu.twins`), run as one batch; a twin takes its
    first's result (a result is per local edge, the same for sections of one shape)."""
    results = iter(run_batch(state.workers, balance_buffers, [(task,) for task in tasks],
                             sum(task.settings.time_limit for task in tasks),
                             sizes=[len(task.graph.nodes) for task in tasks]))
    balanced: list[BufferResult] = []
    for k, section in enumerate(sections):
        if k not in twins:
            balanced.append(next(results))
            continue
        first = balanced[twins[k]]
        header = f"#### Stage buffers (section {sections[twins[k]]})"
        lines = [f"#### Stage buffers (section {section})" if line == header else line
                 for line in first.lines]
        balanced.append(BufferResult(dict(first.rows), dict(first.added), lines,
                                     first.stage | {"section": section,
                                                    "twin_of": sections[twins[k]]}))
    return balanced


def _cut_settings(options, run_plan: RunPlan, seconds: float | None = None):
    """The section cut's SolveSettings: its backend, the run's seed and export folder, its
    wall-clock cap :data:`~pipeline.budget.CUT_WALL_SHARE` of the way to the deadline; a
    fresh cut share of the plan, or ``seconds`` already planned."""
    seconds = seconds if seconds is not None else (options.section_time_limit
                                                   or run_plan.cut_seconds())
    return run_plan.settings(options, "sections", seconds, until=CUT_WALL_SHARE)


# ---------------------------------------------------------------------------------------------
#: ``balancer(section graph, spec, options, settings, section=id)`` -> an object with ``rows``
#: (local edge -> mapping.json buffers row), ``stage`` and ``report_lines()``.
Balancer = Callable[..., object]


class BufferLevel(Level):
    """Stage-buffer balancing per section; inserted PMUs become buffer units."""

    name = "buffers"

    def __init__(self, balancer: Balancer | None = None):
        self.balancer = balancer

    def run(self, state: CompileState) -> None:
        """Balance every new section (each one's plan from the sizes before balancing,
        so all are planned at once and may run at once on workers), then check that
        each section still fits with its buffer units."""
        pending: list[tuple[SectionWork, Graph]] = []
        for w in state.work:
            done = state.memo.buffered.get(w.key)
            if done is not None:
                w.graph, w.edge_map, w.buffer_rows, w.buffer_lines = (
                    done.graph, done.edge_map, done.buffer_rows, done.buffer_lines)
            elif self.balancer is None:
                _with_buffer_units(state, w)
                state.memo.buffered[w.key] = w
            else:
                pending.append((w, state.graph.subgraph(
                    w.section.nodes, name=f"{state.graph.name}/section{w.section.id}")))
        twins = twins_of([sub for _, sub in pending])
        left = state.nodes_left() - sum(w.size for k, (w, _) in enumerate(pending) if k in twins)
        todo = [(w, self._task(state, w, sub, left)) for k, (w, sub) in enumerate(pending)
                if k not in twins]
        results = _balanced(state, [task for _, task in todo], twins,
                            [w.section.id for w, _ in pending])
        for (w, sub), result in zip(pending, results):
            _with_buffer_units(state, w, sub, result)
            state.memo.buffered[w.key] = w
        for w in state.work:
            d = sites_needed(w.graph)
            if not _fits(d, state.cap):
                raise MappingError(ErrorHandlingData(
                    ErrorCode.RESOURCE_TOO_LOW_PREDICTED, self.name,
                    f"section {w.section.id} needs {d['pcu']:g} PCU + {d['pmu']:g} PMU with its "
                    f"stage buffers, more than the {state.cap.pcu} PCU + {state.cap.pmu} PMU "
                    "of the chip", state.usage(w.section.id, lack=True), w.section.id,
                    [x.section.id for x in state.work if x.section.id < w.section.id]))

    def _task(self, state: CompileState, w: SectionWork, sub: Graph, nodes_left: int
              ) -> BufferTask:
        """Section ``w``'s balancing: its graph as cut (``sub``) and its share of the plan."""
        seconds = state.run_plan.buffer_seconds(len(sub.nodes), nodes_left)
        settings = state.run_plan.settings(state.options, "buffers", seconds)
        return BufferTask(sub, state.spec, w.section.id, state.options,
                          replace(settings, deadline=None), self.balancer,
                          to_epoch(state.run_plan.deadline, state.run_plan.clock))


def _with_buffer_units(state: CompileState, w: SectionWork, sub: Graph | None = None,
                       result: BufferResult | None = None) -> None:
    """Give ``w`` its buffer units: those of ``result`` (balancing of ``sub``), or none
    (no buffer level ran: the place-and-route level calls it too)."""
    if sub is None:
        sub = state.graph.subgraph(w.section.nodes, name=f"{state.graph.name}/section"
                                                         f"{w.section.id}")
    index = state.graph.induced_edges(w.section.nodes)    # the subgraph's edges, in order
    added: dict[int, int] = {}
    if result is not None:
        w.buffer_rows = {index[local]: row for local, row in result.rows.items()}
        w.buffer_lines, added = result.lines, result.added
        state.stages.append(result.stage)
    w.graph, local_map = _with_buffers(sub, added)
    w.edge_map = {index[local]: chain for local, chain in local_map.items()}


def _fits(d: dict[str, float], cap: Capacity) -> bool:
    return d["pcu"] <= cap.pcu and d["pmu"] <= cap.pmu and d["units"] <= cap.total \
        and d["agcu"] <= cap.agcu


def _with_buffers(sub: Graph, added: dict[int, int]) -> tuple[Graph, dict[int, list[int]]]:
    """Section ``sub`` as placement will see it: ``added`` PMUs of stage buffers per local
    edge (:func:`materialize_buffers`), banks and lanes of multi-unit nodes
    (:func:`~formulations.sections.materialize_banks`); and each edge's local chain."""
    buffered, local_map = materialize_buffers(sub, added)
    return materialize_banks(buffered), local_map


def _fits_balanced(sub: Graph, added: dict[int, int], cap: Capacity) -> bool:
    """Whether section ``sub`` fits the chip with the buffers balancing ``added``."""
    return _fits(sites_needed(_with_buffers(sub, added)[0]), cap)


# ---------------------------------------------------------------------------------------------
class PlaceRouteLevel(Level):
    """Order, place, route and check each section not compiled yet."""

    name = "place-route"

    def run(self, state: CompileState) -> None:
        """Plan every section not compiled yet (in order: the plan is deterministic),
        compile them all (on workers when at hand), then apply the results in order:
        the first failure goes to the feedback loop, the sections that succeeded are
        kept for the next round whatever the number of workers."""
        sections: list[SectionWork] = []
        for w in state.work:
            if w.graph is None:      # no buffer level ran: the section as cut
                _with_buffer_units(state, w)
            done = state.memo.compiled.get(self._key(w))
            if done is not None:     # compiled in an earlier iteration: reuse, never redo
                w.outcome, w.check, w.reused = done.outcome, done.check, True
                state.memo.reused += 1
            else:
                sections.append(w)
        twins = twins_of([None if w.key in state.memo.penalties or state.memo.retries.get(w.key)
                          else w.graph for w in sections])
        started = time.perf_counter()
        todo = self._plan(state, [w for k, w in enumerate(sections) if k not in twins])
        results = self._finish(state, todo, self._compile_all(state, todo))
        todo, results = self._with_twins(state, sections, twins, todo, results)
        failed = [(w, r) for (w, _), r in zip(todo, results) if not self._keep(state, w, r)]
        if failed:
            w, result = failed[0]
            if result.outcome is None:
                raise _out_of_time(state, w, len(todo) - len(failed),
                                   time.perf_counter() - started, self.name)
            self._raise(state, w, result.outcome)

    @staticmethod
    def _key(w: SectionWork) -> tuple:
        return (w.key, tuple(n.id for n in w.graph.nodes))

    def _plan(self, state: CompileState, sections: list[SectionWork]
              ) -> list[tuple[SectionWork, SectionTask]]:
        """Each section's task, in order, each planned a share of what is still unplanned in
        proportion to its nodes among those of the sections from it on."""
        left, todo = sum(w.size for w in sections), []
        for w in sections:
            todo.append((w, self._task(state, w, left)))
            left -= w.size
        return todo

    def _with_twins(self, state: CompileState, sections: list[SectionWork],
                    twins: dict[int, int], todo: list, results: list[SectionResult]
                    ) -> tuple[list, list[SectionResult]]:
        """Every section's task and result in ``sections``' order: a twin
        (:mod:`pipeline.rdu.twins`)
        takes its first's answer renamed and checked; one whose first did not land, or whose
        renamed answer the checker refuses, is compiled on its own."""
        done = {id(w): (task, result) for (w, task), result in zip(todo, results)}
        alone = []
        for k, first in twins.items():
            twin = _renamed(state, sections[first], done[id(sections[first])][1], sections[k])
            if twin is None:
                alone.append(sections[k])
            else:
                done[id(sections[k])] = (None, twin)
                state.advance()
        if twins:
            state.say(f"{len(twins) - len(alone)} section(s) of the same shape as an earlier one "
                      f"took its placement and routes, renamed and checked")
        if alone:
            again = self._plan(state, alone)
            for (w, task), result in zip(again, self._finish(state, again,
                                                             self._compile_all(state, again))):
                done[id(w)] = (task, result)
        return ([(w, done[id(w)][0]) for w in sections], [done[id(w)][1] for w in sections])

    def _task(self, state: CompileState, w: SectionWork, nodes_left: int) -> SectionTask:
        """Section ``w``'s task: its seed, its share of the plan, its fast-path reason."""
        options = replace(state.options, seed=section_seed(state.options.seed, w.section.nodes))
        reseeds = state.memo.retries.get(w.key, 0) - REPLACE_ROUNDS
        if reseeds > 0:   # another seed and a more patient router
            config = options.router_config
            options = replace(options, seed=_retry_seed(options.seed, reseeds),
                              router_config=replace(
                                  config, max_iterations=config.max_iterations * (1 + reseeds)))
        place, route = state.run_plan.place_route_seconds(len(w.graph.nodes), nodes_left)
        settings = (state.run_plan.settings(options, "placement", place),
                    state.run_plan.settings(options, "routing", route))
        plan = state.run_plan                             # workers may be other machines
        return SectionTask(w.graph, state.spec, w.section.id, options, settings,
                           state.memo.penalties.get(w.key),
                           fast_path_reason(options, place + route),
                           to_epoch(plan.deadline, plan.clock),
                           to_epoch(plan.deadline + plan.grace, plan.clock),
                           to_epoch(plan.deadline + plan.grace + plan.slack, plan.clock))

    def _compile_all(self, state: CompileState, todo: list) -> list[SectionResult]:
        """Every task's result, in order: on the run's workers when the plan is worth
        them, else here (the answers are the same either way)."""
        def landed(k: int, result: SectionResult) -> None:
            w = todo[k][0]
            if result.check is not None:
                state.say(f"section {w.section.id} (of 0-{len(state.work) - 1}) placed, routed "
                          f"and checked: wirelength {result.check.wirelength}; "
                          f"{state.run_plan.used():.1f} s of the mapping's "
                          f"{state.run_plan.wall:.1f} s")
            state.advance()
        def here(function: Callable, tasks: list[tuple], done: Callable) -> list:
            results = []                     # with the router's progress lines
            for k, (task,) in enumerate(tasks):
                results.append(function(task, state.say))
                landed(k, results[-1])
            return results
        sizes = [sum(s.time_limit for s in task.settings) for _, task in todo]
        if len(todo) > 1 and sum(sizes) >= PARALLEL_MIN_SECONDS:
            state.workers.start_soon()       # they boot while the first sections compile here
        return run_batch(state.workers, compile_section, [(task,) for _, task in todo],
                         sum(sizes), here=here, landed=landed, sizes=sizes)

    @staticmethod
    def _finish(state: CompileState, todo: list, results: list[SectionResult]
                ) -> list[SectionResult]:
        """Sections not begun because the run was overdue: compiled here after all by the
        fast path when the time the fast path took on the others (else
        :data:`FAST_PATH_SECONDS` a section) says they still fit. (The sections planned
        whole took 0.9 s each on bert_L-12 training at 20 s, the fast path 0.07 s: judged
        by the first, the run failed with 30 sections to go.)"""
        late = [k for k, r in enumerate(results) if r.outcome is None]
        fast = [r.seconds for r in results if r.outcome is not None and any(
            "PathFinder routing" in s.get("note", "") for s in r.outcome.stages)]
        per_section = sum(fast) / len(fast) if fast else FAST_PATH_SECONDS
        if late and state.run_plan.can_finish(len(late) * per_section):
            for k in late:
                results[k] = compile_section(replace(todo[k][1], overdue=math.inf), state.say)
        return results

    def _keep(self, state: CompileState, w: SectionWork, result: SectionResult) -> bool:
        """Keep a section that was compiled and checked; False for one to send back."""
        if result.outcome is None:
            return False
        state.stages.extend(result.outcome.stages)
        if result.outcome.failure is not None:
            return False
        if not result.check.ok:
            raise CheckerRejected(w.section.id, result.check.violations)
        w.outcome, w.check = result.outcome, result.check
        state.memo.compiled[self._key(w)] = w
        return True

    def _raise(self, state: CompileState, w: SectionWork, outcome: SectionOutcome) -> None:
        failure = outcome.failure
        done = [x.section.id for x in state.work if x.section.id < w.section.id]
        retries = state.memo.retries.get(w.key, 0)
        state.memo.failures[w.key] = failure
        if failure.level == "routing" and retries < REPLACE_ROUNDS + LOCAL_RETRIES:
            code = ErrorCode.PNR_LOCAL
        else:
            code = ErrorCode.INSUFFICIENT_RESOURCES
        raise MappingError(ErrorHandlingData(
            code, self.name, f"{failure.level} of section {w.section.id}: {failure.message}",
            state.usage(w.section.id, lack=code == ErrorCode.INSUFFICIENT_RESOURCES),
            w.section.id, done,
            {"unit": failure.unit, "overused": [o.link for o in failure.overused][:20]}))

    def fix(self, state: CompileState, data: ErrorHandlingData) -> str | None:
        w = state.work[data.first_failed]
        retries = state.memo.retries.get(w.key, 0)
        rounds = REPLACE_ROUNDS
        if retries >= rounds + LOCAL_RETRIES:
            return None
        state.memo.retries[w.key] = retries + 1
        failure = state.memo.failures.get(w.key)
        if retries < rounds and failure is not None and failure.overused:
            state.memo.penalties[w.key] = congestion_penalty(state.fabric, failure.overused,
                                                        state.memo.penalties.get(w.key))
            return (f"section {w.section.id}: placed again with a congestion penalty near "
                    f"{len(failure.overused)} over-used links")
        seed = _retry_seed(section_seed(state.options.seed, w.section.nodes), retries + 1 - rounds)
        return f"section {w.section.id}: placed and routed again with seed {seed}"


def _renamed(state: CompileState, first: SectionWork, result: SectionResult,
             twin: SectionWork) -> SectionResult | None:
    """``first``'s checked answer renamed onto ``twin`` (same shape), checked again; None
    when ``first`` has no checked answer or the checker refuses the renamed one."""
    if result.outcome is None or result.outcome.failure is not None or not result.check.ok:
        return None
    started = time.perf_counter()
    names = renaming(first.graph, twin.graph)
    outcome = result.outcome
    placement = {names[n]: site for n, site in outcome.placement.items()}
    check = check_section(twin.graph, state.fabric, placement, outcome.paths)
    if not check.ok:
        return None
    seconds = time.perf_counter() - started
    stages = [stage | {"section": twin.section.id, "twin_of": first.section.id,
                       "time": round(seconds, 4)} for stage in outcome.stages]
    renamed = SectionOutcome([names[n] for n in outcome.order], placement, dict(outcome.paths),
                             stages)
    return SectionResult(renamed, check, seconds)


def _out_of_time(state: CompileState, w: SectionWork, compiled: int, elapsed: float,
                 level: str) -> MappingError:
    """The run is overdue with sections to go (at ``level``): what it would take, in the
    user's terms (from the ``compiled`` sections of this round, in ``elapsed`` seconds, else
    from the time used so far)."""
    to_go = sum(1 for x in state.work if x.outcome is None)
    used = state.run_plan.used()
    done = f"{len(state.work) - to_go} of {len(state.work)} sections compiled"
    if compiled and elapsed > 0:
        per_section = elapsed / compiled
        limit = math.ceil(1.2 * (used + to_go * per_section) / MAPPING_SHARE)
        why = (f"the time limit ran out with {done}; at {per_section:.2f} s per section the "
               f"other {to_go} need about {to_go * per_section:.0f} s more")
    else:
        limit = math.ceil(2 * used / MAPPING_SHARE)
        rounds = f" and {len(state.trace)} feedback round(s)" if state.trace else ""
        why = (f"the time limit ran out after {used:.0f} s (loading, the cut{rounds}) with "
               f"{done}")
    return MappingError(ErrorHandlingData(
        ErrorCode.TIME_LIMIT, level, f"{why}: rerun with --time-limit {limit} or more", [],
        w.section.id,
        [x.section.id for x in state.work if x.outcome is not None]))


def fast_path_reason(options, planned: float) -> str | None:
    """Why the plan sends a section down the fast path (greedy + PathFinder), or None:
    it leaves the section less than the models' own set-up. (A section begun past the
    run's deadline takes it too: :func:`pipeline.rdu.section_task.compile_section`.)"""
    if options.placer == "greedy":
        return None
    if planned < FAST_PATH_SECONDS:
        return f"{planned:.3f} s planned, below {FAST_PATH_SECONDS} s"
    return None


def _retry_seed(seed: int, retry: int) -> int:
    """The seed of a section's ``retry``-th local retry (deterministic)."""
    return seed + 1000 * retry


def default_levels(balancer: Balancer | None = None) -> list:
    """The levels of an RDU run, in order."""
    return [CutLevel(balancer), BufferLevel(balancer), PlaceRouteLevel()]
