"""The CGRA model as a MILP: the CP-SAT model's twin on a linear backend, and ``.mps`` export.

Scope
-----
:func:`build_milp` states the rules of :mod:`formulations.cgra.model` at one II and horizon
over the same binaries (``on``, ``at``, ``occ``, ``mv``, same names) as a
:class:`~formulations.solver.LinearModel`: ``C1 slot`` through ``x[v,p,s] >= on[v,p] +
sum(at[v,c], c = s mod II) - 1`` and ``sum_v x[v,p,s] <= 1``; every clause of the CP model as
``sum(literals) >= 1``; ``C5``/``C6`` capacities as the same sums; objective the length.
:func:`sweep_milp` sweeps the II up from the lower bound on ``settings.backend`` (HiGHS, SCIP,
...) and writes each model as ``.mps`` when ``settings.export_dir`` is set.

Caveats: MILP solvers stall on this disjunctive model where CP-SAT proves it; the CP model is
the default.

Examples
--------
>>> from hardware import load_hardware
>>> from model.graph import Graph, Node, Edge
>>> from formulations.cgra.problem import problem_from_graph
>>> g = Graph("pair", [Node("a", op="LOAD"), Node("b", op="ADD")], [Edge("a", "b")])
>>> p = problem_from_graph(g, load_hardware("cgra4x4"))
>>> result, sched = solve_milp(p, 1, horizon=3, backend="highs", time_limit=20)
>>> result.status.name, sched.length      # II 1: one slot per PE, so b waits one hop
('OPTIMAL', 3)
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

from formulations.cgra.model import FullVars, decode_full, net_windows
from formulations.cgra.problem import (CgraInfeasible, CgraProblem, CgraSchedule, lower_bounds,
                                       precheck, time_windows)
from formulations.solver import LinearModel, SolveResult, SolveSettings, quicksum

__all__ = ["build_milp", "solve_milp", "sweep_milp"]


def build_milp(problem: CgraProblem, ii: int, horizon: int) -> tuple[LinearModel, FullVars]:
    """The MILP at ``ii`` and ``horizon`` and its variables (as the CP model's)."""
    m = LinearModel(f"{problem.name}_cgra_ii{ii}".replace("/", "_").replace(" ", "_"))
    windows = time_windows(problem, ii, horizon)
    if windows is None:
        m.add(quicksum([]) >= 1, family="C7_recurrence")
        return m, FullVars([], [], windows=None)
    lo, hi = windows
    n = problem.n
    on = [{p: m.add_binary(f"on_{v}_{p}") for p in problem.allowed[v]} for v in range(n)]
    at = [{c: m.add_binary(f"at_{v}_{c}") for c in range(lo[v], hi[v] + 1)} for v in range(n)]
    fv = FullVars(on, at, windows=windows)
    for v in range(n):
        m.add(quicksum(on[v].values()) == 1, family="A1_place")
        m.add(quicksum(at[v].values()) == 1, family="A1_time")
    _slots(m, problem, ii, fv)
    _routes(m, problem, ii, fv)
    fv.length = m.add_var("length", 0, horizon, integer=True)
    first = m.add_var("first", 0, ii - 1, integer=True)
    for v in range(n):
        issue = quicksum(c * b for c, b in at[v].items())
        m.add(fv.length - issue >= problem.latency[v], family="O1_length")
        m.add(first - issue <= 0, family="O1_anchor")
    m.minimize(fv.length)
    return m, fv


def _slots(m: LinearModel, problem: CgraProblem, ii: int, fv: FullVars) -> None:
    """C1: one operation per PE and slot."""
    per: dict[tuple[int, int], list] = defaultdict(list)
    for v in range(problem.n):
        for s in range(ii):
            in_slot = quicksum(b for c, b in fv.at[v].items() if c % ii == s)
            for p, b in fv.on[v].items():
                x = m.add_binary(f"x_{v}_{p}_{s}")
                m.add(x - b - in_slot >= -1, family="C1_slot")
                per[(p, s)].append(x)
    for key, xs in sorted(per.items()):
        if len(xs) > 1:
            m.add(quicksum(xs) <= 1, family="C1_slot")


def _clause(m: LinearModel, pos: list, neg: list, family: str) -> None:
    """``OR(pos) or OR(not neg)`` as ``sum(pos) + sum(1 - neg) >= 1``."""
    m.add(quicksum(pos) - quicksum(neg) >= 1 - len(neg), family=family)


def _routes(m: LinearModel, problem: CgraProblem, ii: int, fv: FullVars) -> None:
    """C4 reasons and reads, C5 registers and C6 links (see the CP model)."""
    P, links = problem.pe_count, problem.links
    into: dict[int, list[int]] = defaultdict(list)
    for p in range(P):
        for q in links[p]:
            into[q].append(p)
    regs: dict[tuple[int, int], list] = defaultdict(list)
    wires: dict[tuple[int, int, int], list] = defaultdict(list)
    for u, (first, last) in net_windows(problem, ii, *fv.windows).items():
        occ = {(c, p): m.add_binary(f"occ_{u}_{c}_{p}")
               for c in range(first, last + 1) for p in range(P)}
        mv = {(c, p, q): m.add_binary(f"mv_{u}_{c}_{p}_{q}")
              for c in range(first, last) for p in range(P) for q in links[p]}
        fv.occ[u], fv.mv[u] = occ, mv
        for (c, p, q), x in mv.items():
            m.add(x - occ[(c, p)] <= 0, family="C4_route")
            wires[(p, q, c % ii)].append(x)
        for (c, q), o in occ.items():
            regs[(q, c % ii)].append(o)
            born = fv.at[u].get(c - problem.latency[u])
            reasons = [] if born is None else [born]
            if c > first:
                reasons += [occ[(c - 1, q)]] + [mv[(c - 1, p, q)] for p in into[q]]
            _clause(m, reasons, [o], "C4_route")
            if born is not None:
                here = fv.on[u].get(q)
                _clause(m, [here] if here is not None else [], [o, born], "C4_route")
        for v, d in problem.nets[u]:
            for c, a in fv.at[v].items():
                for q, b in fv.on[v].items():
                    cell = occ.get((c + d * ii, q))
                    _clause(m, [cell] if cell is not None else [], [a, b], "C4_read")
    for key, cells in sorted(regs.items()):
        if len(cells) > problem.registers:
            m.add(quicksum(cells) <= problem.registers, family="C5_registers")
    for key, uses in sorted(wires.items()):
        if len(uses) > 1:
            m.add(quicksum(uses) <= 1, family="C6_links")


def solve_milp(problem: CgraProblem, ii: int, horizon: int, backend: str = "highs",
               time_limit: float = 30.0, seed: int = 0
               ) -> tuple[SolveResult, CgraSchedule | None]:
    """Solve :func:`build_milp` on a linear backend and decode it."""
    m, fv = build_milp(problem, ii, horizon)
    result = m.solve(backend=backend, time_limit=time_limit, seed=seed)
    if not result.has_solution:
        return result, None
    return result, decode_full(problem, ii, fv, result, method=f"milp:{backend}")


def sweep_milp(problem: CgraProblem, settings: SolveSettings,
               warm: CgraSchedule | None = None) -> CgraSchedule:
    """Smallest II on ``settings.backend``: one MILP per II from the lower bound (horizon: the
    critical path + II + 2 x diameter, or the warm start's length at its II), each written as
    ``.mps`` when ``settings.export_dir`` is set; ``settings.time_limit`` seconds each. Keeps
    ``warm`` when no MILP finds a shorter mapping at its II or below."""
    bounds = lower_bounds(problem)
    reasons = precheck(problem)
    if reasons:
        raise CgraInfeasible(reasons)
    top = warm.ii if warm is not None else problem.max_ii
    results = []
    for ii in range(bounds["ii"], top + 1):
        horizon = bounds["critical_path"] + ii + 2 * problem.diameter
        if warm is not None and warm.ii == ii:
            horizon = warm.length
        if settings.export_dir:
            build_milp(problem, ii, horizon)[0].write_mps(
                str(Path(settings.export_dir) / f"cgra_{problem.name}_ii{ii}.mps"))
        result, sched = solve_milp(problem, ii, horizon, settings.backend,
                                   settings.wall_seconds(), settings.seed)
        results.append(result)
        if sched is not None:
            sched.results, sched.ii_bound = results, bounds["ii"]
            sched.status = "feasible"
            return sched
    if warm is not None:
        warm.results = results
        return warm
    raise CgraInfeasible([f"no II <= {problem.max_ii} admits a mapping ({settings.backend})"])
