"""Section cuts: split a graph too big for the chip into sections that fit.

:func:`cut_sections` drives the cut (source 003; the problem is described in
:mod:`formulations.sections.problem`): the greedy cut
(:mod:`formulations.sections.greedy`) is the baseline and the warm start; on big
graphs windows of its sections are first re-cut into fewer (:meth:`_Cutter.fewer_sections`);
the section model (:mod:`formulations.sections.model`) is tried for every section count
from the lower bound up to one below the best known (fewest sections), then minimises the
bytes crossing cuts and, given costs (:mod:`formulations.sections.costs`), the time per
sample from that cut, as one model for small graphs or window by window (a
large-neighbourhood search) for big ones; on a graph of more than one category, or cut as
one model into several sections, it also moves groups of nodes between any two sections of
a category (:mod:`formulations.sections.refine`), which ends the cut. The answer is never worse
than greedy.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from functools import cached_property
from pathlib import Path

from formulations.sections.costs import CutCosts, CutNet, cut_nets, cut_time
from formulations.sections.greedy import greedy_sections
from formulations.sections.model import WINDOW_NODES, build_section_model, forced_traffic
from formulations.sections.portfolio import (CutSolve, CutSolved, RunAll, found, proven,
                                             solve_each, solve_portfolio)
from formulations.sections.problem import (BufferDemand, Capacity, Scale, SectionPlan,
                                           assignment_of, cut_traffic, loosest_scale,
                                           lower_bound, sections_from)
from formulations.sections.refine import refine_cut
from formulations.solver import Budget, SolveSettings, to_epoch
from model.graph import Graph

__all__ = ["cut_sections", "SOLVERLESS", "MODEL_NODES", "MONOLITHIC_LIMIT", "WINDOW",
           "WINDOW_SECONDS"]

#: Backend names that ask for the greedy cut alone.
SOLVERLESS = ("greedy", "none")
#: Above this many node-section pairs the traffic phase re-optimises windows of
#: consecutive sections (large-neighbourhood search) instead of one model.
MONOLITHIC_LIMIT = 6000
#: Planned seconds a whole-graph section model costs before its search, per node-section
#: pair: building it and handing it to each seed's solver. bert_L-12 training at 29
#: sections (58,000 pairs, 462,515 nonzeros) took 4.3 s to build and 2-3 s per seed to
#: start on this project's 2-core machine at load 3; its first solve, planned 0.7 s a seed,
#: took 11.8 and 6.6 s. A plan smaller than this keeps greedy's count.
PAIR_SECONDS = 1e-4
#: Above this many nodes the greedy cut is the answer: the model's section windows are
#: quadratic in the nodes (measured: 10^5 nodes take minutes before any solve).
MODEL_NODES = WINDOW_NODES
#: Sections per window of the large-neighbourhood search. Three, not five: on a cut share
#: of a few planned seconds more and smaller windows get further (the first cuts of
#: bert_l-12 inference at 12 sections, 11.4 planned s: 18.74 M cycles a sample against
#: 20.75 M with five; bert_L-12 training at 32, 7.4 s: 338.3 M against 366.0 M).
WINDOW = 3
#: Seconds per window model.
WINDOW_SECONDS = 5.0
#: With the time objective, the share of the budget left after the fewest sections that
#: first goes to the least traffic (the time objective then starts from its cut), for a
#: whole model; the window search goes to time directly (:meth:`_Cutter.least_cost`).
TRAFFIC_SHARE = 0.5
#: With the time objective and more than one category (a training graph), the share of the
#: budget left after the fewest sections that goes to the refinement
#: (:mod:`formulations.sections.refine`) after the windows, the last search of the cut:
#: it moves groups between sections the windows never hold together (the weight-
#: gradient branches); on a graph of one category cut as one model into at least
#: :data:`REFINE_WHOLE_SECTIONS`, after the model's time phase. What a refinement that
#: ends on a local optimum leaves is not spent: on all 19 rows at the plan of a 120 s run,
#: the windows or the model given it again found nothing better (up to 13.2 planned s each,
#: resnet50 training of LayerGraphs). A graph of one category cut
#: window by window keeps the windows alone: after them the refinement found nothing on
#: bert_l-12 inference (a sweep of 4 planned s), while the windows' last quarter had
#: brought it 18.23 -> 17.86 M cycles a sample. Half, not a quarter: at 0.25 the refinement
#: ended on its budget, far from done. At the plan of a 120 s run on plasticine (samples/s
#: by sim.perf, 0.25 -> 0.5): bert_L-12 training 3.199 -> 3.470 (its cut 309.2 -> 284.8 M
#: cycles a sample), bert_l-3 training 24.83 -> 25.57, bert_l-6 training 18.85 -> 18.79,
#: resnet50 training 8.505 -> 8.496. The cut alone on bert_L-12 training at 20 planned s:
#: 304.2, 286.9, 294.7 and 317.6 M at 0.25, 0.5, 0.75 and 0.9.
REFINE_SHARE = 0.5
#: A graph of one category cut as one model is refined from this many sections on: the
#: model's time objective is a sum of section maxima, which CP-SAT rarely finishes on
#: many sections, while on a few large ones the refinement's tries cost most (each times
#: its sections) and take the model's work. At the plan of a 120 s run (samples/s, the
#: model alone -> with the refinement): resnet50 inference on plasticine, 7 sections,
#: 87.21 -> 100.3 (the code before issue 33 gave 91.02); bert_l-12 inference on sn10,
#: 3 sections of about 260 nodes, 154.1 -> 133.4; bert_l-6 and inceptionv3 inference (5
#: and 6 sections), bert_l-3 inference and resnet50 inference of LayerGraphs (3) unchanged.
REFINE_WHOLE_SECTIONS = 4
#: Sections per window of the count-reducing step (:meth:`_Cutter.fewer_sections`) at its
#: start: each window is re-cut into one section fewer.
MERGE_WINDOW = 4
#: The whole model's count phase spends half the budget left per count tried; a quarter
#: once the windows found fewer sections than greedy (the rest then goes to time).
COUNT_SHARE_AFTER = 4
#: Planned seconds per section of a packing window (:meth:`_Cutter.pack_sweep`).
PACK_SECONDS = 0.25
#: The most sections per window of the count-reducing step.
MERGE_WINDOW_MAX = 8
#: The share of the cut's budget that the count-reducing step may spend at most (the rest
#: goes to the whole model's count phase, then traffic and time at the count reached).
#: bert_L-12 training on plasticine (7.4 planned s): one pack sweep of its 12 forward
#: sections costs about 3 s, so 0.3 kept 32 sections where 0.6 reaches 31.
MERGE_SHARE = 0.6


def cut_sections(graph: Graph, cap: Capacity, settings: SolveSettings,
                 scales: dict[int, Scale] | None = None, *,
                 separate: list[tuple[str, str]] = (), first_id: int = 0,
                 run_all: RunAll | None = None,
                 buffers: BufferDemand | None = None,
                 costs: CutCosts | None = None) -> SectionPlan:
    """Cut ``graph`` into the fewest sections, then the least time (with ``costs``) or the
    least DRAM traffic.

    The greedy topological cut is the baseline and the warm start; above
    :data:`MONOLITHIC_LIMIT` node-section pairs windows of it are first re-cut into fewer
    sections (:meth:`_Cutter.fewer_sections`). The model
    (:func:`~formulations.sections.model.build_section_model`) is tried for every
    section count from the lower bound up to one below the best count known (fewest
    sections), then with the chosen count it minimises the bytes crossing cuts,
    hinted with the best cut known. Within ``settings.time_limit`` the answer is
    never worse than greedy.

    Parameters
    ----------
    graph : the nodes to cut (loop-carried edges impose no order).
    cap : units one section may use.
    settings : backend (a :data:`SOLVERLESS` name asks for the greedy cut alone),
        seconds in all, seed, and ``export_dir`` (every whole model is written
        there as ``.mps``).
    scales : resource scale factor per section position (default 1.0), a
        number or one per resource (:data:`~formulations.sections.problem.Scale`).
    separate : node pairs that must land in different sections (a moved
        boundary: the later node goes to a later section).
    first_id : the id of the first section (sections are numbered on from it).
    run_all : where each model's portfolio of seeds runs
        (:mod:`formulations.sections.portfolio`; default: here, one after another).
        The cut is the same wherever they run.
    buffers : stage-buffer PMUs per edge whose ends share a section
        (:data:`~formulations.sections.problem.BufferDemand`); every section's PMUs
        include its own.
    costs : stage and DRAM cycles (:mod:`formulations.sections.costs`): with them the
        sections, once fewest, minimise the bytes across cuts and then, from that cut,
        the batch's time per sample (:meth:`_Cutter.least_cost`); without, the bytes.

    Raises
    ------
    SectionError
        If one node alone exceeds a section's capacity.
    """
    scales = dict(scales or {})
    # planned seconds spent as solver work; the wall clock is only the outer cap
    budget = settings.budget()
    buffers = {key: p for key, p in (buffers or {}).items() if p > 0}
    greedy = greedy_sections(graph, cap, scales, separate, buffers)
    greedy_traffic = cut_traffic(graph, greedy)
    bound = lower_bound(graph, cap, loosest_scale(scales, len(graph.nodes)))
    plan = SectionPlan(greedy, bound, len(greedy), greedy_traffic, greedy_traffic,
                       "greedy topological cut")
    if len(graph.nodes) <= 1 or len(graph.nodes) > MODEL_NODES or settings.backend in SOLVERLESS:
        plan.bound_traffic = forced_traffic(graph, cap, plan.count, scales)
        return _numbered(plan, first_id)
    cutter = _Cutter(graph, cap, scales, tuple(separate), settings, budget, plan, run_all,
                     buffers, costs)
    best = cutter.phase("count", cutter.fewest_sections)
    best = cutter.phase("cost", cutter.least_cost, best)
    _keep_the_better(graph, cap, scales, plan, best, buffers, costs)
    plan.extra["seconds_of_batches"] = [[round(t, 3) for t in batch] for batch in cutter.batches]
    plan.extra |= {"planned": settings.time_limit, "planned_spent": round(budget.spent, 6)}
    if budget.cut_short:
        plan.extra["cut_short"] = True
    return _numbered(plan, first_id)


@dataclass
class _Cutter:
    """The model phases of one cut, and the one way they solve a model."""

    graph: Graph
    cap: Capacity
    scales: dict[int, Scale]
    separate: tuple[tuple[str, str], ...]
    settings: SolveSettings
    budget: Budget
    plan: SectionPlan
    run_all: RunAll | None
    buffers: BufferDemand
    costs: CutCosts | None
    #: Wall seconds of every solve, batch by batch (the solves of a batch may run at once):
    #: what the parallel benchmark's cluster estimate hands out.
    batches: list[list[float]] = field(default_factory=list)

    def phase(self, name: str, run, *args):
        """``run(*args)``, its planned seconds recorded under ``name`` in the plan's
        ``planned_by_phase`` (what each phase of the cut cost; a phase run inside another,
        such as ``merge`` inside ``count``, is counted in its own entry only)."""
        phases = self.plan.extra.setdefault("planned_by_phase", {})
        spent, inner = self.budget.spent, sum(phases.values())
        result = run(*args)
        own = self.budget.spent - spent - (sum(phases.values()) - inner)
        phases[name] = round(phases.get(name, 0.0) + own, 3)
        return result

    def job(self, graph: Graph, count: int, seconds: float, *,
            hint: dict[str, int] | None = None, first: int = 0,
            costs: CutCosts | None = None) -> CutSolve:
        """The solve of the section model of ``graph`` (sections ``first`` on) with
        ``count`` sections on ``seconds`` planned seconds; with ``costs`` it minimises
        time, else bytes across cuts."""
        scales = {k - first: s for k, s in self.scales.items()}
        separate = tuple((a, b) for a, b in self.separate if a in graph and b in graph)
        wall = self.budget.deadline
        buffers = {key: p for key, p in self.buffers.items()
                   if key[0] in graph and key[1] in graph}
        if costs is not None and graph is not self.graph:
            costs = costs.for_window(self.graph, graph, self.whole_nets)
        return CutSolve(graph, self.cap, count, scales, separate, hint, self.settings.backend,
                        seconds, self.settings.seed, to_epoch(wall), buffers, costs)

    def solve(self, graph: Graph, count: int, seconds: float, done, *,
              hint: dict[str, int] | None = None, stem: str | None = None,
              costs: CutCosts | None = None) -> CutSolved:
        """The section model of ``graph`` solved by the portfolio of seeds (written to the
        export folder first when ``stem`` names it)."""
        job = self.job(graph, count, seconds, hint=hint, costs=costs)
        if stem is not None and self.settings.export_dir:
            folder = Path(self.settings.export_dir)
            folder.mkdir(parents=True, exist_ok=True)
            model = build_section_model(graph, self.cap, count, job.scales,
                                        list(job.separate), job.buffers, job.costs)[0]
            model.write_mps(str(folder / f"{model.name}_{stem}.mps"))
        solved = solve_portfolio(job, self.budget, done, self.run_all, self.batches)
        self.plan.results.append(solved.result)
        return solved

    @cached_property
    def whole_nets(self) -> list[CutNet]:
        """The graph's nets (:func:`~formulations.sections.costs.cut_nets`), built once for
        every window's costs: rebuilt per window they were a quarter of the cut's own
        driver work on bert_L-12 training (0.50 -> 0.37 s kept)."""
        return cut_nets(self.graph, self.costs)

    def out_of_time(self, keep: float = 0.0) -> bool:
        """Whether the budget is spent (``keep``: planned seconds kept for a later phase)."""
        return self.budget.left() < 0.5 + keep or self.budget.wall_out()

    def fewest_sections(self) -> dict[str, int]:
        """The first feasible cut with fewer sections than the best known, counting up
        from the lower bound (the best known when none is found in time).

        The best known is greedy's cut or, above :data:`MONOLITHIC_LIMIT` node-section
        pairs, greedy's cut with windows merged away (:meth:`fewer_sections`), first: the
        whole model then asks only for counts below it. bert_l-12 inference on plasticine
        (783 nodes, greedy 12 sections, lower bound 9, cut share 11.4 planned s): the whole
        model proved 9 infeasible and answered neither way for 10 on half of its plan,
        and given all of it neither for 11; the windows find 11 on 3 s."""
        self.plan.extra["bound_with_buffers"] = self.plan.lower_bound
        known = assignment_of(self.plan.sections)
        if len(self.graph.nodes) * self.plan.greedy_sections > MONOLITHIC_LIMIT:
            known = self.phase("merge", self.fewer_sections, known)
        share = 2 if max(known.values()) + 1 == self.plan.greedy_sections else COUNT_SHARE_AFTER
        for count in range(self.plan.lower_bound, max(known.values()) + 1):
            seconds = self.budget.left() / share
            if self.out_of_time() or PAIR_SECONDS * len(self.graph.nodes) * count > seconds:
                break
            solved = self.solve(self.graph, count, seconds, found, stem=f"sections_k{count}")
            if solved.assignment is not None:
                return solved.assignment
            if solved.result.status.name != "INFEASIBLE":
                break      # unknown within the budget: keep the count known
            # proven: no cut of this many sections fits with the buffers as estimated
            self.plan.extra["bound_with_buffers"] = count + 1
        return known

    def fewer_sections(self, best: dict[str, int]) -> dict[str, int]:
        """``best`` with fewer sections: a count-reducing large-neighbourhood search.

        The whole model of a large graph (bert_l-12 inference: 783 nodes x 10 sections)
        often answers neither way within its plan, while a window of a few consecutive
        sections, the rest fixed, is small enough for CP-SAT to answer at once. Only runs
        of one category with more sections than their own lower bound are searched
        (bert_L-12 training: the 12 forward sections of 32; its backward ones are at
        their bound), the last run first so that the positions of those before it stay.
        Each run (:meth:`fewer_in`) takes what :data:`MERGE_SHARE` of the budget leaves
        unspent, each solve charged to the cut's budget. Sections keep their position's
        scale only when every position has the same one (the first cut), so a cut with
        scales per position is left as it is.
        """
        count = max(best.values()) + 1
        if count <= self.plan.lower_bound or self.out_of_time() or not self.uniform_scales(count):
            return best
        keep = (1 - MERGE_SHARE) * self.budget.left()
        best = dict(best)
        for first, last, floor in reversed(self.slack_runs(best)):
            self.fewer_in(best, first, last, floor, keep)
        self.plan.extra["merged_by_windows"] = count - (max(best.values()) + 1)
        return best

    def slack_runs(self, assignment: dict[str, int]) -> list[tuple[int, int, int]]:
        """(first, last + 1, lower bound) of each run of sections of one category whose
        count is above the lower bound of its own nodes."""
        sections = sections_from(self.graph, assignment)
        runs, first = [], 0
        for k in range(1, len(sections) + 1):
            if k == len(sections) or sections[k].category != sections[first].category:
                nodes = [v for s in sections[first:k] for v in s.nodes]
                floor = lower_bound(self.graph.subgraph(nodes), self.cap,
                                    loosest_scale(self.scales, len(sections)))
                if k - first > floor:
                    runs.append((first, k, floor))
                first = k
        return runs

    def fewer_in(self, assignment: dict[str, int], first: int, last: int, floor: int,
                 keep: float) -> None:
        """Sections ``first .. last - 1`` (one category) with fewer sections, down to
        ``floor``. Two moves alternate until ``keep`` planned seconds are left:

        - :meth:`merge_sweep` re-cuts windows of ``size`` sections into ``size - 1``;
        - where no window can lose a section (greedy fills every section's PMUs, so a
          question of fewer sections alone answers only no), :meth:`pack_sweep` moves
          work out of the last sections of overlapping windows, front to back, so that
          room gathers in the run's last section until it empties or a merge fits.

        When neither loses a section the windows grow by two sections, up to
        :data:`MERGE_WINDOW_MAX` (larger ones are the whole model's question). The search
        ends at the first sweep that loses one: the count found is the whole model's to
        improve, and the time search's budget is worth more than a long shot. On the three
        rows that run this step (bert_L-12 training on plasticine and sn10, bert_l-12
        inference) a sweep after a loss never lost another section; ending there takes its
        0.6 s off the serial seconds of bert_L-12 training and leaves samples/s as they were
        (with the packing of :data:`~formulations.sections.model.PACKED_TAIL`, seeds 0-2
        at the plan of a 120 s run: 0.964-1.021 x on bert_L-12 training, 1.000-1.014 x on
        bert_l-12 inference). Growing again after 12 -> 11 on bert_l-12 inference spent
        3.9 planned s of 11.4 without a tenth section, proven impossible later."""
        size, largest = min(MERGE_WINDOW, last - first), MERGE_WINDOW_MAX
        while last - first > floor and size >= 2 and not self.out_of_time(keep):
            before = last
            last -= self.merge_sweep(assignment, size, first, last, keep)
            if last == before and not self.out_of_time(keep):
                last = self.pack_sweep(assignment, size, first, last, keep)
            if last < before or size >= min(last - first, largest):
                break
            size = min(size + 2, last - first, largest)

    def uniform_scales(self, count: int) -> bool:
        """Whether sections ``0 .. count - 1`` share one scale (a section may then move)."""
        return len({repr(self.scales.get(k, 1.0)) for k in range(count)}) == 1

    def merge_sweep(self, assignment: dict[str, int], size: int, first: int, last: int,
                    keep: float) -> int:
        """One pass of windows of ``size`` sections in ``first .. last - 1``, each asked for
        a cut into ``size - 1`` (least traffic): windows side by side from ``first``, then
        from ``first + size // 2``; a phase's windows share no section, so they are solved
        at once (:func:`~formulations.sections.portfolio.solve_each`) and every one that
        fits is taken, in section order. Returns how many sections were merged away."""
        merged = 0
        for offset in (0, max(1, size // 2)):
            end, before = last - merged, merged
            phase = [(a, a + size) for a in range(first + offset, end - size + 1, size)]
            if not phase or self.out_of_time(keep):
                break
            seconds = self.window_seconds(size - 1, len(phase), keep)
            for (a, b), sub, _, s in self.solve_phase(
                    assignment, phase,
                    lambda a, b, sub: self.job(sub, size - 1, seconds, first=a, hint={
                        v: min(assignment[v] - a, size - 2) for v in sub.node_ids})):
                if s.assignment is not None:      # windows before it in the phase lost one each
                    shift = merged - before
                    _place(assignment, sub, a - shift, b - shift, s.assignment)
                    merged += 1
        return merged

    def pack_sweep(self, assignment: dict[str, int], size: int, first: int, last: int,
                   keep: float) -> int:
        """Windows of ``size`` sections from ``first``, each overlapping the one before in
        its final section, re-cut to take units out of their last sections
        (:func:`~formulations.sections.model.build_section_model` with ``pack``): the room
        each leaves in its final section is the next window's to fill, so it travels to
        section ``last - 1``, which the last window ends at. A window whose last section
        empties loses it. Returns the run's new end."""
        a, final = first, False
        while not final and not self.out_of_time(keep):
            if a + size >= last:
                a, final = max(first, last - size), True
            sub = self.window(assignment, a, a + size)
            seconds = min(PACK_SECONDS * size, self.budget.left() - keep)
            job = replace(self.job(sub, size, seconds, first=a,
                                   hint={v: assignment[v] - a for v in sub.node_ids}),
                          pack=True)
            solved = solve_each([job], self.budget, self.run_all, self.batches)[0]
            self.plan.results.append(solved.result)
            if solved.assignment is not None:
                last -= _place(assignment, sub, a, a + size, solved.assignment)
            a += size - 1
        return last

    def window(self, assignment: dict[str, int], first: int, last: int) -> Graph:
        """The nodes of sections ``first .. last - 1``."""
        return self.graph.subgraph([v for v in self.graph.node_ids
                                    if first <= assignment[v] < last])

    def solve_phase(self, assignment: dict[str, int], phase: list[tuple[int, int]], make_job
                    ) -> list[tuple[tuple[int, int], Graph, CutSolve, CutSolved]]:
        """Solve a phase's windows (sections ``a .. b - 1`` each, no section shared) at once
        (:func:`~formulations.sections.portfolio.solve_each`), the job of each from
        ``make_job(a, b, window)``; their results are recorded. Returns, per window, its
        span, subgraph, job and answer, in the phase's order."""
        subs = [self.window(assignment, a, b) for a, b in phase]
        jobs = [make_job(a, b, sub) for (a, b), sub in zip(phase, subs)]
        solved = solve_each(jobs, self.budget, self.run_all, self.batches)
        self.plan.results.extend(s.result for s in solved)
        return list(zip(phase, subs, jobs, solved))

    def least_cost(self, best: dict[str, int]) -> dict[str, int]:
        """With ``best``'s section count, the cut of least traffic, then with costs of least
        time hinted with it, then, on a graph of more than one category or cut as one model
        into :data:`REFINE_WHOLE_SECTIONS` or more, refined last (:meth:`refined`, on
        :data:`REFINE_SHARE` of the budget left); :data:`TRAFFIC_SHARE` of the rest goes
        to traffic:
        CP-SAT's search is strong on bytes and weak on a sum of section maxima, and the
        cut of least traffic is a good start in time (resnet50 inference on plasticine,
        6 s: from greedy's cut, the time objective alone ended at 10.5-21.3 M cycles a
        sample over four runs; traffic then time at 8.8-13.0 M).

        The window search (above :data:`MONOLITHIC_LIMIT` node-section pairs) goes to
        time directly: its windows are small models where CP-SAT handles the time
        objective, and a cut share of a few planned seconds split in two gets neither
        sweep far (the first cuts, time per sample with traffic first / time alone:
        bert_L-12 training at 31 sections 357.9 / 348.5 M cycles, bert_l-12 inference at
        11 19.37 / 19.18 M, inceptionv3 training (LayerGraphs) at 12 69.06 / 66.56 M;
        resnet50 training at 17 116.0 / 118.0 M and bert_l-6 training at 16 66.5 / 67.3 M,
        both below main's 122.5 and 68.5 M)."""
        count = max(best.values()) + 1
        if self.costs is None:
            return self.least(best, count, None, keep=0.0)
        whole = len(self.graph.nodes) * count <= MONOLITHIC_LIMIT
        categories = {self.graph.node(v).category for v in self.graph.node_ids}
        refining = len(categories) > 1 or (whole and count >= REFINE_WHOLE_SECTIONS)
        refine = REFINE_SHARE * self.budget.left() if refining else 0.0
        if whole:
            best = self.phase("traffic", self.least, best, count, None,
                              refine + (1 - TRAFFIC_SHARE) * (self.budget.left() - refine))
        best = self.phase("time", self.least, best, count, self.costs, refine)
        if refine:
            best = self.phase("refine", self.refined, best, refine)
        return best

    def refined(self, best: dict[str, int], seconds: float) -> dict[str, int]:
        """``best`` with groups moved between any two sections of one category while the time
        falls (:func:`~formulations.sections.refine.refine_cut`), on ``seconds`` planned at
        most."""
        if self.out_of_time():
            return best
        return refine_cut(self.graph, best, self.cap, self.costs, self.budget.share(seconds),
                          scales=self.scales, buffers=self.buffers, separate=self.separate,
                          run_all=self.run_all, record=self.batches)

    def least(self, best: dict[str, int], count: int, costs: CutCosts | None,
              keep: float) -> dict[str, int]:
        """``best`` improved for time (``costs``) or bytes (None) until ``keep`` planned
        seconds are left: one model hinted with ``best`` up to :data:`MONOLITHIC_LIMIT`
        node-section pairs, else the window search."""
        if self.out_of_time(keep):
            return best
        if len(self.graph.nodes) * count > MONOLITHIC_LIMIT:
            return self.window_search(best, count, costs, keep)
        solved = self.solve(self.graph, count, self.budget.left() - keep, proven, hint=best,
                            stem=f"sections_{'time' if costs else 'traffic'}_k{count}",
                            costs=costs)
        if solved.assignment is not None and not better(cut_cost(self.graph, best, costs),
                                                        cut_cost(self.graph, solved.assignment,
                                                                 costs)):
            best = solved.assignment
            self.plan.status = solved.result.status.name
            if solved.bound_bytes is not None:
                self.plan.bound_traffic = solved.bound_bytes
        return best

    def window_search(self, assignment: dict[str, int], count: int, costs: CutCosts | None,
                      keep: float) -> dict[str, int]:
        """Re-cut windows of consecutive sections with the rest fixed, until the budget
        is spent (planned seconds, charged by each window's solver work).

        Nodes outside a window keep their section, so every edge leaving the
        window stays legal whatever the window's cut; only edges inside it change
        traffic. Sweeps overlapping windows of WINDOW sections (:meth:`sweep`); when
        a sweep improves nothing, the windows grow by two sections (a larger
        neighbourhood), and shrink back after the next improvement.
        """
        size = min(WINDOW, count)
        self.plan.status = "FEASIBLE"
        while not self.out_of_time(keep):
            improved, whole_proven = self.sweep(assignment, size, count, costs, keep)
            if whole_proven:                 # the one window was the whole model, solved
                self.plan.status = "OPTIMAL"
                break
            if improved:
                size = min(WINDOW, count)
            elif size >= count:
                break
            else:
                size = min(size + 2, count)
        return assignment

    def sweep(self, assignment: dict[str, int], size: int, count: int, costs: CutCosts | None,
              keep: float) -> tuple[bool, bool]:
        """One pass of windows of ``size`` sections in two phases: windows side by side
        from section 0, then side by side from ``size // 2`` (each straddles a border
        of the first phase). The windows of a phase share no section, so they are
        independent solves that may run at once.

        Returns whether any window improved, and whether the cut is proven optimal
        (the window spanned every section and its model was solved to optimality).
        """
        if size >= count:                  # the whole model: worth all the time left
            solved = self.solve(self.graph, count, self.budget.left() - keep, proven,
                                hint=dict(assignment), costs=costs)
            improved = self.apply(assignment, self.graph, 0, solved, costs)
            return improved, solved.result.status.name == "OPTIMAL"
        improved = False
        for offset in (0, max(1, size // 2)):
            phase = [(first, min(first + size, count)) for first in range(offset, count, size)
                     if min(first + size, count) - first >= 2]
            if not phase or self.out_of_time(keep):
                break
            phase = [(a, b) for a, b in phase
                     if sum(a <= assignment[v] < b for v in self.graph.node_ids) > 1]
            for (first, _), sub, job, solved in self.solve_phase(
                    assignment, phase,
                    lambda a, b, sub: self.job(
                        sub, b - a, self.window_seconds(b - a, len(phase), keep), first=a,
                        costs=costs, hint={v: assignment[v] - a for v in sub.node_ids})):
                improved |= self.apply(assignment, sub, first, solved, job.costs)
        return improved, False

    def window_seconds(self, span: int, windows: int, keep: float = 0.0) -> float:
        """Planned seconds of one of ``windows`` windows of a phase, ``span`` sections."""
        return min(WINDOW_SECONDS * span / WINDOW, (self.budget.left() - keep) / windows)

    @staticmethod
    def apply(assignment: dict[str, int], sub: Graph, first: int, solved: CutSolved,
              costs: CutCosts | None = None) -> bool:
        """Take the new cut of window ``sub`` (sections ``first`` on) when it is better
        (:func:`cut_cost`); whether it was."""
        if solved.assignment is None:
            return False
        local = {v: assignment[v] - first for v in sub.node_ids}
        if not better(cut_cost(sub, solved.assignment, costs), cut_cost(sub, local, costs)):
            return False
        for v in sub.node_ids:
            assignment[v] = solved.assignment[v] + first
        return True


def _place(assignment: dict[str, int], sub: Graph, first: int, last: int,
           local: dict[str, int]) -> int:
    """Put window ``sub``'s new cut (``local``: node -> section from 0) in place of sections
    ``first .. last - 1`` and close the gap its unused sections leave: the sections after
    it move up, in their order, so every edge stays legal. Returns the sections lost."""
    rank = {k: i for i, k in enumerate(sorted(set(local.values())))}
    gap = last - first - len(rank)
    for v in assignment:
        if assignment[v] >= last:
            assignment[v] -= gap
    for v in sub.node_ids:
        assignment[v] = first + rank[local[v]]
    return gap


def cut_cost(graph: Graph, assignment: dict[str, int], costs: CutCosts | None
             ) -> tuple[float, float]:
    """What the cut minimises once its count is fixed: (time per sample, bytes across cuts)
    with ``costs``, else (0, bytes); compared by :func:`better`."""
    traffic = cut_traffic(graph, sections_from(graph, assignment))
    return (cut_time(graph, assignment, costs) if costs is not None else 0.0), traffic


def better(a: tuple[float, float], b: tuple[float, float]) -> bool:
    """Whether cost ``a`` is lower than ``b``: less time, or as much and fewer bytes (equal
    within a part in 10^9, so that rounding never takes a cut for a better one)."""
    def less(x: float, y: float) -> bool:
        return x < y - 1e-9 * max(1.0, abs(y))
    return less(a[0], b[0]) or (not less(b[0], a[0]) and less(a[1], b[1]))


def _keep_the_better(graph: Graph, cap: Capacity, scales: dict[int, Scale], plan: SectionPlan,
                     best: dict[str, int], buffers: BufferDemand, costs: CutCosts | None) -> None:
    """Set ``plan`` to ``best`` unless greedy's cut is better, with the traffic bound."""
    greedy, greedy_traffic = plan.sections, plan.greedy_traffic
    plan.sections = sections_from(graph, best, buffers)
    plan.traffic = cut_traffic(graph, plan.sections)
    greedy_better = better(cut_cost(graph, assignment_of(greedy), costs),
                           cut_cost(graph, best, costs))
    if costs is None:        # fewest sections, then least traffic
        greedy_better = len(plan.sections) > len(greedy) or (
            len(plan.sections) == len(greedy) and greedy_better)
    if greedy_better:
        plan.sections, plan.traffic, plan.status = greedy, greedy_traffic, "FEASIBLE"
    else:
        plan.method = "section model"
    if costs is not None:
        plan.extra |= {"estimated_cycles_per_sample":
                       cut_time(graph, assignment_of(plan.sections), costs),
                       "greedy_estimated_cycles_per_sample":
                       cut_time(graph, assignment_of(greedy), costs)}
    forced = forced_traffic(graph, cap, plan.count, scales)
    proven = plan.traffic if plan.status == "OPTIMAL" and costs is None else 0.0
    plan.bound_traffic = max(plan.bound_traffic or 0.0, forced, proven)
    if costs is None and plan.traffic <= plan.bound_traffic + 1e-9 * max(1.0, plan.traffic):
        plan.status = "OPTIMAL"


def _numbered(plan: SectionPlan, first_id: int) -> SectionPlan:
    for k, s in enumerate(plan.sections):
        s.id = first_id + k
    return plan
