"""The exact placement model (MILP, solved by CP-SAT or any MILP backend, exportable as ``.mps``).

Scope
-----
:func:`build_placement_model` builds the model of a set of *free* nodes, every other
node fixed (the whole section, or one LNS window):

* data (:class:`~formulations.placement.problem.PlacementProblem`): sites with their
  switch rectangles, node pairs weighted by summed bandwidth, the switch-mesh cuts with
  their channels, the per-site congestion penalty, and per free node its candidate sites
  (:func:`candidate_sites` for the whole section);
* variables: ``x[n,s]`` (node on site), per free pair and axis a distance ``d``, per cut
  that may overflow an excess ``e`` (and crossing indicators ``y``);
* constraints: ``assignment`` (one site per node, only type-compatible sites: PCU, PMU,
  AGCU for off-chip loads and stores), ``site`` (at most one node per site),
  ``distance`` (``d >= lo_b - hi_a`` and ``d >= lo_a - hi_b``, the closed form of
  ``fabric.distance``), ``congestion`` (``e >= pairs crossing the cut - its channels``);
* objective: weighted distance + congestion (:mod:`formulations.placement.congestion`)
  + penalty, in integer units (:meth:`~formulations.placement.problem.PlacementProblem.quantum_of`).

Then: :func:`hint_placement` hints a placement as a complete solution,
``model.solve(...)`` solves it, :func:`decode_placement` reads the chosen sites back and
:func:`export_model` writes it as ``.mps``. The driver that decides when to build it
is :func:`formulations.placement.search.place_model`.

Caveats
-------
Weights are quantised per model so the heaviest cost it sees weighs
:data:`~formulations.placement.problem.WEIGHT_SCALE` units (an LNS window of light pairs
keeps its own resolution); the model is exact for the quantised weights.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np

from formulations.placement.congestion import crossed_cuts
from formulations.placement.problem import PlacementProblem
from formulations.solver import LinearModel, quicksum

__all__ = ["build_placement_model", "candidate_sites", "hint_placement", "decode_placement",
           "export_model"]


def build_placement_model(problem: PlacementProblem, free: list[str],
                          candidates: dict[str, list[int]], fixed: dict[str, int],
                          quantum: float | None = None):
    """The placement MILP for the ``free`` nodes, the others ``fixed`` (node -> site index).

    data → variables (``x[n,s]`` one per candidate site, ``dr``/``dc`` per free pair,
    ``y``/``e`` per congested cut) → constraints (families ``assignment``, ``site``,
    ``distance``, ``congestion``) → objective (weighted distance + penalty + congestion,
    in integer units of ``quantum``, default :meth:`PlacementProblem.quantum_of` ``free``).
    Returns ``(model, x)``.

    Examples
    --------
    >>> from hardware import build_fabric, load_hardware
    >>> from model.graph import Graph, Node, Edge
    >>> from formulations.placement.problem import placement_problem
    >>> g = Graph("t", [Node("a", unit="pcu"), Node("b", unit="pmu")], [Edge("a", "b")])
    >>> problem = placement_problem(g, build_fabric(load_hardware("tiny")))
    >>> model, x = build_placement_model(problem, problem.nodes,
    ...                                  candidate_sites(problem, problem.nodes), {})
    >>> result = model.solve(backend="cp-sat", time_limit=5, seed=0)
    >>> placed = problem.to_site_ids(decode_placement(result, x, problem.nodes))
    >>> result.status.name, result.objective, sorted(placed)
    ('OPTIMAL', 0.0, ['a', 'b'])
    """
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


def decode_placement(result, x, free) -> dict[str, int]:
    """The sites a solved model chose: node -> site index for every ``free`` node."""
    chosen = {}
    for (n, s), var in x.items():
        if result.value(var, 0.0) > 0.5:
            chosen[n] = s
    missing = [n for n in free if n not in chosen]
    if missing:
        raise RuntimeError(f"placement model returned no site for {missing[:3]}")
    return chosen


def hint_placement(model, x, placement: dict[str, int], free) -> None:
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


def candidate_sites(problem: PlacementProblem, nodes) -> dict[str, list[int]]:
    """Per node, every site index that can host its unit kind (the full model's candidates)."""
    return {n: [int(s) for s in np.flatnonzero(problem.hosts[problem.units[n]])] for n in nodes}


def export_model(model, export_dir: str | None, name: str) -> None:
    """Write ``model`` as ``<export_dir>/<name>.mps`` (name made file-safe: one file per
    section); nothing when ``export_dir`` is None."""
    if export_dir:
        Path(export_dir).mkdir(parents=True, exist_ok=True)
        model.write_mps(str(Path(export_dir) / f"{re.sub(r'[^A-Za-z0-9_.-]', '_', name)}.mps"))


