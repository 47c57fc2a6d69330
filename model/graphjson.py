"""graph.json version 1: reading, validating and writing.

The format is the user-facing contract of DESIGN.md. Reading validates
everything a later pass relies on and raises :class:`~model.errors.InputError`
naming the file, the JSON path and the fix:

- the file is JSON, an object, ``"version": 1``;
- node ids are non-empty strings and unique; ``unit`` is a known kind;
- edges name existing nodes; ``bandwidth`` is in (0, 1]; ``bytes``, ``depth``,
  ``distance`` are non-negative numbers of the right type;
- edges sharing a ``net`` id share their source;
- the same-iteration edges (``distance == 0``) form no cycle; a cycle must be
  broken by a loop-carried edge (``distance >= 1``).

Unknown fields are kept (in ``extra``) and written back unchanged.
"""

from __future__ import annotations

import json
import math
import os
import tempfile
from pathlib import Path
from typing import Any

import networkx as nx

from model.errors import InputError
from model.graph import UNIT_KINDS, Edge, Graph, Node

__all__ = ["read_graph", "parse_graph", "graph_to_dict", "write_graph", "validate_graph",
           "write_json_atomic", "load_json"]

_NODE_FIELDS = {"id", "op", "unit", "pcu", "pmu", "latency", "category", "mem_vars",
                "starts_sdf", "attrs"}
_EDGE_FIELDS = {"src", "dst", "bandwidth", "bytes", "net", "virtual_channel", "depth",
                "distance", "attrs"}
_GRAPH_FIELDS = {"version", "name", "nodes", "edges", "attrs"}


def load_json(path: str | os.PathLike) -> Any:
    """Read a JSON file, turning every failure into an :class:`InputError`."""
    name = str(path)
    try:
        text = Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise InputError(name, "", "file not found", "check the path") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(name, "", f"cannot be read ({exc})", "pass a readable UTF-8 JSON file") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(name, f"line {exc.lineno} column {exc.colno}",
                         f"not valid JSON ({exc.msg})", "fix the JSON syntax there") from None


def read_graph(path: str | os.PathLike) -> Graph:
    """Read and validate a graph.json file.

    Raises
    ------
    InputError
        On any problem, naming the file, the JSON path and the fix.
    """
    data = load_json(path)
    return parse_graph(data, file=str(path), default_name=Path(path).stem)


def parse_graph(data: Any, file: str = "graph.json", default_name: str = "graph") -> Graph:
    """Build a validated :class:`Graph` from the parsed JSON of a graph.json.

    Examples
    --------
    >>> g = parse_graph({"version": 1, "nodes": [{"id": "a"}, {"id": "b"}],
    ...                  "edges": [{"src": "a", "dst": "b", "bandwidth": 0.5}]})
    >>> g.edges[0].bandwidth
    0.5
    >>> parse_graph({"version": 1, "nodes": [{"id": "a"}],
    ...              "edges": [{"src": "a", "dst": "N7"}]})
    Traceback (most recent call last):
    ...
    hardware.errors.InputError: graph.json: edges[0].dst: node "N7" does not exist (fix: add a node with id "N7" or correct the edge)
    """
    check = _Checker(file)
    check.is_type(data, dict, "", "a JSON object with version, nodes and edges")
    if data.get("version") != 1:
        raise InputError(file, "version", f"unsupported version {data.get('version')!r}",
                         'set "version": 1')
    for key in ("nodes", "edges"):
        if key not in data:
            raise InputError(file, key, "missing", f'add a "{key}" list')
        check.is_type(data[key], list, key, "a list")
    nodes = [_parse_node(check, raw, f"nodes[{k}]") for k, raw in enumerate(data["nodes"])]
    edges = [_parse_edge(check, raw, f"edges[{k}]") for k, raw in enumerate(data["edges"])]
    name = data.get("name", default_name)
    check.is_type(name, str, "name", "a string")
    graph = Graph(name, nodes, edges, dict(data.get("attrs", {})),
                  {k: v for k, v in data.items() if k not in _GRAPH_FIELDS})
    validate_graph(graph, file)
    return graph


def validate_graph(graph: Graph, file: str = "graph.json") -> None:
    """Check the cross-references of a graph (ids, nets, cycles).

    Raises
    ------
    InputError
        On a duplicate id, a dangling edge, a net with two sources, or a cycle of
        same-iteration edges.
    """
    seen: dict[str, int] = {}
    for k, node in enumerate(graph.nodes):
        if node.id in seen:
            raise InputError(file, f"nodes[{k}].id",
                             f'duplicate node id "{node.id}" (first at nodes[{seen[node.id]}])',
                             "give every node a unique id")
        seen[node.id] = k
    net_source: dict[str, tuple[str, int]] = {}
    for k, edge in enumerate(graph.edges):
        for end in ("src", "dst"):
            ref = getattr(edge, end)
            if ref not in seen:
                raise InputError(file, f"edges[{k}].{end}", f'node "{ref}" does not exist',
                                 f'add a node with id "{ref}" or correct the edge')
        if edge.net is not None:
            first = net_source.setdefault(edge.net, (edge.src, k))
            if first[0] != edge.src:
                raise InputError(file, f"edges[{k}].net",
                                 f'net "{edge.net}" has two sources, "{first[0]}" '
                                 f'(edges[{first[1]}]) and "{edge.src}"',
                                 "a net has one driver: give this edge another net id")
    _check_acyclic(graph, file)


def _check_acyclic(graph: Graph, file: str) -> None:
    g = nx.DiGraph()
    g.add_nodes_from(graph.node_ids)
    index: dict[tuple[str, str], int] = {}
    for k, e in enumerate(graph.edges):
        if not e.loop_carried:
            g.add_edge(e.src, e.dst)
            index.setdefault((e.src, e.dst), k)
    if nx.is_directed_acyclic_graph(g):
        return
    # find_cycle is slow on large graphs; search only inside a cyclic component
    component = next(c for c in nx.strongly_connected_components(g) if len(c) > 1
                     or any(g.has_edge(n, n) for n in c))
    cycle = nx.find_cycle(g.subgraph(component))
    names = " -> ".join([u for u, _ in cycle] + [cycle[0][0]])
    first = min(index[(u, v)] for u, v in cycle)
    raise InputError(file, f"edges[{first}]", f"same-iteration cycle {names}",
                     'mark the edge that feeds the next iteration with "distance": 1 '
                     "(or more), or remove an edge of the cycle")


class _Checker:
    """Small typed-field checks that raise InputError with the JSON path."""

    def __init__(self, file: str):
        self.file = file

    def is_type(self, value: Any, kind: type | tuple, where: str, expected: str) -> None:
        if isinstance(value, bool) and kind in (int, float, (int, float)):
            ok = False
        else:
            ok = isinstance(value, kind)
        if not ok:
            raise InputError(self.file, where, f"expected {expected}, got {json.dumps(value)[:60]}",
                             f"make it {expected}")

    def number(self, raw: dict, key: str, where: str, *, integer: bool = False,
               minimum: float = 0.0, default: Any = None) -> Any:
        if key not in raw or raw[key] is None:
            return default
        value = raw[key]
        kind = "a whole number" if integer else "a number"
        self.is_type(value, int if integer else (int, float), f"{where}.{key}", kind)
        if not math.isfinite(value) or value < minimum:
            raise InputError(self.file, f"{where}.{key}", f"{value} is below {minimum}",
                             f"use {kind} >= {minimum}")
        return value

    def string(self, raw: dict, key: str, where: str, default: Any = None) -> Any:
        if key not in raw or raw[key] is None:
            return default
        self.is_type(raw[key], str, f"{where}.{key}", "a string")
        return raw[key]

    def boolean(self, raw: dict, key: str, where: str) -> bool:
        if key not in raw:
            return False
        self.is_type(raw[key], bool, f"{where}.{key}", "true or false")
        return raw[key]


def _parse_node(check: _Checker, raw: Any, where: str) -> Node:
    check.is_type(raw, dict, where, 'an object like {"id": "N1", "op": "add"}')
    if "id" not in raw:
        raise InputError(check.file, f"{where}.id", "missing", "give the node a unique string id")
    node_id = raw["id"]
    check.is_type(node_id, str, f"{where}.id", "a non-empty string")
    if not node_id:
        raise InputError(check.file, f"{where}.id", "empty id", "give the node a non-empty id")
    unit = check.string(raw, "unit", where, "any")
    if unit not in UNIT_KINDS:
        raise InputError(check.file, f"{where}.unit", f'unknown unit "{unit}"',
                         "use one of " + ", ".join(UNIT_KINDS))
    mem_vars = raw.get("mem_vars", [])
    check.is_type(mem_vars, list, f"{where}.mem_vars", "a list of strings")
    for k, var in enumerate(mem_vars):
        check.is_type(var, str, f"{where}.mem_vars[{k}]", "a string")
    attrs = raw.get("attrs", {})
    check.is_type(attrs, dict, f"{where}.attrs", "an object")
    return Node(
        id=node_id,
        op=check.string(raw, "op", where, ""),
        unit=unit,
        pcu=check.number(raw, "pcu", where),
        pmu=check.number(raw, "pmu", where),
        latency=check.number(raw, "latency", where, integer=True),
        category=check.string(raw, "category", where),
        mem_vars=tuple(mem_vars),
        starts_sdf=check.boolean(raw, "starts_sdf", where),
        attrs=dict(attrs),
        extra={k: v for k, v in raw.items() if k not in _NODE_FIELDS},
    )


def _parse_edge(check: _Checker, raw: Any, where: str) -> Edge:
    check.is_type(raw, dict, where, 'an object like {"src": "A", "dst": "B"}')
    for end in ("src", "dst"):
        if end not in raw:
            raise InputError(check.file, f"{where}.{end}", "missing", f"name the edge's {end} node id")
        check.is_type(raw[end], str, f"{where}.{end}", "a node id (string)")
    bandwidth = check.number(raw, "bandwidth", where, default=1.0)
    if not 0 < bandwidth <= 1:
        raise InputError(check.file, f"{where}.bandwidth", f"{bandwidth} is outside (0, 1]",
                         "give a relative bandwidth above 0 and at most 1 (drop the edge if 0)")
    attrs = raw.get("attrs", {})
    check.is_type(attrs, dict, f"{where}.attrs", "an object")
    return Edge(
        src=raw["src"],
        dst=raw["dst"],
        bandwidth=float(bandwidth),
        bytes=check.number(raw, "bytes", where),
        net=check.string(raw, "net", where),
        virtual_channel=check.boolean(raw, "virtual_channel", where),
        depth=check.number(raw, "depth", where, integer=True),
        distance=check.number(raw, "distance", where, integer=True, default=0),
        attrs=dict(attrs),
        extra={k: v for k, v in raw.items() if k not in _EDGE_FIELDS},
    )


def graph_to_dict(graph: Graph) -> dict[str, Any]:
    """The graph.json v1 form of a graph (defaults left out, unknown fields kept)."""
    nodes = []
    for n in graph.nodes:
        item: dict[str, Any] = {"id": n.id}
        if n.op:
            item["op"] = n.op
        if n.unit != "any":
            item["unit"] = n.unit
        for key in ("pcu", "pmu", "latency", "category"):
            if getattr(n, key) is not None:
                item[key] = getattr(n, key)
        if n.mem_vars:
            item["mem_vars"] = list(n.mem_vars)
        if n.starts_sdf:
            item["starts_sdf"] = True
        if n.attrs:
            item["attrs"] = n.attrs
        nodes.append(item | n.extra)
    edges = []
    for e in graph.edges:
        item = {"src": e.src, "dst": e.dst}
        if e.bandwidth != 1.0:
            item["bandwidth"] = e.bandwidth
        for key in ("bytes", "net", "depth"):
            if getattr(e, key) is not None:
                item[key] = getattr(e, key)
        if e.virtual_channel:
            item["virtual_channel"] = True
        if e.distance:
            item["distance"] = e.distance
        if e.attrs:
            item["attrs"] = e.attrs
        edges.append(item | e.extra)
    out: dict[str, Any] = {"version": 1, "name": graph.name, "nodes": nodes, "edges": edges}
    if graph.attrs:
        out["attrs"] = graph.attrs
    return out | graph.extra


def write_json_atomic(data: Any, path: str | os.PathLike, indent: int | None = 1) -> None:
    """Write JSON to ``path`` through a temporary file and a rename.

    Nothing half-written is ever left at ``path``.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump(data, fh, indent=indent)
            fh.write("\n")
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_graph(graph: Graph, path: str | os.PathLike) -> None:
    """Write ``graph`` as graph.json v1 (atomically)."""
    write_json_atomic(graph_to_dict(graph), path)
