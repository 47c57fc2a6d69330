"""Suite ``frontend``: the front end at scale, from a generated graph to the greedy cut.

For 10^4, 10^5 and 10^6 nodes (two edges per node, :func:`benchmarks.generators.random_dag`,
seed 0) a row gives: the seconds to generate the graph and to write its graph.json;
then, in a fresh child process, the seconds to load and validate it
(:func:`model.importers.load_graph`), the peak resident memory right after loading,
the seconds of the resource estimates (:func:`formulations.sections.estimate_units`,
``sn10``) and of the greedy section cut (:func:`formulations.sections.greedy_cut`).
Issue 18's targets: load and validate 10^6 nodes in under 10 s and 2 GiB; no step
quadratic (the cut grows with the graph, not its square).

The same child runs against a baseline tree (``FRONTEND_BASELINE``, default
``/tmp/base``: a ``git worktree`` of the code before the change) when it exists;
the row shows its numbers beside the current ones as ratios (baseline / current).
A child stage that does not finish within :data:`STAGE_TIMEOUT` seconds is shown
as missing; the stages it did finish are kept.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks.generators import random_dag
from benchmarks.registry import Column, Entry, Suite
from model.graphjson import write_graph

__all__ = ["SUITE", "SIZES", "measure", "run_stages", "within_targets", "STAGES_CODE"]

#: Node counts of the full run (2 edges per node); ``--quick`` runs the first two.
SIZES = (10_000, 100_000, 1_000_000)
#: The issue's targets for loading and validating 10^6 nodes.
LOAD_SECONDS, LOAD_MIB = 10.0, 2048.0
#: Seconds the child may take in all before it is stopped.
STAGE_TIMEOUT = 300.0
#: The hardware preset of the estimates and the cut.
PRESET = "sn10"

#: The child: load, estimate, cut; one JSON line per stage as soon as it is done. It
#: imports only modules a tree before this suite also has (the baseline runs it).
STAGES_CODE = """
import json, resource, sys, time
from model.importers import load_graph
from formulations.sections import Capacity, estimate_units, greedy_cut
from hardware import build_fabric, load_hardware
def say(**row):
    print(json.dumps(row), flush=True)
def peak_mib():  # VmHWM: ru_maxrss keeps the forking parent's peak across exec
    try:
        with open("/proc/self/status") as status:
            return next(int(l.split()[1]) for l in status if l.startswith("VmHWM")) / 1024
    except (OSError, StopIteration):
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
started = time.perf_counter()
graph = load_graph(sys.argv[1])
say(load_s=time.perf_counter() - started, peak_mib=peak_mib())
spec = load_hardware(sys.argv[2])
started = time.perf_counter()
graph = estimate_units(graph, spec)
say(estimate_s=time.perf_counter() - started)
started = time.perf_counter()
sections = greedy_cut(graph, Capacity.of_fabric(build_fabric(spec)))
say(cut_s=time.perf_counter() - started, sections=len(sections))
"""

STAGES = ("load_s", "peak_mib", "estimate_s", "cut_s")

COLUMNS = (
    Column("nodes", "nodes", "{:,}"),
    Column("edges", "edges", "{:,}"),
    Column("generate_s", "generate (s)", "{:.2f}"),
    Column("write_s", "write (s)", "{:.2f}"),
    Column("load_s", "load + validate (s)", "{:.2f}"),
    Column("peak_mib", "peak after load (MiB)", "{:,.0f}"),
    Column("estimate_s", "estimates (s)", "{:.2f}"),
    Column("cut_s", "greedy cut (s)", "{:.2f}"),
    Column("sections", "sections"),
    Column("within_target", "load within 10 s and 2 GiB"),
    Column("base_load_s", "baseline load (s)", "{:.2f}"),
    Column("base_peak_mib", "baseline peak (MiB)", "{:,.0f}"),
    Column("base_cut_s", "baseline greedy cut (s)", "{:.2f}"),
    Column("load_ratio", "load: baseline / now", "{:.1f}"),
    Column("peak_ratio", "peak: baseline / now", "{:.2f}"),
    Column("estimate_ratio", "estimates: baseline / now", "{:.1f}"),
    Column("cut_ratio", "cut: baseline / now", "{:.1f}"),
)


def run_stages(path: str, pythonpath: str | None = None,
               timeout: float = STAGE_TIMEOUT) -> dict[str, Any]:
    """Run :data:`STAGES_CODE` on ``path`` in a child (with ``pythonpath`` first on its
    path); the stages it finished within ``timeout`` seconds, rounded."""
    env = dict(os.environ)
    if pythonpath:
        env["PYTHONPATH"] = pythonpath
    with tempfile.TemporaryFile("w+") as out:
        child = subprocess.Popen([sys.executable, "-c", STAGES_CODE, path, PRESET],
                                 stdout=out, stderr=subprocess.DEVNULL, env=env,
                                 cwd=pythonpath or None)
        try:
            child.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            child.kill()
            child.wait()
        out.seek(0)
        row: dict[str, Any] = {}
        for line in out:
            row.update(json.loads(line))
    return {k: round(v, 3) if isinstance(v, float) else v for k, v in row.items()}


def within_targets(row: dict[str, Any]) -> str:
    """"yes"/"no" for the load targets (10 s, 2 GiB), "?" when the load did not finish."""
    if row.get("load_s") is None or row.get("peak_mib") is None:
        return "?"
    return "yes" if row["load_s"] < LOAD_SECONDS and row["peak_mib"] < LOAD_MIB else "no"


def _ratio(base: Any, now: Any) -> float | None:
    return round(base / now, 2) if base is not None and now else None


def measure(nodes: int, baseline: str | None = None) -> dict[str, Any]:
    """One row: generate and write ``nodes`` nodes and 2·``nodes`` edges, then the
    child's stages now and (when ``baseline`` names a tree) before."""
    with tempfile.TemporaryDirectory(prefix="frontend-") as tmp:
        path = str(Path(tmp) / f"random-{nodes}.json")
        started = time.perf_counter()
        graph = random_dag(nodes, 2 * nodes, seed=0)
        generate_s = time.perf_counter() - started
        started = time.perf_counter()
        write_graph(graph, path)
        row = {"nodes": nodes, "edges": len(graph.edges), "generate_s": round(generate_s, 3),
               "write_s": round(time.perf_counter() - started, 3)}
        del graph
        row |= run_stages(path)
        row["within_target"] = within_targets(row)
        if baseline and Path(baseline).is_dir():
            base = run_stages(path, baseline)
            row |= {f"base_{k}": base.get(k) for k in STAGES}
            row |= {f"{k[:-2]}_ratio": _ratio(base.get(k), row.get(k))
                    for k in ("load_s", "estimate_s", "cut_s")}
            row["peak_ratio"] = _ratio(base.get("peak_mib"), row.get("peak_mib"))
    return row


def _entries(quick: bool) -> list[Entry]:
    baseline = os.environ.get("FRONTEND_BASELINE", "/tmp/base")
    sizes = SIZES[:2] if quick else SIZES
    return [Entry(f"{n:,} nodes", "benchmarks.suites.frontend:measure",
                  {"nodes": n, "baseline": baseline}, timeout=3 * STAGE_TIMEOUT,
                  fixed={"nodes": n, "edges": 2 * n})
            for n in sizes]


SUITE = Suite(
    name="frontend",
    title="Front end at scale: generate, write, load + validate, estimates, greedy cut",
    columns=COLUMNS,
    entries=_entries,
    notes=("random_dag(n, 2n, seed=0), written by model.graphjson.write_graph; the load, "
           f"estimates ({PRESET}) and greedy cut run in a fresh child process; peak = its "
           "resident memory (VmHWM) right after loading. Baseline = the same child on the tree "
           "before issue 18 item 6 (FRONTEND_BASELINE); ratios are baseline / now, a missing "
           f"baseline value did not finish within {STAGE_TIMEOUT:g} s. Targets: load and "
           "validate 10^6 nodes in under 10 s and 2 GiB."),
)
