"""One wall-clock budget for the whole run, planned across levels and sections.

``--time-limit`` is the run's budget. :class:`Budget` holds its deadline and
hands each solve a share of what is left, never more: the section cut gets at
most :data:`CUT_SHARE` of it, each section's balancing :data:`BUFFER_SHARE` of
its part, and each section's placement and routing the rest of its part, in
proportion to its nodes. Every share is computed from the time left and the
work left at the moment it is asked for, so a feedback round that re-cuts
sections re-plans by itself, and a level that finishes early leaves its time
to the ones after it.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Callable

__all__ = ["Budget", "CUT_SHARE", "BUFFER_SHARE", "ROUTING_SHARE", "MIN_SOLVE_SECONDS",
           "placement_cap"]

#: Most of the budget the section cut may take (it has warm starts and windows to stop early).
CUT_SHARE = 0.25
#: Share of a section's time for stage-buffer balancing.
BUFFER_SHARE = 0.15
#: Share of a section's place-and-route time for routing (placement gets the rest).
ROUTING_SHARE = 1 / 3
#: The least a solve is given, so that a model is at least built and hinted.
MIN_SOLVE_SECONDS = 0.05


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
    """The run's deadline and the share of it each solve gets.

    Examples
    --------
    >>> now = [0.0]
    >>> b = Budget(60.0, clock=lambda: now[0])
    >>> b.cut_seconds()                       # a quarter of the 60 s left
    15.0
    >>> now[0] = 30.0
    >>> b.section_seconds(nodes=10, nodes_left=40)   # 30 s left, a quarter of the work
    7.5
    """

    total: float
    clock: Callable[[], float] = time.monotonic
    started: float = field(init=False)

    def __post_init__(self):
        if not (math.isfinite(self.total) and self.total > 0):
            raise ValueError(f"a budget must be a finite number of seconds > 0, not {self.total}")
        self.started = self.clock()

    @property
    def deadline(self) -> float:
        return self.started + self.total

    def left(self) -> float:
        """Seconds until the deadline (never below 0)."""
        return max(0.0, self.deadline - self.clock())

    def used(self) -> float:
        return self.clock() - self.started

    def expired(self) -> bool:
        return self.left() <= 0.0

    def _solve(self, seconds: float) -> float:
        return max(MIN_SOLVE_SECONDS, min(seconds, self.left()))

    def cut_seconds(self) -> float:
        """Seconds for the section cut."""
        return self._solve(CUT_SHARE * self.left())

    def section_seconds(self, nodes: int, nodes_left: int) -> float:
        """Seconds for one section of ``nodes`` nodes, ``nodes_left`` nodes not compiled yet."""
        return self._solve(self.left() * nodes / max(nodes, nodes_left, 1))

    def buffer_seconds(self, nodes: int, nodes_left: int) -> float:
        """Seconds for one section's stage-buffer balancing."""
        return self._solve(BUFFER_SHARE * self.section_seconds(nodes, nodes_left))

    def place_route_seconds(self, nodes: int, nodes_left: int) -> tuple[float, float]:
        """Seconds for one section's placement and for its routing."""
        share = self.section_seconds(nodes, nodes_left)
        place = min(placement_cap(nodes), (1 - ROUTING_SHARE) * share)
        route = min(max(1.0, place / 2), share - place) if share > place else share / 3
        return self._solve(place), self._solve(route)
