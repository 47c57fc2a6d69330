"""The cut ceiling's floor (benchmarks/cut_ceiling.py) against every cut of small graphs."""

from __future__ import annotations

import itertools
import random

import numpy as np
import pytest

from benchmarks.cut_ceiling import Relaxation, floor_by_count
from benchmarks.interval_cut import Intervals, lazy_order, least_cut
from formulations.sections.costs import cut_costs, cut_time
from formulations.sections.problem import Capacity, unit_demand
from hardware import load_hardware
from model.graph import Edge, Graph, Node

SPEC = load_hardware("plasticine")
CAP = Capacity(pcu=3, pmu=2, total=5, agcu=4)


def _fits(graph: Graph, members: list[str]) -> bool:
    use = {"pcu": 0.0, "pmu": 0.0, "any": 0.0}
    for v in members:
        for key in use:
            use[key] += unit_demand(graph.node(v))[key]
    return (use["pcu"] <= CAP.pcu and use["pmu"] <= CAP.pmu
            and sum(use.values()) <= CAP.total
            and len({graph.node(v).category for v in members}) <= 1)


def _best_cut(graph: Graph, most: int) -> float:
    """The least cut_time over every valid cut into at most ``most`` sections."""
    ids, costs, best = graph.node_ids, cut_costs(graph, SPEC), float("inf")
    for labels in itertools.product(range(most), repeat=len(ids)):
        where = dict(zip(ids, labels))
        if any(where[e.src] > where[e.dst] for e in graph.edges):
            continue
        if all(_fits(graph, [v for v in ids if where[v] == k]) for k in set(labels)):
            best = min(best, cut_time(graph, where, costs))
    return best


def _random_graph(seed: int) -> Graph:
    """Seven nodes: streaming and FLOPs PCU nodes, PMU tensors, two categories in order,
    edges forward in a random order with random bytes."""
    rng = random.Random(seed)
    nodes = []
    for i in range(7):
        unit = rng.choice(["pcu", "pcu", "pmu"])
        flops = rng.choice([None, rng.randint(1, 5) * 192_000]) if unit == "pcu" else None
        nodes.append(Node(f"n{i}", unit=unit, flops=flops,
                          category="forward" if i < 4 else "backward"))
    edges = [Edge(f"n{i}", f"n{j}", bytes=rng.randint(1, 9) * 64_000)
             for i in range(7) for j in range(i + 1, 7) if rng.random() < 0.35]
    return Graph(f"g{seed}", nodes, edges)


@pytest.mark.parametrize("seed", range(12))
def test_floor_never_above_the_best_cut(seed):
    graph = _random_graph(seed)
    for most in (3, 4):
        best = _best_cut(graph, most)
        rel = Relaxation(graph, SPEC, CAP)
        floor = floor_by_count(rel, [most])[most]
        weaker = floor_by_count(rel, [most], pairs=False)[most]
        assert (weaker <= floor * (1 + 1e-9)
                and floor <= best * (1 + 1e-9)), (seed, most, floor, best)


def test_floor_is_the_best_cut_of_a_chain():
    """On a chain every node is a milestone and every section a hull, so the relaxation
    leaves nothing out: the floor is the best cut (which of the heavy 6400-byte nets stay
    on chip, with three PCUs a section)."""
    sizes = [640, 6400, 640, 640, 6400, 640]
    nodes = [Node(f"c{i}", unit="pcu") for i in range(7)]
    edges = [Edge(f"c{i}", f"c{i + 1}", bytes=b) for i, b in enumerate(sizes)]
    graph = Graph("chain", nodes, edges)
    rel = Relaxation(graph, SPEC, CAP)
    for most in (3, 4, 5):
        assert floor_by_count(rel, [most])[most] == pytest.approx(_best_cut(graph, most))


@pytest.mark.parametrize("seed", range(8))
def test_interval_cut_is_the_best_cut_of_its_order(seed):
    """The programme's least sum is the least cut_time over every cut of the lazy order
    into at most 4 contiguous intervals that fit, and never below the ceiling's floor."""
    graph = _random_graph(seed)
    order = lazy_order(graph)
    position = {v: i for i, v in enumerate(order)}
    assert all(position[e.src] < position[e.dst] for e in graph.edges)
    costs, best = cut_costs(graph, SPEC), float("inf")
    for count in range(4):
        for bounds in itertools.combinations(range(1, 7), count):
            where = {v: sum(position[v] >= b for b in bounds) for v in order}
            if all(_fits(graph, [v for v in order if where[v] == k]) for k in range(count + 1)):
                best = min(best, cut_time(graph, where, costs))
    iv = Intervals(graph, SPEC, order, CAP)
    if best == float("inf"):
        with pytest.raises(ValueError):
            least_cut(iv, 4, np.zeros((8, 8), dtype=int))
        return
    value, _ = least_cut(iv, 4, np.zeros((8, 8), dtype=int))
    assert value == pytest.approx(best)
    assert floor_by_count(Relaxation(graph, SPEC, CAP), [4])[4] <= value * (1 + 1e-9)
