"""The CP-SAT model of one SDF at a fixed II (source 004): tile, slot and issue cycle together.

Scope
-----
Every instruction ``n`` of one synchronous data-flow (SDF) gets a tile, a slot ``< II`` and an
issue cycle ``tau[n]`` with ``tau[n] = slot[n] + II * k[n]`` (one spoke counter, common phase).
:func:`build_cp_model` reads top to bottom as data -> variables -> constraints -> objective,
with the constraint families named as in the digest (§4.4,
:data:`~formulations.streaming.problem.RULES`):

* ``A3 slot``      one instruction per (tile, slot): ``AllDifferent(tile * II + slot)``;
* ``M1 memory``    instructions sharing a tile-memory variable (transitively) on one tile;
* ``M2 capacity``  tile-memory variables of a tile fit its memories (``memories x depth``);
* ``B1 starts``    instructions that start the SDF on distinct tiles;
* ``S1 siblings``  children of a common parent on distinct tiles;
* ``R1 reach``     ``|tile[v] - tile[u]| <= reach`` with the link latency from the spec;
* ``T2 timing``    operand arrival ``tau[u] + L + lat`` <= issue ``tau[v] + d * II`` (``L`` the
  instruction latency, ``d`` the loop-carried distance);
* ``H1 hold``      the fabric has no queues: a value held ``h`` cycles after it arrives needs
  ``h // II`` delay entries (pass slots) on the consumer's tile, which count against its II slots.

Objective: the fewest cycles (makespan = last ready time, ``max tau + L``), never below the
sibling-latency bound (:mod:`formulations.streaming.bounds`), within issue windows. Then
solve (:func:`solve_model`, :data:`CP_PARAMS`) and decode (:func:`decode_schedule`). The II
sweep that uses this model is :mod:`formulations.streaming.sweep`; the same model as a MILP is
:mod:`formulations.streaming.milp`.

Caveats
-------
* Delay semantics (DESIGN.md leaves the exact mechanism open): a delay entry is a slot of the
  consumer's tile that re-latches the held value for another II cycles (a shift register of
  ``h // II`` entries); any free slot of that tile serves. The simulator (:mod:`sim.streaming`)
  checks the same rule.
* One SF output per spoke entry (the paper's singular) is not enforced: a producer may send to
  consumers in several directions; the spoke entry lists every SF output it drives.
* Direct links only (``|dtile| <= max link offset``); no relay through tiles or the AF inside
  one SDF (pass trees and AF splits: :mod:`formulations.streaming.split`).

Examples
--------
>>> from hardware import load_hardware
>>> from model.graph import Graph, Node, Edge
>>> from formulations.streaming.problem import problem_from_graph
>>> g = Graph("chain", [Node("a"), Node("b"), Node("c")], [Edge("a", "b"), Edge("b", "c")])
>>> p = problem_from_graph(g, load_hardware("se16"))
>>> model, cp = build_cp_model(p, 1)
>>> from formulations.solver import Budget
>>> result = solve_model(model, Budget(5), variables=reported_variables(cp))
>>> decode_schedule(p, 1, cp, result).cycles
11
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import Any, Iterable

import networkx as nx
from ortools.sat.python import cp_model

from formulations.solver import Budget, DVar, ModelDescription, SolveResult, solve_cp_planned
from formulations.streaming.bounds import cycle_bound, issue_windows
from formulations.streaming.problem import (RULES, WINDOW_FAMILIES, StreamingProblem,
                                            StreamingSchedule, asap_and_tail, default_horizon,
                                            schedule_from_lists)

__all__ = ["CP_PARAMS", "CpVars", "build_description", "build_cp_model", "canonical_schedule",
           "solve_model",
           "warm_hint", "tile_hint", "decode_schedule", "reported_variables",
           "SE_WORK_PER_SECOND", "LAYOUT_WORK_PER_SECOND", "SOLVE_CHARGE", "CHARGE_PER_CONSTRAINT"]

@dataclass
class CpVars:
    """The variables a schedule is read from (tile, slot, issue cycle): a description's
    (:class:`~formulations.solver.DVar`) or those of the CP model built from it."""

    tile: list[Any]
    slot: list[Any]
    tau: list[Any]
    makespan: Any


def build_description(problem: StreamingProblem, ii: int, horizon: int | None = None,
                      families: Iterable[str] | None = None
                      ) -> tuple[ModelDescription, CpVars]:
    """The model of one SDF at a fixed ``ii`` (objective: makespan), once for every backend
    (:meth:`~formulations.solver.ModelDescription.to_cp`, ``to_linear``); ``families`` keeps
    only those rule families (for :func:`explain`); default all."""
    keep = set(RULES) if families is None else set(families)
    horizon, lo, hi, windows = _issue_bounds(problem, ii, horizon, keep)
    d = ModelDescription(f"{problem.name}_ii{ii}")
    # -- variables: tile, slot, k and issue cycle per instruction (one tile per memory component)
    comp_tile = [d.int(f"ctile{c}", 0, problem.tiles - 1) for c in range(len(problem.components))]
    if "M1 memory" in keep:
        tile = [comp_tile[problem.component[i]] for i in range(problem.n)]
    else:
        tile = [d.int(f"tile{i}", 0, problem.tiles - 1) for i in range(problem.n)]
    slot = [d.int(f"slot{i}", 0, ii - 1) for i in range(problem.n)]
    tau = [d.int(f"tau{i}", lo[i], hi[i]) for i in range(problem.n)]
    k = [d.int(f"k{i}", 0, horizon // ii + 1) for i in range(problem.n)]
    for i in range(problem.n):
        d.linear([(1, tau[i]), (-1, slot[i]), (-ii, k[i])], 0, 0, "T1_modulo",
                 name=f"T1_modulo_{i}")
    _anchor(d, problem, ii, tau)
    if "R1 reach" in keep:  # the symmetry holds for the full rule set (explain relaxes some)
        _canonical_tiles(d, problem, tile)
    # -- constraints, by family
    if "A3 slot" in keep:
        d.all_different_pairs([([(1, tile[i])], [(1, slot[i])]) for i in range(problem.n)], ii,
                              "A3_slot", name="A3_slot")
    if "B1 starts" in keep and len(problem.starts) > 1:
        d.all_different([tile[i] for i in problem.starts], "B1_starts", name="B1_starts")
    if "S1 siblings" in keep:
        for p, kids in enumerate(problem.children):
            if len(kids) > 1:
                d.all_different([tile[c] for c in kids], "S1_siblings", name=f"S1_siblings_{p}")
    _add_edges(d, problem, ii, tile, tau, keep, horizon)
    if "M2 capacity" in keep:
        _add_var_capacity(d, problem, comp_tile)
    return d, CpVars(tile, slot, tau, _makespan(d, problem, ii, tau, keep, horizon, windows))


def _issue_bounds(problem: StreamingProblem, ii: int, horizon: int | None, keep: set[str]
                  ) -> tuple[int, list[int], list[int], tuple | None]:
    """The horizon, the earliest and latest issue per instruction, and the issue windows
    (None when they are off or empty)."""
    holds = "H1 hold" in keep
    if not holds:
        horizon = horizon or default_horizon(problem, ii)
    windows = None
    if WINDOW_FAMILIES <= keep:
        windows = issue_windows(problem, ii, horizon, holds)
    horizon = horizon or default_horizon(problem, ii)
    asap, tail = asap_and_tail(problem)
    lo = asap if "T2 timing" in keep else [0] * problem.n
    hi = [max(asap[i], horizon - tail[i]) for i in range(problem.n)]
    if windows is not None:
        lo, hi = windows
        horizon = max(hi, default=0)
    return horizon, lo, hi, windows


def _makespan(d: ModelDescription, problem: StreamingProblem, ii: int, tau: list,
              keep: set[str], horizon: int, windows: tuple | None) -> DVar:
    """Objective: fewest cycles (never below the sibling-latency bound when it applies)."""
    floor = cycle_bound(problem, ii) if WINDOW_FAMILIES <= keep else 0
    makespan = d.int("makespan", 0, max(floor, horizon + problem.op_latency))
    d.linear([(1, makespan)], floor, None, "O1_cycle_bound", name="O1_cycle_bound")
    if WINDOW_FAMILIES <= keep and windows is None:  # no schedule within the horizon / at ii
        d.linear([(1, makespan)], None, floor - 1, "T2_windows_empty", name="T2_windows_empty")
    for i in range(problem.n):
        d.linear([(1, makespan), (-1, tau[i])], problem.op_latency, None, "O1_makespan")
    d.minimize([(1, makespan)])
    return makespan


def build_cp_model(problem: StreamingProblem, ii: int, horizon: int | None = None,
                   families: Iterable[str] | None = None) -> tuple[cp_model.CpModel, CpVars]:
    """The CP-SAT model of :func:`build_description` and its variables."""
    d, dv = build_description(problem, ii, horizon, families)
    model, out = d.to_cp()
    return model, CpVars(*([out[v.index] for v in row] for row in (dv.tile, dv.slot, dv.tau)),
                         out[dv.makespan.index])


def _anchor(d: ModelDescription, problem: StreamingProblem, ii: int, tau: list) -> None:
    """Break time-translation symmetry: each weakly connected part starts within one II."""
    und = nx.Graph()
    und.add_nodes_from(range(problem.n))
    und.add_edges_from((u, v) for u, v, _ in problem.edges)
    for part in sorted((sorted(c) for c in nx.connected_components(und)), key=lambda c: c[0]):
        first = d.int(f"anchor{part[0]}", 0, ii - 1)
        d.min_equality(first, [[(1, tau[i])] for i in part], "O2_anchor")
    if problem.n:  # shift everything to start at 0
        d.min_equality(d.constant(0), [[(1, t)] for t in tau], "O2_anchor")


def _canonical_tiles(d: ModelDescription, problem: StreamingProblem, tile: list) -> None:
    """Break translation and mirror symmetry of the tile line: the smallest tile used is 0, and
    the first instruction sits in the left half of the span used."""
    if not problem.n:
        return
    highest = d.int("highest_tile", 0, problem.tiles - 1)
    d.min_equality(d.constant(0), [[(1, t)] for t in tile], "O3_canonical_tiles")
    d.max_equality(highest, [[(1, t)] for t in tile], "O3_canonical_tiles")
    d.linear([(2, tile[0]), (-1, highest)], None, 0, "O3_canonical_tiles")


def canonical_schedule(schedule: StreamingSchedule, tiles: int) -> StreamingSchedule:
    """The same schedule shifted to tile 0 and mirrored so that its first node is in the left
    half (the canonical form :func:`build_cp_model` searches), and started at cycle 0."""
    first = next(iter(schedule.tile))
    low, high = min(schedule.tile.values()), max(schedule.tile.values())
    tile = {n: t - low for n, t in schedule.tile.items()}
    if 2 * tile[first] > high - low:
        tile = {n: high - low - t for n, t in tile.items()}
    start = min(schedule.cycle.values())
    shift = start - start % schedule.ii
    cycle = {n: c - shift for n, c in schedule.cycle.items()}
    if start % schedule.ii:  # shifting by less than II changes slots: shift all slots too
        cycle = {n: c - start % schedule.ii for n, c in cycle.items()}
    return StreamingSchedule(ii=schedule.ii, tile=tile,
                             slot={n: c % schedule.ii for n, c in cycle.items()},
                             cycle=cycle, op_latency=schedule.op_latency,
                             delays=dict(schedule.delays), method=schedule.method,
                             status=schedule.status)


def _add_edges(d: ModelDescription, problem: StreamingProblem, ii: int, tile: list,
               tau: list, keep: set[str], horizon: int) -> None:
    """R1 reach + link latency, T2 timing, H1 hold with delay entries counted per tile."""
    table = sorted(problem.latency.items())
    reach = problem.reach if "R1 reach" in keep else problem.tiles
    max_delays = ii - 1  # the consumer's tile has II slots and the consumer takes one
    delay_load: dict[int, list] = defaultdict(list)  # consumer -> its delay counts
    fan_out: dict[int, list] = defaultdict(list)  # producer -> link latencies to its children
    for e, (u, v, dist) in enumerate(problem.edges):
        lat = None
        if u != v:
            dt = d.int(f"dt{e}", -reach, reach)
            d.linear([(1, dt), (-1, tile[v]), (1, tile[u])], 0, 0, "R1_reach",
                     name=f"R1_reach_{e}")
            if "R1 reach" in keep:
                lat = d.int(f"lat{e}", 0, max(problem.latency.values()))
                d.table([dt, lat], table, "R1_reach", name=f"R1_latency_{e}")
                fan_out[u].append(lat)
        if "T2 timing" not in keep:
            continue
        longest = ii * (max_delays + 1) - 1 if "H1 hold" in keep else horizon + dist * ii
        hold = d.int(f"hold{e}", 0, longest)
        timing = [(1, hold), (-1, tau[v]), (1, tau[u])] + ([(1, lat)] if lat else [])
        d.linear(timing, dist * ii - problem.op_latency, dist * ii - problem.op_latency,
                 "T2_timing", name=f"T2_timing_{e}")
        if "H1 hold" in keep:
            delays = d.int(f"delays{e}", 0, max_delays)
            d.linear([(1, hold), (-ii, delays)], 0, None, "H1_hold", name=f"H1_hold_lo_{e}")
            d.linear([(1, hold), (-ii, delays)], None, ii - 1, "H1_hold",
                     name=f"H1_hold_hi_{e}")
            delay_load[v].append(delays)
    if "S1 siblings" in keep:
        _add_sibling_latency_sums(d, problem, fan_out)
    if delay_load and "H1 hold" in keep and ii > 1:
        _add_slot_capacity(d, problem, ii, tile, delay_load, max_delays)


def _add_sibling_latency_sums(d: ModelDescription, problem: StreamingProblem,
                              fan_out: dict[int, list]) -> None:
    """Redundant S1 x R1: ``k`` children on distinct tiles have link latencies summing to at
    least the ``k`` smallest latencies of the tile line (0, 1, 1, 2, 2)."""
    cheapest = sorted(problem.latency.values())
    for u, lats in sorted(fan_out.items()):
        if len(lats) > 1:
            d.linear([(1, lat) for lat in lats], sum(cheapest[:len(lats)]), None,
                     "S1_siblings", name=f"S1_latency_sum_{u}")


def _add_slot_capacity(d: ModelDescription, problem: StreamingProblem, ii: int, tile: list,
                       delay_load: dict[int, list], max_delays: int) -> None:
    """Per tile: instructions + delay entries of the edges into it <= II."""
    on = {}
    for i in range(problem.n):
        row = [d.bool(f"on{i}_{t}") for t in range(problem.tiles)]
        d.exactly_one(row, "H1_hold")
        d.linear([(1, tile[i])] + [(-t, b) for t, b in enumerate(row)], 0, 0, "H1_hold")
        on[i] = row
    per_tile: list[list] = [[] for _ in range(problem.tiles)]
    for v, counts in sorted(delay_load.items()):
        total = d.int(f"delays_into{v}", 0, max_delays * len(counts))
        d.linear([(1, total)] + [(-1, c) for c in counts], 0, 0, "H1_hold")
        for t in range(problem.tiles):
            q = d.int(f"dq{v}_{t}", 0, min(ii, max_delays * len(counts)))
            d.linear([(1, q), (-1, total)], 0, 0, "H1_hold", enforce=on[v][t])
            d.linear([(1, q)], 0, 0, "H1_hold", enforce=~on[v][t])
            per_tile[t].append(q)
    for t in range(problem.tiles):
        d.linear([(1, on[i][t]) for i in range(problem.n)] + [(1, q) for q in per_tile[t]],
                 None, ii, "H1_hold", name=f"H1_slots_{t}")


def _add_var_capacity(d: ModelDescription, problem: StreamingProblem, comp_tile: list) -> None:
    """M2: tile-memory variables per tile <= memories x depth (only when it can bind)."""
    sizes = [len(v) for v in problem.component_vars]
    if sum(sizes) <= problem.var_capacity:
        return
    for t in range(problem.tiles):
        here = []
        for c, size in enumerate(sizes):
            if size:
                b = d.bool(f"mem{c}_{t}")
                d.channel(comp_tile[c], t, b, "M2_capacity")
                here.append((size, b))
        d.linear(here, None, problem.var_capacity, "M2_capacity", name=f"M2_capacity_{t}")


# ---------------------------------------------------------------------------------------------
# solve and decode
# ---------------------------------------------------------------------------------------------
#: CP-SAT parameters of the streaming models: no linear relaxation. The models are disjunctive
#: (tiles, slots, holds); their LP only gives the critical path and costs time. Measured at 1
#: worker on random DAGs of 20-40 nodes: the same proofs 1.2-8x faster (e.g. the hold
#: relaxation of se-random-30-s0 at II 4 in 3.7 s instead of 24 s). One presolve pass with
#: light probing: the default three passes of probing took 2.8 s of the 9 s that refuting 34
#: cycles on se-random-40-s1 at II 4 took (6.5-7.1 s over four seeds with these settings).
CP_PARAMS = {"linearization_level": 0, "max_presolve_iterations": 1, "cp_model_probing_level": 1}


#: CP-SAT deterministic time units per planned second of the Streaming Engine's models (one
#: worker). Measured on this project's 2-core machine, the rate depends on the model far more
#: than on the load: 0.27-0.39 units per wall second in the long searches of the full models
#: of aes decrypt (II 30) and 2mm_unroll4 (II 10-11) with the other core busy, 0.5-1.4 in
#: the first unit of the full models of ten Morpher kernels (47-163 instructions), 0.7-2.6
#: for the layout and full models of a 30-instruction random DAG at II 3-4. At the project's
#: 0.4 (:data:`~formulations.solver.cp.CP_SAT_WORK_PER_SECOND`) a 54 s run of Taylor
#: FullPred spent its plan in 23 s of wall time; 0.6 is nearer the middle, and the wall-clock
#: cap (twice the plan, never past the run's deadline) bounds the slow searches.
SE_WORK_PER_SECOND = 0.6
#: The same for the tile layout relaxation (:mod:`formulations.streaming.layout`), whose
#: clauses advance CP-SAT's deterministic clock faster: 0.5-0.9 units per wall second on aes
#: decrypt and 2mm_unroll4, 1.5-2.6 on the random DAG.
LAYOUT_WORK_PER_SECOND = 1.2
#: Planned seconds a solve is charged besides its search: building the model in Python, the
#: hint check and the solver's start (at least :data:`SOLVE_CHARGE`, plus
#: :data:`CHARGE_PER_CONSTRAINT` per constraint: building the full model of aes decrypt,
#: 4,900 constraints, took 0.07 s, its layout model 0.04-0.06 s).
SOLVE_CHARGE = 0.02
CHARGE_PER_CONSTRAINT = 3e-5


def solve_model(model: cp_model.CpModel, budget: Budget, seed: int = 0, workers: int = 1,
                hint: dict | None = None, variables: dict | None = None,
                name: str | None = None, rate: float = SE_WORK_PER_SECOND) -> SolveResult:
    """Solve with :data:`CP_PARAMS`, planned
    (:func:`~formulations.solver.backends.solve_cp_planned`): what is left of ``budget``
    (at least the model's charge) becomes CP-SAT's deterministic time (``rate`` units a
    planned second, less the charge), the wall clock only caps it (the budget's deadline),
    and the work used is charged to ``budget`` (a cut by the wall clock marks it and the
    result: :func:`~formulations.solver.cp.was_cut_short`). Same seed, same plan: same answer
    whatever the machine's load. ``variables`` maps names to the variables to report
    (default none).
    """
    charge = SOLVE_CHARGE + CHARGE_PER_CONSTRAINT * len(model.proto.constraints)
    planned = Budget(max(budget.left(), charge + SOLVE_CHARGE), parent=budget)  # may pass it
    return solve_cp_planned(model, planned, rate=rate, charge=charge, seed=seed,
                            workers=workers, hint=hint or None, variables=variables or {},
                            name=name, params=CP_PARAMS)


def warm_hint(problem: StreamingProblem, cp: CpVars, warm: StreamingSchedule | None, ii: int
          ) -> dict | None:
    """A full hint from ``warm`` (None unless it has this II), in the canonical tile form."""
    if warm is None or warm.ii != ii:
        return None
    warm = canonical_schedule(warm, problem.tiles)
    hint = {}
    for i, nid in enumerate(problem.names):
        hint[cp.slot[i]] = warm.slot[nid]
        hint[cp.tau[i]] = warm.cycle[nid]
        hint[cp.tile[i]] = warm.tile[nid]
    hint[cp.makespan] = warm.cycles
    return hint


def tile_hint(problem: StreamingProblem, cp: CpVars, tiles: list[int] | None) -> dict | None:
    """A partial hint: the tiles only, in the canonical (mirrored) form the model searches."""
    if not tiles:
        return None
    low, high = min(tiles), max(tiles)
    tiles = [t - low for t in tiles]
    if 2 * tiles[0] > high - low:
        tiles = [high - low - t for t in tiles]
    hint = {}
    for i, var in enumerate(cp.tile):
        hint.setdefault(var.index, (var, tiles[i]))
    return dict(hint.values())


def decode_schedule(problem: StreamingProblem, ii: int, cp: CpVars, result: SolveResult,
                    method: str = "", status: str = "heuristic") -> StreamingSchedule:
    """The schedule of a solved model, either backend's (its variables reported by
    :func:`reported_variables`; ``cp`` the emitted or the description's variables)."""
    tile = [round(result.values[cp.tile[i].name]) for i in range(problem.n)]
    tau = [round(result.values[cp.tau[i].name]) for i in range(problem.n)]
    return schedule_from_lists(problem, ii, tile, tau, method=method, status=status)


def reported_variables(cp: CpVars) -> dict:
    """The variables a schedule is decoded from, by name."""
    return {v.name: v for v in cp.tile + cp.tau}


