"""What every decision's solve takes from the run: backend, time, seed, model export.

A decision's entry point (a placer, a router, the section cutter, the buffer
balancer, the Streaming Engine scheduler) takes one :class:`SolveSettings`
instead of loose keyword options, so a misspelt option is an error at the call
and every solve sees the same backend, seed and budget rules.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, replace
from typing import Callable

__all__ = ["SolveSettings", "to_epoch", "from_epoch"]


def to_epoch(moment: float, clock: Callable[[], float] = time.monotonic) -> float:
    """``moment`` of ``clock`` (this process's monotonic seconds) as epoch seconds: the
    clock a deadline keeps when it travels to another process or machine, whose
    monotonic clock has another origin.

    >>> abs(from_epoch(to_epoch(time.monotonic() + 5.0)) - time.monotonic() - 5.0) < 0.1
    True
    """
    return moment + (time.time() - clock())


def from_epoch(epoch: float) -> float:
    """Epoch seconds as this process's ``time.monotonic()`` seconds (see :func:`to_epoch`)."""
    return time.monotonic() + (epoch - time.time())


@dataclass(frozen=True)
class SolveSettings:
    """Backend, wall-clock seconds, seed and model-export folder of one decision's solve.

    Examples
    --------
    >>> s = SolveSettings(backend="highs", time_limit=5.0, seed=3)
    >>> s.with_time(2.5).time_limit, s.backend
    (2.5, 'highs')
    >>> SolveSettings(time_limit=0)
    Traceback (most recent call last):
    ...
    ValueError: time_limit must be a finite number of seconds > 0, not 0
    """

    backend: str = "cp-sat"
    time_limit: float = 10.0
    seed: int = 0
    export_dir: str | None = None
    #: The run's wall-clock deadline (``time.monotonic()`` seconds), the outer cap of every
    #: search; ``time_limit`` is the planned (nominal) time, from which deterministic work
    #: limits are derived. None: no deadline beyond ``time_limit``.
    deadline: float | None = None

    def __post_init__(self):
        if not (isinstance(self.time_limit, (int, float)) and math.isfinite(self.time_limit)
                and self.time_limit > 0):
            raise ValueError(f"time_limit must be a finite number of seconds > 0, "
                             f"not {self.time_limit!r}")

    def with_time(self, seconds: float) -> "SolveSettings":
        """The same settings with another time limit."""
        return replace(self, time_limit=seconds)

    def wall_seconds(self) -> float:
        """Seconds this solve may take on the wall clock: until the run's deadline (the one
        wall-clock cap of a run), else its time limit."""
        if self.deadline is None:
            return self.time_limit
        return max(0.0, self.deadline - time.monotonic())

    def with_backend(self, backend: str) -> "SolveSettings":
        """The same settings on another backend."""
        return replace(self, backend=backend)
