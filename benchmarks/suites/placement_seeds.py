"""Suite ``placement_seeds``: the model against annealing over many seeds, where it is close.

The placement table (:mod:`benchmarks.suites.placement`) reports medians of five seeds per
placer; one run's cost varies by up to 15 % from seed to seed on the dense sections (every
node can take every site), as much as the 5 % target. This suite runs the sections whose
five-seed margin in that table was the smallest with :data:`SEEDS` seeds of each placer (same
budget, alternating annealing and model runs so both see the same machine load) and reports
means with standard errors, the gain of the means with a 95 % interval, the gain of the
medians and the seeds won. Every placement is checked by :func:`sim.check.check_placement`.

Caveat: 20 seeds x 2 placers x 10 s is about 7 minutes per row, so only the close rows run.
"""

from __future__ import annotations

import math
import statistics
from typing import Any

from benchmarks.registry import Column, Entry, Suite
from benchmarks.suites.common import graphs_root
from benchmarks.suites.placement import (BUDGET, INSTANCES, QUICK_BUDGET, SITE_MODEL_NODES,
                                         above_optimum, load_section, placer_runs,
                                         proven_optimum)
from formulations.sorter.priority_sort import sort_nodes
from sim.check import check_placement

__all__ = ["SUITE", "seed_study", "ROWS", "SEEDS", "placement_instance", "cost_summary",
           "model_gain"]

#: (instance label, preset, backend) of the placement suite: the rows whose five-seed margin over
#: annealing in benchmarks/results/placement.md was the smallest. In the table of commit
#: 3e2e198 only gen 16 on HiGHS was under 5 % (within 4 % of its proven optimum, so out of
#: reach); resnet50 s2 on HiGHS cleared 5 % at five seeds but not at twenty (4.0 %). In the
#: table of commit 110b863, gen 96 any on HiGHS came out at 4.4 % (its annealing median 7 %
#: below the same annealer's on the CP-SAT row: seed noise). Earlier rows (gen 128 any,
#: resnet50 s2 on CP-SAT, gen 16 on CP-SAT) cleared 5 % with 20 seeds or reached the proven
#: optimum: see this file's history.
ROWS = (("gen 16", "plasticine", "highs"), ("gen 64", "plasticine", "cp-sat"),
        ("gen 96 any", "plasticine", "highs"),
        ("bert_l-3_training s0", "plasticine", "cp-sat"),
        ("resnet50_training s2", "plasticine", "highs"))
SEEDS = 20
QUICK_SEEDS = 2

COLUMNS = (
    Column("instance", "section"), Column("preset", "preset"), Column("backend", "backend"),
    Column("seeds", "seeds"),
    Column("annealing_mean", "annealing mean", "{:.4g}"),
    Column("annealing_sem", "± s.e.", "{:.2g}"),
    Column("model_mean", "model mean", "{:.4g}"),
    Column("model_sem", "± s.e.", "{:.2g}"),
    Column("gain_means", "model vs annealing (means)", "{:.1%}"),
    Column("gain_interval", "95% interval"),
    Column("annealing_median", "annealing median", "{:.4g}"),
    Column("model_median", "model median", "{:.4g}"),
    Column("gain_medians", "model vs annealing (medians)", "{:.1%}"),
    Column("wins", "model wins (seeds)"),
    Column("optimum", "optimum (proved)", "{:.4g}"),
    Column("annealing_at_optimum", "annealing runs at the optimum"),
    Column("model_at_optimum", "model runs at the optimum"),
    Column("checked", "sim.check"),
)


def seed_study(label: str, preset: str, backend: str, budget: float, seeds: int
               ) -> dict[str, Any]:
    """One row: ``seeds`` runs of annealing and of the model on one section."""
    kind, params = placement_instance(label, preset)
    graph, fabric = load_section(kind, params)
    order = sort_nodes(graph).order
    annealing, models = placer_runs(graph, fabric, order, backend, budget, range(seeds))
    ok = all(check_placement(graph, fabric, p.placement).ok for p in annealing + models)
    a = [p.objective for p in annealing]
    m = [p.objective for p in models]
    optimum, _ = proven_optimum(graph, fabric, annealing + models)
    ok = ok and above_optimum(annealing + models, optimum)
    row = {"seeds": seeds, **cost_summary("annealing", a), **cost_summary("model", m),
           **model_gain(a, m), "wins": f"{sum(x < y for x, y in zip(m, a))}/{seeds}"}
    if optimum is not None:
        row |= {"optimum": optimum,
                "annealing_at_optimum": f"{sum(c <= optimum + 1e-9 for c in a)}/{seeds}",
                "model_at_optimum": f"{sum(c <= optimum + 1e-9 for c in m)}/{seeds}"}
    return row | {"checked": "ok" if ok else "REJECTED"}


def placement_instance(label: str, preset: str) -> tuple[str, dict]:
    """The placement suite's instance of this label on this preset (a label alone is not
    unique: ``bert_l-3_training s0`` is cut for plasticine and for sn10)."""
    return next((k, p) for name, k, p in INSTANCES if name == label and p["preset"] == preset)


def _sem(costs: list[float]) -> float:
    """Standard error of the mean."""
    return statistics.stdev(costs) / math.sqrt(len(costs)) if len(costs) > 1 else 0.0


def cost_summary(name: str, costs: list[float]) -> dict[str, float]:
    """``<name>_mean``, ``<name>_sem`` (standard error) and ``<name>_median`` of ``costs``."""
    return {f"{name}_mean": statistics.mean(costs), f"{name}_sem": _sem(costs),
            f"{name}_median": statistics.median(costs)}


def model_gain(annealing: list[float], model: list[float]) -> dict[str, Any]:
    """``1 - model / annealing`` of the means (with a 95 % interval from both standard
    errors) and of the medians."""
    base = statistics.mean(annealing)
    if base <= 0:
        return {}
    spread = math.hypot(_sem(annealing), _sem(model))
    gain = 1 - statistics.mean(model) / base
    half = 1.96 * spread / base
    return {"gain_means": round(gain, 4),
            "gain_interval": f"{gain - half:.1%} – {gain + half:.1%}",
            "gain_medians": round(1 - statistics.median(model) / statistics.median(annealing), 4)}


def _entries(quick: bool) -> list[Entry]:
    budget = QUICK_BUDGET if quick else BUDGET
    seeds = QUICK_SEEDS if quick else SEEDS
    have_graphs = (graphs_root() / "msr-dnn" / "OperatorGraphs").is_dir()
    rows = ROWS[:1] if quick else ROWS
    return [Entry(f"{label} on {preset} ({backend}), {seeds} seeds",
                  "benchmarks.suites.placement_seeds:seed_study",
                  {"label": label, "preset": preset, "backend": backend, "budget": budget,
                   "seeds": seeds},
                  timeout=2 * seeds * budget + 120,
                  fixed={"instance": label, "preset": preset, "backend": backend},
                  skip=None if placement_instance(label, preset)[0] == "gen" or have_graphs
                  else "msr-dnn graphs are absent")
            for label, preset, backend in rows]


SUITE = Suite(
    name="placement_seeds",
    title="Placement seed study: the model against annealing over many seeds, on the close rows",
    columns=COLUMNS,
    entries=_entries,
    notes=(f"Sections and cost as in placement.md; {SEEDS} seeds (0..{SEEDS - 1}) of each placer "
           f"(--quick: {QUICK_SEEDS}), {BUDGET:g} s each (--quick {QUICK_BUDGET:g} s), annealing "
           "and model runs alternating. 's.e.' = standard error of the mean; the 95% interval "
           "of the gain of the means is 1.96 standard errors of the difference of the means "
           "(runs of different seeds are independent), over the annealing mean. Rows: those "
           "whose five-seed margin in placement.md was the smallest. 'optimum (proved)': as in "
           f"placement.md (sections of at most {SITE_MODEL_NODES} nodes), with the runs that "
           "reach it."),
)
