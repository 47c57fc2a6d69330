"""The boundary refinement of a cut (formulations/sections/refine.py)."""

import math
import pickle
import time

import pytest
from hypothesis import given, settings, strategies as st

from formulations.sections import Capacity, greedy_sections
from formulations.sections.costs import CutCosts, cut_time
from formulations.sections.problem import assignment_of, sections_from
from formulations.sections.refine import _Refiner, refine_cut
from formulations.solver import Budget
from model.graph import Edge, Graph, Node

ZERO = {"pcu": 0.0, "pmu": 0.0, "any": 0.0, "agcu": 0.0}


def budget(seconds: float = 5.0) -> Budget:
    return Budget(seconds, deadline=time.monotonic() + 600)


def far_branch() -> Graph:
    """p's 1000-byte value is read by a in section 0 and by r in section 2, whose output is
    8 bytes: r belongs with p, but section 0 is full until f (whose only successor lies in
    section 2) moves on to section 1, which has room for one."""
    nodes = [Node(v, unit="pcu") for v in ("p", "a", "f", "m1", "m2", "r", "z", "q")]
    edges = [Edge("p", "a", bytes=1000, net="P"), Edge("p", "r", bytes=1000, net="P"),
             Edge("a", "m1", bytes=8), Edge("m1", "m2", bytes=8), Edge("m2", "q", bytes=8),
             Edge("f", "q", bytes=8), Edge("r", "z", bytes=8)]
    return Graph("far", nodes, edges)


FAR_CUT = {"p": 0, "a": 0, "f": 0, "m1": 1, "m2": 1, "r": 2, "z": 2, "q": 2}
FAR_CAP = Capacity(pcu=3, pmu=3, total=6, agcu=0)
FAR_COSTS = CutCosts({v: 1.0 for v in FAR_CUT}, dram_per_byte=0.01)


def check_legal(graph: Graph, assignment: dict, cap: Capacity, buffers=None) -> None:
    for e in graph.edges:
        assert assignment[e.src] <= assignment[e.dst]
    for s in sections_from(graph, assignment, buffers):
        assert s.fits_with(ZERO, cap)
        assert len({graph.node(v).category for v in s.nodes}) == 1


def test_a_group_moves_to_a_far_section_when_a_group_there_makes_room():
    graph = far_branch()
    out = refine_cut(graph, FAR_CUT, FAR_CAP, FAR_COSTS, budget())
    check_legal(graph, out, FAR_CAP)
    assert out["r"] == out["p"] == 0 and out["f"] > 0
    assert cut_time(graph, out, FAR_COSTS) < cut_time(graph, FAR_CUT, FAR_COSTS) / 5
    assert max(out.values()) == 2                         # no section emptied


def test_the_receiving_section_counts_its_stage_buffers():
    """p -> r needs 2 buffer PMUs inside one section: section 0 then holds 3 PCUs and
    2 PMUs more than its 1 PMU, so r stays where it is."""
    graph = far_branch()
    cap = Capacity(pcu=3, pmu=1, total=6, agcu=0)
    out = refine_cut(graph, FAR_CUT, cap, FAR_COSTS, budget(), buffers={("p", "r"): 2})
    assert out["r"] == 2
    check_legal(graph, out, cap, {("p", "r"): 2})


def test_a_separated_pair_stays_apart():
    graph = far_branch()
    out = refine_cut(graph, FAR_CUT, FAR_CAP, FAR_COSTS, budget(), separate=(("p", "r"),))
    assert out["p"] < out["r"]


def two_runs() -> tuple[Graph, dict[str, int]]:
    """Two copies of :func:`far_branch`, a forward one in sections 0-2 and a backward one
    in sections 3-5, the forward z feeding the backward p."""
    graph = far_branch()
    nodes = [Node(f"{c}_{n.id}", unit=n.unit, category=category) for c, category in
             (("f", "forward"), ("b", "backward")) for n in graph.nodes]
    edges = [Edge(f"{c}_{e.src}", f"{c}_{e.dst}", bytes=e.bytes,
                  net=f"{c}_{e.net}" if e.net else None) for c in "fb" for e in graph.edges]
    cut = {f"{c}_{v}": k + 3 * (c == "b") for c in "fb" for v, k in FAR_CUT.items()}
    return Graph("two", nodes, edges + [Edge("f_z", "b_p", bytes=8)]), cut


def test_each_category_run_is_refined_on_its_own_and_at_once():
    """The forward and the backward run are two tasks of one batch; run elsewhere (pickled,
    in any order) they give the answer they give here, and each makes its run's move."""
    graph, start = two_runs()
    costs = CutCosts({v: 1.0 for v in start}, dram_per_byte=0.01)
    batches, record = [], []

    def run_all(function, tasks, done):
        batches.append(len(tasks))
        travelled = [pickle.loads(pickle.dumps(task)) for task in reversed(tasks)]
        return [function(*task) for task in travelled][::-1]

    here = refine_cut(graph, start, FAR_CAP, costs, budget())
    there = refine_cut(graph, start, FAR_CAP, costs, budget(), run_all=run_all, record=record)
    assert there == here and batches == [2] and [len(b) for b in record] == [2]
    assert here["f_r"] == here["f_p"] == 0 and here["f_f"] > 0
    assert here["b_r"] == here["b_p"] == 3 and here["b_f"] > 3
    check_legal(graph, here, FAR_CAP)


def test_no_budget_no_move():
    out = refine_cut(far_branch(), FAR_CUT, FAR_CAP, FAR_COSTS, budget(0.0))
    assert out == FAR_CUT


@st.composite
def weighted_dags(draw):
    n = draw(st.integers(2, 24))
    units = draw(st.lists(st.sampled_from(["pcu", "pmu"]), min_size=n, max_size=n))
    cats = draw(st.lists(st.sampled_from(["forward", "backward"]), min_size=n, max_size=n))
    pairs = draw(st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1),
                                    st.integers(1, 1000)), max_size=3 * n))
    stages = draw(st.lists(st.integers(1, 50), min_size=n, max_size=n))
    nodes = [Node(f"n{i}", unit=units[i], category=cats[i]) for i in range(n)]
    edges = [Edge(f"n{a}", f"n{b}", bytes=w) for a, b, w in pairs if a < b]
    costs = CutCosts({f"n{i}": float(s) for i, s in enumerate(stages)}, dram_per_byte=0.1)
    return Graph("w", nodes, edges), costs


@settings(max_examples=80, deadline=None)
@given(weighted_dags(), st.integers(1, 4))
def test_refinement_keeps_a_legal_cut_and_never_slows_it(case, units):
    graph, costs = case
    cap = Capacity(pcu=units, pmu=units, total=2 * units, agcu=0)
    demand = {(e.src, e.dst): 1 for e in graph.edges[::3]}
    start = assignment_of(greedy_sections(graph, cap, {}, buffers=demand))
    out = refine_cut(graph, start, cap, costs, budget(), buffers=demand)
    again = refine_cut(graph, start, cap, costs, budget(), buffers=demand)
    assert out == again                                   # deterministic
    check_legal(graph, out, cap, demand)
    assert sorted(set(out.values())) == sorted(set(start.values()))
    assert cut_time(graph, out, costs) <= cut_time(graph, start, costs)


def test_the_cut_refines_two_categories_and_one_cut_as_one_model_into_enough_sections(
        monkeypatch):
    """The refinement runs inside :func:`cut_sections` with costs on a graph of more than
    one category, and on one of one category cut as one model into
    ``REFINE_WHOLE_SECTIONS`` or more; a graph of one category cut window by window keeps
    the windows' answer alone."""
    import formulations.sections.cut as cut
    from formulations.sections import cut_sections
    from formulations.solver import SolveSettings
    graph = far_branch()                                # 3 sections
    two = Graph("two", [Node(n.id, unit=n.unit, category="backward" if n.id in "qz" else
                             "forward") for n in graph.nodes], graph.edges)
    cap = Capacity(pcu=3, pmu=3, total=6, agcu=0)
    whole = cut.MONOLITHIC_LIMIT
    for g, limit, least, refined in ((graph, whole, 3, True), (graph, whole, 4, False),
                                     (graph, 0, 3, False), (two, 0, 4, True)):
        monkeypatch.setattr(cut, "MONOLITHIC_LIMIT", limit)      # 0: window by window
        monkeypatch.setattr(cut, "REFINE_WHOLE_SECTIONS", least)
        plan = cut_sections(g, cap, SolveSettings("cp-sat", 4.0), costs=FAR_COSTS)
        assert ("refine" in plan.extra["planned_by_phase"]) == refined
        check_legal(g, assignment_of(plan.sections), cap)


def test_the_refinement_is_the_cuts_last_search(monkeypatch):
    """No model is solved after the refinement: what a refinement that ends on a local
    optimum leaves of its budget is not spent (on every MSR row the model or the windows
    given it found nothing better)."""
    import formulations.sections.cut as cut
    from formulations.sections import cut_sections
    from formulations.solver import SolveSettings
    refined, solves_after = [], []

    def refine(*args, **kwargs):
        refined.append(True)
        return refine_cut(*args, **kwargs)

    def counted(solve):
        def wrapper(*args, **kwargs):
            solves_after.extend(refined)
            return solve(*args, **kwargs)
        return wrapper

    monkeypatch.setattr(cut, "refine_cut", refine)
    monkeypatch.setattr(cut, "solve_portfolio", counted(cut.solve_portfolio))
    monkeypatch.setattr(cut, "solve_each", counted(cut.solve_each))
    monkeypatch.setattr(cut, "REFINE_WHOLE_SECTIONS", 3)
    graph = far_branch()
    plan = cut_sections(graph, Capacity(pcu=3, pmu=3, total=6, agcu=0),
                        SolveSettings("cp-sat", 4.0), costs=FAR_COSTS)
    assert refined and not solves_after
    assert plan.extra["planned_spent"] < 4.0            # the refinement's rest unspent


@settings(max_examples=80, deadline=None)
@given(weighted_dags(), st.data())
def test_the_section_times_kept_as_groups_move_add_up_to_the_cuts_time(case, data):
    """The refiner keeps each net's sinks per section as nodes move; the section times it
    reads from them add up to :func:`cut_time` of the cut it holds, on the whole graph
    and on a window (nets driven from outside, or written whatever the cut), with
    streaming stages (each node's kept as its sources move). Whether a move leaves room
    (read from the totals alone) is what the move would find."""
    graph, costs = case
    streamed = {e.dst: ((e.src, float(e.bytes)),) for e in graph.edges[::2]}   # above stages
    costs = CutCosts(costs.stage, costs.dram_per_byte, streamed=streamed)
    if data.draw(st.booleans(), "window"):
        window = graph.subgraph(graph.node_ids[: len(graph.node_ids) // 2 + 1])
        graph, costs = window, costs.for_window(graph, window)
    count = data.draw(st.integers(1, 4), "sections")
    start = {v: data.draw(st.integers(0, count - 1)) for v in graph.node_ids}
    units = data.draw(st.integers(1, 9), "units")
    refiner = _Refiner(graph, dict(start), Capacity(pcu=units, pmu=units, total=units, agcu=0),
                       costs, {}, [], (), budget(), tuple(range(count)))
    for v, to in data.draw(st.lists(st.tuples(st.sampled_from(graph.node_ids),
                                              st.integers(0, max(start.values()))),
                                    max_size=8), "moves"):
        if refiner.a[v] != to:
            frm, room = refiner.a[v], refiner.room_for([v], to)
            refiner.move([v], to)
            assert room == (refiner.roomy(to) and refiner.roomy(frm))
        assert all(refiner.stages[u] == costs.stage_in(u, refiner.a) for u in refiner.a)
        kept = math.fsum(refiner.time(k) for k in range(refiner.count))
        assert kept == pytest.approx(cut_time(graph, refiner.a, costs), rel=1e-12)
