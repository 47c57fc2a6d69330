"""The placement-timing relaxation of the CGRA model: II proofs and length bounds.

Scope
-----
The full model (:mod:`formulations.cgra.model`) decides PEs, issue cycles and every register
and link a value uses, cycle by cycle. :func:`build_relaxation` keeps what needs no routes:

* ``C1 slot``    one operation per PE per cycle slot (``AllDifferent(pe * II + slot)``);
* ``C2 memory``  memory operations on memory PEs (the PE domains);
* ``C4 route``   a value needs at least ``hops(pe(u), pe(v))`` cycles:
  ``t(v) + d II >= t(u) + latency(u) + hops``;
* aggregates of ``C5``/``C6``: a value crossing ``h`` hops uses ``h`` link slots and sits in
  registers for at least ``h + 1`` cycles, so the values' largest hop counts sum to at most
  ``links x II`` and their ``h + 1`` to at most ``registers x PEs x II``.

Every legal mapping satisfies these, so INFEASIBLE proves the II impossible. The issue cycles
need no horizon: given the PEs and slots, the least issue cycles meeting the constraints
start within one II and grow by at most ``ceil((II - 1 + latency + diameter) / II)`` IIs
per operation (:func:`safe_horizon`), and their length is never above the mapping's; so the
relaxation's optimal length is a lower bound on the length of every mapping at that II.

Examples
--------
>>> from hardware import load_hardware
>>> from model.graph import Graph, Node, Edge
>>> from formulations.cgra.problem import problem_from_graph
>>> ring = Graph("ring", [Node(f"n{i}") for i in range(6)],
...              [Edge(f"n{i}", f"n{(i + 1) % 6}", distance=int(i == 5)) for i in range(6)])
>>> p = problem_from_graph(ring, load_hardware("cgra4x4"))
>>> from formulations.solver import Budget
>>> [solve_relaxation(p, ii, Budget(5))[0].status.name for ii in (5, 6)]
['INFEASIBLE', 'OPTIMAL']
>>> solve_relaxation(p, 6, Budget(5))[0].objective   # the ring on one PE, one slot each
6.0
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from ortools.sat.python import cp_model

from formulations.cgra.problem import CgraProblem, time_windows
from formulations.cgra.work import RELAX_WORK_PER_SECOND
from formulations.solver import Budget, SolveResult, solve_cp_model

__all__ = ["RelaxVars", "safe_horizon", "build_relaxation", "solve_relaxation", "CP_PARAMS"]

#: CP-SAT parameters of the CGRA models (as the Streaming Engine's: the models are
#: disjunctive; their linear relaxation costs time and gives little).
CP_PARAMS = {"linearization_level": 0, "max_presolve_iterations": 1, "cp_model_probing_level": 1}


@dataclass
class RelaxVars:
    """The relaxation's variables: PE index and issue cycle per operation, the length."""

    pe: list[Any]
    t: list[Any]
    length: Any


def safe_horizon(problem: CgraProblem, ii: int) -> int:
    """A horizon no least schedule of the relaxation exceeds (see the module)."""
    step = math.ceil((ii - 1 + max(problem.latency, default=1) + problem.diameter) / ii)
    return ii + ii * problem.n * step + max(problem.latency, default=1)


def build_relaxation(problem: CgraProblem, ii: int, slack: int = 0, objective: bool = True
                     ) -> tuple[cp_model.CpModel, RelaxVars]:
    """The relaxation at ``ii`` (objective: length of one iteration). ``slack`` > 0 asks
    every edge between PEs for that many spare cycles (no longer a relaxation: a placement
    that leaves the router room, see :mod:`formulations.cgra.sweep`)."""
    model = cp_model.CpModel()
    model.name = f"{problem.name}_relax_ii{ii}".replace(" ", "_")
    horizon = safe_horizon(problem, ii)
    windows = time_windows(problem, ii, horizon)
    n, P = problem.n, problem.pe_count
    if windows is None:
        model.add_bool_or([])  # C7: the recurrences do not fit the II
        return model, RelaxVars([], [], model.new_constant(0))
    lo, hi = windows
    pe = [model.new_int_var_from_domain(cp_model.Domain.from_values(problem.allowed[v]), f"pe{v}")
          for v in range(n)]
    t = [model.new_int_var(lo[v], hi[v], f"t{v}") for v in range(n)]
    slot = [model.new_int_var(0, ii - 1, f"s{v}") for v in range(n)]
    for v in range(n):
        k = model.new_int_var(0, hi[v] // ii + 1, f"k{v}")
        model.add(t[v] == slot[v] + ii * k)
    model.add_all_different([pe[v] * ii + slot[v] for v in range(n)]).with_name("C1_slot")
    on = _on(model, problem, pe)
    row = [sum(problem.pes[q][0] * b for q, b in on[v].items()) for v in range(n)]
    col = [sum(problem.pes[q][1] * b for q, b in on[v].items()) for v in range(n)]
    hops_of: dict[int, list] = {}
    for e, (u, v, d) in enumerate(problem.edges):
        if u == v:
            continue
        hops = _hops(model, problem, row[u] - row[v], col[u] - col[v], e)
        _route_rule(model, t[v] + d * ii - t[u] - problem.latency[u], hops, slack, e)
        hops_of.setdefault(u, []).append(hops)
    _aggregates(model, problem, ii, hops_of)
    _per_pe(model, problem, ii, on)
    if n:
        first = model.new_int_var(0, ii - 1, "first")
        model.add_min_equality(first, t)
    length = model.new_int_var(0, horizon + max(problem.latency, default=1), "length")
    for v in range(n):
        model.add(length >= t[v] + problem.latency[v])
    if objective:      # without it: a feasibility question (the II proof), often far faster
        model.minimize(length)
    return model, RelaxVars(pe, t, length)


def _route_rule(model: cp_model.CpModel, gap: Any, hops: Any, slack: int, e: int) -> None:
    """``gap >= hops`` (plus ``slack`` when the value changes PE)."""
    model.add(gap >= hops).with_name(f"C4_route_{e}")
    if slack:
        moved = model.new_bool_var(f"moved{e}")
        model.add(hops >= 1).only_enforce_if(moved)
        model.add(hops == 0).only_enforce_if(moved.Not())
        model.add(gap >= hops + slack).only_enforce_if(moved)


def _aggregates(model: cp_model.CpModel, problem: CgraProblem, ii: int,
                hops_of: dict[int, list]) -> None:
    """Link and register slots the values' hop counts need at least (see the module)."""
    most = []
    for u, hops in sorted(hops_of.items()):
        m = model.new_int_var(0, problem.diameter, f"far{u}")
        model.add_max_equality(m, hops)
        most.append(m)
    if not most:
        return
    model.add(sum(most) <= len(problem.link_list) * ii).with_name("C6_links_total")
    values = len(problem.nets)
    model.add(sum(most) + values <= problem.registers * problem.pe_count * ii
              ).with_name("C5_registers_total")


def _on(model: cp_model.CpModel, problem: CgraProblem, pe: list) -> list[dict]:
    """``on[v][q]``: operation ``v`` on PE ``q`` (channelled to ``pe[v]``)."""
    on = []
    for v in range(problem.n):
        row = {q: model.new_bool_var(f"on{v}_{q}") for q in problem.allowed[v]}
        model.add_exactly_one(row.values())
        model.add(pe[v] == sum(q * b for q, b in row.items()))
        on.append(row)
    return on


def _axis(model: cp_model.CpModel, delta: Any, size: int, kind: str, name: str) -> Any:
    """Hops along one axis for a difference ``delta`` of coordinates."""
    span = model.new_int_var(0, size, f"abs{name}")
    model.add_abs_equality(span, delta)
    if kind == "torus":
        short = model.new_int_var(0, size, f"wrap{name}")
        model.add_min_equality(short, [span, size - span])
        return short
    if kind == "one-hop":
        half = model.new_int_var(0, size, f"half{name}")
        model.add(2 * half >= span)
        model.add(2 * half <= span + 1)
        return half
    return span


def _hops(model: cp_model.CpModel, problem: CgraProblem, dr: Any, dc: Any, e: int) -> Any:
    """The hop distance of the neighbour pattern from the row and column differences:
    mesh ``|dr| + |dc|``, torus with wrap-around, diagonal ``max(|dr|, |dc|)``, one-hop
    ``ceil(|dr| / 2) + ceil(|dc| / 2)`` (each exact for its pattern)."""
    kind = problem.neighbours
    a = _axis(model, dr, problem.rows, kind, f"r{e}")
    b = _axis(model, dc, problem.cols, kind, f"c{e}")
    hops = model.new_int_var(0, problem.diameter, f"hops{e}")
    if kind == "diagonal":
        model.add_max_equality(hops, [a, b])
    else:
        model.add(hops == a + b)
    return hops


def _per_pe(model: cp_model.CpModel, problem: CgraProblem, ii: int, on: list) -> None:
    """Per PE ``q``: values read on ``q`` but born elsewhere enter over ``q``'s in-links (one
    value per link per slot), values born on ``q`` and read elsewhere leave over its
    out-links, and every value born on or read on ``q`` sits in its registers at least one
    cycle: ``in <= in-links x II``, ``out <= out-links x II``, ``born + in <= registers x
    II``."""
    P = problem.pe_count
    indeg = [0] * P
    for p in range(P):
        for q in problem.links[p]:
            indeg[q] += 1
    into: list[list] = [[] for _ in range(P)]
    out: list[list] = [[] for _ in range(P)]
    born: list[list] = [[] for _ in range(P)]
    for u, consumers in sorted(problem.nets.items()):
        readers = [v for v, _ in consumers if v != u]
        for q in range(P):
            here = on[u].get(q)
            if here is not None:
                born[q].append(here)
            if not readers:
                continue
            need = model.new_bool_var(f"in{u}_{q}")
            leave = model.new_bool_var(f"out{u}_{q}") if here is not None else None
            for v in readers:
                there = on[v].get(q)
                if there is not None:   # read on q, born elsewhere: it enters q
                    model.add_bool_or([there.Not(), need] + ([here] if here is not None else []))
                if leave is not None:   # born on q, read elsewhere: it leaves q
                    model.add_bool_or([here.Not(), leave] + ([there] if there is not None else []))
            into[q].append(need)
            if leave is not None:
                out[q].append(leave)
    for q in range(P):
        model.add(sum(into[q]) <= indeg[q] * ii).with_name(f"C6_in_links_{q}")
        model.add(sum(out[q]) <= len(problem.links[q]) * ii).with_name(f"C6_out_links_{q}")
        model.add(sum(born[q]) + sum(into[q]) <= problem.registers * ii
                  ).with_name(f"C5_registers_{q}")


def solve_relaxation(problem: CgraProblem, ii: int, budget: Budget, seed: int = 0,
                     hint: dict | None = None, slack: int = 0, objective: bool = True
                     ) -> tuple[SolveResult, RelaxVars]:
    """Solve :func:`build_relaxation` at ``ii`` with all of ``budget`` (CP-SAT's
    deterministic time at :data:`~formulations.cgra.work.RELAX_WORK_PER_SECOND` units per
    planned second, the deadline as the cap; the work used is charged to it); the result
    and the variables. ``hint`` maps variable names (``pe<v>``, ``t<v>``) to values."""
    model, rv = build_relaxation(problem, ii, slack, objective)
    variables = {v.name: v for v in rv.pe + rv.t}
    hinted = {variables[k]: val for k, val in (hint or {}).items() if k in variables}
    limit, steps = budget.cp_limits(budget.left(), RELAX_WORK_PER_SECOND)
    result = solve_cp_model(model, time_limit=limit, seed=seed, workers=1,
                            hint=hinted or None, variables=variables, params=CP_PARAMS,
                            deterministic_time=steps)
    budget.charge(result, RELAX_WORK_PER_SECOND)
    return result, rv
