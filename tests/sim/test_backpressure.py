"""The back-pressure simulator (digest §5.2) and the balancing checker."""

from __future__ import annotations

from pathlib import Path

import pytest

from model.graph import Edge, Graph, Node
from model.graphjson import read_graph
from sim.backpressure import (check_balancing, completion_times, simulate,
                              steady_state_throughput)


def diamond(long: int, short: int) -> Graph:
    """Fork F into a chain of ``long`` depth-1 buffers and one of ``short``, joining at J."""
    nodes, edges = [Node("F"), Node("J")], []
    for name, length in (("p", long), ("q", short)):
        prev = "F"
        for k in range(length - 1):
            nodes.append(Node(f"{name}{k}"))
            edges.append(Edge(prev, f"{name}{k}"))
            prev = f"{name}{k}"
        edges.append(Edge(prev, "J"))
    return Graph(f"d{long}{short}", nodes, edges)


def fig11() -> Graph:
    """FIG. 11 of source 001 (the worked example shipped in examples/)."""
    return read_graph(Path(__file__).resolve().parents[2] / "examples" / "buffers_fig11.json")


def test_fig11_unbalanced_batches_finish_at_3_5_7_9():
    assert completion_times(fig11(), "S2", 4) == [3, 5, 7, 9]


def test_fig11_balanced_batches_finish_at_3_4_5_6():
    assert completion_times(fig11(), "S2", 4, depths={2: 2}) == [3, 4, 5, 6]
    assert completion_times(fig11(), "S2", 4, inserted={2: 1}) == [3, 4, 5, 6]


@pytest.mark.parametrize("long,short,rate", [(2, 1, 1 / 2), (3, 1, 1 / 3), (3, 2, 2 / 3),
                                             (4, 2, 1 / 2), (5, 3, 3 / 5), (5, 5, 1.0)])
def test_steady_state_rate_is_short_over_long(long, short, rate):
    assert steady_state_throughput(diamond(long, short)) == pytest.approx(rate)


def test_shared_buffer_feeding_two_joins():
    g = Graph("fig14", [Node("L"), Node("J1"), Node("J2")],
              [Edge("L", "J1", depth=5, net="b1"), Edge("L", "J1", depth=3, net="b2"),
               Edge("L", "J2", depth=3, net="b2"), Edge("L", "J2", depth=4, net="b3")])
    assert steady_state_throughput(g) < 1.0
    assert steady_state_throughput(g, depths={1: 5, 2: 5, 3: 5}) == 1.0
    assert steady_state_throughput(g, depths={1: 4, 2: 4}, inserted={1: 1}) == 1.0
    assert steady_state_throughput(g, depths={1: 5, 2: 5}) < 1.0  # FIG. 12's 5/5/4


def test_independent_loads_do_not_throttle():
    g = Graph("loads", [Node("L1"), Node("L2"), Node("J")],
              [Edge("L1", "J", depth=5), Edge("L2", "J", depth=3)])
    assert steady_state_throughput(g) == 1.0
    assert simulate(g, loads={"L2": 2}, steps=8).completions["J"][0] == 6


def test_nets_must_share_one_depth():
    g = Graph("net", [Node("a"), Node("b"), Node("c")],
              [Edge("a", "b", net="n"), Edge("a", "c", net="n")])
    with pytest.raises(ValueError, match="one buffer"):
        simulate(g, depths={0: 1, 1: 2})


def _rows(graph, finals, tuned=None, pmus=None):
    tuned = tuned or finals
    rows = {}
    for i, (final, t) in enumerate(zip(finals, tuned)):
        original = graph.edges[i].depth or 1
        rows[i] = {"original_depth": original, "final_depth": final,
                   "depth_added": final - original, "buffer_inserted": final > t,
                   "tuned_depth": t, "inserted_depth": final - t,
                   "buffer_pmus": t if pmus is None else pmus[i], "inserted_pmus": final - t,
                   "pmus": (t if pmus is None else pmus[i]) + final - t}
    return rows


def test_checker_accepts_a_right_answer_and_names_what_is_wrong():
    g = fig11()
    assert check_balancing(g, _rows(g, [1, 1, 2]), depth_per_pmu=1, total_pmus=4) == []
    assert check_balancing(g, _rows(g, [1, 1, 2], tuned=[1, 1, 1]), depth_per_pmu=1) == []
    unbalanced = check_balancing(g, _rows(g, [1, 1, 1]), depth_per_pmu=1)
    assert unbalanced == ["join S2 unbalanced: inputs arrive at S0+1=1, S1+1=2"]
    lowered = _rows(g, [1, 0, 1])
    assert any("depth lowered" in v for v in check_balancing(g, lowered, depth_per_pmu=1))
    wrong_pmus = check_balancing(g, _rows(g, [1, 1, 2], pmus=[1, 1, 1]), depth_per_pmu=1)
    assert any("needs 2 PMU(s)" in v for v in wrong_pmus)
    assert any("PMU total" in v for v in check_balancing(g, _rows(g, [1, 1, 2]),
                                                           depth_per_pmu=1, total_pmus=9))
    assert check_balancing(g, {}, depth_per_pmu=1)[0].startswith("no buffer row")


def test_checker_uses_load_times_and_pmu_capacity():
    g = Graph("loads", [Node("L1"), Node("L2"), Node("J")],
              [Edge("L1", "J", depth=5, bytes=64), Edge("L2", "J", depth=3, bytes=64)])
    rows = _rows(g, [5, 3], pmus=[1, 1])
    assert check_balancing(g, rows, {"L2": 2}, depth_per_pmu=8) == []
    assert check_balancing(g, rows, depth_per_pmu=8)[0].startswith("join J unbalanced")

    class Spec:
        pmu_bytes = 256  # 4 samples of 64 bytes per PMU
    assert any("needs 2 PMU(s)" in v for v in check_balancing(g, rows, {"L2": 2}, spec=Spec()))
