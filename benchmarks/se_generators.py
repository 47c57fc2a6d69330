"""Generators of Streaming Engine instruction graphs (source 004 digest §8).

* :func:`ifft_graph` -- a radix-2 decimation-in-time IFFT at the level of SE instructions
  (``(MS_in1 x MS_in2) + AL_in2``): per butterfly with a non-trivial twiddle, four multiply(-add)
  instructions for ``t = w * b`` and four add/subtract instructions for ``a +- t``; twiddles are
  tile-memory constants (``w<stage>_<k>_re`` / ``_im``), so the instructions that read the same
  twiddle part must share a tile (R1), while ``a`` and ``t`` each feed two siblings (R3).
* :func:`se_random_dag` -- random DAGs with in-degree <= 3 (the instruction's operands),
  out-degree <= ``max_out`` (siblings need distinct tiles within reach), a few sources (SDF
  starts) and tile-memory variables, some of them shared between instructions that are not
  siblings (so every generated graph respects R1/R3 by construction).

Caveats: the IFFT's ``1/N`` scaling is left out (fold it into the twiddles); with loads, the
``2N`` input loads are the SDF starts, so ``points <= 8`` fits 16 tiles. Everything is
deterministic for a seed.

Examples
--------
>>> g = ifft_graph(4)
>>> len(g.nodes), len(g.edges)
(28, 38)
>>> g = se_random_dag(20, seed=1)
>>> len(g.nodes), max(len(g.in_edges(n)) for n in g.node_ids) <= 3
(20, True)
"""

from __future__ import annotations

import numpy as np

from model.graph import Edge, Graph, Node

__all__ = ["ifft_graph", "se_random_dag"]


def ifft_graph(points: int, loads: bool = True) -> Graph:
    """A radix-2 IFFT of ``points`` (a power of two) as SE instructions.

    Parameters
    ----------
    points : int
        2, 4, 8, ...
    loads : bool
        Start with one load instruction per real input (``re``/``im``); otherwise the first
        stage reads its inputs from tile memory (variables ``x<i>_re``/``_im``).

    Examples
    --------
    >>> [len(ifft_graph(n).nodes) for n in (2, 4, 8)]
    [8, 28, 84]
    """
    if points < 2 or points & (points - 1):
        raise ValueError(f"points must be a power of two >= 2, got {points}")
    nodes: list[Node] = []
    edges: list[Edge] = []
    stages = points.bit_length() - 1
    order = [int(f"{i:0{stages}b}"[::-1], 2) for i in range(points)]  # bit reversal
    value: list[tuple[str | None, str | None]] = []
    for i in range(points):
        x = order[i]
        if loads:
            nodes += [Node(f"ld{x}_re", "load"), Node(f"ld{x}_im", "load")]
            value.append((f"ld{x}_re", f"ld{x}_im"))
        else:
            value.append((None, f"x{x}"))
    for s in range(stages):
        half = 1 << s
        for start in range(0, points, 2 * half):
            for j in range(half):
                k = j * (points // (2 * half))
                a, b = start + j, start + j + half
                value[a], value[b] = _butterfly(nodes, edges, s, a, k, value[a], value[b],
                                                twiddle=(k != 0))
    return Graph(f"ifft{points}", nodes, edges, {"generator": "ifft_graph", "points": points})


def _butterfly(nodes: list[Node], edges: list[Edge], s: int, a: int, k: int, va, vb,
               twiddle: bool):
    """Append one butterfly; returns the (re, im) producers of its two outputs."""
    tag = f"s{s}_b{a}"

    def add(name: str, op: str, inputs, mem=()):
        mem = tuple(mem)
        for src in inputs:
            if src is None:
                continue
            if src.startswith("x") and src[1:].isdigit():  # an input read from tile memory
                mem += (f"{src}_in",)
            else:
                edges.append(Edge(src, name))
        nodes.append(Node(name, op, mem_vars=mem))
        return name

    if twiddle:
        wr, wi = f"w{s}_{k}_re", f"w{s}_{k}_im"
        x1 = add(f"{tag}_m1", "mul", [vb[1]], [wi])          # -wi * bi
        tr = add(f"{tag}_tr", "fma", [vb[0], x1], [wr])      # wr * br + x1
        y1 = add(f"{tag}_m2", "mul", [vb[0]], [wi])          # wi * br
        ti = add(f"{tag}_ti", "fma", [vb[1], y1], [wr])      # wr * bi + y1
        t = (tr, ti)
    else:
        t = vb
    out_a = (add(f"{tag}_ar", "add", [va[0], t[0]]), add(f"{tag}_ai", "add", [va[1], t[1]]))
    out_b = (add(f"{tag}_br", "sub", [va[0], t[0]]), add(f"{tag}_bi", "sub", [va[1], t[1]]))
    return out_a, out_b


def se_random_dag(n: int, seed: int = 0, max_in: int = 3, max_out: int = 4,
                  sources: int | None = None, skip_prob: float = 0.1, const_prob: float = 0.3,
                  share_prob: float = 0.15, max_share: int = 3) -> Graph:
    """A random layered instruction DAG for the Streaming Engine.

    The nodes get a hidden 1-D position (a tile of a 16-tile line) and a layer; node ``i``
    draws 1..``max_in`` operands (in-degree 1, 2, 3 with probabilities 0.4, 0.4, 0.2) among
    nodes of the previous layer (or, with probability ``skip_prob``, the one before) whose hidden
    position is within 2 and whose fan-out is below ``max_out``. The first layer (``sources``
    nodes, default ``min(6, max(1, n // 8))``) has no operands and starts the data-flow. A node
    reads its own constant with probability ``const_prob`` and joins the variable of a node of
    the same hidden position with probability ``share_prob`` when no two members of the group
    share a parent and at most one starts the data-flow (groups of at most ``max_share``).

    Caveat: uniformly random DAGs (operands anywhere among the previous nodes) almost never
    respect the synchronous fabric's reach of 2 tiles at a small II; the hidden positions keep
    the edges local, as a real kernel laid out on a line would be. The hidden layout is not a
    solution (slots and timing are left to the mapper).

    Examples
    --------
    >>> g = se_random_dag(12, seed=3)
    >>> sorted({len(g.successors(v)) <= 4 for v in g.node_ids})
    [True]
    """
    rng = np.random.default_rng(seed)
    n_sources = sources if sources is not None else min(6, max(1, n // 8))
    n_sources = max(1, min(n_sources, n))
    pos = [int(x) for x in rng.integers(0, 16, size=n)]
    layer = [0] * n
    width = max(n_sources, 2)
    parents: list[set[int]] = []
    out_deg = [0] * n
    edges: list[Edge] = []
    for i in range(n):
        chosen: set[int] = set()
        if i >= n_sources:
            layer[i] = 1 + (i - n_sources) // width
            want = layer[i] - (2 if layer[i] >= 2 and rng.random() < skip_prob else 1)
            pool = [j for j in range(i) if layer[j] == want and out_deg[j] < max_out]
            if not pool:
                pool = [j for j in range(i) if layer[j] == layer[i] - 1] or [i - 1]
            anchor = int(rng.choice(pool))
            pos[i] = int(np.clip(pos[anchor] + rng.integers(-1, 2), 0, 15))
            near = [j for j in pool if abs(pos[j] - pos[i]) <= 2 and j != anchor]
            k = int(rng.choice([1, 2, 3], p=[0.4, 0.4, 0.2]))
            extra = rng.choice(near, size=min(k - 1, max_in - 1, len(near)), replace=False)
            chosen = {anchor} | set(int(x) for x in np.atleast_1d(extra))
        parents.append(chosen)
        for j in sorted(chosen):
            out_deg[j] += 1
            edges.append(Edge(f"n{j}", f"n{i}"))
    groups = _shared_groups(rng, n, parents, set(range(n_sources)), pos, share_prob, max_share)
    nodes = []
    for i in range(n):
        mem = []
        if rng.random() < const_prob:
            mem.append(f"c{i}")
        if i in groups:
            mem.append(f"v{groups[i]}")
        nodes.append(Node(f"n{i}", "op", mem_vars=tuple(mem)))
    return Graph(f"se-random-{n}-s{seed}", nodes, edges,
                 {"generator": "se_random_dag", "seed": seed})


def _shared_groups(rng, n: int, parents: list[set[int]], source_ids: set[int], pos: list[int],
                   share_prob: float, max_share: int) -> dict[int, int]:
    group_of: dict[int, int] = {}
    members: dict[int, list[int]] = {}
    for i in range(1, n):
        if rng.random() >= share_prob:
            continue
        same = [j for j in range(i) if pos[j] == pos[i]]
        if not same:
            continue
        j = int(rng.choice(same))
        g = group_of.get(j, j)
        mates = members.get(g, [j])
        clash = any(parents[i] & parents[m] for m in mates)
        both_start = i in source_ids and any(m in source_ids for m in mates)
        if clash or both_start or len(mates) >= max_share:
            continue
        members[g] = mates + [i]
        group_of[j] = group_of[i] = g
    return group_of
