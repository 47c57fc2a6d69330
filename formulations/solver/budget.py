"""The one budget every search spends: planned seconds as counted work, the run's deadline.

A search is handed a :class:`Budget` (by :meth:`SolveSettings.budget
<formulations.solver.settings.SolveSettings.budget>`, or a :meth:`Budget.share` of its
caller's): ``seconds`` of *planned* work, which the search spends as work it counts itself
(CP-SAT's deterministic time, HiGHS nodes, router steps, moves, placement steps), never as
measured time, so that the same seed gives the same answer on a busy machine. The wall clock
cuts in at one place, the run's ``deadline`` (``time.monotonic()`` seconds): a search that
reaches it first stops, and counts as cut short (:attr:`Budget.cut_short`,
:attr:`Budget.cuts`), for itself and every budget it was shared from.

A budget that travels to another process (pickled for a worker) keeps its deadline as epoch
seconds on the way, since each process's monotonic clock has its own origin; it arrives as a
fresh account of what was left (what a worker spends comes back with its result).

Examples
--------
>>> run = Budget(2.0, deadline=time.monotonic() + 60)
>>> part = run.share(0.5)
>>> part.spend(0.75)
>>> part.over(), run.left(), run.cut_short
(True, 1.25, False)
>>> import pickle
>>> back = pickle.loads(pickle.dumps(run))
>>> back.left(), abs(back.deadline - run.deadline) < 0.1
(1.25, True)
"""

from __future__ import annotations

import math
import time
from typing import Callable

from .cp import CP_SAT_WORK_PER_SECOND, was_cut_short, work_of
from .interrupt import stop_requested
from .result import SolveResult

__all__ = ["Budget", "deadline_for", "to_epoch", "from_epoch", "WALL_SLACK", "WALL_FLOOR",
           "WALL_CHECK"]

#: Without a run's deadline (a search called on its own), the wall clock caps a search planned
#: for ``t`` seconds at ``WALL_SLACK * t`` from now, at least :data:`WALL_FLOOR` seconds: the
#: work rates are calibrated to take about ``t`` on an idle machine, so a loaded machine
#: still finishes the same work (same answer) instead of a clock-cut one.
WALL_SLACK = 2.0
WALL_FLOOR = 2.0
#: Planned seconds of work between two reads of the wall clock by :meth:`Budget.over` (the
#: deadline is noticed that much late at most: about 100 reads per planned second).
WALL_CHECK = 0.01


def deadline_for(seconds: float, deadline: float | None = None) -> float:
    """The wall-clock cap (``time.monotonic()`` seconds) of a search planned for ``seconds``:
    the run's ``deadline`` when there is one, else :data:`WALL_SLACK` times the plan from
    now (at least :data:`WALL_FLOOR` s: a short plan still has fixed costs).

    >>> round(deadline_for(2.0) - time.monotonic()), round(deadline_for(0.05) - time.monotonic())
    (4, 2)
    >>> deadline_for(2.0, 7.5)
    7.5
    """
    if deadline is not None:
        return deadline
    return time.monotonic() + max(WALL_SLACK * float(seconds), WALL_FLOOR)


def to_epoch(moment: float, clock: Callable[[], float] = time.monotonic) -> float:
    """``moment`` of ``clock`` (this process's monotonic seconds) as epoch seconds: the
    clock a deadline keeps when it travels to another process or machine.

    >>> abs(from_epoch(to_epoch(time.monotonic() + 5.0)) - time.monotonic() - 5.0) < 0.1
    True
    """
    return moment + (time.time() - clock())


def from_epoch(epoch: float) -> float:
    """Epoch seconds as this process's ``time.monotonic()`` seconds (see :func:`to_epoch`)."""
    return time.monotonic() + (epoch - time.time())


class Budget:
    """``seconds`` of planned work, spent as counted work; ``deadline`` the one wall cap
    (None: the ``parent``'s, else :func:`deadline_for` the plan). :meth:`share` hands a
    part on: what the part spends, and a cut by the wall clock, count for the whole too.

    >>> b = Budget(4.0, deadline=time.monotonic() + 60)
    >>> part = b.share(1.0); part.spend(0.25); b.left(), part.left(), b.cut_short
    (3.75, 0.75, False)
    """

    def __init__(self, seconds: float, deadline: float | None = None,
                 parent: "Budget | None" = None):
        self.seconds, self.spent, self.parent = float(seconds), 0.0, parent
        if deadline is None:
            deadline = parent.deadline if parent is not None else deadline_for(seconds)
        self.deadline = deadline
        self.cut_short, self.cuts = False, 0     # cuts: searches within it the clock stopped
        self._stopped = False                    # the clock stopped this search itself
        self._read_at = -WALL_CHECK              # work spent when the clock was last read

    def __reduce__(self):
        return _arrived, (self.left(), to_epoch(self.deadline), self.cut_short)

    def left(self) -> float:
        """Planned seconds not spent yet (never below 0)."""
        return max(0.0, self.seconds - self.spent)

    def spend(self, seconds: float) -> None:
        self.spent += seconds
        if self.parent is not None:
            self.parent.spend(seconds)

    def share(self, seconds: float) -> "Budget":
        """A part of ``seconds`` (at most what is left) with the same deadline
        (``math.inf``: unlimited, for a search that must finish, still charged here)."""
        return Budget(seconds if math.isinf(seconds) else min(seconds, self.left()),
                      self.deadline, self)

    def exhausted(self) -> bool:
        """Whether the planned work is spent (the work alone: no clock is read)."""
        return self.spent >= self.seconds

    def wall_left(self) -> float:
        """Wall-clock seconds until the deadline, at least 1 ms (a solver's time limit)."""
        return max(1e-3, self.deadline - time.monotonic())

    def wall_out(self) -> bool:
        """Whether the deadline has passed or the run was interrupted (Ctrl-C, SIGTERM:
        every search stops at once and the run keeps its best checked answer); then the
        search counts as cut short."""
        if time.monotonic() >= self.deadline or stop_requested():
            self.mark_cut()
            return True
        return False

    def over(self) -> bool:
        """Whether the search must stop: its work is spent, or the deadline passed (the
        clock read once every :data:`WALL_CHECK` of work, for searches of many small steps)."""
        if self.exhausted() or self._stopped:
            return True
        if self.spent - self._read_at < WALL_CHECK:
            return False
        self._read_at = self.spent
        return self.wall_out()

    def mark_cut(self) -> None:
        """The wall clock stopped this search: marked here and up the chain, counted once
        (not again for an enclosing budget whose sub-search was counted already)."""
        if self._stopped:
            return
        self._stopped = True
        if self.cuts:
            return
        node: Budget | None = self
        while node is not None:
            node.cuts += 1
            node.cut_short = True
            node = node.parent

    def cp_limits(self, seconds: float, rate: float) -> tuple[float, float]:
        """``(time_limit, deterministic_time)`` of a CP-SAT call planned for ``seconds``:
        CP-SAT's work units at ``rate`` units per planned second, the deadline as the cap."""
        return self.wall_left(), max(0.0, seconds) * rate

    def charge(self, result: SolveResult, rate: float) -> None:
        """Spend the deterministic work of a CP-SAT call (``rate`` units per planned second)
        and count it when the wall clock stopped it."""
        used = work_of(result)
        if used is not None:
            self.spend(used * CP_SAT_WORK_PER_SECOND / rate)
        if was_cut_short(result):
            self.share(0.0).mark_cut()


def _arrived(left: float, epoch_deadline: float, cut_short: bool) -> Budget:
    budget = Budget(left, from_epoch(epoch_deadline))
    budget.cut_short = cut_short
    return budget
