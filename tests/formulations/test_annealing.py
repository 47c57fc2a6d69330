"""The simulated-annealing placer (VPR schedule): legal, never worse than greedy, seeded."""

import pytest

from formulations.placement import (PlacementSearch, anneal, fitted_moves, greedy_place,
                                    place_annealing, placement_problem, problem_cost,
                                    same_kind_step)
from formulations.solver import Budget, SolveSettings
from model.graph import Edge, Graph, Node
from sim.check import check_placement
from tests.formulations.test_placement_model import exhaustive_optimum, random_section, star_graph


def test_annealing_is_legal_and_not_worse_than_greedy(plasticine):
    g = random_section(50)
    out = place_annealing(g, plasticine, g.node_ids, SolveSettings(time_limit=2, seed=0))
    assert check_placement(g, plasticine, out.placement).ok
    greedy = problem_cost(placement_problem(g, plasticine), greedy_place(g, plasticine, g.node_ids))
    assert out.objective <= greedy + 1e-9
    assert out.extra["moves"] > 0


def test_annealing_is_deterministic_for_a_seed(plasticine):
    g = random_section(30, seed=3)
    problem = placement_problem(g, plasticine)
    start = greedy_place(g, plasticine, g.node_ids)
    a = anneal(problem, plasticine, start, Budget(30), seed=5)
    b = anneal(problem, plasticine, start, Budget(30), seed=5)
    assert a[0] == b[0] and a[1] == b[1]


def test_annealing_finds_the_tiny_optimum(tiny):
    g = star_graph()
    out = place_annealing(g, tiny, g.node_ids, SolveSettings(time_limit=3, seed=0))
    assert out.objective == pytest.approx(exhaustive_optimum(g, tiny))


def test_agcu_nodes_stay_on_agcus(tiny):
    g = Graph("io", [Node("ld", unit="agcu"), Node("c", unit="pcu"), Node("st", unit="agcu")],
              [Edge("ld", "c"), Edge("c", "st")])
    out = place_annealing(g, tiny, g.node_ids, SolveSettings(time_limit=1, seed=0))
    assert check_placement(g, tiny, out.placement).ok
    assert tiny.site(out.placement["ld"]).unit == "agcu"


def test_a_schedule_that_would_overrun_its_moves_gets_fewer_moves_per_temperature():
    import math
    nominal, nodes = 5000, 604
    hot, cost_per_pair = 10.0, 1.0  # exit at 0.005: ~150 temperatures to go at 0.95
    assert fitted_moves(nominal, nodes, hot, cost_per_pair, 10**9) == nominal
    moves = fitted_moves(nominal, nodes, hot, cost_per_pair, 200_000)
    to_go = math.log(0.005 / hot) / math.log(0.95) + 1
    assert nodes <= moves < nominal and moves * to_go <= 200_000
    # almost nothing left: the floor, one move per node, but never more than are left
    assert fitted_moves(nominal, nodes, hot, cost_per_pair, 1000) == nodes
    assert fitted_moves(nominal, nodes, hot, cost_per_pair, 100) == 100
    # cold already (below the exit temperature): nothing to fit
    assert fitted_moves(nominal, nodes, 0.001, cost_per_pair, 10**9) == nominal


def test_same_kind_step_is_two_on_the_checkerboard_and_one_for_any_unit(plasticine):
    pcus = Graph("pcus", [Node("a", unit="pcu"), Node("b", unit="pcu")], [Edge("a", "b")])
    anys = Graph("anys", [Node("a", unit="any"), Node("b", unit="any")], [Edge("a", "b")])
    loads = Graph("io", [Node("ld", unit="agcu"), Node("b", unit="any")], [Edge("ld", "b")])
    assert same_kind_step(placement_problem(pcus, plasticine), plasticine) == 2
    assert same_kind_step(placement_problem(anys, plasticine), plasticine) == 1
    assert same_kind_step(placement_problem(loads, plasticine), plasticine) == 1  # AGCUs jump


def test_the_range_limit_never_falls_below_its_floor(plasticine):
    g = random_section(40, seed=2)
    problem = placement_problem(g, plasticine)
    start = greedy_place(g, plasticine, g.node_ids)
    _, _, vpr = anneal(problem, plasticine, start, Budget(30), seed=1)
    _, cost, floored = anneal(problem, plasticine, start, Budget(30), seed=1, range_floor=3)
    assert vpr["range_limit"] < 3 <= floored["range_limit"]
    assert cost <= problem_cost(problem, start) + 1e-9


def test_one_anneal_without_restarts_on_the_wirelength_reports_the_full_cost(plasticine):
    g = random_section(30, seed=4)
    search = PlacementSearch(anneal_restarts=False, anneal_congestion=False, cut_share=0.05)
    out = place_annealing(g, plasticine, g.node_ids, SolveSettings(time_limit=1, seed=0),
                          search=search)
    assert check_placement(g, plasticine, out.placement).ok
    assert "one_run" not in out.extra            # a single anneal, not anneal_to_budget
    full = placement_problem(g, plasticine, cut_share=0.05)
    assert out.objective == pytest.approx(problem_cost(full, out.placement))
