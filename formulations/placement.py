"""Placement of a section's nodes onto unit sites: greedy, exact model, LNS.

Scope
-----
* :func:`greedy_place` -- the sorted-order greedy placer, the claim-level
  placement of source 000 (nodes assigned one by one *in the order of the
  sorter's output*): each node goes to the free site that can host its unit
  kind and minimises the bandwidth-weighted switch-hop distance to its already
  placed neighbours; a node with no placed neighbour goes to the free site
  nearest the centre of the chip. Ties go to the lower site index. It is the
  warm start and the baseline of the model.
* :func:`place_model` -- the exact placement model (issue 5), the same model on
  CP-SAT (``place_cpsat``) or a MILP solver (``place_milp``, exportable to
  ``.mps``). Data: sites with their switch rectangles, node pairs weighted by
  summed bandwidth (a net counted once per sink), an optional per-site
  congestion penalty. Variables: ``x[n,s]`` (node on site) and per pair and
  axis a distance ``d``. Constraints: ``assignment`` (one site per node, only
  type-compatible sites: PCU, PMU, AGCU for off-chip loads and stores),
  ``site`` (at most one node per site), ``distance`` (``d >= lo_b - hi_a`` and
  ``d >= lo_a - hi_b``, the closed form of ``fabric.distance``). Objective:
  weighted distance plus penalty, in integer units. Sections with at most
  :data:`MAX_EXACT_VARS` assignment variables are solved whole (with a bound
  and a gap); larger ones by a large-neighbourhood search that re-solves
  windows of :data:`window` nodes (graph or grid neighbourhoods) with the rest
  fixed, until the time limit or :data:`PATIENCE` rounds without progress.
* :func:`placement_cost` / :func:`problem_cost` -- the shared cost.

Caveats
-------
* Weights are quantised so the heaviest pair weighs :data:`WEIGHT_SCALE` units;
  the model is exact for the quantised weights, and the reported objective is
  always the true cost of the returned placement. Bounds are in true units up
  to that rounding.
* The congestion term is the per-site penalty fed back by the routing model
  (sites next to over-used links pay per unit of node bandwidth); a cut-demand
  term (demand per switch-mesh cut against its capacity) is not in the model.
* LNS gives no bound (``bound`` None, ``gap`` None).
* The models' answer is never worse than their warm start (greedy, then a
  short anneal): a solver answer that is worse is discarded.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from model.graph import Graph

__all__ = ["PlacementError", "PlacementOutcome", "PlacementProblem", "PLACERS", "greedy_place",
           "place_greedy", "placement_cost", "placement_problem", "problem_cost",
           "build_placement_model", "place_model", "place_milp", "place_cpsat", "WEIGHT_SCALE"]


class PlacementError(Exception):
    """No free site can host a node; ``unit`` names the kind that ran out."""

    def __init__(self, node: str, unit: str, needed: int, available: int):
        self.node, self.unit, self.needed, self.available = node, unit, needed, available
        super().__init__(f'no free {unit.upper()} site for node "{node}": the section needs '
                         f"{needed} {unit.upper()} sites, the chip has {available}")


@dataclass
class PlacementOutcome:
    """One placer's answer: node -> site id, and how good it is.

    ``objective`` is the bandwidth-weighted switch-hop distance
    (:func:`placement_cost`) unless the placer says otherwise in ``extra``;
    ``bound`` is a proven lower bound when a model gives one.
    """

    placement: dict[str, str]
    method: str
    objective: float
    bound: float | None = None
    status: str = "FEASIBLE"
    backend: str | None = None
    extra: dict = field(default_factory=dict)


@dataclass(frozen=True)
class _Sites:
    ids: list[str]
    index: dict[str, int]
    dist: np.ndarray          # switch hops between sites
    centre: np.ndarray        # hops from the chip's centre, for seeding


def _sites(fabric) -> _Sites:
    ids = [s.id for s in fabric.sites]
    dist = fabric.distance_matrix(ids).astype(float)
    xy = np.array([(fabric.site(s).x, fabric.site(s).y) for s in ids])
    centre = np.abs(xy - xy.mean(axis=0)).sum(axis=1)
    return _Sites(ids, {s: k for k, s in enumerate(ids)}, dist, centre)


def _neighbour_weights(graph: Graph) -> dict[str, dict[str, float]]:
    """Per node, the bandwidth to each neighbour (parallel edges summed, capped at 1)."""
    weights: dict[str, dict[str, float]] = {n: {} for n in graph.node_ids}
    for e in graph.edges:
        if e.src == e.dst:
            continue
        for a, b in ((e.src, e.dst), (e.dst, e.src)):
            weights[a][b] = min(1.0, weights[a].get(b, 0.0) + e.bandwidth)
    return weights


def greedy_place(graph: Graph, fabric, order: list[str]) -> dict[str, str]:
    """Place ``graph``'s nodes in ``order`` on ``fabric``; returns node -> site id.

    Raises
    ------
    PlacementError
        When a node's unit kind has no free site left.
    """
    sites = _sites(fabric)
    hosts = {unit: np.array([fabric.can_host(s, unit) for s in sites.ids])
             for unit in ("pcu", "pmu", "agcu", "any")}
    free = np.ones(len(sites.ids), dtype=bool)
    weights = _neighbour_weights(graph)
    placed: dict[str, int] = {}
    for node_id in order:
        unit = graph.node(node_id).unit
        candidates = free & hosts[unit]
        if not candidates.any():
            needed = sum(graph.node(n).unit == unit for n in graph.node_ids)
            raise PlacementError(node_id, unit, needed, int(hosts[unit].sum()))
        cost = np.zeros(len(sites.ids))
        for nbr, w in weights[node_id].items():
            if nbr in placed:
                cost += w * sites.dist[placed[nbr]]
        if not any(n in placed for n in weights[node_id]):
            cost = sites.centre.copy()
        cost[~candidates] = np.inf
        choice = int(np.argmin(cost))
        placed[node_id] = choice
        free[choice] = False
    return {n: sites.ids[k] for n, k in placed.items()}


def placement_cost(graph: Graph, fabric, placement: dict[str, str]) -> float:
    """Bandwidth-weighted switch-hop distance summed over all edges."""
    sites = _sites(fabric)
    return float(sum(e.bandwidth * sites.dist[sites.index[placement[e.src]],
                                              sites.index[placement[e.dst]]]
                     for e in graph.edges))


def place_greedy(graph: Graph, fabric, order: list[str], **_options) -> PlacementOutcome:
    """The registry form of :func:`greedy_place` (solver options are ignored)."""
    placement = greedy_place(graph, fabric, order)
    return PlacementOutcome(placement, "sorted-order greedy",
                            placement_cost(graph, fabric, placement))


# =============================================================================================
# The exact placement model (CP-SAT or MILP) and its large-neighbourhood search
# =============================================================================================

#: Inside the models, weights are integers: the heaviest pair weighs this much (CP-SAT needs
#: integers; the msr-dnn bandwidths span 1e-6..1, so a fixed scale would zero them).
WEIGHT_SCALE = 1000
#: A section whose full model has more assignment variables than this is improved by LNS.
MAX_EXACT_VARS = 800
#: LNS stops after this many rounds without a relative improvement of MIN_IMPROVEMENT.
PATIENCE = 20
MIN_IMPROVEMENT = 1e-3
#: Seconds one LNS window may take (a window the solver cannot settle quickly is skipped).
WINDOW_SECONDS = 0.5


@dataclass(frozen=True)
class PlacementProblem:
    """The data block of the placement model for one section.

    ``pairs`` are undirected node pairs with their summed bandwidth (all edges between
    them, both directions: a net counts once per sink); ``rect`` holds each site's
    switch rectangle ``(row_lo, row_hi, col_lo, col_hi)`` so that the switch-hop
    distance is ``gap(rows) + gap(cols)`` (the closed form of ``fabric.distance``);
    ``penalty`` is a per-site cost added per unit of node degree (congestion feedback).
    """

    nodes: list[str]
    units: dict[str, str]
    sites: _Sites
    rect: np.ndarray
    hosts: dict[str, np.ndarray]
    pairs: list[tuple[str, str, float]]
    penalty: np.ndarray
    degree: dict[str, float]

    @property
    def quantum(self) -> float:
        """The cost of one integer unit of the model's objective."""
        heaviest = max([w for _, _, w in self.pairs] + [float(self.penalty.max(initial=0.0))])
        return heaviest / WEIGHT_SCALE if heaviest > 0 else 1.0

    def integer_weight(self, cost: float) -> int:
        """``cost`` in the model's integer units (a positive cost never rounds to zero)."""
        return max(1, round(cost / self.quantum)) if cost > 0 else 0


def placement_problem(graph: Graph, fabric, site_penalty: dict[str, float] | None = None
                      ) -> PlacementProblem:
    """Collect the data of the placement model (sites, distances, weighted pairs)."""
    sites = _sites(fabric)
    rect = np.array([_switch_rect(fabric, s) for s in sites.ids], dtype=np.int64)
    hosts = {u: np.array([fabric.can_host(s, u) for s in sites.ids])
             for u in ("pcu", "pmu", "agcu", "any")}
    pair_w: dict[tuple[str, str], float] = {}
    for e in graph.edges:
        if e.src != e.dst:
            key = (min(e.src, e.dst), max(e.src, e.dst))
            pair_w[key] = pair_w.get(key, 0.0) + e.bandwidth
    penalty = np.zeros(len(sites.ids))
    for site, value in (site_penalty or {}).items():
        if site in sites.index:
            penalty[sites.index[site]] = value
    degree = {n: 0.0 for n in graph.node_ids}
    for (a, b), w in pair_w.items():
        degree[a] += w
        degree[b] += w
    return PlacementProblem(list(graph.node_ids), {n.id: n.unit for n in graph.nodes}, sites,
                            rect, hosts, sorted((a, b, w) for (a, b), w in pair_w.items()),
                            penalty, degree)


def _switch_rect(fabric, site_id: str) -> tuple[int, int, int, int]:
    pos = [fabric.graph.nodes[s]["pos"] for s in fabric.attached_switches(site_id)]
    cols, rows = [int(p[0]) for p in pos], [int(p[1]) for p in pos]
    return min(rows), max(rows), min(cols), max(cols)


def problem_cost(problem: PlacementProblem, placement: dict[str, str]) -> float:
    """Weighted wirelength plus the site penalty of ``placement`` (the models' objective)."""
    idx = problem.sites.index
    wire = sum(w * problem.sites.dist[idx[placement[a]], idx[placement[b]]]
               for a, b, w in problem.pairs)
    return float(wire + sum(problem.penalty[idx[placement[n]]] * problem.degree[n]
                            for n in problem.nodes))


def _check_capacity(problem: PlacementProblem) -> None:
    """Raise PlacementError in user terms when a unit kind has fewer sites than nodes."""
    for unit in ("agcu", "pcu", "pmu", "any"):
        kinds = ("pcu", "pmu", "any") if unit == "any" else (unit,)
        needing = [n for n in problem.nodes if problem.units[n] in kinds]
        available = int(np.sum(np.any([problem.hosts[k] for k in kinds], axis=0)))
        if len(needing) > available:
            raise PlacementError(needing[-1], unit, len(needing), available)


def build_placement_model(problem: PlacementProblem, free: list[str],
                          candidates: dict[str, list[int]], fixed: dict[str, int]):
    """The placement MILP for the ``free`` nodes, the others ``fixed`` (node -> site index).

    data → variables (``x[n,s]`` one per candidate site, ``dr``/``dc`` per free pair) →
    constraints (families ``assignment``, ``site``, ``distance``) → objective
    (scaled weighted distance + penalty).  Returns ``(model, x)``.
    """
    from formulations.solver import LinearModel
    model = LinearModel("placement")
    x = {(n, s): model.add_binary(f"x_{n}@{problem.sites.ids[s]}".replace(" ", "_"))
         for n in free for s in candidates[n]}
    _add_assignment(model, x, free, candidates)
    objective = _free_fixed_terms(problem, x, free, candidates, fixed)
    objective += _pair_distance_terms(model, problem, x, free, candidates)
    from formulations.solver import quicksum
    model.minimize(quicksum(objective))
    return model, x


def _add_assignment(model, x, free, candidates) -> None:
    for n in free:
        model.add_row([x[n, s] for s in candidates[n]], [1.0] * len(candidates[n]), 1, 1,
                      family="assignment")
    by_site: dict[int, list] = {}
    for (n, s), var in x.items():
        by_site.setdefault(s, []).append(var)
    for s, users in sorted(by_site.items()):
        if len(users) > 1:
            model.add_row(users, [1.0] * len(users), -np.inf, 1, family="site")


def _free_fixed_terms(problem, x, free, candidates, fixed) -> list:
    """Linear costs: a free node's pairs with fixed nodes, and its site penalty."""
    free_set = set(free)
    weight = {n: {} for n in free}
    for a, b, w in problem.pairs:
        if a in free_set and b in fixed:
            weight[a][fixed[b]] = weight[a].get(fixed[b], 0.0) + w
        elif b in free_set and a in fixed:
            weight[b][fixed[a]] = weight[b].get(fixed[a], 0.0) + w
    terms = []
    for n in free:
        for s in candidates[n]:
            cost = sum(w * problem.sites.dist[s, t] for t, w in weight[n].items())
            cost += problem.penalty[s] * problem.degree[n]
            coef = problem.integer_weight(cost)
            if coef:
                terms.append(coef * x[n, s])
    return terms


def _pair_distance_terms(model, problem, x, free, candidates) -> list:
    """``d ≥ lo_b - hi_a`` and ``d ≥ lo_a - hi_b`` per axis for every free pair."""
    free_set = set(free)
    terms = []
    for k, (a, b, w) in enumerate(problem.pairs):
        if a not in free_set or b not in free_set:
            continue
        coef = problem.integer_weight(w)
        for axis, (lo, hi) in enumerate(((0, 1), (2, 3))):
            span = int(problem.rect[:, hi].max())
            d = model.add_var(f"d{axis}_{k}", 0, span, integer=True)
            for p, q in ((a, b), (b, a)):
                vars_ = [d] + [x[q, s] for s in candidates[q]] + [x[p, s] for s in candidates[p]]
                coefs = ([1.0] + [-float(problem.rect[s, lo]) for s in candidates[q]]
                         + [float(problem.rect[s, hi]) for s in candidates[p]])
                model.add_row(vars_, coefs, 0, np.inf, family="distance")
            if coef:
                terms.append(coef * d)
    return terms


def _decode(result, x, free) -> dict[str, int]:
    chosen = {}
    for (n, s), var in x.items():
        if result.value(var, 0.0) > 0.5:
            chosen[n] = s
    missing = [n for n in free if n not in chosen]
    if missing:
        raise RuntimeError(f"placement model returned no site for {missing[:3]}")
    return chosen


def _hint(model, x, placement: dict[str, int], free) -> None:
    model.set_hint({var: float(placement.get(n) == s) for (n, s), var in x.items()})


def _all_candidates(problem: PlacementProblem, nodes) -> dict[str, list[int]]:
    return {n: [int(s) for s in np.flatnonzero(problem.hosts[problem.units[n]])] for n in nodes}


def _export(model, export_dir, name: str) -> None:
    """Write ``model`` as ``<name>.mps`` (name made file-safe: one file per section)."""
    if export_dir:
        import re
        from pathlib import Path
        Path(export_dir).mkdir(parents=True, exist_ok=True)
        model.write_mps(str(Path(export_dir) / f"{re.sub(r'[^A-Za-z0-9_.-]', '_', name)}.mps"))


def place_model(graph: Graph, fabric, order: list[str], *, backend: str = "cp-sat",
                time_limit: float = 10.0, seed: int = 0, export_dir: str | None = None,
                site_penalty: dict[str, float] | None = None, start: dict[str, str] | None = None,
                window: int = 8, anneal_share: float = 0.25, patience: int | None = PATIENCE,
                **_options) -> PlacementOutcome:
    """Exact placement model, warm-started by the greedy; LNS when too big to prove.

    Parameters
    ----------
    graph, fabric, order : the section, the chip and the sorter's order (for the warm start).
    backend : a LinearModel backend (``cp-sat``, ``highs``, ``scip``, ...).
    time_limit : seconds for the whole placement (exact solve or all LNS rounds).
    seed : seed of the solver and of the LNS neighbourhood choice.
    export_dir : when set, the full model is written there as ``placement_<graph name>.mps``.
    site_penalty : site id -> extra cost per unit of node bandwidth (routing feedback).
    start : a placement to start from instead of the greedy one.
    window : nodes re-optimised together per LNS round.
    patience : the LNS stops after this many rounds without a 0.1 % improvement;
        None = never stop early: anneal from the LNS's local optimum (keeping it only
        when better) and go on until ``time_limit``.
    anneal_share : at most this share of ``time_limit`` is spent annealing the greedy
        placement (one VPR run, which usually stops earlier) before the model starts
        from the better of the two; 0 = straight from the greedy.

    Returns
    -------
    PlacementOutcome
        ``objective`` = weighted wirelength (plus penalty), ``bound`` and ``extra["gap"]``
        when the exact model ran; ``extra`` also holds the warm start's cost and the times.

    Raises
    ------
    PlacementError
        When a unit kind has fewer sites than the section has nodes of that kind.

    Examples
    --------
    >>> from hardware import build_fabric, load_hardware
    >>> from model.graph import Graph, Node, Edge
    >>> g = Graph("t", [Node("a", unit="pcu"), Node("b", unit="pmu")], [Edge("a", "b")])
    >>> out = place_model(g, build_fabric(load_hardware("tiny")), ["a", "b"], time_limit=5)
    >>> out.objective, out.status
    (0.0, 'OPTIMAL')
    """
    import time as _time
    started = _time.perf_counter()
    problem = placement_problem(graph, fabric, site_penalty)
    _check_capacity(problem)
    current = start or greedy_place(graph, fabric, order)
    greedy_cost = problem_cost(problem, current)
    extra = {"greedy_cost": greedy_cost, "first_solution_time":
             round(_time.perf_counter() - started, 4)}
    candidates = _all_candidates(problem, problem.nodes)
    n_vars = sum(len(c) for c in candidates.values())
    if greedy_cost > 0 and anneal_share > 0:
        current = _annealed(problem, fabric, current, anneal_share * time_limit, seed)
    start_cost = problem_cost(problem, current)
    index = {n: problem.sites.index[s] for n, s in current.items()}
    extra |= {"warm_start_cost": start_cost, "model_vars": n_vars}
    if start_cost <= 0 and not export_dir:
        extra |= {"final_time": extra["first_solution_time"], "gap": 0.0}
        return PlacementOutcome(current, "placement model (warm start is optimal: cost 0)", 0.0,
                                0.0, "OPTIMAL", backend, extra)
    if n_vars <= MAX_EXACT_VARS or export_dir:
        model, x = build_placement_model(problem, problem.nodes, candidates, {})
        _export(model, export_dir, f"placement_{graph.name}")
    if n_vars <= MAX_EXACT_VARS:
        left = max(0.5, time_limit - (_time.perf_counter() - started))
        return _solve_exact(problem, model, x, index, start_cost, backend, left, seed,
                            started, extra)
    return _lns(problem, fabric, index, start_cost, backend, time_limit, seed, window, patience,
                started, extra)


def _annealed(problem, fabric, start: dict[str, str], seconds: float, seed: int
              ) -> dict[str, str]:
    """A second warm start: the annealer (VPR schedule, restarts) from ``start``."""
    from formulations.annealing import anneal_with_restarts
    best, _, _ = anneal_with_restarts(problem, fabric, start, time_limit=seconds, seed=seed)
    return best


def _solve_exact(problem, model, x, index, start_cost, backend, time_limit, seed, started,
                 extra) -> PlacementOutcome:
    import time as _time
    _hint(model, x, index, problem.nodes)
    result = model.solve(backend=backend, time_limit=time_limit, seed=seed, threads=1)
    placed = dict(index)
    status = "FEASIBLE"
    bound = None
    if result.has_solution:
        decoded = _decode(result, x, problem.nodes)
        if problem_cost(problem, _names(problem, decoded)) <= start_cost + 1e-9:
            placed = decoded
        status = result.status.name
        bound = None if result.bound is None else max(0.0, result.bound * problem.quantum)
    cost = problem_cost(problem, _names(problem, placed))
    if result.status.name == "OPTIMAL" or cost <= 0:
        bound = cost if result.gap == 0.0 or cost <= 0 else bound
    extra |= {"final_time": round(_time.perf_counter() - started, 4), "hint": result.hint_status,
              "gap": 0.0 if cost <= 0 else result.gap, "solver_status": result.status.name}
    return PlacementOutcome(_names(problem, placed), f"placement model ({result.backend})", cost,
                            bound, status, result.backend, extra)


def _names(problem, placed: dict[str, int]) -> dict[str, str]:
    return {n: problem.sites.ids[s] for n, s in placed.items()}


def _anneal_kick(problem, fabric, index, cost, seconds, seed) -> tuple[dict[str, int], float]:
    """Leave an LNS local optimum: anneal from it, keep the result only if better."""
    placed = _annealed(problem, fabric, _names(problem, index), seconds, seed)
    new_cost = problem_cost(problem, placed)
    if new_cost < cost - 1e-12:
        return {n: problem.sites.index[s] for n, s in placed.items()}, new_cost
    return index, cost


def _lns(problem, fabric, index, cost, backend, time_limit, seed, window, patience, started,
         extra) -> PlacementOutcome:
    """Large-neighbourhood search: re-solve a window of nodes exactly, the rest fixed."""
    import time as _time
    rng = np.random.default_rng(seed)
    neighbours = _pair_neighbours(problem)
    rounds = stale = improved = 0
    deadline = started + time_limit
    stop_when_stale = patience is not None
    patience = max(patience or PATIENCE, len(problem.nodes) // max(1, window))
    kicks = 0
    while _time.perf_counter() < deadline - 0.05 and cost > 0:
        if stale >= patience:
            if stop_when_stale:
                break
            index, cost = _anneal_kick(problem, fabric, index, cost,
                                       0.3 * (deadline - _time.perf_counter()), seed + rounds)
            stale, kicks = 0, kicks + 1
            continue
        rounds += 1
        size = min(window + 4, window + stale // 8)  # grow the window when stuck
        free = _pick_window(problem, index, neighbours, rng, size, rounds)
        new_index = _solve_window(problem, index, free, backend,
                                  min(WINDOW_SECONDS, deadline - _time.perf_counter()),
                                  seed + rounds)
        new_cost = problem_cost(problem, _names(problem, new_index)) if new_index else cost
        if new_index and new_cost < cost - 1e-9:
            significant = new_cost < cost * (1 - MIN_IMPROVEMENT)
            index, cost, improved = new_index, new_cost, improved + 1
            stale = 0 if significant else stale + 1
        else:
            stale += 1
    extra |= {"final_time": round(_time.perf_counter() - started, 4), "lns_rounds": rounds,
              "lns_improved": improved, "annealing_kicks": kicks, "gap": None}
    return PlacementOutcome(_names(problem, index), f"placement model LNS ({backend})", cost,
                            None, "FEASIBLE", backend, extra)


def _pair_neighbours(problem) -> dict[str, list[str]]:
    nbrs: dict[str, list[str]] = {n: [] for n in problem.nodes}
    for a, b, _ in problem.pairs:
        nbrs[a].append(b)
        nbrs[b].append(a)
    return nbrs


def _pick_window(problem, index, neighbours, rng, window, rounds) -> list[str]:
    """Alternate a graph neighbourhood (BFS from a random node) and a spatial one."""
    seed_node = problem.nodes[int(rng.integers(len(problem.nodes)))]
    if rounds % 2:
        chosen, frontier = [seed_node], [seed_node]
        while frontier and len(chosen) < window:
            nxt = []
            for n in frontier:
                for m in neighbours[n]:
                    if m not in chosen and len(chosen) < window:
                        chosen.append(m)
                        nxt.append(m)
            frontier = nxt
        return chosen
    d = problem.sites.dist[index[seed_node]]
    return sorted(problem.nodes, key=lambda n: (d[index[n]], n))[:window]


def _solve_window(problem, index, free, backend, time_limit, seed) -> dict[str, int] | None:
    """Re-place ``free`` on their sites plus the free sites near them; None if no answer."""
    if time_limit <= 0.05:
        return None
    fixed = {n: s for n, s in index.items() if n not in set(free)}
    taken = set(fixed.values())
    near = _near_sites(problem, [index[n] for n in free], taken)
    candidates = {n: [s for s in near if problem.hosts[problem.units[n]][s]] for n in free}
    model, x = build_placement_model(problem, free, candidates, fixed)
    _hint(model, x, index, free)
    result = model.solve(backend=backend, time_limit=time_limit, seed=seed, threads=1)
    if not result.has_solution:
        return None
    return fixed | _decode(result, x, free)


def _near_sites(problem, sites: list[int], taken: set[int], radius: int = 2) -> list[int]:
    d = problem.sites.dist[sites].min(axis=0)
    return [int(s) for s in np.flatnonzero(d <= radius) if int(s) not in taken]


def place_milp(graph: Graph, fabric, order: list[str], **options) -> PlacementOutcome:
    """:func:`place_model` on the MILP backend ``highs`` whatever ``backend`` says."""
    options["backend"] = "highs"
    return place_model(graph, fabric, order, **options)


def place_cpsat(graph: Graph, fabric, order: list[str], **options) -> PlacementOutcome:
    """:func:`place_model` on CP-SAT whatever ``backend`` says."""
    options["backend"] = "cp-sat"
    return place_model(graph, fabric, order, **options)


#: Placers by name, for ``--placer``: ``f(graph, fabric, order, *, backend, time_limit,
#: seed, export_dir) -> PlacementOutcome``; they raise PlacementError when nothing fits.
PLACERS: dict[str, Callable[..., PlacementOutcome]] = {
    "greedy": place_greedy, "model": place_model, "milp": place_milp, "cp-sat": place_cpsat}


def _place_annealing(graph: Graph, fabric, order: list[str], **options) -> PlacementOutcome:
    """The ``annealing`` registry entry (:func:`formulations.annealing.place_annealing`,
    imported on use: that module imports this one)."""
    from formulations.annealing import place_annealing
    return place_annealing(graph, fabric, order, **options)


PLACERS["annealing"] = _place_annealing
