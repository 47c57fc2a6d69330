"""Placement of a section's nodes onto unit sites: greedy, exact and site models, annealing, LNS.

Modules, in reading order: ``problem`` (data, cost, outcome), ``settings`` (search knobs),
``congestion`` (the cut term), ``greedy`` (warm start), ``model`` (the exact MILP),
``site_model`` (the CP-SAT site model), ``annealing``, ``tabu``, ``lns``, ``bound``,
``search`` (:func:`place_model`, the driver) and ``placers`` (the :data:`PLACERS`
registry). This module only re-exports their public names.
"""

from formulations.placement.annealing import (AnnealState, AnnealStats, BlockDraws, anneal,
                                              anneal_to_budget, anneal_with_restarts,
                                              fitted_moves, place_annealing, propose_move,
                                              same_kind_step)
from formulations.placement.bound import star_bound
from formulations.placement.congestion import (CONGESTION_WEIGHT, congestion_cost, crossed_cuts,
                                               cut_demand, mesh_cuts)
from formulations.placement.greedy import greedy_place, place_greedy
from formulations.placement.lns import NEIGHBOURHOODS, lns
from formulations.placement.model import (build_placement_model, candidate_sites,
                                          decode_placement, export_model, hint_placement)
from formulations.placement.placers import PLACERS, place_cpsat, place_milp
from formulations.placement.problem import (UNIT_KINDS, WEIGHT_SCALE, PlacementError,
                                            PlacementOutcome, PlacementProblem, SiteTable,
                                            check_capacity, cost_terms, placement_cost,
                                            placement_problem, problem_cost, site_table)
from formulations.placement.search import (MAX_EXACT_VARS, ONE_SCALE_CV, ONE_SCALE_SHARE,
                                           SPREAD_SHARE, anneal_share_for, fill_idle,
                                           place_model)
from formulations.placement.settings import PATIENCE, PlacementSearch
from formulations.placement.site_model import (SITE_MODEL_NODES, site_model_applies,
                                               site_model_fits, solve_site_model,
                                               translation_floor)
from formulations.placement.tabu import TabuSearch, tabu_search

__all__ = [
    # problem, settings, registry
    "PlacementError", "PlacementOutcome", "PlacementProblem", "SiteTable", "site_table",
    "placement_problem", "problem_cost", "cost_terms", "placement_cost", "check_capacity",
    "WEIGHT_SCALE", "UNIT_KINDS", "PlacementSearch", "PATIENCE", "PLACERS",
    # placers
    "place_greedy", "place_model", "place_milp", "place_cpsat", "place_annealing",
    # greedy, exact model, driver
    "greedy_place", "build_placement_model", "candidate_sites", "hint_placement",
    "decode_placement", "export_model", "fill_idle", "anneal_share_for", "MAX_EXACT_VARS",
    "ONE_SCALE_SHARE", "SPREAD_SHARE", "ONE_SCALE_CV",
    # site model
    "solve_site_model", "translation_floor", "site_model_applies", "site_model_fits",
    "SITE_MODEL_NODES",
    # annealing, tabu, LNS, bound
    "anneal", "anneal_with_restarts", "anneal_to_budget", "same_kind_step", "AnnealStats",
    "AnnealState", "BlockDraws", "propose_move", "fitted_moves", "tabu_search", "TabuSearch",
    "lns", "NEIGHBOURHOODS", "star_bound",
    # congestion
    "CONGESTION_WEIGHT", "mesh_cuts", "crossed_cuts", "cut_demand", "congestion_cost",
]
