"""Node ordering: the priority-queue sorter of source 000."""

from formulations.sorter.priority_sort import (SEED_POLICIES, CRITERIA, DEFAULT_CRITERIA, KEY1_RULES, SorterConfig, TraceStep, SortResult, sort_nodes, select_seed, longest_hop_paths, cycle_breaking_edges, node_keys)

__all__ = ['SEED_POLICIES', 'CRITERIA', 'DEFAULT_CRITERIA', 'KEY1_RULES', 'SorterConfig', 'TraceStep', 'SortResult', 'sort_nodes', 'select_seed', 'longest_hop_paths', 'cycle_breaking_edges', 'node_keys']
