"""graph.json version 1: reading, validating and writing.

The format is the user-facing contract of DESIGN.md. Reading validates
everything a later pass relies on and raises :class:`~model.errors.InputError`
naming the file, the JSON path and the fix:

- the file is UTF-8 JSON (a byte-order mark is accepted), an object,
  ``"version": 1``, nested at most 64 levels, with finite numbers and valid
  Unicode text (:func:`hardware.fields.parse_json`);
- the graph has at least one node; node ids are non-empty strings and unique;
  ``unit`` is a known kind;
- edges name existing nodes; ``bandwidth`` is in (0, 1]; every other number
  is finite, of the right type and within :data:`LIMITS` (``docs/limits.md``);
- the ``attrs`` later passes read have the right type: top-level ``attrs`` is
  an object, a node's ``attrs.state_bytes`` is a number of bytes, an edge's
  ``attrs.network`` names a network;
- edges sharing a ``net`` id share their source and (same-iteration ones) their ``depth``;
- the same-iteration edges (``distance == 0``) form no cycle; a cycle must be
  broken by a loop-carried edge (``distance >= 1``).

Unknown fields are kept (in ``extra``) and written back unchanged.
"""

from __future__ import annotations

import codecs
import gc
import json
import math
import os
import re
import tempfile
from collections import deque
from contextlib import contextmanager
from itertools import repeat
from operator import attrgetter, itemgetter
from pathlib import Path
from typing import Any, Callable, Iterator

import msgspec
import networkx as nx
import numpy as np

from hardware.description import NETWORK_NAMES
from hardware.fields import (MAX_NESTING, parse_json, read_bounded, shown_limit,
                             shown_number, special_file)
from model.errors import InputError
from model.graph import SHARED_EMPTY, UNIT_KINDS, Edge, Graph, Node

__all__ = ["read_graph", "parse_graph", "parse_graph_bytes", "parse_graph_quick", "quick_json",
           "is_plain", "gc_paused", "FREEZE_ENTRIES", "graph_json_text", "graph_to_dict",
           "write_graph", "validate_graph",
           "write_json_atomic", "load_json", "LIMITS", "read_file_bytes", "check_graph_file"]

#: Upper bounds of the numeric fields (documented in docs/limits.md). Each keeps
#: a later pass finite and fast: ``depth`` is simulated one step per slot (2^20
#: took 4 s and 430 MB on a three-node chain, 2^16 half a second), ``distance``
#: feeds the sorter's int64 arithmetic, ``latency`` the solvers' int32 variables.
LIMITS: dict[str, int] = {
    "pcu": 2**20,
    "pmu": 2**20,
    "latency": 2**31,
    "bytes": 2**62,
    "depth": 2**16,
    "distance": 2**16,
    "state_bytes": 2**62,
    "flops": 2**62,
}
_EXAMPLE = "see examples/fig9.json"

_NODE_FIELDS = {"id", "op", "unit", "pcu", "pmu", "latency", "category", "mem_vars",
                "starts_sdf", "attrs", "flops"}
_EDGE_FIELDS = {"src", "dst", "bandwidth", "bytes", "net", "virtual_channel", "depth",
                "distance", "attrs"}
_GRAPH_FIELDS = {"version", "name", "nodes", "edges", "attrs"}


def check_graph_file(path: str | os.PathLike) -> None:
    """Refuse a graph path that is no regular file, from its metadata alone (nothing is
    opened: a named pipe would wait for a writer, a device such as /dev/zero never ends).
    Every reader of a graph file calls it before looking at the content.

    Raises
    ------
    InputError
        For a directory, a missing path, a named pipe, a socket or a device.
    """
    name, path = str(path), Path(path)
    try:
        if path.is_dir():
            raise InputError(name, "", "is a directory, not a graph file",
                             "pass a graph file (e.g. examples/fig9.json)")
        special = special_file(path)
        if special is not None:
            raise InputError(name, "", f"is {special}, not a regular file",
                             "save the graph to a file and pass that file")
        if not path.is_file():
            raise InputError(name, "", "file not found", "check the path")
    except OSError as exc:
        raise InputError(name, "", f"cannot be read ({exc.strerror})",
                         "pass a readable UTF-8 JSON file") from None


def read_file_bytes(path: str | os.PathLike) -> bytes:
    """The bytes of a user's graph file, or an :class:`InputError` saying why not.

    What :func:`check_graph_file` refuses, or a file above
    :data:`~hardware.fields.MAX_FILE_BYTES`, is refused before reading.
    """
    check_graph_file(path)
    return read_bounded(Path(path), str(path), "split the graph or pass a smaller one",
                        "pass a readable UTF-8 JSON file")


def load_json(path: str | os.PathLike) -> Any:
    """Read a JSON file, turning every failure into an :class:`InputError`."""
    return parse_json(read_file_bytes(path), str(path), _EXAMPLE)


def read_graph(path: str | os.PathLike) -> Graph:
    """Read and validate a graph.json file.

    Raises
    ------
    InputError
        On any problem, naming the file, the JSON path and the fix.
    """
    data = quick_json(read_file_bytes(path))     # the bytes go: the graph needs the room
    return parse_graph_quick(data, str(path), Path(path).stem, lambda: read_file_bytes(path),
                             _EXAMPLE)


def quick_json(raw: bytes) -> Any | None:
    r"""The parsed JSON of ``raw`` without :func:`~hardware.fields.parse_json`'s walk of
    every value; None when that walk is needed (the bytes are not plain UTF-8
    JSON, or hold a NaN, an infinity or an escape that may be a lone surrogate).

    The walk's other checks (nesting, overflowing numbers) are left to the
    reader of the data: :func:`parse_graph_bytes` does them where a graph.json
    allows any value. msgspec's decoder reads the same JSON as the standard
    library's (its strict grammar), twice as fast and from the bytes (10^6 nodes:
    2.5 -> 1.2 s, and no 220 MB copy as text); like it, it keeps the last of a key
    named twice, so None too when a key may be repeated (:func:`_may_repeat_keys`):
    the full check refuses it.

    Examples
    --------
    >>> quick_json(b'{"a": [1, 2.5]}'), quick_json(b'[NaN]'), quick_json(rb'["\ud800"]')
    ({'a': [1, 2.5]}, None, None)
    >>> quick_json(b'{"a": "x:y"}'), quick_json(b'{"a": 1, "a": 2}')
    ({'a': 'x:y'}, None)
    """
    escapes = b"\\u" in raw            # a scan of the whole file: done once
    if escapes and _SURROGATE_ESCAPE.search(raw):
        return None
    body = memoryview(raw)[len(codecs.BOM_UTF8):] if raw.startswith(codecs.BOM_UTF8) else raw
    try:
        data = msgspec.json.decode(body)
    except (msgspec.MsgspecError, ValueError, RecursionError):  # not UTF-8 or JSON, NaN, 1e400
        return None
    return None if _may_repeat_keys(raw, data, escapes) else data


_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F]")
#: A ":" written as an escape in a string (JSON's hex digits take either case).
_ESCAPED_COLONS = (rb"\u003a", rb"\u003A")


def _may_repeat_keys(raw: bytes, data: Any, escapes: bool = True) -> bool:
    """Whether an object of the JSON text ``raw`` (decoded as ``data``) may name a key
    twice, which msgspec reads silently as its last value.

    Counted, not searched: ``raw`` holds one ":" per key it writes plus the ":" of its
    strings. When that is the number of keys ``data`` kept (:func:`_flat_keys`, the usual
    graph.json), every key is unique. Else ``data`` is written again by msgspec (in C),
    which holds one ":" per key kept plus the same strings' ":": equal counts prove every
    key unique; more in ``raw`` (a repeated key, or text that merely looks like an escaped
    ":") send the file to :func:`~hardware.fields.parse_json`, which names the key.
    ``escapes``: whether ``raw`` holds a ``\\u`` escape at all.
    """
    colons = raw.count(b":")
    if colons == _flat_keys(raw, data):    # the usual shape: counted without writing anything
        return False
    if escapes:
        colons += sum(raw.count(escape) for escape in _ESCAPED_COLONS)
    try:
        return colons != _written_colons(data, msgspec.json.Encoder(), bytearray())
    except (TypeError, ValueError, OverflowError, RecursionError):   # let the full check say
        return True


def _flat_keys(raw: bytes, data: Any) -> int:
    """The keys of ``data`` when its only objects are the top-level one, its values that
    are objects and the entries of its lists (a graph.json's nodes and edges), proven by
    ``raw`` holding no other "{"; -1 for any other shape. Types and lengths only, read in
    C: 64 ms for 10^5 nodes and 2 * 10^5 edges, where :func:`_written_colons` takes 93 ms
    (their decoding: 210 ms)."""
    if not isinstance(data, dict):
        return -1
    objects = [v for v in data.values() if isinstance(v, dict)]
    lists = [v for v in data.values() if isinstance(v, list) and v]
    if any(set(map(type, entries)) != {dict} for entries in lists):
        return -1
    if raw.count(b"{") != 1 + len(objects) + sum(map(len, lists)):
        return -1
    return len(data) + sum(map(len, objects)) + sum(sum(map(len, entries)) for entries in lists)


def _written_colons(value: Any, encoder: msgspec.json.Encoder, buffer: bytearray) -> int:
    """The ":" of ``value`` written as JSON by ``encoder``, a slice of a long list at a
    time into one reused ``buffer`` (10^6 nodes are never written out whole)."""
    if isinstance(value, dict):
        return sum(1 + key.count(":") + _written_colons(item, encoder, buffer)
                   for key, item in value.items())
    pieces = ((value[k:k + _CHUNK] for k in range(0, len(value), _CHUNK))
              if isinstance(value, list) else (value,))
    total = 0
    for piece in pieces:
        encoder.encode_into(piece, buffer)
        total += buffer.count(b":")
    return total


@contextmanager
def gc_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector while millions of objects are built
    and kept (each collection would walk them all again for nothing)."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


class _NeedsFullCheck(Exception):
    """Quick parsing met a value only the full check of every value can judge."""


def parse_graph_bytes(raw: bytes, file: str, default_name: str, example: str = "",
                      data: Any = None) -> Graph:
    """A validated graph from the bytes of a graph.json, with the messages of
    ``parse_graph(parse_json(raw))`` but without walking every value twice.

    ``data`` is ``quick_json(raw)`` when the caller already has it.
    """
    data = quick_json(raw) if data is None else data
    return parse_graph_quick(data, file, default_name, lambda: raw, example)


def parse_graph_quick(data: Any, file: str, default_name: str, raw_of: Callable[[], bytes],
                      example: str = "") -> Graph:
    """A validated graph from :func:`quick_json`'s data (None: it gave none), with the
    messages of ``parse_graph(parse_json(raw_of()))``.

    The JSON checks of :func:`~hardware.fields.parse_json` are done on the fields
    that may hold any value (``attrs``, unknown fields); the typed fields are
    checked by the parser itself. On any problem the full check runs first on
    ``raw_of()`` (the file's bytes, read again if the caller let them go), so the
    message is the one it gives. ``data`` is consumed.
    """
    with gc_paused():
        graph = None
        if data is not None:
            try:
                graph = _build_graph(data, file, default_name, _Checker(file, plain_only=True))
            except (_NeedsFullCheck, InputError):   # the full path names the problem
                pass
        if graph is None:
            graph = parse_graph(parse_json(raw_of(), file, example), file, default_name)
        if len(graph.nodes) + len(graph.edges) >= FREEZE_ENTRIES:
            gc.freeze()
        return graph


#: From this many nodes and edges a graph read is moved out of the cyclic collector's
#: reach (``gc.freeze``): it lives for the run, and every full collection would walk
#: its objects again for nothing (0.7 s a pass at 10^6 nodes). Reference counting
#: still frees it.
FREEZE_ENTRIES = 100_000


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
    hardware.errors.InputError: graph.json: edges[0].dst: node "N7" does not exist (fix: add a
    node with id "N7" or correct the edge)
    """
    return _build_graph(data, file, default_name, _Checker(file))


def _build_graph(data: Any, file: str, default_name: str, check: "_Checker") -> Graph:
    check.is_type(data, dict, "", "a JSON object with version, nodes and edges")
    version = data.get("version")
    if type(version) is not int or version != 1:  # JSON true and 1.0 are not version 1
        raise InputError(file, "version", f"unsupported version {json.dumps(version)[:40]}",
                         'set "version": 1')
    for key in ("nodes", "edges"):
        if key not in data:
            raise InputError(file, key, "missing", f'add a "{key}" list')
        check.is_type(data[key], list, key, "a list")
    check.plain({k: v for k, v in data.items() if k not in ("nodes", "edges")}, 0)
    nodes = _built(data["nodes"], "nodes", _quick_nodes, _parse_node, check)
    index = dict(zip(map(attrgetter("id"), nodes), range(len(nodes))))
    ends: tuple[list[int], list[int]] = ([], [])
    edges = _built(data["edges"], "edges", _quick_edges, _parse_edge, check, index, ends)
    name = data.get("name", default_name)
    check.is_type(name, str, "name", "a string")
    attrs = data.get("attrs", {})
    check.is_type(attrs, dict, "attrs", "an object")
    graph = Graph(name, nodes, edges, dict(attrs),
                  {k: v for k, v in data.items() if k not in _GRAPH_FIELDS})
    if len(ends[0]) == len(edges):
        graph.keep_derived(index, (np.array(ends[0], dtype=np.int64),
                                   np.array(ends[1], dtype=np.int64)))
    validate_graph(graph, file)
    return graph


def _consume(values: Iterator) -> None:
    """Run an iterator to its end, keeping nothing (itertools' recipe)."""
    deque(values, maxlen=0)


#: Entries built per step: few enough that a step's edges find their node ids while
#: the ids' text is still in the processor's cache.
_CHUNK = 1 << 14


def _built(items: list, name: str, quick: Any, careful: Any, check: "_Checker",
           index: dict[str, int] | None = None,
           ends: tuple[list[int], list[int]] | None = None) -> list:
    """The node or edge of every entry, a chunk at a time: ``quick(chunk, shared)``
    when it can build the whole chunk, else ``careful`` entry by entry.

    With ``index`` (node id -> position), the positions of each edge's ends are
    appended to ``ends`` as the edges are built; they stop short (and the graph
    finds them itself, with the message) at an id that is no node's.
    Quick-parsed data is the reader's own: each entry is dropped once built,
    so the parsed JSON and the graph are not held whole at the same time.
    """
    built: list = []
    shared: dict = {}
    for start in range(0, len(items), _CHUNK):
        chunk = items[start:start + _CHUNK]
        part = (check.plain_only and quick(chunk, shared)) or [
            careful(check, raw, f"{name}[{k}]") for k, raw in enumerate(chunk, start)]
        if check.plain_only:
            items[start:start + len(part)] = [None] * len(part)
        built += part
        if index is not None and ends is not None:
            src, dst = list(map(attrgetter("src"), part)), list(map(attrgetter("dst"), part))
            _consume(map(hash, src + dst))   # cached in the strings: the lookups below then
            try:                            # run about twice as fast
                src, dst = list(map(index.__getitem__, src)), list(map(index.__getitem__, dst))
            except KeyError:
                index = None
            else:
                ends[0].extend(src)
                ends[1].extend(dst)
    return built


def validate_graph(graph: Graph, file: str = "graph.json", cycle_fix: str | None = None) -> None:
    """Check the cross-references of a graph (ids, nets, cycles).

    Parameters
    ----------
    graph : the graph to check.
    file : the file name shown in errors.
    cycle_fix : the fix suggested for a same-iteration cycle; by default, to
        mark a loop-carried edge with ``distance`` (a format without that field
        passes its own).

    Raises
    ------
    InputError
        On a graph without nodes, a duplicate id, an id holding a control
        character, a dangling edge, a net with two sources, or a cycle of
        same-iteration edges.
    """
    if not graph.nodes:
        raise InputError(file, "nodes", "the graph has no nodes", "add at least one node")
    if len(graph.index_of) < len(graph.nodes):
        _raise_duplicate(graph, file)
    _check_id_text(graph, file)
    try:
        graph.edge_ends
    except KeyError:
        _check_edges(graph, file, ends=True)
    _check_edges(graph, file, ends=False)
    if not graph.is_acyclic():
        _raise_cycle(graph, file, cycle_fix or _CYCLE_FIX)


def _raise_duplicate(graph: Graph, file: str) -> None:
    seen: dict[str, int] = {}
    for k, node in enumerate(graph.nodes):
        if node.id in seen:
            raise InputError(file, f"nodes[{k}].id",
                             f'duplicate node id "{node.id}" (first at nodes[{seen[node.id]}])',
                             "give every node a unique id")
        seen[node.id] = k


#: Control characters (C0, DEL, C1): NUL, tab, newline, ESC and the like.
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")


def _check_id_text(graph: Graph, file: str) -> None:
    """No node id holds a control character. An id is shown in every output: report
    tables and error lines (one line each), SVG text (XML cannot hold NUL or most other
    control characters at all, even escaped), a terminal (which obeys an ESC sequence).
    One pass over the ids joined (C speed: 10^6 ids in about 20 ms)."""
    joined = "".join(graph.index_of)
    if (joined.isascii() and joined.isprintable()) or not _CONTROL.search(joined):
        return
    for k, node in enumerate(graph.nodes):
        found = _CONTROL.search(node.id)
        if found:
            raise InputError(file, f"nodes[{k}].id", f"the id {node.id!r} holds the control "
                             f"character U+{ord(found.group()):04X} (at position "
                             f"{found.start()})", "give the node an id of printable characters "
                             "(no NUL, tab, newline or other control character)")


def _check_edges(graph: Graph, file: str, ends: bool) -> None:
    """Edge by edge: (if ``ends``) both ends exist, and a net id keeps one source and,
    over its same-iteration edges, one ``depth``."""
    net_source: dict[str, tuple[str, int]] = {}
    net_depth: dict[str, tuple[int, int]] = {}
    for k, edge in enumerate(graph.edges):
        for end in ("src", "dst") if ends else ():
            ref = getattr(edge, end)
            if ref not in graph.index_of:
                raise InputError(file, f"edges[{k}].{end}", f'node "{ref}" does not exist',
                                 f'add a node with id "{ref}" or correct the edge')
        if edge.net is not None:
            first = net_source.setdefault(edge.net, (edge.src, k))
            if first[0] != edge.src:
                raise InputError(file, f"edges[{k}].net",
                                 f'net "{edge.net}" has two sources, "{first[0]}" '
                                 f'(edges[{first[1]}]) and "{edge.src}"',
                                 "a net has one driver: give this edge another net id")
            if not edge.distance:
                _check_net_depth(net_depth, edge, k, file)


def _check_net_depth(seen: dict[str, tuple[int, int]], edge: Edge, k: int, file: str) -> None:
    """A net is one stage buffer (its sinks read the same slots): the simulators and the
    buffer level read one depth for it, so two are refused here, not met there."""
    depth = 1 if edge.depth is None else edge.depth
    first = seen.setdefault(edge.net, (depth, k))
    if first[0] != depth:
        raise InputError(file, f"edges[{k}].depth", f'net "{edge.net}" has depth {depth} here '
                         f"and {first[0]} on edges[{first[1]}] (a missing depth is 1)",
                         "a net is one buffer: give its edges one depth, or this edge "
                         "another net id")


_CYCLE_FIX = ('mark the edge that feeds the next iteration with "distance": 1 '
              "(or more), or remove an edge of the cycle")


def _raise_cycle(graph: Graph, file: str, fix: str) -> None:
    """Name a cycle of same-iteration edges (the graph is known to have one)."""
    g = nx.DiGraph()
    g.add_nodes_from(graph.node_ids)
    index: dict[tuple[str, str], int] = {}
    for k, e in enumerate(graph.edges):
        if not e.loop_carried:
            g.add_edge(e.src, e.dst)
            index.setdefault((e.src, e.dst), k)
    # find_cycle is slow on large graphs; search only inside a cyclic component
    component = next(c for c in nx.strongly_connected_components(g) if len(c) > 1
                     or any(g.has_edge(n, n) for n in c))
    cycle = nx.find_cycle(g.subgraph(component))
    names = " -> ".join([u for u, _ in cycle] + [cycle[0][0]])
    first = min(index[(u, v)] for u, v in cycle)
    raise InputError(file, f"edges[{first}]", f"same-iteration cycle {names}", fix)


class _Checker:
    """Small typed-field checks that raise InputError with the JSON path."""

    def __init__(self, file: str, plain_only: bool = False):
        self.file = file
        self.plain_only = plain_only   # the data is quick_json's: values not yet walked

    def plain(self, value: Any, depth: int) -> None:
        """For quick-parsed data, stop unless ``value`` (at ``depth``) passes
        :func:`is_plain` (the full check then names the problem)."""
        if self.plain_only and not is_plain(value, depth):
            raise _NeedsFullCheck()

    def is_type(self, value: Any, kind: type | tuple, where: str, expected: str) -> None:
        if isinstance(value, bool) and kind in (int, float, (int, float)):
            ok = False
        else:
            ok = isinstance(value, kind)
        if not ok:
            raise InputError(self.file, where, f"expected {expected}, got {json.dumps(value)[:60]}",
                             f"make it {expected}")

    def number(self, raw: dict, key: str, where: str, *, integer: bool = False,
               maximum: int, default: Any = None) -> Any:
        """A finite number from 0 to ``maximum`` (a whole one if ``integer``)."""
        if key not in raw or raw[key] is None:
            return default
        value, place = raw[key], f"{where}.{key}"
        kind = "a whole number" if integer else "a number"
        self.is_type(value, int if integer else (int, float), place, kind)
        limit = shown_limit(maximum)
        if isinstance(value, float) and not math.isfinite(value):
            raise InputError(self.file, place,
                             f"{value} is not allowed: it must be a finite number",
                             f"use {kind} from 0 to {limit}")
        if not 0 <= value <= maximum:
            raise InputError(self.file, place, f"{shown_number(value)} is outside 0 to {limit}",
                             f"use {kind} from 0 to {limit}")
        return value

    def bandwidth(self, raw: dict, where: str) -> float:
        """An edge's relative bandwidth, in (0, 1] (default 1)."""
        if raw.get("bandwidth") is None:
            return 1.0
        value, place = raw["bandwidth"], f"{where}.bandwidth"
        self.is_type(value, (int, float), place, "a number in (0, 1]")
        if not 0 < value <= 1:  # also refuses NaN
            raise InputError(self.file, place, f"{shown_number(value)} is outside (0, 1]",
                             "give a relative bandwidth above 0 and at most 1 (drop the edge if 0)")
        return float(value)

    def node_id(self, raw: dict, key: str, where: str, expected: str) -> str:
        """A non-empty id string that can be written as UTF-8 (no lone surrogate)."""
        if key not in raw:
            raise InputError(self.file, f"{where}.{key}", "missing", f"give {expected}")
        value = raw[key]
        self.is_type(value, str, f"{where}.{key}", expected)
        if not value:
            raise InputError(self.file, f"{where}.{key}", "empty id", f"give {expected}")
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            raise InputError(self.file, f"{where}.{key}", "the id is not valid Unicode text "
                             "(it holds a lone surrogate such as \\ud800)",
                             f"give {expected} of letters, digits and punctuation") from None
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
    node_id = check.node_id(raw, "id", where, "the node a unique non-empty string id")
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
    extra = {k: v for k, v in raw.items() if k not in _NODE_FIELDS}
    check.plain([attrs, extra], 2)
    # the section cuts read attrs.state_bytes (bytes a stored tensor keeps)
    check.number(attrs, "state_bytes", f"{where}.attrs", maximum=LIMITS["state_bytes"])
    return Node(
        id=node_id,
        op=check.string(raw, "op", where, ""),
        unit=unit,
        pcu=check.number(raw, "pcu", where, maximum=LIMITS["pcu"]),
        pmu=check.number(raw, "pmu", where, maximum=LIMITS["pmu"]),
        latency=check.number(raw, "latency", where, integer=True, maximum=LIMITS["latency"]),
        category=check.string(raw, "category", where),
        mem_vars=tuple(mem_vars),
        starts_sdf=check.boolean(raw, "starts_sdf", where),
        attrs=dict(attrs),
        extra=extra,
        flops=check.number(raw, "flops", where, maximum=LIMITS["flops"]),
    )


def _parse_edge(check: _Checker, raw: Any, where: str) -> Edge:
    check.is_type(raw, dict, where, 'an object like {"src": "A", "dst": "B"}')
    ends = [check.node_id(raw, end, where, f"the edge's {end} node id (a string)")
            for end in ("src", "dst")]
    attrs = raw.get("attrs", {})
    check.is_type(attrs, dict, f"{where}.attrs", "an object")
    extra = {k: v for k, v in raw.items() if k not in _EDGE_FIELDS}
    check.plain([attrs, extra], 2)
    # routing reads attrs.network (which on-chip network the edge uses)
    network = check.string(attrs, "network", f"{where}.attrs")
    if network is not None and network not in NETWORK_NAMES:
        raise InputError(check.file, f"{where}.attrs.network", f'unknown network "{network}"',
                         "use one of " + ", ".join(NETWORK_NAMES))
    return Edge(
        src=ends[0],
        dst=ends[1],
        bandwidth=check.bandwidth(raw, where),
        bytes=check.number(raw, "bytes", where, maximum=LIMITS["bytes"]),
        net=check.string(raw, "net", where),
        virtual_channel=check.boolean(raw, "virtual_channel", where),
        depth=check.number(raw, "depth", where, integer=True, maximum=LIMITS["depth"]),
        distance=check.number(raw, "distance", where, integer=True, maximum=LIMITS["distance"],
                              default=0),
        attrs=dict(attrs),
        extra=extra,
    )


def is_plain(value: Any, depth: int = 0) -> bool:
    """Whether :func:`~hardware.fields.parse_json`'s walk passes ``value`` found
    ``depth`` levels deep: finite numbers, valid Unicode text, containers
    nested less than :data:`~hardware.fields.MAX_NESTING` levels.

    Examples
    --------
    >>> is_plain({"a": [1, "x"]}), is_plain([float("inf")]), is_plain([[]], depth=63)
    (True, False, False)
    """
    stack = [(value, depth)]
    while stack:
        item, level = stack.pop()
        if isinstance(item, float) and not math.isfinite(item):
            return False
        if isinstance(item, str) and not _encodable(item):
            return False
        if isinstance(item, (dict, list)):
            if level >= MAX_NESTING or (isinstance(item, dict) and
                                        not all(_encodable(str(key)) for key in item)):
                return False
            values = item.values() if isinstance(item, dict) else item
            stack.extend((v, level + 1) for v in values)
    return True


def _encodable(text: str) -> bool:
    try:
        return text.isascii() or bool(text.encode("utf-8"))
    except UnicodeEncodeError:
        return False


#: Fields a node or an edge may have to be read by the quick path (no attrs, no extras).
_QUICK_NODE_FIELDS = frozenset({"id", "op", "unit", "pcu", "pmu", "latency", "category"})
_QUICK_EDGE_FIELDS = frozenset({"src", "dst", "bandwidth", "bytes", "net", "virtual_channel",
                                "depth", "distance"})


def _quick_nodes(chunk: list, shared: dict) -> list[Node] | None:
    """The nodes of a chunk of :func:`quick_json` entries, built column by column;
    None unless every entry has only plain fields with valid values (the chunk
    then goes entry by entry through the checks that name a problem)."""
    keys = _keys_within(chunk, _QUICK_NODE_FIELDS)
    if keys is None:
        return None
    ids, ops, units = _column(chunk, keys, "id"), _column(chunk, keys, "op", ""), \
        _column(chunk, keys, "unit", "any")
    categories, latency = _column(chunk, keys, "category"), _column(chunk, keys, "latency")
    pcu, pmu = _column(chunk, keys, "pcu"), _column(chunk, keys, "pmu")
    if not (_ids(ids) and _kinds(ops) == {str} and _kinds(units) == {str}
            and set(units) <= _UNITS and _kinds(categories) <= {str, type(None)}
            and _within(pcu, _MAX_PCU) and _within(pmu, _MAX_PMU)
            and _within(latency, _MAX_LATENCY, integer=True)):
        return None
    # one string object per op, unit and category text: 10^6 nodes share a handful
    same = shared.setdefault
    return list(map(Node, ids, map(same, ops, ops), map(same, units, units), pcu, pmu, latency,
                    map(same, categories, categories), repeat(()), repeat(False),
                    repeat(SHARED_EMPTY), repeat(SHARED_EMPTY)))


def _quick_edges(chunk: list, shared: dict) -> list[Edge] | None:
    """The edges of a chunk of :func:`quick_json` entries, built column by column;
    None unless every entry has only plain fields with valid values."""
    keys = _keys_within(chunk, _QUICK_EDGE_FIELDS)
    if keys is None:
        return None
    src, dst, net = _column(chunk, keys, "src"), _column(chunk, keys, "dst"), \
        _column(chunk, keys, "net")
    channel = _column(chunk, keys, "virtual_channel", False)
    bandwidth, size = _column(chunk, keys, "bandwidth"), _column(chunk, keys, "bytes")
    depth, distance = _column(chunk, keys, "depth"), _column(chunk, keys, "distance")
    if not (_ids(src) and _ids(dst) and _kinds(net) <= {str, type(None)}
            and _kinds(channel) == {bool} and _within(bandwidth, 1, above_zero=True)
            and _within(size, _MAX_BYTES) and _within(depth, _MAX_DEPTH, integer=True)
            and _within(distance, _MAX_DISTANCE, integer=True)):
        return None
    bandwidth = [1.0 if b is None else float(b) for b in bandwidth]
    distance = [d or 0 for d in distance] if "distance" in keys else [0] * len(chunk)
    return list(map(Edge, src, dst, bandwidth, size, net, channel, depth, distance,
                    repeat(SHARED_EMPTY), repeat(SHARED_EMPTY)))


def _keys_within(chunk: list, fields: frozenset) -> set[str] | None:
    """The keys the chunk's entries use when every entry is an object whose keys
    are among ``fields``; else None."""
    if _kinds(chunk) != {dict}:
        return None
    keys = set().union(*chunk)
    return keys if keys <= fields else None


def _column(chunk: list, keys: set[str], key: str, default: Any = None) -> list:
    """Every entry's ``key`` (``default`` where it has none)."""
    if key not in keys:
        return [default] * len(chunk)
    try:
        return list(map(itemgetter(key), chunk))     # every entry has it: twice as fast
    except KeyError:
        return [raw.get(key, default) for raw in chunk]


def _kinds(values: list) -> set[type]:
    return set(map(type, values))


def _ids(values: list) -> bool:
    """Non-empty strings (quick_json's text is valid Unicode)."""
    return _kinds(values) == {str} and all(values)


def _within(values: list, maximum: float, *, integer: bool = False,
            above_zero: bool = False) -> bool:
    """Every value is None or a number (a whole one if ``integer``; never a
    bool) from 0 (or above 0) to ``maximum``; quick_json has no NaN."""
    kinds, numbers = _kinds(values), values
    if type(None) in kinds:
        kinds.discard(type(None))
        numbers = [v for v in values if v is not None]
    if not kinds:
        return True
    if not kinds <= ({int} if integer else {int, float}):
        return False
    low = min(numbers)
    return (low > 0 if above_zero else low >= 0) and max(numbers) <= maximum


_UNITS = frozenset(UNIT_KINDS)
_MAX_PCU, _MAX_PMU, _MAX_LATENCY = LIMITS["pcu"], LIMITS["pmu"], LIMITS["latency"]
_MAX_BYTES, _MAX_DEPTH, _MAX_DISTANCE = LIMITS["bytes"], LIMITS["depth"], LIMITS["distance"]


def graph_to_dict(graph: Graph) -> dict[str, Any]:
    """The graph.json v1 form of a graph (defaults left out, unknown fields kept)."""
    nodes = []
    for n in graph.nodes:
        item: dict[str, Any] = {"id": n.id}
        if n.op:
            item["op"] = n.op
        if n.unit != "any":
            item["unit"] = n.unit
        for key in ("pcu", "pmu", "latency", "category", "flops"):
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
    _write_text_atomic(json.dumps(data, indent=indent) + "\n", path)


def _write_text_atomic(text: str, path: str | os.PathLike) -> None:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def graph_json_text(graph: Graph) -> str:
    """The graph.json v1 text of a graph: one node or edge per line.

    Each entry is encoded by the C encoder in one call (an indented dump of
    10^6 nodes goes through the pure-Python encoder and takes half a minute).

    Examples
    --------
    >>> print(graph_json_text(Graph("g", [Node("a"), Node("b")], [Edge("a", "b")])))
    {
     "version": 1,
     "name": "g",
     "nodes": [
      {"id": "a"},
      {"id": "b"}
     ],
     "edges": [
      {"src": "a", "dst": "b"}
     ]
    }
    <BLANKLINE>
    """
    fields = []
    for key, value in graph_to_dict(graph).items():
        if key in ("nodes", "edges") and value:
            entries = ",\n".join("  " + json.dumps(item) for item in value)
            fields.append(f" {json.dumps(key)}: [\n{entries}\n ]")
        else:
            fields.append(f" {json.dumps(key)}: {json.dumps(value)}")
    return "{\n" + ",\n".join(fields) + "\n}\n"


def write_graph(graph: Graph, path: str | os.PathLike) -> None:
    """Write ``graph`` as graph.json v1 (atomically, one node or edge per line)."""
    _write_text_atomic(graph_json_text(graph), path)
