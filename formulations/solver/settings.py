"""What every decision's solve takes from the run: backend, planned time, deadline, seed.

A decision's entry point (a placer, a router, the section cutter, the buffer
balancer, the Streaming Engine scheduler) takes one :class:`SolveSettings`
instead of loose keyword options, so a misspelt option is an error at the call
and every solve sees the same backend, seed and budget rules.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, replace

from .budget import Budget, deadline_for

__all__ = ["SolveSettings"]


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

    def budget(self, seconds: float | None = None) -> Budget:
        """The budget this solve spends: ``time_limit`` planned seconds (or ``seconds``, a
        part planned apart), capped by the run's deadline
        (:func:`~formulations.solver.budget.deadline_for`).

        >>> b = SolveSettings(time_limit=3.0, deadline=time.monotonic() + 60).budget()
        >>> b.left(), 59 < b.wall_left() <= 60
        (3.0, True)
        """
        seconds = self.time_limit if seconds is None else seconds
        return Budget(seconds, deadline_for(seconds, self.deadline))

    def with_backend(self, backend: str) -> "SolveSettings":
        """The same settings on another backend."""
        return replace(self, backend=backend)
