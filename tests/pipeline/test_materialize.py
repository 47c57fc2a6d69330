"""Stage buffers built as units: each sink of a shared chain gets its own depth."""

from model.graph import Edge, Graph, Node
from formulations.buffers import materialize_buffers
from sim.backpressure import steady_state_throughput


def test_sinks_of_one_net_tap_the_chain_at_their_own_depth():
    """s1 needs one buffer, s2 three, on one net: hanging both after the third unit (the old
    build) unbalances s1's join again; tapping at 1 and 3 keeps the balanced rate."""
    g = Graph("g", [Node(x) for x in ["a", "m", "q1", "q2", "q3", "s1", "s2"]],
              [Edge("a", "s1", net="n"), Edge("a", "s2", net="n"),
               Edge("a", "m"), Edge("m", "s1"),
               Edge("a", "q1"), Edge("q1", "q2"), Edge("q2", "q3"), Edge("q3", "s2")])
    assert steady_state_throughput(g) < 1.0
    built, chains = materialize_buffers(g, {0: 1, 1: 3})
    assert len(chains[0]) == 2 and len(chains[1]) == 4     # 1 and 3 units on the way
    assert sum(n.op == "stage buffer" for n in built.nodes) == 3    # one shared chain
    assert steady_state_throughput(built) == 1.0
    out_of_first = {built.edges[i].net for i in built.out_edges("buf[a->n].0")}
    assert len(out_of_first) == 1      # the next unit and s1 read one net
