"""Pass trees and several SDFs over the asynchronous fabric, each answer judged by the sim."""

import copy

import networkx as nx
import pytest

from benchmarks.se_generators import ifft_graph
from formulations.solver import SolveSettings
from formulations.streaming.kernel import (finish_split, next_split, plan_kernel, schedule_part,
                                           schedule_sdf)
from formulations.streaming.problem import StreamingInfeasible, precheck, problem_from_graph
from formulations.streaming.split import (relieve_fan_out, repair_of, split_into_sdfs,
                                          stuck_recurrences)
from formulations.streaming.sweep import sweep_ii
from hardware import load_hardware
from model.graph import Edge, Graph, Node
from sim.streaming import check_split

SE = load_hardware("se16")
AF_LATENCY = SE.af_latency


def solve_streaming(graph, spec, time_limit=10.0, explain_failure=True):
    """The one-SDF II sweep of ``graph`` (its problem built here)."""
    return sweep_ii(problem_from_graph(graph, spec), SolveSettings(time_limit=time_limit),
                    explain_failure=explain_failure)


def _fan(k, shared=False):
    kids = [Node(f"c{i}", mem_vars=("v",) if shared and i < 2 else ()) for i in range(k)]
    return Graph(f"fan{k}", [Node("p")] + kids, [Edge("p", f"c{i}") for i in range(k)])


def test_pass_tree_relieves_reach_and_keeps_every_edge():
    g = _fan(12)
    assert precheck(problem_from_graph(g, SE))[0].startswith("R1 reach: p feeds 12")
    g2, passes = relieve_fan_out(g, SE)
    assert passes == ["pass.p.0", "pass.p.1"] and not precheck(problem_from_graph(g2, SE))
    s = solve_streaming(g2, SE, time_limit=5)
    sdf = {"id": 0, "nodes": g2.node_ids, "ii": s.ii, "start": 0}
    placement = {n: {"tile": s.tile[n], "slot": s.slot[n], "cycle": s.cycle[n]} for n in s.tile}
    assert check_split(g2, SE, placement, [sdf], AF_LATENCY, 1, original=g).ok
    broken = Graph(g2.name, g2.nodes, [e for e in g2.edges if e.dst != "c11"])
    report = check_split(broken, SE, {n: placement[n] for n in broken.node_ids}, [sdf],
                         AF_LATENCY, 1, original=g)
    assert "P1 pass tree" in report.rules_broken


def test_pass_separates_siblings_sharing_a_variable():
    g = _fan(2, shared=True)
    assert repair_of(precheck(problem_from_graph(g, SE))[0]) == "pass tree"
    g2, passes = relieve_fan_out(g, SE)
    assert len(passes) == 1 and not precheck(problem_from_graph(g2, SE))


def test_unfixable_rules_are_named():
    assert repair_of("R2 recurrence: a loop-carried cycle needs II >= 9") is None
    assert repair_of("O1 operands: x has 4 operands, at most 3") is None
    assert repair_of("M1 memory: 7 instructions share variables v") is None
    assert repair_of("A4 slots: 97 instructions but 16 tiles x 6 slots = 96") == "split"


def _loop_chain(n):
    """A chain with a 2-instruction recurrence in the middle and a shared variable."""
    nodes = [Node(f"n{i}", mem_vars=("w",) if i in (1, 3) else ()) for i in range(n)]
    edges = [Edge(f"n{i}", f"n{i + 1}") for i in range(n - 1)]
    edges.append(Edge(f"n{n // 2 + 1}", f"n{n // 2}", distance=2))
    return Graph(f"loop{n}", nodes, edges)


def test_partition_keeps_recurrences_and_variables_and_goes_forward():
    g = _loop_chain(12)
    plan = split_into_sdfs(g, SE, parts=3)
    sdf_of = {n: p.index for p in plan.parts for n in p.nodes}
    assert sdf_of["n6"] == sdf_of["n7"] and sdf_of["n1"] == sdf_of["n2"] == sdf_of["n3"]
    assert len(plan.parts) == 3
    assert all(e.src_sdf < e.dst_sdf for e in plan.af_edges)
    quotient = nx.DiGraph((sdf_of[e.src], sdf_of[e.dst]) for e in g.edges
                          if sdf_of[e.src] != sdf_of[e.dst])
    assert nx.is_directed_acyclic_graph(quotient)


def solve_split(graph, time_limit=3.0):
    """The kernel's split steps, forced (from two SDFs up) even where one SDF maps."""
    settings = SolveSettings(time_limit=time_limit)
    plan = plan_kernel(graph, SE, settings)
    plan.parts, cache = 2, {}
    while next_split(plan, SE) is not None:
        try:
            answers = [schedule_part(p, SE, settings, cache) for p in plan.split.parts]
            return finish_split(plan, [a.schedule for a in answers], SE, AF_LATENCY)
        except StreamingInfeasible:
            plan.parts += 1
    raise AssertionError("no split maps")


def _split_inputs(split):
    sections = [{"id": p.index, "nodes": p.nodes, "ii": s.ii, "start": start}
                for p, s, start in zip(split.plan.parts, split.schedules, split.starts)]
    placement = {n: {"tile": s.tile[n], "slot": s.slot[n], "cycle": s.cycle[n]}
                 for s in split.schedules for n in s.tile}
    return sections, placement


def test_split_mapping_passes_the_simulator_and_breaks_when_tampered():
    g = ifft_graph(4)
    split = solve_split(g)
    sections, placement = _split_inputs(split)
    report = check_split(g, SE, placement, sections, split.af_latency, split.batch)
    assert report.ok, report.violations
    assert len(sections) >= 2 and split.plan.af_edges and split.batch >= 1
    early = copy.deepcopy(sections)
    early[1]["start"] = 0
    rules = check_split(g, SE, placement, early, split.af_latency, split.batch).rules_broken
    assert "AF phases" in rules and "AF timing" in rules
    swapped = [dict(sections[1], start=sections[0]["start"]), dict(sections[0],
                                                                    start=sections[1]["start"])]
    swapped += sections[2:]
    assert "AF order" in check_split(g, SE, placement, swapped, split.af_latency,
                                     split.batch).rules_broken
    assert "AF buffer" in check_split(g, SE, placement, sections, split.af_latency,
                                      10 ** 6).rules_broken


def test_more_than_96_instructions_map_as_several_sdfs():
    g = Graph("chains", [Node(f"a{i}_{j}") for i in range(10) for j in range(10)],
              [Edge(f"a{i}_{j}", f"a{i}_{j + 1}") for i in range(10) for j in range(9)])
    assert repair_of(precheck(problem_from_graph(g, SE))[0]) == "split"
    split = solve_split(g)
    sections, placement = _split_inputs(split)
    assert len(sections) >= 2
    assert check_split(g, SE, placement, sections, split.af_latency, split.batch).ok
    assert split.latency >= max(s.cycles for s in split.schedules)
    assert split.effective_ii >= max(s.ii for s in split.schedules)


def test_too_big_recurrence_cannot_be_split():
    ring = Graph("ring", [Node(f"r{i}") for i in range(100)],
                 [Edge(f"r{i}", f"r{(i + 1) % 100}", distance=int(i == 99)) for i in range(100)])
    with pytest.raises(ValueError, match="no partition into SDFs"):
        split_into_sdfs(ring, SE)


def tight_twin_loops(distance=1):
    """``m`` feeds ``a`` and ``b`` back over ``distance`` iterations; both feed ``m``. At
    distance 1 each loop needs II >= 6 with no slack: a, b and m share one tile and a and b
    issue in the same cycle, so no II <= 6 maps them (the shape of jpeg_fdct's loops)."""
    nodes = [Node("p"), Node("a"), Node("b"), Node("m"), Node("out")]
    edges = [Edge("p", "a"), Edge("p", "b"), Edge("a", "m"), Edge("b", "m"), Edge("a", "out"),
             Edge("m", "a", distance=distance), Edge("m", "b", distance=distance)]
    return Graph(f"twin{distance}", nodes, edges)


def test_a_recurrence_that_no_split_can_map_is_proven():
    reasons = stuck_recurrences(tight_twin_loops(1), SE, SolveSettings(time_limit=5))
    assert len(reasons) == 1 and reasons[0].startswith("R2 recurrence")
    assert "a, b, m" in reasons[0] and repair_of(reasons[0]) is None
    with pytest.raises(StreamingInfeasible):  # and indeed the whole kernel has no mapping
        solve_streaming(tight_twin_loops(1), SE, time_limit=5, explain_failure=False)


def test_a_recurrence_with_slack_is_not_reported():
    assert stuck_recurrences(tight_twin_loops(2), SE, SolveSettings(time_limit=5)) == []
    assert solve_streaming(tight_twin_loops(2), SE, time_limit=5).ii >= 3


def test_a_recurrence_larger_than_an_even_share_gets_a_part_of_its_own():
    """A loop of 12 instructions among 20: an even split into two (10 each) would cut it, so
    the parts are as balanced as the loop allows (before: no partition at any count, the
    shape of aes decrypt's 80-instruction round among 118), and the split maps and passes
    the simulator."""
    nodes = [Node(f"p{i}") for i in range(6)] + [Node(f"r{i}") for i in range(12)] + \
        [Node("o0"), Node("o1")]
    edges = [Edge(f"p{i}", f"p{i + 1}") for i in range(5)] + [Edge("p5", "r0")]
    edges += [Edge(f"r{i}", f"r{(i + 1) % 12}", distance=int(i == 11) * 12) for i in range(12)]
    edges += [Edge("r11", "o0"), Edge("o0", "o1")]
    g = Graph("loop_among_chains", nodes, edges)
    plan = split_into_sdfs(g, SE, parts=2)
    loop = {f"r{i}" for i in range(12)}
    assert any(set(p.nodes) == loop for p in plan.parts)
    assert max(len(p.nodes) for p in plan.parts) == 12
    split = solve_split(g)
    sections, placement = _split_inputs(split)
    assert any(set(s["nodes"]) == loop for s in sections)
    assert check_split(g, SE, placement, sections, split.af_latency, split.batch).ok


def test_a_recurrence_floor_bounds_every_mapping():
    """The twin loops at distance 2 need II >= 3 by RecMII, but the loop alone (the
    relaxation of every SDF that holds it) has no mapping at II 3: its floor 4 is proven for
    one SDF and for any split. The sweep begins there, and its II is proven minimal."""
    floors = {}
    assert stuck_recurrences(tight_twin_loops(2), SE, SolveSettings(time_limit=5),
                             floors=floors) == []
    assert floors == {("a", "b", "m"): 4}
    settings = SolveSettings(time_limit=5)
    plan = plan_kernel(tight_twin_loops(2), SE, settings)
    assert plan.floor() == 4 and plan.floor(["p", "a", "out"]) == 0
    answer = schedule_sdf(plan.work, plan.work_problem, SE, settings, floor=plan.floor())
    assert answer.schedule.ii == 4 and answer.schedule.proven_ii
    assert not any(r.model_name.endswith("_ii3") for r in answer.schedule.results)
