"""The cycle-by-cycle simulator: FIG. 1 under the DESIGN.md convention, and every rule broken."""

import copy

from hardware import load_hardware
from model.graph import Edge, Graph, Node
from sim.streaming import DISTANCE_PLACEMENT, check_streaming, distance_graph

SE = load_hardware("se16")


def _with(changes, ii=3, graph=None, delays=None):
    placement = copy.deepcopy(DISTANCE_PLACEMENT)
    for node, values in changes.items():
        placement[node].update(values)
    return check_streaming(graph or distance_graph(), SE, placement, ii, delays)


def test_fig1_is_legal_under_the_convention():
    report = _with({})
    assert report.ok, report.violations
    assert DISTANCE_PLACEMENT["0"] == {"tile": 3, "slot": 0, "cycle": 0}
    assert DISTANCE_PLACEMENT["3"] == {"tile": 1, "slot": 1, "cycle": 7}  # 0 + 3 + 2 = 5 <= 7
    assert report.cycles == 18 and report.fired == 21


def test_reach_rejected_beyond_two_tiles():
    report = _with({"3": {"tile": 0, "slot": 1, "cycle": 7}})
    assert "R1 reach" in report.rules_broken


def test_timing_rejected_when_operand_is_late():
    report = _with({"3": {"slot": 1, "cycle": 4}})
    assert "T2 timing" in report.rules_broken


def test_hold_needs_delay_entries():
    report = _with({"3": {"slot": 1, "cycle": 10}, "5": {"cycle": 14}, "6": {"cycle": 18},
                    "2": {"cycle": 12}}, delays={})
    assert "H1 hold" in report.rules_broken
    ok = _with({"3": {"slot": 1, "cycle": 10}, "5": {"cycle": 14}, "6": {"cycle": 18},
                "2": {"cycle": 12}})
    assert ok.ok, ok.violations  # the needed delay entry fits tile 1
    assert ok.delays == {("0", "3", 0): 1, ("4", "5", 0): 1}


def test_slot_collision_and_modulo_rules():
    assert "A3 slot" in _with({"4": {"tile": 3, "slot": 1, "cycle": 4},
                               "0": {"slot": 1, "cycle": 1}}).rules_broken
    assert "P0 placement" in _with({"0": {"slot": 1}}).rules_broken
    assert "P0 placement" in _with({}, ii=7).rules_broken


def test_memory_starts_siblings_operands():
    g = Graph("g", [Node("p"), Node("a", mem_vars=("v",)), Node("b", mem_vars=("v",)),
                    Node("s")], [Edge("p", "a"), Edge("p", "b")])
    placement = {"p": {"tile": 1, "slot": 0, "cycle": 0}, "a": {"tile": 2, "slot": 0, "cycle": 4},
                 "b": {"tile": 2, "slot": 1, "cycle": 5}, "s": {"tile": 1, "slot": 1, "cycle": 1}}
    rules = check_streaming(g, SE, placement, 2).rules_broken
    assert "S1 siblings" in rules and "B1 starts" in rules and "M1 memory" not in rules
    placement["b"] = {"tile": 3, "slot": 1, "cycle": 5}
    rules = check_streaming(g, SE, placement, 2).rules_broken
    assert "M1 memory" in rules and "S1 siblings" not in rules
    g4 = Graph("o", [Node(f"s{i}") for i in range(4)] + [Node("x")],
               [Edge(f"s{i}", "x") for i in range(4)])
    pl = {f"s{i}": {"tile": i, "slot": 0, "cycle": 0} for i in range(4)}
    pl["x"] = {"tile": 2, "slot": 0, "cycle": 6}
    assert "O1 operands" in check_streaming(g4, SE, pl, 1).rules_broken


def test_loop_carried_value_from_previous_iteration():
    g = Graph("acc", [Node("a")], [Edge("a", "a", distance=1)])
    ok = check_streaming(g, SE, {"a": {"tile": 0, "slot": 0, "cycle": 0}}, 3)
    assert ok.ok and ok.total_cycles == 3 + 2 * 3
    bad = check_streaming(g, SE, {"a": {"tile": 0, "slot": 0, "cycle": 0}}, 2)
    assert "T2 timing" in bad.rules_broken
