"""The analytic cost model: source 002's heuristic baseline, written down.

Scope
-----
:func:`predict_normalised` scores one placed-and-routed section the way the paper's
production heuristic is described (§I, §II-B, §IV-A b): every operator's speed *in
isolation* by a rule of its kind, plus a graph-level estimate of placement density and
routing congestion. It returns a predicted normalised throughput in [0, 1] -- the same
quantity the simulator labels (throughput over the slowest stage's compute-only rate) --
and is an independent estimate: it never imports :mod:`sim` (package rule).

The rules (cycles per sample; hardware numbers from :class:`hardware.RduSpec`)
-----------------------------------------------------------------------------
* **Operator speed, in isolation.** A node on PCUs: ``flops / (pcus *
  flops_per_pcu_cycle)``; without ``flops`` one 32-bit word per lane per cycle,
  ``bytes / (4 * pcu_lanes * pcus)`` (``bytes``: the larger of its input and output bytes).
  A node on a PMU: output bytes over ``pmus * pmu_read_rate`` or input bytes over ``pmus *
  pmu_write_rate``, whichever is larger. PCU lanes and PMU banks (``attrs["unit_of"]``)
  count for their node. Every stage takes at least one cycle.
* **Transfers.** A net's bytes over one channel (``link_rate``), times its *congestion*:
  the largest ``nets on the link / channels`` over the links of its route (at least 1).
  Nets are counted, not weighted by bytes: the heuristic does not know that a small net
  leaves most of a shared channel to a large one.
* **Transmit latency.** An edge of ``hops`` links and buffer depth ``d`` (edge ``depth``,
  else 1) holds its producer for ``(t_producer + hops * hop_cycles) / d`` per sample.
* **Density.** The share of unit sites in the placement's bounding box that the section
  uses; above :data:`DENSITY_FREE` every estimate grows by :data:`DENSITY_WEIGHT` per unit
  of excess density (crowded placements route worse).

``predicted = compute_bound_time / max(every estimate above) * density factor`` in [0, 1].

Caveats
-------
What the heuristic does not see, by design (the paper's point, §II-B): flows that share a
link in proportion to their bytes, back-pressure through the buffers of reconvergent paths,
recurrences over loop-carried edges, and DRAM. The learned model is meant to learn those
from the simulator's labels.

Examples
--------
>>> from hardware import load_hardware
>>> from model.graph import Graph, Node, Edge
>>> g = Graph("chain", [Node("a", unit="pcu", flops=384), Node("b", unit="pcu", flops=1920)],
...           [Edge("a", "b", bytes=64, depth=4)])
>>> est = analytic_estimate(g, load_hardware("plasticine"), {"a": "U0_0", "b": "U0_2"},
...                         {0: ["U0_0->S0_1", "S0_1->S0_2", "S0_2->U0_2"]})
>>> est.compute_cycles, round(est.density, 3), round(est.predicted, 3)   # 2 of 3 sites used
(10.0, 0.667, 0.96)
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import Mapping

from hardware import RduFabric, build_fabric
from model.graph import Graph

__all__ = ["AnalyticEstimate", "analytic_estimate", "predict_normalised", "DENSITY_FREE",
           "DENSITY_WEIGHT"]

#: Placement density (used sites over sites in the bounding box) that costs nothing.
DENSITY_FREE = 0.5
#: Growth of every estimate per unit of density above :data:`DENSITY_FREE`.
DENSITY_WEIGHT = 0.25


@dataclass(frozen=True)
class AnalyticEstimate:
    """The heuristic's numbers for one section (cycles per sample unless stated)."""

    predicted: float            # normalised throughput in [0, 1]
    compute_cycles: float       # the slowest stage's compute-only time (the label's bound)
    period: float               # the predicted time per sample
    operator_cycles: float      # slowest operator in isolation
    transfer_cycles: float      # slowest net with its congestion
    latency_cycles: float       # worst transmit latency over buffer depth
    congestion: float           # most nets per channel on one link
    density: float              # used sites over sites in the bounding box


def _owner(graph: Graph, node_id: str) -> str:
    owner = graph.node(node_id).attrs.get("unit_of")
    return owner if isinstance(owner, str) and owner in graph else node_id


def _operator_cycles(graph: Graph, spec, fabric: RduFabric, placement) -> tuple[dict[str, float],
                                                                      dict[str, float]]:
    """Per stage: time in isolation, and compute-only time (PCU stages only)."""
    units: dict[str, dict[str, int]] = defaultdict(lambda: {"pcu": 0, "pmu": 0})
    for node in graph.nodes:
        kind = fabric.site(placement[node.id]).unit
        if kind == "fcmu":
            kind = "pmu" if node.unit == "pmu" else "pcu"
        if kind in ("pcu", "pmu"):
            units[_owner(graph, node.id)][kind] += 1
    bytes_in: dict[str, float] = defaultdict(float)
    bytes_out: dict[str, float] = defaultdict(float)
    for net in graph.nets:
        src = _owner(graph, net.driver)
        sinks = [i for i in net.edges if _owner(graph, graph.edges[i].dst) != src]
        if sinks:
            bytes_out[src] += max(_bytes(graph.edges[i], spec) for i in net.edges)
        for i in sinks:
            bytes_in[_owner(graph, graph.edges[i].dst)] += _bytes(graph.edges[i], spec)
    own, compute = {}, {}
    for v in dict.fromkeys(_owner(graph, n) for n in graph.node_ids):
        node, u = graph.node(v), units[v]
        t = 0.0
        if u["pcu"]:
            work = node.flops if node.flops is not None else None
            t = (work / (u["pcu"] * spec.flops_per_pcu_cycle) if work is not None
                 else max(bytes_in[v], bytes_out[v]) / (4 * spec.pcu_lanes * u["pcu"]))
            compute[v] = max(1.0, t)
        if fabric.site(placement[v]).unit in ("pmu", "fcmu") and node.unit != "pcu":
            pmus = max(1, u["pmu"])
            t = max(t, bytes_out[v] / (pmus * spec.pmu_read_rate),
                    bytes_in[v] / (pmus * spec.pmu_write_rate))
        own[v] = max(1.0, t)
    return own, compute


def _bytes(edge, spec) -> float:
    return float(edge.bytes) if edge.bytes is not None else edge.bandwidth * spec.link_rate(
        edge.network)


def _congestion(graph: Graph, spec, routes) -> tuple[list[float], float]:
    """Per net: its largest nets-per-channel over its links; and the chip's largest."""
    links_of = []
    count: dict[tuple[str, str], int] = defaultdict(int)
    for net in graph.nets:
        network = graph.edges[net.edges[0]].network
        links = {link for i in net.edges for link in routes.get(i, ())}
        links_of.append((links, network))
        for link in links:
            count[(link, network)] += 1
    over = {key: n / spec.networks[key[1]].channels for key, n in count.items()}
    per_net = [max([1.0] + [over[(link, network)] for link in links])
               for links, network in links_of]
    return per_net, max(over.values(), default=0.0)


def _density(graph: Graph, fabric: RduFabric, placement) -> float:
    sites = [fabric.site(placement[v]) for v in graph.node_ids]
    units = [s for s in sites if s.unit != "agcu"]
    if not units:
        return 0.0
    rows = max(s.row for s in units) - min(s.row for s in units) + 1
    cols = max(s.col for s in units) - min(s.col for s in units) + 1
    return len({s.id for s in units}) / (rows * cols)


def analytic_estimate(graph: Graph, spec, placement: dict[str, str],
                      routes: Mapping[int, list[str]],
                      depths: Mapping[int, int] | None = None, *, fabric: RduFabric | None = None
                      ) -> AnalyticEstimate:
    """The heuristic's estimate of one placed-and-routed section (see the module docstring).

    Parameters are those of :func:`sim.perf.simulate_section`.
    """
    fabric = fabric if fabric is not None else build_fabric(spec)
    depths = depths or {}
    own, compute = _operator_cycles(graph, spec, fabric, placement)
    per_net, congestion = _congestion(graph, spec, routes)
    transfer = 0.0
    for k, net in enumerate(graph.nets):
        moves = any(placement[graph.edges[i].dst] != placement[net.driver] for i in net.edges)
        if moves:
            size = max(_bytes(graph.edges[i], spec) for i in net.edges)
            transfer = max(transfer, size / spec.link_rate(graph.edges[net.edges[0]].network)
                           * per_net[k])
    latency = 0.0
    for i, e in enumerate(graph.edges):
        src, dst = _owner(graph, e.src), _owner(graph, e.dst)
        if src != dst and not e.loop_carried:
            depth = max(1, depths.get(i, e.depth if e.depth is not None else 1))
            hops = len(routes.get(i, ()))
            latency = max(latency, (own[src] + hops * spec.hop_cycles) / depth)
    density = _density(graph, fabric, placement)
    bound = max(compute.values()) if compute else max(own.values(), default=1.0)
    slowest = max(own.values(), default=1.0)
    period = max(slowest, transfer, latency) * (
        1 + DENSITY_WEIGHT * max(0.0, density - DENSITY_FREE))
    return AnalyticEstimate(min(1.0, bound / period), bound, period, slowest, transfer,
                            latency, congestion, density)


def predict_normalised(graph: Graph, spec, placement: dict[str, str],
                       routes: Mapping[int, list[str]],
                       depths: Mapping[int, int] | None = None, *,
                       fabric: RduFabric | None = None) -> float:
    """Predicted normalised throughput in [0, 1] of a placed-and-routed section.

    Parameters
    ----------
    graph : Graph
        The section (stage buffers, PCU lanes and PMU banks included).
    spec : RduSpec
    placement : dict
        Node id -> site id; every node placed.
    routes : mapping of int to list of str
        Edge index -> link ids.
    depths : mapping of int to int, optional
        Buffer depth per edge (default: the edge's ``depth``, else 1).
    fabric : RduFabric, optional

    Returns
    -------
    float
    """
    return analytic_estimate(graph, spec, placement, routes, depths, fabric=fabric).predicted
