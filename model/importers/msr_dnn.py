"""Importer for the MSR DNN device-placement graphs (Tarnawski et al., NeurIPS 2020).

The files (``OperatorGraphs/*.json``, ``LayerGraphs/*.json``) hold
``{"maxSizePerFPGA", "maxFPGAs", "maxCPUs", "nodes": [{"id", "name", "size",
"cpuLatency", "fpgaLatency", "supportedOnFpga", "isBackwardNode", "colorClass"}],
"edges": [{"sourceId", "destId", "cost", "size"}]}``.

How a node becomes a unit (the resource estimates, documented in the README):

- a node without inputs is a stored tensor (weights, biases, the network's
  input): ``unit = "pmu"``;
- every other node is an operator: ``unit = "pcu"``;
- ``size`` (bytes of state) is kept as ``attrs.state_bytes`` and the
  latencies as ``attrs.cpu_latency`` / ``attrs.fpga_latency``. The PCU/PMU
  counts are left to the resource estimation model
  (:mod:`formulations.sections.estimates`), which knows the target's PMU size: a
  tensor needs ``ceil(size / PMU bytes)`` PMUs up to a tiling limit;
- ``isBackwardNode`` gives the category (``"backward"`` or ``"forward"``), so
  section cuts never mix them.

An edge's ``size`` (bytes moved) becomes ``bytes``; its relative ``bandwidth``
is ``bytes / max bytes`` over the graph, floored at ``1e-6`` so that it stays
in (0, 1]. The edges leaving one node with the same size carry the same tensor
to several consumers, so they form one multi-sink net (``net = "<src>:<k>"``). Node ids are
the file's ``name`` when names are unique, else the
numeric id.

Every field read is checked (errors name the file, the JSON path and the fix):
an ``id``/``sourceId``/``destId`` is an integer or a string, ids are unique,
``size`` is a finite number of bytes from 0 to 2^62 (``docs/limits.md``), the
latencies and ``cost`` are finite numbers >= 0 or null. The format has no
loop-carried edges, so a cycle is reported with a fix that removes an edge.
"""

from __future__ import annotations

import json
import math
from typing import Any

from hardware.fields import shown_limit, shown_number
from model.errors import InputError
from model.graph import Edge, Graph, Node
from model.graphjson import LIMITS, validate_graph

__all__ = ["looks_like_msr_dnn", "parse_msr_dnn", "MIN_BANDWIDTH"]

#: Smallest relative bandwidth given to an edge (bandwidths must be > 0).
MIN_BANDWIDTH = 1e-6

_FIX = "correct the MSR DNN graph file (see the README's MSR DNN section)"
_CYCLE_FIX = "MSR DNN graphs have no loop-carried edges: remove an edge of the cycle"


def looks_like_msr_dnn(data: Any) -> bool:
    """True when parsed JSON has the MSR DNN layout (``sourceId``/``destId`` edges)."""
    if not isinstance(data, dict) or not isinstance(data.get("edges"), list):
        return False
    if "maxSizePerFPGA" in data:
        return True
    first = data["edges"][0] if data["edges"] else {}
    return isinstance(first, dict) and "sourceId" in first


def parse_msr_dnn(data: Any, file: str, name: str) -> Graph:
    """Convert a parsed MSR DNN graph into a validated :class:`Graph`.

    Examples
    --------
    >>> data = {"nodes": [{"id": 0, "name": "w", "size": 64.0, "isBackwardNode": False},
    ...                   {"id": 1, "name": "conv", "size": 0.0, "isBackwardNode": False}],
    ...         "edges": [{"sourceId": 0, "destId": 1, "cost": 0.1, "size": 64.0}]}
    >>> g = parse_msr_dnn(data, "x.json", "x")
    >>> [(n.id, n.unit) for n in g.nodes], g.edges[0].bandwidth
    ([('w', 'pmu'), ('conv', 'pcu')], 1.0)
    """
    if not isinstance(data, dict):
        raise InputError(file, "", "expected a JSON object with nodes and edges", _FIX)
    raw_nodes, raw_edges = (_list(file, data, key) for key in ("nodes", "edges"))
    keys = [_key(file, _obj(file, raw, f"nodes[{k}]"), "id", f"nodes[{k}]")
            for k, raw in enumerate(raw_nodes)]
    names = [_name(file, raw, key, f"nodes[{k}]")
             for k, (raw, key) in enumerate(zip(raw_nodes, keys))]
    ids = _node_ids(file, keys, names)
    ends = [tuple(_end(file, _obj(file, raw, f"edges[{k}]"), end, f"edges[{k}]", ids)
                  for end in ("sourceId", "destId")) for k, raw in enumerate(raw_edges)]
    has_input = {dst for _, dst in ends}
    nodes = [_node(file, raw, f"nodes[{k}]", ids[key], names[k], ids[key] in has_input)
             for k, (raw, key) in enumerate(zip(raw_nodes, keys))]
    edges = _edges(file, raw_edges, ends)
    graph = Graph(name, nodes, edges, {"source_format": "msr-dnn"})
    validate_graph(graph, file, cycle_fix=_CYCLE_FIX)
    return graph


def _list(file: str, data: dict, key: str) -> list:
    if not isinstance(data.get(key), list):
        raise InputError(file, key, "missing or not a list", f'give "{key}" as a list; {_FIX}')
    return data[key]


def _obj(file: str, raw: Any, where: str) -> dict:
    if not isinstance(raw, dict):
        raise InputError(file, where, "expected an object", _FIX)
    return raw


def _key(file: str, raw: dict, key: str, where: str) -> int | str:
    """A node id as the file writes it: an integer or a string (a list cannot be a key)."""
    if key not in raw:
        raise InputError(file, f"{where}.{key}", "missing", _FIX)
    value = raw[key]
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        raise InputError(file, f"{where}.{key}", f"expected an integer or a string id, got "
                         f"{_json_type(value)}", "write the node's id, e.g. 12")
    return value


def _name(file: str, raw: dict, key: int | str, where: str) -> str:
    name = raw.get("name", str(key))
    if isinstance(name, bool) or not isinstance(name, (str, int, float)):
        raise InputError(file, f"{where}.name", f"expected a string, got {_json_type(name)}",
                         "write the node's name as a string")
    return str(name)


def _node_ids(file: str, keys: list, names: list[str]) -> dict[int | str, str]:
    """The IR id of every file id: the name when names are unique, else the id."""
    use_names = len(set(names)) == len(names)
    ids: dict[int | str, str] = {}
    for k, key in enumerate(keys):
        if key in ids:
            raise InputError(file, f"nodes[{k}].id", f"duplicate id {key!r}",
                             "give every node a unique id")
        ids[key] = names[k] if use_names else str(key)
    return ids


def _end(file: str, raw: dict, key: str, where: str, ids: dict) -> str:
    ref = _key(file, raw, key, where)
    if ref not in ids:
        raise InputError(file, f"{where}.{key}", f"node {ref!r} does not exist",
                         "correct the edge or add the node")
    return ids[ref]


def _json_type(value: Any) -> str:
    """What a JSON value is, in the file's terms (null, text, a list, ...)."""
    if value is None or isinstance(value, bool):
        return json.dumps(value)
    return {dict: "an object", list: "a list", str: f"text {json.dumps(value)[:40]}"}.get(
        type(value), repr(value))


def _number(file: str, raw: dict, key: str, where: str, maximum: int,
            allow_null: bool = False) -> int | float | None:
    """A finite number from 0 to ``maximum`` (``None`` when absent, or null if allowed)."""
    if key not in raw or (raw[key] is None and allow_null):
        return None
    value, limit = raw[key], shown_limit(maximum)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise InputError(file, f"{where}.{key}", f"expected a number, got {_json_type(value)}",
                         f"write a number from 0 to {limit}")
    if isinstance(value, float) and not math.isfinite(value):  # isfinite(10**400) overflows
        raise InputError(file, f"{where}.{key}", f"{value} is not allowed: it must be a finite "
                         "number", f"write a number from 0 to {limit}")
    if not 0 <= value <= maximum:
        raise InputError(file, f"{where}.{key}", f"{shown_number(value)} is outside 0 to {limit}",
                         f"write a number from 0 to {limit}")
    return value


def _node(file: str, raw: dict, where: str, node_id: str, name: str, has_input: bool) -> Node:
    stored = not has_input
    backward = raw.get("isBackwardNode", False)
    if not isinstance(backward, (bool, int)) or backward not in (0, 1):
        raise InputError(file, f"{where}.isBackwardNode",
                         f"expected true or false, got {backward!r}",
                         "write true or false")
    size = _number(file, raw, "size", where, LIMITS["state_bytes"])
    return Node(
        id=node_id,
        op="tensor" if stored else "operator",
        unit="pmu" if stored else "pcu",
        category="backward" if backward else "forward",
        attrs={"name": name, "msr_id": raw["id"], "state_bytes": float(size or 0.0),
               "cpu_latency": _number(file, raw, "cpuLatency", where, LIMITS["latency"], True),
               "fpga_latency": _number(file, raw, "fpgaLatency", where, LIMITS["latency"], True)},
    )


def _edges(file: str, raw_edges: list, ends: list[tuple[str, str]]) -> list[Edge]:
    sizes = [float(_number(file, raw, "size", f"edges[{k}]", LIMITS["bytes"]) or 0.0)
             for k, raw in enumerate(raw_edges)]
    largest = max(sizes, default=0.0) or 1.0
    edges = []
    net_ids: dict[tuple[str, float], str] = {}
    for k, (raw, (src, dst)) in enumerate(zip(raw_edges, ends)):
        net = net_ids.setdefault((src, sizes[k]), f"{src}:{len(net_ids)}")
        cost = _number(file, raw, "cost", f"edges[{k}]", LIMITS["latency"], allow_null=True)
        edges.append(Edge(src, dst, bandwidth=max(sizes[k] / largest, MIN_BANDWIDTH),
                          bytes=sizes[k], net=net, attrs={"cost": cost}))
    return edges
