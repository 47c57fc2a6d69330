"""The feedback loop between levels (source 003): every error path, on small graphs.

The FIG. 7C example of the patent: a Linear -> AddBias -> ReLU -> Exp -> Sum/Div
softmax whose section fits the estimate, until the template level inserts the
three double buffers the cutter could not see (%9, %13, %17); exactly one
feedback round (a raised scale factor, a re-cut) fixes it.
"""

import time
from dataclasses import dataclass, field

import pytest

from formulations.routing import Overuse
from hardware import load_hardware
from model.graph import Edge, Graph, Node
from pipeline.feedback import ErrorCode, ErrorHandlingData, MappingError
from pipeline.feedback import MappingFailed
from pipeline.budget import RunPlan
from pipeline.flow import map_graph
from pipeline.options import RunOptions
from formulations.sections import Capacity, Section
from pipeline.feedback import SectionUsage
from pipeline.rdu import levels
from pipeline.rdu.levels import (LOCAL_RETRIES, REPLACE_ROUNDS, BufferLevel, CompileState,
                             CutLevel, PlaceRouteLevel, SectionWork)
from pipeline.rdu.section_pass import SectionFailure, SectionOutcome
from pipeline.rdu.section_task import SectionResult

TINY = load_hardware("tiny")          # 8 PCU, 8 PMU, 4 AGCU
OPTIONS = RunOptions(time_limit=10, seed=0)

# FIG. 7C tile sizes (M x K, K x N, M x N), bf16: a depth-2 buffer of an M x N tile needs
# 2 * 320 * 320 * 2 bytes = 400 KiB, two of tiny's 256 KiB PMUs.
M = K = NOUT = 320
BF16 = 2


def fig7c_graph() -> Graph:
    """FIG. 7C's operations as a graph (the MetaPipeline containers are control only)."""
    nodes = [Node("Load_x", op="tlir.Load", unit="agcu"),        # %8 = Load(%1, dim: 1)
             Node("Load_W", op="tlir.Load", unit="pmu"),         # %5 = Load(%2): KxN
             Node("Load_b", op="tlir.Load", unit="pmu"),         # %6 = Load(%3): 1xN
             Node("ReadSlice", op="tlir.ReadSlice", unit="pmu"),  # %11: MxK
             Node("Linear", op="tlir.Linear", unit="pcu"),       # %12: MxN
             Node("AddBias", op="tlir.AddBias", unit="pcu"),     # %14
             Node("ReLU", op="air.ReLU", unit="pcu"),            # %15
             Node("Exp", op="air.Exp", unit="pcu"),              # %16
             Node("Sum", op="tlir.Sum", unit="pcu"),             # %18: Mx1
             Node("Div", op="tlir.Div", unit="pcu"),             # %19
             Node("Store", op="tlir.Store", unit="agcu")]        # %20 = Store(%4, %19)
    tile = M * NOUT * BF16
    edges = [Edge("Load_x", "ReadSlice", bytes=M * K * BF16),
             Edge("ReadSlice", "Linear", bytes=M * K * BF16),
             Edge("Load_W", "Linear", bytes=K * NOUT * BF16),
             Edge("Linear", "AddBias", bytes=tile),
             Edge("Load_b", "AddBias", bytes=NOUT * BF16),
             Edge("AddBias", "ReLU", bytes=tile),
             Edge("ReLU", "Exp", bytes=tile),
             Edge("Exp", "Sum", bytes=tile, net="e17"),
             Edge("Exp", "Div", bytes=tile, net="e17"),
             Edge("Sum", "Div", bytes=M * BF16),
             Edge("Div", "Store", bytes=tile)]
    return Graph("fig7c", nodes, edges)


#: The double buffers FIG. 7C's template level inserts: %9, %13, %17 (depth 2 each).
FIG7C_BUFFERS = {("Load_x", "ReadSlice"): 2, ("Linear", "AddBias"): 2, ("Exp", "Sum"): 2,
                 ("Exp", "Div"): 2}


@dataclass
class TemplateBuffers:
    """A template level's answer: PMUs it adds per local edge."""

    rows: dict = field(default_factory=dict)
    stage: dict | None = None

    def report_lines(self):
        return [f"{len(self.rows)} template buffers"]


def fig7c_templates(sub: Graph, spec, options, seconds, section=None) -> TemplateBuffers:
    """Insert FIG. 7C's double buffers, each with the PMUs its tile needs."""
    rows = {}
    for i, e in enumerate(sub.edges):
        depth = FIG7C_BUFFERS.get((e.src, e.dst))
        if depth:
            pmus = -(-depth * int(e.bytes) // spec.pmu_bytes)
            rows[i] = {"original_depth": e.depth, "final_depth": depth, "depth_added": depth,
                       "buffer_inserted": True, "pmus": pmus, "pmus_added": pmus}
    return TemplateBuffers(rows)


def run(graph, levels=None, spec=TINY, options=OPTIONS):
    return map_graph(graph, spec, options, levels=levels)


def test_fig7c_fits_the_estimate_in_one_section():
    mapping = run(fig7c_graph(), [CutLevel(), BufferLevel(), PlaceRouteLevel()])
    assert mapping.metrics["sections"] == 1 and mapping.trace == []


def test_fig7c_template_buffers_cost_exactly_one_feedback_round():
    """6 PCU + 3 PMU fit tiny (8 + 8); with 3 buffers of 2 PMUs each they do not. A cut
    level without the balancer cannot probe: the buffer level's overflow teaches it each
    edge's buffers (no scale factor raised), and the re-cut fits."""
    mapping = run(fig7c_graph(), [CutLevel(), BufferLevel(fig7c_templates), PlaceRouteLevel()])
    assert len(mapping.trace) == 1
    round_ = mapping.trace[0]
    assert round_["code"] == ErrorCode.RESOURCE_TOO_LOW_PREDICTED.value
    assert round_["level"] == "buffers" and round_["fixed_by"] == "cut"
    assert round_["section"] == 0 and "buffer demand learned" in round_["change"]
    assert mapping.status == "mapped" and mapping.metrics["sections"] == 2
    assert mapping.sections[0]["scale"].get("pmu", 1.0) == 1.0
    _assert_fig7c_buffers(mapping)


def test_fig7c_first_cut_is_the_last_when_the_cut_probes_the_balancer():
    """With the balancer, the cut learns the buffers from a probe before its first cut:
    no feedback round, the same two sections, no scale factor raised."""
    mapping = run(fig7c_graph(), [CutLevel(fig7c_templates), BufferLevel(fig7c_templates),
                                  PlaceRouteLevel()])
    assert mapping.trace == [] and mapping.status == "mapped"
    assert mapping.metrics["sections"] == 2
    cut = next(s for s in mapping.stages if s["stage"] == "sections")
    assert cut["probe_rounds"] == 2 and cut["buffer_demand_pmus"] == 8
    assert all(s["scale"].get("pmu", 1.0) == 1.0 for s in mapping.sections)
    _assert_fig7c_buffers(mapping)


def test_the_cut_balances_its_own_sections_before_the_buffer_level(monkeypatch):
    """Without probes (no share for them) the first cut of one section counts no buffers;
    balancing that cut inside the cut level finds it too full, learns the buffers and cuts
    again: still no feedback round, the same two sections as with probes."""
    monkeypatch.setattr(levels, "PROBE_SHARE", 0.0)
    mapping = run(fig7c_graph(), [CutLevel(fig7c_templates), BufferLevel(fig7c_templates),
                                  PlaceRouteLevel()])
    assert mapping.trace == [] and mapping.status == "mapped"
    assert mapping.metrics["sections"] == 2
    cut = next(s for s in mapping.stages if s["stage"] == "sections")
    assert cut["probe_rounds"] == 0
    assert cut["confirm_recuts"] == 1 and cut["confirm_overfull"][0] == [0]
    assert cut["confirm_overfull"][1] == []          # the re-cut with the learned demand
    _assert_fig7c_buffers(mapping)


def test_a_cut_with_no_time_to_cut_again_hands_its_learned_buffers_to_the_feedback(monkeypatch):
    """The cut's own balancing learns the buffers of its one section, but its wall share is
    spent before it can cut again: the buffer level's overflow then re-cuts with the
    learned buffers (no scale factor raised), though balancing taught nothing new then."""
    monkeypatch.setattr(levels, "PROBE_SHARE", 0.0)
    monkeypatch.setattr(levels, "CUT_WALL_SHARE", 1e-9)     # the cut's wall share: none
    mapping = run(fig7c_graph(), [CutLevel(fig7c_templates), BufferLevel(fig7c_templates),
                                  PlaceRouteLevel()])
    cut = next(s for s in mapping.stages if s["stage"] == "sections")
    assert cut["confirm_recuts"] == 0 and cut["confirm_overfull"] == [[0]]
    assert [t["code"] for t in mapping.trace] == ["RESOURCE_TOO_LOW_PREDICTED"]
    assert "buffer demand learned" in mapping.trace[0]["change"]
    assert mapping.status == "mapped" and mapping.metrics["sections"] == 2
    assert all(s["scale"].get("pmu", 1.0) == 1.0 for s in mapping.sections)


def _assert_fig7c_buffers(mapping) -> None:
    where = {n: p["section"] for n, p in mapping.placement.items()}
    inserted = [b for b in mapping.buffers if b.get("buffer_inserted")]
    assert inserted and all((b["src"], b["dst"]) in FIG7C_BUFFERS for b in inserted)
    assert all(where[b["src"]] == where[b["dst"]] for b in inserted)
    chains = {tuple(b["buffer_units"]) for b in inserted}
    assert all(len(chain) == 2 for chain in chains)                  # 2 PMUs per buffer
    assert sum(n.startswith("buf[") for n in where) == 2 * len(chains)
    via = {(r["src"], r["dst"]): r.get("via_buffers") for r in mapping.routes}
    if where["Exp"] == where["Sum"] == where["Div"]:                  # %17 is shared
        assert via[("Exp", "Sum")] == via[("Exp", "Div")]


def under_estimated_graph() -> Graph:
    """Six forward PCU nodes, then twelve backward ones each estimated at half a PCU."""
    nodes = [Node(f"f{i}", unit="pcu", category="forward") for i in range(6)]
    nodes += [Node(f"b{i}", unit="pcu", pcu=0.5, category="backward") for i in range(12)]
    edges = [Edge(f"f{i}", f"f{i+1}") for i in range(5)] + [Edge("f5", "b0")]
    edges += [Edge(f"b{i}", f"b{i+1}") for i in range(11)]
    return Graph("under", nodes, edges)


def test_under_estimated_section_is_recut_from_the_failed_one():
    mapping = run(under_estimated_graph())
    assert [t["code"] for t in mapping.trace] == ["RESOURCE_TOO_LOW_PREDICTED"]
    assert mapping.trace[0]["section"] == 1                    # the forward section held
    assert "pcu" in mapping.trace[0]["change"]
    assert mapping.sections[0]["nodes"] == [f"f{i}" for i in range(6)]
    assert mapping.status == "mapped" and mapping.metrics["sections"] == 3
    assert all(len(s["nodes"]) <= 8 for s in mapping.sections)


class PortCheck:
    """A level after placement that finds section 1 short of ports once (F1)."""

    name = "ports"

    def __init__(self):
        self.failed = False

    def run(self, state):
        if not self.failed and len(state.work) > 1:
            self.failed = True
            raise MappingError(ErrorHandlingData(
                ErrorCode.INSUFFICIENT_RESOURCES, self.name, "section 1 ran out of ports",
                state.usage(1, lack=True), first_failed=1, succeeded=[0]))

    def fix(self, state, data):
        return None


def test_sections_compiled_before_a_failure_are_reused():
    check = PortCheck()
    mapping = run(under_estimated_graph(),
                  [CutLevel(), BufferLevel(), PlaceRouteLevel(), check])
    codes = [t["code"] for t in mapping.trace]
    assert codes[-1] == "INSUFFICIENT_RESOURCES" and mapping.trace[-1]["level"] == "ports"
    assert mapping.sections[0]["reused"] and mapping.metrics["sections_reused"] >= 1
    placed_once = [s for s in mapping.stages if s["stage"] == "placement" and s["section"] == 0]
    assert len(placed_once) == 1                               # never recompiled
    assert mapping.status == "mapped"


class LatencyCheck:
    """A level that finds Exp and Sum too close once (digest §3.3 F5)."""

    name = "latency"

    def __init__(self):
        self.raised = False

    def run(self, state):
        where = {n: w.section.id for w in state.work for n in w.section.nodes}
        if where["Exp"] == where["Sum"]:
            self.raised = True
            raise MappingError(ErrorHandlingData(
                ErrorCode.LATENCY_BOTTLENECK, self.name, "Exp and Sum share a stage",
                first_failed=where["Exp"], hints={"pair": ("Exp", "Sum")}))

    def fix(self, state, data):
        return None


def test_latency_bottleneck_moves_a_boundary():
    check = LatencyCheck()
    mapping = run(fig7c_graph(), [CutLevel(), check, BufferLevel(), PlaceRouteLevel()])
    assert check.raised and len(mapping.trace) == 1
    assert mapping.trace[0]["code"] == "LATENCY_BOTTLENECK"
    assert "boundary moved" in mapping.trace[0]["change"]
    where = {n: p["section"] for n, p in mapping.placement.items()}
    assert where["Exp"] < where["Sum"]


class FlakyRouter(PlaceRouteLevel):
    """Routing fails once on section 0; the level's own retry fixes it."""

    def __init__(self):
        self.failures = 0

    def _compile_all(self, state, todo):
        results = super()._compile_all(state, todo)
        if self.failures == 0:
            self.failures += 1
            results[0] = SectionResult(SectionOutcome(order=[], failure=SectionFailure(
                "routing", "link S0_0->S0_1 over capacity",
                overused=[Overuse("S0_0->S0_1", "vector", 3, 2, ("a", "b", "c"))])))
        return results


def test_routing_failure_is_first_fixed_locally():
    mapping = run(fig7c_graph(), [CutLevel(), BufferLevel(), FlakyRouter()])
    assert [t["code"] for t in mapping.trace] == ["PNR_LOCAL"]
    assert mapping.trace[0]["fixed_by"] == "place-route"
    assert "congestion penalty near 1 over-used links" in mapping.trace[0]["change"]
    assert mapping.status == "mapped"


def test_local_fixes_go_penalty_then_seed_then_to_the_cut():
    """Every local attempt is a round of the trace: REPLACE_ROUNDS penalties, then a new seed."""
    class AlwaysOverused(FlakyRouter):
        def _compile_all(self, state, todo):
            self.failures = 0
            return super()._compile_all(state, todo)

    options = RunOptions(time_limit=5, max_iterations=REPLACE_ROUNDS + LOCAL_RETRIES + 1)
    with pytest.raises(MappingFailed) as info:
        run(fig7c_graph(), [CutLevel(), BufferLevel(), AlwaysOverused()], options=options)
    changes = [t["change"] for t in info.value.mapping.trace]
    assert all("congestion penalty" in c for c in changes[:REPLACE_ROUNDS])
    assert all("seed" in c for c in changes[REPLACE_ROUNDS:REPLACE_ROUNDS + LOCAL_RETRIES])
    assert info.value.mapping.trace[REPLACE_ROUNDS + LOCAL_RETRIES]["code"] == \
        "INSUFFICIENT_RESOURCES"


def test_node_bigger_than_the_chip_is_unresolvable():
    graph = Graph("big", [Node("huge", pcu=100), Node("x")], [Edge("huge", "x")])
    with pytest.raises(MappingFailed) as info:
        run(graph)
    mapping = info.value.mapping
    assert mapping.status == "failed" and '"huge"' in mapping.diagnosis
    assert mapping.trace[-1]["code"] == "UNRESOLVABLE"


def test_a_lone_node_that_cannot_be_placed_stops_with_no_progress():
    # estimated at half a PMU, but one PMU site per node and more nodes than sites
    graph = Graph("pmus", [Node(f"m{i}", unit="pmu", pmu=0.01) for i in range(9)], [])
    options = RunOptions(time_limit=5, max_iterations=40)
    mapping = None
    try:
        mapping = run(graph, options=options)
    except MappingFailed as exc:
        mapping = exc.mapping
        assert "no more progress" in mapping.diagnosis or "iterations" in mapping.diagnosis
    assert mapping.trace, "the loop must have re-cut at least once"
    if mapping.status == "mapped":      # re-cutting into smaller sections is a valid fix
        assert mapping.metrics["sections"] >= 2


def test_iteration_cap_stops_the_loop():
    class AlwaysFails:
        name = "always"

        def run(self, state):
            raise MappingError(ErrorHandlingData(ErrorCode.PNR_LOCAL, self.name, "again",
                                                 first_failed=0))

        def fix(self, state, data):
            return "tried again"

    class Fixer(PlaceRouteLevel):
        def fix(self, state, data):
            return "retry"

    options = RunOptions(time_limit=5, max_iterations=3)
    with pytest.raises(MappingFailed) as info:
        run(fig7c_graph(), [CutLevel(), Fixer(), AlwaysFails()], options=options)
    assert "3 iterations" in info.value.mapping.diagnosis
    assert len(info.value.mapping.trace) == 3


def test_an_overdue_run_stops_and_says_what_it_would_take(monkeypatch):
    """Past the deadline and its grace, no further section is compiled: the run fails with
    the sections done, the time the rest would take and the --time-limit to ask for."""
    class OverdueAfterOne(PlaceRouteLevel):
        def run(self, state):
            state.run_plan = RunPlan(1.0, clock=lambda: time.time())   # moved on below
            super().run(state)

        def _compile_all(self, state, todo):
            results = super()._compile_all(state, todo[:1])     # the first section in time,
            later = time.time() + 100.0                         # then the run is overdue
            monkeypatch.setattr(time, "time", lambda: later)
            return results + super()._compile_all(state, todo[1:])

    with pytest.raises(MappingFailed) as info:
        run(fig7c_graph(), [CutLevel(), BufferLevel(fig7c_templates), OverdueAfterOne()])
    mapping = info.value.mapping
    assert mapping.trace[-1]["code"] == ErrorCode.TIME_LIMIT.value
    assert "the time limit ran out with 1 of 2 sections compiled" in mapping.diagnosis
    assert "rerun with --time-limit" in mapping.diagnosis


def test_a_recut_asked_for_past_the_overdue_point_fails_at_once():
    """A feedback round's re-cut that nothing could place in time is not begun: the run
    stops with the time-limit diagnosis (bert_L-12 training at 20 s at load 4.7 re-cut
    three times past its deadline and ended at 27.8 s of 20)."""
    state = CompileState(fig7c_graph(), None, None, OPTIONS,
                         run_plan=RunPlan(1.0, clock=lambda: time.monotonic() + 100.0,
                                        started=time.monotonic()))
    state.work = [SectionWork(Section(0, ["a"], pcu=1.0, pmu=0.0)),
                  SectionWork(Section(1, ["b"], pcu=1.0, pmu=0.0))]
    state.cut.recut_from = 1
    with pytest.raises(MappingError) as info:
        CutLevel().run(state)
    data = info.value.data
    assert data.code == ErrorCode.TIME_LIMIT and data.level == "cut"
    assert "rerun with --time-limit" in data.message and data.first_failed == 1


def test_an_overdue_run_with_no_section_compiled_says_the_time_used(monkeypatch):
    """Overdue before its first section (a long cut on a busy machine): the diagnosis gives
    the time used and the limit to ask for, not a per-section time it never measured."""
    class OverdueAtOnce(PlaceRouteLevel):
        def run(self, state):
            state.run_plan = RunPlan(1.0, clock=lambda: time.time())
            later = time.time() + 100.0
            monkeypatch.setattr(time, "time", lambda: later)
            super().run(state)

    with pytest.raises(MappingFailed) as info:
        run(fig7c_graph(), [CutLevel(), BufferLevel(fig7c_templates), OverdueAtOnce()])
    diagnosis = info.value.mapping.diagnosis
    assert "with 0 of 2 sections compiled" in diagnosis and "per section" not in diagnosis
    assert "the time limit ran out after 100 s" in diagnosis
    assert "rerun with --time-limit 223 or more" in diagnosis


def test_an_overdue_run_still_finishes_sections_that_fit_its_slack(monkeypatch):
    """Not begun because the run was overdue, but the others' measured time says the last
    section fits what is left: it is compiled after all, and the run maps."""
    class OverdueAfterOne(PlaceRouteLevel):
        def run(self, state):
            state.run_plan = RunPlan(1.0, clock=lambda: time.time(), slack=1000.0)
            super().run(state)

        def _compile_all(self, state, todo):
            results = super()._compile_all(state, todo[:1])
            later = time.time() + 100.0
            monkeypatch.setattr(time, "time", lambda: later)
            return results + super()._compile_all(state, todo[1:])

    mapping = run(fig7c_graph(), [CutLevel(), BufferLevel(fig7c_templates), OverdueAfterOne()])
    assert mapping.status == "mapped" and mapping.metrics["sections"] == 2
    late = [s for s in mapping.stages if s["stage"] == "placement" and s["section"] == 1]
    assert late and "deadline" in late[0]["note"]


def test_a_raised_scale_never_makes_a_single_node_unplaceable():
    """A section estimated at 0.02 PMU that used 120 (stage buffers) asked for a factor of
    ~6000, after which every node needing a PMU was 'more than one section offers'
    (bert_L-12 training on sn10): the factor stops where the largest node still fits."""
    graph = Graph("g", [Node("w", unit="pmu", pmu=2.0), Node("x", unit="pcu", pcu=1.0)],
                  [Edge("w", "x")])
    state = CompileState(graph, None, None, OPTIONS,
                         cap=Capacity(pcu=8, pmu=8, total=16, agcu=4))
    state.work = [SectionWork(Section(0, ["w", "x"], pcu=1.0, pmu=0.02))]
    usage = SectionUsage(0, pcu=1, pmu=120, units=121, pcu_capacity=8, pmu_capacity=8,
                         unit_capacity=16, estimated_units=1.02, estimated_pcu=1.0,
                         estimated_pmu=0.02)
    data = ErrorHandlingData(ErrorCode.INSUFFICIENT_RESOURCES, "place-route", "too many PMUs",
                             [usage], 0)
    assert CutLevel().fix(state, data) is not None
    assert 1.0 < state.cut.scales[0]["pmu"] <= 8 / 2.0          # w (2 PMUs) still fits 8
    assert state.cut.default_scale["pmu"] <= 4.0
    assert CutLevel().fix(state, data) is None or state.cut.scales[0]["pmu"] <= 4.0


# --- the cut level's re-cut after balancing its own cut: two candidates, time decides -------------
def _chain4() -> Graph:
    """a -> b -> c -> d: heavy a->b and c->d, light b->c (a cut there costs least time)."""
    nodes = [Node(v, unit="pcu") for v in "abcd"]
    edges = [Edge("a", "b", bytes=10**6), Edge("b", "c", bytes=10), Edge("c", "d", bytes=10**6)]
    return Graph("chain4", nodes, edges)


def _plan(graph: Graph, cut: list[list[str]]):
    from formulations.sections.problem import SectionPlan, sections_from
    sections = sections_from(graph, {v: k for k, part in enumerate(cut) for v in part})
    return SectionPlan(sections, 1, len(cut), 0.0, 0.0, "stand-in")


def _edge_buffers(pmus: dict[tuple[str, str], int]):
    """A balancer that adds ``pmus[(u, v)]`` PMUs on u -> v wherever both share a section."""
    def balance(sub: Graph, spec, options, settings, section=None) -> TemplateBuffers:
        return TemplateBuffers({i: {"pmus_added": pmus[e.src, e.dst]}
                                for i, e in enumerate(sub.edges) if (e.src, e.dst) in pmus})
    return balance


@pytest.mark.parametrize("plain_fits", [True, False])
def test_a_recut_keeps_the_fitting_candidate_of_least_time(monkeypatch, plain_fits):
    """The first cut (one section) overflows with its buffers. The re-cut weighs the cut
    with the learned demand ({a}, {b, c, d}: it crosses a heavy edge) and the plain
    least-traffic cut ({a, b}, {c, d}: the light edge): the plain cut is faster and kept
    when it fits; when its section {a, b} overflows too, the other is kept."""
    # plain_fits: 5 PMUs on a -> b and on c -> d, 10 in the first cut, more than tiny's 8;
    # else 9 PMUs on a -> b overflow wherever a and b share a section
    graph = _chain4()
    cuts = {"demand": [["a"], ["b", "c", "d"]], "plain": [["a", "b"], ["c", "d"]]}
    asked = []

    def cut(state, graph, settings, scales, separate, first_id, **how):
        asked.append("plain" if "costs" in how and how["costs"] is None else "demand")
        return _plan(graph, cuts[asked[-1]])
    monkeypatch.setattr(levels, "_cut", cut)
    from hardware import build_fabric
    state = CompileState(graph, TINY, build_fabric(TINY), OPTIONS,
                         cap=Capacity.of_fabric(build_fabric(TINY)),
                         run_plan=RunPlan(10.0))
    level = CutLevel(_edge_buffers({("a", "b"): 5, ("c", "d"): 5} if plain_fits
                                   else {("a", "b"): 9}))
    first = _plan(graph, [["a", "b", "c", "d"]])
    first.extra |= {"planned": 2.5, "planned_spent": 0.5}     # a proven optimum early
    kept = level._confirmed(state, graph, first, {}, [], time.monotonic() + 60)
    assert sorted(asked) == ["demand", "plain"]
    assert kept.extra["confirm_recuts"] == 1
    assert kept.extra["confirm_overfull"][0] == [0]
    assert kept.extra["plain_cut_kept"] is plain_fits
    assert [s.nodes for s in kept.sections] == cuts["plain" if plain_fits else "demand"]


@pytest.mark.parametrize("unspent", [0.0, 2.0])
def test_a_recut_gets_a_whole_cut_share_and_the_plain_cut_only_what_the_first_left(
        monkeypatch, unspent):
    """The re-cut with the learned demand is planned a whole cut share, as the feedback's
    re-cut would be (resnet50 training on plasticine: on half of it, beside the plain cut,
    6.95 samples/s against the feedback's 8.10). The plain least-traffic cut runs only on
    the planned seconds the first cut left unspent (a proven optimum early), never taken
    from the run's plan: with none left it is not tried, and the demand's cut is kept."""
    graph = _chain4()
    cuts = {"demand": [["a"], ["b", "c", "d"]], "plain": [["a", "b"], ["c", "d"]]}
    planned = {}

    def cut(state, graph, settings, scales, separate, first_id, **how):
        kind = "plain" if "costs" in how and how["costs"] is None else "demand"
        planned[kind] = settings.time_limit
        return _plan(graph, cuts[kind])
    monkeypatch.setattr(levels, "_cut", cut)
    from hardware import build_fabric
    state = CompileState(graph, TINY, build_fabric(TINY), OPTIONS,
                         cap=Capacity.of_fabric(build_fabric(TINY)), run_plan=RunPlan(10.0))
    level = CutLevel(_edge_buffers({("a", "b"): 5, ("c", "d"): 5}))
    first = _plan(graph, [["a", "b", "c", "d"]])
    first.extra |= {"planned": 2.5, "planned_spent": 2.5 - unspent}
    kept = level._confirmed(state, graph, first, {}, [], time.monotonic() + 60)
    assert planned["demand"] == RunPlan(10.0).cut_seconds()        # 2.5: a whole share
    assert planned.get("plain") == (unspent or None)
    assert state.run_plan.unplanned == 7.5                 # the plain cut took no more
    assert kept.extra["plain_cut_kept"] is bool(unspent)
    assert [s.nodes for s in kept.sections] == cuts["plain" if unspent else "demand"]


@pytest.mark.parametrize("repair_fits_as_many", [True, False])
def test_a_recut_repairs_the_sections_too_full_and_keeps_the_others(monkeypatch,
                                                                     repair_fits_as_many):
    """The first cut's section 1 overflows with its buffers. The repair cuts sections 1-2
    again (the one too full and the next) on their nodes' part of the share, section 0
    kept. When it fits in the first cut's 3 sections it is kept and the whole graph is not
    cut again; when it needs 4, the whole re-cut (3) runs on the rest of the share and is
    kept."""
    graph = Graph("chain6", [Node(v, unit="pcu") for v in "abcdef"],
                  [Edge(u, v, bytes=10) for u, v in zip("abcde", "bcdef")])
    repair = [["b", "c"], ["d", "e", "f"]] if repair_fits_as_many else [["b"], ["c"],
                                                                         ["d", "e", "f"]]
    cuts = {"repair": repair, "whole": [["a", "b"], ["c"], ["d", "e", "f"]]}
    planned = {}

    def cut(state, sub, settings, scales, separate, first_id, **how):
        kind = "repair" if len(sub.nodes) < len(graph.nodes) else "whole"
        planned[kind] = settings.time_limit
        plan = _plan(sub, cuts[kind])
        for k, section in enumerate(plan.sections):
            section.id = first_id + k
        return plan
    monkeypatch.setattr(levels, "_cut", cut)
    from hardware import build_fabric
    state = CompileState(graph, TINY, build_fabric(TINY), OPTIONS,
                         cap=Capacity.of_fabric(build_fabric(TINY)), run_plan=RunPlan(12.0))
    level = CutLevel(_edge_buffers({("c", "d"): 9}))
    first = _plan(graph, [["a"], ["b", "c", "d"], ["e", "f"]])
    kept = level._confirmed(state, graph, first, {}, [], time.monotonic() + 60)
    assert planned == {"repair": 3.0 * 5 / 6} | ({} if repair_fits_as_many else {"whole": 3.0})
    assert kept.extra["confirm_overfull"] == [[1], []] + ([] if repair_fits_as_many else [[]])
    expected = [["a"]] + repair if repair_fits_as_many else cuts["whole"]
    assert [s.nodes for s in kept.sections] == expected
    assert [s.id for s in kept.sections] == [0, 1, 2]
    assert kept.extra.get("repaired") == ([1, 2] if repair_fits_as_many else None)


def test_probes_end_when_one_teaches_nothing_new(monkeypatch):
    """A probe that raises no edge's buffer demand ends the probes, even when a section
    still looks too full: the next greedy cut would be the same, balanced alike (before,
    the cut repeated it up to PROBE_ROUNDS times)."""
    monkeypatch.setattr(levels, "fits_after_balancing", lambda *args: False)
    mapping = run(fig7c_graph(), [CutLevel(fig7c_templates), BufferLevel(fig7c_templates),
                                  PlaceRouteLevel()])
    cut = next(s for s in mapping.stages if s["stage"] == "sections")
    assert cut["probe_rounds"] == 2 < levels.PROBE_ROUNDS      # learned, then nothing new
    assert cut["buffer_demand_pmus"] == 8
