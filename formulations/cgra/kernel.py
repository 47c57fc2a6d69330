"""One loop kernel on a CGRA: every decision from the graph to a modulo mapping.

Scope
-----
:func:`map_kernel` indexes the kernel (:func:`~formulations.cgra.problem.problem_from_graph`),
runs the pre-checks, the baseline (:func:`~formulations.cgra.listsched.list_schedule`, at most
:data:`BASELINE_SHARE` of the time), then, for the placer ``"model"``, the II sweep on
``settings.backend`` (CP-SAT: :func:`~formulations.cgra.sweep.sweep_ii` with its proofs; a
linear backend: :func:`~formulations.cgra.milp.sweep_milp`), warm-started by the baseline.
The placer ``"list"`` keeps the baseline (the classic mapper, for comparison).

Examples
--------
>>> from hardware import load_hardware
>>> from model.graph import Graph, Node, Edge
>>> g = Graph("acc", [Node("a", op="LOAD"), Node("b", op="ADD")],
...           [Edge("a", "b"), Edge("b", "b", distance=1)])
>>> r = map_kernel(g, load_hardware("cgra4x4"), SolveSettings(time_limit=5))
>>> r.schedule.ii, r.schedule.status, r.baseline.ii
(1, 'optimal', 1)
"""

from __future__ import annotations

import time
from dataclasses import dataclass, replace
from typing import Callable

from formulations.cgra.listsched import LARGE_KERNEL, ROUNDS, list_schedule
from formulations.cgra.milp import sweep_milp
from formulations.cgra.problem import (CgraInfeasible, CgraProblem, CgraSchedule, lower_bounds,
                                       precheck, problem_from_graph)
from formulations.cgra.sweep import sweep_ii
from formulations.solver import SolveSettings
from hardware import CgraSpec
from model.graph import Graph

__all__ = ["PLACERS", "BASELINE_SHARE", "SECOND_SHARE", "CgraResult", "map_kernel"]

#: Placers of a CGRA run (``--placer``): the CP-SAT sweep (``model``, default) or the
#: baseline alone (``list``).
PLACERS = ("model", "list")
#: Share of the time limit the baseline may use before the sweep.
BASELINE_SHARE = 0.5
#: Share of the time left a large kernel's baseline gets again when its first share ran out.
SECOND_SHARE = 0.7


@dataclass
class CgraResult:
    """The problem, its lower bounds, the mapping and the baseline beside it."""

    problem: CgraProblem
    bounds: dict[str, int]
    schedule: CgraSchedule
    baseline: CgraSchedule | None
    baseline_seconds: float
    baseline_note: str = ""


def map_kernel(graph: Graph, spec: CgraSpec, settings: SolveSettings, placer: str = "model",
               progress: Callable[[str], None] | None = None) -> CgraResult:
    """Map ``graph`` on ``spec`` (see the module); raises :class:`CgraInfeasible` with the
    reasons in the user's terms when nothing maps."""
    say = progress or (lambda line: None)
    if placer not in PLACERS:
        raise ValueError(f"unknown CGRA placer {placer!r}; use one of {PLACERS}")
    started = time.perf_counter()
    problem = problem_from_graph(graph, spec)
    reasons = precheck(problem)
    if reasons:
        raise CgraInfeasible(reasons)
    bounds = lower_bounds(problem)
    share = settings.wall_seconds() * (1.0 if placer == "list" else BASELINE_SHARE)
    baseline, note = None, ""
    try:
        baseline = list_schedule(problem, settings.seed, time_limit=max(0.2, share))
        say(f"list scheduling: II {baseline.ii}, length {baseline.length}")
    except CgraInfeasible as exc:
        note = "; ".join(exc.reasons)
        say(f"list scheduling: {note}")
    if baseline is None and placer == "model" and note.startswith("T0"):
        baseline, note = _second_chance(problem, settings, started, say, note)
    baseline_seconds = time.perf_counter() - started
    if placer == "list":
        if baseline is None:
            raise CgraInfeasible([note])
        baseline.ii_bound = bounds["ii"]
        baseline.proven_ii = baseline.ii == bounds["ii"]
        return CgraResult(problem, bounds, baseline, baseline, baseline_seconds, note)
    rest = settings.with_time(max(0.5, settings.time_limit - baseline_seconds))
    if settings.backend == "cp-sat":
        sched = sweep_ii(problem, rest, replace(baseline) if baseline else None, say)
    else:
        sched = sweep_milp(problem, rest, replace(baseline) if baseline else None)
    return CgraResult(problem, bounds, sched, baseline, baseline_seconds, note)


def _second_chance(problem: CgraProblem, settings: SolveSettings, started: float,
                   say: Callable[[str], None], note: str) -> tuple[CgraSchedule | None, str]:
    """The baseline ran out of its share: on a kernel of more than
    :data:`~formulations.cgra.listsched.LARGE_KERNEL` operations the sweep rarely maps from
    nothing (its relaxation alone takes seconds), so the baseline gets
    :data:`SECOND_SHARE` of the time left, with other seeds, before the sweep."""
    if problem.n <= LARGE_KERNEL:
        return None, note
    left = min(settings.time_limit - (time.perf_counter() - started), settings.wall_seconds())
    try:
        baseline = list_schedule(problem, settings.seed + ROUNDS,
                                 time_limit=max(0.2, left * SECOND_SHARE))
    except CgraInfeasible as exc:
        return None, note + "; " + "; ".join(exc.reasons)
    say(f"list scheduling (second chance): II {baseline.ii}, length {baseline.length}")
    return baseline, ""
