"""Pass 2 of the pipeline: balance the stage buffers of one section (source 001).

:func:`balance_section` builds and solves :mod:`formulations.buffers.model`' MIP for one section,
checks the answer with the independent checker (:func:`sim.backpressure.check_balancing`),
simulates the section before and after with back pressure
(:func:`sim.backpressure.simulate`), and returns what mapping.json and the report need:
per edge rows (``buffers``), the inserted buffers, PMUs and throughput before and after, one
stage record, and a markdown fragment.

Options read from :class:`pipeline.options.RunOptions`: the ``buffers`` backend of its
backend table, ``time_limit``, ``seed``, ``export_dir`` (the model is written there as
``buffers_section<k>.mps``), ``depth_per_pmu`` (``--depth-per-pmu``), ``buffer_mode``
("both" | "tune" | "insert"), ``load_shift`` and ``strict_new_capacity``.

Caveats
-------
* Edges without ``depth`` count as depth 1; loop-carried edges are not balanced (a note says
  how many).
* Sections larger than :data:`SIMULATE_MAX_SIZE` nodes + edges are not simulated (throughput
  None, with a note): the simulator is pure Python.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from formulations.solver import SolveSettings
from formulations.buffers import BufferOptions, BufferSolution, solve_buffers
from model.graph import Graph
from pipeline.stage import stage_record
from sim.backpressure import check_balancing, simulate

__all__ = ["BufferPassOutcome", "balance_section", "buffer_options", "SIMULATE_MAX_SIZE"]

#: Sections with more nodes + edges than this are not simulated.
SIMULATE_MAX_SIZE = 6000
#: Balancing planned less than this skips the throughput estimate (two simulations cost
#: about 0.03 s a section: as much as the balancing model of a small section).
SIMULATE_MIN_SECONDS = 0.1


@dataclass
class BufferPassOutcome:
    """What balancing one section decided and measured.

    ``rows`` maps local edge index to the mapping.json ``buffers`` row; ``inserted`` lists
    the whole buffers added (edges, producer, join, depth, PMUs); ``stage`` is the stage
    record; ``violations`` is what the checker found (empty for a right answer).
    """

    section: int | None
    rows: dict[int, dict[str, Any]]
    inserted: list[dict[str, Any]]
    pmus_before: int
    pmus_after: int
    throughput_before: float | None
    throughput_after: float | None
    stage: dict[str, Any]
    solution: BufferSolution
    notes: list[str] = field(default_factory=list)
    violations: list[str] = field(default_factory=list)

    @property
    def balanced(self) -> bool:
        """True when the answer balances every join and the checker accepts it."""
        return self.solution.ok and not self.violations

    def report_lines(self) -> list[str]:
        """A short markdown fragment for the report."""
        sol, res = self.solution, self.solution.result
        name = "" if self.section is None else f" (section {self.section})"
        lines = [f"#### Stage buffers{name}", ""]
        solver = f"{sol.method}, status {sol.status}"
        if res is not None:
            gap = "—" if res.gap is None else f"{res.gap:.2%}"
            solver += (f", backend {res.backend}, objective {_num(res.objective)}, bound "
                       f"{_num(res.bound)}, gap {gap}, {sol.solve_time:.2f} s solve + "
                       f"{sol.build_time:.2f} s build")
        lines.append(f"- solver: {solver}")
        if sol.lp_integral:
            lines.append("- depth_per_PMU = 1: the constraint matrix is a network matrix, the "
                         "LP relaxation is integral and was used")
        lines.append(f"- PMUs: {self.pmus_before} before, {self.pmus_after} after; depth added "
                     f"{sol.added_depth if sol.ok else 0}; whole buffers inserted "
                     f"{len(self.inserted)}")
        lines.append(f"- simulated throughput (batches/step): {_num(self.throughput_before)} "
                     f"before, {_num(self.throughput_after)} after")
        lines += [f"- note: {n}" for n in self.notes]
        if sol.diagnosis:
            lines.append(f"- diagnosis: {sol.diagnosis}")
        lines.append("- checker: " + ("accepted" if not self.violations else
                                      f"{len(self.violations)} violation(s): "
                                      + "; ".join(self.violations[:3])))
        return lines + [""]


def _num(x) -> str:
    if x is None:
        return "—"
    return f"{x:g}" if isinstance(x, (int, float)) else str(x)


def buffer_options(options) -> BufferOptions:
    """The model options from a RunOptions (optional fields read with defaults)."""
    return BufferOptions(mode=options.buffer_mode, load_shift=options.load_shift,
                         strict_new_capacity=options.strict_new_capacity,
                         depth_per_pmu=options.depth_per_pmu)


def balance_section(sub: Graph, spec, options, settings: SolveSettings,
                    section: int | None = None) -> BufferPassOutcome:
    """Balance the stage buffers of one section, check and simulate the answer.

    Parameters
    ----------
    sub : Graph
        The section (local edge indices are ``sub.edges`` positions).
    spec : RduSpec
        Hardware description (PMU bytes give each buffer's capacity in samples).
    options : pipeline.options.RunOptions
    settings : formulations.solver.SolveSettings
        The balancing model's backend, planned seconds, seed and deadline.
    section : int, optional
        Section id, for names and records.

    Returns
    -------
    BufferPassOutcome

    Raises
    ------
    formulations.buffers.BufferBalancingError
        For bad depths or a same-iteration cycle in ``sub``.
    ValueError
        For an unknown or unavailable backend.

    Examples
    --------
    >>> from model.graph import Edge, Node
    >>> from pipeline.options import RunOptions
    >>> fig11 = Graph("fig11", [Node("S0"), Node("S1"), Node("S2")],
    ...               [Edge("S0", "S1"), Edge("S1", "S2"), Edge("S0", "S2")])
    >>> opts = RunOptions(backends={"buffers": "highs"}, time_limit=10, depth_per_pmu=1)
    >>> out = balance_section(fig11, None, opts, SolveSettings("highs", 10.0), section=0)
    >>> out.pmus_before, out.pmus_after, out.throughput_before, out.throughput_after
    (3, 4, 0.5, 1.0)
    >>> out.rows[2]["final_depth"], out.violations
    (2, [])
    """
    started = time.perf_counter()
    opts = buffer_options(options)
    name = f"section{section}" if section is not None else sub.name
    solution = solve_buffers(sub, settings, spec, opts, name=name)
    rows = solution.edge_rows()
    notes = list(solution.problem.notes)
    violations = _check(sub, solution, rows, spec, opts) if solution.ok else []
    before, after = _throughputs(sub, solution, rows, notes, settings)
    outcome = BufferPassOutcome(section, rows, solution.inserted_buffers(),
                                solution.pmus_before, solution.pmus_after if solution.ok
                                else solution.pmus_before, before, after,
                                {}, solution, notes, violations)
    outcome.stage = _stage(outcome, settings.backend, started)
    return outcome


def _check(sub: Graph, solution: BufferSolution, rows, spec, opts: BufferOptions) -> list[str]:
    return check_balancing(sub, rows, solution.loads, spec=spec, depth_per_pmu=opts.depth_per_pmu,
                           strict=opts.strict_new_capacity, total_pmus=solution.pmus_after)


def _throughputs(sub: Graph, solution: BufferSolution, rows, notes: list[str],
                 settings: SolveSettings):
    """Simulated throughput before and after balancing (a performance estimate; the
    balancing's legality is :func:`_check`'s), when the budget leaves room for it."""
    if not sub.edges:
        return None, None
    if settings.time_limit < SIMULATE_MIN_SECONDS:
        notes.append(f"throughput not simulated: balancing was planned {settings.time_limit:g} s "
                     f"(< {SIMULATE_MIN_SECONDS:g} s)")
        return None, None
    if settings.deadline is not None and time.monotonic() > settings.deadline:
        notes.append("throughput not simulated: past the run's deadline")
        return None, None
    if len(sub.nodes) + len(sub.edges) > SIMULATE_MAX_SIZE:
        notes.append(f"section not simulated ({len(sub.nodes)} nodes + {len(sub.edges)} edges "
                     f"> {SIMULATE_MAX_SIZE})")
        return None, None
    original = {i: r["original_depth"] for i, r in rows.items() if r["balanced"]}
    before = simulate(sub, depths=original).throughput
    if not solution.ok:
        return before, None
    tuned = {i: r["tuned_depth"] for i, r in rows.items() if r["balanced"]}
    inserted = {i: r["inserted_depth"] for i, r in rows.items() if r["inserted_depth"]}
    if tuned == original and not inserted and not any(solution.loads.values()):  # unchanged
        return before, before
    after = simulate(sub, depths=tuned, inserted=inserted, loads=solution.loads).throughput
    return before, after


def _stage(outcome: BufferPassOutcome, backend: str, started: float) -> dict[str, Any]:
    sol, res = outcome.solution, outcome.solution.result
    return stage_record(
        "buffers", outcome.section, sol.method, started,
        objective=None if res is None else res.objective,
        status=sol.status if not outcome.violations else "REJECTED",
        bound=None if res is None else res.bound, backend=backend,
        extra=dict(
            pmus_before=outcome.pmus_before, pmus_after=outcome.pmus_after,
            depth_added=sol.added_depth if sol.ok else 0, inserted_buffers=len(outcome.inserted),
            throughput_before=outcome.throughput_before,
            throughput_after=outcome.throughput_after, lp_integral=sol.lp_integral,
            loop_edges_skipped=len(sol.problem.loop_edges),
            solves=[r.to_dict() for r in sol.results], diagnosis=sol.diagnosis or None,
            violations=outcome.violations[:20], notes=outcome.notes,
            cut_short=sol.cut_short))
