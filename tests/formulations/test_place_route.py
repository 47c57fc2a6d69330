"""Greedy placement and the negotiated-congestion router, judged by sim.check."""

import time

import pytest

from formulations.placement import PlacementError, greedy_place, placement_cost
from formulations.routing import RouterConfig, route_negotiated
from formulations.solver import SolveSettings
from hardware import build_fabric, load_hardware
from model.graph import Edge, Graph, Node
from sim.check import check_section


def chain(n, unit="pcu"):
    return Graph("chain", [Node(f"n{i}", unit=unit) for i in range(n)],
                 [Edge(f"n{i}", f"n{i+1}") for i in range(n - 1)])


def test_placement_is_legal_and_follows_types(tiny):
    g = Graph("g", [Node("a", unit="pcu"), Node("b", unit="pmu"), Node("c", unit="any")],
              [Edge("a", "b"), Edge("b", "c")])
    placement = greedy_place(g, tiny, ["a", "b", "c"])
    assert tiny.site(placement["a"]).unit == "pcu" and tiny.site(placement["b"]).unit == "pmu"
    assert len(set(placement.values())) == 3


def test_neighbours_are_placed_close(tiny):
    g = chain(4, "any")
    placement = greedy_place(g, tiny, g.node_ids)
    for e in g.edges:
        assert tiny.distance(placement[e.src], placement[e.dst]) == 0   # sharing a switch


def test_greedy_placement_moves_off_penalised_sites(tiny):
    """A re-placement after a routing failure (the fast path's retries) must not repeat the
    placement that failed: the congestion penalty steers greedy off those sites."""
    g = chain(3, "any")
    first = greedy_place(g, tiny, g.node_ids)
    penalty = {site: 100.0 for site in first.values()}
    again = greedy_place(g, tiny, g.node_ids, penalty)
    assert not set(again.values()) & set(first.values())
    for e in g.edges:
        assert tiny.distance(again[e.src], again[e.dst]) == 0   # still close together


def test_placement_runs_out_of_sites(tiny):
    g = Graph("g", [Node(f"p{i}", unit="pmu") for i in range(9)], [])
    with pytest.raises(PlacementError) as info:
        greedy_place(g, tiny, g.node_ids)
    assert info.value.unit == "pmu" and info.value.needed == 9 and info.value.available == 8
    assert "PMU" in str(info.value)


def test_agcu_nodes_go_to_agcus(tiny):
    g = Graph("g", [Node("load", unit="agcu"), Node("x", unit="pcu")], [Edge("load", "x")])
    placement = greedy_place(g, tiny, ["load", "x"])
    assert tiny.site(placement["load"]).unit == "agcu"
    routing = route_negotiated(g, tiny, placement)
    assert routing.success
    assert check_section(g, tiny, placement, routing.paths).ok


def test_routes_pass_the_checker_with_multi_sink_nets(tiny):
    nodes = [Node(f"n{i}", unit="any") for i in range(12)]
    edges = [Edge("n0", f"n{i}", net="fan") for i in range(1, 6)]
    edges += [Edge(f"n{i}", f"n{i+1}") for i in range(5, 11)]
    g = Graph("g", nodes, edges)
    placement = greedy_place(g, tiny, g.node_ids)
    routing = route_negotiated(g, tiny, placement)
    assert routing.success
    report = check_section(g, tiny, placement, routing.paths)
    assert report.ok, report.violations
    assert report.wirelength == routing.wirelength
    assert len(routing.trees) == 1 + 6          # one tree per net
    assert routing.log and routing.log[0].startswith("routing iteration 1")


def test_congestion_is_negotiated_away():
    """Many nets through a narrow fabric need several iterations but succeed."""
    fabric = build_fabric(load_hardware("tiny"))
    n = 16
    g = Graph("g", [Node(f"n{i}", unit="any") for i in range(n)],
              [Edge(f"n{i}", f"n{(i * 7 + 3) % n}") for i in range(n) if (i * 7 + 3) % n != i])
    placement = {f"n{i}": s.id for i, s in enumerate(s for s in fabric.sites if s.unit != "agcu")}
    routing = route_negotiated(g, fabric, placement)
    assert routing.success
    assert check_section(g, fabric, placement, routing.paths).ok


def test_router_reports_overused_links_when_impossible():
    """Five nets out of one unit cannot share its links when each has one channel."""
    from dataclasses import replace
    from hardware import NetworkSpec
    spec = load_hardware("tiny")
    narrow = replace(spec, name="narrow", networks={
        **spec.networks, "vector": NetworkSpec(name="vector", width_bits=512, channels=1)})
    fabric = build_fabric(narrow)
    nodes = [Node(f"n{i}", unit="any") for i in range(6)]
    g = Graph("g", nodes, [Edge("n0", f"n{i}") for i in range(1, 6)])   # 5 separate nets
    placement = greedy_place(g, fabric, g.node_ids)
    routing = route_negotiated(g, fabric, placement, config=RouterConfig(max_iterations=8))
    assert not routing.success and routing.iterations == 8
    assert routing.overused
    past = SolveSettings(deadline=time.monotonic() - 1.0)   # the run's deadline has passed
    cut = route_negotiated(g, fabric, placement, past, config=RouterConfig(max_iterations=8))
    assert cut.iterations == 1 and cut.extra["cut_short"] and not cut.success
    worst = routing.overused[0]
    assert worst.load > worst.capacity == 1 and len(worst.nets) == worst.load
    assert not check_section(g, fabric, placement, routing.paths).ok


def test_placement_cost_counts_bandwidth(tiny):
    g = Graph("g", [Node("a"), Node("b")], [Edge("a", "b", bandwidth=0.5)])
    placement = {"a": "U0_0", "b": "U3_3"}
    assert placement_cost(g, tiny, placement) == 0.5 * tiny.distance("U0_0", "U3_3")
