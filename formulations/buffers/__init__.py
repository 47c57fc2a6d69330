"""Stage-buffer balancing: equal depth on every reconvergent path, fewest PMUs (source 001)."""

from formulations.buffers.model import (MODES, DEFAULT_DEPTH, BufferOptions, StageBuffer, InsertionSlot, BufferProblem, BufferVars, BufferSolution, BufferBalancingError, buffer_problem, build_buffer_model, solve_buffers, buffer_capacity, arrival_depths, unbalanced_joins, pmus_for)
from formulations.buffers.heuristic import (HeuristicAnswer, pairwise_balance, warm_start)

__all__ = ['MODES', 'DEFAULT_DEPTH', 'BufferOptions', 'StageBuffer', 'InsertionSlot', 'BufferProblem', 'BufferVars', 'BufferSolution', 'BufferBalancingError', 'buffer_problem', 'build_buffer_model', 'solve_buffers', 'buffer_capacity', 'arrival_depths', 'unbalanced_joins', 'pmus_for', 'HeuristicAnswer', 'pairwise_balance', 'warm_start']
