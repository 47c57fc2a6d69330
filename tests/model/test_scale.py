"""The front end at scale (issue 18 item 6): same graphs and cuts as before, new helpers.

The fingerprints below were taken on the code before the change (commit 47497b1):
reading, validating, the nets, the topological orders and the greedy cut of a
generated 2,000-node graph must not change. The old quadratic greedy order and
cut are kept here as references for random graphs with categories, mixed
demands and separated pairs.
"""

from __future__ import annotations

import bisect
import dataclasses
import gc
import hashlib
import json
import pickle
import random

import networkx as nx
import numpy as np
import pytest

from benchmarks.generators import random_dag
from formulations.sections.greedy import (ReadyNodes, category_topological_order, greedy_cut,
                                          greedy_sections)
from formulations.sections.problem import Capacity, Section, SectionError, unit_demand
from hardware.errors import InputError
from hardware.fields import parse_json
from model.graph import (PEEL_MIN, SHARED_EMPTY, Edge, Graph, Node, is_acyclic, ordered_kahn,
                         successor_lists)
from model.graphjson import (FREEZE_ENTRIES, gc_paused, graph_json_text, is_plain, parse_graph,
                             parse_graph_bytes, quick_json, write_graph)
from model.importers import load_graph

CAP = Capacity(pcu=40, pmu=40, total=64, agcu=4)

#: Taken before the change (PYTHONPATH=<tree at 47497b1>), see the module docstring.
BEFORE = {"nodes": "8748c54344ff5f26", "edges": "39320c5c5e7ade20", "nets": "86d72790a8a67112",
          "topo": "4997f37e251d85e2", "category_order": "4997f37e251d85e2",
          "cut": "f2df59f68b1460c1"}


def _fingerprint(value) -> str:
    return hashlib.sha256(json.dumps(value, sort_keys=True, default=list).encode()).hexdigest()[:16]


def test_a_generated_graph_loads_and_cuts_as_before(tmp_path):
    path = tmp_path / "g.json"
    write_graph(random_dag(2000, 4000, seed=0), path)
    g = load_graph(path)
    # fields added after the fingerprint (flops) are left out while unset
    nodes = [{k: v for k, v in dataclasses.asdict(n).items() if not (k == "flops" and v is None)}
             for n in g.nodes]
    now = {"nodes": _fingerprint(nodes),
           "edges": _fingerprint([dataclasses.asdict(e) for e in g.edges]),
           "nets": _fingerprint([(n.id, n.driver, n.sinks, n.edges) for n in g.nets]),
           "topo": _fingerprint(g.topological_order()),
           "category_order": _fingerprint(category_topological_order(g)),
           "cut": _fingerprint([s.nodes for s in greedy_cut(g, CAP)])}
    assert now == BEFORE


def test_the_quick_and_the_full_path_read_the_same_graph(tmp_path):
    graph = random_dag(500, 1000, seed=3)
    graph.nodes[0].attrs["state_bytes"] = 7          # entries the quick path leaves to the
    graph.edges[0].extra["note"] = {"deep": [1.5]}    # careful parser
    raw = graph_json_text(graph).encode()
    quick = parse_graph_bytes(raw, "g.json", "g")
    full = parse_graph(parse_json(raw, "g.json"), "g.json", "g")
    assert quick == full
    assert [dataclasses.asdict(e) for e in quick.edges] == \
        [dataclasses.asdict(e) for e in graph.edges]


def test_bulk_read_entries_share_one_empty_attrs_that_refuses_changes(tmp_path):
    path = tmp_path / "g.json"
    write_graph(random_dag(300, 600, seed=1), path)
    g = load_graph(path)
    assert all(n.attrs is SHARED_EMPTY and n.extra is SHARED_EMPTY for n in g.nodes)
    assert all(e.attrs is SHARED_EMPTY for e in g.edges)
    with pytest.raises(TypeError, match="give the node or edge its own dict"):
        g.nodes[0].attrs["state_bytes"] = 1
    with pytest.raises(TypeError):
        g.edges[0].extra.update(note=1)
    assert SHARED_EMPTY == {} and not SHARED_EMPTY
    g.nodes[0].attrs = {"state_bytes": 1}               # its own dict: then it may change
    assert g.nodes[1].attrs == {}
    copied = pickle.loads(pickle.dumps(g))              # Dask workers get pickled sections
    assert copied.edges[5].attrs is SHARED_EMPTY and copied == g


# -- the same messages on the quick path --------------------------------------------------
BAD = {
    "NaN in attrs": '{"version": 1, "nodes": [{"id": "a", "attrs": {"x": NaN}}], "edges": []}',
    "overflow in bytes": '{"version": 1, "nodes": [{"id": "a"}, {"id": "b"}], '
                         '"edges": [{"src": "a", "dst": "b", "bytes": 1e400}]}',
    "overflow in extra": '{"version": 1, "nodes": [{"id": "a", "w": [1e999]}], "edges": []}',
    "lone surrogate id": '{"version": 1, "nodes": [{"id": "\\ud800"}], "edges": []}',
    "deep extra": '{"version": 1, "nodes": [{"id": "a", "x": ' + "[" * 70 + "]" * 70 + "}], "
                  '"edges": []}',
    "deep top level": '{"version": 1, "x": ' + "[" * 70 + "]" * 70 + ', "nodes": [], "edges": []}',
    "dangling edge": '{"version": 1, "nodes": [{"id": "a"}], "edges": [{"src": "a", "dst": "b"}]}',
    "duplicate id": '{"version": 1, "nodes": [{"id": "a"}, {"id": "b"}, {"id": "a"}], "edges": []}',
    "two net sources": '{"version": 1, "nodes": [{"id": "a"}, {"id": "b"}, {"id": "c"}], '
                       '"edges": [{"src": "a", "dst": "c", "net": "n"}, '
                       '{"src": "b", "dst": "c", "net": "n"}, {"src": "a", "dst": "x"}]}',
    "cycle": '{"version": 1, "nodes": [{"id": "a"}, {"id": "b"}], '
             '"edges": [{"src": "a", "dst": "b"}, {"src": "b", "dst": "a"}]}',
    "bad bandwidth": '{"version": 1, "nodes": [{"id": "a"}, {"id": "b"}], '
                     '"edges": [{"src": "a", "dst": "b", "bandwidth": 0}]}',
    "bool depth": '{"version": 1, "nodes": [{"id": "a"}, {"id": "b"}], '
                  '"edges": [{"src": "a", "dst": "b", "depth": true}]}',
    "not JSON": '{"version": 1, "nodes": [',
    "no nodes": '{"version": 1, "nodes": [], "edges": []}',
}


@pytest.mark.parametrize("name", sorted(BAD))
def test_the_quick_path_gives_the_full_paths_message(name):
    raw = BAD[name].encode()
    with pytest.raises(InputError) as full:
        parse_graph(parse_json(raw, "g.json", "see x"), "g.json", "g")
    with pytest.raises(InputError) as quick:
        parse_graph_bytes(raw, "g.json", "g", "see x")
    assert str(quick.value) == str(full.value)


def test_a_deep_but_allowed_value_takes_the_full_path_and_loads():
    raw = ('{"version": 1, "nodes": [{"id": "a", "x": ' + "[" * 60 + "]" * 60 + "}], "
           '"edges": []}').encode()
    assert parse_graph_bytes(raw, "g.json", "g").nodes[0].extra["x"] == \
        parse_graph(parse_json(raw, "g.json"), "g.json", "g").nodes[0].extra["x"]


def test_quick_json():
    assert quick_json(b'{"a": [1, 2.5, "\\u00e9"]}') == {"a": [1, 2.5, "\u00e9"]}
    assert quick_json(b'\xef\xbb\xbf{"a": 1}') == {"a": 1}       # a byte-order mark
    for raw in (b"[NaN]", b"[-Infinity]", rb'["\ud800"]', rb'["\uDBFF\uDC00"]', b"[", b"\xff"):
        assert quick_json(raw) is None


def test_is_plain():
    assert is_plain({"a": [1, {"b": "x"}]})
    assert not is_plain({"a": [float("nan")]})
    assert not is_plain(["\ud800"]) and not is_plain({"\ud800": 1})
    assert is_plain([[]], depth=62) and not is_plain([[]], depth=63)


def test_a_big_graph_read_is_kept_out_of_the_cyclic_collector(tmp_path):
    """Its objects live for the run: full collections must not walk them again."""
    path = tmp_path / "big.json"
    n = FREEZE_ENTRIES // 3 + 1
    write_graph(random_dag(n, 2 * n, seed=0), path)
    small = tmp_path / "small.json"
    write_graph(random_dag(50, 100, seed=0), small)
    gc.unfreeze()
    try:
        load_graph(small)
        assert gc.get_freeze_count() == 0
        graph = load_graph(path)
        assert gc.get_freeze_count() >= len(graph.nodes) + len(graph.edges)
    finally:
        gc.unfreeze()


def test_gc_paused_restores_the_collector():
    assert gc.isenabled()
    with gc_paused():
        assert not gc.isenabled()
    assert gc.isenabled()


def test_graph_json_text_is_json_of_graph_to_dict():
    graph = random_dag(50, 100, seed=1)
    graph.attrs["k"] = [1, 2]
    text = graph_json_text(graph)
    assert parse_graph(json.loads(text), "g.json") == graph
    assert len(text.splitlines()) == 50 + 100 + 9     # one line per node and edge


# -- graph helpers -------------------------------------------------------------------------
def test_ordered_kahn_matches_networkx_lexicographic_order():
    rng = random.Random(5)
    for _ in range(20):
        n = rng.randint(1, 30)
        arcs = [(a, b) for a, b in ((rng.randrange(n), rng.randrange(n)) for _ in range(2 * n))
                if a < b]
        g = nx.DiGraph()
        g.add_nodes_from(range(n))
        g.add_edges_from(arcs)
        src = np.array([a for a, _ in arcs], dtype=np.int64)
        dst = np.array([b for _, b in arcs], dtype=np.int64)
        assert ordered_kahn(n, src, dst) == list(nx.lexicographical_topological_sort(g))


@pytest.mark.parametrize("shape", ["wide", "deep", "mixed"])
def test_is_acyclic_agrees_with_networkx_with_and_without_a_cycle(shape):
    """Wide graphs peel in array rounds, deep ones one index at a time; a back arc
    anywhere (early, late, in a wide round) must be seen either way."""
    rng = random.Random(len(shape))
    n = 40 * PEEL_MIN
    width = {"wide": n // 4, "deep": 1, "mixed": PEEL_MIN}[shape]
    arcs = [(a, b) for a, b in ((rng.randrange(n), rng.randrange(n)) for _ in range(3 * n))
            if a // width < b // width] + [(k, k + width) for k in range(n - width)]
    for back in [None, arcs[0], arcs[len(arcs) // 2], arcs[-1]]:
        edges = arcs + ([(back[1], back[0])] if back else [])
        order = rng.sample(range(n), n)          # not in file order: no fast path
        src = np.array([order[a] for a, _ in edges], dtype=np.int64)
        dst = np.array([order[b] for _, b in edges], dtype=np.int64)
        g = nx.DiGraph(list(zip(src.tolist(), dst.tolist())))
        assert is_acyclic(n, src, dst) == nx.is_directed_acyclic_graph(g) == (back is None)


def test_with_units_copies_every_other_field_and_with_nodes_keeps_the_index():
    values = {f.name: v for f, v in zip(dataclasses.fields(Node), (
        "n", "op", "pmu", 1, 2, 3, "cat", ("m",), True, {"a": 1}, {"b": 2}, 4.0))}
    node = Node(**values)
    assert all(getattr(node, k) == v for k, v in values.items())   # every field set apart
    assert node.with_units(5.0, 6.0) == dataclasses.replace(node, pcu=5.0, pmu=6.0)
    graph = random_dag(100, 200, seed=3)
    ends = graph.edge_ends
    copy = graph.with_nodes([n.with_units(1.0, 0.0) for n in graph.nodes])
    assert copy.edge_ends is ends and copy.index_of is graph.index_of
    assert copy.edges == graph.edges and copy.topological_order() == graph.topological_order()
    fresh = random_dag(100, 200, seed=3).with_nodes(list(graph.nodes))   # nothing worked out
    assert "edge_ends" not in fresh.__dict__ and fresh.edge_ends[0].tolist() == ends[0].tolist()


def test_ordered_kahn_leaves_out_a_cycle():
    assert ordered_kahn(4, np.array([0, 1, 2]), np.array([1, 2, 1])) == [0, 3]


def test_successor_lists():
    starts, targets = successor_lists(3, np.array([1, 0, 1], dtype=np.int64),
                                      np.array([2, 1, 0], dtype=np.int64))
    assert [targets[starts[k]:starts[k + 1]] for k in range(3)] == [[1], [2, 0], []]


def test_a_cycle_still_raises_networkx_unfeasible():
    g = Graph("g", [Node("a"), Node("b")], [Edge("a", "b"), Edge("b", "a")])
    with pytest.raises(nx.NetworkXUnfeasible):
        g.topological_order()
    loop = Graph("g", [Node("a"), Node("b")], [Edge("a", "b"), Edge("b", "a", distance=1)])
    assert loop.topological_order() == ["a", "b"]


def test_subgraph_and_induced_edges_match_the_whole_scan():
    g = random_dag(300, 700, seed=2)
    keep = set(g.node_ids[::3]) | {"not a node"}
    sub = g.subgraph(keep)
    assert [n.id for n in sub.nodes] == [n.id for n in g.nodes if n.id in keep]
    assert sub.edges == [e for e in g.edges if e.src in keep and e.dst in keep]
    assert g.induced_edges(list(keep)) == [i for i, e in enumerate(g.edges)
                                           if e.src in keep and e.dst in keep]


def test_edge_ends_raise_key_error_on_a_dangling_edge():
    g = Graph("g", [Node("a")], [Edge("a", "b")])
    with pytest.raises(KeyError):
        g.edge_ends
    with pytest.raises(KeyError):
        Graph("g", [], [Edge("a", "b")]).edge_ends


def _by_value(graph: Graph) -> list[list[int]]:
    index = {node.id: k for k, node in enumerate(graph.nodes)}
    return [[index[getattr(e, end)] for e in graph.edges] for end in ("src", "dst")]


@pytest.mark.parametrize("shared", [1.0, 0.7, 0.2, 0.0])
def test_edge_ends_match_ids_by_identity_then_by_value(shared):
    """Ends holding the node's own id object are matched by address, the rest by value."""
    rng = random.Random(7)
    ids = [f"n{k}" for k in range(300)]
    rng.shuffle(ids)
    edges = []
    for _ in range(900):
        src, dst = rng.choice(ids), rng.choice(ids)
        if rng.random() >= shared:  # an equal string that is another object
            src, dst = "".join(list(src)), "".join(list(dst))
        edges.append(Edge(src, dst))
    graph = Graph("g", [Node(v) for v in ids], edges)
    assert [end.tolist() for end in graph.edge_ends] == _by_value(graph)
    assert all(end.dtype == np.int64 for end in graph.edge_ends)


def test_edge_ends_with_duplicate_ids_take_the_last_node():
    graph = Graph("g", [Node("a"), Node("b"), Node("a")], [Edge("a", "b"), Edge("b", "a")])
    assert [end.tolist() for end in graph.edge_ends] == [[2, 1], [1, 2]]


# -- the greedy cut against the old quadratic one ------------------------------------------
def _old_category_order(graph: Graph) -> list[str]:
    position = {n: k for k, n in enumerate(graph.node_ids)}
    dag = nx.DiGraph()
    dag.add_nodes_from(graph.node_ids)
    dag.add_edges_from((e.src, e.dst) for e in graph.edges if not e.loop_carried)
    indegree = {n: dag.in_degree(n) for n in dag}
    ready, order, category = {n for n, d in indegree.items() if d == 0}, [], None
    while ready:
        same = [n for n in ready if graph.node(n).category == category]
        pick = min(same or ready, key=position.__getitem__)
        ready.remove(pick)
        order.append(pick)
        category = graph.node(pick).category
        for succ in dag.successors(pick):
            indegree[succ] -= 1
            if indegree[succ] == 0:
                ready.add(succ)
    return order


def _old_priority(graph: Graph) -> dict[str, float]:
    position = {n: k for k, n in enumerate(_old_category_order(graph))}
    for node_id in graph.node_ids:
        if not any(not graph.edges[i].loop_carried for i in graph.in_edges(node_id)):
            consumers = [position[s] for s in graph.successors(node_id) if s != node_id]
            if consumers:
                position[node_id] = min(consumers) - 0.5
    return position


def _old_first_fitting(graph, ready, current, cap, apart):
    members = set(current.nodes)
    for same_category_pass in (True, False):
        if not same_category_pass and current.nodes:
            return None
        for node_id in ready:
            if same_category_pass and current.nodes and \
                    graph.node(node_id).category != current.category:
                continue
            if apart.get(node_id, set()) & members:
                continue
            if current.fits_with(unit_demand(graph.node(node_id)), cap):
                return node_id
    return None


def _old_greedy(graph: Graph, cap: Capacity, separate) -> list[list[str]]:
    position, apart = _old_priority(graph), {}
    for a, b in separate:
        apart.setdefault(b, set()).add(a)
    dag = nx.DiGraph()
    dag.add_nodes_from(graph.node_ids)
    dag.add_edges_from((e.src, e.dst) for e in graph.edges if not e.loop_carried)
    waiting = {n: dag.in_degree(n) for n in dag}
    ready = sorted((n for n, d in waiting.items() if d == 0), key=position.__getitem__)
    sections = [Section(0)]
    while ready:
        current = sections[-1]
        pick = _old_first_fitting(graph, ready, current, cap, apart)
        if pick is None:
            sections.append(Section(len(sections)))
            continue
        ready.remove(pick)
        current.category = graph.node(pick).category
        current.add(pick, unit_demand(graph.node(pick)))
        for succ in dag.successors(pick):
            waiting[succ] -= 1
            if waiting[succ] == 0:
                bisect.insort(ready, succ, key=position.__getitem__)
    return [s.nodes for s in sections]


def _random_graph(rng: random.Random) -> Graph:
    n = rng.randint(2, 60)
    nodes = [Node(f"v{k}", unit=rng.choice(["pcu", "pmu", "any"]),
                  category=rng.choice([None, "forward", "backward"]),
                  pcu=rng.choice([None, 1, 2]), pmu=rng.choice([None, 0, 1, 3]))
             for k in range(n)]
    edges = []
    for _ in range(rng.randint(0, 3 * n)):
        a, b = sorted(rng.sample(range(n), 2))
        loop = rng.random() < 0.15
        edges.append(Edge(f"v{b}", f"v{a}", distance=1) if loop else Edge(f"v{a}", f"v{b}"))
    return Graph("r", nodes, edges)


def test_greedy_order_and_cut_match_the_old_ones_on_random_graphs():
    rng = random.Random(11)
    cap = Capacity(pcu=4, pmu=5, total=8, agcu=2)
    for _ in range(150):
        g = _random_graph(rng)
        separate = [tuple(rng.sample(g.node_ids, 2)) for _ in range(rng.randint(0, 3))]
        assert category_topological_order(g) == _old_category_order(g)
        assert [s.nodes for s in greedy_sections(g, cap, {}, separate)] == \
            _old_greedy(g, cap, separate)


def test_ready_nodes_take_the_first_fitting_in_priority_order():
    g = Graph("g", [Node("big", pcu=3), Node("a", unit="pcu"), Node("m", unit="pmu")], [])
    ready = ReadyNodes(g, np.array([0.0, 1.0, 2.0]), {})
    for k in range(3):
        ready.push(k)
    section = Section(0)
    section.add("x", {"pcu": 2.0, "pmu": 0.0, "any": 0.0, "agcu": 0.0})
    cap = Capacity(pcu=3, pmu=3, total=6, agcu=0)
    assert ready.pop_first_fitting(section, cap, 1.0) == 1      # "big" no longer fits
    assert ready.pop_first_fitting(section, cap, 1.0) == 2
    assert ready.pop_first_fitting(section, cap, 1.0) is None and len(ready) == 1
    assert ready.first() == 0


def test_a_node_too_big_for_any_section_is_named():
    g = Graph("g", [Node("a", unit="pcu"), Node("huge", pcu=99)], [])
    with pytest.raises(SectionError, match='node "huge" needs 99 PCU'):
        greedy_cut(g, CAP)


def test_the_ends_worked_out_while_reading_are_the_graphs_own(tmp_path):
    """The reader resolves edge ends chunk by chunk; they equal a fresh graph's, also
    across chunk borders and with entries only the careful parser reads."""
    graph = random_dag(40_000, 80_000, seed=5)
    graph.edges[20_000].extra["note"] = "careful"
    write_graph(graph, tmp_path / "g.json")
    loaded = load_graph(tmp_path / "g.json")
    fresh = Graph(loaded.name, loaded.nodes, loaded.edges)
    assert loaded.index_of == fresh.index_of
    for kept, computed in zip(loaded.edge_ends, fresh.edge_ends):
        assert kept.dtype == computed.dtype and np.array_equal(kept, computed)
    assert loaded.topological_order() == fresh.topological_order()


def test_a_file_in_topological_order_keeps_it():
    """The smallest topological order of a file whose edges all point forward is the file's."""
    g = Graph("g", [Node(x) for x in "abcd"], [Edge("a", "c"), Edge("b", "d"), Edge("c", "d")])
    assert g.topological_order() == ["a", "b", "c", "d"]
    assert ordered_kahn(4, np.array([0, 1, 2]), np.array([2, 3, 3])) == [0, 1, 2, 3]
    assert ordered_kahn(3, np.array([2, 0]), np.array([0, 1])) == [2, 0, 1]
