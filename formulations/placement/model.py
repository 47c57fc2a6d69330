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
  summed bandwidth (a net counted once per sink), the switch-mesh cuts with their
  channels, an optional per-site congestion penalty. Variables: ``x[n,s]`` (node
  on site), per pair and axis a distance ``d``, per cut that may overflow an
  excess ``e`` (and crossing indicators). Constraints: ``assignment`` (one site per
  node, only type-compatible sites: PCU, PMU, AGCU for off-chip loads and
  stores), ``site`` (at most one node per site), ``distance`` (``d >= lo_b - hi_a``
  and ``d >= lo_a - hi_b``, the closed form of ``fabric.distance``), ``congestion``
  (``e >= pairs crossing the cut - its channels``). Objective: weighted distance
  + congestion (:mod:`formulations.placement.congestion`) + penalty, in integer
  units. Sections with at most :data:`MAX_EXACT_VARS` assignment variables are
  solved whole (with a bound and a gap); larger ones by the large-neighbourhood
  search of :mod:`formulations.placement.lns`, whose gap comes from the star
  bound of :mod:`formulations.placement.bound`. On CP-SAT, sections of at most
  :data:`SITE_MODEL_NODES` nodes go instead to the site model of
  :mod:`formulations.placement.site_model` (one integer site per node), which CP-SAT
  proves where it cannot prove this formulation.
* :func:`placement_cost` / :func:`problem_cost` / :func:`cost_terms` -- the shared
  cost (the annealer of :mod:`formulations.placement.annealing` uses it too).

Caveats
-------
* Weights are quantised per model so the heaviest cost it sees weighs
  :data:`WEIGHT_SCALE` units (an LNS window of light pairs keeps its own
  resolution); the model is exact for the quantised weights, and the reported
  objective is always the true cost of the returned placement.
* The site penalty is the routing model's feedback (sites next to over-used links
  pay per unit of node bandwidth); the cut congestion term is the placement's own
  estimate of routing demand.
* The star bound of LNS runs is valid but weak where the cost comes from cycles
  rather than fan-out: a large gap there says little about the placement.
* The models' answer is never worse than their warm start (greedy, then a
  congestion-blind anneal): a solver answer that is worse is discarded.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import Callable

import numpy as np

from formulations import solver as _solver  # noqa: F401 - loaded once here, not in a timed solve
from model.graph import Graph

__all__ = ["PlacementError", "PlacementOutcome", "PlacementProblem", "PLACERS", "greedy_place",
           "place_greedy", "placement_cost", "placement_problem", "problem_cost", "cost_terms",
           "build_placement_model", "place_model", "place_milp", "place_cpsat", "WEIGHT_SCALE",
           "SITE_MODEL_NODES", "site_model_fits"]


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
    problem = placement_problem(graph, fabric, _options.get("site_penalty"))
    terms = cost_terms(problem, placement)
    return PlacementOutcome(placement, "sorted-order greedy", sum(terms.values()),
                            extra=dict(terms))


# =============================================================================================
# The exact placement model (CP-SAT or MILP) and its large-neighbourhood search
# =============================================================================================

#: Inside the models, weights are integers: the heaviest cost a model sees weighs this much
#: (CP-SAT needs integers; the msr-dnn bandwidths span 1e-6..1, so a coarser scale would
#: merge them: at 1000 every pair below 1e-3 looked alike and LNS windows stalled).
WEIGHT_SCALE = 10**6
#: A section whose full model has more assignment variables than this is improved by LNS.
MAX_EXACT_VARS = 800
#: LNS stops after this many rounds without a 0.1 % improvement (unless ``patience=None``).
PATIENCE = 20


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
    cuts: np.ndarray = field(default_factory=lambda: np.zeros((0, 3), dtype=np.int64))
    congestion_weight: float = 0.0

    @property
    def quantum(self) -> float:
        """The cost of one integer unit of the full model's objective."""
        return self.quantum_of(self.nodes)

    def quantum_of(self, free) -> float:
        """The integer unit of a model whose free nodes are ``free``: the heaviest cost
        that model can see (its pairs, the site penalty, the congestion weight) weighs
        :data:`WEIGHT_SCALE` units, so a window of light pairs keeps its resolution."""
        free = set(free)
        heaviest = max([w for a, b, w in self.pairs if a in free or b in free]
                       + [float(self.penalty.max(initial=0.0)) * max(self.degree.values(),
                                                                     default=0.0),
                          self.congestion_weight if self.congestion_active else 0.0])
        return heaviest / WEIGHT_SCALE if heaviest > 0 else 1.0

    def integer_weight(self, cost: float, quantum: float | None = None) -> int:
        """``cost`` in integer units of ``quantum`` (default: the full model's); a
        positive cost never rounds to zero."""
        quantum = self.quantum if quantum is None else quantum
        return max(1, round(cost / quantum)) if cost > 0 else 0

    @cached_property
    def cut_index(self) -> dict[tuple[int, int], int]:
        """``(axis, line)`` -> row of :attr:`cuts`."""
        return {(int(a), int(c)): k for k, (a, c, _) in enumerate(self.cuts)}

    @property
    def congestion_active(self) -> bool:
        """False when no cut can be over capacity (fewer pairs than the smallest cut's
        channels): the congestion term is then 0 for every placement."""
        return (self.congestion_weight > 0 and len(self.cuts) > 0
                and len(self.pairs) > int(self.cuts[:, 2].min()))


def placement_problem(graph: Graph, fabric, site_penalty: dict[str, float] | None = None,
                      cut_share: float = 1.0, congestion_weight: float | None = None
                      ) -> PlacementProblem:
    """Collect the data of the placement model (sites, distances, weighted pairs, cuts).

    ``cut_share`` is the share of each mesh cut's channels the placement may plan to
    use; ``congestion_weight`` the cost of one channel over (default
    :data:`~formulations.placement.congestion.CONGESTION_WEIGHT` times the mean pair
    bandwidth; 0 switches the congestion term off).
    """
    from formulations.placement.congestion import CONGESTION_WEIGHT, mesh_cuts
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
    if congestion_weight is None:
        mean = sum(pair_w.values()) / len(pair_w) if pair_w else 0.0
        congestion_weight = CONGESTION_WEIGHT * mean
    return PlacementProblem(list(graph.node_ids), {n.id: n.unit for n in graph.nodes}, sites,
                            rect, hosts, sorted((a, b, w) for (a, b), w in pair_w.items()),
                            penalty, degree, mesh_cuts(fabric, cut_share=cut_share),
                            float(congestion_weight))


def _switch_rect(fabric, site_id: str) -> tuple[int, int, int, int]:
    pos = [fabric.graph.nodes[s]["pos"] for s in fabric.attached_switches(site_id)]
    cols, rows = [int(p[0]) for p in pos], [int(p[1]) for p in pos]
    return min(rows), max(rows), min(cols), max(cols)


def problem_cost(problem: PlacementProblem, placement: dict[str, str]) -> float:
    """The models' objective: weighted wirelength + site penalty + cut congestion."""
    return sum(cost_terms(problem, placement).values())


def cost_terms(problem: PlacementProblem, placement: dict[str, str]) -> dict[str, float]:
    """The three terms of :func:`problem_cost`: ``wirelength``, ``penalty``, ``congestion``."""
    from formulations.placement.congestion import congestion_cost
    idx = problem.sites.index
    index = {n: idx[placement[n]] for n in problem.nodes}
    wire = sum(w * problem.sites.dist[index[a], index[b]] for a, b, w in problem.pairs)
    penalty = sum(problem.penalty[index[n]] * problem.degree[n] for n in problem.nodes)
    return {"wirelength": float(wire), "penalty": float(penalty),
            "congestion": congestion_cost(problem, index)}


def _check_capacity(problem: PlacementProblem) -> None:
    """Raise PlacementError in user terms when a unit kind has fewer sites than nodes."""
    for unit in ("agcu", "pcu", "pmu", "any"):
        kinds = ("pcu", "pmu", "any") if unit == "any" else (unit,)
        needing = [n for n in problem.nodes if problem.units[n] in kinds]
        available = int(np.sum(np.any([problem.hosts[k] for k in kinds], axis=0)))
        if len(needing) > available:
            raise PlacementError(needing[-1], unit, len(needing), available)


def build_placement_model(problem: PlacementProblem, free: list[str],
                          candidates: dict[str, list[int]], fixed: dict[str, int],
                          quantum: float | None = None):
    """The placement MILP for the ``free`` nodes, the others ``fixed`` (node -> site index).

    data → variables (``x[n,s]`` one per candidate site, ``dr``/``dc`` per free pair,
    ``y``/``e`` per congested cut) → constraints (families ``assignment``, ``site``,
    ``distance``, ``congestion``) → objective (weighted distance + penalty + congestion,
    in integer units of ``quantum``, default :meth:`PlacementProblem.quantum_of` ``free``).
    Returns ``(model, x)``.
    """
    from formulations.solver import LinearModel, quicksum
    quantum = problem.quantum_of(free) if quantum is None else quantum
    model = LinearModel("placement")
    x = {(n, s): model.add_binary(f"x_{n}@{problem.sites.ids[s]}".replace(" ", "_"))
         for n in free for s in candidates[n]}
    _add_assignment(model, x, free, candidates)
    objective = _free_fixed_terms(problem, x, free, candidates, fixed, quantum)
    objective += _pair_distance_terms(model, problem, x, free, candidates, quantum)
    objective += _congestion_terms(model, problem, x, free, candidates, fixed, quantum)
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


def _free_fixed_terms(problem, x, free, candidates, fixed, quantum) -> list:
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
            coef = problem.integer_weight(cost, quantum)
            if coef:
                terms.append(coef * x[n, s])
    return terms


def _pair_distance_terms(model, problem, x, free, candidates, quantum) -> list:
    """``d ≥ lo_b - hi_a`` and ``d ≥ lo_a - hi_b`` per axis for every free pair."""
    free_set = set(free)
    terms = []
    for k, (a, b, w) in enumerate(problem.pairs):
        if a not in free_set or b not in free_set:
            continue
        coef = problem.integer_weight(w, quantum)
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


def _congestion_terms(model, problem, x, free, candidates, fixed, quantum) -> list:
    """Per cut that may overflow: ``e ≥ demand - capacity`` with the demand linear in ``x``.

    A fixed pair adds a constant; a free-fixed pair ``x[n,s]`` for the sites ``s`` that
    put the cut between ``n`` and its partner; a free pair a ``y ≥ L_a + R_b - 1`` (and
    the mirror) with ``L``/``R`` the assignment mass wholly on each side of the cut.
    Cuts whose demand cannot exceed their capacity get no row (their term is 0).
    """
    if not problem.congestion_active:
        return []
    from formulations.placement.congestion import crossed_cuts
    free_set, cut_index = set(free), problem.cut_index
    constant = np.zeros(len(problem.cuts))
    linear: list[list[tuple[object, float]]] = [[] for _ in problem.cuts]
    may_cross = np.zeros(len(problem.cuts))
    free_pairs = []
    for a, b, _ in problem.pairs:
        if a in fixed and b in fixed:
            for k in crossed_cuts(problem.rect, cut_index, fixed[a], fixed[b]):
                constant[k] += 1
        elif a in free_set and b in free_set:
            mask = _may_cross(problem, candidates[a] + candidates[b])
            free_pairs.append((a, b, mask))
            may_cross += mask
        else:
            n, t = (a, fixed[b]) if a in free_set else (b, fixed[a])
            hit = np.zeros(len(problem.cuts), dtype=bool)
            for s in candidates[n]:
                for k in crossed_cuts(problem.rect, cut_index, s, t):
                    linear[k].append((x[n, s], 1.0))
                    hit[k] = True
            may_cross += hit
    terms = []
    for k, (axis, line, capacity) in enumerate(problem.cuts):
        if constant[k] + may_cross[k] <= capacity:
            continue
        row = list(linear[k]) + _free_pair_crossings(model, problem, x, free_pairs, candidates,
                                                     int(axis), int(line), k)
        e = model.add_var(f"over_cut{k}", 0, len(problem.pairs), integer=True)
        vars_ = [e] + [v for v, _ in row]
        coefs = [1.0] + [-c for _, c in row]
        model.add_row(vars_, coefs, float(constant[k] - capacity), np.inf, family="congestion")
        terms.append(problem.integer_weight(problem.congestion_weight, quantum) * e)
    return terms


def _may_cross(problem, sites: list[int]) -> np.ndarray:
    """Cuts a pair whose ends both pick from ``sites`` could cross (a superset)."""
    rect = problem.rect[sites]
    axis, line = problem.cuts[:, 0], problem.cuts[:, 1]
    lowest_hi = np.where(axis == 0, rect[:, 1].min(), rect[:, 3].min())
    highest_lo = np.where(axis == 0, rect[:, 0].max(), rect[:, 2].max())
    return ((lowest_hi <= line) & (line < highest_lo)).astype(float)


def _free_pair_crossings(model, problem, x, free_pairs, candidates, axis, line, k) -> list:
    lo, hi = (0, 1) if axis == 0 else (2, 3)
    out = []
    for j, (a, b, mask) in enumerate(free_pairs):
        if not mask[k]:
            continue
        y = model.add_binary(f"cross{k}_{j}")
        for p, q in ((a, b), (b, a)):
            left = [x[p, s] for s in candidates[p] if problem.rect[s, hi] <= line]
            right = [x[q, s] for s in candidates[q] if problem.rect[s, lo] >= line + 1]
            if left and right:
                model.add_row([y] + left + right, [1.0] + [-1.0] * (len(left) + len(right)),
                              -1.0, np.inf, family="congestion")
        out.append((y, 1.0))
    return out


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
    """Hint ``placement``: its ``x`` and the auxiliary variables it implies (distances,
    crossings, overflows), so that the solver starts from a complete solution instead of
    searching for the rest (HiGHS solves a sub-MIP to complete a partial hint)."""
    model.set_hint({var: float(placement.get(n) == s) for (n, s), var in x.items()})
    model.set_hint(_completed(model.to_arrays()))


def _completed(a) -> dict[str, float]:
    """The hint with every unhinted variable, in creation order, at the least value its
    ``>=`` rows allow given the values before it: the auxiliaries of this model are bounded
    below only and cost something, and each one's rows hold ``x`` and earlier auxiliaries."""
    value = np.full(a.n_vars, np.nan)
    value[list(a.hint)] = list(a.hint.values())
    rows_of: dict[int, list[int]] = {}
    for r in np.flatnonzero(np.isfinite(a.row_lo)):
        for j in a.row_index[a.row_start[r]:a.row_start[r + 1]]:
            if np.isnan(value[j]):
                rows_of.setdefault(int(j), []).append(int(r))
    for j in np.flatnonzero(np.isnan(value)):
        least = a.col_lb[j]
        for r in rows_of.get(int(j), []):
            cols = a.row_index[a.row_start[r]:a.row_start[r + 1]]
            coefs = a.row_value[a.row_start[r]:a.row_start[r + 1]]
            mine = cols == j
            rest = value[cols[~mine]]
            if coefs[mine][0] > 0 and not np.isnan(rest).any():
                least = max(least, (a.row_lo[r] - coefs[~mine] @ rest) / coefs[mine][0])
        value[j] = np.ceil(least - 1e-9) if a.col_int[j] else least
    return {a.col_names[j]: float(v) for j, v in enumerate(value) if np.isfinite(v)}


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
                window: int = 8, anneal_share: float | None = None,
                patience: int | None = PATIENCE,
                cut_share: float = 1.0, drop_idle: bool = True, **_options) -> PlacementOutcome:
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
    cut_share : share of each switch-mesh cut's channels the congestion term allows
        (:mod:`formulations.placement.congestion`).
    window : nodes re-optimised together per LNS round.
    patience : the LNS stops after this many rounds without a 0.1 % improvement;
        None = never stop early: anneal from the LNS's local optimum (keeping it only
        when better) and go on until ``time_limit``.
    drop_idle : place the nodes without any pair (they cost nothing anywhere) last, on
        the sites the others leave free (a bipartite matching), so that the search moves
        fewer nodes among free sites instead of swapping through a full chip; when the
        leftover sites cannot take them, the whole section is placed again with them.
    anneal_share : this share of ``time_limit`` is spent annealing the greedy placement
        (VPR runs, congestion-blind: a faster surrogate; a fast anneal, then one cooling
        slowly enough to fill the rest of the share) before the model starts from the
        best of them; None = by the spread of the pair weights (:func:`anneal_share_for`);
        a section small enough for the exact model gets the fast anneal only; 0 =
        straight from the greedy.

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
    problem = placement_problem(graph, fabric, site_penalty, cut_share)
    _check_capacity(problem)
    idle = {n for n in problem.nodes if problem.degree[n] == 0}
    if drop_idle and idle and len(idle) < len(problem.nodes):
        options = dict(backend=backend, seed=seed, site_penalty=site_penalty, window=window,
                       anneal_share=anneal_share, patience=patience, cut_share=cut_share)
        busy = [n for n in graph.node_ids if n not in idle]
        out = place_model(graph.subgraph(busy), fabric, [n for n in order if n not in idle],
                          time_limit=time_limit, export_dir=export_dir, drop_idle=False,
                          start={n: start[n] for n in busy} if start else None, **options)
        completed = _fill_idle(problem, out.placement, sorted(idle))
        if completed is not None:
            out.placement, out.extra["idle_nodes"] = completed, len(idle)
            return out
        left = max(0.5, time_limit - (_time.perf_counter() - started))
        return place_model(graph, fabric, order, time_limit=left, export_dir=export_dir,
                           start=start, drop_idle=False, **options)
    current = start or greedy_place(graph, fabric, order)
    greedy_cost = problem_cost(problem, current)
    extra = {"greedy_cost": greedy_cost, "first_solution_time":
             round(_time.perf_counter() - started, 4)}
    candidates = _all_candidates(problem, problem.nodes)
    n_vars = sum(len(c) for c in candidates.values())
    from formulations.placement.bound import star_bound
    extra["star_bound"] = star_bound(problem)
    site_model = backend == "cp-sat" and site_model_fits(problem)
    exact = n_vars <= MAX_EXACT_VARS or site_model
    if anneal_share is None:
        anneal_share = anneal_share_for(problem)
    if greedy_cost > extra["star_bound"] and anneal_share > 0:
        current, extra["anneal_run_time"] = _annealed(problem, fabric, current,
                                                      anneal_share * time_limit, seed,
                                                      fill=not exact)
    start_cost = problem_cost(problem, current)
    extra["best_found_time"] = round(_time.perf_counter() - started, 4)
    index = {n: problem.sites.index[s] for n, s in current.items()}
    extra |= {"warm_start_cost": start_cost, "model_vars": n_vars}
    if start_cost <= extra["star_bound"] + 1e-12 and not export_dir:
        extra |= {"final_time": round(_time.perf_counter() - started, 4), "gap": 0.0}
        extra |= _terms(problem, index)
        return PlacementOutcome(current, "placement model (warm start meets the bound)",
                                start_cost, start_cost, "OPTIMAL", backend, extra)
    if (exact and not site_model) or export_dir:
        model, x = build_placement_model(problem, problem.nodes, candidates, {})
        _export(model, export_dir, f"placement_{graph.name}")
    if site_model:
        left = max(0.5, time_limit - (_time.perf_counter() - started))
        return _solve_site_model(problem, index, start_cost, left, seed, started, extra)
    if exact:
        left = max(0.5, time_limit - (_time.perf_counter() - started))
        return _solve_exact(problem, model, x, index, start_cost, backend, left, seed,
                            started, extra)
    return _lns(problem, fabric, index, start_cost, backend, time_limit, seed, window, patience,
                started, extra)


#: Share of the time the model's warm start anneals when the pair weights share one scale
#: (coefficient of variation below ONE_SCALE_CV), and otherwise.
ONE_SCALE_SHARE, SPREAD_SHARE, ONE_SCALE_CV = 0.75, 0.5, 1.0


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


def _fill_idle(problem: PlacementProblem, placement: dict[str, str], idle: list[str]
               ) -> dict[str, str] | None:
    """``placement`` completed with the ``idle`` nodes on free compatible sites (a maximum
    bipartite matching); None when the free sites cannot take them all."""
    import networkx as nx
    used = {problem.sites.index[s] for s in placement.values()}
    free = [k for k in range(len(problem.sites.ids)) if k not in used]
    options = nx.Graph()
    options.add_nodes_from(idle)
    options.add_edges_from((n, ("site", k)) for n in idle for k in free
                           if problem.hosts[problem.units[n]][k])
    matching = nx.bipartite.hopcroft_karp_matching(options, top_nodes=idle)
    if any(n not in matching for n in idle):
        return None
    return placement | {n: problem.sites.ids[matching[n][1]] for n in idle}


def _annealed(problem, fabric, start: dict[str, str], seconds: float, seed: int,
              fill: bool = True) -> tuple[dict[str, str], float]:
    """A second warm start: :func:`~formulations.placement.annealing.anneal_to_budget` from ``start``
    for about ``seconds`` (its first anneal cools within them: a large section gets fewer
    moves per temperature); returns the result and the seconds one anneal took (the LNS
    gives its annealing slices at least that long).

    The anneals see the wirelength and penalty only (a faster surrogate: the congestion
    term is 0 at good placements; the model and its LNS see it); the caller gets whichever
    of ``start`` and the result costs least. Without ``fill`` only the first anneal runs
    (a section small enough for the exact model needs the time for the proof). The range
    limit stops at a same-kind neighbour's step (:func:`~formulations.placement.annealing.same_kind_step`).
    """
    from dataclasses import replace
    from formulations.placement.annealing import anneal_to_budget, same_kind_step
    light = replace(problem, congestion_weight=0.0)
    best, _, stats = anneal_to_budget(light, fabric, start, time_limit=seconds, seed=seed,
                                      fill=fill, range_floor=same_kind_step(problem, fabric))
    better = problem_cost(problem, best) < problem_cost(problem, start)
    return (best if better else start), stats["one_run"]


#: On CP-SAT, sections of at most this many nodes (with the congestion term inactive)
#: are solved whole by the site model of :mod:`formulations.placement.site_model`: it proves them
#: where the MILP formulation cannot, and at 10 s it found the optimum of the 16-node
#: generated section on 4 of 4 seeds (the LNS: 2 and 3 of 4 in two runs). On 20-node
#: sections it beat the LNS on some seeds and lost on others; on 24 nodes it was 40 % worse.
SITE_MODEL_NODES = 16


def site_model_fits(problem: PlacementProblem) -> bool:
    """Whether ``problem`` is small enough for the site model, which represents its
    whole objective."""
    from formulations.placement.site_model import site_model_applies
    return len(problem.nodes) <= SITE_MODEL_NODES and site_model_applies(problem)


def _solve_exact(problem, model, x, index, start_cost, backend, time_limit, seed, started,
                 extra) -> PlacementOutcome:
    _hint(model, x, index, problem.nodes)
    result = model.solve(backend=backend, time_limit=time_limit, seed=seed, threads=1)
    found, bound = None, None
    if result.has_solution:
        found = _decode(result, x, problem.nodes)
        bound = None if result.bound is None else max(0.0, result.bound * problem.quantum)
    extra["hint"] = result.hint_status
    return _exact_outcome(problem, index, start_cost, found, result.status.name, bound,
                          result.backend, "placement model", started, extra)


def _solve_site_model(problem, index, start_cost, time_limit, seed, started, extra
                      ) -> PlacementOutcome:
    from formulations.placement.site_model import solve_site_model
    found, status, bound = solve_site_model(problem, index, time_limit, seed)
    return _exact_outcome(problem, index, start_cost, found, status, bound, "cp-sat",
                          "placement site model", started, extra)


def _exact_outcome(problem, index, start_cost, found, solver_status, bound, backend, method,
                   started, extra) -> PlacementOutcome:
    """The outcome of a whole-section solve: its placement ``found`` unless the warm start
    ``index`` is better, proved optimal when the solver or the star bound says so."""
    import time as _time
    placed = dict(index)
    if found is not None and problem_cost(problem, _names(problem, found)) <= start_cost + 1e-9:
        placed = found
    cost = problem_cost(problem, _names(problem, placed))
    bound = max(bound or 0.0, extra.get("star_bound", 0.0))
    status = "FEASIBLE"
    if solver_status == "OPTIMAL" or cost <= bound + 1e-12:
        bound, status = cost, "OPTIMAL"
    if placed != index:
        extra["best_found_time"] = round(_time.perf_counter() - started, 4)
    extra |= {"final_time": round(_time.perf_counter() - started, 4),
              "gap": _gap(cost, bound), "solver_status": solver_status}
    extra |= _terms(problem, placed)
    return PlacementOutcome(_names(problem, placed), f"{method} ({backend})", cost, bound,
                            status, backend, extra)


def _names(problem, placed: dict[str, int]) -> dict[str, str]:
    return {n: problem.sites.ids[s] for n, s in placed.items()}


def _lns(problem, fabric, index, cost, backend, time_limit, seed, window, patience, started,
         extra) -> PlacementOutcome:
    """Large-neighbourhood search (:mod:`formulations.placement.lns`) with the star bound."""
    import time as _time
    from formulations.placement.lns import lns
    index, cost, stats = lns(problem, fabric, index, cost, backend=backend,
                             deadline=started + time_limit, seed=seed, window=window,
                             patience=patience, anneal_seconds=extra.get("anneal_run_time", 0))
    bound = extra.get("star_bound", 0.0)
    if "last_improvement" in stats:
        extra["best_found_time"] = round(stats.pop("last_improvement") - started, 4)
    extra |= stats | {"final_time": round(_time.perf_counter() - started, 4),
                      "gap": _gap(cost, bound)}
    extra |= _terms(problem, index)
    status = "OPTIMAL" if cost <= bound + 1e-12 else "FEASIBLE"
    return PlacementOutcome(_names(problem, index), f"placement model LNS ({backend})", cost,
                            bound, status, backend, extra)


def _gap(cost: float, bound: float | None) -> float | None:
    """Relative gap ``(cost - bound) / cost`` (0 for a zero cost)."""
    if bound is None:
        return None
    return 0.0 if cost <= 0 else round(max(0.0, (cost - bound) / cost), 6)


def _terms(problem, index: dict[str, int]) -> dict[str, float]:
    return {k: round(v, 9) for k, v in cost_terms(problem, _names(problem, index)).items()}


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
    """The ``annealing`` registry entry (:func:`formulations.placement.annealing.place_annealing`,
    imported on use: that module imports this one)."""
    from formulations.placement.annealing import place_annealing
    return place_annealing(graph, fabric, order, **options)


PLACERS["annealing"] = _place_annealing
