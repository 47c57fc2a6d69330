"""Suite ``parallel``: section-parallel compile, 1 worker against 2 (issue 22).

Each row maps one real graph twice with the real CLI in fresh processes, with
``--workers 1`` and ``--workers 2`` and the same seed and budget, and reports the
wall times, their ratio and whether the two mapping.json files are identical once
the timing keys are removed (``time*``, ``seconds*``, ``*_time``). On the workers
run: every section's placement, routing and check; every section's balancing; the
section cut's portfolio seeds and the independent windows of its sweeps
(:mod:`formulations.sections.portfolio`). The driver keeps the greedy cut, the
feedback loop and the outputs; the columns show the cut's and the balancing's
seconds in both runs.

The estimates on 4, 8 and 16 workers and the serial seconds (what no worker count
shortens) hand out the 1-worker run's measured batches of independent work (the cut's
solves as it records them, the balancing, each section's place-and-route), largest first
(:func:`estimate`).
"""

from __future__ import annotations

import heapq
import json
import math
import os
import tempfile
from pathlib import Path
from typing import Any

from benchmarks.registry import Column, Entry, Suite
from benchmarks.suites.common import graphs_root
from benchmarks.suites.reliability import QUIET, run_cli, strip_timing
from pipeline.budget import MAPPING_SHARE

__all__ = ["SUITE", "GRAPHS", "compare_workers"]

#: (row name, graph under the shared graphs folder) of the issue's scaling table.
GRAPHS = (("bert_L-12 training", "msr-dnn/OperatorGraphs/bert_L-12_training.json"),
          ("resnet50 training", "msr-dnn/OperatorGraphs/resnet50_training.json"),
          ("bert_l-12 inference", "msr-dnn/OperatorGraphs/bert_l-12_inference.json"))
HARDWARE = ("plasticine", "sn10")
#: The budget of every run (the plan, not the deadline, should end the searches;
#: ``$RDAMAP_PARALLEL_BUDGET`` sets another, e.g. issue 33's 120).
BUDGET = float(os.environ.get("RDAMAP_PARALLEL_BUDGET", 60.0))
#: Set (``$RDAMAP_PARALLEL_PLANNED=1``), every run gets the plan of a run of its budget
#: (``--work``: :data:`~pipeline.budget.MAPPING_SHARE` of it) under a wall cap ten times
#: later: on a loaded machine the budget's own wall cap would cut the plan short, and the
#: 1- and 2-worker runs would then do different work.
PLANNED = os.environ.get("RDAMAP_PARALLEL_PLANNED", "") not in ("", "0")
#: Workers of the cluster estimates.
ESTIMATED = (4, 8, 16)
CLUSTER = ESTIMATED[-1]
#: Runs of each worker count per row, alternating: a row's walls are the fastest of each
#: (two runs of the same code differed by up to 0.18 in speed-up on this shared machine).
REPEATS = 3

COLUMNS = (
    Column("graph", "graph"),
    Column("hardware", "hardware"),
    Column("budget", "budget (s)", "{:g}"),
    Column("sections", "sections"),
    Column("wall_1", "1 worker (s)", "{:.1f}"),
    Column("wall_2", "2 workers (s)", "{:.1f}"),
    Column("speedup", "speed-up", "{:.2f}"),
    Column("pair_speedups", "speed-up of each pair"),
    Column("identical", "same mapping.json"),
    Column("place_route_s", "place-route s (1 worker)", "{:.1f}"),
    Column("cut_s", "cut s (1 / 2)"),
    Column("buffers_s", "balancing s (1 / 2)"),
    Column("per_section_s", "per section (s)", "{:.2f}"),
    Column("ceiling", "ceiling on 2 workers", "{:.2f}"),
    *(Column(f"est_{n}", f"{n} workers, est. (s)", "{:.1f}") for n in ESTIMATED),
    Column("serial_s", "serial s", "{:.1f}"),
    Column("cut_short", "cut short (1 / 2)"),
    Column("exit", "exit (1 / 2)"),
)


def _run(graph: Path, hardware: str, workers: int, budget: float, out: Path
         ) -> tuple[int | None, float, dict]:
    limit = ["--time-limit", f"{10 * budget:g}", "--work", f"{MAPPING_SHARE * budget:g}"] \
        if PLANNED else ["--time-limit", f"{budget:g}"]
    args = [str(graph), "--hardware", hardware, *limit, "--out", str(out), "--seed", "0",
            "--workers", str(workers), *QUIET]
    code, _, wall = run_cli(args, _run_timeout(budget))
    path = out / "mapping.json"
    return code, wall, json.loads(path.read_text()) if path.exists() else {}


def _run_timeout(budget: float) -> float:
    """Seconds after which one run is killed: well past its wall cap."""
    return (10 if PLANNED else 3) * budget + 600


def compare_workers(graph: str, hardware: str, budget: float = BUDGET,
                    repeats: int = REPEATS) -> dict[str, Any]:
    """Map ``graph`` with 1 and 2 workers, ``repeats`` pairs one after the other; the
    fastest wall of each, their ratio, the range of the pairs' ratios (the machine's
    noise), whether every mapping is identical, and the per-section times."""
    path = graphs_root() / graph
    with tempfile.TemporaryDirectory(prefix="par-") as tmp:
        pairs = [(_run(path, hardware, 1, budget, Path(tmp) / f"w1-{k}"),
                  _run(path, hardware, 2, budget, Path(tmp) / f"w2-{k}")) for k in range(repeats)]
    (code1, wall1, map1) = min((one for one, _ in pairs), key=lambda run: run[1])
    (code2, wall2, map2) = min((two for _, two in pairs), key=lambda run: run[1])
    ratios = [one[1] / two[1] for one, two in pairs if two[1]]
    contents = {json.dumps(strip_timing(run[2], ("_time",)), sort_keys=True)
                for pair in pairs for run in pair}
    per_section = _section_seconds(map1)
    place_route = sum(per_section)
    sections = len(map1.get("sections", []))
    batched = _stage_seconds(map1, ("sections", "buffers", "performance"))
    here = max(0.0, wall1 - batched - place_route)    # loading, greedy, outputs: driver
    work = _batches(map1) + [per_section]
    return {"budget": budget, "sections": sections, "wall_1": wall1, "wall_2": wall2,
            "ceiling": wall1 / estimate(here, work, 2) if wall1 else None,
            **{f"est_{n}": estimate(here, work, n) for n in ESTIMATED},
            "serial_s": estimate(here, work, math.inf),
            "speedup": wall1 / wall2 if wall2 else None,
            "pair_speedups": f"{min(ratios):.2f}-{max(ratios):.2f}" if ratios else None,
            "identical": "yes" if map1 and len(contents) == 1 else "no",
            "place_route_s": place_route,
            "cut_s": f"{_stage_seconds(map1, ('sections',)):.1f} / "
                     f"{_stage_seconds(map2, ('sections',)):.1f}",
            "buffers_s": f"{_stage_seconds(map1, ('buffers',)):.1f} / "
                         f"{_stage_seconds(map2, ('buffers',)):.1f}",
            "per_section_s": place_route / sections if sections else None,
            "cut_short": f"{map1.get('run', {}).get('cut_short')} / "
                         f"{map2.get('run', {}).get('cut_short')}",
            "exit": f"{code1} / {code2}"}


def _section_seconds(mapping: dict) -> list[float]:
    """Each section's place-and-route seconds (its order, placement, routing and ranking
    records, every attempt)."""
    seconds: dict[int, float] = {}
    for s in mapping.get("stages", []):
        if s.get("stage") in ("order", "placement", "routing", "ranking"):
            seconds[s.get("section")] = seconds.get(s.get("section"), 0.0) + (s.get("time") or 0)
    return list(seconds.values())


def _batches(mapping: dict) -> list[list[float]]:
    """The run's batches of independent work but placement, each a list of seconds: the
    cut's solves batch by batch, the probes' balancing, the first cut's balancing that
    confirms it, every section's balancing, the performance estimate's sections; the cut's
    own driver work (greedy cuts, model decoding) as batches of one. A baseline without
    batch records counts its cut as one batch of two (its two portfolio seeds).

    >>> _batches({"stages": [{"stage": "sections", "time": 4.0, "seconds_of_batches": [[1.0]],
    ...                       "seconds_of_probe_batches": [[0.5, 0.5]],
    ...                       "seconds_of_confirm_batches": [[0.25, 0.25]]},
    ...                      {"stage": "buffers", "time": 0.5},
    ...                      {"stage": "performance", "seconds_of_sections": [0.1, 0.2]}]})
    [[1.0], [0.5, 0.5], [0.25, 0.25], [1.5], [0.5], [0.1, 0.2]]
    """
    batches: list[list[float]] = []
    for stage in mapping.get("stages", []):
        if stage.get("stage") != "sections":
            continue
        recorded = (stage.get("seconds_of_batches", [])
                    + stage.get("seconds_of_probe_batches", [])
                    + stage.get("seconds_of_confirm_batches", []))
        driver = (stage.get("time") or 0.0) - sum(map(sum, recorded))
        batches += recorded + [[max(0.0, driver)]] if "seconds_of_batches" in stage \
            else [[(stage.get("time") or 0.0) / 2] * 2]
    balancing = [s.get("time") or 0.0 for s in mapping.get("stages", [])
                 if s.get("stage") == "buffers"]
    performance = [s.get("seconds_of_sections", []) for s in mapping.get("stages", [])
                   if s.get("stage") == "performance"]
    return batches + [balancing] + performance


def estimate(here: float, batches: list[list[float]], workers: float) -> float:
    """Wall seconds on ``workers``: the driver's own seconds, then each batch handed out
    largest first (:func:`makespan`); with infinitely many, the serial seconds (each
    batch's largest task: no worker count shortens it).

    >>> work = [[3.0, 2.0, 1.0], [4.0]]
    >>> estimate(1.0, work, 2), estimate(1.0, work, math.inf)
    (8.0, 8.0)
    >>> estimate(1.0, [[3.0, 3.0, 3.0]], 2)
    7.0
    """
    if workers == math.inf:
        return here + sum(max(b, default=0.0) for b in batches)
    return here + sum(makespan(b, int(workers)) for b in batches if b)


def makespan(seconds: list[float], workers: int) -> float:
    """The wall time of ``seconds`` of tasks on ``workers``, the largest first, each to
    the worker that frees first (how the run hands out its sections).

    >>> makespan([5.0, 4.0, 3.0, 3.0], 2)
    8.0
    >>> makespan([12.5, 9.0], 16)
    12.5
    """
    free = [0.0] * workers
    for task in sorted(seconds, reverse=True):
        heapq.heapreplace(free, free[0] + task)
    return max(free)


def _stage_seconds(mapping: dict, stages: tuple[str, ...]) -> float:
    """Seconds of a mapping's stage records of the given kinds, summed."""
    return sum(s.get("time") or 0 for s in mapping.get("stages", []) if s.get("stage") in stages)


def _entries(quick: bool) -> list[Entry]:
    root = graphs_root()
    rows = GRAPHS[:1] if quick else GRAPHS
    budget, repeats = (30.0, 1) if quick else (BUDGET, REPEATS)
    return [Entry(f"{name} on {hw}", "benchmarks.suites.parallel:compare_workers",
                  {"graph": graph, "hardware": hw, "budget": budget, "repeats": repeats},
                  timeout=2 * repeats * _run_timeout(budget),
                  fixed={"graph": name, "hardware": hw},
                  skip=None if (root / graph).exists() else
                  f"real graphs not available ({root / graph} is absent)")
            for name, graph in rows for hw in (HARDWARE[:1] if quick else HARDWARE)]


SUITE = Suite(
    name="parallel",
    title="Section-parallel compile: 1 worker against 2, same seed and budget",
    columns=COLUMNS,
    entries=_entries,
    notes=("Each row: `python -m pipeline.run GRAPH --hardware H --time-limit B --seed 0 "
           "--workers N --no-pictures --quiet` for N = 1 then 2, in fresh processes (with "
           "`$RDAMAP_PARALLEL_PLANNED=1`: `--time-limit 10B --work 0.9B`, a B-second run's plan "
           "with its wall cap out of the way), "
           f"{REPEATS} such pairs one after the other; wall = the whole process, the fastest "
           "of the row's runs with N workers. Same mapping.json = every run's identical once "
           "timing keys are removed. Speed-up = 1-worker wall / 2-worker wall; speed-up of "
           "each pair = the range of the pairs' own ratios (the machine's noise). On the "
           "workers: placement, routing and "
           "the check of every section, its balancing, and the cut's portfolio seeds and "
           "independent sweep windows; cut s = the cut's wall seconds in the driver, balancing s "
           "= the sections' balancing seconds summed wherever they ran (work, not wall: equal "
           "on 1 and 2 workers but for contention), in the 1- and 2-worker runs. Target: "
           ">= 1.8x at an identical mapping. Estimates on N workers (from the 1-worker run): "
           "driver-only seconds (wall - cut - balancing - place-route: loading, feedback, "
           "outputs) + the cut's own driver seconds (greedy cuts, decoding) + each batch of "
           "independent work handed out largest first to the worker that frees first: the "
           "cut's solves batch by batch (portfolio seeds; the windows of a sweep phase), the "
           "probes' balancing, the sections' balancing, then the sections' place-and-route "
           "(a baseline without batch records: its cut as two equal seeds). Ceiling on 2 "
           "workers = 1-worker wall / the 2-worker estimate. Serial s = the estimate on "
           "infinitely many workers: driver-only + the largest task of every batch (work no "
           "worker count shortens)."),
)
