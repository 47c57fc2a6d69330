"""Sibling-latency cycle bound, issue windows and the layout relaxation, against the oracle."""

import pytest

from benchmarks.se_generators import se_random_dag
from formulations.solver import Budget, SolveSettings
from formulations.streaming.problem import holds_fit, lower_bounds, problem_from_graph
from formulations.streaming.sweep import relax_holds, solve_at_ii, sweep_ii
from formulations.streaming.bounds import cycle_bound, issue_windows, sibling_costs, tail_bound
from formulations.streaming.layout import layout_refutes, solve_layout
from hardware import load_hardware
from model.graph import Edge, Graph, Node
from sim.streaming import distance_graph

SE = load_hardware("se16")


def solve_streaming(graph, spec, time_limit=10.0, workers=1, warm=None, explain_failure=True):
    """The one-SDF II sweep of ``graph`` (its problem built here)."""
    return sweep_ii(problem_from_graph(graph, spec), SolveSettings(time_limit=time_limit), warm,
                    workers, explain_failure=explain_failure)


def _fan(k):
    return Graph(f"fan{k}", [Node("p")] + [Node(f"c{i}") for i in range(k)],
                 [Edge("p", f"c{i}") for i in range(k)])


def test_sibling_costs_follow_the_tile_line():
    p = problem_from_graph(_fan(1), SE)
    assert sibling_costs(p, 1) == [4, 4, 5, 5]          # no child on the parent's own tile
    assert sibling_costs(p, 3) == [4, 4, 4, 5, 5]       # own tile: another slot, 3 % 3 == 0
    assert sibling_costs(p, 2) == [3, 4, 4, 5, 5]


def test_bound_beats_the_critical_path_and_is_reached():
    p = problem_from_graph(_fan(3), SE)
    assert lower_bounds(p)["critical_path"] == 6
    assert cycle_bound(p, 1) == 8
    s = solve_streaming(_fan(3), SE, time_limit=5)
    assert (s.ii, s.cycles) == (1, 8)                    # the bound is tight here
    assert tail_bound(p, 1)[0] == 8


ORACLE_GRAPHS = [distance_graph(), _fan(3), se_random_dag(8, seed=0)] + [
    se_random_dag(n, seed=s) for n in (5, 6) for s in (0, 1, 2)]


@pytest.mark.parametrize("graph", ORACLE_GRAPHS, ids=lambda g: g.name)
def test_bound_is_valid_against_the_oracle(graph, streaming_oracle):
    p = problem_from_graph(graph, SE)
    oracle = streaming_oracle.exhaustive_schedule(graph, SE)
    assert lower_bounds(p)["critical_path"] <= cycle_bound(p, oracle.ii) <= oracle.cycles
    lo, hi = issue_windows(p, oracle.ii)
    start = min(oracle.cycle.values())
    shift = start - start % oracle.ii
    for i, name in enumerate(p.names):
        assert lo[i] <= oracle.cycle[name] - shift <= hi[i] + oracle.ii
    assert not layout_refutes(p, oracle.ii, Budget(5))


@pytest.mark.parametrize("graph", ORACLE_GRAPHS, ids=lambda g: g.name)
def test_hold_relaxation_is_valid_against_the_oracle(graph, streaming_oracle):
    p = problem_from_graph(graph, SE)
    oracle = streaming_oracle.exhaustive_schedule(graph, SE)
    assert holds_fit(p, oracle)
    for ii in range(oracle.ii, oracle.ii + 2):
        result, relaxed = relax_holds(p, ii, Budget(10))
        assert result.status.name == "OPTIMAL"
        assert cycle_bound(p, ii) <= result.bound
        if ii == oracle.ii:
            assert result.bound <= oracle.cycles


def test_hold_relaxation_drops_only_the_holds():
    from formulations.streaming.problem import schedule_from_lists

    g = Graph("v", [Node("a"), Node("b"), Node("c"), Node("d")],
              [Edge("a", "b"), Edge("b", "c"), Edge("a", "d"), Edge("c", "d")])
    p = problem_from_graph(g, SE)
    # a -> d waits 3 + 3 cycles at II 2: three delay entries on d's tile, which has 2 slots
    held = schedule_from_lists(p, 2, [0, 0, 0, 1], [0, 3, 6, 10])
    assert sum(held.delays.values()) >= 2 and not holds_fit(p, held)
    result, relaxed = relax_holds(p, 2, Budget(10))
    full, sched = solve_at_ii(p, 2, Budget(10))
    assert relaxed is not None and not holds_fit(p, relaxed)   # a waits >= 4 cycles for d
    assert full.status.name == "INFEASIBLE"
    result, relaxed = relax_holds(p, 3, Budget(10))
    full, sched = solve_at_ii(p, 3, Budget(10))
    assert result.bound <= full.objective


def test_windows_refute_a_recurrence_and_hold_a_solution():
    loop = Graph("acc", [Node("a")], [Edge("a", "a", distance=1)])
    p = problem_from_graph(loop, SE)
    assert issue_windows(p, 2) is None and issue_windows(p, 3) is not None
    g = se_random_dag(10, seed=0)
    p = problem_from_graph(g, SE)
    result, s = solve_at_ii(p, 3, Budget(10))
    lo, hi = issue_windows(p, 3)
    assert all(lo[i] <= s.cycle[n] <= hi[i] for i, n in enumerate(p.names))


def test_layout_relaxation_refutes_and_finds():
    p = problem_from_graph(_fan(5), SE)
    assert layout_refutes(p, 1, Budget(5))               # 6 instructions in 5 tiles of reach
    result, tiles = solve_layout(p, 2, Budget(5))
    assert tiles is not None and len({tiles[i] for i in range(1, 6)}) == 5
    assert all(abs(tiles[i] - tiles[0]) <= 2 for i in range(1, 6))
    s = solve_streaming(_fan(5), SE, time_limit=5)
    assert s.ii == 2 and any(r.model_name.endswith("layout_ii1") for r in s.results)


def test_destructive_lower_bounding_closes_the_gap():
    from types import SimpleNamespace

    from formulations.streaming.problem import schedule_from_lists
    from formulations.streaming.sweep import close_gap

    g = Graph("ab", [Node("a"), Node("b")], [Edge("a", "b")])
    p = problem_from_graph(g, SE)
    loose = schedule_from_lists(p, 2, [0, 1], [0, 6])      # b waits 2 cycles: 1 delay entry
    assert loose.cycles == 9 and loose.delays == {("a", "b", 0): 1}
    best, proven, results = close_gap(p, 2, loose, SimpleNamespace(bound=None), Budget(10))
    assert proven and best.cycles == cycle_bound(p, 2) == 6
    assert results and results[-1].has_solution
    tight, proven, results = close_gap(p, 2, best, SimpleNamespace(bound=None), Budget(10))
    assert proven and tight is best and results == []


def test_layout_then_timing_finds_what_the_model_alone_misses():
    g = Graph("chains", [Node(f"a{i}_{j}") for i in range(5) for j in range(10)],
              [Edge(f"a{i}_{j}", f"a{i}_{j + 1}") for i in range(5) for j in range(9)])
    s = solve_streaming(g, SE, time_limit=6)
    assert s.ii == 4 and s.cycles <= 40



def test_proof_from_above_improves_then_refutes_one_cycle_fewer():
    from formulations.streaming.problem import schedule_from_lists
    from formulations.streaming.sweep import prove_from_above
    from sim.streaming import check_streaming

    g = Graph("ab", [Node("a"), Node("b")], [Edge("a", "b")])
    p = problem_from_graph(g, SE)
    loose = schedule_from_lists(p, 2, [0, 1], [0, 6])      # 9 cycles; the optimum is 6
    best, proven, results = prove_from_above(p, 2, loose, Budget(10))
    assert proven and best.cycles == 6 and results[0].has_solution
    placement = {n: {"tile": best.tile[n], "slot": best.slot[n], "cycle": best.cycle[n]}
                 for n in best.tile}
    assert check_streaming(g, SE, placement, 2, best.delays).ok
    again, proven, results = prove_from_above(p, 2, best, Budget(10))
    assert proven and again is best
    assert [r.status.value for r in results] == ["infeasible"]   # 5 cycles refuted


@pytest.mark.parametrize("seed", [4, 5])
def test_short_model_then_proof_from_above_agree_with_the_oracle(seed, streaming_oracle):
    from formulations.streaming.sweep import prove_from_above

    g = se_random_dag(8, seed=seed)
    p = problem_from_graph(g, SE)
    oracle = streaming_oracle.exhaustive_schedule(g, SE)
    result, start = solve_at_ii(p, oracle.ii, Budget(0.1))
    assert start is not None and start.cycles >= oracle.cycles
    best, proven, _ = prove_from_above(p, oracle.ii, start, Budget(10))
    assert proven and best.cycles == oracle.cycles
