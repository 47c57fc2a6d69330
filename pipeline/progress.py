"""Progress for people: what the run is doing now, never silent for long.

Every line carries the run's elapsed seconds. On a terminal a rich status line under the log
shows the latest line, the sections done and the elapsed time, live; elsewhere (a pipe, a file,
CI) lines are plain. Whenever nothing was said for :data:`QUIET_SECONDS`, a line says what is
still running (the last thing said) and how much of the budget is used, so no gap is silent.
"""

from __future__ import annotations

import sys
import threading
import time
from contextlib import contextmanager

__all__ = ["Console", "QUIET_SECONDS"]

#: Longest a run stays silent: after this many seconds without a line, it says it is working.
QUIET_SECONDS = 5.0


class Console:
    """Lines to stderr: ``quiet`` prints none, ``verbose`` also the detail lines."""

    def __init__(self, quiet: bool, verbose: bool, time_limit: float | None = None,
                 started: float | None = None):
        """``time_limit``: the run's seconds; ``started``: when its clock began
        (``time.monotonic()``, default now)."""
        self.quiet, self.verbose, self.time_limit = quiet, verbose, time_limit
        self.tty = sys.stderr.isatty()
        self.started = time.monotonic() if started is None else started
        self._last_line, self._last_time = "starting", time.monotonic()
        self._last_printed = self._last_time
        self._lock = threading.Lock()
        self._live = None          # the rich Progress on a terminal, while watching
        self._task = None
        self._done = 0

    def elapsed(self) -> float:
        return time.monotonic() - self.started

    def say(self, line: str, detail: bool = False, stamp: bool = True) -> None:
        """Print ``line`` (after the elapsed seconds unless ``stamp`` is off: the closing
        lines); a ``detail`` line only when verbose."""
        if self.quiet or (detail and not self.verbose):
            return
        with self._lock:
            self._last_line = line
            self._last_time = self._last_printed = time.monotonic()
            self._print(f"[{self.elapsed():6.1f} s] {line}" if stamp else line)
            if self._live is not None:
                self._live.update(self._task, description=_short(line))

    def advance(self) -> None:
        """One more section compiled."""
        with self._lock:
            self._done += 1
            if self._live is not None:
                self._live.update(self._task, completed=self._done)

    @contextmanager
    def watch(self):
        """While inside: the live status line (terminal) and the heartbeat (always)."""
        if self.quiet:
            yield self
            return
        stop = threading.Event()
        beat = threading.Thread(target=self._heartbeat, args=(stop,), daemon=True,
                                name="progress-heartbeat")
        with self._status():
            beat.start()
            try:
                yield self
            finally:
                stop.set()
                beat.join(timeout=1.0)

    @contextmanager
    def _status(self):
        if not self.tty:
            yield
            return
        from rich.console import Console as RichConsole
        from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn
        live = Progress(SpinnerColumn(), TextColumn("{task.description}"),
                        TextColumn("sections done: {task.completed}"), TimeElapsedColumn(),
                        transient=True, console=RichConsole(stderr=True))
        with live:
            with self._lock:
                self._live, self._task = live, live.add_task(_short(self._last_line), total=None)
            try:
                yield
            finally:
                with self._lock:
                    self._live = None

    def _heartbeat(self, stop: threading.Event) -> None:
        """Say what is still running whenever the run has been silent for QUIET_SECONDS."""
        while not stop.wait(0.5):
            with self._lock:
                now = time.monotonic()
                if now - self._last_printed < QUIET_SECONDS:
                    continue
                self._last_printed = now
                self._print(f"[{self.elapsed():6.1f} s] still working: "
                            f"{_short(self._last_line, 90)} ({now - self._last_time:.0f} s "
                            f"ago){self._budget_note()}")

    def _budget_note(self) -> str:
        if not self.time_limit:
            return ""
        return f"; {self.elapsed():.0f} of {self.time_limit:g} s budget used"

    def _print(self, text: str) -> None:
        if self._live is not None:
            self._live.console.print(text, markup=False, highlight=False)
        else:
            print(text, file=sys.stderr, flush=True)


def _short(line: str, limit: int = 70) -> str:
    """``line`` cut to ``limit`` characters for a status line.

    >>> _short("still working (5 s since: ...)", 10)
    'still wor…'
    """
    return line if len(line) <= limit else line[: limit - 1] + "…"
