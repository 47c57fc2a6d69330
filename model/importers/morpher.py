"""Importer for the loop data-flow graphs of the Morpher CGRA mapper (NUS).

The files are XML-like but not well-formed (attributes run together, ``ALAP="0"BB=``), so they
are read leniently with regular expressions, one ``<Node ...> ... </Node>`` block at a time::

    <Node idx="4" ASAP="1" ALAP="2"BB="for.body"CONST="1">
    <OP>ADD</OP>
    <Inputs> <Input idx="15"/> </Inputs>
    <Outputs> <Output idx="5" nextiter="0" type="I1"/> <Output idx="4" nextiter="1" .../> </Outputs>
    </Node>

How it maps to the IR:

- node id ``<op lower-case><idx>`` (e.g. ``add4``), ``op`` the ``<OP>`` text; ``ASAP``, ``ALAP``,
  ``BB``, ``CONST`` and ``BasePointerName`` are kept in ``attrs``;
- a ``CONST`` is an immediate held in tile memory: the instruction reads its own tile-memory
  variable ``const<idx>`` (private, so it forces no co-location);
- a few files reuse an ``idx`` for two nodes: ids then differ by op (or a ``b`` suffix) and an
  output goes to the node of that idx that lists the source among its ``<Inputs>``;
- every ``<Output idx nextiter>`` is an edge; ``nextiter="1"`` (loop-carried) becomes
  ``distance = 1``; the ``type`` (operand slot: I1, I2, P, ...) is kept in ``attrs``.

The graph is validated like a graph.json (:func:`model.graphjson.validate_graph`): a cycle of
same-iteration outputs (no ``nextiter="1"`` on it) is an input error, as no later pass could
schedule it. Errors name the file, the line and the fix.

Examples
--------
>>> text = '''<DFG count="2">
... <Node idx="1" ASAP="0" ALAP="0"BB="b"CONST="3">
... <OP>ADD</OP>
... <Inputs>
... </Inputs>
... <Outputs>
... \t<Output idx="2" nextiter="0" type="I1"/>
... \t<Output idx="1" nextiter="1" type="I2"/>
... </Outputs>
... </Node>
... <Node idx="2" ASAP="1" ALAP="1"BB="b">
... <OP>STORE</OP>
... <Inputs>
... \t<Input idx="1"/>
... </Inputs>
... <Outputs>
... </Outputs>
... </Node>'''
>>> g = parse_morpher(text, "k.xml", "k")
>>> g.node_ids, [(e.src, e.dst, e.distance) for e in g.edges], g.node("add1").mem_vars
(['add1', 'store2'], [('add1', 'store2', 0), ('add1', 'add1', 1)], ('const1',))
"""

from __future__ import annotations

import re
from typing import Any
from xml.parsers import expat

from model.errors import InputError
from model.graph import Edge, Graph, Node
from model.graphjson import validate_graph

__all__ = ["looks_like_morpher", "parse_morpher"]

_NODE = re.compile(r"<Node\b([^>]*)>(.*?)</Node>", re.S)
_ATTR = re.compile(r'(\w+)\s*=\s*"([^"]*)"')
_OP = re.compile(r"<OP>\s*([^<]*?)\s*</OP>")
_OUTPUT = re.compile(r"<Output\b([^>]*)/?>")
_INPUT = re.compile(r'<Input\s+idx="([^"]*)"')
_BASE = re.compile(r"<BasePointerName[^>]*>\s*([^<]*?)\s*</BasePointerName>")


def _target(candidates: list[tuple[str, set[str]]], src_idx: str) -> str | None:
    """The node an output points to; with a duplicated idx, the one listing the source as input."""
    for node_id, inputs in candidates:
        if src_idx in inputs:
            return node_id
    return candidates[0][0] if candidates else None


def looks_like_morpher(data: Any) -> bool:
    """True for text holding Morpher ``<Node idx=...>`` blocks (or a ``<DFG`` header)."""
    return isinstance(data, str) and ("<DFG" in data
                                      or re.search(r"<Node\s+idx=", data) is not None)


def _line(text: str, offset: int) -> int:
    return text.count("\n", 0, offset) + 1


#: The tags that make the blocks: ``<Node ...>``, ``</Node>``, ``<DFG ...>``, ``</DFG>``.
_BLOCK_TAG = re.compile(r"<(/?)(Node|DFG)\b[^>]*>")


def _check_blocks(text: str, file: str) -> None:
    """Every ``<Node ...>`` is closed by ``</Node>`` before the next one opens.

    The blocks are read leniently (the files are not well-formed XML), so a missing
    ``</Node>`` would silently merge two nodes into one block and surface later as an
    output to an unknown node. Refused here as malformed XML, at the place an XML parser
    reports (:func:`_xml_error`), naming the ``<Node>`` left open.
    """
    opened = None
    for tag in _BLOCK_TAG.finditer(text):
        if tag.group(2) != "Node":
            continue
        if (tag.group(1) == "/") == (opened is not None):
            opened = None if opened is not None else tag
            continue
        _refuse_block(text, file, opened, tag)
    if opened is not None:
        _refuse_block(text, file, opened, None)


def _refuse_block(text: str, file: str, opened: re.Match | None, tag: re.Match | None) -> None:
    """Raise for a ``<Node>`` left open (``opened``, before ``tag`` or the end) or a
    ``</Node>`` with none open (``tag``)."""
    found = tag if tag is not None else opened
    where, parser = _xml_error(text) or (f"line {_line(text, found.start())}",
                                         "a <Node> inside a <Node>")
    if opened is None:
        problem = f"a </Node> at line {_line(text, tag.start())} closes no <Node>"
        fix = "remove it, or add the <Node idx=...> it closes"
    else:
        idx = dict(_ATTR.findall(opened.group(0))).get("idx", "?")
        until = (f"before the <Node> at line {_line(text, tag.start())}" if tag is not None
                 else "before the end of the file")
        problem = (f'<Node idx="{idx}"> opened at line {_line(text, opened.start())} is left '
                   f"without </Node> {until}")
        fix = "close every <Node ...> block with </Node> (after its </Outputs>)"
    raise InputError(file, where, f"malformed XML ({parser}): {problem}", fix)


def _xml_error(text: str) -> tuple[str, str] | None:
    """``("line L column C", message)`` of the first error an XML parser finds in the
    file's block tags (``<Node>``, ``<DFG>``; everything else blanked, lines and columns
    kept, so the leniently read rest cannot be blamed instead); None when it finds none
    (blocks nested but each closed: XML allows it, the format does not)."""
    skeleton = [" " if c != "\n" else c for c in text]
    for tag in _BLOCK_TAG.finditer(text):
        bare = f"<{tag.group(1)}{tag.group(2)}>"
        skeleton[tag.start():tag.start() + len(bare) - 1] = bare[:-1]
        skeleton[tag.end() - 1] = ">"
    parser = expat.ParserCreate()
    try:              # a root around it all: the files hold several top-level elements
        parser.Parse("<r>", False)
        parser.Parse("".join(skeleton), False)
        parser.Parse("</r>", True)
    except expat.ExpatError as exc:
        if parser.ErrorByteIndex >= 3 + len(skeleton):    # at the closing root (ASCII)
            return "end of file", expat.ErrorString(exc.code)
        column = exc.offset - (3 if exc.lineno == 1 else 0) + 1
        return f"line {exc.lineno} column {max(1, column)}", expat.ErrorString(exc.code)
    return None


def parse_morpher(text: str, file: str, name: str) -> Graph:
    """Convert the text of a Morpher DFG file into a :class:`Graph`.

    Raises
    ------
    InputError
        No node, a node without ``idx`` or ``<OP>``, or an output to a node
        that does not exist (with the line).
    """
    _check_blocks(text, file)
    blocks = list(_NODE.finditer(text))
    if not blocks:
        raise InputError(file, "line 1", "no <Node idx=...> block found",
                         "pass a Morpher DFG file (or --format graph-json for JSON)")
    nodes, outputs, ids, taken = [], [], {}, set()
    for block in blocks:
        line = _line(text, block.start())
        attrs = dict(_ATTR.findall(block.group(1)))
        idx = attrs.get("idx")
        op_match = _OP.search(block.group(2))
        if not idx:  # an empty idx would give an empty or clashing node id
            raise InputError(file, f"line {line}", "<Node> without idx", 'add idx="<number>"')
        if op_match is None:
            raise InputError(file, f"line {line}", f"node {idx} has no <OP>", "add <OP>NAME</OP>")
        op = op_match.group(1)
        node_id = f"{op.lower()}{idx}"
        while node_id in taken:
            node_id += "b"
        taken.add(node_id)
        inputs = set(_INPUT.findall(block.group(2)))
        ids.setdefault(idx, []).append((node_id, inputs))
        kept = {k: v for k, v in attrs.items() if k != "idx"}
        base = _BASE.search(block.group(2))
        if base:
            kept["BasePointerName"] = base.group(1)
        mem = (f"const{idx}",) if "CONST" in attrs else ()
        nodes.append(Node(node_id, op, mem_vars=mem, attrs=kept))
        for out in _OUTPUT.finditer(block.group(2)):
            oattrs = dict(_ATTR.findall(out.group(1)))
            outputs.append((node_id, idx, oattrs, _line(text, block.start(2) + out.start())))
    edges = []
    for src, src_idx, oattrs, line in outputs:
        dst = _target(ids.get(oattrs.get("idx", ""), []), src_idx)
        if dst is None:
            raise InputError(file, f"line {line}", f'output of {src} to unknown node idx '
                             f'"{oattrs.get("idx")}"', "add that node or remove the output")
        distance = 1 if oattrs.get("nextiter", "0") not in ("0", "") else 0
        edges.append(Edge(src, dst, distance=distance,
                          attrs={"type": oattrs.get("type", "")}))
    graph = Graph(name, nodes, edges, {"format": "morpher"})
    _validate(graph, file, [line for *_, line in outputs])
    return graph


_CYCLE_FIX = ('mark the output that feeds the next iteration with nextiter="1", '
              "or remove an output of the cycle")


def _validate(graph: Graph, file: str, lines: list[int]) -> None:
    """:func:`validate_graph`, with an edge's place given as its line in the file."""
    try:
        validate_graph(graph, file, cycle_fix=_CYCLE_FIX)
    except InputError as err:
        edge = re.match(r"edges\[(\d+)\]", err.where)
        if edge is None:
            raise
        raise InputError(file, f"line {lines[int(edge.group(1))]}", err.problem, err.fix) from None
