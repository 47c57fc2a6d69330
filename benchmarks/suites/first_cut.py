"""Suite ``first_cut``: the section cut that knows its stage buffers, against a baseline (issue 33).

Every MSR DNN graph (``msr-dnn/OperatorGraphs`` and ``LayerGraphs``, smallest first) is
mapped on ``plasticine``, and the three graphs of the parallel table also on ``sn10``, by the
real CLI in fresh processes (``$RDAMAP_FIRST_CUT_WORKERS`` sets their ``--workers``): once
with this checkout and once with a *baseline* checkout
(``$RDAMAP_BASELINE``: a folder holding an older commit of this repository, e.g. made with
``git worktree add /tmp/base <commit>``), one right after the other, with the same seed,
budget and worker count. A row gives, for both: the sections, the feedback rounds, the
simulated throughput (:mod:`sim.perf`, the same simulator in both when the baseline has it),
the DRAM bytes across cuts and the wall time of the whole process; for this checkout the
cut's lower bound, the probes it took to learn the buffers and the buffer PMUs it learned;
and the ratios. Without ``$RDAMAP_BASELINE`` every row is skipped with a reason.

``--quick``: bert_l-12 inference on plasticine only.
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

from benchmarks.registry import Column, Entry, Suite
from benchmarks.suites.common import graphs_root, missing_msr_entry, msr_graphs, shorten

__all__ = ["SUITE", "BUDGET", "SN10_GRAPHS", "compare"]

#: Every run's ``--time-limit`` (the default budget a new user gets; ``$RDAMAP_FIRST_CUT_BUDGET``
#: sets another).
BUDGET = float(os.environ.get("RDAMAP_FIRST_CUT_BUDGET", 60.0))
#: Graphs also mapped on sn10 (the parallel table's).
SN10_GRAPHS = ("OperatorGraphs/bert_L-12_training", "OperatorGraphs/resnet50_training",
               "OperatorGraphs/bert_l-12_inference")
QUICK_GRAPH = "OperatorGraphs/bert_l-12_inference"
#: ``--workers`` of every run from ``$RDAMAP_FIRST_CUT_WORKERS`` (unset: the CLI's default,
#: the core count); 1 for A/B pairs on a shared machine.
WORKERS = os.environ.get("RDAMAP_FIRST_CUT_WORKERS")
#: ``--work`` of every run from ``$RDAMAP_FIRST_CUT_WORK`` (unset: none): with a large
#: ``$RDAMAP_FIRST_CUT_BUDGET`` it plans as a short run does with the wall clock out of the
#: way (``--time-limit 400 --work 54`` plans as a 60 s run).
WORK = os.environ.get("RDAMAP_FIRST_CUT_WORK")
#: Only these rows ("GRAPH PRESET", comma-separated, from ``$RDAMAP_FIRST_CUT_ROWS``) when set.
ROWS = {r.strip() for r in os.environ.get("RDAMAP_FIRST_CUT_ROWS", "").split(",") if r.strip()}
#: A folder (``$RDAMAP_FIRST_CUT_KEEP``) that keeps every run's mapping.json, as
#: ``GRAPH-PRESET-base.json`` and ``GRAPH-PRESET-new.json``, for a later look (sim.perf, the
#: cut's estimate); unset: none is kept.
KEEP = os.environ.get("RDAMAP_FIRST_CUT_KEEP")
REPO = Path(__file__).resolve().parents[2]
#: Seconds one entry (two runs) may take.
ENTRY_TIMEOUT = 6 * BUDGET

COLUMNS = (
    Column("graph", "graph"),
    Column("preset", "preset"),
    Column("nodes", "nodes", "{:,}"),
    Column("sections_base", "sections (base)"),
    Column("sections", "sections"),
    Column("lower_bound", "bound"),
    Column("bound_buffers", "bound with buffers"),
    Column("rounds_base", "feedback rounds (base)"),
    Column("rounds", "feedback rounds"),
    Column("probes", "probes"),
    Column("recuts", "cut again (kept)"),
    Column("buffer_pmus", "learned buffer PMUs"),
    Column("throughput_base", "samples/s (base)", "{:,.4g}"),
    Column("throughput", "samples/s", "{:,.4g}"),
    Column("throughput_ratio", "throughput ratio", "{:.3f}"),
    Column("dram_base", "DRAM GB (base)", "{:.4f}"),
    Column("dram", "DRAM GB", "{:.4f}"),
    Column("wall_base", "wall s (base)", "{:.1f}"),
    Column("wall", "wall s", "{:.1f}"),
    Column("cut_s", "cut s", "{:.1f}"),
    Column("estimate", "cut's estimate (M cycles/sample)", "{:.4f}"),
    Column("load_base", "load (base)", "{:.1f}"),
    Column("load", "load", "{:.1f}"),
    Column("status", "status"),
    Column("note", "note"),
)


def _run(tree: Path, graph: Path, preset: str, budget: float, seed: int,
         who: str = "new") -> dict[str, Any]:
    """One CLI run in ``tree``: its mapping.json's numbers and the process's wall time (the
    mapping kept as ``who``'s under :data:`KEEP` when set)."""
    with tempfile.TemporaryDirectory(prefix="first-cut-") as out:
        load, started = os.getloadavg()[0], time.perf_counter()
        proc = subprocess.run([sys.executable, "-m", "pipeline.run", str(graph), "--hardware",
                               preset, "--time-limit", str(budget), "--seed", str(seed),
                               "--out", out, "--no-pictures", "--quiet"]
                              + (["--workers", WORKERS] if WORKERS else [])
                              + (["--work", WORK] if WORK else []), cwd=tree,
                              capture_output=True, text=True, errors="replace",
                              env=dict(os.environ, PYTHONPATH=str(tree)),
                              timeout=ENTRY_TIMEOUT)
        wall = time.perf_counter() - started
        path = Path(out) / "mapping.json"
        if proc.returncode != 0 or not path.exists():
            lines = [x for x in proc.stderr.splitlines() if x.strip()]
            return {"status": f"exit {proc.returncode}", "wall": wall, "load": load,
                    "note": shorten(lines[-1] if lines else "no output", 200)}
        mapping = json.loads(path.read_text())
        if KEEP:
            Path(KEEP).mkdir(parents=True, exist_ok=True)
            (Path(KEEP) / f"{graph.stem}-{preset}-{who}.json").write_text(path.read_text())
    metrics = mapping["metrics"]
    cuts = [s for s in mapping.get("stages", []) if s.get("stage") == "sections"]
    first = cuts[0] if cuts else {}
    throughput = metrics.get("throughput")
    estimate = first.get("estimated_cycles_per_sample")
    return {"status": mapping.get("status"), "wall": wall, "load": load,
            "estimate": estimate / 1e6 if isinstance(estimate, (int, float)) else None,
            "sections": metrics.get("sections"), "rounds": metrics.get("feedback_rounds"),
            "throughput": throughput if isinstance(throughput, (int, float)) else None,
            "dram": (metrics.get("dram_bytes") or 0.0) / 1e9,
            "lower_bound": first.get("lower_bound"),
            "bound_buffers": first.get("bound_with_buffers"),
            "probes": first.get("probe_rounds"), "buffer_pmus": first.get("buffer_demand_pmus"),
            "recuts": _recuts(first),
            "cut_s": sum(s.get("time") or 0.0 for s in cuts),
            "merged": first.get("merged_by_windows")}


def _recuts(cut: dict) -> str | None:
    """How often the cut level cut the graph again after balancing its own cut, and which
    candidate it kept ("plain": the least-traffic cut that counts no buffers; "repair": the
    first cut with its sections too full cut again, the others kept)."""
    if "confirm_recuts" not in cut:
        return None
    n = cut["confirm_recuts"]
    kept = "plain" if cut.get("plain_cut_kept") else "repair" if cut.get("repaired") else None
    return f"{n} ({kept})" if kept else str(n)


def compare(graph: str, preset: str, budget: float = BUDGET, seed: int = 0) -> dict[str, Any]:
    """Map ``graph`` (relative to the shared graphs folder) with the baseline, then with this
    checkout; one row of both."""
    path = graphs_root() / "msr-dnn" / f"{graph}.json"
    base = _run(Path(os.environ["RDAMAP_BASELINE"]), path, preset, budget, seed, "base")
    new = _run(REPO, path, preset, budget, seed)
    row = {key: new.get(key) for key in ("sections", "lower_bound", "bound_buffers", "rounds",
                                          "probes", "recuts", "buffer_pmus", "throughput",
                                          "dram", "wall", "cut_s", "estimate", "load")}
    row |= {f"{key}_base": base.get(key) for key in ("sections", "rounds", "throughput",
                                                    "dram", "wall", "load")}
    if new.get("throughput") and base.get("throughput"):
        row["throughput_ratio"] = new["throughput"] / base["throughput"]
    row["status"] = f"{base['status']} / {new['status']}"
    row["note"] = "; ".join(f"{who}: {r['note']}" for who, r in (("base", base), ("new", new))
                            if r.get("note"))
    return row


def _entries(quick: bool) -> list[Entry]:
    graphs = msr_graphs()
    if not graphs:
        return [missing_msr_entry()]
    skip = None if os.environ.get("RDAMAP_BASELINE") else \
        "set RDAMAP_BASELINE to a checkout of the baseline commit"
    rows = [(name, preset, nodes) for name, _, nodes, _ in graphs
            for preset in ("plasticine",) + (("sn10",) if name in SN10_GRAPHS else ())]
    if quick:
        rows = [r for r in rows if r[0] == QUICK_GRAPH and r[1] == "plasticine"]
    if ROWS:
        rows = [r for r in rows if f"{r[0]} {r[1]}" in ROWS]
    return [Entry(f"{name} {preset}", "benchmarks.suites.first_cut:compare",
                  {"graph": name, "preset": preset}, timeout=ENTRY_TIMEOUT,
                  fixed={"graph": name, "preset": preset, "nodes": nodes}, skip=skip)
            for name, preset, nodes in rows]


SUITE = Suite(
    name="first_cut",
    title="The section cut that knows its stage buffers: this checkout against a baseline",
    columns=COLUMNS,
    entries=_entries,
    notes=(f"Each row: `python -m pipeline.run GRAPH --hardware H --time-limit {BUDGET:g} --seed 0 "
           "--no-pictures --quiet` (--workers "
           + (WORKERS or "the core count, the CLI's default") + ") with the baseline "
           "checkout ($RDAMAP_BASELINE), then with this one; wall = the whole process. "
           "Bound = the cut's lower bound on its first cut (unit estimates only); bound with "
           "buffers = the fewest sections the section model, with the learned buffer PMUs, "
           "did not prove infeasible. Probes = greedy cuts balanced to learn each edge's "
           "buffer PMUs before the first cut; learned buffer PMUs = their sum. Cut again = "
           "re-cuts after the cut level balanced its own cut and found a section too "
           "full ((plain): the least-traffic cut that counts no buffers was kept; (repair): "
           "the first cut with its sections too full cut again). Throughput = "
           "sim.perf's samples/s of the mapping (one batch of 256). Cut's estimate = this "
           "checkout's first cut's time per sample (formulations.sections.costs), load = the "
           "1-minute load average when each run started."),
)
