"""Section cuts: split a graph into sections that fit the chip (source 003)."""

from formulations.sections.cut import (Capacity, Section, SectionPlan, SectionError, unit_demand, greedy_cut, lower_bound, cut_sections, forced_traffic, Scale, scale_of, cut_traffic, edge_traffic, build_section_model)
from formulations.sections.estimates import (tile_pmus, state_bytes, node_units, estimate_units, materialize_banks)

__all__ = ['Capacity', 'Section', 'SectionPlan', 'SectionError', 'unit_demand', 'greedy_cut', 'lower_bound', 'cut_sections', 'forced_traffic', 'Scale', 'scale_of', 'cut_traffic', 'edge_traffic', 'build_section_model', 'tile_pmus', 'state_bytes', 'node_units', 'estimate_units', 'materialize_banks']
