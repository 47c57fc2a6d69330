"""The site model of the placement (CP-SAT, small sections) and its symmetry floor."""

import dataclasses
import random

import numpy as np
import pytest

from formulations.placement import (PlacementSearch, place_model, placement_problem,
                                    problem_cost, solve_site_model, translation_floor)
from formulations.solver import Budget, SolveSettings
from model.graph import Edge, Graph, Node
from sim.check import check_placement
from tests.formulations.test_placement_model import exhaustive_optimum


def small_graph(n, seed, units=("pcu", "pmu")):
    rng = random.Random(seed)
    nodes = [Node(f"n{i}", unit=rng.choice(units)) for i in range(n)]
    edges = [Edge(f"n{rng.randrange(i)}", f"n{i}", bandwidth=rng.choice([1.0, 0.5, 0.25]))
             for i in range(1, n)]
    edges += [Edge(f"n{a}", f"n{b}", bandwidth=0.75)
              for a, b in (rng.sample(range(n), 2) for _ in range(n // 2))]
    return Graph(f"small{seed}", nodes, edges)


def names(problem, index):
    return {n: problem.sites.ids[s] for n, s in index.items()}


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_site_model_finds_the_exhaustive_optimum_on_tiny_grid(tiny, seed):
    g = small_graph(5, seed)
    problem = placement_problem(g, tiny)
    index, status, bound = solve_site_model(problem, None, Budget(20))
    assert status == "OPTIMAL"
    assert check_placement(g, tiny, names(problem, index)).ok
    optimum = exhaustive_optimum(g, tiny)
    assert problem_cost(problem, names(problem, index)) == pytest.approx(optimum)
    assert bound == pytest.approx(optimum, abs=1e-5)


def pcu_wheel(spokes, seed):
    """A PCU hub on a cycle of PCUs: more partners than the hub's 4 PCU sites at distance 0,
    and odd cycles, so every placement costs something."""
    rng = random.Random(seed)
    rim = [f"r{i}" for i in range(spokes)]
    edges = [Edge("hub", r, bandwidth=rng.choice([1.0, 0.5])) for r in rim]
    edges += [Edge(a, b, bandwidth=rng.choice([0.75, 0.25]))
              for a, b in zip(rim, rim[1:] + rim[:1])]
    return Graph(f"wheel{spokes}", [Node("hub", unit="pcu")] + [Node(r, unit="pcu") for r in rim],
                 edges)


@pytest.mark.parametrize("spokes", [5, 6])
def test_symmetry_floor_keeps_the_optimum(plasticine, spokes):
    g = pcu_wheel(spokes, seed=spokes)
    problem = placement_problem(g, plasticine)
    costs = []
    for symmetry in (True, False):
        index, status, _ = solve_site_model(problem, None, Budget(30), symmetry=symmetry)
        assert status == "OPTIMAL"
        costs.append(problem_cost(problem, names(problem, index)))
    assert costs[0] == pytest.approx(costs[1])
    assert costs[0] > 0   # the floor is tested on a placement that is not free


def test_translation_floor_only_where_the_chip_repeats(plasticine):
    g = small_graph(6, 1)
    problem = placement_problem(g, plasticine)
    assert translation_floor(problem) == (0, 0)   # 16 rows of alternating PCU/PMU
    penalised = placement_problem(g, plasticine, site_penalty={"U0_0": 1.0})
    assert translation_floor(penalised) is None
    with_door = Graph("door", g.nodes + [Node("load", unit="agcu")],
                      g.edges + [Edge("load", "n0")])
    assert translation_floor(placement_problem(with_door, plasticine)) is None
    hosts = {u: h.copy() for u, h in problem.hosts.items()}
    odd = problem.sites.index["U5_4"]          # one PMU site turned PCU breaks the pattern
    hosts["pcu"][odd], hosts["pmu"][odd] = True, False
    assert translation_floor(dataclasses.replace(problem, hosts=hosts)) is None


def test_small_sections_on_cp_sat_use_the_site_model(plasticine):
    g = small_graph(12, 7)
    out = place_model(g, plasticine, g.node_ids,
                      SolveSettings(backend="cp-sat", time_limit=3, seed=0))
    assert "site model" in out.method
    assert check_placement(g, plasticine, out.placement).ok
    problem = placement_problem(g, plasticine)
    assert out.objective == pytest.approx(problem_cost(problem, out.placement))
    assert out.objective <= out.extra["warm_start_cost"] + 1e-9
    assert out.bound is not None and out.bound <= out.objective + 1e-9
    milp = place_model(g, plasticine, g.node_ids,
                       SolveSettings(backend="highs", time_limit=3, seed=0))
    assert "site model" not in milp.method


def test_site_model_is_not_used_when_congestion_counts(tiny):
    # 12 pairs on a 4x4 chip: more than the narrowest cut's channels at share 0.1
    g = small_graph(8, 9)
    out = place_model(g, tiny, g.node_ids, SolveSettings(backend="cp-sat", time_limit=3),
                      search=PlacementSearch(cut_share=0.1))
    assert placement_problem(g, tiny, cut_share=0.1).congestion_active
    assert "site model" not in out.method
    assert np.isfinite(out.objective)
