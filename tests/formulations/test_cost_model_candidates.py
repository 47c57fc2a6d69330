"""The searches' own top-k (CandidatePool) and the candidates a cost model ranks (source 002)."""

import pytest

from formulations.placement import place_annealing, place_model, placement_problem, problem_cost
from formulations.placement.candidates import MAX_WORSE, CandidatePool, placement_candidates
from formulations.solver import SolveSettings
from pipeline.cost_model import candidate_pool, rank_placement
from sim.check import check_placement
from tests.formulations.test_placement_model import random_section
from formulations.solver import Budget


def _key(p):
    return tuple(sorted(p.items()))


def test_pool_keeps_the_cheapest_distant_placements():
    pool = CandidatePool(3, min_moved=2)
    a = {"x": "s0", "y": "s1", "z": "s2"}
    pool(a, 5.0)
    pool({"x": "s0", "y": "s1", "z": "s3"}, 4.0)     # one node from a: replaces it (cheaper)
    pool({"x": "s0", "y": "s1", "z": "s4"}, 9.0)     # one node from the kept one, dearer: dropped
    pool({"x": "s5", "y": "s6", "z": "s2"}, 6.0)
    pool({"x": "s7", "y": "s8", "z": "s9"}, 7.0)
    pool({"x": "s9", "y": "s7", "z": "s8"}, 1.0)     # full: the dearest (7.0) leaves
    costs = [c for _, c in pool.members()]
    assert costs == [1.0, 4.0, 6.0]
    assert pool.members()[1][0]["z"] == "s3" and pool.offers == 6


def test_pool_ties_keep_the_earlier_offer_and_complete_drops_failures():
    pool = CandidatePool(1, min_moved=1)
    pool({"x": "s0"}, 2.0)
    pool({"x": "s1"}, 2.0)
    assert pool.members()[0][0] == {"x": "s0"}
    pool.complete(lambda p: None)
    assert pool.members() == []


@pytest.mark.parametrize("placer", [place_model, place_annealing])
def test_a_pool_changes_nothing_and_collects_legal_placements(plasticine, placer):
    g = random_section(40, seed=2)
    settings = SolveSettings(time_limit=1.5, seed=3)
    alone = placer(g, plasticine, g.node_ids, settings)
    pool = CandidatePool(8)
    pooled = placer(g, plasticine, g.node_ids, settings, keep=pool)
    if not (alone.extra.get("cut_short") or pooled.extra.get("cut_short")):
        # same work, same answer (a run the wall clock cut short on a loaded machine may differ)
        assert pooled.placement == alone.placement and pooled.objective == alone.objective
    members = [p for p, _ in pool.members()]
    assert pool.offers > len(members) >= 2
    assert len({_key(p) for p in members}) == len(members)
    for p in members:
        assert set(p) == set(g.node_ids) and check_placement(g, plasticine, p).ok
    again = CandidatePool(8)
    rerun = placer(g, plasticine, g.node_ids, settings, keep=again)
    if not (rerun.extra.get("cut_short") or pooled.extra.get("cut_short")):
        assert [_key(p) for p, _ in again.members()] == [_key(p) for p in members]


def test_candidates_take_the_pool_first_and_within_max_worse(plasticine):
    g = random_section(40, seed=2)
    pool = CandidatePool(16)
    out = place_model(g, plasticine, g.node_ids, SolveSettings(time_limit=1.5, seed=3), keep=pool)
    members = [p for p, _ in pool.members()]
    found = placement_candidates(g, plasticine, out.placement, count=6, budget=Budget(0.0), seed=0,
                                 pool=members)
    problem = placement_problem(g, plasticine)
    base = problem_cost(problem, out.placement)
    assert found[0] == out.placement
    assert len({_key(p) for p in found}) == len(found)
    eligible = sorted((p for p in members if _key(p) != _key(out.placement)
                       and problem_cost(problem, p) <= base * (1 + MAX_WORSE) + 1e-12),
                      key=lambda p: problem_cost(problem, p))
    assert eligible, "the search kept no alternative within MAX_WORSE"
    taken = min(len(eligible), 5)
    assert [_key(p) for p in found[1:1 + taken]] == [_key(p) for p in eligible[:taken]]
    for p in found[1:]:                    # walks fill up only behind the pool's members
        assert problem_cost(problem, p) <= base * (1 + MAX_WORSE) + 1e-9


def test_ranking_reports_how_many_candidates_came_from_the_search(tiny):
    from tests.pipeline.test_cost_model_option import _two_flows
    graph = _two_flows()
    start = {"a": "U0_0", "b": "U1_1", "c": "U2_2", "d": "U3_3"}
    other = {"a": "U0_0", "b": "U0_1", "c": "U2_2", "d": "U3_3"}
    chosen, extra = rank_placement(graph, tiny, start, lambda g, f, items: [
        1.0 if p == other else 0.0 for p, _ in items], name="test", budget=Budget(0.0), seed=0,
        count=2, pool=[start, other])
    assert chosen == other and extra["from_search"] == 1 and extra["candidates"] == 2
    assert candidate_pool("greedy") is None and candidate_pool("annealing", 3).size == 6
