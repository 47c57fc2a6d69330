"""Where independent work runs: in this process, on local worker processes, or on
a Dask cluster.

Section-parallel compile (``pipeline.rdu.levels``) and the benchmark harness hand
out pure, serialisable tasks; :func:`dask_client` gives them a
``distributed.Client`` to submit to, or ``None`` to run them here, one after
another. :func:`run_batch` is the one place that decides where a batch runs: here, on
workers that are up, or begun here while they boot and handed on. The results never depend
on where a task ran: every task carries its own seed, so one worker, two workers or a remote
cluster give the same answer.

``--workers N`` starts a ``distributed.LocalCluster`` of ``N`` single-threaded
processes (each task is CPU-bound Python, so threads would share one core);
``--scheduler ADDRESS`` connects to a running scheduler instead (started with
``dask scheduler``, workers with ``dask worker ADDRESS``; each worker needs this
project installed). A scheduler that cannot be reached is bad input: the message
names the address and the fix.
"""

from __future__ import annotations

import asyncio
import gc
import logging
import multiprocessing
import os
import pickle
import signal
import threading
import time
import uuid
import weakref
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import wait as wait_for_any
from contextlib import ExitStack, contextmanager, suppress
from typing import Any, Callable, Iterator, Sequence

from formulations.sections.portfolio import in_order, never
from formulations.solver import clear_stop, request_stop
from hardware import InputError

__all__ = ["dask_client", "default_workers", "run_tasks", "run_until", "run_batch", "timed_call",
           "Workers", "warm_up", "settle_heap", "BATCH_PARALLEL_SECONDS", "kill_local_workers",
           "quiet_dask_logs", "CONNECT_SECONDS", "WATCH_SECONDS",
           "LOCAL_CLUSTER_CONFIG", "WORKER_MODULES"]

#: How long to wait for a scheduler named by ``--scheduler``.
CONNECT_SECONDS = 10.0
#: How long a local cluster is given to shut down before its processes are killed.
CLOSE_SECONDS = 10.0
#: How long a worker's stop watcher waits on the scheduler per call (seconds). A stop wakes
#: it at once whatever this is; it only bounds how long a watcher outlives its task (the
#: batch's end sets the stop and wakes every watcher anyway). Longer means fewer calls:
#: 0.1 s cost the worker and the scheduler about 1 % of a core each per running task.
WATCH_SECONDS = 5.0
#: How local workers are started: forked from a server process that imported
#: :data:`WORKER_MODULES` (where the platform has one), else spawned afresh.
START_METHOD = "forkserver" if "forkserver" in multiprocessing.get_all_start_methods() \
    else "spawn"
#: Dask settings of a local cluster (``--workers N``). Each worker runs one task at a time
#: and gets no second one queued behind it (a worker saturation of 1: the scheduler hands
#: the next largest task to whichever worker frees first, so nothing is left to steal).
#: Its diagnostics are off: the statistical profiler samples every thread's stack 100 times
#: a second under the GIL, and the tick, system and memory monitors poll less often
#: (measured over an 8 s CPU-bound task: 0.25-0.38 s of the worker's CPU and 0.23-0.31 s of
#: the scheduler's with Dask's defaults, 0.03 s and 0.06 s without). Workers start by
#: :data:`START_METHOD`.
LOCAL_CLUSTER_CONFIG = {
    "distributed.scheduler.worker-saturation": 1.0,
    "distributed.scheduler.work-stealing": False,
    "distributed.worker.profile.enabled": False,
    "distributed.admin.tick.interval": "1s",
    "distributed.admin.system-monitor.interval": "5s",
    "distributed.worker.memory.monitor-interval": "1s",
    "distributed.worker.multiprocessing-method": START_METHOD,
}
#: What a local worker imports before its first task: they are imported once, in the
#: process the workers are forked from (:func:`warm_up`), not by each worker as it boots.
WORKER_MODULES = ("distributed", "pipeline.rdu.levels", "pipeline.rdu.section_task",
                  "formulations.sections.portfolio")


def default_workers() -> int:
    """The machine's cores available to this process (``--workers`` default)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:       # not on Linux
        return max(1, os.cpu_count() or 1)


@contextmanager
def dask_client(workers: int = 1, scheduler: str | None = None) -> Iterator[Any]:
    """A ``distributed.Client`` for ``scheduler`` or for ``workers`` local processes;
    ``None`` (run in this process) for one worker and no scheduler.

    Raises
    ------
    InputError
        When ``scheduler`` cannot be reached within :data:`CONNECT_SECONDS`.
    """
    if scheduler is None and workers <= 1:
        yield None
        return
    import dask                                      # only a parallel run pays for the imports
    from distributed import Client, LocalCluster
    if scheduler is not None:
        try:
            client = Client(scheduler, timeout=CONNECT_SECONDS, set_as_default=False)
        except (OSError, TimeoutError, ValueError) as exc:
            raise InputError("--scheduler", scheduler,
                             f"cannot reach a Dask scheduler ({type(exc).__name__})",
                             "start one with `dask scheduler` and workers with `dask worker "
                             f"{scheduler}`, check the address (tcp://HOST:8786), or drop "
                             "--scheduler to use local workers") from None
        try:           # closed, not used as a context: it may be opened in another thread
            yield client
        finally:
            client.close()
        return
    warm_up()
    # no dashboard; the scheduler's own HTTP routes on a free port (8787 may be taken)
    with dask.config.set(LOCAL_CLUSTER_CONFIG):    # read as the scheduler and workers start
        try:
            cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                                   dashboard_address=None, silence_logs=logging.ERROR,
                                   scheduler_kwargs={"dashboard": False,
                                                     "dashboard_address": ":0"})
        except RuntimeError as exc:              # Dask: "Nanny failed to start."
            raise InputError("--workers", str(workers),
                             f"local Dask workers failed to start ({exc})",
                             "in a script of your own that maps with workers, keep the "
                             "top level under `if __name__ == \"__main__\":` (each worker "
                             "process imports the script again), or use one worker") from None
        client = Client(cluster, set_as_default=False)
        client.run(settle_heap)
    _LOCAL_CLUSTERS.add(cluster)
    try:
        yield client
    except BaseException:     # Ctrl-C or a failure: running solves are killed, not waited for
        quiet_dask_logs()
        _kill_workers(cluster)
        closing = threading.Thread(target=_close, args=(client, cluster, 1.0), daemon=True)
        closing.start()
        closing.join(1.0)     # Dask's own close may wait on the killed processes for longer
        raise
    _close(client, cluster, CLOSE_SECONDS)


def settle_heap() -> None:
    """Hide every object alive now from the cyclic garbage collector, and turn it on: a
    process's imports (modules, classes, functions) live as long as it does, and a full
    collection would go over them all again. Called by the command line once its imports
    are done (they run with the collector off: 0.1 s less on this project's 2-core machine)
    and on each local worker once it is up. A 1-worker bert_L-12 training run on
    plasticine spent 0.75 s of CPU in collections rather than 1.36 s, with the same
    mapping."""
    gc.freeze()
    gc.enable()


def warm_up() -> None:
    """Start the server local workers are forked from, importing :data:`WORKER_MODULES`
    there, in the background. A run calls it first thing, so that the imports (about a
    second of CPU) overlap its own loading: its workers are then up 1-1.6 s into the run
    rather than 2.6-2.85 s (bert_L-12 on sn10, 2 cores, the driver cutting meanwhile).
    Idempotent; nothing to do where workers are spawned."""
    if START_METHOD == "forkserver":
        from multiprocessing import forkserver
        multiprocessing.get_context("forkserver").set_forkserver_preload(list(WORKER_MODULES))
        forkserver.ensure_running()


#: The local clusters this process started and still holds (:func:`kill_local_workers`).
_LOCAL_CLUSTERS: "weakref.WeakSet[Any]" = weakref.WeakSet()


def kill_local_workers() -> None:
    """Kill, from any thread, every process this one started: the local clusters' workers,
    a worker still starting (its cluster does not know it yet) and the server they are
    forked from; all but multiprocessing's resource tracker, which releases their
    semaphores after them. The command line's last word on an interrupt, so that no
    worker outlives it."""
    import psutil                   # a dependency of distributed
    from multiprocessing import resource_tracker
    for cluster in list(_LOCAL_CLUSTERS):
        _kill_workers(cluster)
    keep = getattr(getattr(resource_tracker, "_resource_tracker", None), "_pid", None)
    for _ in range(2):              # again: one the server forked during the first pass
        for process in psutil.Process().children(recursive=True):
            if process.pid != keep:
                with suppress(psutil.Error):     # it ended meanwhile
                    process.kill()


def quiet_dask_logs() -> None:
    """Dask logs at ERROR in this process from now on: the scheduler logs each send to a
    killed worker that fails, with a traceback, at INFO (a local cluster quiets only its
    handlers, and puts them back as it closes)."""
    logging.getLogger("distributed").setLevel(logging.ERROR)


def _kill_workers(cluster: Any) -> None:
    """Kill a local cluster's worker processes now (their solves are not waited for):
    Dask's own ``kill`` only queues the signal for a watcher thread."""
    for nanny in list(getattr(cluster, "workers", {}).values()):
        if hasattr(nanny, "close_gracefully"):
            nanny.close_gracefully()     # else the nanny starts the killed worker again
        process = getattr(getattr(nanny, "process", None), "process", None)
        if process is not None and process.is_alive():
            try:
                os.kill(process.pid, getattr(signal, "SIGKILL", signal.SIGTERM))
            except ProcessLookupError:       # it ended meanwhile
                pass


def _close(client: Any, cluster: Any, seconds: float) -> None:
    """Close the client and the local cluster, killing what does not stop in ``seconds``."""
    try:
        client.close(timeout=seconds)
        cluster.close(timeout=seconds)
    except (TimeoutError, asyncio.TimeoutError, asyncio.CancelledError):
        _kill_workers(cluster)


def run_tasks(client: Any, function: Callable, tasks: Sequence[tuple],
              done: Callable[[int, Any], None] | None = None,
              sizes: Sequence[float] | None = None) -> list:
    """``[function(*task) for task in tasks]``, on ``client``'s workers when given.

    Results come back in task order whatever order the workers finish in;
    ``done(index, result)`` is called as each one arrives (progress). With
    ``sizes`` (expected work per task) the largest tasks start first, so one long
    task does not run alone at the end. A task whose worker dies is run again by
    the scheduler (Dask retries tasks of lost workers), so a lost worker costs
    time, not the answer.
    """
    if client is None:
        results = []
        for k, task in enumerate(tasks):
            results.append(function(*task))
            if done:
                done(k, results[-1])
        return results
    from distributed import as_completed
    rank = {k: r for r, k in enumerate(sorted(range(len(tasks)),
                                              key=lambda k: -sizes[k] if sizes else k))}
    futures = [client.submit(_unpacked, _packed(function, task), pure=False,
                             priority=len(tasks) - rank[k])
               for k, task in enumerate(tasks)]
    position = {future.key: k for k, future in enumerate(futures)}
    results: list = [None] * len(tasks)
    for future in as_completed(futures, loop=client.loop):
        k = position[future.key]
        results[k] = future.result()
        if done:
            done(k, results[k])
    return results


def run_until(client: Any, function: Callable, tasks: Sequence[tuple],
              done: Callable[[Any], bool]) -> list:
    """``function(*task)`` for every task at once on ``client``'s workers, in task order, up
    to the first result ``done`` accepts; the tasks after it are stopped (their running
    solves return at once, see :mod:`formulations.solver.interrupt`) and left out. All
    results when ``done`` accepts none.

    The results kept are those a run of the tasks one after another, stopping at the first
    ``done``, gives (:func:`formulations.sections.portfolio.in_order`).
    """
    from distributed import Event, as_completed
    stop = Event(f"stop-{uuid.uuid4().hex}", client=client)
    futures = [client.submit(_stoppable, stop.name, _packed(function, task), pure=False)
               for task in tasks]
    position = {future.key: k for k, future in enumerate(futures)}
    results: list = [None] * len(tasks)
    arrived = [False] * len(tasks)
    try:
        for future in as_completed(futures, loop=client.loop):
            k = position[future.key]
            results[k], arrived[k] = future.result(), True
            decided = _decided(results, arrived, done)
            if decided is not None:
                return decided
        return results
    finally:
        stop.set()


def _decided(results: list, arrived: list[bool], done: Callable[[Any], bool]) -> list | None:
    """The results up to the first ``done`` one once all before it arrived; all of them
    once all arrived; None while that is not known yet."""
    for k, result in enumerate(results):
        if not arrived[k]:
            return None
        if done(result):
            return results[:k + 1]
    return results


def timed_call(function: Callable, *args: Any) -> tuple[Any, float]:
    """``function(*args)`` and the wall seconds it took where it ran (a batch's record, for
    the parallel benchmark's cluster estimate)."""
    started = time.perf_counter()
    return function(*args), time.perf_counter() - started


def _packed(function: Callable, task: tuple) -> bytes:
    """``function`` and its task pickled here, as the bytes a worker runs
    (:func:`_unpacked`). A local cluster's scheduler runs in this process and unpickles
    and re-pickles every argument it is handed that is not bytes: 70 ms per task carrying
    bert_L-12's graph (2,012 nodes), under this process's GIL, against 20 ms as bytes."""
    return pickle.dumps((function, task), protocol=pickle.HIGHEST_PROTOCOL)


def _unpacked(packed: bytes) -> Any:
    """Run a task packed by :func:`_packed` (on a worker)."""
    function, task = pickle.loads(packed)
    return function(*task)


def _stoppable(stop_name: str, packed: bytes) -> Any:
    """A packed task (:func:`_packed`) on a worker, its solves stopped when the event
    ``stop_name`` is set (a watcher thread; the stop request is cleared before the
    worker's next task)."""
    from distributed import Event, get_client
    # the worker's client is found from this task's thread, not from the watcher's
    stop, finished, order = Event(stop_name, client=get_client()), threading.Event(), \
        threading.Lock()

    def watch() -> None:
        while not finished.is_set():
            try:
                stopped = stop.wait(WATCH_SECONDS)
            except Exception:    # the worker is closing: there is no task left to stop
                return
            if stopped:
                with order:       # never stops the worker's next task: see below
                    if not finished.is_set():
                        request_stop()
                return

    threading.Thread(target=watch, name="stop-watch", daemon=True).start()
    try:
        return _unpacked(packed)
    finally:
        # not joined: its wait on the scheduler would hold the result up to WATCH_SECONDS
        # (0.2 s per batch of six short solves); it ends at its next look
        with order:
            finished.set()
            clear_stop()


def _exit_if_starting_as_worker() -> None:
    """End this process, quietly, when it is a worker being started: one that runs its
    parent's script again (a script without a main guard), which would start workers of
    its own. The parent says what to do (:func:`dask_client`); multiprocessing's own
    error here is a traceback per worker."""
    if getattr(multiprocessing.current_process(), "_inheriting", False):
        raise SystemExit(1)


class Workers:
    """A run's workers: ``workers`` local processes or a ``scheduler``'s, started on
    first need (:meth:`client`) and stopped with the run (a context manager).

    >>> with Workers() as w:
    ...     w.client() is None          # one worker, no scheduler: this process
    True
    """

    def __init__(self, workers: int = 1, scheduler: str | None = None):
        self.workers, self.scheduler = workers, scheduler
        self._stack = ExitStack()
        self._client: Any = None
        self._lock = threading.Lock()
        self._starting: threading.Thread | None = None
        self._error: BaseException | None = None

    @property
    def parallel(self) -> bool:
        """Whether there is anywhere to run but this process."""
        return self.scheduler is not None or self.workers > 1

    @property
    def started(self) -> bool:
        """Whether workers were asked for in this run (booting or up)."""
        return self._client is not None or self._starting is not None

    def start_soon(self) -> None:
        """Start the workers in the background (they take seconds to boot), so that
        they are up when the first tasks come."""
        _exit_if_starting_as_worker()
        if self.parallel and self._client is None and self._starting is None:
            self._starting = threading.Thread(target=self._start, name="workers", daemon=True)
            self._starting.start()

    def _start(self) -> None:
        with self._lock:
            if self._client is None:
                try:
                    self._client = self._stack.enter_context(
                        dask_client(self.workers, self.scheduler))
                except BaseException as exc:      # said by client(), in the caller's thread
                    self._error = exc

    @property
    def failed(self) -> bool:
        """Whether the workers could not be started (:meth:`client` says why)."""
        return self._error is not None

    def client_if_up(self) -> Any:
        """The ``distributed.Client`` once the workers are up, else None (never waits)."""
        return None if self.failed else self._client

    def client(self) -> Any:
        """The ``distributed.Client`` to submit to, or None to run here."""
        if not self.parallel:
            return None
        _exit_if_starting_as_worker()
        if self._starting is not None:
            self._starting.join()
        else:
            self._start()
        if self._error is not None:
            raise self._error
        return self._client

    def __enter__(self) -> "Workers":
        return self

    def __exit__(self, *exc: Any) -> None:
        if self._starting is not None:
            self._starting.join()
        # the run's exception goes to the cluster: on Ctrl-C its workers are killed, not
        # waited for (a close lets the running solves finish: 1.5-2 s measured)
        self._stack.__exit__(*exc)
        self._client = None


#: Planned seconds of a batch of solves (a cut's seeds, sections' balancing, sections) from
#: which :func:`run_batch` runs them at once on workers that are up, rather than here one
#: after another.
BATCH_PARALLEL_SECONDS = 0.25
#: How often a batch begun here while the workers boot looks whether they are up (seconds).
BOOT_POLL_SECONDS = 0.05


def run_batch(workers: "Workers", function: Callable, tasks: list[tuple], planned: float,
              done: Callable | None = None, here: Callable | None = in_order,
              sizes: list[float] | None = None,
              landed: Callable[[int, object], None] | None = None) -> list | None:
    """``function(*task)`` for every task, in order: on the run's ``workers`` when they were
    started and the batch is worth a round trip (:data:`BATCH_PARALLEL_SECONDS`), begun
    here while they boot (:func:`_while_booting`); else by ``here`` (None: leave them to
    the caller). With ``done``, the results after the first it accepts may be left out;
    ``sizes`` (work per task) start the largest first; ``landed(index, result)`` is called
    as each result of a task run elsewhere or begun while they boot comes in (``here``
    reports its own)."""
    done = done or never
    if not (workers.started and len(tasks) > 1 and planned >= BATCH_PARALLEL_SECONDS):
        return here(function, tasks, done) if here is not None else None
    if workers.client_if_up() is None and not workers.failed:
        return _while_booting(workers, function, tasks, done, sizes, landed)
    return _on_workers(workers.client(), function, tasks, done, sizes, landed)


def _on_workers(client, function: Callable, tasks: list[tuple], done: Callable,
                sizes: list[float] | None, landed: Callable | None = None) -> list:
    """The batch on the workers: all of it, or (with ``done``) up to the first accepted,
    the later ones stopped."""
    if done is never:              # every result is needed: nothing to stop
        return run_tasks(client, function, tasks, landed, sizes=sizes)
    return run_until(client, function, tasks, done)


def _while_booting(workers: Workers, function: Callable, tasks: list[tuple], done: Callable,
                   sizes: list[float] | None, landed: Callable | None = None) -> list:
    """The batch begun here while the workers boot (1-1.5 s): one task after another in a
    thread, and once the workers are up, the tasks not begun run there while the one here
    finishes. Never two solves at once in this process (HiGHS resets a process-wide
    scheduler after each solve). The results are the in-order prefix up to the first
    ``done`` accepts, as anywhere else."""
    landed = landed or (lambda k, result: None)
    with ThreadPoolExecutor(1, thread_name_prefix="batch-here") as here:
        begun: list = []                     # futures of tasks 0 .. len(begun) - 1
        while len(begun) < len(tasks) and not _decided_here(begun, done):
            if workers.client_if_up() is not None or workers.failed:
                break
            if not begun or begun[-1].done():
                if begun:
                    landed(len(begun) - 1, begun[-1].result())
                begun.append(here.submit(function, *tasks[len(begun)]))
            else:
                wait_for_any(begun[-1:], timeout=BOOT_POLL_SECONDS)
        k, there = len(begun), []
        if k < len(tasks) and not _decided_here(begun, done):
            there = _on_workers(workers.client(), function, tasks[k:], done,
                                sizes[k:] if sizes else None,
                                lambda j, result: landed(k + j, result))
        results = [f.result() for f in begun] + there
        if begun:
            landed(k - 1, results[k - 1])
    return next((results[:i + 1] for i, r in enumerate(results) if done(r)), results)


def _decided_here(begun: list, done: Callable) -> bool:
    """Whether the tasks begun here settle the batch: a result ``done`` accepts, every
    task before it finished."""
    for future in begun:
        if not future.done():
            return False
        if done(future.result()):
            return True
    return False
