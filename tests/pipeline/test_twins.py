"""Twin sections: sections of one shape are compiled once, each twin's answer renamed and
checked again; a twin the checker refuses is compiled on its own."""

from __future__ import annotations

import pipeline.rdu.levels as levels
from hardware import load_hardware
from model.graph import Edge, Graph, Node
from pipeline.flow import map_graph
from pipeline.options import RunOptions
from pipeline.rdu.twins import renaming, section_shape, twins_of
from sim.check import check_section


def _chain(nodes: int) -> Graph:
    ids = [f"c{k}" for k in range(nodes)]
    return Graph("chain", [Node(i, op="add", unit="pcu") for i in ids],
                 [Edge(a, b) for a, b in zip(ids, ids[1:])])


def test_names_and_nets_do_not_make_a_shape_but_everything_else_does():
    a = Graph("a", [Node("x", unit="pcu", attrs={"name": "x"}), Node("y", unit="pmu")],
              [Edge("x", "y", net="n1", bytes=8)])
    b = Graph("b", [Node("u", unit="pcu", attrs={"name": "u"}), Node("v", unit="pmu")],
              [Edge("u", "v", net="other", bytes=8)])
    wider = Graph("b", [Node("u", unit="pcu"), Node("v", unit="pmu")],
                  [Edge("u", "v", net="other", bytes=16)])
    assert section_shape(a) == section_shape(b) != section_shape(wider)
    assert renaming(a, b) == {"x": "u", "y": "v"}
    assert twins_of([a, None, wider, b]) == {3: 0}


def test_a_long_chain_compiles_each_shape_once_and_checks_every_twin():
    graph = _chain(60)
    mapping = map_graph(graph, load_hardware("tiny"), RunOptions(time_limit=30, work=4))
    assert mapping.status == "mapped" and mapping.metrics["sections"] >= 5
    twins = [s for s in mapping.stages if "twin_of" in s and s["stage"] == "placement"]
    assert mapping.metrics["twin_sections"] == len(twins) >= 3
    sites = {s["id"]: [mapping.placement[v]["site"] for v in s["nodes"]]
             for s in mapping.sections}
    for twin in twins:                            # the first's sites, position by position
        assert sites[twin["section"]] == sites[twin["twin_of"]]
    assert mapping.run["cut_short"] == 0


def test_a_twin_the_checker_refuses_is_compiled_on_its_own(monkeypatch):
    refused = []

    def refuse_twins(graph, fabric, placement, paths):
        report = check_section(graph, fabric, placement, paths)
        refused.append(graph.name)
        report.violations.append("refused for the test")
        return report
    monkeypatch.setattr(levels, "check_section", refuse_twins)
    mapping = map_graph(_chain(60), load_hardware("tiny"), RunOptions(time_limit=30, work=4))
    assert mapping.status == "mapped" and refused
    assert mapping.metrics["twin_sections"] == 0
    assert not any("twin_of" in s for s in mapping.stages if s["stage"] != "buffers")
