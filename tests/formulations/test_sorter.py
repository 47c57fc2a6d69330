"""Tests of the priority-queue sorter (source 000, digest §6).

The worked example (FIG. 9), the longest-path and key vectors, the derived
cases of digest §6.5, every seed policy and key combination, cyclic graphs,
and property tests: the fast heap sorter always returns a permutation and
agrees exactly with the literal re-rank-everything reference.
"""

from __future__ import annotations

import random
from pathlib import Path

import networkx as nx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from benchmarks.generators import layered_dag, random_dag
from benchmarks.reference_sorter import FIG9_ORDER, reference_sort
from formulations.sorter import (
    CRITERIA,
    DEFAULT_CRITERIA,
    SEED_POLICIES,
    SorterConfig,
    cycle_breaking_edges,
    longest_hop_paths,
    node_keys,
    select_seed,
    sort_nodes,
)
from formulations.sorter import priority_sort
from model.graph import Edge, Graph, Node
from model.graphjson import read_graph

SORTERS = {"fast": sort_nodes, "reference": reference_sort}
FIG9 = Path(__file__).resolve().parents[2] / "examples" / "fig9.json"


def fig9_graph() -> Graph:
    """The FIG. 7/9 graph of source 000 (digest §6.1: 18 nodes, 17 weighted edges, nets
    NET_A, NET_B, NET_C), as the project ships it."""
    return read_graph(FIG9)


def fanin_example_graph(virtual_channel: bool = False) -> Graph:
    """The derived graph T-K1-fanin / T-VC of digest §6.5.

    A->C 0.2, B->C 0.2, A->D 0.9, D->B 1.0, D->F 0.5. With the default keys it
    sorts to ``A, D, B, C, F`` (rule (i) closes C's fan-in); with
    ``virtual_channel=True`` the edge D->F is a virtual channel without
    end-to-end control and the order becomes ``A, D, F, B, C``.
    """
    return Graph("fanin_example", [Node(x) for x in "ABCDF"],
                 [Edge("A", "C", bandwidth=0.2), Edge("B", "C", bandwidth=0.2),
                  Edge("A", "D", bandwidth=0.9), Edge("D", "B", bandwidth=1.0),
                  Edge("D", "F", bandwidth=0.5, virtual_channel=virtual_channel)])


def two_component_graph() -> Graph:
    """FIG. 9 plus a disjoint chain X->Y (0.4), Y->Z (0.9): digest §6.5 T-components."""
    g = fig9_graph()
    return Graph("fig9_plus_chain", g.nodes + [Node("X"), Node("Y"), Node("Z")],
                 g.edges + [Edge("X", "Y", bandwidth=0.4), Edge("Y", "Z", bandwidth=0.9)])


def graph_of(edges, nodes=None, name="g"):
    """A graph from (src, dst, bandwidth[, extra Edge fields]) tuples."""
    out = []
    for item in edges:
        src, dst, bw, *rest = item
        out.append(Edge(src, dst, bandwidth=bw, **(rest[0] if rest else {})))
    if nodes is None:
        nodes = list(dict.fromkeys(x for e in out for x in (e.src, e.dst)))
    return Graph(name, [Node(v) for v in nodes], out)


def assert_keys(actual, expected):
    assert len(actual) == len(expected)
    for a, e in zip(actual, expected):
        assert a == pytest.approx(e, abs=1e-12)


# --------------------------------------------------------------------------
# FIG. 9: the worked example
# --------------------------------------------------------------------------
# digest §6.3: (iteration, popped, new neighbours, ODS after re-rank with keys)
FIG9_TRACE = [
    (1, "IN0", ["GRAD0", "LOSS0", "N1"],
     [("GRAD0", (1, 0, 1)), ("LOSS0", (1, 0.5, 1)), ("N1", (1, 0.9, 1))]),
    (2, "GRAD0", ["B0", "N2"],
     [("LOSS0", (0, 0.5, 2)), ("B0", (1, 0.3, 1)), ("N2", (1, 0.9, 1)), ("N1", (1, 0.9, 2))]),
    (3, "LOSS0", ["IN1"],
     [("B0", (1, 0.3, 2)), ("IN1", (1, 0.5, 1)), ("N2", (1, 0.9, 2)), ("N1", (1, 0.9, 3))]),
    (4, "B0", [],
     [("IN1", (1, 0.5, 2)), ("N2", (1, 0.9, 3)), ("N1", (1, 0.9, 4))]),
    (5, "IN1", ["GRAD1", "LOSS1", "N3"],
     [("LOSS1", (1, 0, 1)), ("GRAD1", (1, 0.5, 1)), ("N3", (1, 0.9, 1)), ("N2", (1, 0.9, 4)),
      ("N1", (1, 0.9, 5))]),
    (6, "LOSS1", ["IN2"],
     [("GRAD1", (0, 0.5, 2)), ("IN2", (1, 0, 1)), ("N3", (1, 0.9, 2)), ("N2", (1, 0.9, 5)),
      ("N1", (1, 0.9, 6))]),
    (7, "GRAD1", ["B1", "N4"],
     [("IN2", (1, 0, 2)), ("B1", (1, 0.3, 1)), ("N4", (1, 0.9, 1)), ("N3", (1, 0.9, 3)),
      ("N2", (1, 0.9, 6)), ("N1", (1, 0.9, 7))]),
    (8, "IN2", ["GRAD2", "LOSS2", "N5"],
     [("GRAD2", (1, 0, 1)), ("B1", (1, 0.3, 2)), ("N5", (1, 0.9, 1)), ("N4", (1, 0.9, 2)),
      ("N3", (1, 0.9, 4)), ("N2", (1, 0.9, 7)), ("N1", (1, 0.9, 8)), ("LOSS2", (1, 0.95, 1))]),
    (9, "GRAD2", ["B2", "N6"],
     [("LOSS2", (0, 0.95, 2)), ("B2", (1, 0.3, 1)), ("B1", (1, 0.3, 3)), ("N6", (1, 0.9, 1)),
      ("N5", (1, 0.9, 2)), ("N4", (1, 0.9, 3)), ("N3", (1, 0.9, 5)), ("N2", (1, 0.9, 8)),
      ("N1", (1, 0.9, 9))]),
    (10, "LOSS2", [],
     [("B2", (1, 0.3, 2)), ("B1", (1, 0.3, 4)), ("N6", (1, 0.9, 2)), ("N5", (1, 0.9, 3)),
      ("N4", (1, 0.9, 4)), ("N3", (1, 0.9, 6)), ("N2", (1, 0.9, 9)), ("N1", (1, 0.9, 10))]),
]


@pytest.mark.parametrize("sorter", SORTERS.values(), ids=SORTERS.keys())
def test_fig9_sorts_to_the_corrected_order(sorter):
    result = sorter(fig9_graph())
    assert result.order == FIG9_ORDER
    assert "GRAD1" in result.order  # the patent's list [0302] drops it by mistake
    assert result.seeds == ["IN0"]
    assert result.key_names == ("closes_connection", "bandwidth_gap", "age")


@pytest.mark.parametrize("sorter", SORTERS.values(), ids=SORTERS.keys())
@pytest.mark.parametrize("row", FIG9_TRACE, ids=[f"it{r[0]}" for r in FIG9_TRACE])
def test_fig9_trace_matches_digest_table(sorter, row):
    iteration, popped, new, ods = row
    step = sorter(fig9_graph(), SorterConfig(trace=True)).trace[iteration - 1]
    assert step.iteration == iteration
    assert step.popped == popped
    assert step.new_neighbours == new
    assert [name for name, _ in step.ods] == [name for name, _ in ods]
    for (_, keys), (_, expected) in zip(step.ods, ods):
        assert_keys(keys, expected)


def test_fig9_trace_drains_in_order():
    trace = sort_nodes(fig9_graph(), SorterConfig(trace=True)).trace
    assert len(trace) == 18
    assert [s.popped for s in trace] == FIG9_ORDER
    assert all(s.new_neighbours == [] for s in trace[9:])
    assert [n for n, _ in trace[10].ods] == ["B1", "N6", "N5", "N4", "N3", "N2", "N1"]
    assert [n for n, _ in trace[11].ods] == ["N6", "N5", "N4", "N3", "N2", "N1"]
    assert trace[-1].ods == []


def test_fig9_trace_fast_equals_reference():
    config = SorterConfig(trace=True)
    assert sort_nodes(fig9_graph(), config).trace == reference_sort(fig9_graph(), config).trace


def test_fig9_remarks():
    """The assertions of digest §6.3: key1 dominates key2, LIFO ties, LOSS2 sinks."""
    trace = sort_nodes(fig9_graph(), SorterConfig(trace=True)).trace
    ods = {s.iteration: dict(s.ods) for s in trace}
    # step 2: LOSS0 closes NET_A and jumps ahead of B0 despite a worse key2
    assert ods[2]["LOSS0"][0] == 0 and ods[2]["LOSS0"][1] > ods[2]["B0"][1]
    # step 6: GRAD1 (0, 0.5) beats IN2 (1, 0)
    assert trace[5].ods[0][0] == "GRAD1"
    # step 8: LOSS2 (key2 0.95) is behind every N node
    assert trace[7].ods[-1][0] == "LOSS2"


# --------------------------------------------------------------------------
# Longest paths and seeds (digest §6.2)
# --------------------------------------------------------------------------
def test_fig9_longest_paths():
    to_sink, from_source = longest_hop_paths(fig9_graph())
    assert to_sink["IN0"] == 6
    assert to_sink["B0"] == to_sink["B1"] == to_sink["B2"] == 2
    expected_to_sinks = {"N6": 6, "N5": 5, "LOSS2": 5, "N4": 4, "N3": 3, "N2": 2, "N1": 1}
    assert {v: from_source[v] for v in expected_to_sinks} == expected_to_sinks


@pytest.mark.parametrize("policy, seed", [
    ("longest_path_source", "IN0"),
    ("longest_path_sink", "N6"),
    ("max_bandwidth_input", "IN0"),  # 1.0 against 0.7 for B0, B1, B2
    ("max_bandwidth_output", "N6"),  # all N at 0.1: the longest path breaks the tie
    ("first_in_component", "N1"),  # file order of fig9_graph()
])
def test_fig9_seed_policies(policy, seed):
    g = fig9_graph()
    config = SorterConfig(seed_policy=policy)
    assert select_seed(g, config) == seed
    result = sort_nodes(g, config)
    assert result.order[0] == seed
    assert sorted(result.order) == sorted(g.node_ids)
    assert result.order == reference_sort(g, config).order


def test_random_seed_policy_is_seeded():
    g = fig9_graph()
    orders = {s: sort_nodes(g, SorterConfig(seed_policy="random", random_seed=s)).order
              for s in range(6)}
    for s, order in orders.items():
        ids = g.node_ids
        random.Random(s).shuffle(ids)
        assert order[0] == ids[0]
        assert order == sort_nodes(g, SorterConfig(seed_policy="random", random_seed=s)).order
        assert order == reference_sort(g, SorterConfig(seed_policy="random", random_seed=s)).order
    assert len({o[0] for o in orders.values()}) > 1


def test_seed_tie_break_first_edge_bandwidth():
    # two sources with paths of 2 hops; S2's first edge is wider
    g = graph_of([("S1", "X", 0.5), ("X", "Y", 1.0), ("S2", "Z", 0.9), ("Z", "W", 0.1)])
    assert select_seed(g) == "S2"


def test_seed_tie_break_fanout_then_id():
    # same length and first-edge bandwidth; S2 drives a fanout-2 net
    g = graph_of([("S1", "X", 1.0), ("S2", "Y", 1.0, {"net": "n"}), ("S2", "Z", 1.0, {"net": "n"})])
    assert select_seed(g) == "S2"
    # a full tie goes to the smaller id, whatever the file order
    g = graph_of([("S2", "Y", 1.0), ("S1", "X", 1.0)])
    assert select_seed(g) == "S1"


def test_seed_prefers_longest_over_bandwidth():
    g = graph_of([("A", "B", 0.1), ("B", "C", 0.1), ("D", "E", 1.0)])
    assert select_seed(g) == "A"
    assert select_seed(g, SorterConfig(seed_policy="max_bandwidth_input")) == "D"


def test_select_seed_rejects_empty_graph():
    with pytest.raises(ValueError, match="no nodes"):
        select_seed(Graph("empty", [], []))


# --------------------------------------------------------------------------
# Key2 micro-example (digest §6.4)
# --------------------------------------------------------------------------
@pytest.mark.parametrize("sorted_nodes, key2",
                         [({"IN0", "B0"}, 0.0), ({"B0"}, 0.3), ({"IN0"}, 0.0)])
def test_key2_micro_example(sorted_nodes, key2):
    keys = node_keys(fig9_graph(), "GRAD0", sorted_nodes)
    assert keys[1] == pytest.approx(key2)


def test_node_keys_key1_rules():
    g = fig9_graph()
    assert node_keys(g, "GRAD0", {"IN0", "B0"})[0] == 0  # (i): all fan-in sorted
    assert node_keys(g, "IN0", {"GRAD0", "LOSS0"})[0] == 0  # (ii): its net is sorted
    assert node_keys(g, "LOSS0", {"IN0", "GRAD0"})[0] == 0  # (iii): the shared net is sorted
    assert node_keys(g, "LOSS0", {"IN0"})[0] == 1
    assert node_keys(g, "LOSS0", {"IN0", "GRAD0"},
                     config=SorterConfig(key1_rules=("i", "ii")))[0] == 1
    # the literal text: rule (iii) only for nets of fanout three or more
    assert node_keys(g, "LOSS0", {"IN0", "GRAD0"},
                     config=SorterConfig(shared_net_min_fanout=3))[0] == 1
    assert node_keys(g, "N1", {"IN0"}, age=7) == pytest.approx((1, 0.9, 7))
    with pytest.raises(ValueError, match="does not exist"):
        node_keys(g, "NOPE", set())


# --------------------------------------------------------------------------
# Derived cases (digest §6.5)
# --------------------------------------------------------------------------
@pytest.mark.parametrize("sorter", SORTERS.values(), ids=SORTERS.keys())
def test_k1_fanin_rule_beats_key2(sorter):
    assert sorter(fanin_example_graph()).order == ["A", "D", "B", "C", "F"]


@pytest.mark.parametrize("sorter", SORTERS.values(), ids=SORTERS.keys())
@pytest.mark.parametrize("config", [
    SorterConfig(criteria=["bandwidth_gap", "age"]),
    SorterConfig(key1_rules=()),
], ids=["no-key1", "no-rules"])
def test_k1_fanin_without_key1(sorter, config):
    assert sorter(fanin_example_graph(), config).order == ["A", "D", "B", "F", "C"]


@pytest.mark.parametrize("sorter", SORTERS.values(), ids=SORTERS.keys())
@pytest.mark.parametrize("delta", [1.0, 0.5])
def test_virtual_channel_decrement(sorter, delta):
    config = SorterConfig(vc_delta=delta, trace=True)
    result = sorter(fanin_example_graph(virtual_channel=True), config)
    assert result.order == ["A", "D", "F", "B", "C"]
    keys = dict(result.trace[1].ods)  # after D: F waits with key1 = 1 - delta
    assert keys["F"][0] == pytest.approx(1 - delta)
    assert keys["B"][0] == 1


def test_virtual_channel_without_decrement_is_ignored():
    config = SorterConfig(vc_delta=0.0)
    assert (sort_nodes(fanin_example_graph(virtual_channel=True), config).order
            == ["A", "D", "B", "C", "F"])


@pytest.mark.parametrize("sorter", SORTERS.values(), ids=SORTERS.keys())
def test_components_one_outer_pass_each(sorter):
    result = sorter(two_component_graph())
    assert result.order == FIG9_ORDER + ["X", "Y", "Z"]
    assert result.seeds == ["IN0", "X"]


def test_components_longest_first_regardless_of_file_order():
    g = two_component_graph()
    reordered = Graph(g.name, g.nodes[-3:] + g.nodes[:-3], g.edges[-2:] + g.edges[:-2])
    assert sort_nodes(reordered).order == FIG9_ORDER + ["X", "Y", "Z"]


@pytest.mark.parametrize("policy", SEED_POLICIES)
def test_single_isolated_node(policy):
    g = Graph("one", [Node("solo")], [])
    assert sort_nodes(g, SorterConfig(seed_policy=policy)).order == ["solo"]


def test_empty_graph():
    result = sort_nodes(Graph("empty", [], []), SorterConfig(trace=True))
    assert result.order == [] and result.trace == []


def test_isolated_nodes_and_self_loops():
    g = graph_of([("A", "A", 0.5, {"distance": 1}), ("B", "C", 0.3)], nodes=["C", "A", "B", "D"])
    for policy in SEED_POLICIES:
        config = SorterConfig(seed_policy=policy)
        order = sort_nodes(g, config).order
        assert sorted(order) == ["A", "B", "C", "D"]
        assert order == reference_sort(g, config).order


# --------------------------------------------------------------------------
# Key combinations
# --------------------------------------------------------------------------
def test_lexicographic_keys_ignore_positive_scaling():
    config = SorterConfig(criteria={"closes_connection": 5.0, "bandwidth_gap": 0.25, "age": 3.0})
    assert sort_nodes(fig9_graph(), config).order == FIG9_ORDER
    assert reference_sort(fig9_graph(), config).order == FIG9_ORDER


@pytest.mark.parametrize("sorter", SORTERS.values(), ids=SORTERS.keys())
def test_weighted_sum_trades_key1_against_key2(sorter):
    # a light key1: at step 2, B0 (0.1 * 1 + 0.3) now beats LOSS0 (0.1 * 0 + 0.5)
    config = SorterConfig(criteria=[("closes_connection", 0.1), ("bandwidth_gap", 1.0)],
                          combine="weighted_sum", trace=True)
    result = sorter(fig9_graph(), config)
    assert result.order[:4] == ["IN0", "GRAD0", "B0", "LOSS0"]
    assert result.key_names == ("weighted_sum",)
    assert dict(result.trace[1].ods)["B0"] == pytest.approx((0.4,))
    assert sorted(result.order) == sorted(FIG9_ORDER)


def test_weighted_sum_equals_lexicographic_when_key1_dominates():
    config = SorterConfig(criteria={"closes_connection": 10.0, "bandwidth_gap": 1.0, "age": 0.001},
                          combine="weighted_sum")
    assert sort_nodes(fig9_graph(), config).order == FIG9_ORDER


@pytest.mark.parametrize("name", CRITERIA)
def test_each_criterion_alone(name):
    g = two_component_graph()
    for weight in (1.0, -1.0):
        config = SorterConfig(criteria=[(name, weight)], trace=True)
        fast, ref = sort_nodes(g, config), reference_sort(g, config)
        assert sorted(fast.order) == sorted(g.node_ids)
        assert fast.order == ref.order
        assert fast.trace == ref.trace


def test_age_weight_minus_one_is_fifo():
    # on a star every leaf waits with the same keys: LIFO by default is by id
    # (same insertion), so build a chain of insertions instead
    g = graph_of([("A", "B", 1.0), ("A", "C", 0.5), ("B", "D", 0.5)])
    lifo = sort_nodes(g, SorterConfig(criteria=["bandwidth_gap", "age"])).order
    fifo = sort_nodes(g, SorterConfig(criteria=[("bandwidth_gap", 1.0), ("age", -1.0)])).order
    assert lifo == ["A", "B", "D", "C"]  # D (0.5, age 1) before C (0.5, age 2)
    assert fifo == ["A", "B", "C", "D"]


def test_full_ties_fall_back_to_insertion_then_id():
    # all leaves of a star tie on every key: id order, whatever the file order
    g = graph_of([("H", leaf, 0.5) for leaf in "ZYXW"])
    assert (sort_nodes(g, SorterConfig(seed_policy="first_in_component")).order
            == ["H", "W", "X", "Y", "Z"])
    # without the age, an older node wins a tie (insertion order)
    g = graph_of([("A", "B", 1.0), ("A", "Z", 0.5), ("B", "C", 0.5)])
    assert sort_nodes(g, SorterConfig(criteria=["bandwidth_gap"])).order == ["A", "B", "Z", "C"]


def test_config_validation():
    with pytest.raises(ValueError, match="seed_policy"):
        SorterConfig(seed_policy="best")
    with pytest.raises(ValueError, match="criterion"):
        SorterConfig(criteria=["speed"])
    with pytest.raises(ValueError, match="combine"):
        SorterConfig(combine="sum")
    with pytest.raises(ValueError, match="key1_rules"):
        SorterConfig(key1_rules=("iv",))
    with pytest.raises(ValueError, match="at least one"):
        SorterConfig(criteria=[])
    with pytest.raises(ValueError, match="shared_net_min_fanout"):
        SorterConfig(shared_net_min_fanout=1)
    assert SorterConfig().criteria == DEFAULT_CRITERIA
    assert SorterConfig(criteria=["age"]).criteria == (("age", 1.0),)


def test_bad_graphs_get_clear_errors():
    with pytest.raises(ValueError, match="NOPE"):
        sort_nodes(Graph("g", [Node("A")], [Edge("A", "NOPE")]))
    with pytest.raises(ValueError, match=r"edges\[0\].bandwidth"):
        sort_nodes(Graph("g", [Node("A"), Node("B")], [Edge("A", "B", bandwidth=1.5)]))
    with pytest.raises(ValueError, match="not unique"):
        sort_nodes(Graph("g", [Node("A"), Node("A")], []))


# --------------------------------------------------------------------------
# Cycles
# --------------------------------------------------------------------------
def test_loop_carried_edge():
    g = fig9_graph()
    g = Graph(g.name, g.nodes, g.edges + [Edge("N6", "IN0", bandwidth=0.2, distance=1)])
    assert cycle_breaking_edges(g) == [17]
    assert longest_hop_paths(g)[0]["IN0"] == 6
    assert select_seed(g) == "IN0"
    result = sort_nodes(g, SorterConfig(trace=True))
    assert sorted(result.order) == sorted(FIG9_ORDER)
    # the loop-carried edge still makes N6 a neighbour of IN0
    assert "N6" in result.trace[0].new_neighbours
    assert result.order == reference_sort(g).order


def test_same_iteration_cycle():
    # A -> B -> C -> A with a tail C -> D; the DFS from A closes the cycle at C -> A
    g = graph_of([("A", "B", 0.5), ("B", "C", 0.5), ("C", "A", 0.5), ("C", "D", 1.0)])
    assert cycle_breaking_edges(g) == [2]
    assert select_seed(g) == "A"
    for policy in SEED_POLICIES:
        config = SorterConfig(seed_policy=policy)
        order = sort_nodes(g, config).order
        assert sorted(order) == ["A", "B", "C", "D"]
        assert order == reference_sort(g, config).order


def test_pure_ring_has_a_seed():
    g = graph_of([("A", "B", 1.0), ("B", "C", 1.0), ("C", "A", 1.0)], nodes=["B", "C", "A"])
    # DFS roots follow file order: B -> C -> A -> B closes at A -> B
    assert cycle_breaking_edges(g) == [0]
    assert select_seed(g) == "B"
    assert sort_nodes(g).order[0] == "B"


# --------------------------------------------------------------------------
# Property tests
# --------------------------------------------------------------------------
BANDWIDTHS = [0.05, 0.1, 0.25, 0.5, 0.7, 1.0]


#: Bandwidths that differ while ``1 - bandwidth`` does not (key2 compares the latter).
CLOSE_BANDWIDTHS = [1e-17, 2e-17, 0.3, 0.30000000000000004, 0.7, 1.0]


@st.composite
def graphs(draw, max_nodes=9, acyclic=False, bandwidths=BANDWIDTHS):
    n = draw(st.integers(1, max_nodes))
    names = draw(st.permutations([f"v{i}" for i in range(n)]))  # ids need not follow file order
    edges = []
    for _ in range(draw(st.integers(0, 3 * n))):
        i, j = draw(st.integers(0, n - 1)), draw(st.integers(0, n - 1))
        distance = draw(st.sampled_from([0, 0, 0, 1]))
        if acyclic and distance == 0 and i >= j:
            if i == j:
                continue
            i, j = j, i
        edges.append(Edge(names[i], names[j], bandwidth=draw(st.sampled_from(bandwidths)),
                          net=draw(st.sampled_from([None, None, "a", "b"])),
                          virtual_channel=draw(st.sampled_from([False, False, False, True])),
                          distance=distance))
    return Graph("random", [Node(v) for v in names], edges)


@st.composite
def configs(draw, combine=None, trace=False):
    names = draw(st.lists(st.sampled_from(CRITERIA), min_size=1, max_size=4))
    weights = [draw(st.sampled_from([1.0, 1.0, 2.0, 0.5, -1.0, 0.0])) for _ in names]
    return SorterConfig(
        seed_policy=draw(st.sampled_from(SEED_POLICIES)),
        random_seed=draw(st.integers(0, 3)),
        criteria=list(zip(names, weights)),
        combine=combine or draw(st.sampled_from(["lexicographic", "weighted_sum"])),
        key1_rules=tuple(r for r in ("i", "ii", "iii") if draw(st.booleans())),
        shared_net_min_fanout=draw(st.sampled_from([2, 3])),
        vc_delta=draw(st.sampled_from([1.0, 0.5, 0.0, -0.5])),
        trace=trace,
    )


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(graphs(), configs())
def test_order_is_a_permutation(graph, config):
    result = sort_nodes(graph, config)
    assert sorted(result.order) == sorted(graph.node_ids)
    assert len(result.seeds) == nx.number_weakly_connected_components(graph.to_networkx())


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(graphs())
def test_fast_equals_reference_default(graph):
    config = SorterConfig(trace=True)
    fast, ref = sort_nodes(graph, config), reference_sort(graph, config)
    assert fast.order == ref.order
    assert fast.seeds == ref.seeds
    assert fast.trace == ref.trace


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(graphs(), configs(combine="lexicographic", trace=True))
def test_fast_equals_reference_lexicographic(graph, config):
    fast, ref = sort_nodes(graph, config), reference_sort(graph, config)
    assert fast.order == ref.order
    assert fast.trace == ref.trace


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(graphs(), configs(combine="weighted_sum"))
def test_fast_equals_reference_weighted_sum_without_age(graph, config):
    # with an age term the heap uses -insertion for the age: same order up to
    # rounding of exact ties, so the exact comparison leaves it out
    criteria = ([(name, w) for name, w in config.criteria if name != "age"]
                or [("bandwidth_gap", 1.0)])
    config = SorterConfig(**{**config.__dict__, "criteria": criteria})
    assert sort_nodes(graph, config).order == reference_sort(graph, config).order


@settings(max_examples=150, deadline=None)
@given(graphs(acyclic=True), st.randoms(use_true_random=False))
def test_acyclic_result_ignores_edge_file_order(graph, rnd):
    edges = list(graph.edges)
    rnd.shuffle(edges)
    shuffled = Graph(graph.name, graph.nodes, edges)
    assert sort_nodes(shuffled).order == sort_nodes(graph).order


@settings(max_examples=150, deadline=None)
@given(graphs(acyclic=True))
def test_longest_paths_match_networkx(graph):
    dag = nx.DiGraph()
    dag.add_nodes_from(graph.node_ids)
    dag.add_edges_from((e.src, e.dst) for e in graph.edges if e.distance == 0)
    to_sink, from_source = longest_hop_paths(graph)
    assert to_sink == _longest_from_each(dag)
    assert from_source == _longest_from_each(dag.reverse())


def _longest_from_each(dag: nx.DiGraph) -> dict[str, int]:
    best: dict[str, int] = {}
    for u in reversed(list(nx.topological_sort(dag))):
        best[u] = max((best[w] + 1 for w in dag.successors(u)), default=0)
    return best


@settings(max_examples=150, deadline=None)
@given(graphs())
def test_cycle_breaking_leaves_a_dag_of_back_edges(graph):
    dropped = set(cycle_breaking_edges(graph))
    dag = nx.MultiDiGraph()
    dag.add_nodes_from(graph.node_ids)
    dag.add_edges_from((e.src, e.dst) for i, e in enumerate(graph.edges) if i not in dropped)
    assert nx.is_directed_acyclic_graph(dag)
    for i, e in enumerate(graph.edges):
        if e.distance > 0 or e.src == e.dst:
            assert i in dropped
        elif i in dropped:  # a DFS back edge: the tree path back makes it close a cycle
            assert nx.has_path(dag, e.dst, e.src)


# --------------------------------------------------------------------------
# The kernel: the default keys without a trace run in formulations/sorter/kernel.py
# --------------------------------------------------------------------------
@st.composite
def default_key_configs(draw, trace=False):
    """Configurations the kernel sorts with: the default keys, any other setting."""
    return SorterConfig(
        seed_policy=draw(st.sampled_from(SEED_POLICIES)),
        random_seed=draw(st.integers(0, 3)),
        key1_rules=tuple(r for r in ("i", "ii", "iii") if draw(st.booleans())),
        shared_net_min_fanout=draw(st.sampled_from([2, 3])),
        vc_delta=draw(st.sampled_from([1.0, 0.5, 0.0, -0.5, 2.0])),
        trace=trace,
    )


def _traced(config: SorterConfig) -> SorterConfig:
    """``config`` with a trace: the generic heap path (``_Live`` entries) sorts it."""
    return SorterConfig(**{**config.__dict__, "trace": True})


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(graphs(), default_key_configs())
def test_kernel_equals_reference(graph, config):
    fast, ref = sort_nodes(graph, config), reference_sort(graph, config)
    assert fast.order == ref.order
    assert fast.seeds == ref.seeds
    assert fast.trace is None


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(graphs(bandwidths=CLOSE_BANDWIDTHS), default_key_configs())
def test_kernel_equals_reference_when_gaps_round_together(graph, config):
    assert sort_nodes(graph, config).order == reference_sort(graph, config).order


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(graphs(max_nodes=40), default_key_configs())
def test_kernel_equals_generic_path(graph, config):
    fast, generic = sort_nodes(graph, config), sort_nodes(graph, _traced(config))
    assert fast.order == generic.order
    assert fast.seeds == generic.seeds


@pytest.mark.parametrize("graph", [random_dag(3000, 6000, seed=1), random_dag(2000, 9000, seed=2),
                                   random_dag(500, 1000, seed=3, net_fraction=0.5, vc_fraction=0.2),
                                   layered_dag(30, 40, fanin=3, seed=4)],
                         ids=["random-3000", "random-2000-dense", "random-nets-vc", "layered"])
@pytest.mark.parametrize("config", [SorterConfig(), SorterConfig(key1_rules=("ii", "iii")),
                                    SorterConfig(vc_delta=0.5, shared_net_min_fanout=3),
                                    SorterConfig(seed_policy="max_bandwidth_output")],
                         ids=["default", "nets-only", "vc-half", "sink-seed"])
def test_kernel_equals_generic_path_on_generated_graphs(graph, config):
    fast, generic = sort_nodes(graph, config), sort_nodes(graph, _traced(config))
    assert fast.order == generic.order
    assert fast.seeds == generic.seeds


def test_kernel_equals_reference_on_a_generated_graph():
    graph = random_dag(300, 700, seed=5, net_fraction=0.3, vc_fraction=0.05)
    assert sort_nodes(graph).order == reference_sort(graph).order


def test_kernel_entries_past_int64(monkeypatch):
    """Entries too large for int64 (10^6 nodes and many bandwidths) are Python ints."""
    graph = random_dag(400, 900, seed=6)
    expected = sort_nodes(graph).order
    monkeypatch.setattr(priority_sort, "INT64_ENTRIES_BELOW", 0)
    assert sort_nodes(graph).order == expected
    assert sort_nodes(fig9_graph()).order == FIG9_ORDER
