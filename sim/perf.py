"""How fast will it run? A discrete-event performance simulator of RDU mappings.

The simulator executes a mapped section sample by sample (issue 19, source 002 §III and
§IV-A) and knows nothing of the models that produced the mapping: it reads the graph, the
hardware description (:class:`hardware.RduSpec`'s performance numbers) and the answer
(placement node -> site, routes edge -> link ids, stage-buffer depths).

The model
---------
*Stages.* Every node of a section is a pipeline stage, except the PCU lanes and PMU banks a
node was given (nodes whose ``attrs["unit_of"]`` names it), which are folded into their node:
they raise its PAR factor. A stage's time per sample (cycles, at least 1) is the largest of

* compute: the node's ``flops`` over its PCUs' FLOP rate,
  ``flops / (pcus * spec.flops_per_pcu_cycle)``. A node without ``flops`` takes the
  streaming rule instead: its larger of bytes in and bytes out, one 32-bit word per lane per
  cycle, ``bytes / (4 * pcu_lanes * pcus)`` (the report counts the nodes that used it);
* PMU (a node on a PMU site: stored tensors, stage buffers): bytes read over
  ``pmus * spec.pmu_read_rate`` and bytes written over ``pmus * spec.pmu_write_rate``, the
  larger of the two (read and write ports work at once);
* transfer: the time its output nets occupy their links (below); a producer cannot emit
  faster than its output drains;
* DRAM (a node on an AGCU): its bytes at ``spec.dram_rate``.

*Links, time-shared.* A net carries ``bytes`` per sample (an edge without ``bytes`` carries
``bandwidth * link_rate`` bytes, one flit per sample at bandwidth 1) along the union of its
edges' routes. A link has ``channels`` channels of ``spec.link_rate(network)`` bytes per
cycle; one net uses at most one channel, and the nets on a link share its channels in
proportion to their bytes (source 002 §III: routes are time-shared at run time). A net's
time on link ``l`` is ``max(bytes, load_l / channels) / rate`` (``load_l``: bytes of every
net on ``l``), and its occupancy is the largest over its links. Two nets that each need a
whole channel and share a one-channel link get half each. An edge's latency adds
``spec.hop_cycles`` per link of its route. An edge with no route between two placed sites
is taken as a shortest route (``fabric.distance + 2`` links) that shares no link.

*Back-pressure with times* (the model of :mod:`sim.backpressure`, now timed): every edge's
stage buffer holds ``depth`` samples (default the edge's ``depth``, else 1). Writing sample
``k`` takes a slot when the producer starts it; the consumer frees the slot when it starts
sample ``k`` (it takes the sample into its own pipeline). With ``s_v(k)`` the start of
sample ``k`` on stage ``v``, ``t_v`` its time per sample and ``x_e`` the route latency:

* ``s_v(k) >= s_v(k-1) + t_v`` (one sample at a time);
* ``s_v(k) >= s_u(k - distance_e) + t_u + x_e`` for every edge ``u -> v`` (the sample is
  complete at ``v``; loop-carried edges wait ``distance`` samples back);
* ``s_u(k) >= s_v(k - depth_e) + x_e`` for every same-iteration edge (a credit comes back).

These events are run forward sample by sample until the period (cycles between samples)
settles; for unit times and no links this is exactly the untimed simulator's FIG. 11
behaviour (throughput 1/2 unbalanced, 1 balanced). The throughput is the settled rate, the
latency the first sample's trip through the empty pipeline.

*Sections and DRAM* (:func:`simulate_mapping`): sections run one after another on a batch of
``batch`` samples. Each section streams its cut-crossing values through DRAM at
``spec.dram_rate`` alongside the pipeline (a value is written once and read once per
section that uses it), loads its tensors' ``attrs.state_bytes`` from DRAM once per batch,
and costs ``spec.reconfig_seconds`` to configure.

*Label.* ``normalised = throughput / compute_bound`` where ``compute_bound`` is the slowest
stage's compute-only rate (source 002 §IV-A; a section that computes nothing uses its
slowest PMU stage). It lies in [0, 1].

Caveats
-------
* Whole samples: a consumer starts a sample when the producer has finished it, so latency
  is pessimistic for streamed operators; throughput is what the period gives.
* Link sharing is a fluid (proportional-share) model, not flit-level arbitration.
* A node's ``latency`` field is not read (it means different things across importers).

Examples
--------
A producer of 384 FLOPs (2 cycles on one plasticine PCU) feeding a consumer of 1920 FLOPs
(10 cycles): the chain runs at the slower stage.

>>> from hardware import load_hardware
>>> from model.graph import Graph, Node, Edge
>>> g = Graph("chain", [Node("a", unit="pcu", flops=384), Node("b", unit="pcu", flops=1920)],
...           [Edge("a", "b", bytes=64, depth=4)])
>>> perf = simulate_section(g, load_hardware("plasticine"), {"a": "U0_0", "b": "U0_2"},
...                         {0: ["U0_0->S0_1", "S0_1->S0_2", "S0_2->U0_2"]})
>>> perf.cycles_per_sample, perf.normalised, perf.bottleneck["node"]
(10.0, 1.0, 'b')
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping as MappingType

import networkx as nx

from hardware import RduFabric, build_fabric
from model.graph import Edge, Graph, Node
from model.mapping import Mapping

__all__ = ["SectionPerf", "PerfReport", "StageTime", "simulate_section", "simulate_mapping",
           "section_inputs", "SectionInputs", "simulate_inputs", "describe", "edge_bytes",
           "DEFAULT_BATCH", "WINDOW"]

#: Samples per batch of :func:`simulate_mapping` (every section runs the whole batch).
DEFAULT_BATCH = 256
#: Samples over which the period is measured (divisible by 1..6, 10, 12, 15, 20, 30).
WINDOW = 60
#: Cap on simulated cells (samples x stages) per section; the run stops there.
MAX_CELLS = 600_000
#: Relative change of the period between two windows below which it has settled.
SETTLED = 1e-6
#: A period within this factor of the slowest stage's time is that stage's (the rest is
#: the latency of the credits that come back, not a buffer that is too shallow).
STAGE_BOUND = 1.01


@dataclass(frozen=True)
class StageTime:
    """One stage's time per sample (cycles) and what it is made of."""

    node: str
    kind: str            # "compute", "pmu", "transfer" or "dram": the largest part
    cycles: float        # time per sample (at least 1)
    compute: float
    pmu: float
    transfer: float
    dram: float
    pcus: int
    pmus: int


@dataclass
class SectionPerf:
    """What one section achieves (see the module docstring for the model).

    Times are cycles of ``clock_hz`` unless a name ends in ``_s``.
    """

    section: int | None
    clock_hz: float
    cycles_per_sample: float        # simulated steady-state period, on chip
    latency_cycles: float           # first sample through the empty pipeline
    compute_cycles: float           # slowest stage's compute-only time per sample
    transfer_cycles: float          # slowest net's link occupancy per sample
    pmu_cycles: float               # slowest PMU stage per sample
    bottleneck: dict[str, Any]
    busiest_link: str | None
    busiest_link_utilisation: float
    link_utilisation: dict[str, float]
    stages: list[StageTime]
    samples_simulated: int
    dram_bytes: float = 0.0         # cut-crossing bytes per sample through DRAM
    state_bytes: float = 0.0        # tensor bytes loaded once per batch
    dram_rate: float = 1e11         # DRAM bytes per second
    streamed: int = 0               # compute stages without flops (the streaming rule)
    unrouted: int = 0               # edges without a route (a shortest route assumed)
    notes: list[str] = field(default_factory=list)

    @property
    def slowest_stage(self) -> StageTime:
        """The stage with the longest time per sample (ties: the first in pipeline order)."""
        return max(self.stages, key=lambda t: t.cycles)

    @property
    def dram_cycles(self) -> float:
        """Cycles per sample the section's DRAM traffic needs."""
        return self.dram_bytes / self.dram_rate * self.clock_hz

    @property
    def samples_per_cycle(self) -> float:
        """Steady-state samples per cycle (on-chip period or DRAM, whichever is slower)."""
        return 1.0 / max(self.cycles_per_sample, self.dram_cycles)

    @property
    def throughput(self) -> float:
        """Steady-state samples per second."""
        return self.samples_per_cycle * self.clock_hz

    @property
    def latency_s(self) -> float:
        """Seconds for one sample through the empty pipeline (DRAM of one sample included)."""
        return self.latency_cycles / self.clock_hz + self.dram_bytes / self.dram_rate

    @property
    def compute_bound(self) -> float:
        """The slowest stage's compute-only throughput, samples per second."""
        return self.clock_hz / self.compute_cycles

    @property
    def normalised(self) -> float:
        """``throughput / compute_bound`` in [0, 1]: the label of source 002 §IV-A."""
        return min(1.0, max(0.0, self.compute_cycles * self.samples_per_cycle))

    def breakdown(self, batch: int, reconfig_s: float) -> dict[str, float]:
        """Seconds of one batch, split so that the parts add up to ``total_s``.

        ``compute_s``: the batch at the compute bound; ``transfer_s``: the rest of the
        pipeline's time (links, PMUs, back-pressure, filling the pipeline); ``dram_s``: what
        DRAM adds beyond the on-chip period plus loading the tensors; ``reconfig_s``.
        """
        f = self.clock_hz
        compute = batch * self.compute_cycles / f
        pipeline = (self.latency_cycles + (batch - 1) * self.cycles_per_sample) / f
        dram = ((batch - 1) * max(0.0, self.dram_cycles - self.cycles_per_sample) / f
                + self.dram_bytes / self.dram_rate + self.state_bytes / self.dram_rate)
        parts = {"compute_s": compute, "transfer_s": max(0.0, pipeline - compute),
                 "dram_s": dram, "reconfig_s": reconfig_s}
        return parts | {"total_s": sum(parts.values())}

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON types: the numbers of mapping.json's per-section ``perf``."""
        return {"samples_per_cycle": _sig(self.samples_per_cycle),
                "throughput": _sig(self.throughput), "latency_s": _sig(self.latency_s),
                "cycles_per_sample": _sig(self.cycles_per_sample),
                "compute_cycles": _sig(self.compute_cycles),
                "normalised": _sig(self.normalised), "bottleneck": dict(self.bottleneck),
                "busiest_link": self.busiest_link,
                "busiest_link_utilisation": _sig(self.busiest_link_utilisation),
                "mean_link_utilisation": _sig(self.mean_link_utilisation)}

    @property
    def mean_link_utilisation(self) -> float:
        """Mean busy share of the links the section uses."""
        used = self.link_utilisation.values()
        return sum(used) / len(used) if used else 0.0


@dataclass
class PerfReport:
    """A whole mapping: its sections run one after another on ``batch`` samples."""

    sections: list[SectionPerf]
    batch: int
    reconfig_s: float
    clock_hz: float

    def breakdowns(self) -> list[dict[str, float]]:
        """Per section: ``compute_s``, ``transfer_s``, ``dram_s``, ``reconfig_s``, ``total_s``."""
        return [s.breakdown(self.batch, self.reconfig_s) for s in self.sections]

    @property
    def total_s(self) -> float:
        """Seconds for one batch through every section."""
        return sum(b["total_s"] for b in self.breakdowns())

    @property
    def throughput(self) -> float:
        """Samples per second over the whole mapping (``batch / total_s``)."""
        return self.batch / self.total_s if self.total_s > 0 else 0.0

    @property
    def samples_per_cycle(self) -> float:
        return self.throughput / self.clock_hz

    @property
    def latency_s(self) -> float:
        """Seconds for one sample alone: every section configured, loaded and run once."""
        return sum(self.reconfig_s + s.latency_s + s.state_bytes / s.dram_rate
                   for s in self.sections)

    @property
    def slowest(self) -> SectionPerf | None:
        """The section whose batch takes longest."""
        times = self.breakdowns()
        if not times:
            return None
        return self.sections[max(range(len(times)), key=lambda k: times[k]["total_s"])]

    @property
    def bottleneck(self) -> str:
        """The slowest section and, inside it, what sets its period."""
        s = self.slowest
        return "none" if s is None else f"section {s.section}: {describe(s.bottleneck)}"

    @property
    def busiest_link(self) -> str | None:
        """The link busiest in its section, with its section and utilisation."""
        best = max(self.sections, key=lambda s: s.busiest_link_utilisation, default=None)
        if best is None or best.busiest_link is None:
            return None
        return (f"section {best.section}: {best.busiest_link} "
                f"({best.busiest_link_utilisation:.0%})")

    def metrics(self) -> dict[str, Any]:
        """The totals for mapping.json's ``metrics``."""
        return {"throughput": _sig(self.throughput),
                "samples_per_cycle": _sig(self.samples_per_cycle),
                "latency_s": _sig(self.latency_s), "bottleneck": self.bottleneck,
                "busiest_link": self.busiest_link, "perf_batch": self.batch,
                "batch_s": _sig(self.total_s)}

    def section_rows(self) -> list[dict[str, Any]]:
        """Per section: :meth:`SectionPerf.to_dict` plus the batch's time breakdown."""
        return [s.to_dict() | {k: _sig(v) for k, v in b.items()}
                for s, b in zip(self.sections, self.breakdowns())]


def describe(bottleneck: dict[str, Any]) -> str:
    """One line for a bottleneck dict, e.g. ``compute MatMul3`` or ``transfer A (link X)``.

    Examples
    --------
    >>> describe({"kind": "transfer", "node": "A", "link": "S0_1->S0_2", "cycles": 8.0})
    'transfer A (link S0_1->S0_2)'
    >>> describe({"kind": "dram", "bytes": 4096.0, "cycles": 80.0})
    'dram 4096 bytes per sample'
    """
    b = bottleneck
    where = b.get("node") or b.get("edge") or (f"{b['bytes']:g} bytes per sample"
                                                 if "bytes" in b else "")
    link = f" (link {b['link']})" if b.get("link") else ""
    return f"{b['kind']} {where}".rstrip() + link


def _sig(x: float, digits: int = 6) -> float:
    """``x`` rounded to ``digits`` significant digits (stable JSON numbers)."""
    if not x or not math.isfinite(x):
        return float(x)
    return round(x, digits - 1 - int(math.floor(math.log10(abs(x)))))


# ---------------------------------------------------------------------------------------------
# nets on links
# ---------------------------------------------------------------------------------------------
@dataclass
class _Flows:
    """Per net: bytes, occupancy (cycles per sample), worst link; per edge: latency."""

    net_bytes: list[float]
    net_cycles: list[float]
    net_link: list[str | None]
    edge_latency: list[float]
    link_cycles: dict[str, float]          # link -> cycles per sample on its busiest network
    guessed: int = 0                       # edges without a route (shortest route assumed)


def edge_bytes(edge: Edge, spec) -> float:
    """Bytes per sample an edge moves: ``bytes``, else ``bandwidth`` flits of its network."""
    if edge.bytes is not None:
        return float(edge.bytes)
    return edge.bandwidth * spec.link_rate(edge.network)


def _flows(graph: Graph, spec, fabric: RduFabric, placement, routes) -> _Flows:
    nets = graph.nets
    net_bytes = [max(edge_bytes(graph.edges[i], spec) for i in net.edges) for net in nets]
    links_of: list[set[str]] = []
    moves: list[bool] = []                     # the net leaves its driver's site
    load: dict[tuple[str, str], float] = defaultdict(float)
    largest: dict[tuple[str, str], float] = defaultdict(float)
    latency, guessed = [0.0] * len(graph.edges), 0
    for k, net in enumerate(nets):
        network = graph.edges[net.edges[0]].network
        tree: set[str] = set()
        moved = False
        for i in net.edges:
            e = graph.edges[i]
            path, apart = routes.get(i), placement[e.src] != placement[e.dst]
            if apart and not path:
                hops, guessed = fabric.distance(placement[e.src], placement[e.dst]) + 2, guessed + 1
            else:
                hops = len(path or ())
                tree.update(path or ())
            latency[i] = hops * spec.hop_cycles
            moved = moved or apart
        links_of.append(tree)
        moves.append(moved)
        for link in tree:
            load[(link, network)] += net_bytes[k]
            largest[(link, network)] = max(largest[(link, network)], net_bytes[k])
    net_cycles, net_link, link_cycles = [], [], {}
    for (link, network), total in load.items():
        rate = spec.link_rate(network)
        busy = max(total / (spec.networks[network].channels * rate),
                   largest[(link, network)] / rate)
        link_cycles[link] = max(link_cycles.get(link, 0.0), busy)
    for k, net in enumerate(nets):
        network = graph.edges[net.edges[0]].network
        rate, channels = spec.link_rate(network), spec.networks[network].channels
        worst, where = net_bytes[k] / rate if moves[k] else 0.0, None
        for link in sorted(links_of[k]):
            t = max(net_bytes[k], load[(link, network)] / channels) / rate
            if where is None or t > worst:
                worst, where = max(worst, t), link
        net_cycles.append(worst)
        net_link.append(where)
    return _Flows(net_bytes, net_cycles, net_link, latency, link_cycles, guessed)


# ---------------------------------------------------------------------------------------------
# stages
# ---------------------------------------------------------------------------------------------
def _owners(graph: Graph) -> dict[str, str]:
    """Node -> the stage it belongs to (PCU lanes and PMU banks fold into their node)."""
    out = {}
    for node in graph.nodes:
        owner = node.attrs.get("unit_of")
        out[node.id] = owner if isinstance(owner, str) and owner in graph else node.id
    return out


def _site_counts(graph: Graph, fabric: RduFabric, placement, owners) -> dict[str, dict[str, int]]:
    counts: dict[str, dict[str, int]] = defaultdict(lambda: {"pcu": 0, "pmu": 0, "agcu": 0})
    for node in graph.nodes:
        kind = fabric.site(placement[node.id]).unit
        if kind == "fcmu":
            kind = "pmu" if node.unit == "pmu" else "pcu"
        counts[owners[node.id]][kind] += 1
    return counts


def _stage_times(graph: Graph, spec, fabric: RduFabric, placement, owners, flows: _Flows
                 ) -> tuple[dict[str, StageTime], int]:
    """Every stage's time per sample; also how many compute stages used the streaming rule."""
    counts = _site_counts(graph, fabric, placement, owners)
    bytes_in: dict[str, float] = defaultdict(float)
    bytes_out: dict[str, float] = defaultdict(float)
    drain: dict[str, float] = defaultdict(float)
    for k, net in enumerate(graph.nets):
        src = owners[net.driver]
        drain[src] = max(drain[src], flows.net_cycles[k])
        outside = [i for i in net.edges if owners[graph.edges[i].dst] != src]
        if outside:
            bytes_out[src] += flows.net_bytes[k]
        for i in outside:
            bytes_in[owners[graph.edges[i].dst]] += edge_bytes(graph.edges[i], spec)
    cycle_hz = spec.clock_hz
    out, streamed = {}, 0
    for v in dict.fromkeys(owners.values()):
        node, c = graph.node(v), counts[v]
        own = fabric.site(placement[v]).unit
        moved = max(bytes_in[v], bytes_out[v])
        compute = 0.0
        if c["pcu"]:
            if node.flops is not None:
                compute = node.flops / (c["pcu"] * spec.flops_per_pcu_cycle)
            else:
                compute, streamed = moved / (4 * spec.pcu_lanes * c["pcu"]), streamed + 1
        pmu = 0.0
        if own == "pmu" or (own == "fcmu" and node.unit == "pmu"):
            pmus = max(1, c["pmu"])
            pmu = max(bytes_out[v] / (pmus * spec.pmu_read_rate),
                      bytes_in[v] / (pmus * spec.pmu_write_rate))
        dram = moved / spec.dram_rate * cycle_hz if own == "agcu" else 0.0
        parts = {"compute": compute, "pmu": pmu, "transfer": drain[v], "dram": dram}
        kind = max(parts, key=lambda p: parts[p])
        if not parts[kind]:                   # nothing to do: the unit's own kind
            kind = {"pmu": "pmu", "agcu": "dram"}.get(own, "compute")
        out[v] = StageTime(v, kind, max(1.0, parts[kind]), compute, pmu, drain[v], dram,
                           c["pcu"], c["pmu"])
    return out, streamed


# ---------------------------------------------------------------------------------------------
# the event graph and its simulation
# ---------------------------------------------------------------------------------------------
@dataclass
class _Events:
    """Stages in topological order and the arcs of the timed event graph.

    ``same[i]``: ``(j, weight)`` arcs from stage ``j`` in the same sample (``j < i``);
    ``back[i]``: ``(j, weight, samples_back)`` arcs; ``label[(i, j, back)]`` says what an arc
    is (for the bottleneck).
    """

    names: list[str]
    cycles: list[float]
    same: list[list[tuple[int, float]]]
    back: list[list[tuple[int, float, int]]]
    label: dict[tuple[int, int, int], str]


def _events(graph: Graph, owners, times: dict[str, StageTime], flows: _Flows,
            depths: MappingType[int, int]) -> _Events:
    arcs: dict[tuple[str, str, int], tuple[float, str]] = {}

    def arc(src: str, dst: str, weight: float, back: int, what: str) -> None:
        key = (src, dst, back)
        if key not in arcs or weight > arcs[key][0]:
            arcs[key] = (weight, what)

    for i, e in enumerate(graph.edges):
        u, v = owners[e.src], owners[e.dst]
        if u == v and not e.loop_carried:
            continue
        x = flows.edge_latency[i]
        arc(u, v, times[u].cycles + x, e.distance, f"edge {e.src} -> {e.dst}")
        if not e.loop_carried:
            depth = depths.get(i, e.depth if e.depth is not None else 1)
            arc(v, u, x, max(1, int(depth)), f"buffer {e.src} -> {e.dst} (depth {depth})")
    dag = nx.DiGraph()
    dag.add_nodes_from(times)
    dag.add_edges_from((s, d) for (s, d, back) in arcs if back == 0)
    try:
        rank = {v: k for k, v in enumerate(times)}
        names = list(nx.lexicographical_topological_sort(dag, key=rank.__getitem__))
    except nx.NetworkXUnfeasible:
        raise ValueError(f"{graph.name}: the same-iteration edges form a cycle") from None
    index = {v: k for k, v in enumerate(names)}
    same: list[list[tuple[int, float]]] = [[] for _ in names]
    back: list[list[tuple[int, float, int]]] = [[(k, times[v].cycles, 1)]
                                                for k, v in enumerate(names)]
    label = {(k, k, 1): f"stage {v}" for k, v in enumerate(names)}
    for (s, d, b), (weight, what) in sorted(arcs.items()):
        i, j = index[d], index[s]
        if b == 0:
            same[i].append((j, weight))
        elif not (i == j and b == 1 and weight <= times[d].cycles):
            back[i].append((j, weight, b))
        label[(i, j, b)] = what
    return _Events(names, [times[v].cycles for v in names], same, back, label)


def _run(ev: _Events, max_cells: int = MAX_CELLS) -> tuple[list[list[float]], float]:
    """Start times per sample until the period settles; returns the rows and the period.
    Sections alike in their arcs (a long chain's 782 sections, repeated layers) share one
    run: the rows depend on the arcs' weights and ends only, never on the stages' names."""
    key = (max_cells, tuple(map(tuple, ev.same)), tuple(map(tuple, ev.back)))
    if key not in _RUNS:
        if len(_RUNS) >= RUNS_KEPT:
            _RUNS.pop(next(iter(_RUNS)))
        _RUNS[key] = _simulate_rows(ev, max_cells)
    return _RUNS[key]


#: Runs kept for sections alike (:func:`_run`), the oldest dropped first.
RUNS_KEPT = 64
_RUNS: dict[tuple, tuple[list[list[float]], float]] = {}


def _simulate_rows(ev: _Events, max_cells: int) -> tuple[list[list[float]], float]:
    """:func:`_run` without the memory of earlier runs."""
    n = len(ev.names)
    if n == 0:
        return [[]], 0.0
    limit = max(4 * WINDOW, max_cells // max(1, n))
    rows: list[list[float]] = []
    same, back = ev.same, ev.back
    target, period = 3 * WINDOW, 0.0
    while True:
        for k in range(len(rows), target):
            row = [0.0] * n
            for i in range(n):
                best = 0.0
                for j, w in same[i]:
                    t = row[j] + w
                    if t > best:
                        best = t
                for j, w, b in back[i]:
                    if k >= b:
                        t = rows[k - b][j] + w
                        if t > best:
                            best = t
                row[i] = best
            rows.append(row)
        last, mid, first = rows[-1], rows[-1 - WINDOW], rows[-1 - 2 * WINDOW]
        period = max(a - b for a, b in zip(last, mid)) / WINDOW
        before = max(a - b for a, b in zip(mid, first)) / WINDOW
        if abs(period - before) <= SETTLED * period or target >= limit:
            return rows, period
        target = min(limit, 2 * target)


def _binding(ev: _Events, rows, k: int, i: int) -> tuple[int, int, int] | None:
    """The arc that set ``rows[k][i]`` as ``(stage, sample, samples_back)``."""
    value = rows[k][i]
    tol = 1e-9 * max(1.0, abs(value))
    for j, w in ev.same[i]:
        if abs(rows[k][j] + w - value) <= tol:
            return j, k, 0
    for j, w, b in ev.back[i]:
        if k >= b and abs(rows[k - b][j] + w - value) <= tol:
            return j, k - b, b
    return None


def _bottleneck(ev: _Events, rows, period: float, times: dict[str, StageTime],
                flows_link: dict[str, str | None]) -> dict[str, Any]:
    """What sets the period: the slowest stage, or the buffer cycle of back-pressure."""
    slowest = max(range(len(ev.names)), key=lambda k: (ev.cycles[k], -k))
    stage = times[ev.names[slowest]]
    if period <= stage.cycles * STAGE_BOUND:
        out = {"kind": stage.kind, "node": stage.node, "cycles": _sig(stage.cycles)}
        if stage.kind == "transfer" and flows_link.get(stage.node):
            out["link"] = flows_link[stage.node]
        return out
    k = len(rows) - 1
    i = max(range(len(ev.names)), key=lambda s: rows[k][s] - rows[k - WINDOW][s])
    buffers: list[str] = []
    for _ in range(4 * len(ev.names) + 8):
        step = _binding(ev, rows, k, i)
        if step is None:
            break
        j, k_next, b = step
        what = ev.label.get((i, j, b), "")
        if what.startswith("buffer") and what not in buffers:
            buffers.append(what)
        i, k = j, k_next
    return {"kind": "back-pressure", "edge": buffers[0] if buffers else None,
            "cycles": _sig(period), "buffers": buffers[:4]}


# ---------------------------------------------------------------------------------------------
# the public entry points
# ---------------------------------------------------------------------------------------------
def simulate_section(graph: Graph, spec, placement: dict[str, str],
                     routes: MappingType[int, list[str]],
                     depths: MappingType[int, int] | None = None, *,
                     fabric: RduFabric | None = None,
                     section: int | None = None, dram_bytes: float = 0.0,
                     state_bytes: float = 0.0) -> SectionPerf:
    """Simulate one placed-and-routed section.

    Parameters
    ----------
    graph : Graph
        The section (with the stage buffers, PCU lanes and PMU banks the levels added, as
        :class:`pipeline.rdu.section_pass.SectionOutcome` placed them).
    spec : RduSpec
    placement : dict
        Node id -> site id of ``hardware.build_fabric(spec)``; every node must be placed.
    routes : mapping of int to list of str
        Edge index (into ``graph.edges``) -> link ids, as ``SectionOutcome.paths``.
    depths : mapping of int to int, optional
        Stage-buffer depth per edge index (default: the edge's ``depth``, else 1).
    fabric : RduFabric, optional
        Default ``build_fabric(spec)`` (cached).
    section : int, optional
        The section's id, for reports.
    dram_bytes, state_bytes : float
        Bytes per sample through DRAM (cut-crossing values) and tensor bytes loaded per batch.

    Returns
    -------
    SectionPerf

    Raises
    ------
    ValueError
        No node, a node without a site, or a cycle of same-iteration edges.
    """
    fabric = fabric if fabric is not None else build_fabric(spec)
    if not graph.nodes:
        raise ValueError(f"{graph.name}: a section needs at least one node")
    unplaced = [v for v in graph.node_ids if v not in placement]
    if unplaced:
        raise ValueError(f"{graph.name}: node {unplaced[0]!r} is not placed ({len(unplaced)} "
                         "unplaced); simulate_section needs a site for every node")
    owners = _owners(graph)
    flows = _flows(graph, spec, fabric, placement, routes)
    times, streamed = _stage_times(graph, spec, fabric, placement, owners, flows)
    ev = _events(graph, owners, times, flows, depths or {})
    rows, period = _run(ev)
    period = max(period, max(ev.cycles, default=1.0))
    latency = max((rows[0][k] + ev.cycles[k] for k in range(len(ev.names))), default=0.0)
    worst_link = {owners[net.driver]: flows.net_link[k] for k, net in enumerate(graph.nets)
                  if flows.net_cycles[k] >= times[owners[net.driver]].transfer}
    compute = [t.compute for t in times.values() if t.pcus]
    compute_cycles = max(compute) if compute else max((t.pmu for t in times.values()),
                                                      default=1.0)
    usage = {link: busy / period for link, busy in sorted(flows.link_cycles.items())}
    busiest = max(usage, key=lambda link: usage[link], default=None)
    notes = []
    if streamed:
        notes.append(f"{streamed} of {len(compute)} compute stages have no flops: streaming "
                     "rule (bytes / (4 * pcu_lanes * pcus))")
    if flows.guessed:
        notes.append(f"{flows.guessed} edges without a route (lane and bank chains): a "
                     "shortest route assumed")
    bottleneck = _bottleneck(ev, rows, period, times, worst_link)
    dram_cycles = dram_bytes / spec.dram_rate * spec.clock_hz
    if dram_cycles > period:
        bottleneck = {"kind": "dram", "bytes": _sig(dram_bytes), "cycles": _sig(dram_cycles)}
    return SectionPerf(
        section=section, clock_hz=spec.clock_hz, cycles_per_sample=period,
        latency_cycles=latency, compute_cycles=max(1.0, compute_cycles),
        transfer_cycles=max(flows.net_cycles, default=0.0),
        pmu_cycles=max((t.pmu for t in times.values()), default=0.0),
        bottleneck=bottleneck, busiest_link=busiest,
        busiest_link_utilisation=usage.get(busiest, 0.0) if busiest else 0.0,
        link_utilisation=usage, stages=[times[v] for v in ev.names],
        samples_simulated=len(rows), dram_bytes=dram_bytes, state_bytes=state_bytes,
        dram_rate=spec.dram_rate, streamed=streamed, unrouted=flows.guessed, notes=notes)


@dataclass
class SectionInputs:
    """One section of a mapping.json, rebuilt for :func:`simulate_section`."""

    section: int
    graph: Graph
    placement: dict[str, str]
    routes: dict[int, list[str]]
    depths: dict[int, int]
    dram_bytes: float
    state_bytes: float


def simulate_mapping(graph: Graph, spec, mapping: Mapping | dict, *,
                     batch: int = DEFAULT_BATCH,
                     run_each: Callable[[Callable, list[tuple]], list] | None = None
                     ) -> PerfReport:
    """Simulate every section of a mapping; sections run one after another on ``batch``.

    Parameters
    ----------
    graph : Graph
        The whole graph the mapping was made for.
    spec : RduSpec
    mapping : Mapping or dict
        A mapped mapping.json (``model.mapping.Mapping`` or its dict).
    batch : int
        Samples each section processes per configuration.
    run_each : callable, optional
        ``run_each(function, tasks)`` gives ``[function(*task) for task in tasks]``,
        wherever it runs them (a run's workers); default here, one after another. Each
        section's simulation (:func:`simulate_inputs`) depends on its inputs alone, so the
        report is the same.

    Returns
    -------
    PerfReport
    """
    if batch < 1:
        raise ValueError(f"batch must be at least 1, got {batch}")
    tasks = [(s, spec) for s in section_inputs(graph, mapping)]
    sections = (run_each or _in_order)(simulate_inputs, tasks)
    return PerfReport(sections, batch, spec.reconfig_seconds, spec.clock_hz)


def simulate_inputs(inputs: SectionInputs, spec) -> SectionPerf:
    """:func:`simulate_section` of one section of a mapping.json
    (:func:`section_inputs`)."""
    return simulate_section(inputs.graph, spec, inputs.placement, inputs.routes, inputs.depths,
                            section=inputs.section, dram_bytes=inputs.dram_bytes,
                            state_bytes=inputs.state_bytes)


def _in_order(function: Callable, tasks: list[tuple]) -> list:
    return [function(*task) for task in tasks]


def section_inputs(graph: Graph, mapping: Mapping | dict) -> list[SectionInputs]:
    """Rebuild each section of a mapping.json as :func:`simulate_section` reads it.

    Stage buffers come from the routes' ``via_buffers`` (the route's links are split at
    each buffer's site; the sinks of one net share its chain, as the buffer level builds
    it): the first hop holds the row's ``tuned_depth`` samples, each hop after an inserted
    PMU its ``depth_per_pmu``; an edge without inserted PMUs holds ``final_depth``. PCU lanes
    and PMU banks (``<node>#pcu<k>``, ``<node>#pmu<k>`` in ``placement``) join their node
    along a chain with no listed route (mapping.json does not list those links); DRAM bytes per
    sample are the section's cut-crossing nets (a
    value written once, read once per section that uses it).
    """
    data = mapping if isinstance(mapping, dict) else {   # no deep copy (asdict is slow)
        key: getattr(mapping, key) for key in ("status", "sections", "buffers", "placement",
                                               "routes")}
    if data.get("status") != "mapped":
        raise ValueError("simulate_mapping needs a mapped mapping.json "
                         f"(status {data.get('status')!r})")
    depth_rows = {b["edge"]: b for b in data.get("buffers", [])}
    by_section: dict[int, list[dict]] = defaultdict(list)
    for r in data["routes"]:
        if r.get("section") is not None:
            by_section[r["section"]].append(r)
    dram = _dram_bytes(graph, data)
    sites: dict[int, dict[str, str]] = defaultdict(dict)
    for v, p in data["placement"].items():
        sites[p["section"]][v] = p["site"]
    out = []
    for s in data["sections"]:
        sid = s["id"]
        placement = sites[sid]
        sub, routes, depths = _rebuild(graph, s["nodes"], placement, by_section[sid],
                                       depth_rows, f"{graph.name}/section{sid}")
        state = sum(float(graph.node(v).attrs.get("state_bytes") or 0) for v in s["nodes"])
        out.append(SectionInputs(sid, sub, placement, routes, depths, dram.get(sid, 0.0), state))
    return out


def _dram_bytes(graph: Graph, data: dict) -> dict[int, float]:
    """Per section: bytes per sample written to DRAM (once per net) and read (once per
    net and consuming section)."""
    section_of = {v: p["section"] for v, p in data["placement"].items()}
    written: set[int] = set()
    read: set[tuple[int, int]] = set()
    for r in data["routes"]:
        if r.get("via") == "dram":
            written.add(graph.net_of_edge[r["edge"]])
            read.add((graph.net_of_edge[r["edge"]], section_of.get(r["dst"], -1)))
    out: dict[int, float] = defaultdict(float)
    for k in sorted(written):
        net = graph.nets[k]
        size = max(graph.edges[i].bytes or 0.0 for i in net.edges)
        out[section_of.get(net.driver, -1)] += size
    for k, sid in sorted(read):
        out[sid] += max(graph.edges[i].bytes or 0.0 for i in graph.nets[k].edges)
    return dict(out)


def _rebuild(graph: Graph, members: list[str], placement: dict[str, str], routes: list[dict],
             depth_rows: dict[int, dict], name: str
             ) -> tuple[Graph, dict[int, list[str]], dict[int, int]]:
    nodes = [graph.node(v) for v in members]
    edges: list[Edge] = []
    paths: dict[int, list[str]] = {}
    depths: dict[int, int] = {}
    trunk: set[tuple[str, str]] = set()
    for r in sorted(routes, key=lambda r: r["edge"]):
        e, row = graph.edges[r["edge"]], depth_rows.get(r["edge"], {})
        hops = [e.src] + list(r.get("via_buffers", [])) + [e.dst]
        pieces = _split(r["links"], [placement[h] for h in hops[1:]])
        # the net's own buffer holds tuned_depth samples; each inserted PMU depth_per_pmu
        final = row.get("final_depth") or e.depth or 1
        first = (row.get("tuned_depth") or final) if len(hops) > 2 else final
        rest = int(row.get("depth_per_pmu") or 1)
        for k, (a, b) in enumerate(zip(hops, hops[1:])):
            if k < len(hops) - 2:
                if (a, b) in trunk:           # a buffer chain shared by the net's sinks
                    continue
                trunk.add((a, b))
            paths[len(edges)], depths[len(edges)] = pieces[k], first if k == 0 else rest
            edges.append(Edge(a, b, bandwidth=e.bandwidth, bytes=e.bytes, net=_net(r, k),
                              depth=e.depth, distance=e.distance, attrs=dict(e.attrs)))
    have = {n.id for n in nodes}
    for b in sorted({b for r in routes for b in r.get("via_buffers", [])}):
        nodes.append(Node(b, op="stage buffer", unit="pmu", attrs={"buffer_of": b}))
        have.add(b)
    for v in sorted(set(placement) - have):
        owner, _, kind = v.rpartition("#")
        if owner in graph and kind.rstrip("0123456789") in ("pcu", "pmu"):
            nodes.append(Node(v, op=kind.rstrip("0123456789"), unit=kind.rstrip("0123456789"),
                              attrs={"unit_of": owner}))
    edges += _unit_chains(graph, nodes)
    return Graph(name, nodes, edges), paths, depths


def _net(r: dict, k: int) -> str | None:
    """Net id of the ``k``-th hop of an edge through buffers (the first hop keeps the net)."""
    return r.get("net") if k == 0 else f"{r.get('net')}:buf{k}"


def _split(links: list[str], ends: list[str]) -> list[list[str]]:
    """Split a route through buffer sites into one path per hop (``ends``: each hop's end)."""
    pieces: list[list[str]] = [[] for _ in ends]
    k = 0
    for link in links:
        pieces[min(k, len(ends) - 1)].append(link)
        if link.split("->")[-1] == ends[min(k, len(ends) - 1)]:
            k += 1
    return pieces


def _unit_chains(graph: Graph, nodes: list[Node]) -> list[Edge]:
    """The chains joining PCU lanes and PMU banks to their node (no route listed)."""
    chains: dict[tuple[str, str], list[str]] = defaultdict(list)
    for n in nodes:
        if "unit_of" in n.attrs:
            chains[(n.attrs["unit_of"], n.unit)].append(n.id)
    out = []
    for (owner, kind), ids in sorted(chains.items()):
        widest = max((graph.edges[i] for i in graph.out_edges(owner)),
                     key=lambda e: e.bandwidth, default=Edge(owner, owner))
        previous = owner
        for v in sorted(ids, key=lambda s: int(s.rpartition("#")[2][3:] or 0)):
            src, dst = (v, previous) if kind == "pmu" else (previous, v)
            out.append(Edge(src, dst, bandwidth=widest.bandwidth, bytes=widest.bytes,
                            attrs={"unit_of": owner}))
            previous = v
    return out
