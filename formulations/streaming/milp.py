"""The Streaming Engine model as a MILP (source 004): the CP model's twin on a linear backend.

Scope
-----
:func:`build_milp` states the rules of :mod:`formulations.streaming.model` for one II over
``x[n,t,s]`` binaries (instruction ``n`` on tile ``t`` in slot ``s``) as a
:class:`~formulations.solver.LinearModel` (HiGHS, SCIP, or written as ``.mps``): data ->
variables -> constraints (``A1 place``, ``T1 modulo``, ``A3 slot``, ``M1 memory``,
``B1 starts``, ``S1 siblings``, ``R1 reach``, ``T2 timing``, ``H1 hold``) -> objective
(makespan). :func:`solve_milp` solves and decodes one II; :func:`sweep_milp` sweeps II up
from the lower bound, as the CP sweep does (without its proofs).

Caveats: the reach rows assume link latency = ``|dtile|`` (true of se16); another link table
is refused (NotImplementedError). MILPs stall on this disjunctive model where CP-SAT proves
it: the CP model is the default.
"""

from __future__ import annotations

from pathlib import Path

from formulations.solver import LinearModel, SolveResult, SolveSettings, SolveStatus, quicksum
from formulations.streaming.problem import (StreamingInfeasible, StreamingProblem,
                                            StreamingSchedule, asap_and_tail, default_horizon,
                                            lower_bounds, schedule_from_lists)

__all__ = ["build_milp", "solve_milp", "sweep_milp"]

def build_milp(problem: StreamingProblem, ii: int, horizon: int | None = None) -> LinearModel:
    """The same model as a MILP over ``x[n,t,s]`` binaries (HiGHS/SCIP/.mps), for one II.

    Examples
    --------
    >>> from hardware import load_hardware
    >>> from model.graph import Graph, Node, Edge
    >>> g = Graph("chain", [Node("a"), Node("b")], [Edge("a", "b")])
    >>> from formulations.streaming.problem import problem_from_graph
    >>> m = build_milp(problem_from_graph(g, load_hardware("se16")), 1)
    >>> m.solve(backend="highs", time_limit=10).objective
    7.0
    """
    horizon = horizon or default_horizon(problem, ii)
    T, n, L = problem.tiles, problem.n, problem.op_latency
    asap, tail = asap_and_tail(problem)
    m = LinearModel(f"{problem.name}_ii{ii}".replace("/", "_").replace(" ", "_"))
    x = {(i, t, s): m.add_binary(f"x_{i}_{t}_{s}") for i in range(n) for t in range(T)
         for s in range(ii)}
    y = {(i, t): quicksum(x[i, t, s] for s in range(ii)) for i in range(n) for t in range(T)}
    pos = [quicksum(t * y[i, t] for t in range(T)) for i in range(n)]
    slot = [quicksum(s * x[i, t, s] for t in range(T) for s in range(ii)) for i in range(n)]
    tau = [m.add_var(f"tau_{i}", asap[i], max(asap[i], horizon - tail[i]), integer=True)
           for i in range(n)]
    k = [m.add_var(f"k_{i}", 0, horizon // ii + 1, integer=True) for i in range(n)]
    for i in range(n):
        m.add(quicksum(x[i, t, s] for t in range(T) for s in range(ii)) == 1, family="A1_place")
        m.add(tau[i] - ii * k[i] - slot[i] == 0, family="T1_modulo")
    for t in range(T):
        for s in range(ii):
            m.add(quicksum(x[i, t, s] for i in range(n)) <= 1, family="A3_slot")
    _milp_groups(m, problem, y)
    delay_q = _milp_edges(m, problem, ii, pos, tau, y, horizon)
    for t in range(T):
        m.add(quicksum(y[i, t] for i in range(n)) + quicksum(q[t] for q in delay_q) <= ii,
              family="H1_hold")
    makespan = m.add_var("makespan", 0, horizon + L, integer=True)
    for i in range(n):
        m.add(makespan - tau[i] >= L, family="O1_makespan")
    m.minimize(makespan)
    return m


def _milp_groups(m: LinearModel, problem: StreamingProblem, y: dict) -> None:
    T = problem.tiles
    for members in problem.components:
        for i in members[1:]:
            for t in range(T):
                m.add(y[i, t] - y[members[0], t] == 0, family="M1_memory")
    groups = [("B1_starts", problem.starts)] + [("S1_siblings", kids) for kids in problem.children]
    for family, group in groups:
        if len(group) > 1:
            for t in range(T):
                m.add(quicksum(y[i, t] for i in group) <= 1, family=family)


def _milp_edges(m: LinearModel, problem: StreamingProblem, ii: int, pos: list, tau: list,
                y: dict, horizon: int) -> list[list]:
    """Reach, exact |dtile| latency (se16 links: latency = |dtile|), timing and delay entries."""
    T, L, R = problem.tiles, problem.op_latency, problem.reach
    if any(problem.latency[dt] != abs(dt) for dt in problem.latency):
        raise NotImplementedError("the MILP version assumes link latency = |dtile| (se16)")
    max_delays = ii - 1  # the consumer's tile has II slots and the consumer takes one
    delay_q = []
    for e, (u, v, d) in enumerate(problem.edges):
        plus = m.add_var(f"dp_{e}", 0, R, integer=True)
        minus = m.add_var(f"dm_{e}", 0, R, integer=True)
        sign = m.add_binary(f"sg_{e}")
        m.add(pos[v] - pos[u] - plus + minus == 0, family="R1_reach")
        m.add(plus - R * sign <= 0, family="R1_reach")
        m.add(minus + R * sign <= R, family="R1_reach")
        hold = tau[v] - tau[u] - plus - minus + d * ii - L
        delays = m.add_var(f"p_{e}", 0, max_delays, integer=True)
        m.add(hold >= 0, family="T2_timing")
        m.add(hold - ii * delays >= 0, family="H1_hold")
        m.add(hold - ii * delays <= ii - 1, family="H1_hold")
        q = [m.add_var(f"q_{e}_{t}", 0, ii, integer=True) for t in range(T)]
        for t in range(T):
            m.add(q[t] - ii * y[v, t] <= 0, family="H1_hold")
        m.add(quicksum(q) - delays >= 0, family="H1_hold")
        delay_q.append(q)
    return delay_q


def solve_milp(problem: StreamingProblem, ii: int, backend: str = "highs",
               time_limit: float = 30.0, seed: int = 0) -> tuple[SolveResult, StreamingSchedule | None]:
    """Solve :func:`build_milp` on a linear backend and decode it."""
    m = build_milp(problem, ii)
    result = m.solve(backend=backend, time_limit=time_limit, seed=seed)
    if not result.has_solution:
        return result, None
    tile, tau = [], []
    for i in range(problem.n):
        on = [(t, s) for t in range(problem.tiles) for s in range(ii)
              if result.values.get(f"x_{i}_{t}_{s}", 0) > 0.5]
        tile.append(on[0][0])
        tau.append(int(round(result.values[f"tau_{i}"])))
    return result, schedule_from_lists(problem, ii, tile, tau, method=f"milp:{backend}",
                                       status="optimal" if result.status is SolveStatus.OPTIMAL
                                       else "feasible")


def sweep_milp(problem: StreamingProblem, settings: SolveSettings,
               warm: StreamingSchedule | None = None) -> StreamingSchedule:
    """Smallest II, then fewest cycles, on the linear backend ``settings.backend``: one MILP
    per II from the lower bound up (each written as ``.mps`` when ``settings.export_dir`` is
    set), ``settings.time_limit`` seconds each. ``warm`` is kept when no MILP finds a
    schedule. Raises :class:`StreamingInfeasible` when neither gives one.
    """
    results = []
    for ii in range(lower_bounds(problem)["ii"], problem.max_ii + 1):
        if settings.export_dir:
            build_milp(problem, ii).write_mps(
                str(Path(settings.export_dir) / f"streaming_{problem.name}_ii{ii}.mps"))
        result, sched = solve_milp(problem, ii, settings.backend, settings.time_limit,
                                   settings.seed)
        results.append(result)
        if sched is not None:
            sched.results = results
            return sched
    if warm is not None:
        warm.results = results
        return warm
    raise StreamingInfeasible([f"no II <= {problem.max_ii} admits a mapping "
                               f"({settings.backend})"])
