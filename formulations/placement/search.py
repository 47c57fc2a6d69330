"""The placement model's driver: warm start, then the exact model, the site model or LNS.

Scope
-----
:func:`place_model` places one section:

1. the nodes without any pair (they cost nothing anywhere) leave the problem and take
   the leftover sites at the end (:func:`fill_idle`, a bipartite matching), so the
   search moves fewer nodes among free sites instead of swapping through a full chip;
2. the sorted-order greedy placement (:mod:`formulations.placement.greedy`), annealed
   congestion-blind for a share of the budget (:func:`anneal_share_for`; the anneals'
   range window stops at a same-kind neighbour's step,
   :func:`~formulations.placement.annealing.same_kind_step`);
3. the section solved whole when small: on CP-SAT with at most
   :data:`~formulations.placement.site_model.SITE_MODEL_NODES` nodes by the site model
   (:mod:`formulations.placement.site_model`), otherwise by the exact model of
   :mod:`formulations.placement.model` when it has at most :data:`MAX_EXACT_VARS`
   assignment variables (with a bound and a gap);
4. larger sections by the large-neighbourhood search of :mod:`formulations.placement.lns`,
   whose gap comes from the star bound of :mod:`formulations.placement.bound`.

Caveats
-------
* The answer is never worse than its warm start (greedy, then a congestion-blind anneal):
  a solver answer that is worse is discarded; the reported objective is always the true
  cost (:func:`~formulations.placement.problem.problem_cost`) of the returned placement.
* The site penalty is the routing model's feedback (sites next to over-used links pay per
  unit of node bandwidth); the cut congestion term is the placement's own estimate of
  routing demand.
* The star bound of LNS runs is valid but weak where the cost comes from cycles rather
  than fan-out: a large gap there says little about the placement.
"""

from __future__ import annotations

import time
from dataclasses import replace

import numpy as np

from formulations.placement.annealing import anneal_to_budget, same_kind_step
from formulations.placement.bound import star_bound
from formulations.placement.candidates import CandidatePool
from formulations.placement.greedy import greedy_place
from formulations.placement.lns import lns
from formulations.placement.model import (build_placement_model, candidate_sites,
                                          decode_placement, export_model, hint_placement)
from formulations.placement.problem import (PlacementOutcome, PlacementProblem, check_capacity,
                                            cost_terms, placement_problem, problem_cost)
from formulations.placement.settings import PlacementSearch
from formulations.placement.site_model import site_model_fits, solve_site_model
from formulations.solver import Budget, SolveSettings, was_cut_short, work_options
from hardware import RduFabric
from model.graph import Graph

__all__ = ["place_model", "fill_idle", "anneal_share_for", "MAX_EXACT_VARS", "ONE_SCALE_SHARE",
           "SPREAD_SHARE", "ONE_SCALE_CV"]

#: The fewest planned seconds the solver part (exact model, site model or LNS) gets.
MIN_SOLVE_SECONDS = 0.05
#: A section whose full model has more assignment variables than this is improved by LNS.
MAX_EXACT_VARS = 800
#: Share of the time the model's warm start anneals when the pair weights share one scale
#: (coefficient of variation below ONE_SCALE_CV), and otherwise.
ONE_SCALE_SHARE, SPREAD_SHARE, ONE_SCALE_CV = 0.75, 0.5, 1.0


def place_model(graph: Graph, fabric: RduFabric, order: list[str], settings: SolveSettings, *,
                site_penalty: dict[str, float] | None = None,
                search: PlacementSearch | None = None,
                keep: CandidatePool | None = None) -> PlacementOutcome:
    """Exact placement model, warm-started by the greedy; LNS when too big to prove.

    Parameters
    ----------
    graph, fabric, order : the section, the chip and the sorter's order (for the warm start).
    settings : ``backend`` (a LinearModel backend: ``cp-sat``, ``highs``, ``scip``, ...),
        ``time_limit`` and ``deadline`` (its :meth:`~formulations.solver.SolveSettings.budget`:
        planned seconds for the whole placement, warm anneals, exact solve or all LNS
        rounds, spent as counted work: moves, CP-SAT deterministic time, HiGHS nodes, LNS
        rounds; the run's deadline as the outer cap), ``seed`` (of the solver, the
        anneals and the LNS), ``export_dir`` (when set, the full model is written there as
        ``placement_<graph name>.mps``). Same settings and seed, same placement, unless
        the wall clock cuts a search short (``extra["cut_short"]``).
    site_penalty : site id -> extra cost per unit of node bandwidth (routing feedback).
    search : the search knobs (:class:`~formulations.placement.settings.PlacementSearch`:
        LNS window and patience, anneal share, cut share, idle nodes placed last).
    keep : when given, a :class:`~formulations.placement.candidates.CandidatePool` offered
        the placements the searches visit (the warm anneal's temperatures, the LNS's
        incumbents and kicks, the exact model's answer and its warm start), completed
        with the idle nodes at the end: the top-k a cost model ranks. Same work, same
        answer.

    Returns
    -------
    PlacementOutcome
        ``objective`` = weighted wirelength (plus penalty and congestion), ``bound`` and
        ``extra["gap"]``; ``extra`` also holds the warm start's cost and the times.

    Raises
    ------
    PlacementError
        When a unit kind has fewer sites than the section has nodes of that kind.

    Examples
    --------
    >>> from hardware import build_fabric, load_hardware
    >>> from model.graph import Graph, Node, Edge
    >>> g = Graph("t", [Node("a", unit="pcu"), Node("b", unit="pmu")], [Edge("a", "b")])
    >>> out = place_model(g, build_fabric(load_hardware("tiny")), ["a", "b"],
    ...                   SolveSettings(time_limit=5))
    >>> out.objective, out.status
    (0.0, 'OPTIMAL')
    """
    search = search or PlacementSearch()
    started = time.perf_counter()
    budget = settings.budget()
    problem = placement_problem(graph, fabric, site_penalty, search.cut_share)
    check_capacity(problem)
    idle = {n for n in problem.nodes if problem.degree[n] == 0}
    if not (search.drop_idle and idle and len(idle) < len(problem.nodes)):
        return _place_all(problem, graph, fabric, order, settings, search, started, budget,
                          keep)
    busy = graph.subgraph([n for n in graph.node_ids if n not in idle])
    busy_started = time.perf_counter()
    busy_problem = placement_problem(busy, fabric, site_penalty, search.cut_share)
    out = _place_all(busy_problem, busy, fabric, [n for n in order if n not in idle], settings,
                     search, busy_started, budget, keep)
    completed = fill_idle(problem, out.placement, sorted(idle))
    if keep is not None:
        keep.complete(lambda p: fill_idle(problem, p, sorted(idle)))
    if completed is not None:
        out.placement, out.extra["idle_nodes"] = completed, len(idle)
        return out
    # the leftover sites cannot take the idle nodes: everything again, on half the plan
    again = settings.with_time(max(0.5, 0.5 * settings.time_limit))
    return _place_all(problem, graph, fabric, order, again, search, time.perf_counter(),
                      again.budget(), keep)


def _place_all(problem: PlacementProblem, graph: Graph, fabric: RduFabric, order: list[str],
               settings: SolveSettings, search: PlacementSearch, started: float, budget: Budget,
               keep: CandidatePool | None = None) -> PlacementOutcome:
    """Every node of ``problem``: the annealed greedy, then the site model, the exact
    model or the LNS (``started``: when this placement's clock started, for the reported
    times). ``budget`` (planned ``settings.time_limit``) is spent as work: the anneal's
    share of it in moves, the rest in solver work or LNS rounds; ``extra["cut_short"]``
    when the wall clock stopped a search first."""
    current = greedy_place(graph, fabric, order)
    greedy_cost = problem_cost(problem, current)
    extra = {"greedy_cost": greedy_cost,
             "first_solution_time": round(time.perf_counter() - started, 4)}
    candidates = candidate_sites(problem, problem.nodes)
    n_vars = sum(len(c) for c in candidates.values())
    extra["star_bound"] = star_bound(problem)
    site_model = settings.backend == "cp-sat" and site_model_fits(problem)
    exact = n_vars <= MAX_EXACT_VARS or site_model
    share = anneal_share_for(problem) if search.anneal_share is None else search.anneal_share
    annealed = 0.0
    if greedy_cost > extra["star_bound"] and share > 0:
        annealed = share * settings.time_limit
        current, extra["anneal_run_time"], cut = _warm_anneal(
            problem, fabric, current, budget.share(annealed), settings.seed,
            fill=not exact, keep=keep)
        if cut:
            extra["cut_short"] = True
    start_cost = problem_cost(problem, current)
    extra["best_found_time"] = round(time.perf_counter() - started, 4)
    index = problem.to_indices(current)
    extra |= {"warm_start_cost": start_cost, "model_vars": n_vars}
    if start_cost <= extra["star_bound"] + 1e-12 and not settings.export_dir:
        extra |= {"final_time": round(time.perf_counter() - started, 4), "gap": 0.0}
        extra |= _terms(problem, index)
        return PlacementOutcome(current, "placement model (warm start meets the bound)",
                                start_cost, start_cost, "OPTIMAL", settings.backend, extra)
    if (exact and not site_model) or settings.export_dir:
        model, x = build_placement_model(problem, problem.nodes, candidates, {})
        export_model(model, settings.export_dir, f"placement_{graph.name}")
    # the plan left after the anneal (work counted, not the clock: a first anneal that
    # stopped early leaves the rest of its share unused)
    left = max(MIN_SOLVE_SECONDS, settings.time_limit - (annealed if not exact else
                                                         extra.get("anneal_run_time", 0.0)))
    solve = Budget(left, parent=budget)    # may pass what is left: MIN_SOLVE_SECONDS
    if site_model:
        found, status, bound, cut = solve_site_model(problem, index, solve, settings.seed,
                                                     with_cut=True)
        if cut:
            extra["cut_short"] = True
        return _exact_outcome(problem, index, start_cost, found, status, bound, "cp-sat",
                              "placement site model", started, extra, keep)
    if exact:
        hint_placement(model, x, index, problem.nodes)
        result = model.solve(backend=settings.backend, time_limit=solve.wall_left(),
                             seed=settings.seed, threads=1,
                             options=work_options(settings.backend, left))
        if was_cut_short(result):
            extra["cut_short"] = True
        found, bound = None, None
        if result.has_solution:
            found = decode_placement(result, x, problem.nodes)
            bound = None if result.bound is None else max(0.0, result.bound * problem.quantum)
        extra["hint"] = result.hint_status
        return _exact_outcome(problem, index, start_cost, found, result.status.name, bound,
                              result.backend, "placement model", started, extra, keep)
    return _lns(problem, fabric, index, start_cost, settings, solve, search, started, extra,
                keep)


def anneal_share_for(problem: PlacementProblem) -> float:
    """How much of the budget annealing should get before the LNS takes over.

    Annealing prices every pair at one temperature, so it does best when the pair weights
    share one scale; when they span orders of magnitude (DNN sections: coefficient of
    variation 1.6-5, against about 0.55 on generated sections) the light pairs freeze while
    the heavy ones still move, and exact windows place them better. Measured at 10 s over
    three seeds: 3/4 of the time beat 1/2 on 7 of 8 generated rows; on DNN sections 1/2 did
    better.
    """
    weights = np.array([w for _, _, w in problem.pairs])
    if len(weights) < 2 or weights.mean() <= 0:
        return SPREAD_SHARE
    one_scale = weights.std() / weights.mean() < ONE_SCALE_CV
    return ONE_SCALE_SHARE if one_scale else SPREAD_SHARE


def fill_idle(problem: PlacementProblem, placement: dict[str, str], idle: list[str]
              ) -> dict[str, str] | None:
    """``placement`` completed with the ``idle`` nodes on free compatible sites (a maximum
    bipartite matching, found in a fixed order: same input, same sites); None when the free
    sites cannot take them all."""
    used = {problem.sites.index[s] for s in placement.values()}
    free = [k for k in range(len(problem.sites.ids)) if k not in used]
    options = {n: [k for k in free if problem.hosts[problem.units[n]][k]] for n in idle}
    matching = _match(idle, options)
    if matching is None:
        return None
    return placement | {n: problem.sites.ids[matching[n]] for n in idle}


def _match(nodes: list[str], options: dict[str, list[int]]) -> dict[str, int] | None:
    """A matching of every node to one of its ``options`` (sites), or None: each node in
    turn takes its first free option, else the shortest alternating path (breadth first, in
    list order) frees one. Deterministic: no set or hash order decides anything."""
    owner: dict[int, str] = {}
    site_of: dict[str, int] = {}
    for n in nodes:
        spare = next((k for k in options[n] if k not in owner), None)
        if spare is not None:
            owner[spare], site_of[n] = n, spare
            continue
        parent: dict[int, tuple[str, int | None]] = {}   # site -> (node reaching it, node's site)
        queue, head, end = [n], 0, None
        while head < len(queue) and end is None:
            m = queue[head]
            head += 1
            for k in options[m]:
                if k in parent:
                    continue
                parent[k] = (m, site_of.get(m))
                if k not in owner:
                    end = k
                    break
                queue.append(owner[k])
        if end is None:
            return None
        k = end
        while True:                       # flip the path back to n
            m, previous = parent[k]
            owner[k], site_of[m] = m, k
            if m == n:
                break
            k = previous
    return site_of


def _warm_anneal(problem: PlacementProblem, fabric: RduFabric, start: dict[str, str],
                 budget: Budget, seed: int, fill: bool = True,
                 keep: CandidatePool | None = None) -> tuple[dict[str, str], float, bool]:
    """A second warm start: :func:`~formulations.placement.annealing.anneal_to_budget` from
    ``start`` spending ``budget`` as moves (its first anneal cools within them: a large
    section gets fewer moves per temperature); returns the result, the planned seconds one
    anneal took (the LNS gives its annealing slices at least that long) and whether the
    wall clock cut it short.

    The anneals see the wirelength and penalty only (a faster surrogate: the congestion
    term is 0 at good placements; the model and its LNS see it); the caller gets whichever
    of ``start`` and the result costs least. Without ``fill`` only the first anneal runs
    (a section small enough for the exact model needs the time for the proof). The range
    limit stops at a same-kind neighbour's step
    (:func:`~formulations.placement.annealing.same_kind_step`). ``keep`` is offered the
    anneals' states at their light cost.
    """
    light = replace(problem, congestion_weight=0.0)
    best, _, stats = anneal_to_budget(light, fabric, start, budget, seed=seed, fill=fill,
                                      range_floor=same_kind_step(problem, fabric), keep=keep)
    better = problem_cost(problem, best) < problem_cost(problem, start)
    return (best if better else start), stats["one_run"], bool(stats.get("cut_short"))


def _exact_outcome(problem, index, start_cost, found, solver_status, bound, backend, method,
                   started, extra, keep=None) -> PlacementOutcome:
    """The outcome of a whole-section solve: its placement ``found`` unless the warm start
    ``index`` is better, proved optimal when the solver or the star bound says so (both
    offered to ``keep``)."""
    if keep is not None:
        keep(problem.to_site_ids(index), start_cost)
        if found is not None:
            keep(problem.to_site_ids(found), problem_cost(problem, problem.to_site_ids(found)))
    placed = dict(index)
    if found is not None and problem_cost(problem, problem.to_site_ids(found)) <= start_cost + 1e-9:
        placed = found
    cost = problem_cost(problem, problem.to_site_ids(placed))
    bound = max(bound or 0.0, extra.get("star_bound", 0.0))
    status = "FEASIBLE"
    if solver_status == "OPTIMAL" or cost <= bound + 1e-12:
        bound, status = cost, "OPTIMAL"
    if placed != index:
        extra["best_found_time"] = round(time.perf_counter() - started, 4)
    extra |= {"final_time": round(time.perf_counter() - started, 4),
              "gap": _gap(cost, bound), "solver_status": solver_status}
    extra |= _terms(problem, placed)
    return PlacementOutcome(problem.to_site_ids(placed), f"{method} ({backend})", cost, bound,
                            status, backend, extra)


def _lns(problem, fabric: RduFabric, index, cost, settings: SolveSettings, budget: Budget,
         search: PlacementSearch, started, extra, keep=None) -> PlacementOutcome:
    """Large-neighbourhood search (:mod:`formulations.placement.lns`) with the star bound,
    spending ``budget``."""
    index, cost, stats = lns(problem, fabric, index, cost, budget, backend=settings.backend,
                             seed=settings.seed, window=search.window, patience=search.patience,
                             one_anneal=extra.get("anneal_run_time", 0), keep=keep)
    bound = extra.get("star_bound", 0.0)
    if "last_improvement" in stats:
        extra["best_found_time"] = round(stats.pop("last_improvement") - started, 4)
    if stats.pop("cut_short", False):
        extra["cut_short"] = True
    extra |= stats | {"final_time": round(time.perf_counter() - started, 4),
                      "gap": _gap(cost, bound)}
    extra |= _terms(problem, index)
    status = "OPTIMAL" if cost <= bound + 1e-12 else "FEASIBLE"
    return PlacementOutcome(problem.to_site_ids(index), f"placement model LNS ({settings.backend})",
                            cost, bound, status, settings.backend, extra)


def _gap(cost: float, bound: float | None) -> float | None:
    """Relative gap ``(cost - bound) / cost`` (0 for a zero cost)."""
    if bound is None:
        return None
    return 0.0 if cost <= 0 else round(max(0.0, (cost - bound) / cost), 6)


def _terms(problem, index: dict[str, int]) -> dict[str, float]:
    return {k: round(v, 9) for k, v in cost_terms(problem, problem.to_site_ids(index)).items()}
