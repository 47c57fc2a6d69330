"""Importer for loop data-flow graphs written in Graphviz DOT (CGRA-ME, SAT-MapIt benchmarks).

Two dialects of the CGRA mapping literature are recognised by content:

* **operation attributes** (CGRA-ME style): ``n3 [opcode=add];`` and ``n1 -> n3
  [operand=0];``; a loop-carried edge carries ``distance=<k>`` (or ``loop_carried=1``,
  ``backedge=true``);
* **labelled LLVM instructions** (SAT-MapIt style): ``5 [color=black, label="5  %or = or i32
  %shl, %and"];`` -- the operation is the LLVM opcode (``or``; ``phi``, ``icmp``, ``load``,
  ...); an edge drawn ``[color=red]`` is loop-carried (distance 1). Constant, live-in and
  live-out nodes (labels ``C_<k>``, ``LiveInArg``, ``LiveOut``) are immediates and loop
  inputs/outputs, not operations: they are left out (their count is kept in ``attrs``).

When no edge is marked loop-carried but the same-iteration edges form a cycle, every edge into
a ``phi`` operation that closes a cycle is taken as loop-carried (distance 1), the usual
meaning of a phi at a loop header; a cycle without a phi is an input error. The parser is
lenient about layout (statements split by ``;`` or new lines, ``//`` and ``/* */``
comments, quoted or bare ids, ``a -> b -> c`` chains); node ids become graph ids (``n<id>``
when the id is a bare number). Errors name the file, the line and the fix.

Examples
--------
>>> text = '''digraph loop {
...   0 [label="0  %acc = phi i32 [ %add, %body ], [ 0, %entry ]"];
...   1 [label="1  %x = load i32, ptr %p"];
...   2 [label="2  %add = add i32 %acc, %x"];
...   3 [color=goldenrod1, label="3 C_0"];
...   0 -> 2
...   1 -> 2
...   2 -> 0 [color=red]
...   3 -> 1 [color=goldenrod1]
... }'''
>>> looks_like_dot(text)
True
>>> g = parse_dot(text, "loop.dot", "loop")
>>> [(n.id, n.op) for n in g.nodes], [(e.src, e.dst, e.distance) for e in g.edges]
([('n0', 'phi'), ('n1', 'load'), ('n2', 'add')],
 [('n0', 'n2', 0), ('n1', 'n2', 0), ('n2', 'n0', 1)])
"""

from __future__ import annotations

import re

import networkx as nx

from model.errors import InputError
from model.graph import Edge, Graph, Node
from model.graphjson import validate_graph

__all__ = ["looks_like_dot", "parse_dot"]

_HEAD = re.compile(r"^\s*(?:strict\s+)?digraph\b", re.IGNORECASE)
_ID = r'(?:"(?:[^"\\]|\\.)*"|[A-Za-z_0-9.\-]+)'
_ATTRS = r'(?:\[(?P<attrs>(?:"(?:[^"\\]|\\.)*"|[^\]"])*)\])?'
_EDGE = re.compile(rf"^(?P<chain>{_ID}(?:\s*->\s*{_ID})+)\s*{_ATTRS}\s*$", re.DOTALL)
_NODE = re.compile(rf"^(?P<id>{_ID})\s*{_ATTRS}\s*$", re.DOTALL)
_PAIR = re.compile(r'([A-Za-z_][A-Za-z_0-9]*)\s*=\s*("(?:[^"\\]|\\.)*"|[^,;\s\]]+)')
_SKIP = {"graph", "node", "edge", "subgraph"}
_AUX = re.compile(r"\b(C_\d+|LiveInArg|LiveOut)\b")
_LLVM = re.compile(r"(?:%[\w.]+\s*=\s*)?(?P<op>[a-z][a-z0-9_]*)\b")
_TRUE = {"1", "true", "yes"}


def looks_like_dot(text: str) -> bool:
    """Whether ``text`` is a Graphviz ``digraph`` (after comments)."""
    return bool(_HEAD.match(_strip_comments(text[:4096])))


def _strip_comments(text: str) -> str:
    text = re.sub(r"/\*.*?\*/", lambda m: "\n" * m.group(0).count("\n"), text, flags=re.DOTALL)
    return re.sub(r"(?m)//[^\n]*|^\s*#[^\n]*", "", text)


def _unquote(token: str) -> str:
    token = token.strip()
    if token.startswith('"') and token.endswith('"'):
        return token[1:-1].replace('\\"', '"')
    return token


def _attrs(text: str | None) -> dict[str, str]:
    return {k.lower(): _unquote(v) for k, v in _PAIR.findall(text or "")}


def _statements(text: str) -> list[tuple[int, str]]:
    """``(line, statement)`` inside the outer braces, split at ``;`` and new lines."""
    body_start = text.find("{")
    out, line = [], text[:body_start].count("\n") + 1
    buf, depth, quoted, start = [], 0, False, line
    for ch in text[body_start + 1:]:
        if ch == '"':
            quoted = not quoted
        if not quoted and ch in "[]":
            depth += 1 if ch == "[" else -1
        if not quoted and depth == 0 and ch in ";\n{}":
            stmt = "".join(buf).strip()
            if stmt:
                out.append((start, stmt))
            buf, start = [], line + (ch == "\n")
        else:
            buf.append(ch)
        line += ch == "\n"
    return out


def _node_id(token: str) -> str:
    name = _unquote(token)
    return f"n{name}" if name.isdigit() else name


def _op_of(attrs: dict[str, str]) -> str | None:
    """The operation of a node, or None for a constant / live-in / live-out node."""
    for key in ("opcode", "op", "operation"):
        if key in attrs:
            return attrs[key].lower()
    label = attrs.get("label", "")
    if _AUX.search(label):
        return None
    body = re.sub(r"^\s*\d+\s+", "", label)
    found = _LLVM.search(body)
    return found.group("op") if found else (label.split()[0].lower() if label.split() else "")


def _distance(attrs: dict[str, str]) -> int:
    if "distance" in attrs and attrs["distance"].isdigit():
        return int(attrs["distance"])
    if attrs.get("loop_carried", "").lower() in _TRUE or \
            attrs.get("backedge", "").lower() in _TRUE:
        return 1
    return 1 if attrs.get("color", "").lower() == "red" else 0


def parse_dot(text: str, file: str, name: str) -> Graph:
    """Parse a DOT data-flow graph (see the module); raises :class:`InputError`."""
    body = _strip_comments(text)
    if not _HEAD.match(body) or "{" not in body:
        raise InputError(file, "line 1", "not a DOT digraph",
                         'start the file with "digraph <name> {"')
    nodes: dict[str, Node] = {}
    aux: set[str] = set()
    raw_edges: list[tuple[str, str, int, int]] = []
    for line, stmt in _statements(body):
        if stmt.split("[")[0].strip().lower() in _SKIP or re.match(r"^\w+\s*=", stmt):
            continue
        edge = _EDGE.match(stmt)
        if edge:
            chain = [_node_id(t) for t in re.split(r"\s*->\s*", edge.group("chain").strip())]
            dist = _distance(_attrs(edge.group("attrs")))
            raw_edges += [(a, b, dist, line) for a, b in zip(chain, chain[1:])]
            continue
        node = _NODE.match(stmt)
        if not node:
            raise InputError(file, f"line {line}", f"cannot read the statement {stmt[:60]!r}",
                             "write a node (id [attrs]) or an edge (a -> b [attrs])")
        nid, attrs = _node_id(node.group("id")), _attrs(node.group("attrs"))
        op = _op_of(attrs)
        if op is None:
            aux.add(nid)
            continue
        nodes[nid] = Node(nid, op=op, attrs={"label": attrs.get("label", "")[:120]})
    return _build(file, name, nodes, aux, raw_edges)


def _build(file: str, name: str, nodes: dict[str, Node], aux: set[str],
           raw_edges: list[tuple[str, str, int, int]]) -> Graph:
    edges, lines = [], []
    for a, b, dist, line in raw_edges:
        if a in aux or b in aux:
            continue
        for end in (a, b):
            if end not in nodes:   # an edge may name a node never declared
                nodes[end] = Node(end, op="nop")
        edges.append(Edge(a, b, distance=dist))
        lines.append(line)
    edges = _phi_back_edges(file, nodes, edges, lines)
    graph = Graph(name, list(nodes.values()), edges,
                  attrs={"format": "dot", "left_out": len(aux)})
    validate_graph(graph, file)
    return graph


def _phi_back_edges(file: str, nodes: dict[str, Node], edges: list[Edge],
                    lines: list[int]) -> list[Edge]:
    """Unmarked loops: edges into ``phi`` nodes that close a cycle become distance 1."""
    if any(e.distance for e in edges):
        return edges
    g = nx.DiGraph()
    g.add_edges_from((e.src, e.dst) for e in edges)
    if nx.is_directed_acyclic_graph(g):
        return edges
    phis = {n for n, node in nodes.items() if node.op == "phi"}
    forward = nx.DiGraph()
    forward.add_edges_from((e.src, e.dst) for e in edges if e.dst not in phis)
    out = []
    for e, line in zip(edges, lines):
        closes = e.dst in phis and (e.src == e.dst or (
            forward.has_node(e.dst) and forward.has_node(e.src)
            and nx.has_path(forward, e.dst, e.src)))
        out.append(Edge(e.src, e.dst, distance=1) if closes else e)
    g = nx.DiGraph()
    g.add_edges_from((e.src, e.dst) for e in out if e.distance == 0)
    if not nx.is_directed_acyclic_graph(g):
        cycle = " -> ".join(u for u, _ in nx.find_cycle(g))
        raise InputError(file, f"line {lines[0] if lines else 1}",
                         f"same-iteration cycle {cycle} and no loop-carried edge marked",
                         "mark the back edge with distance=1 (or color=red), or make its "
                         "target a phi")
    return out
