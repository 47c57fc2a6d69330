"""The placement as a CP-SAT model over site indices, for small sections.

Scope
-----
:func:`solve_site_model` solves a whole section with one integer variable per node
(its site), where the MILP of :func:`formulations.placement.model.build_placement_model`
uses one binary per node and site:

* data: the sites each node can take, every site's switch rectangle, the weighted
  node pairs, the site penalty;
* variables: ``site[n]``, and through ``element`` constraints the switch rows and
  columns its rectangle spans; per pair and axis the gap ``g`` between the rectangles;
* constraints: ``all_different`` over the sites; ``g = max(0, lo_b - hi_a, lo_a - hi_b)``
  (the closed form of ``fabric.distance``);
* objective: sum of ``w * (g_rows + g_cols)`` plus the site penalty, in the integer
  units of :meth:`~formulations.placement.problem.PlacementProblem.integer_weight`;
* symmetry: on a chip whose unit sites form a full grid that looks the same after a
  shift by one line (possibly mirrored across the other axis), every placement has a
  copy of equal cost that touches the first line, so the model asks for one
  (:func:`translation_floor`).

CP-SAT propagates the gaps of this model as soon as a few nodes are placed, which the
MILP's relaxation cannot: on the 16-node generated section of ``plasticine`` it finds
the optimum (3.147) in about 3 s and proves it in about 110 s on one worker, where the
MILP on two workers ends 600 s with bound 2.70.

Caveats
-------
* No congestion term: the caller uses it only where that term is inactive
  (:attr:`~formulations.placement.problem.PlacementProblem.congestion_active`).
* Without hint-guided neighbourhoods CP-SAT on one worker finds poor placements of
  large sections (32 nodes: 18.5 against 5.2 from the LNS), so it is for small ones
  (:data:`SITE_MODEL_NODES`, :func:`site_model_fits`).
"""

from __future__ import annotations

import numpy as np
from ortools.sat.python import cp_model

from formulations.placement.problem import PlacementProblem
from formulations.solver import CP_SAT_WORK_PER_SECOND, Budget, solve_cp_model, was_cut_short

__all__ = ["solve_site_model", "translation_floor", "site_model_applies", "site_model_fits",
           "SITE_MODEL_NODES"]

#: On CP-SAT, sections of at most this many nodes (with the congestion term inactive)
#: are solved whole by the site model: it proves them where the MILP formulation cannot,
#: and at 10 s it found the optimum of the 16-node generated section on 4 of 4 seeds (the
#: LNS: 2 and 3 of 4 in two runs). On 20-node sections it beat the LNS on some seeds and
#: lost on others; on 24 nodes it was 40 % worse.
SITE_MODEL_NODES = 16


def site_model_applies(problem: PlacementProblem) -> bool:
    """Whether the site model represents ``problem``'s whole objective."""
    return not problem.congestion_active


def site_model_fits(problem: PlacementProblem) -> bool:
    """Whether ``problem`` is small enough for the site model, which represents its
    whole objective."""
    return len(problem.nodes) <= SITE_MODEL_NODES and site_model_applies(problem)


def solve_site_model(problem, start: dict[str, int] | None, budget: Budget, seed: int = 0,
                     options: dict | None = None, symmetry: bool = True,
                     with_cut: bool = False):
    """Solve the site model of ``problem`` hinted with ``start`` (node -> site index),
    spending ``budget`` as CP-SAT deterministic time (its deadline the wall-clock cap).

    ``options`` are CP-SAT parameters by name; ``symmetry=False`` leaves out the
    translation floor (:func:`translation_floor`); with ``with_cut`` a fourth value says
    whether the wall clock cut the solve short.

    Returns
    -------
    (index, status, bound)
        The best placement found (node -> site index, or None), the CP-SAT status name
        and its proven lower bound on the cost (in cost units, 0 when none).
    """
    model = cp_model.CpModel()
    site = {n: _site_var(model, problem, n) for n in problem.nodes}
    lo, hi = _spans(model, problem, site)
    model.add_all_different(list(site.values()))
    floor = translation_floor(problem) if symmetry else None
    if floor is not None:
        axis, first = floor
        model.add_min_equality(first, [lo[n, axis] for n in problem.nodes])
    model.minimize(sum(_pair_terms(model, problem, lo, hi))
                   + sum(_penalty_terms(model, problem, site)))
    wall, work = budget.cp_limits(budget.left(), CP_SAT_WORK_PER_SECOND)
    result = solve_cp_model(model, time_limit=wall, seed=seed, hint=start and
                            {site[n]: int(s) for n, s in start.items()}, variables=site,
                            params=options, deterministic_time=work)
    budget.charge(result, CP_SAT_WORK_PER_SECOND)
    index = ({n: int(result.values[n]) for n in problem.nodes} if result.has_solution
             else None)
    bound = max(0.0, (result.bound or 0.0) * problem.quantum) if result.has_solution else 0.0
    if with_cut:
        return index, result.status.name, bound, was_cut_short(result)
    return index, result.status.name, bound


def _site_var(model, problem, node: str):
    sites = [int(s) for s in np.flatnonzero(problem.hosts[problem.units[node]])]
    return model.new_int_var_from_domain(cp_model.Domain.from_values(sites), node)


def _spans(model, problem, site) -> tuple[dict, dict]:
    """Per node and axis (0 rows, 1 columns) the first and last switch line of its site."""
    lo, hi = {}, {}
    tables = [[int(v) for v in problem.rect[:, column]] for column in range(4)]
    for n, var in site.items():
        for axis in (0, 1):
            for out, table in ((lo, tables[2 * axis]), (hi, tables[2 * axis + 1])):
                out[n, axis] = model.new_int_var(min(table), max(table), "")
                model.add_element(var, table, out[n, axis])
    return lo, hi


def _pair_terms(model, problem, lo, hi) -> list:
    terms = []
    widest = int(problem.rect.max() - problem.rect.min())
    for a, b, w in problem.pairs:
        for axis in (0, 1):
            gap = model.new_int_var(0, widest, "")
            model.add_max_equality(gap, [0, lo[b, axis] - hi[a, axis], lo[a, axis] - hi[b, axis]])
            terms.append(problem.integer_weight(w) * gap)
    return terms


def _penalty_terms(model, problem, site) -> list:
    if not problem.penalty.any():
        return []
    terms = []
    for n, var in site.items():
        table = [problem.integer_weight(p * problem.degree[n]) for p in problem.penalty]
        cost = model.new_int_var(0, max(table), "")
        model.add_element(var, table, cost)
        terms.append(cost)
    return terms


def translation_floor(problem) -> tuple[int, int] | None:
    """``(axis, line)`` such that some optimal placement has a node on ``line`` of ``axis``
    (the first line of unit sites), or None when the chip gives no such symmetry.

    Sound when every node sits on a unit site (no AGCU node, no site penalty) and the
    unit sites form a full grid of equal rectangles whose kinds repeat after a shift by
    one line along ``axis``, possibly mirrored across the other axis: the shifted (and
    mirrored) copy of a placement then has the same kinds and the same switch-hop
    distances, so shifting it until it touches the first line keeps its cost. Of the
    two axes the longer one is used (it removes more copies).

    Examples
    --------
    >>> from hardware import build_fabric, load_hardware
    >>> from model.graph import Graph, Node, Edge
    >>> from formulations.placement.problem import placement_problem
    >>> g = Graph("t", [Node("a", unit="pcu"), Node("b", unit="pmu")], [Edge("a", "b")])
    >>> translation_floor(placement_problem(g, build_fabric(load_hardware("plasticine"))))
    (0, 0)
    """
    if problem.penalty.any() or any(problem.units[n] == "agcu" for n in problem.nodes):
        return None
    units = ~problem.hosts["agcu"]
    rect, kinds = problem.rect[units], _site_kinds(problem)[units]
    if len({tuple(r) for r in rect[:, [1, 3]] - rect[:, [0, 2]]}) != 1:
        return None
    grid = {(int(r[0]), int(r[2])): k for r, k in zip(rect, kinds)}
    rows, cols = sorted({r for r, _ in grid}), sorted({c for _, c in grid})
    if len(grid) != len(rows) * len(cols):
        return None
    found = [(len(lines), axis, lines[0]) for axis, lines in ((0, rows), (1, cols))
             if _repeats(grid, axis, rows, cols)]
    if not found:
        return None
    _, axis, first = max(found)
    return axis, first


def _site_kinds(problem) -> np.ndarray:
    """A label per site for the node kinds it can host."""
    return np.array(["".join("1" if problem.hosts[u][s] else "0" for u in ("pcu", "pmu", "agcu"))
                     for s in range(len(problem.sites.ids))])


def _repeats(grid: dict, axis: int, rows: list[int], cols: list[int]) -> bool:
    """Whether a shift by one line along ``axis`` (lines consecutive), plain or mirrored
    across the other axis, maps every grid site to one of the same kind."""
    lines = rows if axis == 0 else cols
    if lines != list(range(lines[0], lines[-1] + 1)):
        return False
    other = cols if axis == 0 else rows
    mirror = {o: other[-1] + other[0] - o for o in other}

    def key(line, o):
        return (line, o) if axis == 0 else (o, line)

    pairs = [(key(line, o), key(line + 1, o), key(line + 1, mirror[o]))
             for line in lines[:-1] for o in other]
    plain = all(grid[a] == grid[b] for a, b, _ in pairs)
    mirrored = (set(mirror.values()) == set(other)
                and all(grid[a] == grid[c] for a, _, c in pairs))
    return plain or mirrored
