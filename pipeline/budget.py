"""One budget for the whole run: planned work across levels and sections, one deadline.

``--work`` is the run's planned work (default: :data:`MAPPING_SHARE` of
``--time-limit``), ``--time-limit`` its deadline, counted from the process start
(:func:`process_started`: the interpreter's start, the imports and the loading count).
:class:`RunPlan` plans each solve's share of the work *deterministically*: the
section cut gets :data:`CUT_SHARE` of the planned time, each section's balancing
:data:`BUFFER_SHARE` of its part, and
each section's placement and routing the rest of its part, in proportion to its
nodes; a share is taken from what is still unplanned, so a feedback round that
re-cuts sections re-plans by itself. The planned seconds are what the searches
turn into deterministic work (CP-SAT's deterministic time, move and round
counts), so the same seed and work give the same mapping whatever the machine's
load. The wall clock cuts in at one place only, the run's deadline: every solve
gets it as its cap, and a run that reaches it says so in the report (its answer
is then checked and legal, but no longer promised to repeat).
"""

from __future__ import annotations

import math
import os
import time
from dataclasses import dataclass, field
from typing import Callable

from formulations.solver import SolveSettings

__all__ = ["RunPlan", "process_started", "CUT_SHARE", "CUT_WALL_SHARE", "BUFFER_SHARE",
           "ROUTING_SHARE", "MIN_SOLVE_SECONDS", "AFTER_SECONDS_PER_NODE", "MAPPING_SHARE",
           "OVERRUN_SHARE", "LIMIT_SHARE", "START_SECONDS", "OUTPUT_SECONDS",
           "placement_cap"]

#: Share of the planned time for the section cut (it stops early at a proven optimum).
CUT_SHARE = 0.25
#: How far towards the mapping's deadline the section cut (its probes included) may go on
#: the wall clock: twice its share of the work. Only a machine more than twice as slow as
#: the plan reaches it (then the cut stops, counted as cut short), and the sections still
#: get the rest: bert_L-12 training at 20 s on a loaded 2-core machine spent 17 of its 17.4
#: s in a cut planned 4.4 s, and no section was placed in time.
CUT_WALL_SHARE = 2 * CUT_SHARE
#: Share of a section's planned time for stage-buffer balancing.
BUFFER_SHARE = 0.15
#: Share of a section's place-and-route time for routing (placement gets the rest).
ROUTING_SHARE = 1 / 3
#: The least a solve is planned, so that a model is at least built and hinted.
MIN_SOLVE_SECONDS = 0.05
#: Share of ``--time-limit`` the mapping passes get; the rest is kept for writing the
#: outputs and drawing pictures (about 0.3 s per section), so the whole run ends in time.
MAPPING_SHARE = 0.9
#: Seconds kept after the mapping passes per node of the graph, on top of the time limit's
#: last 10 %: the checks of twin sections, the performance estimate and mapping.json of a
#: 50,000-node chain took 7.5 s, 12.7 s and 1.9 s on this project's 2-core machine at load
#: 5 (about 2.5 times its idle time).
AFTER_SECONDS_PER_NODE = 3e-4
#: How far past ``--time-limit`` the mapping passes may go finishing sections by the fast
#: path before the run stops (a run ends within its time limit + 10 %, outputs included).
OVERRUN_SHARE = 0.05
#: The promise: a run ends within ``(1 + LIMIT_SHARE) x --time-limit + START_SECONDS``
#: (the last seconds for the interpreter's start and exit); sections not begun by the overdue
#: point are still mapped by the fast path when it ends :data:`OUTPUT_SECONDS` (the report,
#: and pictures only in what is left) before that: a run is not failed for a few sections of
#: a tenth of a second each.
LIMIT_SHARE = 0.10
START_SECONDS = 2.0
OUTPUT_SECONDS = 1.0


def process_started() -> float:
    """The ``time.monotonic()`` reading when this process started: its start time in
    ``/proc/self/stat`` against the boot clock (Linux, 10 ms ticks); elsewhere when this
    module was first imported.

    >>> 0 <= time.monotonic() - process_started() < 3600
    True
    """
    try:
        with open("/proc/self/stat", "rb") as stat:      # the name may hold spaces: after ')'
            fields = stat.read().rsplit(b")", 1)[1].split()
        age = time.clock_gettime(time.CLOCK_BOOTTIME) - int(fields[19]) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError, AttributeError):
        return _IMPORTED
    return time.monotonic() - max(0.0, age)


_IMPORTED = time.monotonic()


def placement_cap(nodes: int) -> float:
    """Seconds a section's placement model ever needs: ``1 + 0.05 * nodes``.

    Measured on the benchmark sections: the LNS stops improving well within
    this, so a long budget does not turn into idle search.

    >>> placement_cap(128)
    7.4
    """
    return round(1 + 0.05 * nodes, 3)


@dataclass
class RunPlan:
    """The run's planned work (``total`` seconds), its deadline and each solve's share.

    Examples
    --------
    >>> b = RunPlan(60.0)
    >>> b.cut_seconds()                      # a quarter of the 60 s
    15.0
    >>> b.section_seconds(nodes=10, nodes_left=40)   # a quarter of the 45 s still unplanned
    11.25
    """

    total: float
    clock: Callable[[], float] = time.monotonic
    grace: float = 0.0          # seconds past the deadline before :meth:`overdue`
    slack: float = 0.0          # then seconds the last sections may take (:meth:`can_finish`)
    wall: float | None = None   # seconds from ``started`` to the deadline (None: ``total``)
    started: float | None = None    # the ``clock`` reading when the run began (None: now)
    unplanned: float = field(init=False)

    def __post_init__(self):
        if not (math.isfinite(self.total) and self.total > 0):
            raise ValueError(f"a budget must be a finite number of seconds > 0, not {self.total}")
        self.started = self.clock() if self.started is None else self.started
        self.wall = self.total if self.wall is None else self.wall
        self.unplanned = self.total

    @classmethod
    def of_run(cls, time_limit: float, work: float | None = None,
               started: float | None = None, nodes: int = 0) -> "RunPlan":
        """The mapping passes' budget within a run of ``time_limit`` seconds from
        ``started`` (None: now) on a graph of ``nodes``, each point less
        :data:`AFTER_SECONDS_PER_NODE` per node (the estimate and mapping.json after them):
        the deadline at :data:`MAPPING_SHARE` of the time limit (never before half of it),
        overdue at ``1 +`` :data:`OVERRUN_SHARE` of it, the fast path finishing up to
        :data:`OUTPUT_SECONDS` before the promised end (:data:`LIMIT_SHARE`,
        :data:`START_SECONDS`); ``work`` planned seconds (None: up to the deadline).

        >>> b = RunPlan.of_run(60.0)
        >>> b.total, b.wall, round(b.grace, 6), round(b.slack, 6)
        (54.0, 54.0, 9.0, 4.0)
        >>> RunPlan.of_run(60.0, work=10.0).total, RunPlan.of_run(60.0, nodes=50_000).wall
        (10.0, 39.0)
        """
        after = AFTER_SECONDS_PER_NODE * nodes
        wall = max(time_limit * MAPPING_SHARE - after, time_limit / 2)
        overdue = max(wall, time_limit * (1 + OVERRUN_SHARE) - after)
        finish = max(overdue, time_limit * (1 + LIMIT_SHARE) + START_SECONDS - after
                     - OUTPUT_SECONDS)
        return cls(wall if work is None else work, grace=overdue - wall, slack=finish - overdue,
                   wall=wall, started=started)

    @classmethod
    def of_options(cls, options, nodes: int = 0) -> "RunPlan":
        """:meth:`of_run` of a run's options (``time_limit``, ``work``, ``started``)."""
        return cls.of_run(options.time_limit, options.work, options.started, nodes)

    @property
    def deadline(self) -> float:
        return self.started + self.wall

    def left(self) -> float:
        """Wall-clock seconds until the deadline (never below 0)."""
        return max(0.0, self.deadline - self.clock())

    def used(self) -> float:
        """Wall-clock seconds since the run started (the process, on the command line)."""
        return self.clock() - self.started

    def expired(self) -> bool:
        return self.left() <= 0.0

    def overdue(self) -> bool:
        """Past the deadline by more than :attr:`grace`: no further section is begun."""
        return self.clock() > self.deadline + self.grace

    def can_finish(self, seconds: float) -> bool:
        """Whether work of ``seconds`` more still ends within :attr:`slack` of the
        overdue point (the last cheap sections of an overdue run)."""
        return self.clock() + seconds <= self.deadline + self.grace + self.slack

    def _take(self, seconds: float) -> float:
        """Plan ``seconds`` (at least the minimum) out of what is unplanned."""
        granted = max(MIN_SOLVE_SECONDS, min(seconds, self.unplanned))
        self.unplanned = max(0.0, self.unplanned - granted)
        return round(granted, 6)

    def cut_seconds(self) -> float:
        """Planned seconds of the section cut."""
        return self._take(CUT_SHARE * self.unplanned)

    def section_seconds(self, nodes: int, nodes_left: int) -> float:
        """This section's share of the unplanned time (``nodes_left``: not compiled yet)."""
        return self.unplanned * nodes / max(nodes, nodes_left, 1)

    def buffer_seconds(self, nodes: int, nodes_left: int) -> float:
        """Planned seconds of one section's stage-buffer balancing."""
        return self._take(BUFFER_SHARE * self.section_seconds(nodes, nodes_left))

    def place_route_seconds(self, nodes: int, nodes_left: int) -> tuple[float, float]:
        """Planned seconds of one section's placement and of its routing."""
        share = self.section_seconds(nodes, nodes_left)
        place = min(placement_cap(nodes), (1 - ROUTING_SHARE) * share)
        route = min(max(1.0, place / 2), max(share - place, MIN_SOLVE_SECONDS))
        return self._take(place), self._take(route)

    def settings(self, options, decision: str, seconds: float, until: float = 1.0
                 ) -> SolveSettings:
        """``decision``'s solve settings: ``seconds`` planned, the cap ``until`` x the way
        to the run's deadline (1: the deadline itself)."""
        return SolveSettings(backend=options.backend_for(decision), time_limit=seconds,
                             seed=options.seed, export_dir=options.export_dir,
                             deadline=self.started + until * self.wall)
