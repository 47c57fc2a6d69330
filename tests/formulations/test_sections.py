"""The greedy section cut: capacities, categories, acyclic quotient."""

import networkx as nx
import pytest
from hypothesis import given, settings, strategies as st

from formulations.sections import Capacity, SectionError, greedy_cut, unit_demand
from hardware import build_fabric, load_hardware
from model.graph import Edge, Graph, Node


def random_dag(draw_edges, n, units, categories):
    nodes = [Node(f"n{i}", unit=units[i], category=categories[i]) for i in range(n)]
    edges = [Edge(f"n{a}", f"n{b}") for a, b in draw_edges if a < b]
    return Graph("r", nodes, edges)


@st.composite
def dags(draw):
    n = draw(st.integers(1, 30))
    units = draw(st.lists(st.sampled_from(["pcu", "pmu", "any"]), min_size=n, max_size=n))
    cats = draw(st.lists(st.sampled_from(["forward", "backward", None]), min_size=n, max_size=n))
    pairs = draw(st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1)), max_size=3 * n))
    return random_dag(pairs, n, units, cats)


@settings(max_examples=150, deadline=None)
@given(dags(), st.integers(1, 4), st.integers(1, 4))
def test_cut_is_a_valid_ordered_partition(graph, pcu, pmu):
    cap = Capacity(pcu=pcu, pmu=pmu, total=pcu + pmu, agcu=0)
    sections = greedy_cut(graph, cap)
    assigned = [n for s in sections for n in s.nodes]
    assert sorted(assigned) == sorted(graph.node_ids)          # a partition
    where = {n: s.id for s in sections for n in s.nodes}
    for e in graph.edges:                                        # quotient acyclic, ordered
        assert where[e.src] <= where[e.dst]
    for s in sections:
        demand = [unit_demand(graph.node(n)) for n in s.nodes]
        assert sum(d["pcu"] for d in demand) <= cap.pcu
        assert sum(d["pmu"] for d in demand) <= cap.pmu
        assert sum(d["pcu"] + d["pmu"] + d["any"] for d in demand) <= cap.total
        assert len({graph.node(n).category for n in s.nodes}) == 1   # never mixes categories


def test_categories_stay_apart_without_extra_sections():
    # forward chain and a backward chain interleaved in file order
    nodes = [Node(f"f{i}", unit="pcu", category="forward") for i in range(3)]
    nodes += [Node(f"b{i}", unit="pcu", category="backward") for i in range(3)]
    nodes = [nodes[0], nodes[3], nodes[1], nodes[4], nodes[2], nodes[5]]
    edges = [Edge("f0", "f1"), Edge("f1", "f2"), Edge("f2", "b0"), Edge("b0", "b1"), Edge("b1", "b2")]
    sections = greedy_cut(Graph("g", nodes, edges), Capacity(pcu=10, pmu=10, total=20, agcu=0))
    assert [s.nodes for s in sections] == [["f0", "f1", "f2"], ["b0", "b1", "b2"]]


def test_node_bigger_than_the_chip():
    g = Graph("g", [Node("big", pcu=100)], [])
    with pytest.raises(SectionError, match='"big"'):
        greedy_cut(g, Capacity(pcu=64, pmu=64, total=128, agcu=4))


def test_capacity_of_presets():
    cap = Capacity.of_fabric(build_fabric(load_hardware("plasticine")))
    assert (cap.pcu, cap.pmu, cap.total, cap.agcu) == (64, 64, 128, 4)


def test_scale_factor_leaves_headroom():
    g = Graph("g", [Node(f"n{i}", unit="pcu") for i in range(8)], [])
    cap = Capacity(pcu=8, pmu=0, total=8, agcu=0)
    assert len(greedy_cut(g, cap)) == 1
    assert len(greedy_cut(g, cap, scale=2.0)) == 2
