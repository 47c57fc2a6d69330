"""One wall-clock budget for the whole run, planned across levels and sections.

``--time-limit`` is the run's budget. :class:`Budget` plans each solve's share
of it *deterministically*: the section cut gets :data:`CUT_SHARE` of the
planned time, each section's balancing :data:`BUFFER_SHARE` of its part, and
each section's placement and routing the rest of its part, in proportion to its
nodes; a share is taken from what is still unplanned, so a feedback round that
re-cuts sections re-plans by itself. The planned seconds are what the searches
turn into deterministic work (CP-SAT's deterministic time, move and round
counts), so the same seed gives the same mapping whatever the machine's load.
The wall clock is only the outer cap: every solve also gets the run's
deadline, and a run that reaches it says so in the report (its answer is then
checked and legal, but no longer promised to repeat).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Callable

from formulations.solver import SolveSettings

__all__ = ["Budget", "CUT_SHARE", "BUFFER_SHARE", "ROUTING_SHARE", "MIN_SOLVE_SECONDS",
           "MAPPING_SHARE", "OVERRUN_SHARE", "FINISH_SHARE", "placement_cap"]

#: Share of the planned time for the section cut (it stops early at a proven optimum).
CUT_SHARE = 0.25
#: Share of a section's planned time for stage-buffer balancing.
BUFFER_SHARE = 0.15
#: Share of a section's place-and-route time for routing (placement gets the rest).
ROUTING_SHARE = 1 / 3
#: The least a solve is planned, so that a model is at least built and hinted.
MIN_SOLVE_SECONDS = 0.05
#: Share of ``--time-limit`` the mapping passes get; the rest is kept for writing the
#: outputs and drawing pictures (about 0.3 s per section), so the whole run ends in time.
MAPPING_SHARE = 0.9
#: How far past ``--time-limit`` the mapping passes may go finishing sections by the fast
#: path before the run stops (a run ends within its time limit + 10 %, outputs included).
OVERRUN_SHARE = 0.05
#: Then, what the last sections may still take when the measured time of the others says
#: they fit: a run is not failed for a section of a tenth of a second.
FINISH_SHARE = 0.03


def placement_cap(nodes: int) -> float:
    """Seconds a section's placement model ever needs: ``1 + 0.05 * nodes``.

    Measured on the benchmark sections: the LNS stops improving well within
    this, so a long budget does not turn into idle search.

    >>> placement_cap(128)
    7.4
    """
    return round(1 + 0.05 * nodes, 3)


@dataclass
class Budget:
    """The run's deadline and the planned share of each solve.

    Examples
    --------
    >>> b = Budget(60.0)
    >>> b.cut_seconds()                      # a quarter of the 60 s
    15.0
    >>> b.section_seconds(nodes=10, nodes_left=40)   # a quarter of the 45 s still unplanned
    11.25
    """

    total: float
    clock: Callable[[], float] = time.monotonic
    grace: float = 0.0          # seconds past the deadline before :meth:`overdue`
    slack: float = 0.0          # then seconds the last sections may take (:meth:`can_finish`)
    started: float = field(init=False)
    unplanned: float = field(init=False)

    def __post_init__(self):
        if not (math.isfinite(self.total) and self.total > 0):
            raise ValueError(f"a budget must be a finite number of seconds > 0, not {self.total}")
        self.started = self.clock()
        self.unplanned = self.total

    @classmethod
    def of_run(cls, time_limit: float) -> "Budget":
        """The mapping passes' budget within a run of ``time_limit`` seconds: the
        deadline at :data:`MAPPING_SHARE` of it, overdue :data:`OVERRUN_SHARE` past it.

        >>> b = Budget.of_run(60.0)
        >>> b.total, round(b.grace, 6), round(b.slack, 6)
        (54.0, 9.0, 1.8)
        """
        return cls(time_limit * MAPPING_SHARE,
                   grace=time_limit * (1 + OVERRUN_SHARE - MAPPING_SHARE),
                   slack=time_limit * FINISH_SHARE)

    @property
    def deadline(self) -> float:
        return self.started + self.total

    def left(self) -> float:
        """Wall-clock seconds until the deadline (never below 0)."""
        return max(0.0, self.deadline - self.clock())

    def used(self) -> float:
        """Wall-clock seconds since the run started."""
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

    def settings(self, options, decision: str, seconds: float) -> SolveSettings:
        """``decision``'s solve settings: ``seconds`` planned, the run's deadline as the cap."""
        return SolveSettings(backend=options.backend_for(decision), time_limit=seconds,
                             seed=options.seed, export_dir=options.export_dir,
                             deadline=self.deadline)
