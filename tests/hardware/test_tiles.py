"""Link graphs of the Streaming Engine and of the generic CGRA."""

import pytest

from hardware import build_tile_graph, load_hardware, spec_from_dict, spec_to_dict


def test_se16_links():
    se = load_hardware("se16")
    g = build_tile_graph(se)
    assert list(g.nodes) == [f"T{t}" for t in range(16)]
    for a, b, d in g.edges(data=True):
        ta, tb = int(a[1:]), int(b[1:])
        assert abs(ta - tb) in (1, 2) and d["latency"] == abs(ta - tb)
        assert d["id"] == f"{a}->{b}" and se.link_latency(ta, tb) == d["latency"]
    assert sorted(g.successors("T0")) == ["T1", "T2"]
    assert sorted(g.successors("T7")) == ["T5", "T6", "T8", "T9"]
    assert g.number_of_edges() == 2 * (15 + 14)


def test_cgra_mesh_and_diagonal():
    mesh = build_tile_graph(load_hardware("cgra4x4"))
    assert mesh.number_of_nodes() == 16
    assert mesh.number_of_edges() == 2 * (2 * 4 * 3)
    assert all(d["latency"] == 1 for _, _, d in mesh.edges(data=True))
    diag_spec = spec_from_dict({**spec_to_dict(load_hardware("cgra4x4")), "neighbours": "diagonal"})
    diag = build_tile_graph(diag_spec)
    assert sorted(diag.successors("PE0_0")) == ["PE0_1", "PE1_0", "PE1_1"]
    assert len(list(diag.successors("PE1_1"))) == 8


def test_rdu_is_not_a_tile_target():
    with pytest.raises(TypeError):
        build_tile_graph(load_hardware("tiny"))
