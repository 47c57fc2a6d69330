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
  (:mod:`formulations.estimates`), which knows the target's PMU size: a
  tensor needs ``ceil(size / PMU bytes)`` PMUs up to a tiling limit;
- ``isBackwardNode`` gives the category (``"backward"`` or ``"forward"``), so
  section cuts never mix them.

An edge's ``size`` (bytes moved) becomes ``bytes``; its relative ``bandwidth``
is ``bytes / max bytes`` over the graph, floored at ``1e-6`` so that it stays
in (0, 1]. The edges leaving one node with the same size carry the same tensor
to several consumers, so they form one multi-sink net (``net = "<src>:<k>"``). Node ids are the file's ``name`` when names are unique, else the
numeric id.
"""

from __future__ import annotations

from typing import Any

from model.errors import InputError
from model.graph import Edge, Graph, Node
from model.graphjson import validate_graph

__all__ = ["looks_like_msr_dnn", "parse_msr_dnn", "MIN_BANDWIDTH"]

#: Smallest relative bandwidth given to an edge (bandwidths must be > 0).
MIN_BANDWIDTH = 1e-6


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
    if not isinstance(data.get("nodes"), list):
        raise InputError(file, "nodes", "missing or not a list", "pass an MSR DNN graph file")
    raw_nodes, raw_edges = data["nodes"], data["edges"]
    names = [str(_field(file, raw, "name", f"nodes[{k}]", str(raw.get("id"))))
             for k, raw in enumerate(raw_nodes)]
    use_names = len(set(names)) == len(names)
    ids: dict[Any, str] = {}
    for k, raw in enumerate(raw_nodes):
        key = _field(file, raw, "id", f"nodes[{k}]")
        ids[key] = names[k] if use_names else str(key)
    has_input = {raw.get("destId") for raw in raw_edges if isinstance(raw, dict)}
    nodes = [_node(raw, ids[raw["id"]], names[k], raw["id"] in has_input)
             for k, raw in enumerate(raw_nodes)]
    edges = _edges(file, raw_edges, ids)
    graph = Graph(name, nodes, edges, {"source_format": "msr-dnn"})
    validate_graph(graph, file)
    return graph


def _field(file: str, raw: Any, key: str, where: str, default: Any = ...) -> Any:
    if not isinstance(raw, dict):
        raise InputError(file, where, "expected an object", "pass an MSR DNN graph file")
    if key not in raw:
        if default is not ...:
            return default
        raise InputError(file, f"{where}.{key}", "missing", "pass an MSR DNN graph file")
    return raw[key]


def _node(raw: dict, node_id: str, name: str, has_input: bool) -> Node:
    stored = not has_input
    return Node(
        id=node_id,
        op="tensor" if stored else "operator",
        unit="pmu" if stored else "pcu",
        category="backward" if raw.get("isBackwardNode") else "forward",
        attrs={"name": name, "msr_id": raw["id"], "state_bytes": float(raw.get("size", 0.0)),
               "cpu_latency": raw.get("cpuLatency"), "fpga_latency": raw.get("fpgaLatency")},
    )


def _edges(file: str, raw_edges: list, ids: dict[Any, str]) -> list[Edge]:
    sizes = []
    for k, raw in enumerate(raw_edges):
        size = _field(file, raw, "size", f"edges[{k}]", 0.0)
        if not isinstance(size, (int, float)) or isinstance(size, bool) or size < 0:
            raise InputError(file, f"edges[{k}].size", f"expected bytes >= 0, got {size!r}",
                             "fix the edge size")
        sizes.append(float(size))
    largest = max(sizes, default=0.0) or 1.0
    edges = []
    net_ids: dict[tuple[str, float], str] = {}
    for k, raw in enumerate(raw_edges):
        ends = []
        for key in ("sourceId", "destId"):
            ref = _field(file, raw, key, f"edges[{k}]")
            if ref not in ids:
                raise InputError(file, f"edges[{k}].{key}", f"node {ref!r} does not exist",
                                 "correct the edge or add the node")
            ends.append(ids[ref])
        net = net_ids.setdefault((ends[0], sizes[k]), f"{ends[0]}:{len(net_ids)}")
        edges.append(Edge(ends[0], ends[1], bandwidth=max(sizes[k] / largest, MIN_BANDWIDTH),
                          bytes=sizes[k], net=net, attrs={"cost": raw.get("cost")}))
    return edges
