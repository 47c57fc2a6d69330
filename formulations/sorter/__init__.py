"""Node ordering: the priority-queue sorter of source 000."""

from formulations.sorter.priority_sort import (CRITERIA, DEFAULT_CRITERIA, KEY1_RULES,
                                               SEED_POLICIES, LiteralKeys, SorterConfig,
                                               SortResult, TraceStep, cycle_breaking_edges,
                                               longest_hop_paths, node_keys, seed_order,
                                               select_seed, sort_nodes)

__all__ = ["SEED_POLICIES", "CRITERIA", "DEFAULT_CRITERIA", "KEY1_RULES", "SorterConfig",
           "TraceStep", "SortResult", "sort_nodes", "select_seed", "seed_order",
           "longest_hop_paths", "cycle_breaking_edges", "node_keys", "LiteralKeys"]
