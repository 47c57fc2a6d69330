"""The exact placement model (CP-SAT and MILP) and its LNS, judged by sim.check."""

import itertools

import pytest

from formulations.placement import (ONE_SCALE_SHARE, PLACERS, SPREAD_SHARE, PlacementError,
                                    PlacementSearch, anneal_share_for, build_placement_model,
                                    fill_idle, greedy_place, place_cpsat, place_milp, place_model,
                                    placement_problem, problem_cost)
from formulations.solver import SolveSettings, solve_model_file
from model.graph import Edge, Graph, Node
from sim.check import check_placement


def star_graph():
    """A PCU hub with PMU and PCU leaves: the hub cannot touch all of them at distance 0."""
    nodes = [Node("h", unit="pcu"), Node("p1", unit="pmu"), Node("p2", unit="pmu"),
             Node("c1", unit="pcu"), Node("c2", unit="pcu")]
    edges = [Edge("h", "p1"), Edge("h", "p2", bandwidth=0.5), Edge("h", "c1"),
             Edge("c1", "c2"), Edge("c2", "p2"), Edge("p1", "c2", bandwidth=0.5)]
    return Graph("star", nodes, edges)


def exhaustive_optimum(graph, fabric):
    problem = placement_problem(graph, fabric)
    pcu = [s.id for s in fabric.sites_of("pcu")]
    pmu = [s.id for s in fabric.sites_of("pmu")]
    pcu_nodes = [n.id for n in graph.nodes if n.unit == "pcu"]
    pmu_nodes = [n.id for n in graph.nodes if n.unit == "pmu"]
    best = float("inf")
    for a in itertools.permutations(pcu, len(pcu_nodes)):
        for b in itertools.permutations(pmu, len(pmu_nodes)):
            placement = dict(zip(pcu_nodes, a)) | dict(zip(pmu_nodes, b))
            best = min(best, problem_cost(problem, placement))
    return best


@pytest.mark.parametrize("placer", [place_cpsat, place_milp])
def test_model_is_proven_optimal_on_tiny_grid(tiny, placer):
    g = star_graph()
    optimum = exhaustive_optimum(g, tiny)
    out = placer(g, tiny, [n.id for n in g.nodes], SolveSettings(time_limit=20, seed=0))
    assert check_placement(g, tiny, out.placement).ok
    assert out.status == "OPTIMAL" and out.extra["gap"] == 0.0
    assert out.objective == pytest.approx(optimum)
    assert out.bound == pytest.approx(optimum)


def test_more_pmu_nodes_than_pmu_sites_is_diagnosed(tiny):
    g = Graph("pmus", [Node(f"m{i}", unit="pmu") for i in range(9)], [])
    with pytest.raises(PlacementError) as info:
        place_model(g, tiny, g.node_ids, SolveSettings(time_limit=5))
    assert info.value.unit == "pmu" and info.value.needed == 9 and info.value.available == 8
    assert "PMU" in str(info.value)


def random_section(n, seed=1):
    import random
    rng = random.Random(seed)
    nodes = [Node(f"n{i}", unit=rng.choice(["pcu", "pmu"])) for i in range(n)]
    edges = [Edge(f"n{rng.randrange(i)}", f"n{i}", bandwidth=rng.choice([1.0, 0.5, 0.25]))
             for i in range(1, n)]
    edges += [Edge(f"n{rng.randrange(n)}", f"n{rng.randrange(n)}") for _ in range(n // 3)]
    return Graph("random", nodes, [e for e in edges if e.src != e.dst])


def test_lns_never_worse_than_warm_start_and_legal(plasticine):
    g = random_section(60)
    out = place_model(g, plasticine, g.node_ids, SolveSettings(time_limit=4, seed=0))
    assert check_placement(g, plasticine, out.placement).ok
    assert out.objective <= out.extra["warm_start_cost"] + 1e-9
    assert "lns_rounds" in out.extra
    greedy = problem_cost(placement_problem(g, plasticine), greedy_place(g, plasticine, g.node_ids))
    assert out.objective <= greedy


def test_placement_mps_round_trip(tiny, tmp_path):
    g = star_graph()
    problem = placement_problem(g, tiny)
    cands = {n: [i for i, s in enumerate(problem.sites.ids) if tiny.can_host(s, g.node(n).unit)]
             for n in g.node_ids}
    model, _ = build_placement_model(problem, g.node_ids, cands, {})
    path = tmp_path / "placement.mps"
    model.write_mps(str(path))
    direct = model.solve(backend="cp-sat", time_limit=20, seed=0)
    from_file = solve_model_file(path, backend="highs", time_limit=20)
    assert direct.status.name == from_file.status.name == "OPTIMAL"
    assert direct.objective == pytest.approx(from_file.objective)


def test_export_dir_writes_the_model(tiny, tmp_path):
    g = star_graph()
    place_model(g, tiny, g.node_ids, SolveSettings(time_limit=5, export_dir=str(tmp_path)))
    assert (tmp_path / f"placement_{g.name}.mps").exists()


def test_penalty_moves_nodes_away(tiny):
    g = Graph("pair", [Node("a", unit="pcu"), Node("b", unit="pmu")], [Edge("a", "b")])
    first = place_model(g, tiny, ["a", "b"], SolveSettings(time_limit=5))
    penalty = {site: 100.0 for site in first.placement.values()}
    again = place_model(g, tiny, ["a", "b"], SolveSettings(time_limit=5), site_penalty=penalty)
    assert not set(again.placement.values()) & set(first.placement.values())


def test_registry_names():
    assert {"greedy", "model", "milp", "cp-sat", "annealing"} <= set(PLACERS)


@pytest.mark.parametrize("name", ["greedy", "model", "milp", "cp-sat", "annealing"])
def test_every_placer_takes_the_same_arguments(tiny, name):
    g = Graph("pair", [Node("a", unit="pcu"), Node("b", unit="pmu")], [Edge("a", "b")])
    out = PLACERS[name](g, tiny, ["a", "b"], SolveSettings(time_limit=2, seed=0),
                        site_penalty=None)
    assert check_placement(g, tiny, out.placement).ok and out.objective == 0.0


def test_milp_and_cp_sat_placers_fix_the_backend(tiny):
    g = star_graph()
    settings = SolveSettings(backend="cp-sat", time_limit=10, seed=0)
    assert PLACERS["milp"](g, tiny, g.node_ids, settings).backend == "highs"
    on_highs = settings.with_backend("highs")
    assert PLACERS["cp-sat"](g, tiny, g.node_ids, on_highs).backend == "cp-sat"


def test_lns_without_patience_uses_the_budget_and_stays_legal(plasticine):
    g = random_section(40, seed=7)
    out = place_model(g, plasticine, g.node_ids, SolveSettings(time_limit=3, seed=0),
                      search=PlacementSearch(patience=None))
    assert check_placement(g, plasticine, out.placement).ok
    assert out.objective <= out.extra["warm_start_cost"] + 1e-9
    # the budget is work: the LNS spends its whole share of the 3 planned seconds (unless a
    # very slow machine reaches the wall-clock cap first, which the outcome then says)
    share = 3 * (1 - anneal_share_for(placement_problem(g, plasticine)))
    assert out.extra["work"] >= share - 0.1 or out.extra.get("cut_short")


def test_nodes_without_pairs_are_placed_last_and_keep_the_optimum(tiny):
    """A full chip: the star plus idle units; they cost nothing, so the optimum stays."""
    star = star_graph()
    idle = ([Node(f"idle_pcu{k}", unit="pcu") for k in range(5)]
            + [Node(f"idle_pmu{k}", unit="pmu") for k in range(6)])
    g = Graph("star+idle", star.nodes + idle, star.edges + [Edge("idle_pcu0", "idle_pmu0",
                                                                   bandwidth=0.0)])
    out = place_model(g, tiny, g.node_ids, SolveSettings(time_limit=20, seed=0))
    assert check_placement(g, tiny, out.placement).ok
    assert out.extra["idle_nodes"] == 11 and out.status == "OPTIMAL"
    assert out.objective == pytest.approx(exhaustive_optimum(star, tiny))


def test_idle_nodes_that_do_not_fit_the_leftover_sites_are_refused(tiny):
    g = Graph("pmus", [Node(f"m{k}", unit="pmu") for k in range(9)], [])
    problem = placement_problem(g, tiny)
    taken = {f"m{k}": s.id for k, s in enumerate(tiny.sites_of("pmu"))}
    assert fill_idle(problem, taken, ["m8"]) is None
    del taken["m7"]
    assert fill_idle(problem, taken, ["m7"])["m7"] == tiny.sites_of("pmu")[7].id


def test_annealing_gets_more_of_the_budget_when_pair_weights_share_one_scale(plasticine):
    chain = [Node(f"n{i}", unit="pcu") for i in range(6)]

    def share(bandwidths):
        edges = [Edge(f"n{i}", f"n{i + 1}", bandwidth=b) for i, b in enumerate(bandwidths)]
        return anneal_share_for(placement_problem(Graph("c", chain, edges), plasticine))

    assert share([1.0, 0.5, 1.0, 0.5, 1.0]) == ONE_SCALE_SHARE
    assert share([1.0, 1e-4, 1e-5, 1e-4, 1e-6]) == SPREAD_SHARE  # a DNN section's spread
    assert share([1.0]) == SPREAD_SHARE  # one pair: no scale to speak of
