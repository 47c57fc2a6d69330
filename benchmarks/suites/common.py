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

import json
import os
import signal
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Callable, Iterator

from benchmarks.registry import Entry

__all__ = ["GRAPHS_ROOT", "graphs_root", "msr_graphs", "missing_msr_entry", "TimeLimitExceeded",
           "time_limit", "timed", "shorten"]

#: The real graphs (read in place, never copied); ``RDAMAP_GRAPHS`` overrides.
GRAPHS_ROOT = Path(__file__).resolve().parents[3] / "shared" / "graphs"


def graphs_root() -> Path:
    """Folder of the real graphs: ``$RDAMAP_GRAPHS`` or ``../shared/graphs`` of the repo."""
    return Path(os.environ.get("RDAMAP_GRAPHS", GRAPHS_ROOT))


#: The MSR DNN folders every msr-dnn suite reads.
MSR_FOLDERS = ("OperatorGraphs", "LayerGraphs")


def msr_graphs(root: Path | None = None) -> list[tuple[str, Path, int, int]]:
    """``(name, path, nodes, edges)`` of every MSR DNN graph, smallest first.

    ``name`` is ``<folder>/<stem>``; sizes come from the file's node and edge
    lists. Returns an empty list when the folder is absent.
    """
    base = (root or graphs_root()) / "msr-dnn"
    found = []
    for folder in MSR_FOLDERS:
        for path in sorted((base / folder).glob("*.json")):
            data = json.loads(path.read_text(encoding="utf-8"))
            found.append((f"{folder}/{path.stem}", path, len(data["nodes"]), len(data["edges"])))
    return sorted(found, key=lambda g: (g[2], g[3], g[0]))


def missing_msr_entry():
    """The one skipped entry of an msr-dnn suite when the graphs folder is absent."""
    where = graphs_root() / "msr-dnn"
    return Entry("msr-dnn graphs", "", fixed={"graph": "msr-dnn/*"},
                 skip=f"real graphs not available ({where} is absent); set RDAMAP_GRAPHS to the "
                      "shared graphs folder to run this suite")


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
