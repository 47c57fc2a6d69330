"""sim.cgra: a legal mapping executes; every kind of wrong mapping is caught by its rule."""

from __future__ import annotations

import pytest

from hardware import CgraSpec, load_hardware
from model.graph import Edge, Graph, Node
from sim.cgra import check_cgra

SPEC = load_hardware("cgra4x4")


def graph() -> Graph:
    return Graph("acc", [Node("a", op="LOAD"), Node("b", op="MUL"), Node("c", op="ADD")],
                 [Edge("a", "b"), Edge("b", "c"), Edge("c", "c", distance=1)])


def good() -> tuple[dict, list]:
    """II 1: a on (0,0) at 0, b on (0,1) at 2, c on (1,1) at 4; c's value waits a cycle."""
    placement = {"a": {"pe": [0, 0], "cycle": 0}, "b": {"pe": [0, 1], "cycle": 2},
                 "c": {"pe": [1, 1], "cycle": 4}}
    routes = [{"src": "a", "dst": "b", "distance": 0,
               "steps": [{"pe": [0, 0], "cycle": 1}, {"pe": [0, 1], "cycle": 2}]},
              {"src": "b", "dst": "c", "distance": 0,
               "steps": [{"pe": [0, 1], "cycle": 3}, {"pe": [1, 1], "cycle": 4}]},
              {"src": "c", "dst": "c", "distance": 1, "steps": [{"pe": [1, 1], "cycle": 5}]}]
    return placement, routes


def test_a_legal_mapping_executes_every_iteration():
    placement, routes = good()
    report = check_cgra(graph(), SPEC, placement, 1, routes)
    assert report.ok, report.violations
    assert report.iterations >= 3 and report.fired == 3 * report.iterations
    assert report.length == 5 and report.max_registers == 2   # b (i + 1) and c (i) in (1,1)


def test_slot_conflict():
    placement, routes = good()
    placement["c"] = {"pe": [0, 1], "cycle": 4}       # b's PE, same slot at II 1
    assert "C1 slot" in check_cgra(graph(), SPEC, placement, 1, routes).rules_broken


def test_route_that_skips_a_hop():
    placement, routes = good()
    routes[1]["steps"][1]["pe"] = [2, 1]               # (0,1) -> (2,1) is two hops
    assert "C4 route" in check_cgra(graph(), SPEC, placement, 1, routes).rules_broken


def test_operand_read_before_it_arrives():
    placement, routes = good()
    placement["c"]["cycle"] = 3                          # b's value reaches (1,1) at cycle 4
    report = check_cgra(graph(), SPEC, placement, 1, routes)
    assert not report.ok and "C4 route" in report.rules_broken


def test_loop_carried_value_from_the_wrong_iteration():
    """The recurrence's value is routed as if the distance were 2: the route ends a cycle
    late, so iteration i would read iteration i - 2's value."""
    placement, routes = good()
    routes[2]["steps"].append({"pe": [1, 1], "cycle": 6})
    report = check_cgra(graph(), SPEC, placement, 1, routes)
    assert not report.ok and "C4 route" in report.rules_broken


def test_register_overflow():
    placement, routes = good()
    one = CgraSpec(name="one", rows=4, cols=4, max_ii=8, registers=1)
    # b's value waits in (0,1) for a cycle while c's value passes: with II 1 both are there
    placement["c"] = {"pe": [0, 2], "cycle": 5}
    routes[1]["steps"] = [{"pe": [0, 1], "cycle": 3}, {"pe": [0, 1], "cycle": 4},
                          {"pe": [0, 2], "cycle": 5}]
    routes[2]["steps"] = [{"pe": [0, 2], "cycle": 6}]
    assert check_cgra(graph(), SPEC, placement, 1, routes).ok
    tight = CgraSpec(name="tight", rows=4, cols=4, max_ii=8, registers=1)
    assert "C5 registers" in check_cgra(graph(), tight, placement, 1, routes).rules_broken
    assert one.registers == 1


def test_link_carries_two_values():
    """a's value crosses (0,0)->(0,1) at cycle 1, b's at cycle 2: legal at II 2 (slots 1 and
    0), two values on one link in the same slot at II 1."""
    g = Graph("two", [Node("a"), Node("b"), Node("c"), Node("d")],
              [Edge("a", "c"), Edge("b", "d")])
    placement = {"a": {"pe": [0, 0], "cycle": 0}, "b": {"pe": [1, 0], "cycle": 0},
                 "c": {"pe": [0, 1], "cycle": 2}, "d": {"pe": [1, 1], "cycle": 4}}
    routes = [{"src": "a", "dst": "c", "distance": 0,
               "steps": [{"pe": [0, 0], "cycle": 1}, {"pe": [0, 1], "cycle": 2}]},
              {"src": "b", "dst": "d", "distance": 0,
               "steps": [{"pe": [1, 0], "cycle": 1}, {"pe": [0, 0], "cycle": 2},
                         {"pe": [0, 1], "cycle": 3}, {"pe": [1, 1], "cycle": 4}]}]
    assert check_cgra(g, SPEC, placement, 2, routes).ok
    report = check_cgra(g, SPEC, placement, 1, routes)
    assert report.rules_broken == ["C6 links"]


def test_memory_operation_off_the_memory_columns():
    placement, routes = good()
    hycube = load_hardware("hycube4x4")                  # memory on columns 0 and 3
    placement["a"] = {"pe": [1, 1], "cycle": 0}
    routes[0]["steps"] = [{"pe": [1, 1], "cycle": 1}, {"pe": [0, 1], "cycle": 2}]
    assert "C2 memory" in check_cgra(graph(), hycube, placement, 1, routes).rules_broken


@pytest.mark.parametrize("bad", [{"pe": [4, 0], "cycle": 0}, {"pe": [0], "cycle": 0},
                                 {"pe": [0, 0], "cycle": "0"}, None])
def test_malformed_placement(bad):
    placement, routes = good()
    placement["a"] = bad
    assert "P0 placement" in check_cgra(graph(), SPEC, placement, 1, routes).rules_broken


def test_missing_route_and_ii_above_max():
    placement, routes = good()
    assert "C4 route" in check_cgra(graph(), SPEC, placement, 1, routes[:2]).rules_broken
    assert "P0 placement" in check_cgra(graph(), SPEC, placement, 99, routes).rules_broken
