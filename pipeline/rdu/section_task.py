"""One section's ordering, placement, routing and check as a task that runs anywhere.

After the section cut, sections never read one another until the feedback loop
needs them again. :class:`SectionTask` holds everything one section's compile
reads: its graph (buffer units included), the hardware, the options with the
section's own seed, the planned seconds and the run's deadline as wall-clock
epoch seconds (a worker may be another machine, whose monotonic clock differs).
:func:`compile_section` is a pure function of it, so the same task gives the
same :class:`SectionResult` in this process, on a local worker or on a cluster
(``pipeline.cluster``); the feedback loop stays with the driver
(``pipeline.rdu.levels.PlaceRouteLevel``).
"""

from __future__ import annotations

import hashlib
import math
import time
from dataclasses import dataclass, replace
from typing import Any, Callable

from formulations.solver import SolveSettings, from_epoch
from hardware import build_fabric
from model.graph import Graph
from pipeline.rdu.section_pass import SectionOutcome, map_section
from pipeline.stage import stage_record
from sim.check import CheckReport, check_section

__all__ = ["SectionTask", "SectionResult", "compile_section", "section_seed", "PAST_DEADLINE",
           "FAST_PATH_SECONDS", "BufferTask", "BufferResult", "balance_buffers"]

#: A section planned less than this for placement and routing together takes the fast
#: path (greedy + PathFinder): the models' own set-up costs about this much.
FAST_PATH_SECONDS = 0.15
#: Why a section begun after the run's deadline takes the fast path.
PAST_DEADLINE = "past the run's deadline"


def section_seed(seed: int, node_ids: list[str]) -> int:
    """The seed of a section: from the run's seed and the section's content, so a
    section gets the same seed wherever it runs and whatever its neighbours.

    >>> section_seed(0, ["a", "b"]) == section_seed(0, ["a", "b"]) != section_seed(1, ["a", "b"])
    True
    """
    digest = hashlib.sha256(f"{seed}\0".encode() + "\0".join(node_ids).encode()).digest()
    return int.from_bytes(digest[:4], "big") >> 1       # 31 bits: every solver takes it


@dataclass(frozen=True, eq=False)
class SectionTask:
    """Everything one section's compile reads (see the module docstring)."""

    graph: Graph
    spec: Any
    section: int
    options: Any                     # pipeline.options.RunOptions, seed the section's own
    settings: tuple[SolveSettings, SolveSettings]   # placement, routing: planned seconds
    penalty: dict[str, float] | None
    fast: str | None                 # the plan's fast-path reason, or None
    deadline: float                  # the run's deadline, epoch seconds (time.time())
    overdue: float                   # past this (epoch seconds) the section is not begun
    finish: float                    # a section begun late ends its fast path by this


@dataclass
class SectionResult:
    """The outcome and the checker's report; ``outcome`` None: not begun (overdue)."""

    outcome: SectionOutcome | None
    check: CheckReport | None = None
    seconds: float = 0.0


def compile_section(task: SectionTask, say: Callable[[str], None] | None = None
                    ) -> SectionResult:
    """Order, place, route and check one section (``say``: the router's progress lines)."""
    started = time.perf_counter()
    if time.time() > task.overdue:
        return SectionResult(None)
    fabric = build_fabric(task.spec)          # cached per process
    options, fast = task.options, task.fast
    begun_late = time.time() >= task.deadline
    if fast is None and options.placer != "greedy" and begun_late:
        fast = PAST_DEADLINE
    # begun past the deadline, a section may work up to the run's last moment, whatever sent
    # it down the fast path: capped at the deadline, PathFinder would stop after its first
    # iteration and a congested section fail for want of time, not of room (bert_L-12
    # training at 120 s, load 5: such failures re-cut four times, 32 sections became 61)
    cap = task.finish if begun_late else task.deadline
    settings = tuple(replace(s, deadline=from_epoch(cap)) for s in task.settings)
    if fast:   # the fastest legal answer, said so in the stages
        options = replace(options, placer="greedy", router="negotiated")
    outcome = map_section(task.graph, fabric, task.section, options, say or _silent, settings,
                          task.penalty)
    if fast:
        late = {"cut_short": True} if fast == PAST_DEADLINE else {}
        for stage in outcome.stages[1:]:
            stage |= {"note": f"{fast}: greedy placement and PathFinder routing"} | late
    check = None
    if outcome.failure is None:
        check = check_section(task.graph, fabric, outcome.placement, outcome.paths)
    return SectionResult(outcome, check, time.perf_counter() - started)


def _silent(line: str) -> None:
    """Progress lines of a worker stay there: the driver reports each section as it lands."""


@dataclass(frozen=True, eq=False)
class BufferTask:
    """Everything one section's stage-buffer balancing reads: the section as cut, the
    balancer (``pipeline.rdu.buffers_pass.balance_section`` or a stand-in), its settings
    without the deadline, and the run's deadline as epoch seconds."""

    graph: Graph
    spec: Any
    section: int
    options: Any
    settings: SolveSettings
    balancer: Callable
    deadline: float


@dataclass
class BufferResult:
    """Rows per local edge, PMUs added per local edge, report lines, stage record."""

    rows: dict[int, dict]
    added: dict[int, int]
    lines: list[str]
    stage: dict


def balance_buffers(task: BufferTask) -> BufferResult:
    """Balance one section's stage buffers (in whichever process runs it)."""
    started = time.perf_counter()
    settings = replace(task.settings, deadline=from_epoch(task.deadline))
    result = task.balancer(task.graph, task.spec, task.options, settings, section=task.section)
    rows = dict(result.rows)
    added = {}
    for k, row in rows.items():
        extra = row.get("pmus_added")
        if extra is None:   # the PMUs an edge's buffer already had are not new units
            before = math.ceil((row.get("original_depth") or 1) / (row.get("depth_per_pmu") or 1))
            extra = max(0, int(row.get("pmus", 0)) - before)
        if extra:
            added[k] = int(extra)
    lines = list(result.report_lines()) if hasattr(result, "report_lines") else []
    stage = getattr(result, "stage", None)
    stage = stage_record("buffers", task.section, "balancing", started) if not stage else stage
    return BufferResult(rows, added, lines, stage | {"section": task.section})
