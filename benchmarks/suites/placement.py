"""Suite ``placement``: greedy vs simulated annealing vs the exact placement model.

Every entry is one section on one preset and one backend. The section is placed
three ways with the same cost (bandwidth-weighted switch-hop distance,
:func:`formulations.placement.problem.problem_cost`):

* ``greedy`` -- the sorted-order greedy placement (the model's warm start);
* ``annealing`` -- the VPR-style annealer on the same cost (wirelength + cut
  congestion), restarted until the model's time budget is spent;
* ``model`` -- the exact model (whole section when small, LNS otherwise) on the
  entry's backend, with ``patience=None``: the LNS uses the whole budget (short
  warm anneals kick it out of its local optima), as the annealer does. The
  pipeline instead stops the LNS after 20 rounds without progress.

Annealing and model run with three seeds each. Their results vary from seed to seed
(and with machine load, which moves the time limit's cut) by as much as the issue's
5 % target, so one run per placer proves little: each row reports the median run, the
spread and the number of seeds where the model beat the annealer of the same seed.

The cost is reported whole and split (wirelength, congestion); the model's bound
(proven by the exact model, or the star bound for LNS runs) gives a gap. Sections of
at most SITE_MODEL_NODES nodes also get their optimum, proved by the site model of
:mod:`formulations.placement.site_model` outside the budget (a run below it would be a bug:
the row is then rejected), and "annealing vs bound" says where no placement can beat
the annealer by 5 %.

The model's median placement is then routed by the negotiated-congestion router and by
the exact routing model (same backend; ``highs`` for MILP), and every placement
and route is judged by :mod:`sim.check`. Sections: the first sections of MSR DNN
graphs (``bert_l-3_training`` and ``resnet50_training``) as cut by the greedy
section cut on ``plasticine`` and ``sn10``, generated random sections of
increasing size on ``plasticine``, and tiny-grid sections (where the model must
prove optimality).

Caveats
-------
The time to the first solution is the greedy warm start's; times are wall
clock on a shared 2-core machine. Ratios are ``1 - model / baseline`` (positive
= the model is better); they are empty when the baseline's cost is 0.
"""

from __future__ import annotations

import time
from typing import Any, Iterable

from benchmarks.generators import random_dag
from benchmarks.registry import Column, Entry, Suite
from benchmarks.suites.common import graphs_root
from formulations.placement import (PLACERS, SITE_MODEL_NODES, PlacementSearch,
                                    placement_problem, problem_cost, site_model_fits,
                                    solve_site_model)
from formulations.routing import route_model, route_negotiated
from formulations.sections import Capacity, greedy_cut
from formulations.solver import Budget, SolveSettings, relative_gap
from formulations.sorter.priority_sort import sort_nodes
from hardware import RduFabric, build_fabric, load_hardware
from model.importers import load_graph
from sim.check import check_section

__all__ = ["SUITE", "compare_placers", "placer_runs", "load_section", "proven_optimum",
           "above_optimum", "INSTANCES", "QUICK_INSTANCES"]

#: (label, kind, params): "msr" = (file stem, preset, section index); "gen" = random_dag.
INSTANCES: tuple[tuple[str, str, dict], ...] = (
    ("tiny gen 6", "gen", {"n": 6, "edges": 8, "seed": 1, "preset": "tiny"}),
    ("tiny gen 8", "gen", {"n": 8, "edges": 11, "seed": 2, "preset": "tiny"}),
    ("tiny gen 10", "gen", {"n": 10, "edges": 14, "seed": 3, "preset": "tiny"}),
    ("gen 16", "gen", {"n": 16, "edges": 24, "seed": 4, "preset": "plasticine"}),
    ("gen 32", "gen", {"n": 32, "edges": 48, "seed": 5, "preset": "plasticine"}),
    ("gen 64", "gen", {"n": 64, "edges": 96, "seed": 6, "preset": "plasticine"}),
    ("gen 96 any", "gen", {"n": 96, "edges": 144, "seed": 7, "preset": "plasticine",
                           "units": "any"}),
    ("gen 128 any", "gen", {"n": 128, "edges": 192, "seed": 8, "preset": "plasticine",
                            "units": "any"}),
    ("bert_l-3_training s0", "msr", {"stem": "bert_l-3_training", "preset": "plasticine",
                                     "section": 0}),
    ("bert_l-3_training s1", "msr", {"stem": "bert_l-3_training", "preset": "plasticine",
                                     "section": 1}),
    ("bert_l-3_training s3", "msr", {"stem": "bert_l-3_training", "preset": "plasticine",
                                     "section": 3}),
    ("resnet50_training s2", "msr", {"stem": "resnet50_training", "preset": "plasticine",
                                     "section": 2}),
    ("bert_l-3_training s0", "msr", {"stem": "bert_l-3_training", "preset": "sn10",
                                     "section": 0}),
    ("resnet50_training s0", "msr", {"stem": "resnet50_training", "preset": "sn10",
                                     "section": 0}),
)
QUICK_INSTANCES = ("tiny gen 6", "tiny gen 8", "gen 32")
BACKENDS = ("cp-sat", "highs")
#: Seconds per placer (annealing and model alike); ``--quick`` uses QUICK_BUDGET.
BUDGET = 10.0
QUICK_BUDGET = 2.0
#: Seconds the site model (formulations.placement.site_model, one worker) may take to prove the
#: optimum of a section of at most SITE_MODEL_NODES nodes: a reference for the table,
#: outside the placers' budget.
PROOF_SECONDS = 300.0
#: Seeds of the annealer and the model per row (their results vary from run to run as
#: much as the 5 % target); --quick runs QUICK_SEEDS.
SEEDS = (0, 1, 2, 3, 4)
QUICK_SEEDS = (0,)

COLUMNS = (
    Column("instance", "section"),
    Column("preset", "preset"),
    Column("nodes", "nodes"),
    Column("edges", "edges"),
    Column("backend", "backend"),
    Column("greedy", "greedy cost", "{:.4g}"),
    Column("annealing", "annealing cost", "{:.4g}"),
    Column("model", "model cost", "{:.4g}"),
    Column("annealing_range", "annealing min–max"),
    Column("model_range", "model min–max"),
    Column("wins", "model wins (seeds)"),
    Column("model_wl", "model WL", "{:.4g}"),
    Column("model_congestion", "model congestion", "{:.4g}"),
    Column("annealing_congestion", "annealing congestion", "{:.4g}"),
    Column("vs_greedy", "model vs greedy", "{:.1%}"),
    Column("vs_annealing", "model vs annealing", "{:.1%}"),
    Column("bound", "bound", "{:.4g}"),
    Column("gap", "gap", "{:.3g}"),
    Column("optimum", "optimum (proved)", "{:.4g}"),
    Column("proof_s", "proof (s)", "{:.1f}"),
    Column("annealing_vs_bound", "annealing vs bound", "{:.1%}"),
    Column("status", "model status"),
    Column("first_s", "first (s)", "{:.3f}"),
    Column("best_s", "final found (s)", "{:.2f}"),
    Column("final_s", "model ends (s)", "{:.2f}"),
    Column("annealing_s", "annealing (s)", "{:.2f}"),
    Column("links_negotiated", "links (negotiated)"),
    Column("links_model", "links (route model)"),
    Column("route_gap", "route gap", "{:.3g}"),
    Column("load_negotiated", "max load (neg.)", "{:.2f}"),
    Column("load_model", "max load (model)", "{:.2f}"),
    Column("route_s", "route model (s)", "{:.2f}"),
    Column("checked", "sim.check"),
)


def load_section(kind: str, params: dict):
    """The section and the chip of one instance (``kind`` "gen" or "msr", its ``params``
    as in :data:`INSTANCES`): ``(graph, fabric)``."""
    fabric = build_fabric(load_hardware(params["preset"]))
    if kind == "gen":
        graph = random_dag(params["n"], params["edges"], seed=params["seed"], components=1,
                           units=params.get("units", "mixed"))
        return graph, fabric
    path = graphs_root() / "msr-dnn" / "OperatorGraphs" / f"{params['stem']}.json"
    graph = load_graph(path)
    section = greedy_cut(graph, Capacity.of_fabric(fabric))[params["section"]]
    return graph.subgraph(section.nodes, name=f"{params['stem']}/s{params['section']}"), fabric


def _ratio(model: float, base: float) -> float | None:
    return None if base <= 0 else round(1 - model / base, 4)


def compare_placers(kind: str, params: dict, backend: str, budget: float,
                    seeds: tuple[int, ...] = SEEDS) -> dict[str, Any]:
    """One row: greedy, annealing and model placements (and routes) of one section.

    Annealing and model run once per seed; the row reports the median cost of each, the
    spread, and in how many seeds the model beat the annealer run with the same seed. The
    model's median run is routed and checked; every placement of every run is checked.
    """
    graph, fabric = load_section(kind, params)
    order = sort_nodes(graph).order
    greedy = PLACERS["greedy"](graph, fabric, order, SolveSettings(time_limit=budget))
    annealing, models = placer_runs(graph, fabric, order, backend, budget, seeds)
    ann, model = _median_run(annealing), _median_run(models)
    negotiated = route_negotiated(graph, fabric, model.placement)
    started = time.perf_counter()
    routed = route_model(graph, fabric, model.placement,
                         SolveSettings(backend=backend, time_limit=budget))
    route_s = time.perf_counter() - started
    checks = [check_section(graph, fabric, p.placement, {})
              for p in (greedy, *annealing, *models)]
    neg_check = check_section(graph, fabric, model.placement, negotiated.paths)
    model_check = check_section(graph, fabric, model.placement, routed.paths)
    ok = all(c.ok or all("not routed" in v for v in c.violations) for c in checks)
    ok = ok and (neg_check.ok or not negotiated.success) and (model_check.ok or not routed.success)
    bound = max((m.bound for m in models if m.bound is not None), default=None)
    optimum, proof_s = proven_optimum(graph, fabric, annealing + models)
    ok = ok and above_optimum(annealing + models, optimum)
    return {
        "nodes": len(graph.nodes), "edges": len(graph.edges),
        "greedy": greedy.objective, "annealing": ann.objective, "model": model.objective,
        "annealing_range": _spread(annealing), "model_range": _spread(models),
        "wins": f"{sum(m.objective < a.objective for m, a in zip(models, annealing))}"
                f"/{len(seeds)}",
        "model_wl": model.extra.get("wirelength"),
        "model_congestion": model.extra.get("congestion"),
        "annealing_congestion": ann.extra.get("congestion"),
        "vs_greedy": _ratio(model.objective, greedy.objective),
        "vs_annealing": _ratio(model.objective, ann.objective),
        "bound": bound, "gap": relative_gap(model.objective, bound),
        "optimum": optimum, "proof_s": proof_s,
        "annealing_vs_bound": _above_bound(ann.objective, max(bound or 0.0, optimum or 0.0)),
        "status": model.status,
        "first_s": model.extra.get("first_solution_time"),
        "best_s": model.extra.get("best_found_time"), "final_s": model.extra.get("final_time"),
        "annealing_s": round(ann.extra["wall_s"], 3),
        "links_negotiated": negotiated.wirelength if negotiated.success else None,
        "links_model": routed.wirelength if routed.success else None,
        "route_gap": routed.extra.get("gap"),
        "load_negotiated": neg_check.max_link_load, "load_model": model_check.max_link_load,
        "route_s": round(route_s, 3), "checked": "ok" if ok else "REJECTED",
    }


def placer_runs(graph, fabric: RduFabric, order: list[str], backend: str, budget: float,
                seeds: Iterable[int]) -> tuple[list, list]:
    """Annealing and model runs (``budget`` s each), alternating seed by seed so that both
    see the same machine load; annealing runs record their wall time in ``extra["wall_s"]``.
    The model runs without patience: its LNS uses the whole budget."""
    annealing, models = [], []
    for seed in seeds:
        settings = SolveSettings(backend=backend, time_limit=budget, seed=seed)
        started = time.perf_counter()
        annealing.append(PLACERS["annealing"](graph, fabric, order, settings))
        annealing[-1].extra["wall_s"] = time.perf_counter() - started
        models.append(PLACERS["model"](graph, fabric, order, settings,
                                       search=PlacementSearch(patience=None)))
    return annealing, models


def proven_optimum(graph, fabric: RduFabric, runs: list) -> tuple[float | None, float | None]:
    """The optimum of a section small enough for the site model, proved within
    PROOF_SECONDS (hinted with the best of ``runs``), and the seconds it took; (None, None)
    for larger sections or when the proof does not finish."""
    problem = placement_problem(graph, fabric)
    if not site_model_fits(problem):
        return None, None
    started = time.perf_counter()
    best = min(runs, key=lambda r: r.objective)
    start = {n: problem.sites.index[s] for n, s in best.placement.items()}
    index, status, _ = solve_site_model(problem, start, Budget(PROOF_SECONDS))
    if status != "OPTIMAL":
        return None, None
    cost = problem_cost(problem, {n: problem.sites.ids[s] for n, s in index.items()})
    return cost, round(time.perf_counter() - started, 1)


def above_optimum(runs: list, optimum: float | None) -> bool:
    """False when a run beat a proven optimum (a bug in the placer or in the proof)."""
    return optimum is None or all(r.objective >= optimum - 1e-9 for r in runs)


def _median_run(runs: list):
    """The run with the median objective (the lower middle one for an even count)."""
    return sorted(runs, key=lambda r: r.objective)[(len(runs) - 1) // 2]


def _spread(runs: list) -> str:
    costs = [r.objective for r in runs]
    return f"{min(costs):.4g}–{max(costs):.4g}"


def _above_bound(cost: float, bound: float | None) -> float | None:
    """``1 - bound / cost``: how far ``cost`` may still be above the optimum (below 5 %,
    no placement can be 5 % better)."""
    if bound is None or cost <= 0:
        return None
    return round(max(0.0, 1 - bound / cost), 4)


def _entries(quick: bool) -> list[Entry]:
    budget = QUICK_BUDGET if quick else BUDGET
    seeds = QUICK_SEEDS if quick else SEEDS
    have_graphs = (graphs_root() / "msr-dnn" / "OperatorGraphs").is_dir()
    entries = []
    for label, kind, params in INSTANCES:
        if quick and label not in QUICK_INSTANCES:
            continue
        for backend in (("cp-sat",) if quick else BACKENDS):
            skip = None if kind == "gen" or have_graphs else "msr-dnn graphs are absent"
            entries.append(Entry(f"{label} on {params['preset']} ({backend})",
                                 "benchmarks.suites.placement:compare_placers",
                                 {"kind": kind, "params": params, "backend": backend,
                                  "budget": budget, "seeds": seeds},
                                 timeout=(2 * len(seeds) + 4) * budget + PROOF_SECONDS + 60,
                                 fixed={"instance": label, "preset": params["preset"],
                                        "backend": backend}, skip=skip))
    return entries


SUITE = Suite(
    name="placement",
    title="Placement: greedy vs simulated annealing vs the exact model (and routing)",
    columns=COLUMNS,
    entries=_entries,
    notes=(f"cost = bandwidth-weighted switch-hop distance (WL) + congestion (pairs over each "
           f"switch-mesh cut's channels, weighted by the mean pair bandwidth; "
           f"formulations.placement.congestion), the objective of all three placers. Annealing "
           f"and model get the same budget ({BUDGET:g} s; --quick {QUICK_BUDGET:g} s) and run with "
           f"seeds {', '.join(map(str, SEEDS))} (--quick: {QUICK_SEEDS[0]}); the costs are the "
           "median runs', 'min–max' their spread, 'model wins' the seeds where the model beat "
           "the annealer of the same seed, and the median model run is routed. "
           "'model vs X' = 1 - model/X. bound = the exact model's bound, or the star bound "
           "(formulations.placement.bound) when LNS ran; gap = 1 - bound/model; 'optimum "
           f"(proved)' = the optimum proven by the site model "
           "(formulations.placement.site_model, one "
           f"worker, up to {PROOF_SECONDS:g} s, outside the budget) for sections of at most "
           f"{SITE_MODEL_NODES} nodes; 'annealing vs bound' = 1 - (optimum or bound)/annealing "
           "(below 5 % the 5 % "
           "target is out of reach). 'final "
           "found' = when the model found its final placement; first = the greedy warm start. "
           "Routes: the model placement routed by PathFinder (negotiated) and by the routing "
           "model; max load = highest load/capacity. Times are wall clock on a shared 2-core "
           "machine: the annealer and the model share it with other jobs."),
)
