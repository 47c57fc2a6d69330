"""The lenient reader of Morpher loop DFGs and its recognition by content."""

import json

import pytest

from model.errors import InputError
from model.importers import load_graph
from model.importers.morpher import parse_morpher
from tests.conftest import real_graph

NODE = """<Node idx="{idx}" ASAP="0" ALAP="0"BB="b"{const}>
<OP>{op}</OP>
<Inputs>
{inputs}</Inputs>
<Outputs>
{outputs}</Outputs>
</Node>
"""


def _node(idx, op="ADD", inputs=(), outputs=(), const=""):
    return NODE.format(idx=idx, op=op, const=const,
                       inputs="".join(f'\t<Input idx="{i}"/>\n' for i in inputs),
                       outputs="".join(f'\t<Output idx="{o}" nextiter="{n}" type="I1"/>\n'
                                       for o, n in outputs))


def test_recognised_by_content_and_loop_carried(tmp_path):
    text = '<DFG count="2">\n' + _node(1, "LOADB", outputs=[(2, 0)], const='CONST="4"') + \
        _node(2, inputs=[1, 2], outputs=[(2, 1)])
    path = tmp_path / "k.xml"
    path.write_text(text)
    g = load_graph(path)
    assert g.node_ids == ["loadb1", "add2"]
    assert [(e.src, e.dst, e.distance) for e in g.edges] == [("loadb1", "add2", 0),
                                                             ("add2", "add2", 1)]
    assert g.node("loadb1").mem_vars == ("const1",) and g.node("loadb1").attrs["ALAP"] == "0"
    assert load_graph(path, format="morpher").node_ids == g.node_ids


def test_bad_files_name_file_line_and_fix(tmp_path):
    path = tmp_path / "bad.xml"
    path.write_text('<DFG count="1">\n' + _node(1, outputs=[(9, 0)]))
    with pytest.raises(InputError) as err:
        load_graph(path)
    text = str(err.value)
    assert "bad.xml" in text and "line" in text and 'unknown node idx "9"' in text
    path.write_text('<DFG count="1">\n<Node idx="1">\n<OP>ADD</OP>\n')
    with pytest.raises(InputError, match="without </Node>"):
        load_graph(path)
    path.write_text("<html></html>")
    with pytest.raises(InputError, match="no known graph format"):
        load_graph(path)


def test_json_formats_still_work(tmp_path):
    path = tmp_path / "g.json"
    path.write_text(json.dumps({"version": 1, "name": "g", "nodes": [{"id": "a"}], "edges": []}))
    assert load_graph(path).node_ids == ["a"]
    path.write_text("{not json")
    with pytest.raises(InputError, match="not valid JSON"):
        load_graph(path)


def test_duplicate_idx_resolved_by_inputs():
    text = _node(1, "MOVC", outputs=[(5, 0)]) + _node(5, "CMERGE", inputs=[3]) + \
        _node(5, "ADD", inputs=[1]) + _node(3, "MOVC", outputs=[(5, 0)])
    g = parse_morpher(text, "d.xml", "d")
    assert sorted((e.src, e.dst) for e in g.edges) == [("movc1", "add5"), ("movc3", "cmerge5")]


def test_real_kernel():
    g = load_graph(real_graph(
        "morpher/cgra_me_bench/mac/main_INNERMOST_LN1_noSemiOLOAD_PartPred_DFG.xml"))
    assert len(g.nodes) == 10 and any(e.distance == 1 for e in g.edges)


def _three_nodes() -> str:
    return ('<DFG count="3">\n' + _node(1, outputs=[(2, 0)]) + _node(2, "LOAD", inputs=[1],
                                                                      outputs=[(3, 0)])
            + _node(3, "STORE", inputs=[2]) + "</DFG>\n")


@pytest.mark.parametrize("which, place, words", [
    (0, "line 27 column 3", '<Node idx="1"> opened at line 2 is left without </Node> before '
                            "the <Node> at line 10"),
    (1, "line 27 column 3", '<Node idx="2"> opened at line 10 is left without </Node>'),
    (2, "line 27 column 3", '<Node idx="3"> opened at line 19 is left without </Node> before '
                            "the end of the file"),
])
def test_a_missing_node_close_is_malformed_xml_at_the_parsers_place(which, place, words):
    """Once 'an output to an unknown node': the lenient reader ran two blocks into one."""
    text = _three_nodes()
    at = [k for k in range(len(text)) if text.startswith("</Node>", k)][which]
    broken = text[:at] + text[at + len("</Node>"):]
    with pytest.raises(InputError) as err:
        parse_morpher(broken, "k.xml", "k")
    assert err.value.where == place and err.value.problem.startswith("malformed XML (")
    assert words in err.value.problem and "close every <Node" in err.value.fix


def test_a_stray_node_close_is_malformed_xml():
    with pytest.raises(InputError, match=r"line 27 column 3: malformed XML \(mismatched tag\): "
                                         r"a </Node> at line 27 closes no <Node>"):
        parse_morpher(_three_nodes().replace("</DFG>", "</Node>\n</DFG>"), "k.xml", "k")


def test_every_real_kernel_still_reads_leniently():
    """The real files are no well-formed XML (attributes run together, an unclosed
    <Output>): only the <Node> blocks are held to XML's rule."""
    folder = real_graph("morpher")
    files = sorted(folder.rglob("*.xml"))
    refused = []
    for path in files:
        try:
            load_graph(path)
        except InputError as exc:
            refused.append(str(exc))
    assert len(files) == 55
    assert len(refused) == 1 and "fix_fft_INNERMOST_LN11_DFG.xml: line 17: same-iteration " \
        "cycle" in refused[0], refused
