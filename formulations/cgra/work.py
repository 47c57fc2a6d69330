"""Deterministic work budgets of the CGRA path: planned seconds spent as counted work.

Scope
-----
Every search of :func:`~formulations.cgra.kernel.map_kernel` gets a :class:`Work` budget: a
share of the planned seconds (``settings.time_limit``), spent as work that does not depend on
the machine's load:

* the list scheduler, the descent, ejection and PathFinder count the routing steps of
  :meth:`~formulations.cgra.listsched.Router.route` (a PE and its links examined at one cycle),
  :data:`ROUTER_STEPS_PER_SECOND` per planned second, plus :data:`PLACE_STEPS` per operation
  placed;
* every CP-SAT call of the sweep and the relaxation is limited by CP-SAT's deterministic time,
  :data:`RELAX_WORK_PER_SECOND` (relaxation) or :data:`FULL_WORK_PER_SECOND` (full model)
  units per planned second, and building a full model is charged :data:`BUILD_SECONDS` per
  routing variable.

The constants are calibrated on this project's 2-core machine with one core free, so that a
planned second takes about a wall second there. The wall clock (``time.monotonic()``) is only
the outer cap: a search it stops first is counted (:attr:`Work.cuts`) and the run's answer is
then no longer promised to repeat.

Examples
--------
>>> import time
>>> run = Work(2.0, wall=time.monotonic() + 60)
>>> part = run.share(0.5)
>>> part.spend(0.75)
>>> part.over(), run.left(), run.cuts
(True, 1.25, 0)
"""

from __future__ import annotations

import time

from formulations.solver import SolveResult
from formulations.solver.backends import WorkBudget
from formulations.solver.cp import CP_SAT_WORK_PER_SECOND, was_cut_short, work_of

__all__ = ["Work", "ROUTER_STEPS_PER_SECOND", "PLACE_STEPS", "PLACE_EDGE_STEPS",
           "RELAX_WORK_PER_SECOND", "FULL_WORK_PER_SECOND",
           "BUILD_SECONDS", "RELAX_BUILD_SECONDS", "WORK_SHARE", "WALL_CHECK"]

#: Router steps (a PE and its out-links examined at one cycle of a route) per planned second.
#: Calibrated by a least-squares fit of the wall time of list scheduling and descent on 7
#: Morpher kernels (18-150 operations) on cgra4x4, cgra8x8 and hycube4x4 with one core free
#: (load 1.8 on the 2 cores): 0.63 us per step, 0.096 ms per operation placed, 0.099 us per
#: candidate PE and kernel edge; the fit is within 0.85-1.09 of every run's wall time (at
#: load 3.5 the same work took about 1.3 times longer).
ROUTER_STEPS_PER_SECOND = 1.6e6
#: Router steps charged per operation placed (recurrence and candidate bookkeeping), and per
#: candidate PE and kernel edge of that placement (its issue window reads every edge).
PLACE_STEPS = 150
PLACE_EDGE_STEPS = 0.16
#: CP-SAT deterministic time units per planned second: on the relaxation
#: (:mod:`~formulations.cgra.relax`) and on the full model (:mod:`~formulations.cgra.model`).
#: Measured on the relaxation and full-model solves (over 0.05 s) of the sweeps of 5 Morpher
#: kernels (18-52 operations): relaxation 0.32-0.35 units per wall second on cgra4x4 and
#: cgra8x8; full model 0.92-0.95 on cgra4x4, 0.97-2.0 on cgra8x8 (load about 2 on the 2 cores;
#: 0.27-0.30 and 0.54-0.76 at load 3-4.7).
RELAX_WORK_PER_SECOND = 0.33
FULL_WORK_PER_SECOND = 1.5
#: Planned seconds per routing variable for building (and decoding) a full model, and per
#: operation-or-value and PE for building a relaxation (adpcm_decoder's on cgra8x8, 85
#: operations and 85 values on 64 PEs, took 0.2-0.5 s outside CP-SAT).
BUILD_SECONDS = 1.0e-5
RELAX_BUILD_SECONDS = 3.0e-5
#: Share of ``settings.time_limit`` planned as work; the rest covers what no counter sees
#: (indexing the kernel, pre-checks, the relaxation's build) and moderate load.
WORK_SHARE = 0.85
#: Planned seconds of work between two reads of the wall clock by :meth:`Work.over` (the cap
#: is noticed that much late at most; the clock is read about 100 times per planned second).
WALL_CHECK = 0.01


class Work(WorkBudget):
    """A search's budget (:class:`~formulations.solver.backends.WorkBudget`: ``seconds``
    planned, spent as counted work, ``wall`` the ``time.monotonic()`` cap, :meth:`share` for
    a sub-search) with what the CGRA path's searches add: :meth:`over` reads the clock only
    every :data:`WALL_CHECK` of work, and ``cuts`` counts the searches within it that the
    wall clock stopped before their work was spent."""

    def __init__(self, seconds: float, wall: float, parent: "Work | None" = None):
        super().__init__(float(seconds), wall, parent)
        self.cut, self.cuts = False, 0
        self.read_at = -WALL_CHECK        # work spent when the wall clock was last read

    @classmethod
    def planned(cls, seconds: float, wall_seconds: float | None = None) -> "Work":
        """A budget of ``seconds`` planned, capped ``wall_seconds`` (default ``seconds``)
        from now."""
        return cls(seconds, time.monotonic() + (seconds if wall_seconds is None
                                                else wall_seconds))

    def left(self) -> float:
        """Planned seconds not spent yet (never below 0)."""
        return max(0.0, self.seconds - self.spent)

    def wall_left(self) -> float:
        """Wall-clock seconds until the cap (never below 0)."""
        return max(0.0, self.wall - time.monotonic())

    def over(self) -> bool:
        """Whether the search must stop: its work is spent, or the wall cap passed (then
        counted as cut short; the clock is read after every :data:`WALL_CHECK` of work)."""
        if self.spent >= self.seconds or self.cut:
            return True
        if self.spent - self.read_at < WALL_CHECK:
            return False
        self.read_at = self.spent
        if time.monotonic() >= self.wall:
            self.mark_cut()
            return True
        return False

    def mark_cut(self) -> None:
        """The wall clock stopped this search: counted once, and not again for an enclosing
        budget whose sub-search was counted already."""
        if self.cut:
            return
        self.cut = True
        if self.cuts:
            return
        node: Work | None = self
        while node is not None:
            node.cuts += 1
            node.cut_short = True
            node = node.parent

    def cp_limits(self, seconds: float, rate: float) -> tuple[float, float]:
        """``(time_limit, deterministic_time)`` of a CP-SAT call planned for ``seconds``:
        CP-SAT's work units at ``rate`` units per planned second, and the wall time left as
        the cap."""
        return max(1e-3, self.wall_left()), max(0.0, seconds) * rate

    def charge(self, result: SolveResult, rate: float) -> None:
        """Spend the deterministic work of a CP-SAT call (``rate`` units per planned second)
        and count it when the wall clock stopped it."""
        used = work_of(result)
        if used is not None:
            self.spend(used * CP_SAT_WORK_PER_SECOND / rate)
        if was_cut_short(result):
            share = self.share(0.0)
            share.mark_cut()
