"""Modulo mapping of loop kernels on generic CGRAs (issue 23).

Modules, in reading order: :mod:`~formulations.cgra.problem` (data, rules, bounds, the
answer), :mod:`~formulations.cgra.listsched` (the classic baseline and warm start: iterative
modulo list scheduling with PathFinder routing), :mod:`~formulations.cgra.relax` (the
placement-timing relaxation: II proofs and length bounds), :mod:`~formulations.cgra.model`
(the CP-SAT model with the time-extended routing resource graph, modulo II),
:mod:`~formulations.cgra.milp` (its MILP twin), :mod:`~formulations.cgra.mobility` (that model
in tight mobility windows, bisected over the II: large kernels below the list scheduler's
II), :mod:`~formulations.cgra.sweep` (the II sweep and its proofs) and
:mod:`~formulations.cgra.kernel` (:func:`map_kernel`: every decision of
one kernel). This package only re-exports.
"""

from formulations.cgra.problem import (RULES, CgraInfeasible, CgraProblem, CgraSchedule,
                                       lower_bounds, precheck, problem_from_graph, rec_ok,
                                       time_windows)
from formulations.cgra.listsched import Router, list_schedule, schedule_at_ii
from formulations.cgra.relax import build_relaxation, safe_horizon, solve_relaxation
from formulations.cgra.model import (build_full_model, decode_full, full_hint, model_size,
                                     solve_full)
from formulations.cgra.sweep import length_ladder, sweep_ii
from formulations.cgra.mobility import mobility_search, window_map
from formulations.cgra.milp import build_milp, solve_milp, sweep_milp
from formulations.cgra.kernel import PLACERS, CgraResult, map_kernel

__all__ = [
    "RULES", "CgraInfeasible", "CgraProblem", "CgraSchedule", "lower_bounds", "precheck",
    "problem_from_graph", "rec_ok", "time_windows",
    "Router", "list_schedule", "schedule_at_ii",
    "build_relaxation", "safe_horizon", "solve_relaxation",
    "build_full_model", "decode_full", "full_hint", "model_size", "solve_full",
    "length_ladder", "sweep_ii", "mobility_search", "window_map", "build_milp", "solve_milp",
    "sweep_milp",
    "PLACERS", "CgraResult", "map_kernel",
]
