"""Stage-buffer balancing: equal depth on every reconvergent path, fewest PMUs (source 001)."""

from formulations.buffers.heuristic import HeuristicAnswer, pairwise_balance, warm_start
from formulations.buffers.materialize import materialize_buffers
from formulations.buffers.model import (BufferSolution, BufferVars, buffer_hint,
                                        build_buffer_model, solve_buffers)
from formulations.buffers.problem import (DEFAULT_DEPTH, MODES, BufferBalancingError,
                                          BufferOptions, BufferProblem, InsertionSlot,
                                          StageBuffer, arrival_depths, balanced_as_is,
                                          buffer_capacity, buffer_problem, edge_depth, pmus_for,
                                          unbalanced_joins)

__all__ = ["MODES", "DEFAULT_DEPTH", "BufferOptions", "StageBuffer", "InsertionSlot",
           "BufferProblem", "BufferVars", "BufferSolution", "BufferBalancingError",
           "buffer_problem", "build_buffer_model", "buffer_hint", "solve_buffers",
           "buffer_capacity", "edge_depth", "arrival_depths", "unbalanced_joins",
           "balanced_as_is", "pmus_for", "HeuristicAnswer", "pairwise_balance", "warm_start",
           "materialize_buffers"]
