"""The placement model's lower bound, its congestion term, and the LNS's gap report."""

import itertools
import math
import random
from dataclasses import replace

import numpy as np
import pytest

from formulations.placement import (WEIGHT_SCALE, AnnealState, BlockDraws, PlacementSearch,
                                    build_placement_model, candidate_sites, cost_terms,
                                    cut_demand, greedy_place, hint_placement, mesh_cuts,
                                    place_annealing, place_cpsat, place_milp, place_model,
                                    placement_problem, problem_cost, propose_move, star_bound)
from formulations.solver import SolveSettings, solve_model_file
from model.graph import Edge, Graph, Node
from sim.check import check_placement
from tests.formulations.test_placement_model import random_section


def hub_graph():
    """A PCU hub with 5 PMU partners: only 4 PMUs share a switch with it."""
    nodes = [Node("h", unit="pcu"), Node("c", unit="pcu")] + [
        Node(f"m{k}", unit="pmu") for k in range(5)]
    edges = [Edge("h", f"m{k}", bandwidth=1.0 - 0.1 * k) for k in range(5)] + [Edge("c", "m0")]
    return Graph("hub", nodes, edges)


def random_small(seed):
    rng = random.Random(seed)
    nodes = [Node(f"c{k}", unit="pcu") for k in range(3)] + [Node(f"m{k}", unit="pmu")
                                                            for k in range(2)]
    ids = [n.id for n in nodes]
    edges = []
    for _ in range(7):
        a, b = rng.sample(ids, 2)
        edges.append(Edge(a, b, bandwidth=rng.choice([1.0, 0.5, 0.01, 1e-4])))
    return Graph(f"small{seed}", nodes, edges)


def exhaustive_optimum(graph, fabric, **problem_options):
    problem = placement_problem(graph, fabric, **problem_options)
    groups = {}
    for n in graph.nodes:
        groups.setdefault(n.unit, []).append(n.id)
    choices = [list(itertools.permutations([s.id for s in fabric.sites_of(unit)], len(ids)))
               for unit, ids in groups.items()]
    best = float("inf")
    for combo in itertools.product(*choices):
        placement = {}
        for ids, sites in zip(groups.values(), combo):
            placement.update(zip(ids, sites))
        best = min(best, problem_cost(problem, placement))
    return best


@pytest.mark.parametrize("graph", [hub_graph(), random_small(1), random_small(2)],
                         ids=lambda g: g.name)
def test_star_bound_never_exceeds_the_exhaustive_optimum(tiny, graph):
    bound = star_bound(placement_problem(graph, tiny))
    assert 0.0 <= bound <= exhaustive_optimum(graph, tiny) + 1e-12


def test_star_bound_sees_fan_out(tiny):
    # the 5th PMU partner of the hub is at least one hop away: the lightest (0.6) pays
    assert star_bound(placement_problem(hub_graph(), tiny)) == pytest.approx(0.6)


@pytest.mark.parametrize("placer", [place_cpsat, place_milp])
@pytest.mark.parametrize("graph", [hub_graph(), random_small(3)], ids=lambda g: g.name)
def test_tiny_grid_gap_zero_with_congestion(tiny, placer, graph):
    # a tenth of each cut's channels: the congestion term is active on the tiny grid
    optimum = exhaustive_optimum(graph, tiny, cut_share=0.1)
    out = placer(graph, tiny, graph.node_ids, SolveSettings(time_limit=30, seed=0),
                 search=PlacementSearch(cut_share=0.1))
    assert check_placement(graph, tiny, out.placement).ok
    assert placement_problem(graph, tiny, cut_share=0.1).congestion_active
    assert out.objective == pytest.approx(optimum, rel=1e-6, abs=1e-9)
    assert out.status == "OPTIMAL" and out.extra["gap"] == 0.0
    assert out.extra["wirelength"] + out.extra["congestion"] == pytest.approx(out.objective)


def test_cut_demand_adds_up_to_unweighted_wirelength(plasticine):
    g = random_section(40, seed=3)
    problem = placement_problem(g, plasticine)
    placement = greedy_place(g, plasticine, g.node_ids)
    index = {n: problem.sites.index[s] for n, s in placement.items()}
    hops = sum(problem.sites.dist[index[a], index[b]] for a, b, _ in problem.pairs)
    assert cut_demand(problem, index).sum() == hops


def test_mesh_cuts_count_switch_links_both_ways(tiny):
    cuts = mesh_cuts(tiny)
    # 5 x 5 switches: 4 row lines and 4 column lines, each crossed by 5 links x 2 ways x 2
    assert len(cuts) == 8 and set(cuts[:, 2]) == {20}
    assert set(mesh_cuts(tiny, cut_share=0.5)[:, 2]) == {10}


def test_annealing_moves_price_congestion_exactly(plasticine):
    g = random_section(50, seed=5)
    problem = placement_problem(g, plasticine, cut_share=0.05)
    assert problem.congestion_active
    state = AnnealState(problem, plasticine, greedy_place(g, plasticine, g.node_ids))
    draw = BlockDraws(np.random.default_rng(0))
    checked = 0
    while checked < 150:
        move = propose_move(state, draw, 8)
        if move is None:
            continue
        before = problem_cost(problem, state.placement())
        delta, other = state.delta(*move)
        state.apply(move[0], move[1], other)
        assert problem_cost(problem, state.placement()) - before == pytest.approx(delta, abs=1e-9)
        checked += 1


def test_congestion_is_reported_apart_and_annealing_uses_the_same_cost(plasticine):
    g = random_section(40, seed=2)
    out = place_annealing(g, plasticine, g.node_ids, SolveSettings(time_limit=1, seed=0),
                          search=PlacementSearch(cut_share=0.05))
    terms = cost_terms(placement_problem(g, plasticine, cut_share=0.05), out.placement)
    assert out.objective == pytest.approx(sum(terms.values()))
    assert out.extra["congestion"] == pytest.approx(terms["congestion"])


def test_lns_reports_a_valid_bound_and_gap(plasticine):
    g = random_section(60, seed=4)
    out = place_model(g, plasticine, g.node_ids, SolveSettings(time_limit=3, seed=0))
    assert "lns_rounds" in out.extra
    assert out.bound is not None and 0.0 <= out.bound <= out.objective + 1e-12
    assert out.bound == pytest.approx(star_bound(placement_problem(g, plasticine)))
    assert 0.0 <= out.extra["gap"] <= 1.0


def test_window_weights_keep_light_pairs_apart_from_heavy_ones(tiny):
    g = Graph("mixed", [Node(k, unit="any") for k in "abcd"],
              [Edge("a", "b", bandwidth=1.0), Edge("c", "d", bandwidth=1e-6),
               Edge("c", "a", bandwidth=2e-6)])
    problem = placement_problem(g, tiny)
    light = problem.quantum_of(["c", "d"])
    assert problem.integer_weight(1e-6, light) == WEIGHT_SCALE // 2
    assert problem.integer_weight(1e-6) == 1        # the full model: still never zero


def test_mps_round_trip_with_congestion_rows(tiny, tmp_path):
    g = hub_graph()
    problem = placement_problem(g, tiny, cut_share=0.1)
    cands = {n: [i for i, s in enumerate(problem.sites.ids) if tiny.can_host(s, g.node(n).unit)]
             for n in g.node_ids}
    model, _ = build_placement_model(problem, g.node_ids, cands, {})
    path = tmp_path / "placement.mps"
    model.write_mps(str(path))
    direct = model.solve(backend="cp-sat", time_limit=30, seed=0)
    from_file = solve_model_file(path, backend="highs", time_limit=30)
    assert direct.status.name == from_file.status.name == "OPTIMAL"
    assert direct.objective == pytest.approx(from_file.objective)


@pytest.mark.parametrize("graph", [hub_graph(), random_small(3)], ids=lambda g: g.name)
def test_warm_start_hint_is_complete_and_prices_the_placement(tiny, graph):
    # distances, crossings and overflows are hinted too, at the values the placement implies,
    # so the hint is a complete feasible solution worth exactly the placement's cost
    problem = placement_problem(graph, tiny, cut_share=0.1)
    placement = greedy_place(graph, tiny, graph.node_ids)
    index = {n: problem.sites.index[s] for n, s in placement.items()}
    model, x = build_placement_model(problem, problem.nodes,
                                     candidate_sites(problem, problem.nodes), {})
    hint_placement(model, x, index, problem.nodes)
    arrays = model.to_arrays()
    assert model.check_hint().status == "accepted" and len(arrays.hint) == arrays.n_vars
    hinted = sum(arrays.obj[j] * v for j, v in arrays.hint.items()) + arrays.obj_const
    assert hinted * problem.quantum == pytest.approx(problem_cost(problem, placement), rel=1e-6)


@pytest.mark.parametrize("cut_share", [0.05, None])
def test_the_move_loop_is_propose_and_delta(plasticine, cut_share):
    """The anneal's inlined move loop takes the moves that propose_move and delta would take,
    with the same draws, to the same placement and cost (with and without congestion)."""
    from formulations.placement.annealing import _moves
    g = random_section(50, seed=5)
    problem = placement_problem(g, plasticine, cut_share=cut_share or 1.0)
    if cut_share is None:
        problem = replace(problem, congestion_weight=0.0)
    start = greedy_place(g, plasticine, g.node_ids)
    cost = problem_cost(problem, start)
    fast, slow = AnnealState(problem, plasticine, start), AnnealState(problem, plasticine, start)
    draw_fast, draw_slow = (BlockDraws(np.random.default_rng(3)) for _ in range(2))
    temperature, tried, accepted, reached = 0.02, 0, 0, cost
    for _ in range(3000):
        move = propose_move(slow, draw_slow, 6)
        if move is None:
            continue
        tried += 1
        delta, b = slow.delta(*move)
        if delta <= 0 or draw_slow() < math.exp(-delta / temperature):
            slow.apply(move[0], move[1], b)
            reached += delta
            accepted += 1
    got = _moves(fast, draw_fast, 3000, 6, temperature, cost, cost)
    assert got[:3] == (tried, accepted, reached) and 0 < accepted < tried
    assert fast.pos == slow.pos and draw_fast() == draw_slow()
