"""The CP-SAT model of a CGRA modulo mapping at one II: PEs, cycles and every route.

Scope
-----
Data: the :class:`~formulations.cgra.problem.CgraProblem`, the II and a horizon ``H`` (every
operation ends by ``H``); issue windows from :func:`~formulations.cgra.problem.time_windows`.

Variables (a time-extended routing resource graph, modulo II):

* ``on[v][p]``  operation ``v`` on PE ``p`` (its allowed PEs only: ``C2 memory``);
* ``at[v][c]``  ``v`` issues at cycle ``c`` (one-hot over its window);
* ``occ[u][c][p]``  value ``u`` sits in a register of PE ``p`` at cycle ``c``;
* ``mv[u][c][p, q]``  value ``u`` moves over the link ``p -> q`` at cycle ``c``.

Constraints (:data:`~formulations.cgra.problem.RULES`):

* ``C1 slot``       ``AllDifferent(pe(v) * II + issue(v) mod II)``;
* ``C4 route``      ``occ[u][c][q]`` needs a reason: the value is born there
  (``at[u][c - latency(u)]`` and ``on[u][q]``), it was there at ``c - 1``, or it moved in
  over a link at ``c - 1`` (``mv[u][c-1][p, q]`` needs ``occ[u][c-1][p]``); a consumer
  ``v`` of edge ``u -> v`` (distance ``d``) on PE ``q`` at cycle ``c`` needs
  ``occ[u][c + d II][q]``;
* ``C5 registers``  per PE and slot ``s``: ``sum occ[u][c][p] (c = s mod II) <= registers``;
* ``C6 links``      per link and slot: ``sum mv[u][c][p, q] (c = s mod II) <= 1``.

Objective: the length of one iteration (last issue + latency), the first issue within one
II of cycle 0. A solution is a legal mapping; INFEASIBLE says none ends by ``H`` (the II
proofs come from :mod:`formulations.cgra.relax`, which needs no horizon).

Examples
--------
>>> from hardware import load_hardware
>>> from model.graph import Graph, Node, Edge
>>> from formulations.cgra.problem import problem_from_graph
>>> g = Graph("acc", [Node("a", op="LOAD"), Node("b", op="MUL"), Node("c", op="ADD")],
...           [Edge("a", "b"), Edge("b", "c"), Edge("c", "c", distance=1)])
>>> p = problem_from_graph(g, load_hardware("cgra4x4"))
>>> from formulations.solver import Budget
>>> result, sched = solve_full(p, 1, 8, Budget(10))
>>> result.status.name, sched.length
('OPTIMAL', 5)
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from ortools.sat.python import cp_model

from formulations.cgra.problem import CgraProblem, CgraSchedule, time_windows
from formulations.cgra.relax import CP_PARAMS
from formulations.cgra.work import FULL_WORK_PER_SECOND
from formulations.solver import Budget, DVar, ModelDescription, SolveResult, solve_cp_model

__all__ = ["FullVars", "model_size", "narrowed", "build_description", "build_full_model",
           "full_hint", "decode_full", "solve_full", "net_windows"]


@dataclass
class FullVars:
    """The full model's variables (see the module): the description's, and ``emitted``, the
    variables of the model built from it (by :attr:`~formulations.solver.DVar.index`)."""

    on: list[dict[int, DVar]]
    at: list[dict[int, DVar]]
    occ: dict[int, dict[tuple[int, int], DVar]] = field(default_factory=dict)
    mv: dict[int, dict[tuple[int, int, int], DVar]] = field(default_factory=dict)
    length: DVar | None = None
    windows: tuple[list[int], list[int]] | None = None
    emitted: list = field(default_factory=list)

    def reported(self) -> dict:
        """Every emitted variable a mapping is decoded from, by name."""
        out = {}
        for row in self.on + self.at + list(self.occ.values()) + list(self.mv.values()):
            out.update({var.name: self.emitted[var.index] for var in row.values()})
        return out


def net_windows(problem: CgraProblem, ii: int, lo: list[int], hi: list[int]
                ) -> dict[int, tuple[int, int]]:
    """Per value: the cycles it may be in flight (born earliest .. read latest)."""
    out = {}
    for u, consumers in problem.nets.items():
        first = lo[u] + problem.latency[u]
        last = max(hi[v] + d * ii for v, d in consumers)
        if last >= first:
            out[u] = (first, last)
    return out


def narrowed(windows: tuple[list[int], list[int]] | None,
             within: tuple[list[int], list[int]] | None
             ) -> tuple[list[int], list[int]] | None:
    """``windows`` intersected with ``within`` (None: unchanged); None when one is empty."""
    if windows is None or within is None:
        return windows
    lo = [max(a, b) for a, b in zip(windows[0], within[0])]
    hi = [min(a, b) for a, b in zip(windows[1], within[1])]
    return None if any(a > b for a, b in zip(lo, hi)) else (lo, hi)


def model_size(problem: CgraProblem, ii: int, horizon: int,
               within: tuple[list[int], list[int]] | None = None) -> int:
    """Routing variables the full model would have (0 when the windows are empty);
    ``within`` as in :func:`build_description`."""
    windows = narrowed(time_windows(problem, ii, horizon), within)
    if windows is None:
        return 0
    links = len(problem.link_list)
    return sum((b - a + 1) * (problem.pe_count + links)
               for a, b in net_windows(problem, ii, *windows).values())


def build_description(problem: CgraProblem, ii: int, horizon: int,
                      within: tuple[list[int], list[int]] | None = None,
                      pes: list[list[int]] | None = None
                      ) -> tuple[ModelDescription, FullVars]:
    """The full model at ``ii`` with every operation ending by ``horizon``, once for every
    backend (:meth:`~formulations.solver.ModelDescription.to_cp`, ``to_linear``).
    ``within`` (earliest and latest issue per operation) narrows the issue windows and
    ``pes`` the PEs per operation (a neighbourhood of a mapping: :mod:`.repair`); the
    routing graph shrinks with them."""
    d = ModelDescription(f"{problem.name}_cgra_ii{ii}".replace(" ", "_"))
    windows = narrowed(time_windows(problem, ii, horizon), within)
    if windows is None:
        d.clause([], "C7_recurrence")
        return d, FullVars([], [], windows=None)
    lo, hi = windows
    n = problem.n
    on = [{p: d.bool(f"on_{v}_{p}") for p in (pes[v] if pes else problem.allowed[v])
           if p in problem.allowed[v]} for v in range(n)]
    at = [{c: d.bool(f"at_{v}_{c}") for c in range(lo[v], hi[v] + 1)} for v in range(n)]
    for v in range(n):
        d.exactly_one(on[v].values(), "A1_place")
        d.exactly_one(at[v].values(), "A1_time")
    d.all_different_pairs([(list(on[v].items()), [(c % ii, b) for c, b in at[v].items()])
                           for v in range(n)], ii, "C1_slot", name="C1_slot")
    fv = FullVars(on, at, windows=windows)
    _routes(d, problem, ii, fv)
    _capacity(d, problem, ii, fv)
    first = d.int("first", 0, ii - 1)
    d.min_equality(first, [[(c, b) for c, b in at[v].items()] for v in range(n)], "O1_anchor")
    fv.length = d.int("length", 0, horizon)
    for v in range(n):
        d.linear([(1, fv.length)] + [(-(c + problem.latency[v]), b) for c, b in at[v].items()],
                 0, None, "O1_length")
    d.minimize([(1, fv.length)])
    return d, fv


def build_full_model(problem: CgraProblem, ii: int, horizon: int
                     ) -> tuple[cp_model.CpModel, FullVars]:
    """The CP-SAT model of :func:`build_description` (``fv`` holds the description's
    variables; :meth:`FullVars.reported` names the model's)."""
    d, fv = build_description(problem, ii, horizon)
    model, fv.emitted = d.to_cp()
    return model, fv


def _routes(d: ModelDescription, problem: CgraProblem, ii: int, fv: FullVars) -> None:
    """C4: every register a value sits in has a reason; every read finds the value."""
    links, P = problem.links, problem.pe_count
    into: dict[int, list[int]] = defaultdict(list)
    for p in range(P):
        for q in links[p]:
            into[q].append(p)
    for u, (first, last) in net_windows(problem, ii, *fv.windows).items():
        occ = {(c, p): d.bool(f"occ_{u}_{c}_{p}")
               for c in range(first, last + 1) for p in range(P)}
        mv = {(c, p, q): d.bool(f"mv_{u}_{c}_{p}_{q}")
              for c in range(first, last) for p in range(P) for q in links[p]}
        fv.occ[u], fv.mv[u] = occ, mv
        for (c, p, q), m in mv.items():
            d.implication(m, occ[(c, p)], "C4_route")
        for (c, q), o in occ.items():
            born = fv.at[u].get(c - problem.latency[u])
            reasons = [] if born is None else [born]
            if c > first:
                reasons += [occ[(c - 1, q)]] + [mv[(c - 1, p, q)] for p in into[q]]
            d.clause(reasons + [~o], "C4_route")
            if born is not None:   # born at c: only on u's PE
                here = fv.on[u].get(q)
                d.clause([~o, ~born] + ([here] if here is not None else []), "C4_route")
        for v, dist in problem.nets[u]:
            for c, a in fv.at[v].items():
                for q, b in fv.on[v].items():
                    cell = occ.get((c + dist * ii, q))
                    d.clause([~a, ~b] + ([cell] if cell is not None else []), "C4_read")


def _capacity(d: ModelDescription, problem: CgraProblem, ii: int, fv: FullVars) -> None:
    """C5 registers and C6 links per cycle slot (all iterations in flight)."""
    regs: dict[tuple[int, int], list] = defaultdict(list)
    wires: dict[tuple[int, int, int], list] = defaultdict(list)
    for occ in fv.occ.values():
        for (c, p), o in occ.items():
            regs[(p, c % ii)].append(o)
    for mv in fv.mv.values():
        for (c, p, q), m in mv.items():
            wires[(p, q, c % ii)].append(m)
    for key, cells in sorted(regs.items()):
        if len(cells) > problem.registers:
            d.linear([(1, o) for o in cells], None, problem.registers, "C5_registers",
                     name=f"C5_registers_{key}")
    for key, uses in sorted(wires.items()):
        if len(uses) > 1:
            d.at_most_one(uses, "C6_links")


def full_hint(problem: CgraProblem, fv: FullVars, warm: CgraSchedule) -> dict[DVar, int]:
    """A complete hint from ``warm`` over the description's variables (same II; its cycles
    shifted into the windows)."""
    names = problem.names
    hint: dict = {}
    for v in range(problem.n):
        for p, b in fv.on[v].items():
            hint[b] = int(warm.pe[names[v]] == p)
        for c, b in fv.at[v].items():
            hint[b] = int(warm.cycle[names[v]] == c)
    cells: dict[int, set] = defaultdict(set)
    moves: dict[int, set] = defaultdict(set)
    index = {name: i for i, name in enumerate(names)}
    for (src, _, _), path in warm.routes.items():
        u = index[src]
        cells[u].update((c, p) for p, c in path)
        moves[u].update((ca, a, b) for (a, ca), (b, _) in zip(path, path[1:]) if a != b)
    for u, occ in fv.occ.items():
        for key, o in occ.items():
            hint[o] = int(key in cells[u])
    for u, mv in fv.mv.items():
        for key, m in mv.items():
            hint[m] = int(key in moves[u])
    hint[fv.length] = warm.length
    return hint


def decode_full(problem: CgraProblem, ii: int, fv: FullVars, result: SolveResult,
                method: str = "cp-sat") -> CgraSchedule:
    """The mapping of a solved full model: PEs, cycles and one route per edge."""
    values = result.values
    names = problem.names
    pe = [next(p for p, b in fv.on[v].items() if values[b.name] > 0.5) for v in range(problem.n)]
    t = [next(c for c, b in fv.at[v].items() if values[b.name] > 0.5) for v in range(problem.n)]
    routes = {}
    for u, v, d in problem.edges:
        routes[(names[u], names[v], d)] = _trace(problem, ii, fv, values, u,
                                                 (pe[u], t[u] + problem.latency[u]),
                                                 (pe[v], t[v] + d * ii))
    return CgraSchedule(ii=ii, pe={names[v]: pe[v] for v in range(problem.n)},
                        cycle={names[v]: t[v] for v in range(problem.n)},
                        latency={names[v]: problem.latency[v] for v in range(problem.n)},
                        routes=routes, method=method)


def _trace(problem: CgraProblem, ii: int, fv: FullVars, values: dict, u: int,
           birth: tuple[int, int], read: tuple[int, int]) -> list[tuple[int, int]]:
    """Walk back from the read to the birth through the value's registers and moves."""
    occ, mv = fv.occ[u], fv.mv[u]
    q, c = read
    path = [(q, c)]
    while (q, c) != birth:
        if c <= birth[1]:
            raise ValueError(f"value {problem.names[u]} has no route to PE {q} cycle {read[1]}")
        stay = occ.get((c - 1, q))
        if stay is not None and values[stay.name] > 0.5:
            c -= 1
        else:
            q = next(p for p in range(problem.pe_count)
                     if (c - 1, p, q) in mv and values[mv[(c - 1, p, q)].name] > 0.5)
            c -= 1
        path.append((q, c))
    return path[::-1]


def solve_full(problem: CgraProblem, ii: int, horizon: int, budget: Budget, seed: int = 0,
               warm: CgraSchedule | None = None) -> tuple[SolveResult, CgraSchedule | None]:
    """Build, solve (hinted by ``warm`` at this II) and decode the full model with all of
    ``budget`` (CP-SAT's deterministic time at :data:`~formulations.cgra.work.FULL_WORK_PER_SECOND`
    units per planned second, the deadline as the cap; the work used is charged to it)."""
    model, fv = build_full_model(problem, ii, horizon)
    hint = full_hint(problem, fv, warm) if warm is not None and warm.ii == ii and \
        fv.windows is not None and _fits(problem, fv, warm) else None
    if hint is not None:
        hint = ModelDescription.cp_hint(fv.emitted, hint)
    limit, steps = budget.cp_limits(budget.left(), FULL_WORK_PER_SECOND)
    result = solve_cp_model(model, time_limit=limit, seed=seed, workers=1, hint=hint,
                            variables=fv.reported(), params=CP_PARAMS, deterministic_time=steps)
    budget.charge(result, FULL_WORK_PER_SECOND)
    if not result.has_solution:
        return result, None
    return result, decode_full(problem, ii, fv, result)


def _fits(problem: CgraProblem, fv: FullVars, warm: CgraSchedule) -> bool:
    """Whether ``warm``'s cycles lie in the model's windows (else no hint)."""
    return all(warm.cycle[problem.names[v]] in fv.at[v] for v in range(problem.n))
