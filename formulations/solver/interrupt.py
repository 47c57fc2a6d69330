"""Stop the running solve at once when the run is interrupted (SIGINT, SIGTERM).

A solver busy in C++ never returns to Python, so a Python signal handler would
run only after it finished. :func:`watch_signals` therefore makes the signal
also write to a pipe that a watcher thread reads; the thread calls the stop
hook of every solve registered with :func:`running` (CP-SAT's ``stop_search``,
HiGHS's ``cancelSolve``, SCIP's ``InterruptSolve``), and the solve returns its
best answer so far. CP-SAT's own SIGINT catching is switched off where it is
solved (it would stop one solve and let the run go on to the next).
"""

from __future__ import annotations

import os
import signal
import threading
import time
from contextlib import contextmanager
from typing import Callable, Iterator

__all__ = ["running", "request_stop", "stop_requested", "watch_signals", "deferred_signals",
           "clear_stop"]

_lock = threading.Lock()
_stops: dict[int, Callable[[], None]] = {}
_requested: list[int] = []


#: Seconds between the calls of a solve's stop hook once a stop is asked (see
#: :func:`_stop_until_done`).
STOP_REPEAT_SECONDS = 0.01


@contextmanager
def running(stop: Callable[[], None]) -> Iterator[None]:
    """Register ``stop`` while a solve runs; stop it at once if a stop was already asked."""
    key = id(stop)
    with _lock:
        _stops[key] = stop
        asked = bool(_requested)
    if asked:
        _stop_until_done(key, stop)
    try:
        yield
    finally:
        with _lock:
            _stops.pop(key, None)


def request_stop(signum: int = signal.SIGINT) -> None:
    """Ask every running solve to stop (and every later one to stop at once)."""
    with _lock:
        _requested.append(signum)
        stops = list(_stops.items())
    for key, stop in stops:
        _stop_until_done(key, stop)


def _stop_until_done(key: int, stop: Callable[[], None]) -> None:
    """Call ``stop`` now and again every :data:`STOP_REPEAT_SECONDS` until its solve is
    unregistered. The solvers drop a stop that comes before their run starts (measured:
    HiGHS's ``cancelSolve`` and CP-SAT's ``stop_search`` called just before the solve, which
    then ran to its 1-2 s limit), and a solve is registered just before it starts: called
    once, every solve begun after an interrupt ran to its limit, one after another."""
    stop()

    def again() -> None:
        while True:
            time.sleep(STOP_REPEAT_SECONDS)
            with _lock:
                if _stops.get(key) is not stop:     # the solve ended
                    return
            stop()

    threading.Thread(target=again, daemon=True, name="stop-solve").start()


def stop_requested() -> int | None:
    """The signal that asked the run to stop, or None."""
    with _lock:
        return _requested[0] if _requested else None


def clear_stop() -> None:
    """Forget an earlier stop request (tests, and a process that maps again)."""
    with _lock:
        _requested.clear()


@contextmanager
def watch_signals(handler: Callable[[int], None],
                  signals: tuple[int, ...] = (signal.SIGINT, signal.SIGTERM)) -> Iterator[None]:
    """Within the block, ``signals`` stop running solves at once, then call ``handler``.

    A watcher thread stops the solves; ``handler(signum)`` runs in the main thread
    as soon as it is back in Python (usually right after the stopped solve
    returns) and may raise to end the run. Earlier handlers and stop requests are
    restored and cleared on exit. Outside the main thread this does nothing.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    clear_stop()
    previous = {signum: signal.getsignal(signum) for signum in signals}
    old_fd = signal.set_wakeup_fd(_pipe())
    try:
        for signum in signals:
            signal.signal(signum, lambda s, _frame: handler(s))
        yield
    finally:
        signal.set_wakeup_fd(old_fd)
        for signum, before in previous.items():
            signal.signal(signum, before)
        clear_stop()


@contextmanager
def deferred_signals(signals: tuple[int, ...] = (signal.SIGINT, signal.SIGTERM)
                     ) -> Iterator[list[int]]:
    """Within the block, ``signals`` are only recorded (in the yielded list): outputs are
    written whole. Outside the main thread this only yields."""
    seen: list[int] = []
    if threading.current_thread() is not threading.main_thread():
        yield seen
        return
    previous = {signum: signal.getsignal(signum) for signum in signals}
    try:
        for signum in signals:
            signal.signal(signum, lambda s, _frame: seen.append(s))
        yield seen
    finally:
        for signum, before in previous.items():
            signal.signal(signum, before)


_write_end: list[int] = []


def _pipe() -> int:
    """The write end of the wake-up pipe; its watcher thread starts once per process."""
    if not _write_end:
        read_end, write_end = os.pipe()
        os.set_blocking(write_end, False)
        threading.Thread(target=_watch, args=(read_end,), daemon=True,
                         name="stop-watcher").start()
        _write_end.append(write_end)
    return _write_end[0]


def _watch(read_end: int) -> None:
    while True:
        data = os.read(read_end, 16)
        if not data:
            return
        for signum in data:
            request_stop(signum)
