"""One model description, two backends: the emitters state the same families and agree."""

from __future__ import annotations

import pytest

from formulations.cgra.model import build_description
from formulations.cgra.problem import problem_from_graph
from formulations.solver import ModelDescription, SolveStatus, solve_cp_model
from hardware import load_hardware
from model.graph import Edge, Graph, Node


def _both(d: ModelDescription):
    """The CP-SAT and the HiGHS answer of one description."""
    cp, _ = d.to_cp()
    linear, _ = d.to_linear()
    return solve_cp_model(cp, time_limit=20), linear.solve(backend="highs", time_limit=30)


def test_cgra_description_feeds_cp_sat_and_highs_alike():
    g = Graph("acc", [Node("a", op="LOAD"), Node("b", op="MUL"), Node("c", op="ADD")],
              [Edge("a", "b"), Edge("b", "c"), Edge("c", "c", distance=1)])
    d, _ = build_description(problem_from_graph(g, load_hardware("cgra4x4")), 2, 8)
    cp, _ = d.to_cp()
    linear, _ = d.to_linear()
    stated = d.families()
    assert set(linear.families()) == set(stated)          # every family on the linear side
    assert len(cp.proto.constraints) == sum(stated.values())  # one CP constraint per statement
    cp_result, milp_result = _both(d)
    assert cp_result.status is milp_result.status is SolveStatus.OPTIMAL
    assert cp_result.objective == milp_result.objective == 4


@pytest.mark.parametrize("low", [0, 3])
def test_min_equality_is_exact_on_the_linear_side(low):
    d = ModelDescription("least")
    x = [d.int(f"x{i}", low, 9) for i in range(3)]
    least = d.int("least", 0, 9)
    d.linear([(1, x[0])], 4, 4, "F1_fix")
    d.linear([(1, x[1]), (1, x[2])], 13, None, "F2_sum")
    d.min_equality(least, [[(1, v)] for v in x], "F3_min")
    d.minimize([(-1, least)] + [(1, v) for v in x])   # pull least up: only the min holds it
    cp_result, milp_result = _both(d)
    assert cp_result.objective == milp_result.objective == 13 + 4 - 4
    assert milp_result.values["least"] == pytest.approx(4)


def test_clauses_and_pairs_mean_the_same_on_both_sides():
    d = ModelDescription("pairs")
    a = [[d.bool(f"a{i}_{p}") for p in range(2)] for i in range(3)]
    b = [[d.bool(f"b{i}_{s}") for s in range(2)] for i in range(3)]
    for i in range(3):
        d.exactly_one(a[i], "A1_first")
        d.exactly_one(b[i], "A1_second")
    d.all_different_pairs([(list(enumerate(a[i])), list(enumerate(b[i]))) for i in range(3)],
                          2, "C1_pairs")
    d.clause([~a[0][0], ~b[0][0]], "C2_not_origin")
    d.clause([a[1][0]], "C3_first")
    d.minimize([(s, b[i][s]) for i in range(3) for s in range(2)])
    cp_result, milp_result = _both(d)
    assert cp_result.objective == milp_result.objective == 1   # two pairs have s = 0


def test_streaming_description_feeds_cp_sat_and_highs_alike():
    from benchmarks.se_generators import se_random_dag
    from formulations.streaming.model import build_description as streaming_description
    from formulations.streaming.problem import lower_bounds, problem_from_graph as se_problem
    problem = se_problem(se_random_dag(6, seed=2), load_hardware("se16"))
    d, _ = streaming_description(problem, lower_bounds(problem)["ii"] + 1)
    cp, _ = d.to_cp()
    linear, _ = d.to_linear()
    assert set(linear.families()) == set(d.families())
    assert {"A3_slot", "R1_reach", "T2_timing", "H1_hold", "O2_anchor"} <= set(d.families())
    assert len(cp.proto.constraints) == sum(d.families().values()) + d.families()["M2_capacity"]
    cp_result, milp_result = _both(d)
    assert cp_result.status is milp_result.status is SolveStatus.OPTIMAL
    assert cp_result.objective == milp_result.objective
