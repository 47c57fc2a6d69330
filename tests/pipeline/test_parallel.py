"""Section-parallel compile: the same mapping on one worker, two workers and a cluster;
a dead worker costs its task, not the answer; an unreachable scheduler is named."""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from distributed import Client, LocalCluster

import pipeline.cluster as cluster
import pipeline.rdu.flow as rdu
import pipeline.rdu.levels as levels
from benchmarks.generators import random_dag
from formulations.sections.portfolio import in_order
from formulations.solver import running
from hardware import load_hardware
from pipeline.cluster import Workers, dask_client, run_tasks, run_until
from pipeline.flow import map_graph
from pipeline.options import RunOptions
from pipeline.run import main
from pipeline.rdu.section_task import section_seed

REPO = Path(__file__).resolve().parents[2]


def _without_timing(data):
    if isinstance(data, dict):
        return {k: _without_timing(v) for k, v in data.items()
                if not k.startswith(("seconds", "time")) and not k.endswith("_time")}
    if isinstance(data, list):
        return [_without_timing(v) for v in data]
    return data


@pytest.fixture
def always_parallel(monkeypatch):
    """Hand even a small plan to the workers (the tests' graphs are small)."""
    monkeypatch.setattr(levels, "PARALLEL_MIN_SECONDS", 0.0)
    monkeypatch.setattr(cluster, "BATCH_PARALLEL_SECONDS", 0.0)  # cut seeds, balancing too
    monkeypatch.setattr(rdu, "PARALLEL_MIN_SECONDS", 0.0)


def _mapping(workers: int = 1, scheduler: str | None = None) -> dict:
    graph = random_dag(48, 80, seed=2)
    options = RunOptions(time_limit=120, section_time_limit=0.5, placer="annealing",
                         router="negotiated", workers=workers, scheduler=scheduler)
    mapping = map_graph(graph, load_hardware("tiny"), options)
    assert mapping.status == "mapped" and mapping.metrics["sections"] > 2
    assert mapping.run["cut_short"] == 0       # the deadline is far: nothing is cut short
    return _without_timing(mapping.to_dict())


def test_one_worker_two_workers_and_a_cluster_give_the_same_mapping(always_parallel):
    alone = _mapping(workers=1)
    assert _mapping(workers=2) == alone
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                      dashboard_address=None, silence_logs=logging.ERROR,
                      scheduler_kwargs={"dashboard": False, "dashboard_address": ":0"}) as remote:
        assert _mapping(scheduler=remote.scheduler_address) == alone


def test_the_performance_estimate_simulates_each_section_as_a_task(always_parallel,
                                                                    monkeypatch):
    """The sections' simulations are one batch, on the workers when they are up, each
    timed for the parallel benchmark; the estimate equals the one made here."""
    from sim.perf import simulate_mapping
    batches = []

    def recorded(workers, function, tasks, planned, **kwargs):
        batches.append((workers.started, len(tasks)))
        return cluster.run_batch(workers, function, tasks, planned, **kwargs)
    monkeypatch.setattr(rdu, "run_batch", recorded)
    graph = random_dag(48, 80, seed=2)
    options = RunOptions(time_limit=120, section_time_limit=0.5, placer="annealing",
                         router="negotiated", workers=2)
    mapping = map_graph(graph, load_hardware("tiny"), options)
    sections = len(mapping.sections)
    assert batches == [(True, sections)]
    (stage,) = [s for s in mapping.stages if s["stage"] == "performance"]
    assert len(stage["seconds_of_sections"]) == sections
    here = simulate_mapping(graph, load_hardware("tiny"), mapping.to_dict())
    assert mapping.metrics["throughput"] == pytest.approx(here.throughput, rel=1e-5)


def _external_cluster(folder: Path) -> tuple[list[subprocess.Popen], str]:
    """``dask scheduler`` and ``dask worker --nworkers 2 --nthreads 1`` as their own
    processes, as a user starts them; the processes and the scheduler's address."""
    file = folder / "scheduler.json"
    cli = [sys.executable, "-m"]
    quiet = dict(stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=REPO)
    scheduler = subprocess.Popen(cli + ["distributed.cli.dask_scheduler", "--scheduler-file",
                                        str(file), "--no-dashboard", "--port", "0"], **quiet)
    worker = subprocess.Popen(cli + ["distributed.cli.dask_worker", "--scheduler-file", str(file),
                                     "--nworkers", "2", "--nthreads", "1", "--no-dashboard"],
                              **quiet)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if file.exists():
            address = json.loads(file.read_text())["address"]
            with Client(address, timeout=30) as client:
                client.wait_for_workers(2, timeout=60)
            return [worker, scheduler], address
        time.sleep(0.1)
    raise AssertionError("the dask scheduler wrote no scheduler file in 60 s")


def test_an_external_dask_scheduler_and_a_busy_machine_give_the_same_mapping(always_parallel,
                                                                            tmp_path):
    """The same mapping on an external ``dask scheduler`` with two worker processes as on
    one local worker, and on two local workers beside two busy-looping processes."""
    alone = _mapping(workers=1)
    processes, address = _external_cluster(tmp_path)
    try:
        assert _mapping(scheduler=address) == alone
    finally:
        for process in processes:
            process.terminate()
            process.wait(timeout=30)
    busy = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(2)]
    try:
        assert _mapping(workers=2) == alone
    finally:
        for process in busy:
            process.kill()
            process.wait()


def test_workers_the_run_started_take_sections_under_the_level_threshold(monkeypatch):
    """A plan under PARALLEL_MIN_SECONDS (bert_l-3 inference on plasticine at 20 s plans
    7.9 s) was compiled here beside idle workers the run had booted for its cut: 2 workers
    took 9.1-9.4 s, 1 worker 8.5 s. Started workers now take it, with the same mapping."""
    monkeypatch.setattr(rdu, "PARALLEL_MIN_SECONDS", 0.0)       # the run starts them
    monkeypatch.setattr(levels, "PARALLEL_MIN_SECONDS", 1e9)     # the level would not
    there, send = [], cluster.run_tasks
    monkeypatch.setattr(cluster, "run_tasks", lambda client, function, tasks, *args, **kw: (
        there.extend(t[0].section for t in tasks if function is levels.compile_section)
        or send(client, function, tasks, *args, **kw)))
    place_route = levels.PlaceRouteLevel.run

    def once_they_are_up(level, state):
        state.workers.client()                   # waits for the boot, when they were started
        place_route(level, state)
    monkeypatch.setattr(levels.PlaceRouteLevel, "run", once_they_are_up)
    alone = _mapping(workers=1)
    assert _mapping(workers=2) == alone
    assert sorted(there) == list(range(len(alone["sections"])))


def test_a_sections_seed_comes_from_its_content_not_its_place():
    assert section_seed(7, ["a", "b"]) == section_seed(7, ["a", "b"])
    assert len({section_seed(7, ["a", "b"]), section_seed(7, ["b", "a"]),
                section_seed(8, ["a", "b"])}) == 3


def _dies_once(marker: str, x: int) -> int:
    """The first call on any worker kills that worker's process."""
    if not os.path.exists(marker):
        open(marker, "w").close()
        os._exit(1)
    return x * x


def test_a_worker_that_dies_costs_only_its_task(tmp_path):
    marker = str(tmp_path / "died")
    with dask_client(workers=2) as client:
        squares = run_tasks(client, _dies_once, [(marker, k) for k in range(6)])
    assert os.path.exists(marker) and squares == [k * k for k in range(6)]


def _diagnostics(dask_worker) -> list[str]:
    return sorted(k for k in dask_worker.periodic_callbacks if k.startswith("profile"))


def _collector(dask_worker) -> tuple[bool, bool]:
    import gc
    return gc.isenabled(), gc.get_freeze_count() > 0


def test_local_workers_take_one_task_at_a_time_and_are_not_profiled():
    with dask_client(workers=2) as client:
        # the next task goes to whichever worker frees first, none waits queued on a busy one
        assert client.run_on_scheduler(lambda dask_scheduler: dask_scheduler.WORKER_SATURATION,
                                       ) == 1.0
        # the sampling profiler would take the GIL from the task 100 times a second
        assert list(client.run(_diagnostics).values()) == [[], []]
        # their imports are out of the garbage collector's sight (cluster.settle_heap)
        assert list(client.run(_collector).values()) == [(True, True)] * 2


def test_local_workers_boot_with_the_project_imported():
    """They fork from a server that imported it once (:func:`pipeline.cluster.warm_up`),
    rather than each importing it at its first task."""
    if cluster.START_METHOD != "forkserver":
        pytest.skip("this platform spawns workers afresh")
    # a lambda travels by value: unpickling it imports nothing on the worker
    imported = lambda names: [n for n in names if n in __import__("sys").modules]  # noqa: E731
    with dask_client(workers=2) as client:
        assert list(client.run(imported, cluster.WORKER_MODULES).values()) == \
            [list(cluster.WORKER_MODULES)] * 2


def test_an_interrupted_run_kills_its_local_workers(monkeypatch):
    """Ctrl-C in the run reaches the cluster: its workers are killed, not waited for."""
    killed = []
    monkeypatch.setattr(cluster, "_kill_workers", killed.append)
    workers = Workers(workers=2)
    with pytest.raises(KeyboardInterrupt):
        with workers:
            assert workers.client() is not None
            raise KeyboardInterrupt
    assert len(killed) == 1


class _Tracked:
    """An argument that notes in ``folder`` each process that unpickles it."""

    def __init__(self, folder: str):
        self.folder = folder

    def __reduce__(self):
        return _unpickled, (self.folder,)


def _unpickled(folder: str) -> _Tracked:
    open(os.path.join(folder, str(os.getpid())), "w").close()
    return _Tracked(folder)


def _pid(_: _Tracked) -> int:
    return os.getpid()


def test_task_arguments_are_unpickled_on_the_workers_only(tmp_path):
    """A local scheduler runs in the driver: it would unpickle every argument there, under
    the driver's GIL (70 ms per task carrying a 2,000-node graph)."""
    with dask_client(workers=2) as client:
        ran_on = run_tasks(client, _pid, [(_Tracked(str(tmp_path)),) for _ in range(4)])
        ran_on += run_until(client, _pid, [(_Tracked(str(tmp_path)),)] * 2, lambda r: False)
    unpickled_in = {int(name) for name in os.listdir(tmp_path)}
    assert os.getpid() not in unpickled_in and unpickled_in <= set(ran_on)


def _solve_like(seconds: float) -> str:
    """A stand-in for a solve: waits ``seconds`` unless its stop hook is called."""
    stopped = threading.Event()
    with running(stopped.set):
        stopped.wait(seconds)
    return "stopped" if stopped.is_set() else "ran its course"


def test_run_until_keeps_the_first_proven_answer_and_stops_the_rest():
    with LocalCluster(n_workers=1, threads_per_worker=1, processes=True,
                      dashboard_address=None, silence_logs=logging.ERROR,
                      scheduler_kwargs={"dashboard": False, "dashboard_address": ":0"}) as one, \
            Client(one, set_as_default=False) as client:
        kept = run_until(client, _solve_like, [(0.0,), (600.0,)], lambda r: True)
        assert kept == ["ran its course"]          # the same prefix in_order would keep
        # the 600 s solve was stopped: the only worker is free again well within a minute
        after = client.submit(_solve_like, 0.0, pure=False).result(timeout=60)
        assert after == "ran its course"
        assert run_until(client, _solve_like, [(0.0,), (0.0,)], lambda r: False) == \
            ["ran its course"] * 2                 # none proven: every result, in order


class _BootingWorkers:
    """Workers that come up after ``boot`` tasks ran here (a stand-in for a booting cluster)."""

    def __init__(self, boot: int):
        self.boot, self.ran_here, self.started, self.failed = boot, [], True, False

    def client_if_up(self):
        return "client" if len(self.ran_here) >= self.boot else None

    def client(self):
        return "client"


def test_a_batch_starts_here_while_the_workers_boot_and_hands_them_the_rest(monkeypatch):
    state = levels.CompileState(None, None, None, None, workers=_BootingWorkers(boot=2))
    sent = []
    monkeypatch.setattr(cluster, "run_tasks", lambda client, f, tasks, done=None, sizes=None:
                        sent.append(("all", [t[0] for t in tasks])) or [f(*t) for t in tasks])
    monkeypatch.setattr(cluster, "run_until", lambda client, f, tasks, done:
                        sent.append(("until", [t[0] for t in tasks])) or in_order(f, tasks, done))

    def square(k):
        if threading.current_thread().name.startswith("batch-here"):
            state.workers.ran_here.append(k)
        return k * k

    tasks = [(k,) for k in range(5)]
    assert cluster.run_batch(state.workers, square, tasks, planned=100.0) == [0, 1, 4, 9, 16]
    assert state.workers.ran_here == [0, 1] and sent == [("all", [2, 3, 4])]
    state.workers, sent[:] = _BootingWorkers(boot=3), []
    # a result accepted while still here ends the batch: the in-order prefix
    assert cluster.run_batch(state.workers, square, tasks, 100.0, done=lambda r: r == 1) == [0, 1]
    assert sent == []
    state.workers = _BootingWorkers(boot=3)
    assert cluster.run_batch(state.workers, square, tasks, 100.0, done=lambda r: r == 9) == \
        [0, 1, 4, 9] and sent == [("until", [3, 4])]


def test_the_workers_take_the_rest_while_the_task_begun_here_runs(monkeypatch):
    """Workers that come up mid-task get the tasks not begun at once, not after it."""
    rest_began, seen_while_here = threading.Event(), []

    class UpAfterOneLook(_BootingWorkers):
        looks = 0

        def client_if_up(self):
            self.looks += 1
            return "client" if self.looks > 2 else None

    def square(k):
        if threading.current_thread().name.startswith("batch-here"):
            seen_while_here.append(rest_began.wait(timeout=30))   # the rest starts meanwhile
        return k * k

    state = levels.CompileState(None, None, None, None, workers=UpAfterOneLook(boot=0))
    monkeypatch.setattr(cluster, "run_tasks", lambda client, f, tasks, done=None, sizes=None:
                        rest_began.set() or [f(*t) for t in tasks])
    assert cluster.run_batch(state.workers, square, [(k,) for k in range(4)],
                             100.0) == [0, 1, 4, 9]
    assert seen_while_here == [True]


def test_while_they_boot_never_two_tasks_run_here_at_once():
    """HiGHS resets a process-wide scheduler after each solve: one solve at a time here."""
    lock, running, most = threading.Lock(), [0], [0]

    def count(k):
        with lock:
            running[0] += 1
            most[0] = max(most[0], running[0])
        time.sleep(0.05)
        with lock:
            running[0] -= 1
        return k

    state = levels.CompileState(None, None, None, None,
                                workers=_BootingWorkers(boot=99))
    assert cluster.run_batch(state.workers, count, [(k,) for k in range(3)], 100.0) == [0, 1, 2]
    assert most[0] == 1


def test_workers_are_only_started_when_asked_and_stopped_with_the_run():
    with Workers(workers=1) as alone:
        assert not alone.parallel and alone.client() is None


def test_an_unreachable_scheduler_is_bad_input_named_with_the_fix(monkeypatch, tmp_path, capsys):
    monkeypatch.setattr(cluster, "CONNECT_SECONDS", 1.0)
    code = main(["examples/fig9.json", "--scheduler", "tcp://127.0.0.1:9", "--quiet",
                 "--out", str(tmp_path / "out")])
    err = capsys.readouterr().err
    assert code == 2 and "tcp://127.0.0.1:9" in err and "dask scheduler" in err
    assert not (tmp_path / "out" / "mapping.json").exists()


def test_a_script_without_a_main_guard_is_told_the_fix_once(tmp_path):
    """Each local worker imports the caller's script again: without a main guard the
    workers started its mapping again, and each died with multiprocessing's traceback
    and Dask's "Nanny failed to start". They now end quietly; the script gets the fix."""
    script = tmp_path / "unguarded.py"
    script.write_text("from pipeline.cluster import Workers\n"
                      "with Workers(workers=2) as workers:\n"
                      "    workers.client()\n")
    result = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                            timeout=120, cwd=tmp_path,
                            env=os.environ | {"PYTHONPATH": str(REPO)})
    assert result.returncode == 1
    assert result.stderr.count("Traceback") == 1            # the script's own error
    assert 'if __name__ == "__main__":' in result.stderr.splitlines()[-1]


def test_the_worker_count_is_checked():
    with pytest.raises(Exception, match="--workers"):
        RunOptions(workers=0)
