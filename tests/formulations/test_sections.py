"""The greedy section cut: capacities, categories, acyclic quotient."""

from dataclasses import replace

import networkx as nx
import pytest
from hypothesis import given, settings, strategies as st

from formulations.sections import (Capacity, SectionError, build_section_model,
                                   category_topological_order, cut_sections, cut_traffic,
                                   forced_traffic, greedy_cut, greedy_sections, lower_bound,
                                   unit_demand)
from formulations.sections.problem import loosest_scale
from formulations.solver import SolveSettings
from hardware import build_fabric, load_hardware
from model.graph import Edge, Graph, Node


def random_dag(draw_edges, n, units, categories):
    nodes = [Node(f"n{i}", unit=units[i], category=categories[i]) for i in range(n)]
    edges = [Edge(f"n{a}", f"n{b}") for a, b in draw_edges if a < b]
    return Graph("r", nodes, edges)


@st.composite
def dags(draw):
    n = draw(st.integers(1, 30))
    units = draw(st.lists(st.sampled_from(["pcu", "pmu", "any"]), min_size=n, max_size=n))
    cats = draw(st.lists(st.sampled_from(["forward", "backward", None]), min_size=n, max_size=n))
    pairs = draw(st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1)), max_size=3 * n))
    return random_dag(pairs, n, units, cats)


@settings(max_examples=150, deadline=None)
@given(dags(), st.integers(1, 4), st.integers(1, 4))
def test_cut_is_a_valid_ordered_partition(graph, pcu, pmu):
    cap = Capacity(pcu=pcu, pmu=pmu, total=pcu + pmu, agcu=0)
    sections = greedy_cut(graph, cap)
    assigned = [n for s in sections for n in s.nodes]
    assert sorted(assigned) == sorted(graph.node_ids)          # a partition
    where = {n: s.id for s in sections for n in s.nodes}
    for e in graph.edges:                                        # quotient acyclic, ordered
        assert where[e.src] <= where[e.dst]
    for s in sections:
        demand = [unit_demand(graph.node(n)) for n in s.nodes]
        assert sum(d["pcu"] for d in demand) <= cap.pcu
        assert sum(d["pmu"] for d in demand) <= cap.pmu
        assert sum(d["pcu"] + d["pmu"] + d["any"] for d in demand) <= cap.total
        assert len({graph.node(n).category for n in s.nodes}) == 1   # never mixes categories


def test_categories_stay_apart_without_extra_sections():
    # forward chain and a backward chain interleaved in file order
    nodes = [Node(f"f{i}", unit="pcu", category="forward") for i in range(3)]
    nodes += [Node(f"b{i}", unit="pcu", category="backward") for i in range(3)]
    nodes = [nodes[0], nodes[3], nodes[1], nodes[4], nodes[2], nodes[5]]
    edges = [Edge("f0", "f1"), Edge("f1", "f2"), Edge("f2", "b0"), Edge("b0", "b1"),
             Edge("b1", "b2")]
    sections = greedy_cut(Graph("g", nodes, edges), Capacity(pcu=10, pmu=10, total=20, agcu=0))
    assert [s.nodes for s in sections] == [["f0", "f1", "f2"], ["b0", "b1", "b2"]]


def test_category_order_is_topological_and_stays_in_a_category():
    nodes = [Node("f0", category="forward"), Node("b0", category="backward"),
             Node("f1", category="forward"), Node("b1", category="backward")]
    edges = [Edge("f0", "f1"), Edge("f1", "b0"), Edge("b0", "b1"), Edge("f0", "b1")]
    assert category_topological_order(Graph("g", nodes, edges)) == ["f0", "f1", "b0", "b1"]


def test_node_bigger_than_the_chip():
    g = Graph("g", [Node("big", pcu=100)], [])
    with pytest.raises(SectionError, match='"big"'):
        greedy_cut(g, Capacity(pcu=64, pmu=64, total=128, agcu=4))


def test_capacity_of_presets():
    cap = Capacity.of_fabric(build_fabric(load_hardware("plasticine")))
    assert (cap.pcu, cap.pmu, cap.total, cap.agcu) == (64, 64, 128, 4)


def test_scale_factor_leaves_headroom():
    g = Graph("g", [Node(f"n{i}", unit="pcu") for i in range(8)], [])
    cap = Capacity(pcu=8, pmu=0, total=8, agcu=0)
    assert len(greedy_cut(g, cap)) == 1
    assert len(greedy_cut(g, cap, scale=2.0)) == 2


# ---- the section model ------------------------------------------------------------------


def check_cut(graph, cap, plan, scales=None):
    where = {n: s.id for s in plan.sections for n in s.nodes}
    assert sorted(where) == sorted(graph.node_ids)
    for e in graph.edges:
        if not e.loop_carried:
            assert where[e.src] <= where[e.dst]
    for s in plan.sections:
        demand = [unit_demand(graph.node(n)) for n in s.nodes]
        assert sum(d["pcu"] for d in demand) <= cap.pcu + 1e-9
        assert sum(d["pmu"] for d in demand) <= cap.pmu + 1e-9
        assert len({graph.node(n).category for n in s.nodes}) == 1


@settings(max_examples=25, deadline=None)
@given(dags(), st.integers(2, 4), st.integers(2, 4))
def test_model_cut_is_valid_and_never_worse_than_greedy(graph, pcu, pmu):
    for e in graph.edges:
        e.bytes = float(hash((e.src, e.dst)) % 97 + 1)
    cap = Capacity(pcu=pcu, pmu=pmu, total=pcu + pmu, agcu=0)
    plan = cut_sections(graph, cap, SolveSettings("cp-sat", time_limit=5))
    check_cut(graph, cap, plan)
    assert lower_bound(graph, cap) <= plan.count <= plan.greedy_sections
    assert plan.traffic <= plan.greedy_traffic + 1e-9
    assert plan.traffic == pytest.approx(cut_traffic(graph, plan.sections))
    assert plan.bound_traffic <= plan.traffic + 1e-6          # the bound is valid
    assert forced_traffic(graph, cap, plan.count) <= plan.traffic + 1e-9


@settings(max_examples=100, deadline=None)
@given(dags(), st.integers(2, 4), st.integers(2, 4),
       st.lists(st.tuples(st.sampled_from([1.0, 1.3, 2.0]), st.sampled_from([1.0, 1.6, 2.5])),
                min_size=1, max_size=31))
def test_the_lower_bound_holds_for_any_scale_factors(graph, pcu, pmu, factors):
    """Sections planned with raised factors (one per position, the last for the rest):
    the bound from each resource's loosest factor never exceeds a cut that fits them."""
    cap = Capacity(pcu=pcu, pmu=pmu, total=pcu + pmu, agcu=0)
    n = len(graph.nodes)
    scales = {k: {"pcu": a, "pmu": b, "units": a} for k, (a, b) in
              enumerate(factors[:n] + factors[-1:] * (n + 1 - len(factors[:n])))}
    if any(unit_demand(v)[kind] * scales[0][kind] > getattr(cap, kind)
           for v in graph.nodes for kind in ("pcu", "pmu")):
        return                                  # a node that fits no section
    try:
        sections = greedy_sections(graph, cap, scales, [])
    except SectionError:
        return
    assert lower_bound(graph, cap, loosest_scale(scales, n)) <= len(sections)


def test_a_raised_pmu_factor_raises_the_lower_bound():
    """After a feedback round every section is planned with PMUs 2x their estimate: the
    bound counts it (it used the PCUs' 1.0, so the cut solved section counts that could
    not fit: bert_L-12 training on plasticine, bound 29 for a re-cut of 32)."""
    graph = Graph("chain", [Node(f"n{i}", unit="pcu" if i % 2 else "pmu") for i in range(12)],
                  [Edge(f"n{i}", f"n{i+1}", bytes=1) for i in range(11)])
    cap = Capacity(pcu=4, pmu=4, total=8, agcu=0)
    doubled = {k: {"pcu": 1.0, "pmu": 2.0, "units": 1.0} for k in range(13)}
    assert lower_bound(graph, cap) == 2
    plan = cut_sections(graph, cap, SolveSettings("highs", time_limit=10), doubled)
    assert plan.lower_bound == 3 == plan.count


def test_window_search_improves_and_bound_holds_on_a_long_chain(monkeypatch):
    # force the large-neighbourhood search on a chain whose greedy cut hits heavy edges
    import formulations.sections.cut as sections
    monkeypatch.setattr(sections, "MONOLITHIC_LIMIT", 0)
    sizes = [1 if i % 3 == 1 else 50 for i in range(29)]
    graph = Graph("chain", [Node(f"n{i}", unit="pcu", category="forward" if i < 15 else
                                 "backward") for i in range(30)],
                  [Edge(f"n{i}", f"n{i+1}", bytes=b) for i, b in enumerate(sizes)])
    cap = Capacity(pcu=4, pmu=0, total=4, agcu=0)
    plan = cut_sections(graph, cap, SolveSettings("cp-sat", time_limit=10))
    check_cut(graph, cap, plan)
    assert plan.traffic < plan.greedy_traffic
    assert forced_traffic(graph, cap, plan.count) >= 50          # the category edge
    # the windows grew to the whole model, which proves the cut optimal
    assert plan.status == "OPTIMAL" and plan.bound_traffic == plan.traffic


def test_model_cuts_the_light_edge_where_greedy_cuts_the_heavy_one():
    # greedy fills {n0, n1, n2} and cuts the 100-byte edge; the model cuts n1 -> n2
    sizes = [5, 1, 100, 5]
    graph = Graph("chain", [Node(f"n{i}", unit="pcu") for i in range(5)],
                  [Edge(f"n{i}", f"n{i+1}", bytes=b) for i, b in enumerate(sizes)])
    cap = Capacity(pcu=3, pmu=0, total=3, agcu=0)
    plan = cut_sections(graph, cap, SolveSettings("highs", time_limit=10))
    assert plan.greedy_sections == plan.count == 2
    assert plan.greedy_traffic == 100 and plan.traffic == 1
    assert plan.status == "OPTIMAL" and plan.method == "section model"


def test_separated_pair_lands_in_different_sections():
    graph = Graph("chain", [Node(f"n{i}", unit="pcu") for i in range(4)],
                  [Edge(f"n{i}", f"n{i+1}", bytes=1) for i in range(3)])
    cap = Capacity(pcu=8, pmu=0, total=8, agcu=0)
    plan = cut_sections(graph, cap, SolveSettings("cp-sat", time_limit=5), separate=[("n1", "n2")])
    where = {n: s.id for s in plan.sections for n in s.nodes}
    assert where["n1"] < where["n2"] and plan.count == 2


def test_per_resource_scale_shrinks_only_that_resource():
    graph = Graph("mix", [Node(f"c{i}", unit="pcu") for i in range(4)]
                  + [Node(f"m{i}", unit="pmu") for i in range(4)], [])
    cap = Capacity(pcu=4, pmu=4, total=8, agcu=0)
    plan = cut_sections(graph, cap, SolveSettings("cp-sat", time_limit=5),
                        {k: {"pmu": 2.0} for k in range(9)})
    assert plan.count == 2
    for s in plan.sections:
        assert s.pmu <= 2


def test_section_model_exports_to_mps_and_round_trips(tmp_path):
    from formulations.solver import solve_model_file
    graph = Graph("g", [Node(f"n{i}", unit="pcu") for i in range(5)],
                  [Edge(f"n{i}", f"n{i+1}", bytes=i + 1) for i in range(4)])
    cap = Capacity(pcu=3, pmu=0, total=3, agcu=0)
    model, _, _ = build_section_model(graph, cap, 2, {})
    direct = model.solve(backend="cp-sat", time_limit=10)
    path = tmp_path / "sections.mps"
    model.write_mps(str(path))
    again = solve_model_file(str(path), backend="highs", time_limit=10)
    assert direct.objective == pytest.approx(again.objective)
    assert {"assignment", "order", "capacity", "traffic"} <= set(model.families())


def test_infeasible_count_is_diagnosed_by_family():
    from formulations.solver import diagnose_infeasible
    graph = Graph("g", [Node(f"n{i}", unit="pcu") for i in range(5)], [])
    model, _, _ = build_section_model(graph, Capacity(pcu=2, pmu=0, total=2, agcu=0), 2, {})
    assert "capacity" in diagnose_infeasible(model, keep=["assignment"])


# --- stage buffers inside the cut (formulations.sections.buffers) -------------------------------
def residual_chain(blocks: int) -> Graph:
    """``blocks`` residual blocks of three PCU operators, each with a skip edge from its
    input to its add: balancing pads every skip edge (the shape of a transformer layer)."""
    nodes, edges = [Node("x0", unit="pcu")], []
    for b in range(blocks):
        ops = [f"b{b}.op{i}" for i in range(3)] + [f"x{b + 1}"]
        nodes += [Node(v, unit="pcu") for v in ops]
        edges += [Edge(a, c, bytes=64) for a, c in zip([f"x{b}"] + ops[:-1], ops)]
        edges.append(Edge(f"x{b}", f"x{b + 1}", bytes=64))
    return Graph("residual", nodes, edges)


def skip_demand(graph: Graph, pmus: float) -> dict:
    return {(e.src, e.dst): pmus for e in graph.edges if e.src.startswith("x")
            and e.dst.startswith("x")}


def test_every_section_of_a_buffered_cut_fits_with_its_own_buffers():
    """16 PCUs and 8 PMUs a section; every skip edge inside a section needs 3 buffer PMUs.
    Blind to them, a section holds four blocks (12 buffer PMUs); the greedy cut and the
    model both count them per section: no section overflows (at most two skips inside)."""
    graph = residual_chain(8)
    cap = Capacity(pcu=16, pmu=8, total=24, agcu=0)
    demand = skip_demand(graph, 3)
    blind = greedy_sections(graph, cap, {})
    assert max(_buffers_in(graph, s.nodes, demand) for s in blind) > cap.pmu   # the old cut
    for sections in (greedy_sections(graph, cap, {}, buffers=demand),
                     cut_sections(graph, cap, SolveSettings("cp-sat", 5.0), buffers=demand
                                  ).sections):
        for s in sections:
            assert s.buffers == _buffers_in(graph, s.nodes, demand) <= cap.pmu
            assert s.pcu <= cap.pcu and s.pmu + s.buffers <= cap.pmu


def _buffers_in(graph: Graph, nodes, demand) -> float:
    inside = set(nodes)
    return sum(demand.get((e.src, e.dst), 0) for e in graph.edges
               if e.src in inside and e.dst in inside)


@pytest.mark.parametrize("backend", ["cp-sat", "highs"])
def test_the_section_model_pays_a_shared_buffer_chain_once(backend):
    """One driver feeding two sinks on one net, 5 and 7 buffer PMUs: a section holding all
    three pays 7 (the chain's deepest tap), so one section of 8 PMUs holds them; two nets
    of 5 and 7 would not fit."""
    nodes = [Node(v, unit="pcu") for v in ("a", "b", "c")]
    shared = Graph("shared", nodes, [Edge("a", "b", net="n"), Edge("a", "c", net="n")])
    apart = Graph("apart", nodes, [Edge("a", "b"), Edge("a", "c")])
    cap = Capacity(pcu=8, pmu=8, total=16, agcu=0)
    demand = {("a", "b"): 5, ("a", "c"): 7}
    settings = SolveSettings(backend, 5.0)
    one = cut_sections(shared, cap, settings, buffers=demand)
    assert one.count == 1 and one.sections[0].buffers == 7
    two = cut_sections(apart, cap, settings, buffers=demand)
    assert two.count == 2 and all(s.buffers <= cap.pmu for s in two.sections)
    model, _, _ = build_section_model(apart, cap, 1, {}, buffers=demand)
    assert model.families().get("buffers") == 2


def test_learned_demand_only_grows_and_counts_what_it_raised():
    from formulations.sections.buffers import learn_demand
    graph = residual_chain(1)
    demand = {("x0", "x1"): 4}
    assert learn_demand(demand, graph.edges, {4: 2}) == 0          # x0 -> x1 already 4
    assert learn_demand(demand, graph.edges, {4: 6, 0: 1}) == 2
    assert demand == {("x0", "x1"): 6, ("x0", "b0.op0"): 1}


# --- the time objective (formulations.sections.costs) --------------------------------------------
@pytest.mark.parametrize("backend", ["cp-sat", "highs"])
def test_with_costs_the_cut_puts_the_slow_stages_together(backend):
    """Two slow stages (10 cycles) and two fast ones (1 cycle), two to a section: the time
    of a batch is the sum of each section's slowest stage, so the slow pair shares a
    section (10 + 1), where any other cut of the same count takes 20."""
    from formulations.sections.costs import CutCosts, cut_time
    from formulations.sections.problem import assignment_of
    graph = Graph("four", [Node(v, unit="pcu") for v in ("slow1", "fast1", "slow2", "fast2")],
                  [])
    costs = CutCosts({"slow1": 10.0, "slow2": 10.0, "fast1": 1.0, "fast2": 1.0}, 0.0)
    cap = Capacity(pcu=2, pmu=2, total=4, agcu=0)
    plan = cut_sections(graph, cap, SolveSettings(backend, 5.0), costs=costs)
    assert plan.count == 2
    assert (cut_time(graph, assignment_of(plan.sections), costs)
            == plan.extra["estimated_cycles_per_sample"] == 11)
    assert {frozenset(s.nodes) for s in plan.sections} == {frozenset({"slow1", "slow2"}),
                                                          frozenset({"fast1", "fast2"})}


def test_the_time_of_a_section_is_its_dram_when_that_is_slower():
    """Section time = max(slowest stage, DRAM cycles of the bytes it writes and reads)."""
    from formulations.sections.costs import CutCosts, cut_time
    graph = Graph("pair", [Node("a"), Node("b")], [Edge("a", "b", bytes=1000)])
    costs = CutCosts({"a": 2.0, "b": 3.0}, dram_per_byte=0.01)
    assert cut_time(graph, {"a": 0, "b": 0}, costs) == 3.0
    assert cut_time(graph, {"a": 0, "b": 1}, costs) == 10.0 + 10.0      # 1000 B * 0.01 each


def fan_out_chain() -> Graph:
    """p -> a (900 B); a's net n to b and c (600 B each); b -> c (700 B)."""
    return Graph("fan", [Node(v, unit="pcu") for v in "pabc"],
                 [Edge("p", "a", bytes=900), Edge("a", "b", bytes=600, net="n"),
                  Edge("a", "c", bytes=600, net="n"), Edge("b", "c", bytes=700)])


def test_a_net_crossing_a_cut_is_moved_once_as_sim_perf_moves_it():
    """Net n leaves section 0 for b and c in section 1: written once and read once (600 B
    each way), not once per edge; an assignment's DRAM bytes per section agree with what
    sim.perf counts for it."""
    from formulations.sections.costs import CutCosts, cut_nets, cut_time, net_sections
    graph = fan_out_chain()
    costs = CutCosts({v: 1.0 for v in "pabc"}, dram_per_byte=0.01)
    assert cut_time(graph, {"p": 0, "a": 0, "b": 1, "c": 1}, costs) == 6.0 + 6.0
    assert cut_time(graph, {"p": 0, "a": 1, "b": 1, "c": 1}, costs) == 9.0 + 9.0
    moved = {k: 0.0 for k in range(3)}
    for net in cut_nets(graph, costs):          # c apart: n written once, read by 1 and 2
        for k in net_sections(net, {"p": 0, "a": 0, "b": 1, "c": 2}):
            moved[k] += net.bytes
    assert moved == {0: 600.0, 1: 600.0 + 700.0, 2: 600.0 + 700.0}


@pytest.mark.parametrize("backend", ["cp-sat", "highs"])
def test_the_time_objective_cuts_a_fan_out_net_that_is_moved_once(backend):
    """Two sections of at most 3 nodes, DRAM-bound: cutting net n (600 B written, 600 B
    read) beats cutting p -> a (900 B); counted per edge, n would cost 1200 B a side and
    the cut would take p -> a."""
    from formulations.sections.costs import CutCosts
    costs = CutCosts({v: 1.0 for v in "pabc"}, dram_per_byte=0.01)
    plan = cut_sections(fan_out_chain(), Capacity(pcu=3, pmu=3, total=3, agcu=0),
                        SolveSettings(backend, 5.0), costs=costs)
    assert [sorted(s.nodes) for s in plan.sections] == [["a", "p"], ["b", "c"]]
    assert plan.extra["estimated_cycles_per_sample"] == 12.0


def test_a_window_counts_its_border_nets_as_the_whole_cut_does():
    """Moving nodes inside a window changes the window's time exactly as it changes the
    whole cut's: its nets to and from the rest are written or read as in the whole."""
    from formulations.sections.costs import CutCosts, cut_time
    graph = Graph("w", [Node(v, unit="pcu") for v in "pabcq"],
                  [Edge("p", "a", bytes=500, net="m"), Edge("p", "b", bytes=500, net="m"),
                   Edge("a", "b", bytes=300, net="n"), Edge("a", "q", bytes=300, net="n"),
                   Edge("b", "c", bytes=800), Edge("c", "q", bytes=100)])
    costs = CutCosts({v: 1.0 for v in "pabcq"}, dram_per_byte=0.01)
    window = graph.subgraph(["a", "b", "c"])
    local = costs.for_window(graph, window)
    cuts = [{"a": 1, "b": 1, "c": 1}, {"a": 1, "b": 1, "c": 2}, {"a": 1, "b": 2, "c": 2}]
    whole = [cut_time(graph, {"p": 0, "q": 3} | cut, costs) for cut in cuts]
    inside = [cut_time(window, {v: k - 1 for v, k in cut.items()}, local) for cut in cuts]
    assert [w - whole[0] for w in whole] == pytest.approx([i - inside[0] for i in inside])
    assert len(set(whole)) == 3


@pytest.mark.parametrize("backend", ["cp-sat", "highs"])
def test_a_streaming_stage_moves_only_the_inputs_of_its_own_section(backend):
    """m streams a's and b's 3200 B (50 cycles each at 64 B a cycle): 100 cycles with both
    in its section, none with both read from DRAM (sim.perf's rule). Sections of at most
    3 nodes: {a, b} {m, c} takes 50 + 6.4 cycles (6400 B read at 0.001 cycles a byte), where
    counting m's inputs wherever they come from makes {a, b, m} {c} the fastest (101)."""
    from formulations.sections.costs import cut_costs, cut_time
    graph = Graph("join", [Node(v, unit="pcu") for v in "abmc"],
                  [Edge("a", "m", bytes=3200), Edge("b", "m", bytes=3200),
                   Edge("m", "c", bytes=64)])
    costs = replace(cut_costs(graph, load_hardware("plasticine")), dram_per_byte=0.001)
    assert cut_time(graph, {"a": 0, "b": 0, "m": 0, "c": 1}, costs) == pytest.approx(100 + 1)
    assert cut_time(graph, {"a": 0, "b": 1, "m": 1, "c": 1}, costs) == pytest.approx(50 + 50)
    plan = cut_sections(graph, Capacity(pcu=3, pmu=3, total=3, agcu=0),
                        SolveSettings(backend, 5.0), costs=costs)
    assert [sorted(s.nodes) for s in plan.sections] == [["a", "b"], ["c", "m"]]
    assert plan.extra["estimated_cycles_per_sample"] == pytest.approx(50 + 6.4)


def test_the_cut_records_its_solves_batch_by_batch():
    """The parallel benchmark's estimates hand out the cut's solves batch by batch: a
    window phase is one batch of independent solves, a portfolio one of its seeds."""
    graph = residual_chain(8)
    cap = Capacity(pcu=4, pmu=4, total=8, agcu=0)
    plan = cut_sections(graph, cap, SolveSettings("cp-sat", 2.0))
    batches = plan.extra["seconds_of_batches"]
    assert batches and all(len(b) >= 1 and all(t >= 0 for t in b) for b in batches)
    assert len(plan.results) <= sum(map(len, batches))


# ---- the count-reducing window step -------------------------------------------------------


def two_resource_dag(seed: int, n: int = 14, density: float = 0.15) -> Graph:
    """A DAG of ``n`` nodes that need PCUs and PMUs: greedy's first-fit leaves room in its
    sections (seed 0: greedy 8 sections where 7 fit)."""
    import random
    r = random.Random(seed)
    nodes = [Node(f"n{i}", pcu=r.randint(1, 4), pmu=r.randint(0, 3)) for i in range(n)]
    edges = [Edge(f"n{a}", f"n{b}", bytes=1) for a in range(n) for b in range(a + 1, n)
             if r.random() < density]
    return Graph("r", nodes, edges)


def test_windows_find_fewer_sections_where_the_whole_model_is_starved(monkeypatch):
    """The whole model's count phase is skipped (its set-up exceeds its plan), as on a large
    graph; the count-reducing windows still cut greedy's 8 sections to fewer."""
    import formulations.sections.cut as sections
    monkeypatch.setattr(sections, "PAIR_SECONDS", 1e3)       # no whole model fits the plan
    monkeypatch.setattr(sections, "MONOLITHIC_LIMIT", 0)     # the window searches run
    graph = two_resource_dag(0)
    cap = Capacity(pcu=6, pmu=6, total=12, agcu=0)
    plan = cut_sections(graph, cap, SolveSettings("cp-sat", time_limit=20))
    check_cut(graph, cap, plan)
    assert plan.greedy_sections == 8
    assert plan.count < plan.greedy_sections
    assert plan.extra["merged_by_windows"] == plan.greedy_sections - plan.count
    phases = plan.extra["planned_by_phase"]        # each phase's own work, none twice
    assert phases["merge"] > 0
    assert sum(phases.values()) == pytest.approx(plan.extra["planned_spent"], abs=0.01)


def test_the_packing_model_puts_the_units_in_the_first_sections():
    """With ``pack`` the model's optimum leaves its last section empty where the nodes fit
    in fewer; the traffic objective alone is indifferent (no edges)."""
    from formulations.sections.portfolio import CutSolve, solve_cut
    graph = Graph("g", [Node(f"n{i}", unit="pcu") for i in range(3)], [])
    cap = Capacity(pcu=3, pmu=0, total=3, agcu=0)
    job = CutSolve(graph, cap, 2, {}, (), {"n0": 1, "n1": 1, "n2": 0}, "cp-sat", 2.0, 0,
                   1e12, pack=True)
    solved = solve_cut(job)
    assert solved.result.status.name == "OPTIMAL"
    assert set(solved.assignment.values()) == {0}


def test_a_packing_window_weighs_only_its_last_sections():
    """The packing objective counts the units in a window's last two sections, the last one
    most: it leaves the order of the first ones free, which CP-SAT otherwise spent a
    window's whole plan proving."""
    graph = Graph("g", [Node(f"n{i}", unit="pcu") for i in range(4)], [])
    cap = Capacity(pcu=4, pmu=0, total=4, agcu=0)
    model, x, _ = build_section_model(graph, cap, 4, {}, pack=True)
    weight = model.to_arrays().obj
    for v in x:
        assert weight[x[v][0].index] == weight[x[v][1].index] == 0
        assert 0 < weight[x[v][2].index] < weight[x[v][3].index]


def test_the_count_reducing_step_ends_at_the_first_sweep_that_loses_a_section(monkeypatch):
    """Once a sweep of windows lost a section, no further sweep is asked: on the MSR graphs
    a sweep after a loss never lost another, and its plan goes to the time search."""
    import formulations.sections.cut as sections
    monkeypatch.setattr(sections, "PAIR_SECONDS", 1e3)       # no whole model fits the plan
    monkeypatch.setattr(sections, "MONOLITHIC_LIMIT", 0)     # the window searches run
    lost = []                                   # sections each sweep lost, in order
    merge, pack = sections._Cutter.merge_sweep, sections._Cutter.pack_sweep

    def merged(self, assignment, size, first, last, keep):
        lost.append(merge(self, assignment, size, first, last, keep))
        return lost[-1]

    def packed(self, assignment, size, first, last, keep):
        end = pack(self, assignment, size, first, last, keep)
        lost.append(last - end)
        return end
    monkeypatch.setattr(sections._Cutter, "merge_sweep", merged)
    monkeypatch.setattr(sections._Cutter, "pack_sweep", packed)
    graph = two_resource_dag(1, n=24, density=0.1)     # greedy 13 sections, lower bound 11
    plan = cut_sections(graph, Capacity(pcu=6, pmu=6, total=12, agcu=0),
                        SolveSettings("cp-sat", time_limit=20))
    assert plan.extra["merged_by_windows"] > 0
    assert [n > 0 for n in lost].index(True) == len(lost) - 1


def test_a_window_cut_into_fewer_sections_closes_the_gap():
    """A window of sections 1-3 re-cut into two: the sections after it move up one."""
    from formulations.sections.cut import _place
    graph = Graph("chain", [Node(f"n{i}", unit="pcu") for i in range(5)],
                  [Edge(f"n{i}", f"n{i+1}") for i in range(4)])
    assignment = {f"n{i}": i for i in range(5)}
    window = graph.subgraph(["n1", "n2", "n3"])
    assert _place(assignment, window, 1, 4, {"n1": 0, "n2": 0, "n3": 2}) == 1
    assert assignment == {"n0": 0, "n1": 1, "n2": 1, "n3": 2, "n4": 3}


def test_a_cut_with_scales_per_position_keeps_its_count(monkeypatch):
    """Sections move in the count-reducing step, so a cut whose positions have their own
    scales (a feedback round's) is left to the whole model."""
    import formulations.sections.cut as sections
    monkeypatch.setattr(sections, "PAIR_SECONDS", 1e3)
    monkeypatch.setattr(sections, "MONOLITHIC_LIMIT", 0)
    graph = two_resource_dag(0)
    cap = Capacity(pcu=6, pmu=6, total=12, agcu=0)
    scales = {k: (1.0 if k % 2 else {"pmu": 1.05}) for k in range(15)}
    plan = cut_sections(graph, cap, SolveSettings("cp-sat", time_limit=5), scales)
    assert plan.count == plan.greedy_sections
    assert "merged_by_windows" not in plan.extra
