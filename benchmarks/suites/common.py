"""Helpers shared by the suites: timing, time limits inside a child, text shortening.

Examples
--------
>>> shorten("a" * 10, 6)
'aaaaa…'
>>> seconds, value = timed(lambda: 42)
>>> value, seconds >= 0
(42, True)
"""

from __future__ import annotations

import os
import signal
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Callable, Iterator

__all__ = ["GRAPHS_ROOT", "graphs_root", "TimeLimitExceeded", "time_limit", "timed", "shorten"]

#: The real graphs (read in place, never copied); ``RDAMAP_GRAPHS`` overrides.
GRAPHS_ROOT = Path(__file__).resolve().parents[3] / "shared" / "graphs"


def graphs_root() -> Path:
    """Folder of the real graphs: ``$RDAMAP_GRAPHS`` or ``../shared/graphs`` of the repo."""
    return Path(os.environ.get("RDAMAP_GRAPHS", GRAPHS_ROOT))


class TimeLimitExceeded(Exception):
    """Raised inside :func:`time_limit` when the limit passes."""


@contextmanager
def time_limit(seconds: float | None) -> Iterator[None]:
    """Interrupt the block with :class:`TimeLimitExceeded` after ``seconds`` (SIGALRM).

    For pure-Python work in the main thread of a benchmark child; None means no
    limit.
    """
    if not seconds:
        yield
        return

    def _expire(signum: int, frame: Any) -> None:
        raise TimeLimitExceeded(f"over {seconds:g} s")

    previous = signal.signal(signal.SIGALRM, _expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def timed(fn: Callable[[], Any], min_total: float = 0.2, max_repeats: int = 50
          ) -> tuple[float, Any]:
    """Best wall time of ``fn()`` and its (first) result.

    A call under 50 ms is repeated until ``min_total`` seconds are spent (at
    most ``max_repeats`` calls) and the fastest counts, so tiny inputs are not
    dominated by timer noise; longer calls run once.
    """
    started = time.perf_counter()
    result = fn()
    best = total = time.perf_counter() - started
    repeats = 1
    while best < 0.05 and total < min_total and repeats < max_repeats:
        started = time.perf_counter()
        fn()
        elapsed = time.perf_counter() - started
        best, total, repeats = min(best, elapsed), total + elapsed, repeats + 1
    return best, result


def shorten(text: str, limit: int = 160) -> str:
    """``text`` on one line, cut to ``limit`` characters with an ellipsis."""
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"
