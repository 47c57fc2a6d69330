"""The Streaming Engine CP-SAT model and its MILP version: every rule, positive and negative."""

import pytest

from benchmarks.se_generators import ifft_graph, se_random_dag
from formulations.solver import SolveSettings, solve_model_file
from formulations.streaming.milp import build_milp, solve_milp
from formulations.streaming.problem import (StreamingInfeasible, delays_needed, lower_bounds,
                                            precheck, problem_from_graph)
from formulations.streaming.sweep import explain, sweep_ii
from hardware import load_hardware
from model.graph import Edge, Graph, Node
from sim.streaming import check_streaming, distance_graph

SE = load_hardware("se16")


def solve_streaming(graph, spec, time_limit=10.0, workers=1, warm=None, explain_failure=True):
    """The one-SDF II sweep of ``graph`` (its problem built here)."""
    return sweep_ii(problem_from_graph(graph, spec), SolveSettings(time_limit=time_limit), warm,
                    workers, explain_failure=explain_failure)


def _check(graph, sched):
    placement = {n: {"tile": sched.tile[n], "slot": sched.slot[n], "cycle": sched.cycle[n]}
                 for n in sched.tile}
    report = check_streaming(graph, SE, placement, sched.ii, sched.delays)
    assert report.ok, report.violations
    assert report.cycles == sched.cycles
    return report


def _solve(graph, limit=10):
    sched = solve_streaming(graph, SE, time_limit=limit, workers=1)
    _check(graph, sched)
    return sched


def test_memory_colocation_is_transitive():
    g = Graph("mem", [Node("s"), Node("a", mem_vars=("v1",)), Node("b", mem_vars=("v1", "v2")),
                      Node("c", mem_vars=("v2",))],
              [Edge("s", "a"), Edge("a", "b"), Edge("b", "c")])
    s = _solve(g)
    assert s.tile["a"] == s.tile["b"] == s.tile["c"]


def test_memory_component_larger_than_max_ii_is_explained():
    g = Graph("big", [Node(f"n{i}", mem_vars=("v",)) for i in range(7)], [])
    reasons = precheck(problem_from_graph(g, SE))
    assert any(r.startswith("M1 memory: 7 instructions share variables v") for r in reasons)


def test_component_of_three_forces_ii_three():
    g = Graph("m3", [Node(f"n{i}", mem_vars=("v",), starts_sdf=(i == 0)) for i in range(3)], [])
    assert _solve(g).ii == 3


def test_siblings_on_distinct_tiles():
    g = Graph("fan", [Node("p")] + [Node(f"c{i}") for i in range(5)],
              [Edge("p", f"c{i}") for i in range(5)])
    s = _solve(g)
    assert len({s.tile[f"c{i}"] for i in range(5)}) == 5


def test_seventeen_children_and_shared_sibling_variable_are_explained():
    g = Graph("fan17", [Node("p")] + [Node(f"c{i}") for i in range(17)],
              [Edge("p", f"c{i}") for i in range(17)])
    assert any("p has 17 children" in r for r in precheck(problem_from_graph(g, SE)))
    g = Graph("sib", [Node("p"), Node("A", mem_vars=("v",)), Node("B", mem_vars=("v",))],
              [Edge("p", "A"), Edge("p", "B")])
    assert precheck(problem_from_graph(g, SE)) == [
        "S1 siblings: siblings A and B (children of p) share variable v, "
        "so R1 puts them on one tile"]


def test_fanout_beyond_reach_is_explained():
    g = Graph("fan6", [Node("p")] + [Node(f"c{i}") for i in range(6)],
              [Edge("p", f"c{i}") for i in range(6)])
    assert any(r.startswith("R1 reach: p feeds 6") for r in precheck(problem_from_graph(g, SE)))


def test_sdf_starts_distinct_and_seventeen_starts_infeasible():
    g = Graph("starts", [Node(f"s{i}") for i in range(16)], [])
    s = _solve(g)
    assert s.ii == 1 and len(set(s.tile.values())) == 16
    g17 = Graph("starts17", [Node(f"s{i}") for i in range(17)], [])
    with pytest.raises(StreamingInfeasible, match="17 instructions start a data-flow but there "
                                                  "are 16 tiles"):
        solve_streaming(g17, SE)
    flagged = Graph("flag", [Node("a", starts_sdf=True), Node("b", starts_sdf=True), Node("c")],
                    [Edge("a", "c"), Edge("b", "c")])
    assert problem_from_graph(flagged, SE).starts == [0, 1]


def test_slot_capacity_96_fits_97_does_not():
    g96 = Graph("n96", [Node(f"n{i}", starts_sdf=(i == 0)) for i in range(96)], [])
    assert lower_bounds(problem_from_graph(g96, SE))["ii"] == 6
    g97 = Graph("n97", [Node(f"n{i}", starts_sdf=(i == 0)) for i in range(97)], [])
    assert precheck(problem_from_graph(g97, SE))[0].startswith("A4 slots: 97 instructions")


def test_reach_and_link_latency():
    g = Graph("chain", [Node("a"), Node("b"), Node("c")], [Edge("a", "b"), Edge("b", "c")])
    s = _solve(g)  # II 1: one instruction per tile, 1-cycle links
    assert s.ii == 1 and s.cycles == 11
    for u, v in (("a", "b"), ("b", "c")):
        assert abs(s.tile[u] - s.tile[v]) <= 2
        assert s.cycle[v] >= s.cycle[u] + 3 + abs(s.tile[u] - s.tile[v])


def test_loop_carried_edges_modulo_ii():
    g = Graph("acc", [Node("a")], [Edge("a", "a", distance=1)])
    assert lower_bounds(problem_from_graph(g, SE))["rec_ii"] == 3
    s = _solve(g)
    assert s.ii == 3
    g2 = Graph("loop", [Node("a"), Node("b"), Node("c")],
               [Edge("a", "b"), Edge("b", "c"), Edge("c", "a", distance=1)])
    reasons = precheck(problem_from_graph(g2, SE))
    assert reasons == ["R2 recurrence: a loop-carried cycle needs II >= 9 (3 cycles per "
                       "instruction over its distance) but II <= 6"]


def test_same_iteration_cycle_is_rejected():
    g = Graph("cyc", [Node("a"), Node("b")], [Edge("a", "b"), Edge("b", "a")])
    with pytest.raises(StreamingInfeasible, match="G0 graph"):
        problem_from_graph(g, SE)


def test_operand_limit():
    g = Graph("ops", [Node(f"s{i}") for i in range(4)] + [Node("x")],
              [Edge(f"s{i}", "x") for i in range(4)])
    assert precheck(problem_from_graph(g, SE))[0].startswith("O1 operands: x has 4 operands")


def test_hold_needs_delay_entries():
    assert [delays_needed(h, 2) for h in (0, 1, 2, 3, 4)] == [0, 0, 1, 1, 2]
    # reconvergence a -> c directly and a -> b -> c: c waits for b, so a's value is held
    g = Graph("reconv", [Node("a"), Node("b"), Node("c")],
              [Edge("a", "b"), Edge("a", "c"), Edge("b", "c")])
    s = _solve(g)
    report = _check(g, s)
    assert s.ii >= 2 or report.delays == {}


def test_explain_by_relaxation_names_a_family():
    # five children of one parent, each also fed by a second parent four tiles away: reach
    nodes = [Node("p"), Node("q")] + [Node(f"c{i}") for i in range(5)]
    edges = [Edge("p", f"c{i}") for i in range(5)] + [Edge("q", f"c{i}") for i in range(5)]
    g = Graph("tight", nodes, edges)
    problem = problem_from_graph(g, SE)
    assert precheck(problem) == []
    with pytest.raises(StreamingInfeasible) as err:  # no pre-check sees it; relaxation does
        solve_streaming(g, SE, time_limit=2, workers=1)
    assert any(r.startswith("R1 reach: without it a mapping exists") for r in err.value.reasons)
    g17 = Graph("s17", [Node(f"s{i}") for i in range(17)], [])
    assert explain(problem_from_graph(g17, SE))[0].startswith("B1 starts")


def test_milp_matches_cp_and_mps_round_trip(tmp_path):
    g = distance_graph()
    problem = problem_from_graph(g, SE)
    cp = solve_streaming(g, SE, time_limit=10, workers=1)
    result, milp = solve_milp(problem, cp.ii, SolveSettings(backend="highs", time_limit=60))
    assert result.status.name == "OPTIMAL" and milp.cycles == cp.cycles
    _check(g, milp)
    path = tmp_path / "se.mps"
    build_milp(problem, cp.ii).write_mps(str(path))
    assert (solve_model_file(path, backend="highs", time_limit=60).objective
            == pytest.approx(cp.cycles))


@pytest.mark.parametrize("graph", [se_random_dag(8, seed=1), se_random_dag(6, seed=2),
                                   se_random_dag(5, seed=3), distance_graph()],
                         ids=lambda g: g.name)
def test_oracle_agreement(graph, streaming_oracle):
    oracle = streaming_oracle.exhaustive_schedule(graph, SE)
    _check(graph, oracle)
    cp = _solve(graph)
    assert (cp.ii, cp.cycles) == (oracle.ii, oracle.cycles)
    assert cp.status == "optimal"


def test_ifft_generator_shapes():
    g = ifft_graph(4)
    problem = problem_from_graph(g, SE)
    assert precheck(problem) == []
    assert len(problem.starts) == 8
    assert max(len(c) for c in problem.components) == 2
