"""What a cut costs in time: the section model's objective once its sections fit.

Sections run one after another on a batch; a section streams its samples through a
pipeline of stages, so its time per sample is its slowest stage, or its DRAM traffic
across cuts when that is slower (:mod:`sim.perf` simulates exactly this; the cut's own
estimate below is written from the hardware numbers, not taken from the simulator, which
stays independent of the models it judges). Per sample:

``time(cut) = sum over sections k of T_k``, ``T_k = max(max_{v in k} stage_v, dram_k)``,

where ``stage_v`` is node v's stage cycles (:func:`stage_cycles`: its FLOPs over its PCUs,
else the streaming rule of one 32-bit word per lane per cycle; a PMU node its bytes over
the PMU ports; every node at least its widest output's cycles on one link channel) and
``dram_k`` the cycles its bytes across cuts take at the DRAM rate (a crossing edge is
written by its source's section and read by its sink's). Both are linear in the section
model: ``T_k >= stage_v x[v][k]`` and ``T_k >= c sum_e bytes_e d[e][k]`` with
``d[e][k] >= |x[u][k] - x[v][k]|``. Reconfiguration is the same for every cut of one
section count, so the count phase (fewest sections) already minimises it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from model.graph import Graph

__all__ = ["CutCosts", "cut_costs", "stage_cycles", "cut_time"]


@dataclass(frozen=True)
class CutCosts:
    """Cycles per sample: each node's stage, and DRAM per byte across a cut; ``outside``
    holds, per node, bytes it exchanges with nodes outside the graph being cut (a window
    of the search: those edges always cross)."""

    stage: dict[str, float]
    dram_per_byte: float
    outside: dict[str, float] = field(default_factory=dict)

    def for_window(self, graph: Graph, sub: Graph) -> "CutCosts":
        """The costs of window ``sub`` of ``graph``: its nodes' edges to the rest cross."""
        inside = set(sub.node_ids)
        outside: dict[str, float] = {}
        for e in graph.edges:
            if (e.src in inside) != (e.dst in inside) and e.src != e.dst:
                v = e.src if e.src in inside else e.dst
                outside[v] = outside.get(v, 0.0) + _bytes(e)
        return CutCosts({v: self.stage[v] for v in inside if v in self.stage},
                        self.dram_per_byte, outside)


def _bytes(edge) -> float:
    return float(edge.bytes) if edge.bytes is not None else float(edge.bandwidth)


def stage_cycles(graph: Graph, node_id: str, spec) -> float:
    """Node ``node_id``'s stage cycles per sample on the RDU ``spec`` (at least 1).

    Examples
    --------
    >>> from hardware import load_hardware
    >>> from model.graph import Edge, Node
    >>> g = Graph("g", [Node("a", unit="pcu", flops=3840), Node("b", unit="pcu")],
    ...           [Edge("a", "b", bytes=4096)])
    >>> spec = load_hardware("plasticine")         # 192 FLOPs per PCU cycle, 16 lanes
    >>> stage_cycles(g, "a", spec), stage_cycles(g, "b", spec)
    (64.0, 64.0)
    """
    node = graph.node(node_id)
    rate = spec.link_rate("vector")
    moved_in = sum(_bytes(graph.edges[i]) for i in graph.in_edges(node_id))
    moved_out = max((_bytes(graph.edges[i]) for i in graph.out_edges(node_id)), default=0.0)
    drain = moved_out / rate
    if node.unit == "pmu":
        pmus = max(1.0, node.pmu or 1.0)
        own = max(moved_out / (pmus * spec.pmu_read_rate), moved_in / (pmus * spec.pmu_write_rate))
    elif node.unit == "agcu":
        own = max(moved_in, moved_out) / spec.dram_rate * spec.clock_hz
    else:
        pcus = max(1.0, node.pcu or 1.0)
        own = (node.flops / (pcus * spec.flops_per_pcu_cycle) if node.flops is not None
               else max(moved_in, moved_out) / (4 * spec.pcu_lanes * pcus))
    return max(1.0, own, drain)


def cut_costs(graph: Graph, spec) -> CutCosts:
    """Every node's stage cycles and the DRAM cycles per byte on ``spec`` (an RDU)."""
    return CutCosts({v: stage_cycles(graph, v, spec) for v in graph.node_ids},
                    spec.clock_hz / spec.dram_rate)


def cut_time(graph: Graph, assignment: dict[str, int], costs: CutCosts) -> float:
    """``time(cut)`` of the module docstring: cycles per sample of ``assignment``.

    >>> from model.graph import Edge, Node
    >>> g = Graph("g", [Node("a"), Node("b"), Node("c")], [Edge("a", "b", bytes=10),
    ...                                                     Edge("b", "c", bytes=10)])
    >>> costs = CutCosts({"a": 5.0, "b": 1.0, "c": 3.0}, dram_per_byte=0.1)
    >>> cut_time(g, {"a": 0, "b": 0, "c": 1}, costs)      # max(5, 1) + max(3, 1)
    8.0
    """
    slowest: dict[int, float] = {}
    dram: dict[int, float] = {}
    for v, k in assignment.items():
        slowest[k] = max(slowest.get(k, 0.0), costs.stage.get(v, 0.0))
        dram[k] = dram.get(k, 0.0) + costs.outside.get(v, 0.0)
    for e in graph.edges:
        ks, kd = assignment.get(e.src), assignment.get(e.dst)
        if ks is not None and kd is not None and ks != kd:
            dram[ks] += _bytes(e)
            dram[kd] += _bytes(e)
    return sum(max(slowest[k], dram[k] * costs.dram_per_byte) for k in slowest)
