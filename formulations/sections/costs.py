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
``dram_k`` the cycles its bytes across cuts take at the DRAM rate. They are counted per
net, as :mod:`sim.perf` moves them (:func:`cut_nets`): a net leaving its driver's section is
written once by that section and read once by each other section holding one of its
sinks, however many sinks there are (bert_l-12 inference on plasticine: counted per edge,
its 12-section cut's DRAM bytes were 16 % above what the simulator moves). Both parts are
linear in the section model: ``T_k >= stage_v x[v][k]`` and ``T_k >= c sum_n bytes_n
d[n][k]`` with ``d[n][k] >= |x[u][k] - x[s][k]|`` for the driver u and each sink s of net
n. A streaming stage moves only the inputs of its own section, as in :mod:`sim.perf` (an
input read from DRAM is its section's DRAM time): ``stage_v`` is its fixed part (its
outputs) or the sum over its inputs from its section, whichever is larger
(:meth:`CutCosts.stage_in`; bert_l-12 inference on plasticine: a MatMul of 75.5 MB and
9.4 MB in takes 1.33 M cycles, 1.18 M when the 9.4 MB come from DRAM), in the model
``T_k >= sum_u c_uv y[u,v,k]`` with ``y[u,v,k] >= x[u][k] + x[v][k] - 1``. Reconfiguration
is the same for every cut of one section count, so the count phase (fewest sections)
already minimises it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from model.graph import Graph

__all__ = ["CutCosts", "CutNet", "cut_costs", "cut_nets", "net_sections", "stage_cycles",
           "stage_parts", "cut_time"]


@dataclass(frozen=True)
class CutNet:
    """One value through DRAM when its net crosses a cut: the ``driver`` (None when it lies
    outside the graph being cut), the ``sinks`` inside, the value's ``bytes`` and whether
    it is ``written`` whatever the cut (a sink lies outside)."""

    driver: str | None
    sinks: tuple[str, ...]
    bytes: float
    written: bool = False


@dataclass(frozen=True)
class CutCosts:
    """Cycles per sample: each node's stage (for a streaming node, its part that no cut
    changes), and DRAM per byte across a cut; ``streamed``, per streaming node, the
    cycles of its inputs by source, which its stage moves when the source shares its
    section; ``nets``, for a window of the search, the nets it counts (its own and those
    crossing its border, :meth:`for_window`), else None: the graph's own."""

    stage: dict[str, float]
    dram_per_byte: float
    nets: tuple[CutNet, ...] | None = None
    streamed: dict[str, tuple[tuple[str, float], ...]] = field(default_factory=dict)

    def stage_in(self, v: str, assignment: dict[str, int]) -> float:
        """Node v's stage cycles in ``assignment``: its fixed part or its inputs from its
        own section, whichever is larger."""
        inputs = self.streamed.get(v, ())
        here = assignment[v]
        return max(self.stage.get(v, 0.0),
                   sum(c for u, c in inputs if assignment.get(u) == here))

    def section(self, slowest: float, dram_bytes: float) -> float:
        """A section's cycles per sample: its slowest stage or its DRAM bytes, whichever
        takes longer."""
        return max(slowest, dram_bytes * self.dram_per_byte)

    def slowest(self, v: str) -> float:
        """Node v's stage cycles with every input in its section (its largest)."""
        return max(self.stage.get(v, 0.0), sum(c for _, c in self.streamed.get(v, ())))

    def for_window(self, graph: Graph, sub: Graph,
                   whole: list[CutNet] | None = None) -> "CutCosts":
        """The costs of window ``sub`` of ``graph``: a net with a sink outside is written
        whatever the window's cut, and one driven from outside is read by each section
        holding its sinks. ``whole``: ``graph``'s nets (:func:`cut_nets`), given by a
        search that asks for many windows (computed when not given)."""
        inside = set(sub.node_ids)
        nets = []
        for net in cut_nets(graph, self) if whole is None else whole:
            sinks = tuple(s for s in net.sinks if s in inside)
            driver = net.driver if net.driver in inside else None
            written = driver is not None and len(sinks) < len(net.sinks)
            if sinks or written:
                nets.append(CutNet(driver, sinks, net.bytes, written))
        streamed = {v: tuple((u, c) for u, c in inputs if u in inside)
                    for v, inputs in self.streamed.items() if v in inside}
        return CutCosts({v: self.stage[v] for v in inside if v in self.stage},
                        self.dram_per_byte, tuple(nets), streamed)


def _whole_nets(graph: Graph) -> list[CutNet]:
    """The graph's nets that can cross a cut (a sink other than the driver), each as big as
    its largest edge (:func:`sim.perf.section_inputs` counts them so)."""
    out = []
    for net in graph.nets:
        edges = [graph.edges[i] for i in net.edges if graph.edges[i].dst != net.driver]
        if edges:
            out.append(CutNet(net.driver, tuple(dict.fromkeys(e.dst for e in edges)),
                              max(_bytes(e) for e in edges)))
    return out


def cut_nets(graph: Graph, costs: CutCosts) -> list[CutNet]:
    """The nets whose DRAM traffic ``costs`` counts on ``graph``.

    >>> from model.graph import Edge, Node
    >>> g = Graph("g", [Node("a"), Node("b"), Node("c")],
    ...           [Edge("a", "b", bytes=8, net="n"), Edge("a", "c", bytes=8, net="n")])
    >>> cut_nets(g, CutCosts({}, 1.0))
    [CutNet(driver='a', sinks=('b', 'c'), bytes=8.0, written=False)]
    """
    return list(costs.nets) if costs.nets is not None else _whole_nets(graph)


def net_sections(net: CutNet, assignment: dict[str, int]) -> set[int]:
    """The sections that move ``net`` through DRAM in ``assignment``: the driver's when any
    sink lies elsewhere (or it is written anyway), and each other section holding a sink.

    >>> net_sections(CutNet("a", ("b", "c", "d"), 8.0), {"a": 0, "b": 1, "c": 1, "d": 0})
    {0, 1}
    """
    home = assignment.get(net.driver) if net.driver is not None else None
    readers = {assignment[s] for s in net.sinks} - {home}
    return readers | ({home} if home is not None and (readers or net.written) else set())


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
    fixed, inputs = stage_parts(graph, node_id, spec)
    return max(fixed, sum(c for _, c in inputs))


def stage_parts(graph: Graph, node_id: str, spec) -> tuple[float, tuple[tuple[str, float], ...]]:
    """Node ``node_id``'s stage cycles that no cut changes, and for a streaming PCU node
    (no FLOPs given) the cycles of its inputs by source, moved only from its own section
    (:meth:`CutCosts.stage_in`); the stage is the larger of the fixed part and their sum.

    >>> from hardware import load_hardware
    >>> from model.graph import Edge, Node
    >>> g = Graph("g", [Node("a"), Node("b"), Node("c", unit="pcu")],
    ...           [Edge("a", "c", bytes=6400), Edge("b", "c", bytes=640), Edge("c", "a", bytes=64)])
    >>> stage_parts(g, "c", load_hardware("plasticine"))       # 64 bytes a cycle
    (1.0, (('a', 100.0), ('b', 10.0)))
    """
    node = graph.node(node_id)
    rate = spec.link_rate("vector")
    moved_in = sum(_bytes(graph.edges[i]) for i in graph.in_edges(node_id))
    moved_out = max((_bytes(graph.edges[i]) for i in graph.out_edges(node_id)), default=0.0)
    drain = moved_out / rate
    inputs: dict[str, float] = {}
    if node.unit == "pmu":
        pmus = max(1.0, node.pmu or 1.0)
        own = max(moved_out / (pmus * spec.pmu_read_rate), moved_in / (pmus * spec.pmu_write_rate))
    elif node.unit == "agcu":
        own = max(moved_in, moved_out) / spec.dram_rate * spec.clock_hz
    elif node.flops is not None:
        own = node.flops / (max(1.0, node.pcu or 1.0) * spec.flops_per_pcu_cycle)
    else:
        lanes = 4 * spec.pcu_lanes * max(1.0, node.pcu or 1.0)
        own = moved_out / lanes
        for i in graph.in_edges(node_id):
            e = graph.edges[i]
            inputs[e.src] = inputs.get(e.src, 0.0) + _bytes(e) / lanes
    return max(1.0, own, drain), tuple(inputs.items())


def cut_costs(graph: Graph, spec) -> CutCosts:
    """Every node's stage cycles and the DRAM cycles per byte on ``spec`` (an RDU)."""
    parts = {v: stage_parts(graph, v, spec) for v in graph.node_ids}
    return CutCosts({v: fixed for v, (fixed, _) in parts.items()},
                    spec.clock_hz / spec.dram_rate,
                    streamed={v: inputs for v, (fixed, inputs) in parts.items()
                              if sum(c for _, c in inputs) > fixed})


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
        slowest[k] = max(slowest.get(k, 0.0), costs.stage_in(v, assignment))
        dram.setdefault(k, 0.0)
    for net in cut_nets(graph, costs):
        for k in net_sections(net, assignment):
            dram[k] += net.bytes
    return sum(costs.section(slowest[k], dram[k]) for k in slowest)
