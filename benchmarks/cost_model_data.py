"""The learned cost model's data set (source 002, §IV-A): placed blocks labelled by the simulator.

One command writes it::

    python -m benchmarks.cost_model_data --samples 5000 --seed 0 --out data/cost_model/samples.npz

Every *block* (:mod:`benchmarks.cost_model_blocks`: GEMM, MLP, MHA, FFN of BERT/GPT-2
shapes, families in turn) is placed :data:`PER_BLOCK` times by a placer drawn with random
parameters (:func:`random_placement`):

* ``anneal`` -- the VPR annealer from the sorted-order greedy, with a random move budget
  (50..20,000), initial temperature (0.5..30 standard deviations), range floor, seed and
  congestion weight (0..3 x the default), the paper's "randomized search parameters";
* ``greedy`` -- the greedy placer on a shuffled order;
* ``random`` -- every node on a random compatible site (the bad end of the range);
* ``model`` -- the placement model (exact / LNS) with a short random budget;

then routed by the negotiated-congestion router (a sample whose routing fails is
redrawn: every sample is a legal PnR decision) and labelled by
:func:`sim.perf.simulate_section` (``normalised``: throughput over the slowest-stage
compute bound). The analytic model's prediction and the placement's wirelength are
computed by the benchmark from the stored decision.

The file (``np.savez_compressed``) holds the :class:`FeatureSet` arrays plus per sample
``label``, ``throughput``, ``wirelength``, ``family`` (index in :data:`FAMILIES`),
``block``, ``method`` (index in :data:`METHODS`) and the decision itself (``site`` per
node, ``route_link``/``route_ptr`` per edge: :func:`decision_of` rebuilds it, so the
analytic model or new features can be computed later without simulating again). Same seed and
sample count, same file (the block of sample ``i`` and its draws come from
``(seed, i)`` alone, whatever the number of worker processes).
"""

from __future__ import annotations

import argparse
import io
import json
import sys
import time
from multiprocessing import get_context
from pathlib import Path

import numpy as np

from benchmarks.cost_model_blocks import FAMILIES, random_block
from formulations.placement import (PLACERS, PlacementError, anneal, greedy_place,
                                    placement_problem, problem_cost)
from formulations.placement.cost_models.features import FeatureSet, pack, section_features
from formulations.solver import Budget
from model.graph import Graph
from formulations.routing import ROUTERS
from formulations.solver import SolveSettings
from formulations.sorter.priority_sort import sort_nodes
from hardware import RduFabric, build_fabric, load_hardware
from model.files import write_bytes_atomic
from sim.perf import simulate_section

__all__ = ["METHODS", "PER_BLOCK", "random_placement", "label_sample", "generate",
           "sample_block", "decision_of", "save_samples", "load_samples", "load_meta", "refeature",
           "main"]

#: Placements drawn per block.
PER_BLOCK = 8
#: Placement methods, in the order of the ``method`` column, with their draw weights.
METHODS = ("anneal", "greedy", "random", "model")
WEIGHTS = (0.7, 0.1, 0.1, 0.1)
#: Redraws of a sample whose routing fails before the block is given up.
MAX_TRIES = 6


def random_placement(graph, fabric: RduFabric, rng: np.random.Generator
                     ) -> tuple[dict[str, str], str]:
    """One placement of ``graph`` by a placer drawn with random parameters (module doc)."""
    method = METHODS[int(rng.choice(len(METHODS), p=WEIGHTS))]
    order = sort_nodes(graph).order
    if method == "random":
        return _random_sites(graph, fabric, rng), method
    if method == "greedy":
        shuffled = [order[k] for k in rng.permutation(len(order))]
        return greedy_place(graph, fabric, shuffled), method
    if method == "model":
        settings = SolveSettings(backend="cp-sat", time_limit=float(rng.uniform(0.05, 0.3)),
                                 seed=int(rng.integers(1 << 30)))
        return PLACERS["model"](graph, fabric, order, settings).placement, method
    weight = float(rng.choice([0.0, rng.uniform(0.0, 3.0)]))
    problem = placement_problem(graph, fabric, congestion_weight=None if weight else 0.0)
    if weight:
        problem = placement_problem(graph, fabric,
                                    congestion_weight=problem.congestion_weight * weight)
    start = greedy_place(graph, fabric, order)
    if rng.random() < 0.3:
        start = _random_sites(graph, fabric, rng)
    moves = int(np.exp(rng.uniform(np.log(50), np.log(20000))))
    best, _, _ = anneal(problem, fabric, start, Budget(60.0), moves=moves,
                        seed=int(rng.integers(1 << 30)),
                        temperature_factor=float(rng.uniform(0.5, 30.0)),
                        range_floor=int(rng.integers(1, 3)))
    return best, method


def _random_sites(graph, fabric: RduFabric, rng: np.random.Generator) -> dict[str, str]:
    """Every node on a random free compatible site (most constrained kinds first)."""
    free = [s.id for s in fabric.sites]
    taken: set[str] = set()
    out = {}
    nodes = sorted(graph.nodes, key=lambda n: (n.unit == "any", n.id))
    for node in nodes:
        options = [s for s in free if s not in taken and fabric.can_host(s, node.unit)]
        if not options:
            raise PlacementError(node.id, node.unit, len(nodes), len(taken))
        site = options[int(rng.integers(len(options)))]
        taken.add(site)
        out[node.id] = site
    return out


def label_sample(graph, fabric: RduFabric, placement: dict[str, str], routes: dict[int, list[str]]
                 ) -> dict[str, float]:
    """The simulator's label and the baselines' numbers for one PnR decision."""
    perf = simulate_section(graph, fabric.spec, placement, routes, fabric=fabric)
    return {"label": float(perf.normalised), "throughput": float(perf.samples_per_cycle),
            "wirelength": float(problem_cost(placement_problem(graph, fabric), placement))}


def sample_block(seed: int, block: int) -> Graph:
    """Block ``block`` of the data set of ``seed``: its family in turn, its shapes and
    its stage-buffer depths (1, 2 or 4 per edge, as the buffer pass would leave them)
    drawn from ``(seed, block)``."""
    rng = np.random.default_rng([seed, block])
    graph = random_block(FAMILIES[block % len(FAMILIES)], rng)
    depths = rng.choice([1, 2, 4], size=len(graph.edges), p=rng.dirichlet([1, 1, 1]))
    for e, d in zip(graph.edges, depths):
        e.depth = int(d)
    return graph


def _sample(seed: int, index: int, hardware: str):
    """Sample ``index``: its block, a legal random PnR decision, features and numbers;
    None when no draw routes."""
    fabric = _fabric(hardware)
    family = (index // PER_BLOCK) % len(FAMILIES)
    graph = sample_block(seed, index // PER_BLOCK)
    rng = np.random.default_rng([seed, index, 1])
    for _ in range(MAX_TRIES):
        try:
            placement, method = random_placement(graph, fabric, rng)
        except PlacementError:
            return None
        routing = ROUTERS["negotiated"](graph, fabric, placement, None)
        if routing.success:
            numbers = label_sample(graph, fabric, placement, routing.paths)
            numbers |= {"family": family, "block": index // PER_BLOCK,
                        "method": METHODS.index(method), "nodes": len(graph.nodes)}
            decision = _decision(graph, fabric, placement, routing.paths)
            return section_features(graph, fabric, placement, routing.paths), numbers, decision
    return None


_FABRICS: dict = {}


def _fabric(hardware: str):
    if hardware not in _FABRICS:
        _FABRICS[hardware] = build_fabric(load_hardware(hardware))
    return _FABRICS[hardware]


def _chunk(args) -> list:
    seed, indices, hardware = args
    return [_sample(seed, i, hardware) for i in indices]


def generate(samples: int, seed: int = 0, hardware: str = "plasticine", workers: int = 1,
             progress=None) -> tuple[FeatureSet, dict[str, np.ndarray]]:
    """``samples`` labelled PnR decisions (see the module docstring); ``workers`` processes
    (1-2 on this machine). Samples whose block cannot be routed are skipped, and more are
    drawn until ``samples`` are collected."""
    found: list = []
    start = 0
    chunk = 16 * PER_BLOCK
    context = get_context("spawn")      # fork is unsafe once JAX has started threads
    pool = context.Pool(workers) if workers > 1 else None
    try:
        while len(found) < samples:
            need = samples - len(found)
            count = max(chunk, (need // chunk + 1) * chunk)
            jobs = [(seed, range(a, min(start + count, a + chunk)), hardware)
                    for a in range(start, start + count, chunk)]
            results = pool.imap(_chunk, jobs) if pool else map(_chunk, jobs)
            for part in results:
                found += [r for r in part if r is not None]
                if progress:
                    progress(min(len(found), samples), samples)
            start += count
    finally:
        if pool:
            pool.close()
    found = found[:samples]
    features = pack([f for f, _, _ in found])
    columns = {key: np.array([n[key] for _, n, _ in found]) for key in found[0][1]}
    columns |= _stack_decisions([d for _, _, d in found])
    return features, columns


def _decision(graph, fabric: RduFabric, placement, routes) -> tuple[np.ndarray, list[np.ndarray]]:
    """The PnR decision as site indices per node and link indices per edge."""
    site = {s.id: k for k, s in enumerate(fabric.sites)}
    link = _link_index(fabric)
    return (np.array([site[placement[n]] for n in graph.node_ids], dtype=np.int32),
            [np.array([link[x] for x in routes.get(i, [])], dtype=np.int32)
             for i in range(len(graph.edges))])


def _link_index(fabric: RduFabric) -> dict[str, int]:
    key = id(fabric)
    if key not in _LINKS:
        _LINKS[key] = {x: k for k, x in enumerate(fabric.links)}
    return _LINKS[key]


_LINKS: dict = {}


def _stack_decisions(decisions) -> dict[str, np.ndarray]:
    routes = [r for _, per_edge in decisions for r in per_edge]
    return {"site": np.concatenate([s for s, _ in decisions]),
            "route_ptr": np.cumsum([0] + [len(r) for r in routes]).astype(np.int64),
            "route_link": np.concatenate(routes + [np.zeros(0, np.int32)]).astype(np.int32)}


def decision_of(features: FeatureSet, columns: dict[str, np.ndarray], k: int, fabric: RduFabric,
                seed: int) -> tuple[Graph, dict[str, str], dict[int, list[str]]]:
    """Sample ``k`` back as (block graph, placement, routes), for models that read the
    decision itself (the analytic model, the simulator)."""
    graph = sample_block(seed, int(columns["block"][k]))
    a, b = int(features.node_ptr[k]), int(features.node_ptr[k + 1])
    placement = {n: fabric.sites[int(s)].id
                 for n, s in zip(graph.node_ids, columns["site"][a:b])}
    e0 = int(features.edge_ptr[k])
    ptr, links = columns["route_ptr"], columns["route_link"]
    routes = {i: [fabric.links[int(x)] for x in links[ptr[e0 + i]:ptr[e0 + i + 1]]]
              for i in range(len(graph.edges))}
    return graph, placement, routes


def save_samples(path: str | Path, features: FeatureSet, columns: dict[str, np.ndarray],
                 meta: dict) -> None:
    """Write the data set (compressed ``.npz``, atomically)."""
    buffer = io.BytesIO()
    np.savez_compressed(buffer, __meta__=np.array(json.dumps(meta)), **features.arrays(),
                        **{f"col_{k}": v for k, v in columns.items()})
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    write_bytes_atomic(path, buffer.getvalue())


def load_samples(path: str | Path) -> tuple[FeatureSet, dict[str, np.ndarray]]:
    """Read a file written by :func:`save_samples`: the features and the columns."""
    with np.load(path, allow_pickle=False) as data:
        features = FeatureSet.from_arrays(data)
        columns = {k[4:]: np.asarray(data[k]) for k in data.files if k.startswith("col_")}
    return features, columns


def load_meta(path: str | Path) -> dict:
    """The generation parameters stored in a data set file (seed, samples, hardware)."""
    with np.load(path, allow_pickle=False) as data:
        return json.loads(str(data["__meta__"]))


def refeature(path: str | Path) -> int:
    """Recompute the features of a data set file from its stored decisions (after a change
    of :mod:`formulations.placement.cost_models.features`; the labels stay); returns the
    number of samples."""
    features, columns = load_samples(path)
    meta = load_meta(path)
    fabric = _fabric(meta["hardware"])
    sections = []
    for k in range(len(features)):
        graph, placement, routes = decision_of(features, columns, k, fabric, meta["seed"])
        sections.append(section_features(graph, fabric, placement, routes))
    fresh = pack(sections)
    save_samples(path, fresh, columns, meta)
    return len(fresh)


def main(argv: list[str] | None = None) -> int:
    """The command line (``python -m benchmarks.cost_model_data --help``)."""
    parser = argparse.ArgumentParser(prog="python -m benchmarks.cost_model_data",
                                     description=__doc__.split("\n")[0])
    parser.add_argument("--samples", type=int, default=5000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--hardware", default="plasticine")
    parser.add_argument("--workers", type=int, default=1, help="processes (1-2 here)")
    parser.add_argument("--out", default="data/cost_model/samples.npz")
    parser.add_argument("--refeature", action="store_true",
                        help="recompute the features of --out from its stored decisions")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    if args.refeature:
        print(f"recomputed {refeature(args.out)} samples' features", file=sys.stderr)
        return 0

    def say(done, total):
        print(f"\r{done}/{total} samples, {time.perf_counter() - started:.0f} s", end="",
              file=sys.stderr, flush=True)

    features, columns = generate(args.samples, args.seed, args.hardware, args.workers, say)
    meta = {"samples": args.samples, "seed": args.seed, "hardware": args.hardware,
            "seconds": round(time.perf_counter() - started, 1)}
    save_samples(args.out, features, columns, meta)
    print(f"\nwrote {args.out}: {len(features)} samples in {meta['seconds']} s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
