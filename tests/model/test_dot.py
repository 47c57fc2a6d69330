"""The DOT importer (CGRA-ME / SAT-MapIt data-flow graphs), recognised by content."""

from __future__ import annotations

import pytest

from model.errors import InputError
from model.importers import load_graph

SATMAPIT = """digraph ReverseBits {
{
 compound=true;
0 [color=black, label="0    %rev.09 = phi i32 [ %or, %for.body ], [ 0, %entry ]"];
3 [color=black, label="3    %shl = shl i32 %rev.09, 1"];
5 [color=black, label="5    %or = or i32 %shl, 1"];
0 -> 3
3 -> 5
5 -> 0 [color=red]
20 [color=goldenrod1, label="20 C_0"];
36 [color=purple1, label="36 LiveInArg"];
20 -> 0 [color=goldenrod1]
36 -> 3 [color=purple1]
}
}
"""

CGRAME = """// a CGRA-ME style kernel
digraph G {
  load0[opcode=load];
  mul1[opcode=mul]; add2[opcode=add];
  store3[opcode=store];
  load0->mul1[operand=0];
  mul1->add2[operand=0];
  add2->add2[operand=1, distance=1];
  add2->store3[operand=0];
}
"""


def write(tmp_path, text, name="k.dot"):
    path = tmp_path / name
    path.write_text(text)
    return path


def test_satmapit_dialect(tmp_path):
    g = load_graph(write(tmp_path, SATMAPIT))
    assert [(n.id, n.op) for n in g.nodes] == [("n0", "phi"), ("n3", "shl"), ("n5", "or")]
    assert [(e.src, e.dst, e.distance) for e in g.edges] == [
        ("n0", "n3", 0), ("n3", "n5", 0), ("n5", "n0", 1)]
    assert g.attrs["left_out"] == 2       # the constant and the live-in


def test_cgrame_dialect_and_format_option(tmp_path):
    path = write(tmp_path, CGRAME, "kernel.txt")
    g = load_graph(path, format="dot")
    assert [n.op for n in g.nodes] == ["load", "mul", "add", "store"]
    assert ("add2", "add2", 1) in [(e.src, e.dst, e.distance) for e in g.edges]


def test_unmarked_loop_through_a_phi_is_loop_carried(tmp_path):
    text = 'digraph L { a [opcode=phi]; b [opcode=add]; a -> b; b -> a; }'
    g = load_graph(write(tmp_path, text))
    assert [(e.src, e.dst, e.distance) for e in g.edges] == [("a", "b", 0), ("b", "a", 1)]


def test_bad_dot_is_named(tmp_path):
    with pytest.raises(InputError, match="same-iteration cycle"):
        load_graph(write(tmp_path, "digraph L { a [opcode=add]; b [opcode=add]; a -> b -> a; }"))
    with pytest.raises(InputError, match="line 2"):
        load_graph(write(tmp_path, "digraph L {\n a [opcode=add] junk junk\n}"))
    with pytest.raises(InputError, match="not a DOT file"):
        load_graph(write(tmp_path, '{"version": 1}', "g.json"), format="dot")
