"""The tile layout relaxation of the Streaming Engine model (source 004): a fast II refuter.

Scope
-----
The one-SDF CP model (:mod:`formulations.streaming.model`) decides tiles, slots and issue
cycles together.
Its hardest part is often the layout alone: putting the instructions on a line of tiles with
every operand within reach. :func:`build_layout_model` keeps only the rules about tiles, as a
pure Boolean model (``on[c][t]``: memory component ``c`` on tile ``t``) that CP-SAT's clause
learning handles well:

* ``A3 slot`` (counted)  at most ``II`` instructions per tile;
* ``M1 memory``          one tile per memory component (the Boolean row is per component);
* ``R1 reach``           ``on[u][t] => OR(on[v][t'] for |t' - t| <= reach)`` per edge, both
  ways;
* ``B1 starts``, ``S1 siblings``  at most one member of each group per tile;
* symmetry: tile 0 is used (translation).

It is a relaxation (timing, holds and delay entries are left out), so INFEASIBLE at some II proves
the full model INFEASIBLE at that II; :func:`layout_refutes` is that test.

Examples
--------
>>> from hardware import load_hardware
>>> from model.graph import Graph, Node, Edge
>>> from formulations.streaming.problem import problem_from_graph
>>> star = Graph("star", [Node("p")] + [Node(f"c{i}") for i in range(5)],
...              [Edge("p", f"c{i}") for i in range(5)])
>>> p = problem_from_graph(star, load_hardware("se16"))
>>> from formulations.solver import Budget
>>> layout_refutes(p, 1, Budget(5)), layout_refutes(p, 2, Budget(5))
(True, False)
"""

from __future__ import annotations

from ortools.sat.python import cp_model

from formulations.solver import Budget, SolveResult, SolveStatus
from formulations.streaming.model import (  # its CP-SAT parameters: 2-5x faster here
    LAYOUT_WORK_PER_SECOND, solve_model)
from formulations.streaming.problem import StreamingProblem

__all__ = ["build_layout_model", "add_layout_rules", "solve_layout", "layout_refutes"]


def build_layout_model(problem: StreamingProblem, ii: int) -> tuple[cp_model.CpModel, list]:
    """The Boolean layout model at ``ii`` and its ``on[c][t]`` literals."""
    model = cp_model.CpModel()
    model.name = f"{problem.name}_layout_ii{ii}"
    tiles = problem.tiles
    on = [[model.new_bool_var(f"on{c}_{t}") for t in range(tiles)]
          for c in range(len(problem.components))]
    for row in on:
        model.add_exactly_one(row)
    add_layout_rules(model, problem, on, ii)
    if on:
        model.add_bool_or([row[0] for row in on])  # translation symmetry: tile 0 is used
    return model, on


def add_layout_rules(model: cp_model.CpModel, problem: StreamingProblem, on: list,
                     ii: int) -> None:
    """The layout rules over ``on[c][t]`` (not added to the full model: measured, the
    redundant literals slow its search down by 1.2-1.6x)."""
    comp = problem.component
    for t in range(problem.tiles):
        model.add(sum(len(members) * on[c][t] for c, members in enumerate(problem.components))
                  <= ii).with_name(f"A3_slot_count_{t}")
    _reach(model, problem, on)
    groups = ([problem.starts] if len(problem.starts) > 1 else []) + \
        [kids for kids in problem.children if len(kids) > 1]
    for group in groups:
        for t in range(problem.tiles):
            model.add_at_most_one([on[comp[i]][t] for i in group])


def _reach(model: cp_model.CpModel, problem: StreamingProblem, on: list) -> None:
    """R1 as clauses: a component's neighbour sits within reach of it."""
    tiles, comp, reach = problem.tiles, problem.component, problem.reach
    pairs = sorted({(comp[u], comp[v]) for u, v, _ in problem.edges if comp[u] != comp[v]})
    for a, b in pairs:
        for t in range(tiles):
            window = range(max(0, t - reach), min(tiles, t + reach + 1))
            model.add_bool_or([on[b][s] for s in window] + [on[a][t].Not()])
            model.add_bool_or([on[a][s] for s in window] + [on[b][t].Not()])


def solve_layout(problem: StreamingProblem, ii: int, budget: Budget, seed: int = 0
                 ) -> tuple[SolveResult, list[int] | None]:
    """Solve the layout model with all of ``budget`` (planned seconds charged to it, see
    :func:`~formulations.streaming.model.solve_model`); the result and a tile per
    instruction (None without one)."""
    model, on = build_layout_model(problem, ii)
    result = solve_model(model, budget, seed=seed,
                         variables={lit.name: lit for row in on for lit in row},
                         rate=LAYOUT_WORK_PER_SECOND)
    if not result.has_solution:
        return result, None
    comp_tile = [next(t for t, lit in enumerate(row) if result.values[lit.name]) for row in on]
    return result, [comp_tile[problem.component[i]] for i in range(problem.n)]


def layout_refutes(problem: StreamingProblem, ii: int, budget: Budget, seed: int = 0) -> bool:
    """True when the layout relaxation is proven INFEASIBLE at ``ii`` (so is the full model)
    within ``budget``."""
    result, _ = solve_layout(problem, ii, budget, seed)
    return result.status is SolveStatus.INFEASIBLE
