"""Refinement of a cut: move groups of nodes between any two sections of one category.

The window search (:meth:`formulations.sections.cut._Cutter.window_search`) re-cuts a few
consecutive sections at once, so a node never moves further than its window, while on the
training graphs a branch off the longest path belongs far from where the cut puts it.
bert_l-6 training on plasticine, main's cut (16 sections, 66.57 M cycles a sample): the
375 MB gradient of the LM logits is read by a reshape in section 14 (8 bytes of output)
instead of beside its producer in section 5, 22 % of the cut's time; every backward section
is full (64 of 64 PCUs), so the reshape moves only if something else leaves section 5.

:func:`refine_cut` is a descent on the cut's time (:func:`~formulations.sections.costs.cut_time`).
A group is a node with its descendants inside its section (moved down) or with its
ancestors inside it (moved up): every edge stays legal when it moves to any section up to
its nearest successor (down) or predecessor (up) outside it, within its category. Section
by section it tries every group at every section it reaches and takes the move that saves
most, where the receiving section still fits with its stage buffers
(:meth:`Section.fits_with <formulations.sections.problem.Section.fits_with>`, :func:`buffer_nets
<formulations.sections.problem.buffer_nets>`); for the :data:`EJECT` moves that would save
most were their receiving section not full, it also tries each with one group of that
section moved on to where there is room (an ejection, as in Kernighan-Lin's swaps). A move
changes only the times of the sections it touches, so a try costs those, not the whole
cut. Sweeps repeat until one moves nothing or the planned work is spent. Deterministic:
nodes are tried in the graph's topological order, ties go to the first move tried. A group
never leaves its run of sections of one category, and a move changes that run's times
alone, so the runs (a training graph's forward and backward sections) are refined apart,
at once on the run's workers: bert_L-12 training on plasticine, 11 and 20 sections, took
1.2 s in one descent and 0.4 + 0.85 s as two, with the same cut; at the plan of a 120 s
run no row's throughput fell and two rose (bert_l-6 and bert_L-12 training, 0.8 and 0.7 %).
Measured from main's cuts at the plan of a 120 s run (cycles a sample): bert_l-6 training
66.57 -> 51.88 M on 1.5 planned s, bert_L-12 training 344.0 -> 305.0 M on 2.5 s; with the
stage buffers learned in the run, bert_l-12 inference's cut after the windows is a local
optimum (:data:`formulations.sections.cut.REFINE_SHARE`).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

from formulations.sections.costs import CutCosts, CutNet, cut_nets
from formulations.sections.portfolio import RunAll, never
from formulations.sections.problem import (BufferDemand, Capacity, Scale, Section,
                                           buffer_nets, unit_demand)
from formulations.solver import Budget
from model.graph import Graph

__all__ = ["refine_cut", "refine_run", "RunRefinement", "RunRefined", "VISITS_PER_SECOND"]

#: Nodes visited per planned second (a try visits every node of the sections it times and of
#: those whose fit it checks, the group it moves and the ends of that group's nets): 4.0 M
#: visits took 8.5 wall s on bert_L-12 training on this 2-core machine at load 2 (5.0 M
#: took 19 CPU s at load 5).
VISITS_PER_SECOND = 3e5
#: Blocked moves (their receiving section full) tried with an ejection, per section.
EJECT = 3
ZERO = {"pcu": 0.0, "pmu": 0.0, "any": 0.0, "agcu": 0.0}
#: A blocked move is worth an ejection (a try per group of the full section and section it
#: reaches) when it would save this share of the cut's time at least.
EJECT_GAIN = 1e-3
#: A move must lower the cut's time by this share at least (no move on rounding noise).
GAIN = 1e-9


def refine_cut(graph: Graph, assignment: dict[str, int], cap: Capacity, costs: CutCosts,
               budget: Budget, *, scales: dict[int, Scale] | None = None,
               buffers: BufferDemand | None = None,
               separate: tuple[tuple[str, str], ...] = (), run_all: RunAll | None = None,
               record: list | None = None) -> dict[str, int]:
    """``assignment`` (node -> section, sections ``0 .. n - 1`` all used) with groups moved
    across borders while :func:`~formulations.sections.costs.cut_time` falls; no section
    empties, so the count and positions stay.

    A group moves only within its run of sections of one category, and a move changes the
    times of that run's sections alone (a net from one category to another crosses a cut
    wherever its ends lie), so each run is refined on its own (:func:`refine_run`) on a
    share of the budget by its sections, all at once where ``run_all`` runs them.

    Parameters
    ----------
    graph : the nodes cut.
    assignment : a legal cut whose sections fit.
    cap, scales : units one section may use, the scale factor per position.
    costs : the time model.
    budget : planned seconds, spent as nodes visited (:data:`VISITS_PER_SECOND`).
    buffers : stage-buffer PMUs per edge whose ends share a section.
    separate : node pairs that must stay in different sections, the later one later.
    run_all : where the runs' refinements run (:mod:`formulations.sections.portfolio`;
        default: here, one after another); the answer is the same wherever they run.
    record : gets the runs' wall seconds as one batch (when given).

    Returns
    -------
    dict[str, int] : a new assignment, never slower than ``assignment``.
    """
    runs = _movable_runs(graph, assignment)
    left, movable = budget.left(), sum(map(len, runs))
    tasks = [(RunRefinement(graph, assignment, cap, costs,
                            Budget(left * len(run) / movable, budget.deadline), run,
                            dict(scales or {}), dict(buffers or {}), tuple(separate)),)
             for run in runs]
    refined = run_all(refine_run, tasks, never) if run_all and len(tasks) > 1 else None
    if refined is None:
        refined = [refine_run(*task) for task in tasks]
    out = dict(assignment)
    for run in refined:
        out.update(run.moved)
        budget.spend(run.spent)
        if run.cut_short:
            budget.mark_cut()
    if record is not None and refined:
        record.append([run.wall for run in refined])
    return out


@dataclass(frozen=True)
class RunRefinement:
    """The refinement of one run of sections of one category, a pure function of its fields
    (its budget's wall cap travels as epoch seconds), so it may run in any process."""

    graph: Graph
    assignment: dict[str, int]
    cap: Capacity
    costs: CutCosts
    budget: Budget
    sections: tuple[int, ...]          # the run: the only sections whose groups move
    scales: dict[int, Scale]
    buffers: BufferDemand
    separate: tuple[tuple[str, str], ...]

    @property
    def seconds(self) -> float:
        """Planned seconds (what a ``run_all`` weighs a batch by)."""
        return self.budget.left()


@dataclass
class RunRefined:
    """A run refined: its nodes' new sections, the planned seconds spent, whether the wall
    clock cut it, and the wall seconds it took where it ran."""

    moved: dict[str, int]
    spent: float
    cut_short: bool
    wall: float


def refine_run(task: RunRefinement) -> RunRefined:
    """The descent of :class:`_Refiner` on the groups of ``task``'s run alone."""
    started, budget = time.perf_counter(), task.budget
    refined = _Refiner(task.graph, dict(task.assignment), task.cap, task.costs,
                       dict(task.scales), buffer_nets(task.graph, task.buffers),
                       task.separate, budget, task.sections).run()
    run = set(task.sections)
    return RunRefined({v: k for v, k in refined.items() if k in run}, budget.spent,
                      budget.cut_short, time.perf_counter() - started)


def _movable_runs(graph: Graph, assignment: dict[str, int]) -> list[tuple[int, ...]]:
    """The runs of sections of one category (:func:`_category_runs`) of two sections or
    more: the only ones where a group can move."""
    starts, ends = _section_runs(graph, assignment)
    return [tuple(range(a, b + 1)) for a, b in dict.fromkeys(zip(starts, ends)) if b > a]


def _section_runs(graph: Graph, assignment: dict[str, int]) -> tuple[list[int], list[int]]:
    """:func:`_category_runs` of the sections of ``assignment``."""
    categories: list[set] = [set() for _ in range(max(assignment.values(), default=-1) + 1)]
    for v, k in assignment.items():
        categories[k].add(graph.node(v).category)
    return _category_runs(categories)


class _Refiner:
    """The cut being refined (``a``: node -> section, ``members`` per section), with the nets
    and edges a move needs indexed by node."""

    def __init__(self, graph: Graph, assignment: dict[str, int], cap: Capacity,
                 costs: CutCosts, scales: dict[int, Scale], buffered, separate,
                 budget: Budget, sections: tuple[int, ...]):
        self.graph, self.a, self.cap, self.costs = graph, assignment, cap, costs
        self.sections = sections          # those whose groups move
        self.scales, self.budget = scales, budget
        self.order = [v for v in graph.topological_order() if v in assignment]
        self.rank = {v: i for i, v in enumerate(self.order)}
        self.count = max(assignment.values()) + 1
        self.members: list[set[str]] = [set() for _ in range(self.count)]
        for v in self.order:
            self.members[assignment[v]].add(v)
        self.nets: list[CutNet] = cut_nets(graph, costs)
        self.nets_of: dict[str, list[int]] = {v: [] for v in self.order}
        self.sink_of: dict[str, list[int]] = {v: [] for v in self.order}
        for i, net in enumerate(self.nets):
            for v in dict.fromkeys(u for u in (net.driver, *net.sinks) if u in assignment):
                self.nets_of[v].append(i)
            for v in net.sinks:
                self.sink_of[v].append(i)
        # per net, its sinks per section, kept as groups move: whether a section moves a net
        # through DRAM needs no walk over the net's sinks
        self.sinks_at: list[dict[int, int]] = [{} for _ in self.nets]
        for i, net in enumerate(self.nets):
            for v in net.sinks:
                self.sinks_at[i][assignment[v]] = self.sinks_at[i].get(assignment[v], 0) + 1
        self.buffered: dict[str, list] = {}
        for net in buffered:
            self.buffered.setdefault(net.driver, []).append(net)
        # same-iteration edges order sections; loop-carried ones impose nothing
        self.after = {v: [] for v in self.order}
        self.before = {v: [] for v in self.order}
        for e in graph.edges:
            if not e.loop_carried and e.src != e.dst and {e.src, e.dst} <= assignment.keys():
                self.after[e.src].append(e.dst)
                self.before[e.dst].append(e.src)
        self.later = {a: [b for x, b in separate if x == a] for a, _ in separate}
        self.earlier = {b: [a for a, y in separate if y == b] for _, b in separate}
        self.demand = {v: unit_demand(graph.node(v)) for v in self.order}
        self.units = {v: tuple(self.demand[v][unit] for unit in ZERO) for v in self.order}
        self.stages = _Stages(costs, self.order, self.a)
        # per net what :meth:`settle` reads, unpacked once: it runs for every move tried
        self.net_facts = [(net.driver, net.written, len(net.sinks), net.bytes)
                          for net in self.nets]
        # per section, the bytes of each net it moves through DRAM, kept as groups move
        self.through: list[dict[int, float]] = [{} for _ in range(self.count)]
        for v in self.order:
            self.settle(self.nets_of[v], assignment[v])
        self.load = [{unit: sum(self.demand[v][unit] for v in sorted(
            self.members[k], key=self.rank.__getitem__)) for unit in ZERO}
            for k in range(self.count)]
        self.run_start, self.run_end = _section_runs(graph, assignment)

    def visit(self, nodes: int) -> None:
        """Charge the budget for visiting ``nodes`` nodes."""
        self.budget.spend(nodes / VISITS_PER_SECOND)

    def time(self, k: int) -> float:
        """Section ``k``'s cycles per sample: its slowest stage or its DRAM traffic (the
        nets' bytes summed exactly, ``math.fsum``, so that no set's order matters and the
        members need no sorting)."""
        members = self.members[k]
        self.visit(len(members))
        slowest = max(map(self.stages.__getitem__, members), default=0.0)
        return self.costs.section(slowest, math.fsum(self.through[k].values()))

    def settle(self, nets, k: int) -> None:
        """Whether section ``k`` moves each of ``nets`` through DRAM, kept in
        :attr:`through`: a move changes it for the nets of the group moved, in the two
        sections it moves between."""
        a, sinks_at, facts, through = self.a, self.sinks_at, self.net_facts, self.through[k]
        for i in nets:
            driver, written, sinks, size = facts[i]
            here = sinks_at[i].get(k, 0)
            # k moves the net: as its driver's section, written or read elsewhere; else read
            if (written or here < sinks) if a.get(driver) == k else here:
                through[i] = size
            else:
                through.pop(i, None)

    def roomy(self, k: int) -> bool:
        """Whether section ``k``'s units fit, buffers apart, from the totals kept as groups
        move: what most tries of an ejection fail on, checked before :meth:`fits`."""
        return self._roomy_as(k, self.load[k])

    def room_for(self, group: list[str], to: int) -> bool:
        """Whether ``group`` moved to ``to`` leaves both ``to`` and its own section roomy
        (:meth:`roomy`), from the totals alone: most groups an ejection tries fail it, and
        need not move."""
        frm, moved = self.a[group[0]], tuple(map(sum, zip(*map(self.units.__getitem__, group))))
        return (self._roomy_as(to, {u: self.load[to][u] + m for u, m in zip(ZERO, moved)})
                and self._roomy_as(frm, {u: self.load[frm][u] - m for u, m in zip(ZERO, moved)}))

    def _roomy_as(self, k: int, load: dict[str, float]) -> bool:
        """:meth:`roomy` of section ``k`` holding ``load``."""
        self.visit(1)
        return Section(k, **load).fits_with(ZERO, self.cap, self.scales.get(k, 1.0))

    def fits(self, k: int) -> bool:
        """Whether section ``k`` fits with its stage buffers."""
        if not self.roomy(k):
            return False
        self.visit(len(self.members[k]))
        section = Section(k)
        for v in sorted(self.members[k], key=self.rank.__getitem__):
            section.add(v, self.demand[v])
        section.buffers = sum(net.pmus_in(self.members[k])
                              for v in sorted(self.members[k], key=self.rank.__getitem__)
                              for net in self.buffered.get(v, ()))
        return section.fits_with(ZERO, self.cap, self.scales.get(k, 1.0))

    def group(self, v: str, down: bool) -> list[str]:
        """``v`` with its descendants (``down``) or ancestors inside its section, in order."""
        k, step = self.a[v], self.after if down else self.before
        seen, todo = {v}, [v]
        while todo:
            for u in step[todo.pop()]:
                if u not in seen and self.a[u] == k:
                    seen.add(u)
                    todo.append(u)
        self.visit(len(seen))
        return sorted(seen, key=self.rank.__getitem__)

    def legal(self, group: list[str], to: int) -> bool:
        """Whether the separated pairs allow ``group`` in section ``to``."""
        inside = set(group)
        return (all(self.a[b] > to or b in inside for v in group for b in self.later.get(v, ())
                    if b in self.a)
                and all(self.a[b] < to or b in inside for v in group
                        for b in self.earlier.get(v, ()) if b in self.a))

    def move(self, group: list[str], to: int) -> None:
        """Move ``group`` (one section's nodes) to section ``to``."""
        self.visit(len(group))
        frm, members, sinks_at, stages = self.a[group[0]], self.members, self.sinks_at, self.stages
        for v in group:
            stages.forget(v)
            members[frm].discard(v)
            members[to].add(v)
            self.a[v] = to
            for i in self.sink_of[v]:
                at = sinks_at[i]
                at[frm] -= 1
                at[to] = at.get(to, 0) + 1
        nets = set().union(*map(self.nets_of.__getitem__, group))
        self.settle(nets, frm)
        self.settle(nets, to)
        units = map(sum, zip(*map(self.units.__getitem__, group)))
        for unit, moved in zip(ZERO, units):
            self.load[frm][unit] -= moved
            self.load[to][unit] += moved

    def reach(self, group: list[str], down: bool) -> range:
        """The sections ``group`` may move to, its own apart: down to the first section of a
        successor outside it, or up to the last section of a predecessor outside it, within
        its category's run of sections."""
        k, inside = self.a[group[0]], set(group)
        if down:
            stop = min((self.a[u] for v in group for u in self.after[v] if u not in inside),
                       default=self.count - 1)
            return range(k + 1, min(stop, self.run_end[k]) + 1)
        start = max((self.a[u] for v in group for u in self.before[v] if u not in inside),
                    default=0)
        return range(k - 1, max(start, self.run_start[k]) - 1, -1)

    def neighbours(self, group: list[str]) -> set[int]:
        """The sections holding a node that shares a net with ``group``: the only ones a
        move of it can save DRAM bytes or stage cycles in."""
        out = set()
        for v in group:
            if v not in self.near:          # per node, until a move is taken
                ends = [u for i in self.nets_of.get(v, ())
                        for u in (self.nets[i].driver, *self.nets[i].sinks) if u in self.a]
                self.visit(len(ends))
                self.near[v] = {self.a[u] for u in ends}
            out |= self.near[v]
        self.visit(len(group))
        return out

    def times(self, sections) -> float:
        """The summed time of ``sections``."""
        return sum(self.time(k) for k in sorted(set(sections)))

    def try_moves(self, moves: list[tuple[list[str], int]], before: float
                  ) -> tuple[float | None, float]:
        """``moves`` (group, section) applied in turn, then undone: the time they save on
        the sections they touch, whose time was ``before`` (None when a receiving section
        would not fit or a separated pair forbids a move), and what they save ignoring
        the fit)."""
        touched, undo, saved, fits = set(), [], None, False
        for group, to in moves:
            if not self.legal(group, to):
                break
            touched |= {self.a[group[0]], to}
            undo.append((group, self.a[group[0]]))
            self.move(group, to)
        else:
            fits = all(self.fits(to) for _, to in moves)
            saved = before - self.times(touched)
        for group, back in reversed(undo):
            self.move(group, back)
        return (saved if fits else None), (saved or 0.0)

    def ejections(self, group: list[str], k: int, to: int, before: float
                  ) -> tuple[float, list] | None:
        """The best move of ``group`` from ``k`` into the full section ``to`` together with
        a group of ``to`` moved on to where there is room for it (``before``: the time of
        ``k`` and ``to``); ``group`` stays in ``to`` while they are tried."""
        self.move(group, to)
        inside, best = set(group), None
        for w in sorted(self.members[to] - inside, key=self.rank.__getitem__):
            for down in (True, False):
                other = self.group(w, down)
                if not inside.isdisjoint(other):
                    continue
                for i in self.reach(other, down):
                    if self.budget.over() or not self.legal(other, i):
                        continue
                    if not self.room_for(other, i):
                        self.visit(2 * len(other))      # charged as its move there and back
                        continue
                    self.move(other, i)
                    if self.fits(i) and self.fits(to):
                        saved = (before + (self.now[i] if i not in (k, to) else 0.0)
                                 - self.times({k, to, i}))
                        if best is None or saved > best[0]:
                            best = (saved, [(group, to), (other, i)])
                    self.move(other, to)
        self.move(group, k)
        return best

    def best_from(self, k: int, total: float) -> tuple[float, list] | None:
        """The move of a group out of section ``k`` that lowers the time most, if any: alone,
        or, for the :data:`EJECT` groups that would save most were their section not full,
        with a group of that section moved on (:meth:`ejections`)."""
        best, size, blocked = None, len(self.members[k]), []
        for v in sorted(self.members[k], key=self.rank.__getitem__):
            if self.budget.over():
                break
            for down in (True, False):
                group = self.group(v, down)
                if len(group) == size:
                    continue            # the section would empty
                near = self.neighbours(group)
                for to in (to for to in self.reach(group, down) if to in near):
                    before = self.now[k] + self.now[to]
                    saved, unfit = self.try_moves([(group, to)], before)
                    if saved is not None:
                        if best is None or saved > best[0]:
                            best = (saved, [(group, to)])
                    elif unfit > 0:
                        blocked.append((-unfit, len(blocked), group, to, before))
        for unfit, _, group, to, before in sorted(blocked, key=lambda b: b[:2])[:EJECT]:
            if (best is not None and -unfit <= best[0]) or -unfit < EJECT_GAIN * total:
                break
            found = self.ejections(group, k, to, before)
            if found is not None and (best is None or found[0] > best[0]):
                best = found
        return best if best is not None and best[0] > GAIN * max(1.0, total) else None

    def run(self) -> dict[str, int]:
        """Sweep the sections, slowest first, taking the best move out of each, until a
        sweep moves nothing or the budget is spent."""
        self.now = [self.time(k) for k in range(self.count)]
        self.near: dict[str, set[int]] = {}
        total, moved = sum(self.now), True
        while moved and not self.budget.over():
            moved = False
            for k in sorted(self.sections, key=lambda k: (-self.now[k], k)):
                if self.budget.over():
                    break
                best = self.best_from(k, total)
                if best is not None:
                    saved, moves = best
                    for group, to in moves:
                        touched = (self.a[group[0]], to)
                        self.move(group, to)
                        for j in touched:
                            self.now[j] = self.time(j)
                    total -= saved
                    moved = True
                    self.near.clear()
        return self.a


class _Stages(dict):
    """Each node's stage cycles in the cut being refined (:meth:`CutCosts.stage_in
    <formulations.sections.costs.CutCosts.stage_in>`), kept as groups move: a stage no cut
    changes (no streamed inputs) is stored once, a streaming node's is computed when it is
    asked for after the node or one of its sources moved (:meth:`forget`)."""

    def __init__(self, costs: CutCosts, nodes: list[str], assignment: dict[str, int]):
        super().__init__((v, costs.stage.get(v, 0.0)) for v in nodes if not costs.streamed.get(v))
        self.costs, self.a = costs, assignment
        self.streaming = {v for v in nodes if v not in self}
        self.fed: dict[str, list[str]] = {}         # per source, the streaming nodes it feeds
        for v in filter(self.streaming.__contains__, nodes):
            for u in dict.fromkeys(u for u, _ in costs.streamed[v]):
                self.fed.setdefault(u, []).append(v)

    def __missing__(self, v: str) -> float:
        self[v] = stage = self.costs.stage_in(v, self.a)
        return stage

    def forget(self, v: str) -> None:
        """Drop the stages that a move of ``v`` may change: its own, and those of the
        streaming nodes it feeds."""
        if v in self.streaming:
            self.pop(v, None)
        for w in self.fed.get(v, ()):
            self.pop(w, None)


def _category_runs(categories: list[set]) -> tuple[list[int], list[int]]:
    """Per section, the first and the last section of its run of one category (a section of
    no or mixed categories is a run of its own).

    >>> _category_runs([{"f"}, {"f"}, {"b"}, {"b"}, {"b"}])
    ([0, 0, 2, 2, 2], [1, 1, 4, 4, 4])
    """
    start, end = list(range(len(categories))), list(range(len(categories)))
    same = [len(categories[k]) == 1 and categories[k] == categories[k + 1]
            for k in range(len(categories) - 1)]
    for k in range(1, len(categories)):
        if same[k - 1]:
            start[k] = start[k - 1]
    for k in range(len(categories) - 2, -1, -1):
        if same[k]:
            end[k] = end[k + 1]
    return start, end
