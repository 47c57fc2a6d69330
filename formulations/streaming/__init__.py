"""Modulo placement and scheduling on the Streaming Engine (source 004).

Modules, in reading order: :mod:`~formulations.streaming.problem` (data, rules, pre-checks,
bounds, the answer), :mod:`~formulations.streaming.bounds` (cycle bounds, issue windows),
:mod:`~formulations.streaming.model` (the CP-SAT model at one II),
:mod:`~formulations.streaming.layout` (the tile layout relaxation),
:mod:`~formulations.streaming.sweep` (the II sweep and its proofs),
:mod:`~formulations.streaming.milp` (the MILP twin), :mod:`~formulations.streaming.env` (the
paper's sequential environment and its heuristics), :mod:`~formulations.streaming.split`
(pass trees, splits into SDFs over the AF) and :mod:`~formulations.streaming.kernel`
(:func:`schedule_kernel`: every decision of one kernel). This package only re-exports.
"""

from formulations.streaming.problem import (RULES, SPLIT_PROOF_RULES, StreamingInfeasible,
                                            StreamingProblem, StreamingSchedule, delays_needed,
                                            holds_fit, lower_bounds, precheck,
                                            problem_from_graph, schedule_cycles,
                                            schedule_from_lists)
from formulations.streaming.bounds import (cycle_bound, issue_windows, max_wait, sibling_costs,
                                           tail_bound)
from formulations.streaming.model import build_cp_model, canonical_schedule, solve_model
from formulations.streaming.layout import (add_layout_rules, build_layout_model, layout_refutes,
                                           solve_layout)
from formulations.streaming.sweep import (close_gap, explain, prove_from_above, relax_holds,
                                          solve_at_ii, sweep_ii)
from formulations.streaming.milp import build_milp, solve_milp, sweep_milp
from formulations.streaming.env import (LAMBDA, StreamingEnv, evolutionary_schedule,
                                        greedy_policy, greedy_schedule, random_policy,
                                        random_schedule, run_policy)
from formulations.streaming.split import (PASS_OP, AfEdge, SdfPart, SplitPlan, SplitSchedule,
                                          af_variable, batch_size, max_fan_out, part_graph,
                                          phase_starts, relieve_fan_out, repair_of,
                                          split_into_sdfs, stuck_recurrences)
from formulations.streaming.kernel import (KernelPlan, KernelResult, SdfAnswer, SdfUnmapped,
                                           schedule_kernel)

__all__ = [
    "RULES", "SPLIT_PROOF_RULES", "StreamingInfeasible", "StreamingProblem", "StreamingSchedule",
    "delays_needed", "holds_fit", "lower_bounds", "precheck", "problem_from_graph",
    "schedule_cycles", "schedule_from_lists",
    "cycle_bound", "issue_windows", "max_wait", "sibling_costs", "tail_bound",
    "build_cp_model", "canonical_schedule", "solve_model",
    "add_layout_rules", "build_layout_model", "layout_refutes", "solve_layout",
    "close_gap", "explain", "prove_from_above", "relax_holds", "solve_at_ii", "sweep_ii",
    "build_milp", "solve_milp", "sweep_milp",
    "LAMBDA", "StreamingEnv", "evolutionary_schedule", "greedy_policy", "greedy_schedule",
    "random_policy", "random_schedule", "run_policy",
    "PASS_OP", "AfEdge", "SdfPart", "SplitPlan", "SplitSchedule", "af_variable", "batch_size",
    "max_fan_out", "part_graph", "phase_starts", "relieve_fan_out", "repair_of",
    "split_into_sdfs", "stuck_recurrences",
    "KernelPlan", "KernelResult", "SdfAnswer", "SdfUnmapped", "schedule_kernel",
]
