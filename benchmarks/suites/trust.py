"""Suite ``trust``: a run ends on time, and the same seed and work give the same mapping (issue 34).

Every row runs the real CLI, ``python -m pipeline.run``, in fresh processes, so wall times
are measured from the process start as a user meets them. Two parts:

1. **deadline** -- the graphs the issue names at their budgets (bert_L-12 training at 20 s,
   bert_l-12 inference on sn10 at 60 s, a 50,000-node chain at 60 s, bert24 inference at
   30 s, resnet50 inference at 10 s): the process's wall time against ``--time-limit``
   (the promise: at most 1.10 x the budget + 2 s for the interpreter's start), the searches
   the deadline cut short, and the headline (sections, simulated samples/s);
2. **determinism** -- one graph, seed and ``--work`` mapped several ways: alone, beside two
   busy-looping processes (both cores of this machine taken), on 1 and 2 local workers, and
   on an external ``dask scheduler`` with ``dask worker --nworkers 2 --nthreads 1``: the
   number of distinct ``mapping.json`` once the timing keys are removed (``time*``,
   ``seconds*``, ``*_time``: docs/formats.md), which must be 1 where no search was cut short.

When the shared graphs folder is absent, the rows that need it are skipped with the reason.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import time
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any, Iterator

from benchmarks.registry import Column, Entry, Suite
from benchmarks.suites.common import graphs_root, shorten
from benchmarks.suites.reliability import strip_timing
from model.graph import Edge, Graph, Node
from model.graphjson import graph_to_dict, write_json_atomic

__all__ = ["SUITE", "deadline", "determinism", "chain"]

REPO = Path(__file__).resolve().parents[2]
#: The deadline's promise: wall <= SLACK x budget + START seconds.
SLACK, START = 1.10, 2.0

DEADLINE_ROWS = (   # (graph, hardware, --time-limit)
    ("msr-dnn/OperatorGraphs/bert_L-12_training", "plasticine", 20),
    ("msr-dnn/LayerGraphs/bert24_inference", "plasticine", 30),
    ("msr-dnn/OperatorGraphs/resnet50_inference", "plasticine", 10),
    ("msr-dnn/OperatorGraphs/bert_l-12_inference", "sn10", 60),
    ("chain-50000", "plasticine", 60),
)
#: (graph, time limit, work, seed, the ways it is mapped).
DETERMINISM_ROWS = (
    ("msr-dnn/LayerGraphs/bert24_inference", 30, None, 2, ("alone", "alone", "busy")),
    ("msr-dnn/LayerGraphs/bert24_inference", 60, 12, 2, ("alone", "alone", "busy")),
    ("msr-dnn/OperatorGraphs/bert_l-3_inference", 120, 30, 5,
     ("1 worker", "2 workers", "dask scheduler", "2 workers, busy")),
)

COLUMNS = (
    Column("part", "part"),
    Column("graph", "graph"),
    Column("hardware", "hardware"),
    Column("budget", "--time-limit (s)", "{:g}"),
    Column("work", "--work (s)"),
    Column("ways", "runs"),
    Column("wall", "process wall (s)"),
    Column("ratio", "wall / budget"),
    Column("within", "within 1.1 x + 2 s"),
    Column("cut_short", "cut short"),
    Column("distinct", "distinct mappings"),
    Column("sections", "sections"),
    Column("throughput", "samples/s"),
    Column("wirelength", "wirelength"),
    Column("note", "note"),
)


def chain(nodes: int) -> Graph:
    """A chain of ``nodes`` compute units (the issue's long-graph case).

    >>> len(chain(5).edges)
    4
    """
    ids = [f"c{k}" for k in range(nodes)]
    return Graph(f"chain-{nodes}", [Node(i, op="add", unit="pcu") for i in ids],
                 [Edge(a, b) for a, b in zip(ids, ids[1:])])


def _graph_path(graph: str, folder: Path) -> Path:
    if graph.startswith("chain-"):
        path = folder / f"{graph}.json"
        write_json_atomic(graph_to_dict(chain(int(graph.split("-")[1]))), path)
        return path
    return graphs_root() / f"{graph}.json"


@contextmanager
def _busy(count: int) -> Iterator[None]:
    """``count`` processes looping on the CPU while the block runs."""
    loops = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(count)]
    try:
        yield
    finally:
        for loop in loops:
            loop.kill()
            loop.wait()


@contextmanager
def _dask_scheduler(folder: Path) -> Iterator[str]:
    """An external ``dask scheduler`` with ``dask worker --nworkers 2 --nthreads 1``: its
    address."""
    file = folder / "scheduler.json"
    dask = [sys.executable, "-m", "distributed.cli.dask_scheduler"]
    worker = [sys.executable, "-m", "distributed.cli.dask_worker"]
    quiet = dict(stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=REPO)
    with ExitStack() as stack:
        for command in (dask + ["--scheduler-file", str(file), "--no-dashboard", "--port", "0"],
                        worker + ["--scheduler-file", str(file), "--nworkers", "2",
                                  "--nthreads", "1", "--no-dashboard"]):
            process = subprocess.Popen(command, **quiet)
            stack.callback(process.wait)
            stack.callback(process.terminate)
            for _ in range(300):
                if file.exists():
                    break
                time.sleep(0.1)
        time.sleep(5)                       # the workers register
        yield json.loads(file.read_text())["address"]


def _run(args: list[str], out: Path, timeout: float) -> dict[str, Any]:
    """One CLI run: exit code, wall seconds of the whole process, mapping.json (or None)."""
    started = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "pipeline.run", *args, "--out", str(out),
                           "--no-pictures", "--quiet"], cwd=REPO, capture_output=True,
                          text=True, errors="replace", timeout=timeout)
    wall = time.perf_counter() - started
    path = out / "mapping.json"
    mapping = json.loads(path.read_text()) if path.exists() else None
    lines = [x for x in proc.stderr.splitlines() if x.strip()]
    return {"exit": proc.returncode, "wall": wall, "mapping": mapping,
            "last": lines[-1] if lines else ""}


def _headline(mapping: dict | None) -> dict[str, Any]:
    if mapping is None:
        return {}
    m = mapping.get("metrics", {})
    throughput = m.get("throughput")
    return {"sections": m.get("sections"), "wirelength": m.get("wirelength"),
            "throughput": f"{throughput:,.4g}" if isinstance(throughput, (int, float)) else None,
            "cut_short": mapping.get("run", {}).get("cut_short")}


def deadline(graph: str, hardware: str, budget: float) -> dict[str, Any]:
    """``graph`` on ``hardware`` at ``--time-limit budget``: the process's wall time."""
    with tempfile.TemporaryDirectory(prefix="trust-") as tmp:
        path = _graph_path(graph, Path(tmp))
        run = _run([str(path), "--hardware", hardware, "--time-limit", str(budget)],
                   Path(tmp) / "out", 4 * budget + 120)
    ratio = run["wall"] / budget
    return {"part": "deadline", "ways": 1, "wall": f"{run['wall']:.1f}", "ratio": f"{ratio:.3f}",
            "within": "yes" if run["wall"] <= SLACK * budget + START else "NO",
            "note": "" if run["exit"] == 0 else shorten(f"exit {run['exit']}: {run['last']}", 200),
            **_headline(run["mapping"])}


def _way_args(way: str, address: str | None) -> list[str]:
    if way == "dask scheduler":
        return ["--scheduler", address]
    if "worker" in way:
        return ["--workers", way.split()[0]]
    return []


def determinism(graph: str, budget: float, work: float | None, seed: int,
                ways: list[str]) -> dict[str, Any]:
    """``graph`` on plasticine mapped each of ``ways`` with one seed and work: how many
    distinct mappings."""
    runs = []
    with tempfile.TemporaryDirectory(prefix="trust-") as tmp, ExitStack() as stack:
        address = (stack.enter_context(_dask_scheduler(Path(tmp))) if "dask scheduler" in ways
                   else None)
        base = [str(graphs_root() / f"{graph}.json"), "--time-limit", str(budget),
                "--seed", str(seed)] + (["--work", str(work)] if work else [])
        for k, way in enumerate(ways):
            with _busy(2 if "busy" in way else 0):
                runs.append(_run(base + _way_args(way, address), Path(tmp) / f"out{k}",
                                 4 * budget + 120))
    mappings = [json.dumps(strip_timing(r["mapping"], ("_time",)), sort_keys=True) for r in runs
                if r["mapping"] is not None]
    cut = [(_headline(r["mapping"]).get("cut_short") or 0) for r in runs]
    heads = [_headline(r["mapping"]) for r in runs]
    return {"part": "determinism", "hardware": "plasticine", "ways": ", ".join(ways),
            "wall": ", ".join(f"{r['wall']:.1f}" for r in runs),
            "cut_short": ", ".join(map(str, cut)), "distinct": len(set(mappings)),
            "sections": ", ".join(str(h.get("sections")) for h in heads),
            "wirelength": ", ".join(str(h.get("wirelength")) for h in heads),
            "throughput": heads[0].get("throughput") if heads else None,
            "note": "; ".join(shorten(f"{w}: exit {r['exit']}: {r['last']}", 160)
                              for w, r in zip(ways, runs) if r["exit"] != 0)}


def _entries(quick: bool) -> list[Entry]:
    have = (graphs_root() / "msr-dnn").is_dir()
    skip = None if have else f"real graphs not available ({graphs_root()} is absent)"
    entries = []
    for graph, hardware, budget in DEADLINE_ROWS[:1] if quick else DEADLINE_ROWS:
        entries.append(Entry(f"deadline {graph} {hardware} {budget}",
                             "benchmarks.suites.trust:deadline",
                             {"graph": graph, "hardware": hardware, "budget": budget},
                             timeout=4 * budget + 180,
                             fixed={"graph": graph, "hardware": hardware, "budget": budget},
                             skip=None if graph.startswith("chain-") else skip))
    for graph, budget, work, seed, ways in DETERMINISM_ROWS[:1] if quick else DETERMINISM_ROWS:
        entries.append(Entry(f"determinism {graph} {budget} {work}",
                             "benchmarks.suites.trust:determinism",
                             {"graph": graph, "budget": budget, "work": work, "seed": seed,
                              "ways": list(ways)},
                             timeout=len(ways) * (4 * budget + 120) + 60,
                             fixed={"graph": graph, "budget": budget,
                                    "work": "default" if work is None else work},
                             skip=skip))
    return entries


SUITE = Suite(
    name="trust",
    title="A run ends on time, and the same seed and work give the same mapping",
    columns=COLUMNS,
    entries=_entries,
    notes=("Every run: `python -m pipeline.run GRAPH --hardware H --time-limit T [--work W] "
           "[--seed S] --no-pictures --quiet`, wall = the whole process (interpreter start, "
           "imports and loading included). --work default: 90 % of the time limit. Busy: two "
           "`while True: pass` processes beside the run (this machine has 2 cores). Dask "
           "scheduler: `dask scheduler` + `dask worker --nworkers 2 --nthreads 1` on this "
           "machine. Distinct mappings: mapping.json with time*, seconds* and *_time keys "
           "removed. Cut short: searches the run's deadline stopped before their planned "
           "work was done (then the answer is legal and checked, but not promised to "
           "repeat)."),
)
