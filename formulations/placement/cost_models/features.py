"""A placed-and-routed section as the graph the learned cost model reads (source 002, §III-A).

Scope
-----
:func:`section_features` turns one PnR decision -- a section graph, the chip, node -> site
and local edge index -> link ids -- into a :class:`SectionFeatures`: nodes are the *used
functional units* (one per placed node), edges the *used routes* (one per routed graph
edge, producer -> consumer). :func:`pack` concatenates many of them into one flat
:class:`FeatureSet` (offsets per section) that the data set stores and the model batches.

Decisions where the paper leaves a gap (spec digest §9)
------------------------------------------------------
* **Which units are nodes (gap 8).** The placed units only; a route is collapsed into one
  edge whose features say how long it is and how shared its links are. Switches as nodes
  would multiply the graph size by the route length (10-40 on a 16 x 8 chip) for no
  information the edge features do not carry, and inference must stay under 5 ms.
* **Node features.** ``x_{v,F}``: one-hot of the site's unit type (:data:`UNIT_TYPES`).
  ``O(v)``: the index of the operator *class* (:func:`op_class`, keywords of the node's
  ``op`` and id: matmul, softmax, norm, ...) rather than the raw op string, so the blocks
  of the data set and the MSR DNN graphs (whose ops are only "operator"/"tensor") share one
  vocabulary; ``S(v)``: the pipeline stage = longest same-iteration path from the
  section's sources, clipped at ``MAX_STAGE - 1`` (gap: unseen stage indices). Fixed
  numeric features (justified additions, :data:`NODE_NUMERIC`): the node's compute time
  relative to the slowest one of the section (FLOPs over the PCU rate, or its traffic at
  one word per lane without FLOPs: the label's own normaliser, so the model sees *which*
  unit is the bottleneck), its PMU port time on the same scale, whether it is that
  bottleneck, in/out degree, and its *own bound*: the slowest compute time over the
  node's own stage time (compute, PMU ports, or the time its outputs occupy their busiest
  link) -- what the node alone allows of the normalised throughput. These are the
  "performance annotations" the paper says it can do without; with our simulator's labels
  the cross-validation measured them worth keeping (benchmarks/results/cost_model.md).
* **Edge features (gap 9).** Route length in links (the paper's feature), plus
  (:data:`EDGE_NUMERIC`): the edge's transfer time at one channel's rate relative to the
  bottleneck compute time, the heaviest link's total load (bytes of every net on it over
  its channels) relative to the bottleneck -- the time-sharing the paper's §II-B example
  is about -- the most nets sharing one of its links, and whether it rides the scalar
  network, 1 / the edge's stage-buffer depth (a shallow buffer exposes the route's
  latency, a deep one hides it), and the edge's own bound (the slowest compute over its
  time on its busiest link, shared as the simulator shares it). Times are log1p-compressed:
  they span orders of
  magnitude.
* **Section features (a deviation, measured).** The analytic model's prediction
  (:func:`~formulations.placement.cost_models.analytic.predict_normalised`) is one fixed
  input of the regressor, so the network learns a correction to the heuristic rather than
  the whole rule: on our simulator's labels the GNN alone was worse than the analytic
  model on GEMM blocks (fold-0 RE 0.087 against 0.061; Spearman better everywhere), see
  benchmarks/results/cost_model.md. The paper's model is ``use_analytic=False``
  (:class:`~formulations.placement.cost_models.learned.CostModelConfig`).
* **Direction (gap 5).** Stored directed; the model aggregates over both directions.

Everything here is numpy: the core install computes features without JAX.

Examples
--------
>>> from hardware import build_fabric, load_hardware
>>> from model.graph import Graph, Node, Edge
>>> g = Graph("t", [Node("a", op="matmul", unit="pcu", flops=1000.0),
...                 Node("b", op="output", unit="pmu")], [Edge("a", "b", bytes=64.0)])
>>> fab = build_fabric(load_hardware("tiny"))
>>> f = section_features(g, fab, {"a": "U0_0", "b": "U0_1"},
...                      {0: ["U0_0->S0_1", "S0_1->U0_1"]})
>>> f.unit.tolist(), f.stage.tolist(), [OP_CLASSES[k] for k in f.op]
([0, 1], [0, 1], ['matmul', 'tensor'])
>>> f.src.tolist(), f.dst.tolist(), float(f.edge_x[0, 0])
([0], [1], 2.0)
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from formulations.placement.cost_models.analytic import predict_normalised
from hardware import RduFabric
from model.graph import Graph

__all__ = ["UNIT_TYPES", "OP_CLASSES", "MAX_STAGE", "NODE_NUMERIC", "EDGE_NUMERIC", "GRAPH_NUMERIC",
           "SectionFeatures", "FeatureSet", "section_features", "op_class", "stages", "pack"]

#: Site unit types of the one-hot ``x_{v,F}`` (the fabric's kinds).
UNIT_TYPES = ("pcu", "pmu", "fcmu", "agcu")
#: Operator classes of the learned op embedding, index 0 for anything unrecognised.
OP_CLASSES = ("other", "tensor", "matmul", "elementwise", "activation", "softmax", "norm",
              "reduce", "shape")
_KEYWORDS = (
    ("softmax", ("softmax",)),
    ("norm", ("layernorm", "norm", "_bn", "bn_", "batchnorm")),
    ("matmul", ("matmul", "gemm", "dense", "linear", "conv", "einsum")),
    ("activation", ("relu", "gelu", "tanh", "sigmoid", "erf", "act", "swish")),
    ("reduce", ("reduce", "mean", "sum", "pool", "max")),
    ("shape", ("reshape", "transpose", "concat", "split", "slice", "gather", "view",
               "permute")),
    ("elementwise", ("add", "mul", "sub", "div", "pow", "sqrt", "exp", "scale")),
    ("tensor", ("tensor", "weight", "input", "output", "bias", "const", "param", "load",
                "store")),
)
#: Stage indices at or above this share the last embedding row.
MAX_STAGE = 32
#: Fixed numeric node features: compute time / the slowest's, log1p(PMU port time / the
#: slowest compute), is the slowest, in/out degree / 4, the node's own bound (the slowest
#: compute over its own stage time: compute, PMU ports or output drain, at least a cycle).
NODE_NUMERIC = 6
#: Fixed edge features: route links, log1p(transfer / bottleneck), log1p(heaviest link load
#: / bottleneck), most nets on one of its links / 4, scalar network, 1 / buffer depth, the
#: edge's own bound (the slowest compute over its time on its busiest link, at most 1).
EDGE_NUMERIC = 7
#: Fixed section features: the analytic model's prediction (see the module docstring).
GRAPH_NUMERIC = 1


@dataclass(frozen=True)
class SectionFeatures:
    """One PnR decision as a graph: ``n`` used units, ``e`` used routes."""

    unit: np.ndarray     # (n,) index into UNIT_TYPES
    op: np.ndarray       # (n,) index into OP_CLASSES
    stage: np.ndarray    # (n,) pipeline stage, < MAX_STAGE
    node_x: np.ndarray   # (n, NODE_NUMERIC)
    src: np.ndarray      # (e,) producer node index
    dst: np.ndarray      # (e,) consumer node index
    edge_x: np.ndarray   # (e, EDGE_NUMERIC)
    graph_x: np.ndarray = field(default_factory=lambda: np.zeros(GRAPH_NUMERIC, np.float32))

    @property
    def nodes(self) -> int:
        return len(self.unit)

    @property
    def edges(self) -> int:
        return len(self.src)


@dataclass(frozen=True)
class FeatureSet:
    """Many sections, concatenated: section ``k`` owns nodes ``node_ptr[k]:node_ptr[k+1]``
    and edges ``edge_ptr[k]:edge_ptr[k+1]`` (its ``src``/``dst`` are local indices)."""

    unit: np.ndarray
    op: np.ndarray
    stage: np.ndarray
    node_x: np.ndarray
    src: np.ndarray
    dst: np.ndarray
    edge_x: np.ndarray
    node_ptr: np.ndarray
    edge_ptr: np.ndarray
    graph_x: np.ndarray          # (sections, GRAPH_NUMERIC)

    def __len__(self) -> int:
        return len(self.node_ptr) - 1

    def section(self, k: int) -> SectionFeatures:
        """Section ``k`` as a :class:`SectionFeatures`."""
        a, b = int(self.node_ptr[k]), int(self.node_ptr[k + 1])
        c, d = int(self.edge_ptr[k]), int(self.edge_ptr[k + 1])
        return SectionFeatures(self.unit[a:b], self.op[a:b], self.stage[a:b], self.node_x[a:b],
                               self.src[c:d], self.dst[c:d], self.edge_x[c:d], self.graph_x[k])

    def subset(self, index) -> "FeatureSet":
        """The sections ``index`` (in that order)."""
        return pack([self.section(int(k)) for k in index])

    def arrays(self) -> dict[str, np.ndarray]:
        """The fields by name (for ``np.savez_compressed``)."""
        return {k: getattr(self, k) for k in _FIELDS}

    @classmethod
    def from_arrays(cls, data) -> "FeatureSet":
        """Inverse of :meth:`arrays` (a dict or an ``np.load`` result)."""
        got = {k: np.asarray(data[k]) for k in _FIELDS if k in data}
        got.setdefault("graph_x", np.zeros((len(got["node_ptr"]) - 1, GRAPH_NUMERIC),
                                           np.float32))
        return cls(**got)


_FIELDS = ("unit", "op", "stage", "node_x", "src", "dst", "edge_x", "node_ptr", "edge_ptr",
           "graph_x")


def op_class(op: str, node_id: str = "") -> int:
    """Index in :data:`OP_CLASSES` of an operator, from keywords of ``op`` then its id.

    >>> [OP_CLASSES[op_class(o)] for o in ("MatMul", "gelu", "LayerNorm", "weight", "foo")]
    ['matmul', 'activation', 'norm', 'tensor', 'other']
    >>> OP_CLASSES[op_class("operator", "bert.encoder.layer.0.attention.self.Softmax3")]
    'softmax'
    """
    for text in (op.lower(), node_id.lower().rsplit(".", 1)[-1], node_id.lower()):
        for name, words in _KEYWORDS:
            if any(w in text for w in words):
                return OP_CLASSES.index(name)
    return 0


def stages(graph: Graph) -> dict[str, int]:
    """Pipeline stage of every node: the longest same-iteration path from a source of the
    section (loop-carried edges ignored), in edges."""
    level = {n: 0 for n in graph.node_ids}
    for n in graph.topological_order():
        for i in graph.out_edges(n):
            e = graph.edges[i]
            if not e.loop_carried and e.dst in level:
                level[e.dst] = max(level[e.dst], level[n] + 1)
    return level


def _edge_bytes(edge, spec) -> float:
    """Bytes per sample: ``bytes``, else ``bandwidth`` flits of the edge's network."""
    return float(edge.bytes) if edge.bytes is not None else edge.bandwidth * _rate(
        spec, edge.network)


def _node_times(graph: Graph, fabric: RduFabric, placement: dict[str, str]
                ) -> tuple[np.ndarray, np.ndarray]:
    """Per node, cycles per sample of compute (a PCU: FLOPs over its rate, or without
    FLOPs one 32-bit word per lane per cycle of its larger traffic) and of its PMU ports
    (bytes out over the read rate, bytes in over the write rate) -- the rules of the
    label's normaliser."""
    spec = fabric.spec
    rate = float(getattr(spec, "flops_per_pcu_cycle", 0.0) or 2 * spec.pcu_lanes * spec.pcu_stages)
    read = float(getattr(spec, "pmu_read_rate", 0.0) or _rate(spec, "vector"))
    write = float(getattr(spec, "pmu_write_rate", 0.0) or _rate(spec, "vector"))
    index = {n: k for k, n in enumerate(graph.node_ids)}
    b_in, b_out = np.zeros(len(index)), np.zeros(len(index))
    for e in graph.edges:
        if e.src != e.dst:
            b_out[index[e.src]] += _edge_bytes(e, spec)
            b_in[index[e.dst]] += _edge_bytes(e, spec)
    compute, ports = np.zeros(len(index)), np.zeros(len(index))
    for k, n in enumerate(graph.nodes):
        kind = fabric.site(placement[n.id]).unit
        if kind == "pcu" or (kind == "fcmu" and n.unit != "pmu"):
            compute[k] = (n.flops / rate if n.flops is not None
                          else max(b_in[k], b_out[k]) / (4 * spec.pcu_lanes))
        elif kind in ("pmu", "fcmu"):
            ports[k] = max(b_out[k] / read, b_in[k] / write)
    return compute, ports


def _link_loads(graph: Graph, spec, routes: dict[int, list[str]]
                ) -> tuple[dict[str, float], dict[str, int]]:
    """Per link: cycles of traffic per sample (each net once, over its channels) and nets."""
    load: dict[str, float] = {}
    nets: dict[str, int] = {}
    net_of = graph.net_of_edge
    seen: set[tuple[int, str]] = set()
    for i in sorted(routes):
        e = graph.edges[i]
        channels = max(1, spec.networks[e.network].channels)
        for link in routes[i]:
            if (net_of[i], link) in seen:
                continue
            seen.add((net_of[i], link))
            load[link] = load.get(link, 0.0) + _edge_bytes(e, spec) / _rate(
                spec, e.network) / channels
            nets[link] = nets.get(link, 0) + 1
    return load, nets


def _rate(spec, network: str) -> float:
    if hasattr(spec, "link_rate"):
        return float(spec.link_rate(network))
    return spec.networks[network].width_bits / 8


def section_features(graph: Graph, fabric: RduFabric, placement: dict[str, str],
                     routes: dict[int, list[str]]) -> SectionFeatures:
    """The PnR graph of one placed and routed section (see the module docstring).

    ``placement``: node id -> site id (every node); ``routes``: local edge index -> link
    ids (``pipeline.rdu.section_pass.SectionOutcome.paths``); an edge without a route has
    length 0 and no sharing.
    """
    spec = fabric.spec
    index = {n: k for k, n in enumerate(graph.node_ids)}
    unit = np.array([UNIT_TYPES.index(fabric.site(placement[n.id]).unit) for n in graph.nodes],
                    dtype=np.int32)
    op = np.array([op_class(n.op, n.id) for n in graph.nodes], dtype=np.int32)
    level = stages(graph)
    stage = np.array([min(MAX_STAGE - 1, level[n]) for n in graph.node_ids], dtype=np.int32)
    compute, ports = _node_times(graph, fabric, placement)
    bottleneck = float(compute.max(initial=0.0)) or float(ports.max(initial=0.0)) or 1.0
    keep = [i for i, e in enumerate(graph.edges) if e.src != e.dst]
    src = np.array([index[graph.edges[i].src] for i in keep], dtype=np.int32)
    dst = np.array([index[graph.edges[i].dst] for i in keep], dtype=np.int32)
    load, nets = _link_loads(graph, spec, routes)
    edge_x = np.zeros((len(keep), EDGE_NUMERIC))
    drain = np.zeros(len(index))
    for row, i in enumerate(keep):
        e, path = graph.edges[i], routes.get(i, [])
        transfer = _edge_bytes(e, spec) / _rate(spec, e.network)
        heaviest = max((load[link] for link in path), default=0.0)
        occupancy = max(transfer, heaviest) if path else 0.0
        drain[src[row]] = max(drain[src[row]], occupancy)
        edge_x[row] = (len(path), np.log1p(transfer / bottleneck),
                       np.log1p(heaviest / bottleneck),
                       max((nets[link] for link in path), default=0) / 4.0,
                       float(e.network == "scalar"), 1.0 / max(1, e.depth or 1),
                       min(1.0, bottleneck / max(occupancy, 1e-9)))
    deg_in = np.bincount(dst, minlength=len(index)) / 4.0
    deg_out = np.bincount(src, minlength=len(index)) / 4.0
    rel = compute / bottleneck
    own_bound = np.minimum(1.0, bottleneck / np.maximum.reduce([compute, ports, drain,
                                                                np.ones(len(index))]))
    node_x = np.stack([rel, np.log1p(ports / bottleneck), (rel >= 1.0 - 1e-9).astype(float),
                       deg_in, deg_out, own_bound], axis=1)
    analytic = predict_normalised(graph, spec, placement, routes, fabric=fabric)
    return SectionFeatures(unit, op, stage, node_x.astype(np.float32), src, dst,
                           edge_x.astype(np.float32), np.array([analytic], dtype=np.float32))


def pack(sections: list[SectionFeatures]) -> FeatureSet:
    """Concatenate sections into one :class:`FeatureSet`."""
    node_ptr = np.cumsum([0] + [s.nodes for s in sections]).astype(np.int64)
    edge_ptr = np.cumsum([0] + [s.edges for s in sections]).astype(np.int64)

    def cat(name, width=None, dtype=np.int32):
        parts = [getattr(s, name) for s in sections]
        if not parts:
            return np.zeros((0,) if width is None else (0, width), dtype=dtype)
        return np.concatenate(parts).astype(dtype)

    graph_x = np.array([s.graph_x for s in sections], dtype=np.float32).reshape(
        len(sections), GRAPH_NUMERIC)
    return FeatureSet(cat("unit"), cat("op"), cat("stage"),
                      cat("node_x", NODE_NUMERIC, np.float32), cat("src"), cat("dst"),
                      cat("edge_x", EDGE_NUMERIC, np.float32), node_ptr, edge_ptr, graph_x)
