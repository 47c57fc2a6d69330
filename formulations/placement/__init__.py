"""Placement of a section's nodes onto unit sites: greedy, exact model, site model, annealing, LNS, tabu."""

from formulations.placement.model import (PlacementError, PlacementOutcome, PlacementProblem, PLACERS, greedy_place, place_greedy, placement_cost, placement_problem, problem_cost, cost_terms, build_placement_model, place_model, place_milp, place_cpsat, WEIGHT_SCALE, SITE_MODEL_NODES, site_model_fits)
from formulations.placement.site_model import (solve_site_model, translation_floor, site_model_applies)
from formulations.placement.annealing import (anneal, anneal_with_restarts, anneal_to_budget, place_annealing, same_kind_step, AnnealStats)
from formulations.placement.lns import (lns, NEIGHBOURHOODS)
from formulations.placement.tabu import (tabu_search)
from formulations.placement.bound import (star_bound)
from formulations.placement.congestion import (CONGESTION_WEIGHT, mesh_cuts, crossed_cuts, cut_demand, congestion_cost)

__all__ = ['PlacementError', 'PlacementOutcome', 'PlacementProblem', 'PLACERS', 'greedy_place', 'place_greedy', 'placement_cost', 'placement_problem', 'problem_cost', 'cost_terms', 'build_placement_model', 'place_model', 'place_milp', 'place_cpsat', 'WEIGHT_SCALE', 'SITE_MODEL_NODES', 'site_model_fits', 'solve_site_model', 'translation_floor', 'site_model_applies', 'anneal', 'anneal_with_restarts', 'anneal_to_budget', 'place_annealing', 'same_kind_step', 'AnnealStats', 'lns', 'NEIGHBOURHOODS', 'tabu_search', 'star_bound', 'CONGESTION_WEIGHT', 'mesh_cuts', 'crossed_cuts', 'cut_demand', 'congestion_cost']
