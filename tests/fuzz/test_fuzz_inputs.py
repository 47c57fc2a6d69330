"""Fuzzing the input layer: no input file may end in a traceback.

Every case writes one file and runs the command line in-process
(``pipeline.run.main``); the only acceptable endings are exit 0 (mapped),
2 (bad input, with a message) and 3 (not mappable). Any other exit code or an
uncaught exception fails the test, and hypothesis shrinks the file to a small
example.

Strategies: mutated graph.json (from ``examples/fig9.json``), byte-level
mutations of its text, generated tiny graphs, mutated and generated MSR DNN
graphs (synthetic, in the shape of the real ones), mutated Morpher DFG text, and
mutated hardware descriptions (the presets). Mutations mostly break the file,
so most cases stop at validation (exit 2) in milliseconds; the ones that pass
are tiny graphs mapped on the ``tiny`` preset with a 2 s limit.

The regression corpus (``corpus/``) holds one small file per input problem
found so far; each must give exit 2 with a message naming the file, the place
and the fix.

Cost: ``RDAMAP_FUZZ_EXAMPLES`` examples per strategy (default 5, about 30 s for
the file on 2 cores). Raise it for a benchmark run; ``RDAMAP_FUZZ_STATS=path``
then appends the exit-code counts per strategy to ``path`` (JSON lines), for
``benchmarks/results/reliability_fuzz.md``.
"""

from __future__ import annotations

import contextlib
import copy
import io
import json
import os
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pipeline.run import main

REPO = Path(__file__).resolve().parents[2]
CORPUS = Path(__file__).resolve().parent / "corpus"
FIG9 = json.loads((REPO / "examples" / "fig9.json").read_text())
PRESETS = {name: json.loads((REPO / "hardware" / "presets" / f"{name}.json").read_text())
           for name in ("tiny", "se16", "cgra4x4")}

EXAMPLES = int(os.environ.get("RDAMAP_FUZZ_EXAMPLES", "5"))
ALLOWED_EXITS = (0, 2, 3)
FUZZ = settings(max_examples=EXAMPLES, deadline=None, database=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                       HealthCheck.filter_too_much])

#: Exit codes seen per strategy (written out when RDAMAP_FUZZ_STATS is set).
OUTCOMES: dict[str, Counter] = {}

TINY_GRAPH = {"version": 1, "name": "pair",
              "nodes": [{"id": "a", "op": "load"}, {"id": "b", "op": "store"}],
              "edges": [{"src": "a", "dst": "b"}]}


# ---------------------------------------------------------------------------
# running one case
# ---------------------------------------------------------------------------
def run_cli(args: list[str], out: Path) -> tuple[int, str]:
    """``main(args)`` with the fuzz options; returns (exit code, stderr)."""
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        code = main([*args, "--out", str(out), "--time-limit", "2", "--quiet", "--no-pictures"])
    return code, err.getvalue()


def run_file(strategy: str, content: str | bytes, name: str, as_hardware: bool = False) -> int:
    """Write ``content`` to a file and map it (or use it as the hardware); check the exit."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / name
        if isinstance(content, str):
            path.write_text(content, encoding="utf-8", errors="surrogatepass")
        else:
            path.write_bytes(content)
        if as_hardware:
            graph = Path(tmp) / "pair.json"
            graph.write_text(json.dumps(TINY_GRAPH))
            args = [str(graph), "--hardware", str(path)]
        else:
            args = [str(path), "--hardware", "tiny"]
        code, err = run_cli(args, Path(tmp) / "out")
    OUTCOMES.setdefault(strategy, Counter())[code] += 1
    assert code in ALLOWED_EXITS, f"exit {code} for {name}: {err[-2000:]}"
    if code == 2:
        assert str(path) in err and "(fix: " in err, err
    return code


@pytest.fixture(scope="module", autouse=True)
def _write_stats():
    """Append this run's exit-code counts to RDAMAP_FUZZ_STATS (benchmark runs only)."""
    yield
    target = os.environ.get("RDAMAP_FUZZ_STATS")
    if target:
        with open(target, "a", encoding="utf-8") as fh:
            for strategy, counts in sorted(OUTCOMES.items()):
                fh.write(json.dumps({"strategy": strategy, "examples": EXAMPLES,
                                     "exits": {str(k): v for k, v in sorted(counts.items())}})
                         + "\n")


# ---------------------------------------------------------------------------
# values and mutations of parsed JSON
# ---------------------------------------------------------------------------
#: A list nested past the loaders' depth limit (64 levels).
DEEP: list = []
for _ in range(70):
    DEEP = [DEEP]

#: Values that break a field: wrong types, huge, negative, non-finite, lone surrogates.
NASTY = st.one_of(
    st.none(), st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.sampled_from([0, -1, 1, 2, 10**400, 2**16 + 1, 2**31 + 1, 2**62 + 1, 3000]),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from(["", "\ud800", "pcu", "pmu", "agcu", "vector", "a", "b", "N1", "big"]),
    st.text(max_size=6),
    st.lists(st.integers(min_value=-3, max_value=3), max_size=3),
    st.dictionaries(st.sampled_from(["id", "x", "state_bytes", "network"]),
                    st.one_of(st.integers(-5, 5), st.text(max_size=3)), max_size=2),
    st.just(DEEP),
)


def _slots(doc) -> list[tuple[object, object]]:
    """Every (container, key) pair of a JSON document, in a fixed order."""
    found, stack = [], [doc]
    while stack:
        node = stack.pop()
        keys = sorted(node) if isinstance(node, dict) else range(len(node))
        for key in keys:
            found.append((node, key))
            if isinstance(node[key], (dict, list)):
                stack.append(node[key])
    return found


@st.composite
def mutated(draw, document, max_mutations: int = 3, frozen: tuple[str, ...] = ()):
    """A deep copy of ``document`` with 1..max_mutations values replaced, deleted or added.

    Keys in ``frozen`` keep their values.
    """
    doc = copy.deepcopy(document)
    for _ in range(draw(st.integers(1, max_mutations))):
        slots = [(c, k) for c, k in _slots(doc) if k not in frozen]
        if not slots:
            break
        container, key = slots[draw(st.integers(0, len(slots) - 1))]
        action = draw(st.sampled_from(["set", "set", "set", "delete", "add", "duplicate"]))
        if action == "set":  # a copy: a shared value (DEEP) must never be mutated later
            container[key] = copy.deepcopy(draw(NASTY))
        elif action == "delete":
            del container[key]
        elif action == "add" and isinstance(container, dict):
            name = draw(st.sampled_from(["attrs", "distance", "depth", "x", "links"]))
            container[name] = copy.deepcopy(draw(NASTY))
        elif action == "duplicate" and isinstance(container, list):
            container.append(copy.deepcopy(container[key]))
    return doc


def dumps(doc) -> str:
    """JSON text that keeps NaN/Infinity and escapes lone surrogates (as a user's tool might)."""
    return json.dumps(doc, allow_nan=True)


# ---------------------------------------------------------------------------
# strategies per format
# ---------------------------------------------------------------------------
SNIPPETS = ["[", "]", "{", "}", ",", '"', ":", "-", "1e999", "NaN", "\ufeff", "\\ud800", "9" * 40,
            "null", "true", "[" * 200, "\x00"]


@st.composite
def text_mutated(draw, text: str):
    """``text`` with a few spans deleted or snippets inserted (mostly broken JSON)."""
    for _ in range(draw(st.integers(1, 3))):
        at = draw(st.integers(0, len(text)))
        if draw(st.booleans()):
            text = text[:at] + text[at + draw(st.integers(1, 40)):]
        else:
            text = text[:at] + draw(st.sampled_from(SNIPPETS)) + text[at:]
    return text


@st.composite
def tiny_graphs(draw):
    """graph.json of 1-4 nodes and up to 4 edges, biased to valid (so some get mapped)."""
    ids = draw(st.lists(st.sampled_from(["a", "b", "c", "d"]), min_size=1, max_size=4, unique=True))
    nodes = [{"id": i, "op": "op", "unit": draw(st.sampled_from(["any", "pcu", "pmu", "any"]))}
             for i in ids]
    edges = []
    for _ in range(draw(st.integers(0, 4))):
        edge = {"src": draw(st.sampled_from(ids)), "dst": draw(st.sampled_from(ids + ["zz"]))}
        for key, values in (("bandwidth", st.floats(0.01, 1.0)), ("bytes", st.integers(0, 2**20)),
                            ("depth", st.integers(0, 8)), ("distance", st.integers(0, 2))):
            if draw(st.booleans()):
                edge[key] = draw(values)
        edges.append(edge)
    graph = {"version": 1, "name": "gen", "nodes": nodes, "edges": edges}
    return draw(mutated(graph, 1)) if draw(st.booleans()) else graph


def msr_node(index: int, name: str, size: float) -> dict:
    return {"name": name, "id": index, "supportedOnFpga": True, "cpuLatency": 0.5,
            "fpgaLatency": 0.1, "isBackwardNode": False, "colorClass": index, "layerId": 0,
            "size": size}


#: A synthetic MSR DNN graph (the shape of OperatorGraphs/*.json; no real data).
MSR = {"maxSizePerFPGA": 1e9, "maxFPGAs": 2, "maxCPUs": 1,
       "nodes": [msr_node(0, "weight", 4096.0), msr_node(1, "input", 1024.0),
                 msr_node(2, "matmul", 0.0)],
       "edges": [{"sourceId": 0, "destId": 2, "cost": 0.01, "size": 4096.0},
                 {"sourceId": 1, "destId": 2, "cost": 0.01, "size": 1024.0}]}

#: A small Morpher DFG (the shape of the real *_DFG.xml files, written here).
MORPHER = """<DFG count="3">
<Node idx="1" ASAP="0" ALAP="0"BB="for.body"CONST="3">
<OP>ADD</OP>
<Inputs>
</Inputs>
<Outputs>
\t<Output idx="2" nextiter="0" type="I1"/>
\t<Output idx="1" nextiter="1" type="I2"/>
</Outputs>
</Node>
<Node idx="2" ASAP="1" ALAP="1"BB="for.body">
<OP>LOAD</OP>
<BasePointerName size="4">a</BasePointerName>
<Inputs>
\t<Input idx="1"/>
</Inputs>
<Outputs>
\t<Output idx="3" nextiter="0" type="I1"/>
</Outputs>
</Node>
<Node idx="3" ASAP="2" ALAP="2"BB="for.body">
<OP>STORE</OP>
<Inputs>
\t<Input idx="2"/>
</Inputs>
<Outputs>
</Outputs>
</Node>
"""

MORPHER_SNIPPETS = ['idx=""', 'idx="9"', 'nextiter="x"', "<Node idx=\"4\">", "</Node>", "<OP></OP>",
                    "<Output idx=\"1\"/>", "<Input idx=\"\"/>", "\ufeff", "<", ">", '"']


@st.composite
def morpher_mutated(draw):
    """The Morpher sample with spans deleted, snippets inserted or a block repeated."""
    text = MORPHER
    for _ in range(draw(st.integers(1, 3))):
        at = draw(st.integers(0, len(text)))
        action = draw(st.sampled_from(["delete", "insert", "insert", "repeat"]))
        if action == "delete":
            text = text[:at] + text[at + draw(st.integers(1, 30)):]
        elif action == "insert":
            text = text[:at] + draw(st.sampled_from(MORPHER_SNIPPETS)) + text[at:]
        else:
            text = text + text[text.find("<Node"):]
    return text


# ---------------------------------------------------------------------------
# the fuzz tests
# ---------------------------------------------------------------------------
@FUZZ
@given(doc=mutated(FIG9))
def test_mutated_graph_json(doc):
    run_file("graph.json mutated", dumps(doc), "fig9.json")


@FUZZ
@given(text=text_mutated(json.dumps(TINY_GRAPH)))
def test_text_mutated_graph_json(text):
    run_file("graph.json text-mutated", text, "pair.json")


@FUZZ
@given(doc=tiny_graphs())
def test_generated_tiny_graph(doc):
    run_file("graph.json generated", dumps(doc), "gen.json")


@FUZZ
@given(doc=mutated(MSR))
def test_mutated_msr_dnn(doc):
    run_file("msr-dnn mutated", dumps(doc), "msr.json")


@FUZZ
@given(text=morpher_mutated())
def test_mutated_morpher(text):
    run_file("morpher mutated", text, "kernel_DFG.xml")


@FUZZ
@given(doc=st.sampled_from(sorted(PRESETS)).flatmap(lambda name: mutated(PRESETS[name], 2)))
def test_mutated_hardware(doc):
    run_file("hardware mutated", dumps(doc), "chip.json", as_hardware=True)


@pytest.mark.parametrize("field, value", [("instruction_latency", 4), ("instruction_latency", 6),
                                          ("af_latency", 30)])
def test_streaming_latencies_come_from_the_hardware(field, value):
    """Once exit 4: the SE heuristics assumed 3 cycles while the checker read the hardware's."""
    chip = dict(PRESETS["se16"], **{field: value})
    assert run_file(f"se16 {field} {value}", dumps(chip), "chip.json", as_hardware=True) == 0


# ---------------------------------------------------------------------------
# the regression corpus: each file must give exit 2 with the place and the fix
# ---------------------------------------------------------------------------
#: (corpus file, used as hardware, place named, words the message must hold)
REGRESSIONS = [
    ("graph_bytes_huge_int.json", False, "edges[0].bytes", "401-digit number is outside 0 to 2^62"),
    ("graph_latency_5000_digits.json", False, "line 1 column 76", "more than 4300 digits"),
    ("graph_latency_1e30.json", False, "nodes[0].latency", "outside 0 to 2^31"),
    ("graph_latency_1e30_float.json", False, "nodes[0].latency", "whole number"),
    ("graph_attrs_string.json", False, "attrs", "expected an object"),
    ("graph_attrs_list.json", False, "attrs", "expected an object"),
    ("graph_deep_nesting.json", False, "", "nested too deeply"),
    ("graph_distance_1e20.json", False, "edges[0].distance", "outside 0 to 2^16"),
    ("graph_depth_1e20.json", False, "edges[0].depth", "outside 0 to 2^16"),
    ("graph_id_lone_surrogate.json", False, "[0]", "lone surrogate"),
    ("graph_bandwidth_nan.json", False, "edges[0].bandwidth", "must be a finite number"),
    ("graph_bytes_infinity.json", False, "edges[0].bytes", "must be a finite number"),
    ("graph_bandwidth_negative.json", False, "edges[0].bandwidth", "outside (0, 1]"),
    ("graph_bandwidth_zero.json", False, "edges[0].bandwidth", "outside (0, 1]"),
    ("graph_empty.json", False, "nodes", "the graph has no nodes"),
    ("msr_size_string.json", False, "nodes[0].size", 'got text "big"'),
    ("msr_size_null.json", False, "nodes[0].size", "got null"),
    ("msr_size_negative.json", False, "nodes[0].size", "outside 0 to 2^62"),
    ("msr_size_1e309.json", False, "nodes[0].size", "must be a finite number"),
    ("msr_id_list.json", False, "nodes[1].id", "integer or a string id, got a list"),
    ("msr_sourceid_list.json", False, "edges[0].sourceId", "integer or a string id, got a list"),
    ("msr_edge_size_1e309.json", False, "edges[0].size", "must be a finite number"),
    ("msr_cycle.json", False, "edges[0]", "no loop-carried edges"),
    ("hw_grid_3000.json", True, "array_rows", "above the limit of 16,384"),
    ("hw_se_one_tile.json", True, "tiles", ">= 2 and <= 1024"),
    ("hw_se_reach_100.json", True, "links[1][0]", "use an offset from 1 to 15"),
    ("graph_duplicate_key_nodes.json", False, "nodes", 'the key "nodes" appears twice'),
    ("graph_duplicate_key_id.json", False, "nodes[0].id", 'the key "id" appears twice'),
    ("graph_id_nul.json", False, "nodes[0].id", "the control character U+0000"),
    ("morpher_missing_node_close.xml", False, "line 27 column 3",
     'malformed XML (mismatched tag): <Node idx="1"> opened at line 2 is left without </Node>'),
    ("onnx_zero_dim.onnx", False, "graph input 'x'", "dimension 1 has size 0"),
    ("graph_net_two_depths.json", False, "edges[1].depth",
     'net "N" has depth 1 here and 3 on edges[0]'),
]


@pytest.mark.parametrize("name, as_hardware, where, words", REGRESSIONS,
                         ids=[case[0] for case in REGRESSIONS])
def test_regression_corpus(tmp_path, name, as_hardware, where, words):
    path = CORPUS / name
    if as_hardware:
        graph = tmp_path / "pair.json"
        graph.write_text(json.dumps(TINY_GRAPH))
        code, err = run_cli([str(graph), "--hardware", str(path)], tmp_path / "out")
    else:
        code, err = run_cli([str(path)], tmp_path / "out")
    assert code == 2, err
    assert err.startswith(f"error: {path}: ") and "(fix: " in err, err
    assert where in err and words in err, err
    if name == "msr_cycle.json":
        assert "distance" not in err, "the MSR DNN format has no distance field"


def test_every_corpus_file_is_in_the_table():
    assert sorted(p.name for p in CORPUS.iterdir()) == sorted(
        ["graph_bom.json"] + [case[0] for case in REGRESSIONS])


def test_byte_order_mark_is_accepted(tmp_path):
    code, err = run_cli([str(CORPUS / "graph_bom.json"), "--hardware", "tiny"], tmp_path / "out")
    assert code == 0, err


@pytest.mark.parametrize("flag", ["graph", "--hardware"])
def test_directory_is_named_as_a_directory(tmp_path, flag):
    folder = tmp_path / "folder"
    folder.mkdir()
    graph = tmp_path / "pair.json"
    graph.write_text(json.dumps(TINY_GRAPH))
    args = [str(folder)] if flag == "graph" else [str(graph), "--hardware", str(folder)]
    code, err = run_cli(args, tmp_path / "out")
    assert code == 2 and f"{folder}: is a directory" in err and "(fix: " in err, err


# ---------------------------------------------------------------------------
# bad inputs users met: each once hung, mapped into a wrong answer or broke an output
# ---------------------------------------------------------------------------
def test_a_named_pipe_is_refused_before_anything_opens_it(tmp_path):
    """Once a hang: recognising ONNX opened the pipe, which waits for a writer."""
    pipe = tmp_path / "graph.json"
    os.mkfifo(pipe)
    try:
        run = subprocess.run([sys.executable, "-m", "pipeline.run", str(pipe), "--out",
                              str(tmp_path / "out"), "--quiet"], cwd=REPO, capture_output=True,
                             text=True, timeout=60)
    except subprocess.TimeoutExpired:
        pytest.fail("the run hung on a named pipe")
    assert run.returncode == 2, run.stderr
    assert run.stderr.startswith(f"error: {pipe}: is a named pipe (FIFO), not a regular file")
    assert "(fix: " in run.stderr and "Traceback" not in run.stderr


@pytest.mark.parametrize("flag", ["--hardware", "--format"])
def test_a_named_pipe_is_named_as_one_everywhere(tmp_path, flag):
    pipe = tmp_path / "pipe"
    os.mkfifo(pipe)
    graph = tmp_path / "pair.json"
    graph.write_text(json.dumps(TINY_GRAPH))
    args = [str(graph), "--hardware", str(pipe)] if flag == "--hardware" else \
        [str(pipe), "--format", "onnx"]
    code, err = run_cli(args, tmp_path / "out")
    assert code == 2 and f"{pipe}: is a named pipe (FIFO)" in err and "(fix: " in err, err


#: Ids that are valid but mean something to markdown, HTML, XML or matplotlib's mathtext,
#: and a graph name with a control character (names are free text: shown escaped).
MARKUP_IDS = ["c|d", "<script>x</script>", "e&f$g", "h\\i`j"]


def _markup_graph() -> dict:
    nodes = [{"id": i, "op": "op", "category": "c|<b>"} for i in MARKUP_IDS]
    edges = [{"src": a, "dst": b} for a, b in zip(MARKUP_IDS, MARKUP_IDS[1:])]
    return {"version": 1, "name": "n<|>&$\u0007", "nodes": nodes, "edges": edges}


def _table_shapes(text: str) -> list[set[int]]:
    """Per markdown table of ``text``: the set of its rows' cell counts (GFM tables)."""
    markdown_it = pytest.importorskip("markdown_it")
    tokens = markdown_it.MarkdownIt("commonmark").enable("table").parse(text)
    assert not [t for t in tokens if t.type == "html_block"], "raw HTML in the report"
    shapes, cells = [], 0
    for token in tokens:
        if token.type == "table_open":
            shapes.append(set())
        elif token.type in ("th_open", "td_open"):
            cells += 1
        elif token.type == "tr_close":
            shapes[-1].add(cells)
            cells = 0
        elif token.type == "inline":
            assert not [c for c in token.children or [] if c.type == "html_inline"], token.content
    return shapes


@pytest.mark.parametrize("hardware", ["tiny", "se16", "cgra4x4"])
def test_ids_with_markup_characters_keep_every_output_valid(tmp_path, hardware):
    """Once an SVG that was no XML (a NUL) and report tables split by a "|" in an id."""
    graph = tmp_path / "markup.json"
    graph.write_text(json.dumps(_markup_graph()))
    out = tmp_path / "out"
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        code = main([str(graph), "--hardware", hardware, "--out", str(out), "--time-limit", "5",
                     "--quiet"])
    assert code == 0, err.getvalue()
    pictures = sorted(out.glob("*.svg"))
    assert pictures
    for picture in pictures:
        ET.parse(picture)                      # raises on anything that is not XML
    report = (out / "report.md").read_text(encoding="utf-8")
    assert "<script" not in report and "\\x07" in report.splitlines()[0]
    shapes = _table_shapes(report)
    assert shapes and all(len(rows) == 1 for rows in shapes), shapes


@pytest.mark.parametrize("name, text, where", [
    ("attrs.json", '{"version": 1, "nodes": [{"id": "a", "attrs": {"k": 1, "k": 2}}], '
                   '"edges": []}', "nodes[0].attrs.k"),
    ("edge.json", '{"version": 1, "nodes": [{"id": "a"}, {"id": "b"}], '
                  '"edges": [{"src": "a", "dst": "b", "dst": "a"}]}', "edges[0].dst"),
    ("msr.json", '{"nodes": [{"id": 0, "name": "a", "size": 1, "size": 2}], "edges": []}',
     "nodes[0].size"),
])
def test_a_key_named_twice_is_refused_with_its_place(tmp_path, name, text, where):
    """Once the last value silently won."""
    path = tmp_path / name
    path.write_text(text)
    code, err = run_cli([str(path)], tmp_path / "out")
    key = where.rsplit(".", 1)[1]
    assert code == 2 and f"{path}: {where}: the key \"{key}\" appears twice" in err, err


def test_a_key_named_twice_in_a_hardware_file_is_refused(tmp_path):
    chip = tmp_path / "chip.json"
    chip.write_text(dumps(PRESETS["tiny"])[:-1] + ', "name": "again"}')
    graph = tmp_path / "pair.json"
    graph.write_text(json.dumps(TINY_GRAPH))
    code, err = run_cli([str(graph), "--hardware", str(chip)], tmp_path / "out")
    assert code == 2 and f"{chip}: name: the key \"name\" appears twice" in err, err
