"""graph.json reading, validation messages, writing and mapping.json."""

import json

import pytest

from model.errors import InputError
from model.graph import Edge, Graph, Node
from model.graphjson import graph_to_dict, parse_graph, read_graph, write_graph
from model.mapping import Mapping, read_mapping, write_mapping


def graph_data(**overrides):
    data = {"version": 1, "name": "g",
            "nodes": [{"id": "A", "unit": "pcu"}, {"id": "B"}, {"id": "C", "unit": "pmu"}],
            "edges": [{"src": "A", "dst": "B", "bandwidth": 0.5, "net": "n1"},
                      {"src": "A", "dst": "C", "net": "n1"},
                      {"src": "B", "dst": "C", "depth": 2}]}
    data.update(overrides)
    return data


def error_of(data, file="graph.json") -> InputError:
    with pytest.raises(InputError) as info:
        parse_graph(data, file=file)
    return info.value


def test_parse_keeps_fields_and_builds_nets():
    g = parse_graph(graph_data())
    assert g.node_ids == ["A", "B", "C"]
    assert g.node("A").unit == "pcu" and g.node("B").unit == "any"
    assert g.edges[0].bandwidth == 0.5 and g.edges[2].depth == 2
    assert [(n.driver, n.sinks) for n in g.nets] == [("A", ("B", "C")), ("B", ("C",))]


def test_unknown_fields_are_kept_and_round_trip(tmp_path):
    data = graph_data()
    data["nodes"][0]["vendor_hint"] = {"x": 1}
    data["edges"][0]["colour"] = "red"
    data["producer"] = "a compiler"
    g = parse_graph(data)
    assert g.node("A").extra == {"vendor_hint": {"x": 1}}
    path = tmp_path / "g.json"
    write_graph(g, path)
    again = read_graph(path)
    assert graph_to_dict(again) == graph_to_dict(g)
    assert json.loads(path.read_text())["producer"] == "a compiler"


def test_dangling_edge_names_the_edge_and_node():
    data = graph_data()
    data["edges"][1]["dst"] = "N7"
    err = error_of(data)
    assert err.where == "edges[1].dst"
    assert 'node "N7" does not exist' in str(err) and "fix:" in str(err)


def test_duplicate_id_names_both_places():
    data = graph_data()
    data["nodes"][2]["id"] = "A"
    err = error_of(data)
    assert err.where == "nodes[2].id" and "nodes[0]" in err.problem


@pytest.mark.parametrize("bandwidth", [0, -0.1, 1.5, "high", True, float("nan")])
def test_bad_bandwidth(bandwidth):
    data = graph_data()
    data["edges"][0]["bandwidth"] = bandwidth
    err = error_of(data)
    assert err.where == "edges[0].bandwidth" and err.fix


def test_non_json_file_names_line(tmp_path):
    path = tmp_path / "broken.json"
    path.write_text('{"version": 1,\n "nodes": [}')
    with pytest.raises(InputError) as info:
        read_graph(path)
    assert str(path) in str(info.value) and "line 2" in info.value.where


def test_missing_file():
    with pytest.raises(InputError, match="file not found"):
        read_graph("/nonexistent/graph.json")


def test_same_iteration_cycle_is_rejected_with_the_cycle():
    data = graph_data()
    data["edges"].append({"src": "C", "dst": "A"})
    err = error_of(data)
    assert "cycle" in err.problem and "A" in err.problem and "distance" in err.fix


def test_loop_carried_cycle_is_allowed():
    data = graph_data()
    data["edges"].append({"src": "C", "dst": "A", "distance": 1})
    g = parse_graph(data)
    assert g.edges[-1].loop_carried
    assert g.topological_order() == ["A", "B", "C"]


@pytest.mark.parametrize("mutate, where", [
    (lambda d: d.update(version=2), "version"),
    (lambda d: d.pop("nodes"), "nodes"),
    (lambda d: d.update(edges={}), "edges"),
    (lambda d: d["nodes"][0].update(unit="gpu"), "nodes[0].unit"),
    (lambda d: d["nodes"][0].pop("id"), "nodes[0].id"),
    (lambda d: d["nodes"][1].update(id=""), "nodes[1].id"),
    (lambda d: d["nodes"][1].update(latency=1.5), "nodes[1].latency"),
    (lambda d: d["edges"][2].update(depth=-1), "edges[2].depth"),
    (lambda d: d["edges"][2].update(distance="1"), "edges[2].distance"),
    (lambda d: d["edges"][0].pop("src"), "edges[0].src"),
    (lambda d: d["edges"][2].update(net="n1"), "edges[2].net"),
    (lambda d: d["nodes"][0].update(mem_vars="x"), "nodes[0].mem_vars"),
])
def test_each_bad_field_is_named(mutate, where):
    data = graph_data()
    mutate(data)
    err = error_of(data, file="my.json")
    assert err.where == where
    assert str(err).startswith(f"my.json: {where}: ")


def test_not_an_object():
    assert error_of([1, 2]).where == ""


def test_mapping_round_trip(tmp_path):
    m = Mapping(graph="g", hardware="tiny", status="mapped", order=["A"],
                placement={"A": {"section": 0, "site": "U0_0", "x": 0.5, "y": 0.5, "unit": "pcu"}})
    write_mapping(m, tmp_path / "mapping.json")
    back = read_mapping(tmp_path / "mapping.json")
    assert back == m
    assert json.loads((tmp_path / "mapping.json").read_text())["version"] == 1


def test_mapping_rejects_other_files(tmp_path):
    path = tmp_path / "x.json"
    path.write_text('{"version": 1, "nodes": []}')
    with pytest.raises(InputError):
        read_mapping(path)


def test_subgraph_keeps_inner_edges_only():
    g = Graph("g", [Node("a"), Node("b"), Node("c")], [Edge("a", "b"), Edge("b", "c")])
    sub = g.subgraph(["a", "b"])
    assert sub.node_ids == ["a", "b"] and [(e.src, e.dst) for e in sub.edges] == [("a", "b")]


# -- keys named twice, control characters in ids ----------------------------------------------
def test_a_key_named_twice_is_refused_by_both_readers(tmp_path):
    """msgspec and the standard library both keep the last value, silently."""
    from model.graphjson import quick_json
    text = '{"version": 1, "nodes": [{"id": "a"}, {"id": "b", "op": "x", "id": "c"}], "edges": []}'
    assert quick_json(text.encode()) is None          # the full check then names it
    path = tmp_path / "g.json"
    path.write_text(text)
    with pytest.raises(InputError, match=r'nodes\[1\]\.id: the key "id" appears twice'):
        read_graph(path)


@pytest.mark.parametrize("text", [
    '{"a": "x:y", "b": {"c": "d:e"}}',                  # ":" in strings
    '{"a": "x\\u003ay", "\\u003a": 1}',                 # escaped ":" in a value and a key
    '{"a": [{"b": 1}, {"b": 2}], "c": {"b": 3}}',       # the same key in different objects
])
def test_no_key_named_twice_keeps_the_quick_reader(text):
    from model.graphjson import quick_json
    assert quick_json(text.encode()) == json.loads(text)


def test_ids_with_colons_still_read_quickly_and_the_same(tmp_path):
    from model.graphjson import quick_json
    data = {"version": 1, "nodes": [{"id": f"layer:{k}", "op": "a:b"} for k in range(50)],
            "edges": [{"src": f"layer:{k}", "dst": f"layer:{k + 1}"} for k in range(49)]}
    path = tmp_path / "g.json"
    path.write_text(json.dumps(data))
    assert quick_json(path.read_bytes()) == data
    assert read_graph(path).node_ids == [f"layer:{k}" for k in range(50)]


@pytest.mark.parametrize("bad", ["a\x00b", "a\tb", "a\nb", "a\x1b[31m", "a\x85b"])
def test_an_id_with_a_control_character_is_refused(bad):
    data = {"version": 1, "nodes": [{"id": "ok"}, {"id": bad}], "edges": []}
    with pytest.raises(InputError, match=r"nodes\[1\]\.id: the id .* holds the control "
                                         r"character U\+00") as err:
        parse_graph(data)
    assert "\n" not in str(err.value) and "\x00" not in str(err.value)


def test_printable_ids_of_any_script_are_kept():
    ids = ["π", "a b", "x\u00a0y", "数据", "<script>", "c|d"]
    g = parse_graph({"version": 1, "nodes": [{"id": i} for i in ids], "edges": []})
    assert g.node_ids == ids
