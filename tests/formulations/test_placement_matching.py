"""Independent-set matching: windows without inner pairs, re-placed optimally."""

import itertools

import pytest

from formulations.placement import _names, greedy_place, placement_problem, problem_cost
from formulations.placement_lns import _adjacency
from formulations.placement_matching import _window_sites, match_window, solve_matching
from tests.formulations.test_placement_model import random_section


@pytest.fixture(scope="module")
def section(plasticine):
    graph = random_section(40, seed=3)
    problem = placement_problem(graph, plasticine, congestion_weight=0.0)
    start = greedy_place(graph, plasticine, graph.node_ids)
    index = {n: problem.sites.index[s] for n, s in start.items()}
    return problem, index, _adjacency(problem)


def test_window_has_no_inner_pair(section):
    problem, index, adjacency = section
    for seed_node in problem.nodes[:10]:
        window = match_window(problem, index, adjacency, seed_node, 12)
        assert seed_node in window and len(set(window)) == len(window)
        inner = [(a, b) for a, b, _ in problem.pairs if a in window and b in window]
        assert not inner


def exhaustive(problem, index, window):
    """The cheapest legal placement of ``window`` onto its sites, by brute force."""
    sites = [int(s) for s in _window_sites(problem, index, window)]
    best = problem_cost(problem, _names(problem, index))
    for chosen in itertools.permutations(sites, len(window)):
        if all(problem.hosts[problem.units[n]][s] for n, s in zip(window, chosen)):
            trial = index | dict(zip(window, chosen))
            best = min(best, problem_cost(problem, _names(problem, trial)))
    return best


@pytest.mark.parametrize("seed_node", ["n0", "n7", "n21"])
def test_matching_is_the_exhaustive_optimum_of_its_window(section, seed_node):
    problem, index, adjacency = section
    window = match_window(problem, index, adjacency, seed_node, 4)
    optimum = exhaustive(problem, index, window)
    new = solve_matching(problem, index, adjacency, window)
    cost = problem_cost(problem, _names(problem, new or index))
    assert cost == pytest.approx(optimum, abs=1e-9)


def test_matching_sweeps_improve_the_greedy_placement_and_stay_legal(section):
    problem, index, adjacency = section
    current = dict(index)
    for seed_node in problem.nodes:
        window = match_window(problem, current, adjacency, seed_node, 16)
        current = solve_matching(problem, current, adjacency, window) or current
    assert len(set(current.values())) == len(current)
    assert all(problem.hosts[problem.units[n]][s] for n, s in current.items())
    assert problem_cost(problem, _names(problem, current)) < problem_cost(
        problem, _names(problem, index))
