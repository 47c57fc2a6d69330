"""Building blocks of the learned cost model's data set (source 002, §IV-A).

GEMM, MLP, multi-head attention (MHA) and feed-forward (FFN) blocks of transformer
shapes (BERT-base/large and GPT-2 widths, a head's 64 and smaller slices, context
128..512), written as ``model.graph.Graph`` sections the RDU placer can take: every
operator becomes one or more PCU nodes with ``flops`` per sample, every tensor that lives
on chip (inputs, weights, key/value caches, outputs) one or more PMU nodes, and every edge
carries ``bytes`` per sample (bf16, 2 bytes an element).

A sample is a micro-batch of ``tokens`` token vectors streaming through the section
(1..32): the weights stay in their PMUs and are read for every micro-batch, so a tile's
compute (``2 tokens d_in d_out / par`` FLOPs) and its weight stream (``2 d_in d_out /
par`` bytes) are of one order on an RDU, and the placement -- which routes share a link,
how far a credit travels -- decides how close a section gets to its compute bound.

A weight matrix is split over ``par`` PCU/PMU pairs (the tiling a compiler picks); each
tile reads the whole input (one multicast net per producer) and writes its slice of the
output, so the blocks have the fan-out/fan-in shapes of real sections.

Examples
--------
>>> g = gemm_block(4, 768, 768, par=2)
>>> sorted({n.unit for n in g.nodes}), len(g.nodes), len(g.edges), len(g.nets)
(['pcu', 'pmu'], 6, 6, 5)
>>> sum(n.flops or 0 for n in g.nodes) == 2 * 4 * 768 * 768
True
"""

from __future__ import annotations

import numpy as np

from model.graph import Edge, Graph, Node

__all__ = ["FAMILIES", "gemm_block", "mlp_block", "ffn_block", "mha_block", "random_block"]

#: The block families, in the order of the data set's ``family`` column.
FAMILIES = ("gemm", "mlp", "mha", "ffn")
#: Bytes of one element (bf16).
ELEMENT = 2
#: Widths: head slices, BERT-base/large and GPT-2 widths.
WIDTHS = (32, 64, 128, 256, 768, 1024)
#: Tokens per sample (micro-batch) and attention context lengths.
TOKENS = (1, 2, 4, 8, 16)
SEQS = (128, 256, 512)


class _Builder:
    """Collects nodes and edges with unique ids."""

    def __init__(self, name: str):
        self.name, self.nodes, self.edges = name, [], []

    def pmu(self, nid: str, op: str = "tensor") -> str:
        self.nodes.append(Node(nid, op=op, unit="pmu"))
        return nid

    def pcu(self, nid: str, op: str, flops: float) -> str:
        self.nodes.append(Node(nid, op=op, unit="pcu", flops=float(max(1.0, flops))))
        return nid

    def edge(self, src: str, dst: str, nbytes: float, net: str | None = None) -> None:
        self.edges.append(Edge(src, dst, bytes=float(max(4.0, nbytes)), net=net))

    def graph(self) -> Graph:
        top = max(e.bytes for e in self.edges)
        for e in self.edges:
            e.bandwidth = max(1e-6, e.bytes / top)
        return Graph(self.name, self.nodes, self.edges)


def _linear(b: _Builder, prefix: str, inputs: list[str], seq: int, d_in: int, d_out: int,
            par: int, op: str = "matmul") -> list[str]:
    """``par`` matmul tiles of a ``d_in x d_out`` weight (one weight PMU each); every tile
    reads all ``inputs`` (each input's slice multicast to the tiles: one net per input)
    and returns its output slice (``seq``: tokens per sample)."""
    outs = []
    share = len(inputs)
    for t in range(par):
        w = b.pmu(f"{prefix}.w{t}", "weight")
        mm = b.pcu(f"{prefix}.mm{t}", op, 2.0 * seq * d_in * d_out / par)
        b.edge(w, mm, ELEMENT * d_in * d_out / par)
        for src in inputs:
            b.edge(src, mm, ELEMENT * seq * d_in / share, net=f"{src}>{prefix}")
        outs.append(mm)
    return outs


def _pointwise(b: _Builder, nid: str, op: str, inputs: list[str], seq: int, width: int,
               flops_per_element: float) -> str:
    node = b.pcu(nid, op, flops_per_element * seq * width)
    for src in inputs:
        b.edge(src, node, ELEMENT * seq * width / len(inputs))
    return node


def _store(b: _Builder, nid: str, inputs: list[str], seq: int, width: int) -> str:
    node = b.pmu(nid, "output")
    for src in inputs:
        b.edge(src, node, ELEMENT * seq * width / len(inputs))
    return node


def gemm_block(seq: int, d_in: int, d_out: int, par: int = 1) -> Graph:
    """One linear layer: input PMU, ``par`` weight PMUs and matmul PCUs, output PMU."""
    b = _Builder(f"gemm_{seq}x{d_in}x{d_out}_p{par}")
    x = b.pmu("x", "input")
    _store(b, "y", _linear(b, "l0", [x], seq, d_in, d_out, par), seq, d_out)
    return b.graph()


def mlp_block(seq: int, width: int, depth: int, par: int = 1) -> Graph:
    """``depth`` x (linear + ReLU), each linear over ``par`` tiles."""
    b = _Builder(f"mlp_{seq}x{width}_d{depth}_p{par}")
    cur = [b.pmu("x", "input")]
    for k in range(depth):
        tiles = _linear(b, f"l{k}", cur, seq, width, width, par)
        cur = [_pointwise(b, f"relu{k}", "relu", tiles, seq, width, 1.0)]
    _store(b, "y", cur, seq, width)
    return b.graph()


def ffn_block(seq: int, d_model: int, d_ff: int, par: int = 2) -> Graph:
    """Transformer FFN: linear d->d_ff, GELU, linear d_ff->d, residual add, layer norm."""
    b = _Builder(f"ffn_{seq}x{d_model}x{d_ff}_p{par}")
    x = b.pmu("x", "input")
    up = _linear(b, "up", [x], seq, d_model, d_ff, par)
    act = [_pointwise(b, f"gelu{t}", "gelu", [u], seq, d_ff // par, 8.0)
           for t, u in enumerate(up)]
    down = _linear(b, "down", act, seq, d_ff, d_model, par)
    add = _pointwise(b, "add", "add", down + [x], seq, d_model, 1.0)
    norm = _pointwise(b, "norm", "layernorm", [add], seq, d_model, 8.0)
    _store(b, "y", [norm], seq, d_model)
    return b.graph()


def mha_block(tokens: int, d_model: int, heads: int, par: int = 1, groups: int = 2,
              context: int = 128) -> Graph:
    """Multi-head attention over a ``context``-long key/value cache: Q, K, V projections;
    per head group QK^T (reading the group's key cache), softmax, x V (reading its value
    cache); the output projection (``groups`` head groups share one unit each)."""
    b = _Builder(f"mha_{tokens}x{d_model}_h{heads}_g{groups}_p{par}_c{context}")
    x = b.pmu("x", "input")
    q, k, v = (_linear(b, name, [x], tokens, d_model, d_model, par) for name in "qkv")
    d_group = d_model // groups
    ctx = []
    for g in range(groups):
        k_cache, v_cache = b.pmu(f"kcache{g}", "tensor"), b.pmu(f"vcache{g}", "tensor")
        for src in k:
            b.edge(src, k_cache, ELEMENT * tokens * d_model / (groups * len(k)))
        for src in v:
            b.edge(src, v_cache, ELEMENT * tokens * d_model / (groups * len(v)))
        scores = b.pcu(f"qk{g}", "matmul", 2.0 * tokens * context * d_group)
        for src in q:
            b.edge(src, scores, ELEMENT * tokens * d_model / (groups * len(q)))
        b.edge(k_cache, scores, ELEMENT * context * d_group)
        soft = _pointwise(b, f"softmax{g}", "softmax", [scores], tokens,
                          context * heads // groups, 5.0)
        att = b.pcu(f"av{g}", "matmul", 2.0 * tokens * context * d_group)
        b.edge(soft, att, ELEMENT * tokens * context * heads / groups)
        b.edge(v_cache, att, ELEMENT * context * d_group)
        ctx.append(att)
    out = _linear(b, "o", ctx, tokens, d_model, d_model, par)
    _store(b, "y", out, tokens, d_model)
    return b.graph()


def random_block(family: str, rng: np.random.Generator) -> Graph:
    """A block of ``family`` with shapes drawn from BERT/GPT-2 widths and sequences."""
    seq = int(rng.choice(TOKENS))
    width = int(rng.choice(WIDTHS))
    if family == "gemm":
        return gemm_block(seq, width, int(rng.choice(WIDTHS)), par=int(rng.integers(1, 9)))
    if family == "mlp":
        return mlp_block(seq, width, depth=int(rng.integers(2, 6)), par=int(rng.integers(1, 5)))
    if family == "ffn":
        return ffn_block(seq, width, 4 * width, par=int(rng.choice([2, 3, 4, 6])))
    if family == "mha":
        heads = int(rng.choice([8, 12, 16]))
        return mha_block(seq, width, heads, par=int(rng.integers(1, 4)),
                         groups=int(rng.choice([1, 2, 4])), context=int(rng.choice(SEQS)))
    raise ValueError(f"unknown block family {family!r}; use one of {FAMILIES}")
