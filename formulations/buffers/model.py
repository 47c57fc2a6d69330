"""Stage-buffer depth balancing as one global MIP per section (source 001, pass 2).

Every multi-sink net of a section is one *stage buffer* (its edges share the depth, as
graph.json says). When two or more buffers feed one node (a *join*), every path into the
join must carry the same total buffer depth, or the shorter path fills up and back pressure
throttles the section (digest §1.4). The model gives every node an *arrival depth* ``A_v``
(node-potential form, digest §3.7), so no path is ever enumerated; nested joins, joins with
three or more inputs and buffers shared by several consumers follow from the same rows.

The model, read top to bottom (OR-Tools-sample style):

* **data** (:func:`buffer_problem`): buffers (one per net, original depth ``d0_b``, PMU
  capacity ``D_b`` in samples), joins, insertion slots (one per (buffer, join) input, at the
  end of the path next to the join, [0187]), sources (off-chip loads);
* **variables**: ``A_v`` per node, ``B_b`` (the depth at which buffer ``b`` delivers),
  ``depth_b >= d0_b``, ``pmu_b``, per slot ``new_depth_k``, ``new_pmu_k`` (and a binary
  ``used_k`` in the strict variant); a source's ``A_s`` is its load time;
* **constraints** (families, used by the infeasibility diagnosis):
  ``buffer-depth`` ``B_b = A_u + depth_b``; ``balance`` ``A_v = B_b + new_depth_k`` for every
  input of every node; ``depth-only-grows`` ``depth_b >= d0_b``; ``tuning-disabled``
  (insert-only mode) ``depth_b = d0_b``; ``load-time`` (load shifting off) ``A_s = 0``;
  ``capacity`` ``pmu_b·D_b >= depth_b``; ``new-capacity`` ``new_pmu_k·D_k >= new_depth_k``
  (strict: ``>= new_depth_k + used_k`` with ``new_depth_k <= H·used_k``, so an unused slot
  costs nothing);
* **objective**: fewest PMUs ``Σ pmu_b + Σ new_pmu_k``; then, as a deterministic
  tie-break, least added depth: by default a network LP with every buffer's PMU count fixed
  at the first answer (``tie_break="lp"``), or a second MIP over every answer with the
  optimal PMU total (``"exact"``); skipped when PMUs equal depths (``D = 1``);
* **decode**: final depth per buffer, inserted buffers, load times, PMUs.

When every ``D_b = 1`` and new buffers use ``>=``, PMUs equal depths and the rows are
difference constraints on the potentials, each with a private slack column: the matrix is a
network matrix (totally unimodular), so the LP relaxation is integral. The model is then
solved as an LP (on every backend that takes continuous variables) and the result says so.

Caveats
-------
* Loop-carried edges (``distance > 0``) are not balanced (their depth is left as it is);
  :attr:`BufferProblem.loop_edges` lists them so reports can say so.
* An edge without ``depth`` counts as depth :data:`DEFAULT_DEPTH` (1). Edges of one net
  that disagree on depth use the largest (a note says so).
* Only PMU counts need to be integer: with them fixed, the rest is a network LP whose
  vertices are integral, so HiGHS, SCIP and Pyomo get continuous depths (CP-SAT integer
  ones); a ``D_b = 1`` buffer's PMU count is its depth, and a buffer whose one PMU holds
  any depth the model allows costs a constant 1, so neither adds an integer variable.
* ``D_b`` (samples per PMU): the ``depth_per_pmu`` override when given; else, with a
  hardware spec, ``spec.pmu_depth(bytes)`` for the net's bytes per sample (a net that
  carries 0 bytes fits any depth in one PMU); without a spec or bytes, 1.
* Potentials are bounded by ``H = Σ d0 + #nodes + 8`` (finite domains for CP-SAT); a solution
  that needs larger arrival depths is not searched.
* The joint multi-section solve is the same call on the whole graph (sections joined through
  DRAM become independent sources when load shifting is on).

Examples
--------
FIG. 12 of the patent: three paths of depth 5, 3, 4 into two joins sharing path 2.

>>> from model.graph import Edge, Graph, Node
>>> fig12 = Graph("fig12", [Node(n) for n in ("L", "P1", "P2", "P3", "J1", "J2")],
...               [Edge("L", "P1"), Edge("L", "P2"), Edge("L", "P3"),
...                Edge("P1", "J1", depth=5), Edge("P2", "J1", depth=3, net="p2"),
...                Edge("P2", "J2", depth=3, net="p2"), Edge("P3", "J2", depth=4)])
>>> from formulations.solver import SolveSettings
>>> sol = solve_buffers(fig12, SolveSettings("highs"),
...                     options=BufferOptions(mode="tune", depth_per_pmu=1))
>>> sol.status, [sol.depths[b.index] for b in sol.problem.buffers if b.original_depth > 1]
('OPTIMAL', [5, 5, 5])
"""

from __future__ import annotations

import math
import re
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


from formulations.buffers.heuristic import warm_start
from formulations.buffers.problem import (BufferOptions, BufferProblem, balanced_as_is,
                                          buffer_problem, edge_depth, pmus_for,
                                          unbalanced_joins)
from formulations.solver import (LinearModel, SolveResult, SolveSettings, SolveStatus,
                                 explain_infeasible, get_backend, quicksum, solve_planned,
                                 was_cut_short, write_model_file)
from model.graph import Graph

__all__ = ["BufferVars", "BufferSolution", "build_buffer_model", "buffer_hint", "solve_buffers"]

#: Backends that need an all-integer model (no LP relaxation there).
_INTEGER_ONLY = ("cp-sat",)


# ---------------------------------------------------------------------------------------------
# variables, constraints, objective
# ---------------------------------------------------------------------------------------------
@dataclass
class BufferVars:
    """The variables of one balancing model, by problem index.

    ``pmu[b]`` is a variable, the depth variable itself (``D_b = 1``: PMUs equal depth) or a
    constant (``D_b`` so large that one PMU holds any depth the model allows); likewise
    ``new_pmu[k]``. ``used`` holds the strict variant's indicators.
    """

    arrival: dict[str, Any]
    delivered: list[Any]
    depth: list[Any]
    pmu: list[Any]
    new_depth: list[Any]
    new_pmu: list[Any]
    used: list[Any] | None

    def pmu_terms(self) -> list[Any]:
        """The PMU count as a list of terms (variables and constants)."""
        return list(self.pmu) + list(self.new_pmu)

    def pmu_vars(self) -> list[Any]:
        """The PMU variables that are not depth variables or constants."""
        depth_ids = {id(v) for v in self.depth} | {id(v) for v in self.new_depth}
        return [v for v in self.pmu_terms() if not isinstance(v, int) and id(v) not in depth_ids]

    def added_depth_terms(self) -> list[Any]:
        return list(self.depth) + list(self.new_depth)


_UNSAFE = re.compile(r"[^A-Za-z0-9_.\-]")


def _safe(name: str) -> str:
    """A name part without whitespace or odd characters, at most 40 characters (names made
    of several parts carry an index that keeps them unique)."""
    return _UNSAFE.sub("_", str(name))[:40] or "_"


def build_buffer_model(problem: BufferProblem, *, relax: bool = False,
                       integer_depths: bool = True, objective: str = "pmus",
                       pmu_cap: float | None = None) -> tuple[LinearModel, BufferVars]:
    """The balancing MIP of ``problem``.

    Parameters
    ----------
    problem : BufferProblem
    relax : bool, default False
        Continuous variables everywhere (the LP relaxation).
    integer_depths : bool, default True
        Integer depths and arrival depths. False keeps only PMU counts (and indicators)
        integer: with integer PMU counts the rest is a network LP, whose vertices are
        integral, so nothing is lost (CP-SAT needs True).
    objective : {"pmus", "depth"}
        Minimise total PMUs, or added depth (the tie-break; with ``pmu_cap``).
    pmu_cap : float, optional
        Add ``Σ PMUs <= pmu_cap`` (family ``pmu-total``).

    Returns
    -------
    (LinearModel, BufferVars)

    Examples
    --------
    >>> from model.graph import Graph, Node, Edge
    >>> g = Graph("d", [Node(n) for n in "fabj"], [Edge("f", "a"), Edge("a", "j", depth=2),
    ...                                             Edge("f", "b"), Edge("b", "j")])
    >>> m, v = build_buffer_model(buffer_problem(g, options=BufferOptions(depth_per_pmu=1)))
    >>> m.solve(backend="highs").objective
    6.0
    """
    if objective not in ("pmus", "depth"):
        raise ValueError(f"objective must be 'pmus' or 'depth', got {objective!r}")
    model = LinearModel(f"buffers_{_safe(problem.graph.name)}")
    bvars = _add_variables(model, problem, integer=not relax, integer_depths=integer_depths)
    _add_depth_rows(model, problem, bvars)
    _add_balance_rows(model, problem, bvars)
    _add_load_rows(model, problem, bvars)
    _add_capacity_rows(model, problem, bvars)
    if pmu_cap is not None:
        model.add(quicksum(bvars.pmu_terms()) <= pmu_cap, name="pmu_total", family="pmu-total")
    if objective == "pmus":
        model.minimize(quicksum(bvars.pmu_terms()))
    else:
        base = sum(b.original_depth for b in problem.buffers)
        model.minimize(quicksum(bvars.added_depth_terms()) - base)
    return model, bvars


def _add_variables(model: LinearModel, p: BufferProblem, integer: bool,
                   integer_depths: bool) -> BufferVars:
    H, whole = p.horizon, integer and integer_depths
    arrival = {v: model.add_var(f"A_{k}_{_safe(v)}", 0, H, whole) for k, v in enumerate(p.nodes)}
    delivered = [model.add_var(f"B_{b.index}", 0, H, whole) for b in p.buffers]
    depth = [model.add_var(f"depth_{b.index}_{_safe(b.driver)}", 0, H, whole) for b in p.buffers]
    new_depth = [model.add_var(f"new_depth_{k.index}_{_safe(k.join)}", 0, H, whole)
                 for k in p.slots]
    strict = p.options.strict_new_capacity
    pmu = [_pmu_var(model, f"pmu_{b.index}", depth[b.index], b.capacity, H, integer,
                    lower=pmus_for(b.original_depth, b.capacity)) for b in p.buffers]
    new_pmu = [_pmu_var(model, f"new_pmu_{k.index}", new_depth[k.index], k.capacity, H, integer,
                        strict=strict) for k in p.slots]
    used = [model.add_var(f"used_{k.index}", 0, 1, integer) for k in p.slots] if strict else None
    return BufferVars(arrival, delivered, depth, pmu, new_depth, new_pmu, used)


def _pmu_var(model: LinearModel, name: str, depth_var, capacity: int, H: int, integer: bool,
             lower: int = 0, strict: bool = False):
    """PMUs of one buffer: the depth itself (D = 1), 1 (one PMU holds any depth), or a variable."""
    if capacity == 1 and not strict:
        return depth_var
    if lower >= 1 and capacity >= H and not strict:
        return 1
    return model.add_var(name, lower, pmus_for(H, capacity, strict), integer)


def _add_depth_rows(model: LinearModel, p: BufferProblem, v: BufferVars) -> None:
    for b in p.buffers:
        tag = f"{b.index}_{_safe(b.driver)}"
        model.add_row([v.delivered[b.index], v.arrival[b.driver], v.depth[b.index]],
                      [1, -1, -1], 0, 0, name=f"buffer_depth_{tag}", family="buffer-depth")
        model.add_row([v.depth[b.index]], [1], lb=b.original_depth, name=f"grow_{tag}",
                      family="depth-only-grows")
        if not p.options.tuning:
            model.add_row([v.depth[b.index]], [1], ub=b.original_depth, name=f"no_tuning_{tag}",
                          family="tuning-disabled")


def _add_balance_rows(model: LinearModel, p: BufferProblem, v: BufferVars) -> None:
    for b in p.buffers:
        for position, sink in enumerate(b.sinks):
            slot = p.slot_of(b.index, sink)
            cols, coefs = [v.arrival[sink], v.delivered[b.index]], [1, -1]
            if slot is not None:
                cols.append(v.new_depth[slot.index])
                coefs.append(-1)
            model.add_row(cols, coefs, 0, 0, name=f"balance_{_safe(sink)}_from_{_safe(b.driver)}"
                          f"_b{b.index}_{position}", family="balance")


def _add_load_rows(model: LinearModel, p: BufferProblem, v: BufferVars) -> None:
    if p.options.load_shift:
        return
    for k, s in enumerate(p.sources):
        model.add_row([v.arrival[s]], [1], 0, 0, name=f"load_fixed_{k}_{_safe(s)}",
                      family="load-time")


def _add_capacity_rows(model: LinearModel, p: BufferProblem, v: BufferVars) -> None:
    for b in p.buffers:
        pmu = v.pmu[b.index]
        if pmu is not v.depth[b.index] and not isinstance(pmu, int):
            model.add_row([pmu, v.depth[b.index]], [b.capacity, -1], lb=0,
                          name=f"capacity_{b.index}", family="capacity")
    for k in p.slots:
        pmu, depth = v.new_pmu[k.index], v.new_depth[k.index]
        if v.used is not None:
            used = v.used[k.index]
            model.add_row([pmu, depth, used], [k.capacity, -1, -1], lb=0,
                          name=f"new_capacity_{k.index}", family="new-capacity")
            model.add_row([depth, used], [1, -p.horizon], ub=0, name=f"new_used_{k.index}",
                          family="new-buffer-used")
        elif pmu is not depth:
            model.add_row([pmu, depth], [k.capacity, -1], lb=0, name=f"new_capacity_{k.index}",
                          family="new-capacity")


# ---------------------------------------------------------------------------------------------
# warm start
# ---------------------------------------------------------------------------------------------
def buffer_hint(problem: BufferProblem, bvars: BufferVars) -> dict[Any, float] | None:
    """A feasible start: the heuristic's answer (see formulations.buffers.heuristic)."""
    start = warm_start(problem)
    if start is None:
        return None
    depths, new_depths, arrival = start
    hint: dict[Any, float] = {bvars.arrival[v]: arrival[v] for v in problem.nodes}
    strict = problem.options.strict_new_capacity
    for b in problem.buffers:
        hint[bvars.delivered[b.index]] = arrival[b.driver] + depths[b.index]
        hint[bvars.depth[b.index]] = depths[b.index]
        if _is_own_var(bvars.pmu[b.index], bvars.depth[b.index]):
            hint[bvars.pmu[b.index]] = pmus_for(depths[b.index], b.capacity)
    for k in problem.slots:
        hint[bvars.new_depth[k.index]] = new_depths[k.index]
        if _is_own_var(bvars.new_pmu[k.index], bvars.new_depth[k.index]):
            hint[bvars.new_pmu[k.index]] = pmus_for(new_depths[k.index], k.capacity, strict)
        if bvars.used is not None:
            hint[bvars.used[k.index]] = 1 if new_depths[k.index] > 0 else 0
    return hint


def _is_own_var(pmu, depth) -> bool:
    return pmu is not depth and not isinstance(pmu, int)


# ---------------------------------------------------------------------------------------------
# solve and decode
# ---------------------------------------------------------------------------------------------
@dataclass
class BufferSolution:
    """The decoded answer of :func:`solve_buffers`.

    ``depths`` (per buffer) and ``new_depths`` (per slot) are final; ``loads`` maps each
    source to its load time. ``status`` is a :class:`SolveStatus` name or ``"SKIPPED"``
    (already balanced, nothing to solve); on INFEASIBLE/ERROR the depths are the original
    ones and ``diagnosis`` says why.
    """

    problem: BufferProblem
    status: str
    depths: list[int]
    new_depths: list[int]
    loads: dict[str, int]
    method: str
    results: list[SolveResult] = field(default_factory=list)
    lp_integral: bool | None = None
    build_time: float = 0.0
    solve_time: float = 0.0
    diagnosis: str = ""

    @property
    def ok(self) -> bool:
        return self.status in ("OPTIMAL", "FEASIBLE", "SKIPPED")

    @property
    def cut_short(self) -> bool:
        """Whether the wall clock stopped a solve before its planned work (the answer may
        then differ from run to run)."""
        return any(was_cut_short(r) for r in self.results)

    @property
    def buffer_pmus(self) -> list[int]:
        return [pmus_for(self.depths[b.index], b.capacity) for b in self.problem.buffers]

    @property
    def slot_pmus(self) -> list[int]:
        strict = self.problem.options.strict_new_capacity
        return [pmus_for(self.new_depths[k.index], k.capacity, strict) for k in self.problem.slots]

    @property
    def pmus_before(self) -> int:
        return self.problem.pmus_before

    @property
    def pmus_after(self) -> int:
        return sum(self.buffer_pmus) + sum(self.slot_pmus)

    @property
    def added_depth(self) -> int:
        return (sum(self.depths) - sum(b.original_depth for b in self.problem.buffers)
                + sum(self.new_depths))

    @property
    def result(self) -> SolveResult | None:
        """The main (PMU) solve, None when skipped."""
        return self.results[0] if self.results else None

    def unbalanced(self) -> list[str]:
        """Joins left unbalanced by this answer (empty for a solved model)."""
        return unbalanced_joins(self.problem, self.depths, self.new_depths, self.loads)

    def edge_rows(self) -> dict[int, dict[str, Any]]:
        """Per edge of the graph: the ``buffers`` row of mapping.json.

        Keys: ``original_depth``, ``final_depth`` (tuned buffer plus inserted buffer),
        ``depth_added``, ``buffer_inserted``, ``pmus`` (the edge's stage buffer, shared by its
        net, plus an inserted buffer), and the split ``tuned_depth``, ``inserted_depth``,
        ``buffer_pmus``, ``inserted_pmus``, ``pmus_added`` (PMUs balancing added for this
        edge: its buffer's growth, shared by the net, plus the inserted buffer),
        ``depth_per_pmu``, ``balanced`` (False for loop-carried edges).
        """
        p = self.problem
        rows: dict[int, dict[str, Any]] = {}
        buffer_pmus, slot_pmus = self.buffer_pmus, self.slot_pmus
        for b in p.buffers:
            for i in b.edges:
                slot = p.slot_of(b.index, p.graph.edges[i].dst)
                added = self.new_depths[slot.index] if slot else 0
                extra = slot_pmus[slot.index] if slot else 0
                original = edge_depth(p.graph, i)
                final = self.depths[b.index] + added
                rows[i] = {"original_depth": original, "final_depth": final,
                           "depth_added": final - original, "buffer_inserted": added > 0,
                           "pmus": buffer_pmus[b.index] + extra,
                           "tuned_depth": self.depths[b.index], "inserted_depth": added,
                           "buffer_pmus": buffer_pmus[b.index], "inserted_pmus": extra,
                           "pmus_added": buffer_pmus[b.index] + extra
                           - pmus_for(b.original_depth, b.capacity),
                           "depth_per_pmu": b.capacity, "balanced": True}
        for i in p.loop_edges:
            d = edge_depth(p.graph, i)
            rows[i] = {"original_depth": d, "final_depth": d, "depth_added": 0,
                       "buffer_inserted": False, "pmus": 0, "tuned_depth": d,
                       "inserted_depth": 0, "buffer_pmus": 0, "inserted_pmus": 0,
                       "pmus_added": 0, "depth_per_pmu": None, "balanced": False}
        return dict(sorted(rows.items()))

    def inserted_buffers(self) -> list[dict[str, Any]]:
        """The whole buffers inserted: on which edges, before which join, depth and PMUs."""
        out = []
        for k, depth, pmus in zip(self.problem.slots, self.new_depths, self.slot_pmus):
            if depth > 0:
                buf = self.problem.buffers[k.buffer]
                out.append({"edges": list(k.edges), "src": buf.driver, "join": k.join,
                            "net": buf.net, "depth": depth, "pmus": pmus})
        return out


def solve_buffers(graph: Graph, settings: SolveSettings, spec=None,
                  options: BufferOptions | None = None, *, name: str | None = None,
                  hint: bool = True, problem: BufferProblem | None = None) -> BufferSolution:
    """Balance every join of ``graph`` with the fewest PMUs (then the least added depth).

    Parameters
    ----------
    graph : Graph
        One section (or several solved jointly).
    settings : SolveSettings
        Backend (a name of :func:`formulations.solver.available_backends`), seconds per
        solve, seed, and ``export_dir``: when set, the model is written there as
        ``buffers_<name>.mps``.
    spec : RduSpec, optional
        PMU capacity per buffer from bytes per sample (see
        :func:`~formulations.buffers.problem.buffer_capacity`).
    options : BufferOptions, optional
    name : str, optional
        The exported model's name (default: the graph's).
    hint : bool, default True
        Warm-start the solver with the heuristic's answer.
    problem : BufferProblem, optional
        A problem already built from ``graph`` (skips :func:`buffer_problem`).

    Returns
    -------
    BufferSolution
        Never raises for an infeasible model: the status says so and ``diagnosis`` names the
        joins and constraint families (e.g. tune-only with a buffer shared by two joins that
        need different depths).

    Raises
    ------
    BufferBalancingError
        For bad input (a depth that is not a non-negative integer, a cycle).
    ValueError
        For an unknown backend.

    Examples
    --------
    >>> from model.graph import Edge, Graph, Node
    >>> fig11 = Graph("fig11", [Node("S0"), Node("S1"), Node("S2")],
    ...               [Edge("S0", "S1"), Edge("S1", "S2"), Edge("S0", "S2")])
    >>> sol = solve_buffers(fig11, SolveSettings("highs"), options=BufferOptions(depth_per_pmu=1))
    >>> sol.pmus_before, sol.pmus_after, sol.lp_integral, sol.unbalanced()
    (3, 4, True, [])
    """
    get_backend(settings.backend)  # unknown name: ValueError listing the available ones
    started = time.perf_counter()
    problem = problem or buffer_problem(graph, spec, options)
    loads = balanced_as_is(problem) if problem.joins else {}
    if loads is not None:
        return BufferSolution(problem, "SKIPPED", [b.original_depth for b in problem.buffers],
                              [0] * len(problem.slots), loads,
                              "already balanced: no model solved",
                              build_time=time.perf_counter() - started)
    return _solve_model(problem, settings, name or graph.name, hint, started)


def _solve_model(problem: BufferProblem, settings: SolveSettings, name: str, hint: bool,
                 started: float) -> BufferSolution:
    """Build, export, solve, tie-break and decode the model of an unbalanced ``problem``."""
    backend = settings.backend
    integer_only = backend in _INTEGER_ONLY
    as_lp = problem.network and not integer_only
    model, bvars = build_buffer_model(problem, relax=as_lp, integer_depths=integer_only)
    if hint:
        start = buffer_hint(problem, bvars)
        if start is not None:
            model.set_hint(start)
    build_time = time.perf_counter() - started
    if settings.export_dir:
        Path(settings.export_dir).mkdir(parents=True, exist_ok=True)
        write_model_file(model, Path(settings.export_dir) / f"buffers_{name}.mps")
    result = solve_planned(model, backend, settings.budget(), seed=settings.seed,
                           mip_gap=None if as_lp else 0.0)
    if not result.has_solution:
        fallback = _fallback(problem, result, build_time)
        if fallback is not None:
            return fallback
        return _failed(problem, model, result, settings, build_time)
    results, values = [result], result.values
    lp_integral = _integral(problem, values) if problem.network else None
    if _needs_second_solve(problem, bvars, values):
        second = _second_solve(problem, values, result, settings)
        results.append(second)
        if second.has_solution:
            values = second.values
    return _decode(problem, values, results, lp_integral, build_time, as_lp)


def _integral(problem: BufferProblem, values) -> bool:
    return all(abs(x - round(x)) <= 1e-6 for x in values.values())


def _needs_second_solve(problem: BufferProblem, bvars: BufferVars, values) -> bool:
    """Tie-break (added depth > 0 and PMUs are not depths) or non-vertex depths to polish."""
    if problem.network:
        return False  # PMUs = depths: the first solve already minimised added depth
    if not _integral(problem, values):
        return True
    added = sum(values[v.name] for v in bvars.added_depth_terms()) - sum(
        b.original_depth for b in problem.buffers)
    return problem.options.tie_break != "none" and added > 0.5


def _second_solve(problem: BufferProblem, values, first: SolveResult,
                  settings: SolveSettings) -> SolveResult:
    """Least added depth: over all PMU-optimal answers ("exact", a MIP), or with every
    buffer's PMU count fixed at the first answer and no ``D = 1`` buffer deeper than there
    ("lp": bounds only, so a network LP with an integral optimum); planned as the first."""
    backend, seed = settings.backend, settings.seed
    if problem.options.tie_break == "exact":
        model, _ = build_buffer_model(problem, objective="depth", pmu_cap=round(first.objective))
        model.set_hint(dict(values))
        return solve_planned(model, backend, settings.budget(), seed=seed, mip_gap=0.0)
    model, bvars = build_buffer_model(problem, relax=True, objective="depth")
    for var in bvars.pmu_vars() + list(bvars.used or []):
        value = round(values[var.name])
        model.set_bounds(var, value, value)
    for var in _depths_counted_as_pmus(bvars):  # D = 1: PMUs are the depth; none may grow
        model.set_bounds(var, ub=math.ceil(values[var.name] - 1e-6))
    lp_backend = "highs" if backend in _INTEGER_ONLY else backend
    return solve_planned(model, lp_backend, settings.budget(), seed=seed)


def _fallback(problem: BufferProblem, result: SolveResult, build_time: float):
    """The warm start as the answer when the solver stopped without one (not infeasible)."""
    if result.status is SolveStatus.INFEASIBLE:
        return None
    start = warm_start(problem)
    if start is None:
        return None
    depths, new_depths, arrival = start
    loads = {s: arrival[s] for s in problem.sources}
    return BufferSolution(problem, "FEASIBLE", depths, new_depths, loads,
                          f"heuristic warm start (solver: {result.status.name}: "
                          f"{result.message[:120]})", [result], build_time=build_time,
                          solve_time=result.wall_time)


def _depths_counted_as_pmus(bvars: BufferVars) -> list[Any]:
    depth_ids = {id(v) for v in bvars.depth} | {id(v) for v in bvars.new_depth}
    return [v for v in bvars.pmu_terms() if not isinstance(v, int) and id(v) in depth_ids]


def _failed(problem: BufferProblem, model: LinearModel, result: SolveResult,
            settings: SolveSettings, build_time: float) -> BufferSolution:
    diagnosis = result.message
    if result.status is SolveStatus.INFEASIBLE:
        diag_backend = "highs" if settings.backend in _INTEGER_ONLY else settings.backend
        diag = explain_infeasible(model.copy(name=f"{model.name}_diag"), backend=diag_backend,
                                  time_limit=min(settings.time_limit, 30.0), seed=settings.seed,
                                  keep=["buffer-depth", "balance"])
        diagnosis = _explain(problem, diag)
    original = [b.original_depth for b in problem.buffers]
    return BufferSolution(problem, result.status.name, original, [0] * len(problem.slots), {},
                          "global MIP", [result], build_time=build_time,
                          solve_time=result.wall_time, diagnosis=diagnosis)


def _explain(problem: BufferProblem, diag) -> str:
    """The infeasibility diagnosis in the graph's terms (buffers, joins, loads)."""
    words = _constraint_words(problem)
    blamed = [words.get(name, name) for fam in diag.families
              for name in diag.constraints.get(fam, ())]
    mode = problem.options.mode
    text = (f"no balancing exists in mode {mode!r}"
            f"{'' if problem.options.load_shift else ' without load shifting'}: the joins "
            f"cannot all be balanced while " + "; ".join(blamed or [str(diag)]))
    fixes = [] if problem.options.insertion else ["allow insertion (mode 'both')"]
    fixes += [] if problem.options.load_shift else ["allow load shifting"]
    return text + (f". Fix: {' or '.join(fixes)}" if fixes else "")


def _constraint_words(problem: BufferProblem) -> dict[str, str]:
    words = {}
    for b in problem.buffers:
        tag, edge = f"{b.index}_{_safe(b.driver)}", f"{b.driver} -> {', '.join(b.sinks)}"
        words[f"grow_{tag}"] = f"buffer {edge} keeps depth >= {b.original_depth}"
        words[f"no_tuning_{tag}"] = f"buffer {edge} stays at depth {b.original_depth} (no tuning)"
    for k, s in enumerate(problem.sources):
        words[f"load_fixed_{k}_{_safe(s)}"] = f"load time of {s} is fixed at 0"
    return words


def _decode(problem: BufferProblem, values, results, lp_integral, build_time,
            as_lp: bool) -> BufferSolution:
    def val(name: str) -> int:
        return int(round(values[name]))

    depths = [val(_var_name("depth", b.index, b.driver)) for b in problem.buffers]
    new_depths = [val(_var_name("new_depth", k.index, k.join)) for k in problem.slots]
    position = {v: k for k, v in enumerate(problem.nodes)}
    loads = {s: val(f"A_{position[s]}_{_safe(s)}") for s in problem.sources}
    optimal = results[0].status is SolveStatus.OPTIMAL and all(
        r.status is SolveStatus.OPTIMAL for r in results[1:])
    method = "network LP (integral relaxation)" if as_lp else "global MIP"
    if len(results) > 1:
        method += {"exact": " + least-added-depth MIP",
                   "lp": " + least-added-depth LP (PMUs fixed)"}.get(
            problem.options.tie_break, " + vertex polish LP")
    solution = BufferSolution(problem, "OPTIMAL" if optimal else "FEASIBLE", depths, new_depths,
                              loads, method, list(results), lp_integral, build_time,
                              sum(r.wall_time for r in results))
    if solution.unbalanced():
        solution.status = "ERROR"
        solution.diagnosis = ("decoded answer leaves joins unbalanced: "
                              + ", ".join(solution.unbalanced()[:5]))
    return solution


def _var_name(kind: str, index: int, who: str) -> str:
    return f"{kind}_{index}_{_safe(who)}"
