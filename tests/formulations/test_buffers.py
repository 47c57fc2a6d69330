"""Stage-buffer balancing (source 001): the worked examples, backends, modes, and a
brute-force oracle on random small DAGs."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pathlib import Path

from formulations.buffers import (BufferBalancingError, BufferOptions, buffer_hint, buffer_problem,
                                  build_buffer_model, pairwise_balance, pmus_for, solve_buffers,
                                  warm_start)
from formulations.solver import (SolveSettings, available_backends, solve_model_file,
                                 write_model_file)
from model.graph import Edge, Graph, Node
from model.graphjson import read_graph
from sim.backpressure import check_balancing

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
#: The solve settings these tests use unless they name a backend.
HIGHS = SolveSettings("highs", time_limit=60.0)


def fig11() -> Graph:
    """FIG. 11: S0 feeds S1 and S2, S1 feeds S2 (a two-stage path against a one-stage one)."""
    return read_graph(EXAMPLES / "buffers_fig11.json")


def fig13() -> Graph:
    """FIG. 13: two off-chip loads, paths of depth 5 and 3 into one join."""
    return read_graph(EXAMPLES / "buffers_fig13.json")


def fig14() -> Graph:
    """FIG. 12 / 14 folded: one load feeds buffers of depth 5, 3 (shared by both joins), 4."""
    return read_graph(EXAMPLES / "buffers_fig14.json")


# ---------------------------------------------------------------------------------------------
# the patent's examples
# ---------------------------------------------------------------------------------------------
def totals(sol) -> list[int]:
    return [sol.depths[b.index] for b in sol.problem.buffers]


def checked(graph: Graph, sol, depth_per_pmu=None) -> None:
    assert sol.ok, sol.diagnosis
    rows = sol.edge_rows()
    assert check_balancing(graph, rows, sol.loads, depth_per_pmu=depth_per_pmu,
                           strict=sol.problem.options.strict_new_capacity,
                           total_pmus=sol.pmus_after) == []


def test_fig11_minimum_is_four_pmus_and_tuning_wins_the_tie():
    sol = solve_buffers(fig11(), HIGHS, options=BufferOptions(depth_per_pmu=1))
    assert (sol.pmus_before, sol.pmus_after, sol.added_depth) == (3, 4, 1)
    assert sol.lp_integral is True and "network LP" in sol.method
    checked(fig11(), sol, 1)


def test_fig12_tuning_only_gives_5_5_5():
    sol = solve_buffers(fig14(), HIGHS, options=BufferOptions(mode="tune", depth_per_pmu=1))
    assert sol.status == "OPTIMAL" and totals(sol) == [5, 5, 5]
    checked(fig14(), sol, 1)


def test_fig12_heuristic_depends_on_the_order():
    problem = buffer_problem(fig14(), options=BufferOptions(mode="tune", depth_per_pmu=1))
    wrong = pairwise_balance(problem, order=["J2", "J1"])
    assert wrong.depths == [5, 5, 4] and wrong.unbalanced == ["J2"]
    right = pairwise_balance(problem, order=["J1", "J2"])
    assert right.depths == [5, 5, 5] and right.balanced
    assert pairwise_balance(problem, order=["J2", "J1"], rounds=5).balanced


def test_fig13_load_time_balances_for_free():
    sol = solve_buffers(fig13(), HIGHS, options=BufferOptions(depth_per_pmu=1))
    assert sol.pmus_after == sol.pmus_before == 8 and sol.added_depth == 0
    assert sol.loads["L2"] - sol.loads["L1"] == 2
    checked(fig13(), sol, 1)
    fixed = solve_buffers(fig13(), HIGHS, options=BufferOptions(depth_per_pmu=1, load_shift=False))
    assert fixed.added_depth == 2 and fixed.pmus_after == 10
    checked(fig13(), fixed, 1)


#: FIG. 14 optima of the full model, by (depth_per_PMU, strict): digest §5.5 table.
FIG14_OPTIMA = {(1, False): 14, (1, True): 15, (2, False): 8, (2, True): 8, (3, False): 6,
                (3, True): 6, (4, False): 5, (4, True): 5, (8, False): 3, (8, True): 3}


@pytest.mark.parametrize("D,strict", sorted(FIG14_OPTIMA))
def test_fig14_full_model_optima(D, strict):
    opts = BufferOptions(depth_per_pmu=D, strict_new_capacity=strict)
    sol = solve_buffers(fig14(), HIGHS, options=opts)
    assert sol.status == "OPTIMAL"
    assert sol.pmus_after == FIG14_OPTIMA[D, strict]
    checked(fig14(), sol, D)


@pytest.mark.parametrize("D,expected", [(1, 15), (2, 9), (4, 6)])
def test_fig14_tuning_only_and_insert_only(D, expected):
    tune = solve_buffers(fig14(), HIGHS, options=BufferOptions(mode="tune", depth_per_pmu=D))
    assert totals(tune) == [5, 5, 5] and tune.pmus_after == expected
    insert = solve_buffers(fig14(), HIGHS, options=BufferOptions(mode="insert", depth_per_pmu=D))
    assert totals(insert) == [5, 3, 4] and insert.pmus_after == expected
    checked(fig14(), insert, D)


def test_fig14_both_depicted_solutions_are_balanced():
    g = fig14()
    for depths, new in (([5, 5, 5], {}), ([5, 5, 4], {3: 1})):
        rows = {}
        for i, d in enumerate([depths[0], depths[1], depths[1], depths[2]]):
            extra = new.get(i, 0)
            rows[i] = {"original_depth": g.edges[i].depth, "final_depth": d + extra,
                       "depth_added": d + extra - g.edges[i].depth,
                       "buffer_inserted": extra > 0, "tuned_depth": d, "inserted_depth": extra,
                       "buffer_pmus": d, "inserted_pmus": extra, "pmus": d + extra}
        assert check_balancing(g, rows, depth_per_pmu=1) == []


# ---------------------------------------------------------------------------------------------
# derived cases (digest §5.6)
# ---------------------------------------------------------------------------------------------
def diamond(*lengths, name="paths") -> Graph:
    """A fork F into paths of the given total depth (one buffer each) joining at J."""
    nodes, edges = [Node("F"), Node("J")], []
    for k, depth in enumerate(lengths):
        nodes.append(Node(f"P{k}"))
        edges += [Edge("F", f"P{k}", depth=1, net="fork"), Edge(f"P{k}", "J", depth=depth - 1)]
    return Graph(name, nodes, edges)


def test_already_balanced_section_is_skipped():
    sol = solve_buffers(diamond(3, 3), HIGHS, options=BufferOptions(depth_per_pmu=1))
    assert sol.status == "SKIPPED" and sol.added_depth == 0 and sol.results == []


def test_three_paths_into_one_join():
    sol = solve_buffers(diamond(2, 5, 3), HIGHS, options=BufferOptions(depth_per_pmu=1))
    assert sol.added_depth == 5 and sol.pmus_after - sol.pmus_before == 5


def test_nested_joins():
    g = Graph("nested", [Node(n) for n in ("F", "a", "b", "Jin", "e", "Jout")],
              [Edge("F", "a", depth=1, net="f"), Edge("F", "b", depth=1, net="f"),
               Edge("F", "e", depth=1, net="f"), Edge("a", "Jin", depth=1),
               Edge("b", "Jin", depth=0), Edge("Jin", "Jout", depth=1),
               Edge("e", "Jout", depth=1)])
    sol = solve_buffers(g, HIGHS, options=BufferOptions(depth_per_pmu=1))
    assert sol.added_depth == 2 and sol.unbalanced() == []
    checked(g, sol, 1)


def test_capacity_ceiling_tie_prefers_less_added_depth():
    g = Graph("ceil", [Node("F"), Node("a"), Node("J")],
              [Edge("F", "a", depth=1, net="f"), Edge("F", "J", depth=4, net="f2"),
               Edge("a", "J", depth=4)])
    sol = solve_buffers(g, HIGHS, options=BufferOptions(depth_per_pmu=4))
    assert sol.pmus_after == sol.pmus_before + 1 and sol.added_depth == 1


def test_loop_carried_edges_are_not_balanced_and_noted():
    g = Graph("loop", [Node("F"), Node("a"), Node("J")],
              [Edge("F", "a"), Edge("a", "J"), Edge("F", "J"), Edge("J", "F", distance=1)])
    sol = solve_buffers(g, HIGHS, options=BufferOptions(depth_per_pmu=1))
    assert sol.problem.loop_edges == (3,) and any("loop-carried" in n for n in sol.problem.notes)
    assert sol.edge_rows()[3]["balanced"] is False and sol.unbalanced() == []


def test_tune_only_infeasible_is_diagnosed_in_user_terms():
    g = Graph("conflict", [Node("F"), Node("M"), Node("J1"), Node("J2")],
              [Edge("F", "J1", net="b"), Edge("F", "J2", net="b"), Edge("F", "M", net="c"),
               Edge("F", "J2", net="c"), Edge("M", "J1")])
    sol = solve_buffers(g, HIGHS, options=BufferOptions(mode="tune", depth_per_pmu=1))
    assert sol.status == "INFEASIBLE" and not sol.ok
    assert "buffer M -> J1 keeps depth >= 1" in sol.diagnosis and "insertion" in sol.diagnosis
    assert solve_buffers(g, HIGHS, options=BufferOptions(depth_per_pmu=1)).ok


def test_bad_input_gets_clear_errors():
    with pytest.raises(BufferBalancingError, match=r"edges\[0\].*depth"):
        buffer_problem(Graph("bad", [Node("a"), Node("b")], [Edge("a", "b", depth=-1)]))
    with pytest.raises(BufferBalancingError, match="cycle"):
        buffer_problem(Graph("cyc", [Node("a"), Node("b")], [Edge("a", "b"), Edge("b", "a")]))
    with pytest.raises(ValueError, match="mode"):
        BufferOptions(mode="shrink")
    with pytest.raises(ValueError, match="unknown solver backend"):
        solve_buffers(fig11(), SolveSettings("nope"))


def test_pmus_for():
    assert [pmus_for(d, 4) for d in (0, 1, 4, 5)] == [0, 1, 1, 2]
    assert [pmus_for(d, 4, strict=True) for d in (0, 1, 3, 4)] == [0, 1, 1, 2]


def test_warm_start_is_feasible():
    problem = buffer_problem(fig14(), options=BufferOptions(depth_per_pmu=2))
    model, bvars = build_buffer_model(problem)
    model.set_hint(buffer_hint(problem, bvars))
    assert model.check_hint().status == "accepted"
    assert warm_start(buffer_problem(fig14(), options=BufferOptions(mode="tune"))) is not None


# ---------------------------------------------------------------------------------------------
# backends, export
# ---------------------------------------------------------------------------------------------
BACKENDS = [b for b in ("highs", "cp-sat", "scip", "pyomo-highs") if b in available_backends()]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("D", [1, 2])
def test_every_backend_gives_the_same_optimum(backend, D):
    sol = solve_buffers(fig14(), SolveSettings(backend, time_limit=60.0),
                        options=BufferOptions(depth_per_pmu=D))
    assert sol.status == "OPTIMAL" and sol.pmus_after == FIG14_OPTIMA[D, False]
    checked(fig14(), sol, D)


def test_mps_round_trip(tmp_path):
    problem = buffer_problem(fig14(), options=BufferOptions(depth_per_pmu=2))
    model, _ = build_buffer_model(problem)
    path = write_model_file(model, tmp_path / "fig14.mps")
    direct = model.solve(backend="highs", mip_gap=0.0).objective
    assert solve_model_file(path, backend="scip").objective == pytest.approx(direct) == 8
    sol = solve_buffers(fig14(), SolveSettings("highs", export_dir=str(tmp_path / "out")),
                        options=BufferOptions(depth_per_pmu=2), name="b")
    assert (tmp_path / "out" / "buffers_b.mps").exists() and sol.ok


# ---------------------------------------------------------------------------------------------
# brute-force oracle
# ---------------------------------------------------------------------------------------------
def _oracle(problem):
    """(PMUs, added depth) lexicographic optimum by enumerating arrival depths, or None."""
    opts = problem.options
    d0 = [b.original_depth for b in problem.buffers]
    cap = problem.buffers[0].capacity
    arrival0 = {}
    for v in problem.nodes:
        ins = problem.inputs.get(v, ())
        arrival0[v] = max((arrival0[problem.buffers[b].driver] + d0[b] for b in ins), default=0)
    H = max(arrival0.values()) + cap + 1
    best = None

    def assign(k, A):
        nonlocal best
        if k == len(problem.nodes):
            cost = _cost(problem, A, d0, cap)
            if cost is not None and (best is None or cost < best):
                best = cost
            return
        v = problem.nodes[k]
        ins = problem.inputs.get(v, ())
        if not ins:
            choices = range(0, H + 1) if opts.load_shift else [0]
        else:
            low = max(A[problem.buffers[b].driver] + d0[b] for b in ins)
            choices = range(low, H + 1)
        for a in choices:
            A[v] = a
            assign(k + 1, A)
        A.pop(v, None)

    assign(0, {})
    return best


def _cost(problem, A, d0, cap):
    opts, joins = problem.options, set(problem.joins)
    total_p = total_t = 0
    for b in problem.buffers:
        gaps = {s: A[s] - A[b.driver] for s in b.sinks}
        best = None
        choices = range(d0[b.index], min(gaps.values()) + 1) if opts.tuning else [d0[b.index]]
        for d in choices:
            if any(s not in joins or not opts.insertion for s, g in gaps.items() if g != d):
                continue
            p = pmus_for(d, cap) + sum(pmus_for(g - d, cap, opts.strict_new_capacity)
                                       for s, g in gaps.items() if s in joins)
            t = d - d0[b.index] + sum(g - d for g in gaps.values())
            if best is None or (p, t) < best:
                best = (p, t)
        if best is None:
            return None
        total_p, total_t = total_p + best[0], total_t + best[1]
    return total_p, total_t


@st.composite
def small_dags(draw):
    """A fork v0 -> v1, v2 reconverging at the last node, plus random forward edges."""
    n = draw(st.integers(4, 5))
    base = [(0, 1), (0, 2), (1, n - 1), (2, n - 1)]
    pairs = [(i, j) for i in range(n) for j in range(i + 1, n) if (i, j) not in base]
    extra = draw(st.lists(st.sampled_from(pairs), max_size=2, unique=True))
    edges = []
    for i, j in sorted(base + extra):
        net = f"n{i}_{draw(st.integers(0, 1))}"
        edges.append(Edge(f"v{i}", f"v{j}", net=net))
    depth_of = {}
    for e in edges:
        depth_of.setdefault((e.src, e.net), draw(st.integers(1, 3)))
        e.depth = depth_of[e.src, e.net]
    return Graph("rand", [Node(f"v{i}") for i in range(n)], edges)


MODES = [BufferOptions(mode=m, load_shift=ls, strict_new_capacity=s, tie_break="exact")
         for m, ls, s in itertools.product(("both", "tune", "insert"), (True, False),
                                           (False, True))
         if not (m == "tune" and s)]


@pytest.mark.parametrize("mode", MODES, ids=lambda o: f"{o.mode}-load{int(o.load_shift)}"
                                                      f"-strict{int(o.strict_new_capacity)}")
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(graph=small_dags(), D=st.integers(1, 3))
def test_model_matches_brute_force(mode, graph, D):
    opts = BufferOptions(mode=mode.mode, load_shift=mode.load_shift,
                         strict_new_capacity=mode.strict_new_capacity, depth_per_pmu=D,
                         tie_break="exact")
    problem = buffer_problem(graph, options=opts)
    expected = _oracle(problem)
    sol = solve_buffers(graph, HIGHS, options=opts, problem=problem)
    if expected is None:
        assert sol.status == "INFEASIBLE"
        return
    assert sol.ok, sol.diagnosis
    assert (sol.pmus_after, sol.added_depth) == expected
    checked(graph, sol, D)


def test_solver_without_an_answer_falls_back_to_the_warm_start():
    from formulations.solver import SolveStatus, register_backend, unregister_backend

    register_backend("test-timeout", lambda arrays, opts: {
        "status": SolveStatus.TIMEOUT_NO_SOLUTION, "message": "no time"})
    try:
        sol = solve_buffers(fig14(), SolveSettings("test-timeout", time_limit=60.0),
                            options=BufferOptions(depth_per_pmu=2))
    finally:
        unregister_backend("test-timeout")
    assert sol.status == "FEASIBLE" and "warm start" in sol.method
    checked(fig14(), sol, 2)


def test_long_node_names_keep_constraint_names_unique():
    stem = "LayerNormalization8_Grad/LayerNormalizationGrad_0/very/long/prefix"
    names = [f"{stem}/{k}" for k in range(4)]
    g = Graph("long", [Node("F")] + [Node(n) for n in names],
              [Edge("F", names[0], net="f"), Edge("F", names[1], net="f"),
               Edge(names[0], names[2]), Edge(names[1], names[2], depth=3),
               Edge(names[0], names[3]), Edge("F", names[3], net="f")])
    sol = solve_buffers(g, HIGHS, options=BufferOptions(depth_per_pmu=1, load_shift=False))
    assert sol.ok and sol.unbalanced() == []
