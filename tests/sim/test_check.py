"""The checker rejects every kind of illegal answer, and accepts legal ones."""

import pytest

from hardware import build_fabric, load_hardware
from model.graph import Edge, Graph, Node
from sim.check import check_placement, check_routes, check_section


@pytest.fixture
def graph():
    return Graph("g", [Node("a", unit="pcu"), Node("b", unit="pmu"), Node("c", unit="pcu")],
                 [Edge("a", "b", net="x"), Edge("a", "c", net="x")])


def pcu_pmu(tiny):
    pcu = [s.id for s in tiny.sites if s.unit == "pcu"]
    pmu = [s.id for s in tiny.sites if s.unit == "pmu"]
    return pcu, pmu


def shortest(tiny, a, b):
    """A legal path found with networkx on the routable view (only switches relay)."""
    import networkx as nx
    view = tiny.routable_view(a, b)
    nodes = nx.shortest_path(view, a, b)
    return [tiny.graph.edges[u, v]["id"] for u, v in zip(nodes, nodes[1:])]


def test_legal_answer_passes(tiny, graph):
    placement = {"a": "U0_0", "b": "U0_1", "c": "U1_1"}
    routes = {0: links("U0_0", "S0_1", "U0_1"), 1: links("U0_0", "S1_1", "U1_1")}
    report = check_section(graph, tiny, placement, routes)
    assert report.ok, report.violations
    assert report.wirelength == 4 and report.max_link_load == 0.5


def test_type_mismatch_and_double_booking(tiny, graph):
    pcu, pmu = pcu_pmu(tiny)
    report = check_placement(graph, tiny, {"a": pmu[0], "b": pmu[0], "c": pcu[0]})
    text = " | ".join(report.violations)
    assert 'node "a" needs a PCU' in text and "holds 2 nodes" in text


def test_unplaced_and_unknown_site(tiny, graph):
    report = check_placement(graph, tiny, {"a": "nowhere", "b": "U0_1"})
    text = " | ".join(report.violations)
    assert 'node "c" is not placed' in text and '"nowhere"' in text


def test_disconnected_route(tiny, graph):
    pcu, pmu = pcu_pmu(tiny)
    placement = {"a": pcu[0], "b": pmu[-1], "c": pcu[1]}
    good = shortest(tiny, pcu[0], pmu[-1])
    report = check_routes(graph, tiny, placement,
                          {0: good[:1] + good[2:], 1: shortest(tiny, pcu[0], pcu[1])})
    assert any("does not start where the route stands" in v for v in report.violations)


def test_route_through_a_unit_is_rejected(tiny):
    g = Graph("g", [Node("a"), Node("b")], [Edge("a", "b")])
    # a -> switch -> some other unit -> switch -> b
    a, middle, b = "U0_0", "U1_1", "U2_2"
    sw1 = next(s for s in tiny.graph.successors(a) if s in tiny.graph.predecessors(middle))
    sw2 = next(s for s in tiny.graph.successors(middle) if s in tiny.graph.predecessors(b))
    path = [f"{a}->{sw1}", f"{sw1}->{middle}", f"{middle}->{sw2}", f"{sw2}->{b}"]
    report = check_routes(g, tiny, {"a": a, "b": b}, {0: path})
    assert any("passes through unit" in v for v in report.violations)


def test_capacity_overflow_is_rejected(tiny):
    # three separate nets forced onto the same unit link (2 vector channels)
    g = Graph("g", [Node("s"), Node("t1"), Node("t2"), Node("t3")],
              [Edge("s", "t1"), Edge("s", "t2"), Edge("s", "t3")])
    placement = {"s": "U0_0", "t1": "U0_1", "t2": "U1_0", "t3": "U1_1"}
    routes = {i: shortest(tiny, "U0_0", placement[f"t{i+1}"]) for i in range(3)}
    first = {r[0] for r in routes.values()}
    if len(first) > 1:  # steer all three through one first link to force the overflow
        shared = routes[0][0]
        for i in (1, 2):
            sw = shared.split("->")[1]
            routes[i] = [shared] + shortest_from_switch(tiny, sw, placement[f"t{i+1}"])
    report = check_routes(g, tiny, placement, routes)
    assert any("carries 3 nets" in v for v in report.violations)
    assert report.max_link_load == 1.5


def shortest_from_switch(tiny, sw, target):
    import networkx as nx
    view = tiny.routable_view(sw, target)
    nodes = nx.shortest_path(view, sw, target)
    return [tiny.graph.edges[u, v]["id"] for u, v in zip(nodes, nodes[1:])]


def links(*vertices):
    return [f"{a}->{b}" for a, b in zip(vertices, vertices[1:])]


def test_a_net_that_is_not_a_tree(tiny):
    g = Graph("g", [Node("s"), Node("t1"), Node("t2")],
              [Edge("s", "t1", net="n"), Edge("s", "t2", net="n")])
    placement = {"s": "U0_0", "t1": "U0_2", "t2": "U0_3"}
    routes = {0: links("U0_0", "S0_1", "S0_2", "U0_2"),
              1: links("U0_0", "S1_1", "S1_2", "S0_2", "S0_3", "U0_3")}   # enters S0_2 twice
    report = check_routes(g, tiny, placement, routes)
    assert any("do not form a tree" in v for v in report.violations)
    routes[1] = links("U0_0", "S0_1", "S0_2", "S0_3", "U0_3")               # shares the trunk
    report = check_routes(g, tiny, placement, routes)
    assert report.ok, report.violations
    assert report.wirelength == 5            # the shared trunk counts once


def test_route_ending_elsewhere(tiny):
    g = Graph("g", [Node("s"), Node("t")], [Edge("s", "t")])
    report = check_routes(g, tiny, {"s": "U0_0", "t": "U0_2"}, {0: links("U0_0", "S0_1", "U0_1")})
    assert any("ends at" in v for v in report.violations)
    report = check_routes(g, tiny, {"s": "U0_0", "t": "U0_2"}, {})
    assert any("not routed" in v for v in report.violations)


def test_a_short_between_nets_is_rejected_and_loads_are_measured():
    """Two nets sharing a link beyond its channels (a short) are caught; loads counted."""
    from hardware import build_fabric, load_hardware
    from model.graph import Edge, Graph, Node
    from sim.check import check_routes
    fab = build_fabric(load_hardware("tiny"))
    g = Graph("short", [Node(f"d{i}", unit="pcu") for i in range(3)] + [Node("s", unit="pmu")],
              [Edge(f"d{i}", "s", net=f"n{i}") for i in range(3)])
    placement = {"d0": "U0_0", "d1": "U1_1", "d2": "U2_2", "s": "U0_1"}
    shared = ["S1_1->S0_1", "S0_1->U0_1"]
    routes = {0: ["U0_0->S1_1"] + shared, 1: ["U1_1->S1_1"] + shared,
              2: ["U2_2->S2_2", "S2_2->S1_2", "S1_2->S0_2", "S0_2->U0_1"]}
    report = check_routes(g, fab, placement, routes)
    assert report.ok, report.violations
    assert report.link_load["S0_1->U0_1"] == 2 and report.wirelength == 10
    routes[2] = ["U2_2->S2_2", "S2_2->S1_2", "S1_2->S1_1"] + shared
    report = check_routes(g, fab, placement, routes)
    assert any('link "S0_1->U0_1" carries 3 nets' in v for v in report.violations)
