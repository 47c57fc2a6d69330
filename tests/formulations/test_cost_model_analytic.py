"""The analytic cost model (source 002's heuristic baseline)."""

from __future__ import annotations

import ast
import random
from pathlib import Path

import networkx as nx
import pytest

import formulations.placement.cost_models.analytic as analytic
from formulations.placement.cost_models import analytic_estimate, predict_normalised
from hardware import build_fabric, load_hardware, spec_from_dict, spec_to_dict
from model.graph import Edge, Graph, Node

PLASTICINE = load_hardware("plasticine")
F = PLASTICINE.flops_per_pcu_cycle


def one_channel():
    data = spec_to_dict(load_hardware("tiny")) | {"name": "tiny-1ch"}
    data["networks"] = dict(data["networks"], vector={"width_bits": 512, "channels": 1})
    return spec_from_dict(data)


def path(*nodes: str) -> list[str]:
    return [f"{a}->{b}" for a, b in zip(nodes, nodes[1:])]


def two_flows(shared: bool, small: bool = False):
    """A -> B (4096 bytes) and C -> D (4096 bytes, or 64 when ``small``); the routes share
    link S0_1->S0_2 or not."""
    g = Graph("flows", [Node("A", unit="pcu", flops=64 * F), Node("B", unit="pcu", flops=F),
                        Node("C", unit="pcu", flops=64 * F), Node("D", unit="pcu", flops=F)],
              [Edge("A", "B", bytes=4096, depth=4),
               Edge("C", "D", bytes=64 if small else 4096, depth=4)])
    placement = {"A": "U0_0", "B": "U0_2", "C": "U1_1", "D": "U1_3"}
    routes = {0: path("U0_0", "S0_1", "S0_2", "U0_2"),
              1: (path("U1_1", "S1_1", "S0_1", "S0_2", "S0_3", "S1_3", "U1_3") if shared
                  else path("U1_1", "S2_1", "S2_2", "S2_3", "U1_3"))}
    return g, placement, routes


def random_section(seed: int):
    """A random DAG placed on distinct plasticine sites and routed on shortest paths."""
    rng = random.Random(seed)
    fabric = build_fabric(PLASTICINE)
    n = rng.randint(2, 12)
    nodes = [Node(f"v{k}", unit=rng.choice(["pcu", "pmu"]),
                  flops=rng.choice([None, rng.randint(1, 10**5)])) for k in range(n)]
    edges = [Edge(f"v{a}", f"v{b}", bytes=rng.choice([4, 64, 4096, 10**5]),
                  depth=rng.choice([None, 1, 2, 8]))
             for a in range(n) for b in range(a + 1, n) if rng.random() < 0.3]
    g = Graph(f"r{seed}", nodes, edges)
    free = {kind: [s.id for s in fabric.sites_of(kind)] for kind in ("pcu", "pmu")}
    for sites in free.values():
        rng.shuffle(sites)
    placement = {v.id: free[v.unit].pop() for v in nodes}
    routes = {}
    for i, e in enumerate(edges):
        a, b = placement[e.src], placement[e.dst]
        hops = nx.shortest_path(fabric.routable_view(a, b), a, b)
        routes[i] = path(*hops)
    return g, placement, routes


@pytest.mark.parametrize("seed", range(15))
def test_the_prediction_is_a_normalised_throughput(seed):
    g, placement, routes = random_section(seed)
    est = analytic_estimate(g, PLASTICINE, placement, routes)
    assert 0.0 < est.predicted <= 1.0
    assert est.period >= est.operator_cycles >= 1.0
    assert est.predicted == predict_normalised(g, PLASTICINE, placement, routes)


def test_two_nets_on_a_one_channel_link_predict_less():
    spec = one_channel()
    alone = predict_normalised(*two_flows(False)[:1], spec, *two_flows(False)[1:])
    shared = predict_normalised(*two_flows(True)[:1], spec, *two_flows(True)[1:])
    assert shared < alone
    est = analytic_estimate(*two_flows(True)[:1], spec, *two_flows(True)[1:])
    assert est.congestion == 2.0


def test_it_counts_nets_where_the_links_share_by_bytes():
    """Source 002 §II-B: the heuristic is conservative about time-shared routes. A 64-byte
    net beside a 4096-byte one costs the simulator almost nothing; the heuristic halves."""
    from sim.perf import simulate_section
    spec = one_channel()
    g, placement, routes = two_flows(True, small=True)
    simulated = simulate_section(g, spec, placement, routes).normalised
    predicted = predict_normalised(g, spec, placement, routes)
    assert simulated > 0.95 and predicted < 0.6


def test_a_longer_route_through_a_shallow_buffer_predicts_less():
    g = Graph("pair", [Node("a", unit="pcu", flops=4 * F), Node("b", unit="pcu", flops=4 * F)],
              [Edge("a", "b", bytes=64)])
    near = predict_normalised(g, PLASTICINE, {"a": "U0_0", "b": "U0_2"},
                              {0: path("U0_0", "S0_1", "S0_2", "U0_2")})
    far = predict_normalised(g, PLASTICINE, {"a": "U0_0", "b": "U0_6"},
                             {0: path("U0_0", "S0_1", "S0_2", "S0_3", "S0_4", "S0_5", "S0_6",
                                      "U0_6")})
    assert far < near


def test_more_pcus_for_the_slow_operator_never_predict_less():
    g = Graph("lanes", [Node("a", unit="pcu", flops=40 * F), Node("b", unit="pcu", flops=10 * F)],
              [Edge("a", "b", bytes=64, depth=8)])
    base = analytic_estimate(g, PLASTICINE, {"a": "U0_0", "b": "U0_2"},
                             {0: path("U0_0", "S0_1", "S0_2", "U0_2")})
    wide = Graph("lanes", g.nodes + [Node("a#pcu1", unit="pcu", attrs={"unit_of": "a"})],
                 g.edges + [Edge("a", "a#pcu1", bytes=64, attrs={"unit_of": "a"})])
    more = analytic_estimate(wide, PLASTICINE, {"a": "U0_0", "b": "U0_2", "a#pcu1": "U1_1"},
                             {0: path("U0_0", "S0_1", "S0_2", "U0_2"),
                              1: path("U0_0", "S1_1", "U1_1")})
    assert more.compute_cycles == pytest.approx(20.0) and base.compute_cycles == 40.0
    assert more.period < base.period


def test_it_does_not_read_the_simulator():
    tree = ast.parse(Path(analytic.__file__).read_text())
    imported = {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
    imported |= {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    assert not any(m.split(".")[0] == "sim" for m in imported if m)
