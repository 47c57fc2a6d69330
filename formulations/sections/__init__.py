"""Section cuts: split a graph into sections that fit the chip (source 003)."""

from formulations.sections.cut import SOLVERLESS, cut_sections
from formulations.sections.estimates import (estimate_units, materialize_banks, node_units,
                                             state_bytes, tile_pmus)
from formulations.sections.greedy import category_topological_order, greedy_cut, greedy_sections
from formulations.sections.model import (build_section_model, decode_assignment, forced_traffic,
                                         section_windows, solve_section_model)
from formulations.sections.problem import (Capacity, Scale, Section, SectionError, SectionPlan,
                                           cut_traffic, edge_traffic, lower_bound, scale_of,
                                           unit_demand)

__all__ = ["Capacity", "Section", "SectionPlan", "SectionError", "unit_demand", "greedy_cut",
           "greedy_sections", "category_topological_order", "lower_bound", "cut_sections",
           "SOLVERLESS", "forced_traffic", "Scale", "scale_of", "cut_traffic", "edge_traffic",
           "build_section_model", "solve_section_model", "decode_assignment", "section_windows",
           "tile_pmus", "state_bytes", "node_units", "estimate_units", "materialize_banks"]
