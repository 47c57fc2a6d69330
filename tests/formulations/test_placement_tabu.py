"""Robust tabu search: its incremental cost bookkeeping, legality and progress."""


import numpy as np
import pytest

from formulations.placement import (TabuSearch, greedy_place, placement_problem, problem_cost,
                                    tabu_search)
from formulations.solver import Budget
from tests.formulations.test_placement_model import exhaustive_optimum, random_section, star_graph


def start_of(graph, fabric):
    problem = placement_problem(graph, fabric, congestion_weight=0.0)
    start = greedy_place(graph, fabric, graph.node_ids)
    return problem, {n: problem.sites.index[s] for n, s in start.items()}


def assert_legal(problem, index):
    assert len(set(index.values())) == len(index)
    assert all(problem.hosts[problem.units[n]][s] for n, s in index.items())


def test_incremental_cost_equals_the_recomputed_cost(plasticine):
    problem, index = start_of(random_section(40, seed=5), plasticine)
    search = TabuSearch(problem, index, np.random.default_rng(0))
    for _ in range(10):
        for _ in range(25):
            search.step()  # uphill steps included: the walk leaves local optima
        now = dict(zip(problem.nodes, map(int, search.pos)))
        assert_legal(problem, now)
        assert search.cost == pytest.approx(problem_cost(problem, problem.to_site_ids(now)))
    best = dict(zip(problem.nodes, map(int, search.best)))
    assert search.best_cost == pytest.approx(problem_cost(problem, problem.to_site_ids(best)))


def test_tabu_search_improves_greedy_and_stays_legal(plasticine):
    problem, index = start_of(random_section(60, seed=2), plasticine)
    start_cost = problem_cost(problem, problem.to_site_ids(index))
    found, cost = tabu_search(problem, index, Budget(1.0), seed=1)
    assert_legal(problem, found)
    assert cost == pytest.approx(problem_cost(problem, problem.to_site_ids(found)))
    assert cost < start_cost


def test_tabu_search_reaches_the_exhaustive_optimum_on_a_tiny_grid(tiny):
    graph = star_graph()
    problem, index = start_of(graph, tiny)
    found, cost = tabu_search(problem, index, Budget(1.0), seed=0)
    assert_legal(problem, found)
    assert cost == pytest.approx(exhaustive_optimum(graph, tiny))
