"""The CGRA modulo mapper (issue 23): bounds, pre-checks, baseline, relaxation, CP-SAT sweep,
MILP twin. Every mapping is executed by sim.cgra."""

from __future__ import annotations

import time

import pytest

from formulations.cgra import (CgraInfeasible, build_milp, list_schedule, lower_bounds,
                               map_kernel, precheck, problem_from_graph, solve_full, solve_milp,
                               solve_relaxation, sweep_ii)
from formulations.cgra.problem import tight_recurrences
from formulations.solver import Budget
from formulations.solver import SolveSettings, SolveStatus
from hardware import CgraSpec, load_hardware
from model.graph import Edge, Graph, Node
from model.importers import load_graph
from sim.cgra import check_cgra
from tests.conftest import real_graph


def ring(n: int) -> Graph:
    return Graph(f"ring{n}", [Node(f"n{i}", op="ADD") for i in range(n)],
                 [Edge(f"n{i}", f"n{(i + 1) % n}", distance=int(i == n - 1)) for i in range(n)])


def kernel() -> Graph:
    """A small loop body: two loads, a multiply-accumulate with a recurrence, a store."""
    nodes = [Node("ld0", op="LOAD"), Node("ld1", op="LOAD"), Node("mul", op="MUL"),
             Node("acc", op="ADD"), Node("inc", op="ADD"), Node("st", op="STORE")]
    edges = [Edge("ld0", "mul"), Edge("ld1", "mul"), Edge("mul", "acc"),
             Edge("acc", "acc", distance=1), Edge("acc", "st"), Edge("inc", "inc", distance=1),
             Edge("inc", "ld0"), Edge("inc", "ld1")]
    return Graph("mac", nodes, edges)


def checked(graph: Graph, spec, sched) -> bool:
    pes = [(r, c) for r in range(spec.rows) for c in range(spec.cols)]
    placement = {n: {"pe": list(pes[sched.pe[n]]), "cycle": sched.cycle[n]} for n in sched.pe}
    routes = [{"src": u, "dst": v, "distance": d,
               "steps": [{"pe": list(pes[p]), "cycle": c} for p, c in path]}
              for (u, v, d), path in sched.routes.items()]
    report = check_cgra(graph, spec, placement, sched.ii, routes)
    assert report.ok, report.violations
    return report.ok


def test_lower_bounds_and_prechecks():
    spec = load_hardware("cgra4x4")
    assert lower_bounds(problem_from_graph(ring(5), spec))["rec_ii"] == 5
    small = CgraSpec(name="s", rows=1, cols=2, max_ii=3)
    reasons = precheck(problem_from_graph(ring(4), small))
    assert any(r.startswith("C7 recurrence") for r in reasons)
    only_add = CgraSpec(name="a", rows=2, cols=2, max_ii=4, operations=("ADD",))
    assert precheck(problem_from_graph(kernel(), only_add))[0].startswith("C3 operations")
    with pytest.raises(CgraInfeasible, match="G0 graph"):
        problem_from_graph(Graph("cyc", [Node("a"), Node("b")],
                                 [Edge("a", "b"), Edge("b", "a")]), spec)


def test_memory_operations_only_on_memory_pes():
    spec = load_hardware("hycube4x4")
    p = problem_from_graph(kernel(), spec)
    assert all(p.pes[q][1] in (0, 3) for q in p.allowed[p.names.index("ld0")])
    sched = list_schedule(p)
    assert all(p.pes[sched.pe[n]][1] in (0, 3) for n in ("ld0", "ld1", "st"))
    assert checked(kernel(), spec, sched)


@pytest.mark.parametrize("preset", ["cgra4x4", "cgra4x4-torus", "hycube4x4", "cgra8x8"])
def test_baseline_and_sweep_are_legal_and_sweep_is_no_worse(preset):
    spec = load_hardware(preset)
    p = problem_from_graph(kernel(), spec)
    base = list_schedule(p)
    sched = sweep_ii(p, SolveSettings(time_limit=20), base)
    assert checked(kernel(), spec, base) and checked(kernel(), spec, sched)
    assert sched.ii <= base.ii
    assert (sched.ii, sched.length) <= (base.ii, base.length)


def test_sweep_proves_the_smallest_ii_and_the_length():
    spec = load_hardware("cgra4x4")
    p = problem_from_graph(kernel(), spec)
    sched = sweep_ii(p, SolveSettings(time_limit=20))
    assert sched.proven_ii and sched.ii == sched.ii_bound == lower_bounds(p)["ii"]
    assert sched.status == "optimal" and sched.bound == sched.length
    # nothing shorter exists at that II: the model with one cycle less is infeasible
    result, _ = solve_full(p, sched.ii, sched.length - 1, Budget(20))
    assert result.status is SolveStatus.INFEASIBLE


def test_relaxation_refutes_an_ii_below_the_recurrence():
    p = problem_from_graph(ring(6), load_hardware("cgra4x4"))
    assert solve_relaxation(p, 5, Budget(5))[0].status is SolveStatus.INFEASIBLE
    result, _ = solve_relaxation(p, 6, Budget(5))
    assert result.status is SolveStatus.OPTIMAL and result.objective == 6


def test_registers_bind_the_mapping():
    """Two registers per PE on a 2 x 2 array: the mapping keeps at most two values in any PE
    (the simulator counts them cycle by cycle); with one register no II up to 4 maps."""
    spec = CgraSpec(name="r2", rows=2, cols=2, max_ii=4, registers=2)
    p = problem_from_graph(kernel(), spec)
    sched = sweep_ii(p, SolveSettings(time_limit=20), list_schedule(p))
    assert sched.ii == 2 and sched.status == "optimal" and checked(kernel(), spec, sched)
    one = problem_from_graph(kernel(), CgraSpec(name="r1", rows=2, cols=2, max_ii=4,
                                                registers=1))
    with pytest.raises(CgraInfeasible):
        list_schedule(one)


def test_list_scheduling_without_work_left_says_it_ran_out_of_time():
    p = problem_from_graph(kernel(), load_hardware("cgra4x4"))
    with pytest.raises(CgraInfeasible, match="T0 time limit: list scheduling found no mapping "
                                             "within 0 s"):
        list_schedule(p, budget=Budget(0.0))


def test_milp_twin_agrees_with_cp_sat(tmp_path):
    g = Graph("pair", [Node("a", op="LOAD"), Node("b", op="ADD"), Node("c", op="STORE")],
              [Edge("a", "b"), Edge("b", "c")])
    p = problem_from_graph(g, load_hardware("cgra4x4"))
    cp, cp_sched = solve_full(p, 1, 6, Budget(20))
    milp, milp_sched = solve_milp(p, 1, 6, SolveSettings(backend="highs", time_limit=30))
    assert cp.status is milp.status is SolveStatus.OPTIMAL
    assert cp_sched.length == milp_sched.length == 5
    assert checked(g, load_hardware("cgra4x4"), milp_sched)
    model, _ = build_milp(p, 1, 6)
    model.write_mps(str(tmp_path / "m.mps"))
    assert (tmp_path / "m.mps").stat().st_size > 1000


def test_map_kernel_placers_and_export(tmp_path):
    spec = load_hardware("cgra4x4")
    settings = SolveSettings(time_limit=10, export_dir=str(tmp_path))
    model = map_kernel(kernel(), spec, settings)
    listed = map_kernel(kernel(), spec, settings, placer="list")
    assert listed.schedule.method.startswith("list")
    assert model.schedule.ii <= listed.schedule.ii
    assert list(tmp_path.glob("cgra_mac_ii*.pb.txt"))
    highs = map_kernel(kernel(), spec, SolveSettings(backend="highs", time_limit=20,
                                                     export_dir=str(tmp_path)))
    assert list(tmp_path.glob("cgra_mac_ii*.mps")) and checked(kernel(), spec, highs.schedule)


def wide(k: int) -> Graph:
    """``k`` loads feeding one add: the add reads ``k`` distinct operands at its issue."""
    return Graph(f"wide{k}", [Node(f"ld{i}", op="LOAD") for i in range(k)] + [Node("s", op="ADD")],
                 [Edge(f"ld{i}", "s") for i in range(k)])


def test_more_operands_than_registers_is_proven_unmappable():
    spec = load_hardware("cgra4x4")            # 4 registers per PE
    assert not precheck(problem_from_graph(wide(4), spec))
    assert checked(wide(4), spec, list_schedule(problem_from_graph(wide(4), spec)))
    reasons = precheck(problem_from_graph(wide(5), spec))
    assert reasons and reasons[0].startswith("C5 registers: s reads 5 distinct operands")
    with pytest.raises(CgraInfeasible, match="C5 registers"):
        map_kernel(wide(5), spec, SolveSettings(time_limit=2))


#: A 2 x 2 mesh with 2 registers: register pressure, not the slots, sets its II.
TINY = CgraSpec(name="tiny", rows=2, cols=2, registers=2, max_ii=32)


def skip_chain() -> Graph:
    """A chain of 40 adds with an edge skipping one add from every third."""
    nodes = [Node(f"n{i}", op="ADD") for i in range(40)]
    edges = [Edge(f"n{i}", f"n{i + 1}") for i in range(39)] + \
        [Edge(f"n{i}", f"n{i + 2}") for i in range(0, 38, 3)]
    return Graph("chain", nodes, edges)


def test_baseline_reaches_an_ii_far_above_the_bound():
    """A chain of 40 adds with skip edges on a 2 x 2 mesh with 2 registers: the bound is 10
    (slots) but register pressure needs more; the upward search with growing steps still
    finds a mapping, and bisection keeps the smallest II it maps."""
    spec, graph = TINY, skip_chain()
    problem = problem_from_graph(graph, spec)
    sched = list_schedule(problem, budget=Budget(20))
    assert sched.ii > lower_bounds(problem)["ii"] + 2       # far above the bound, found
    assert checked(graph, spec, sched)


def test_a_large_fabric_is_warm_started_from_its_corner():
    """On a 6 x 6 torus the kernel is first mapped on the 4 x 4 corner (a mesh: no wrap-around
    links in it); the answer, moved onto the whole fabric, passes the simulator there."""
    from formulations.cgra.kernel import region_spec
    spec = CgraSpec(name="t6", rows=6, cols=6, neighbours="torus", max_ii=8)
    sub = region_spec(spec)
    assert (sub.rows, sub.cols, sub.neighbours) == (4, 4, "mesh")
    assert region_spec(CgraSpec(name="b", rows=6, cols=6, memory_pes="boundary")) is None
    lines: list[str] = []
    result = map_kernel(wide(4), spec, SolveSettings(time_limit=6), progress=lines.append)
    assert checked(wide(4), spec, result.schedule)
    assert any("4 x 4 corner" in line for line in lines)     # the baseline is above the bound
    assert result.schedule.ii <= result.baseline.ii


def test_descent_below_a_mapping_lowers_the_ii():
    """From a list-scheduling mapping at II 20 of a 40-operation chain on a 2 x 2 mesh, the
    descent (attempts below the II, seeded by the mapping's order; a count of attempts as the
    budget) reaches a lower II, the same one twice, and the simulator accepts it."""
    from formulations.cgra.listsched import descend, schedule_at_ii
    spec, graph = TINY, skip_chain()
    problem = problem_from_graph(graph, spec)
    start = schedule_at_ii(problem, 20)
    assert start is not None and start.ii == 20
    first = descend(problem, start, Budget(600), attempts=6)
    again = descend(problem, schedule_at_ii(problem, 20), Budget(600), attempts=6)
    assert first.ii < 20 and "descent" in first.method
    assert (again.ii, again.cycle, again.pe) == (first.ii, first.cycle, first.pe)
    assert checked(graph, spec, first)


def test_operands_and_own_result_in_one_slot_refute_ii_1():
    """At II 1 an add with 4 operands whose result is read writes it in the slot its 4 operands
    are read in: 5 values on a PE of 4 registers. The rule (C5 at one II) says so, the full
    model agrees at a generous horizon, and the sweep maps at II 2 with II 2 proven; without
    a reader the rule does not fire and II 1 maps."""
    from formulations.cgra.problem import slot_registers
    spec = load_hardware("cgra4x4")
    fed = Graph("fed", wide(4).nodes + [Node("st", op="STORE")],
                wide(4).edges + [Edge("s", "st")])
    p = problem_from_graph(fed, spec)
    assert slot_registers(p, 1)[0].startswith("C5 registers: at II 1 s reads 4 operands")
    assert not slot_registers(p, 2) and lower_bounds(p)["ii"] == 2 == lower_bounds(p)["reg_ii"]
    result, _ = solve_full(p, 1, lower_bounds(p)["critical_path"] + 8, Budget(20))
    assert result.status is SolveStatus.INFEASIBLE
    sched = sweep_ii(p, SolveSettings(time_limit=10))
    assert (sched.ii, sched.ii_bound, sched.proven_ii) == (2, 2, True) and checked(fed, spec, sched)
    alone = problem_from_graph(wide(4), spec)
    assert not slot_registers(alone, 1) and lower_bounds(alone)["ii"] == 1
    assert sweep_ii(alone, SolveSettings(time_limit=10)).ii == 1


def test_the_ii_just_below_the_warm_start_gets_most_of_the_time(monkeypatch):
    """The warm start's II already has its mapping, so on a small kernel the II just below it
    gets LAST_SHARE of the time (the II question is what the run is for), and so does the II
    bound (a mapping there proves the II); an II between them II_SHARE."""
    from formulations.cgra import sweep as sw
    p = problem_from_graph(kernel(), load_hardware("cgra4x4"))
    low = lower_bounds(p)["ii"]
    budgets: list[tuple[int, float]] = []

    def relax(problem, ii, budget, seed, results, slack=0):
        budgets.append((ii, budget.seconds))
        return "refuted", 0, None

    monkeypatch.setattr(sw, "_relax", relax)
    for gap, at, share in ((1, low, sw.LAST_SHARE), (3, low, sw.LAST_SHARE),
                           (3, low + 1, sw.II_SHARE), (3, low + 2, sw.LAST_SHARE)):
        budgets.clear()
        warm = list_schedule(p)
        warm.ii = low + gap
        sw.sweep_ii(p, SolveSettings(time_limit=10), warm)
        assert budgets[at - low][0] == at
        assert budgets[at - low][1] == pytest.approx(10 * share * sw.RELAX_SHARE, abs=0.05)


def test_mults2_on_cgra8x8_needs_ii_2():
    """mults2 (19 operations): ResMII and RecMII 1 on 64 PEs, but add1 reads loadb24,
    cmerge27 and load23 of this and of the previous iteration; with its own result that is 5
    values in one slot at II 1 (the full model, alone, finds no II 1 mapping either)."""
    graph = load_graph(str(real_graph(
        "morpher/cgra_me_bench/mults2/main_INNERMOST_LN1_noSemiOLOAD_PartPred_DFG.xml")))
    b = lower_bounds(problem_from_graph(graph, load_hardware("cgra8x8")))
    assert (b["res_ii"], b["rec_ii"], b["reg_ii"], b["ii"]) == (1, 1, 2, 2)


def test_ejection_maps_a_long_recurrence_the_list_scheduler_cannot():
    """adpcm_coder (96 operations, a recurrence of ~57): the list scheduler dead-ends even at
    II 32 on hycube4x4; iterative modulo scheduling with ejection maps it there, and the
    simulator accepts it."""
    from formulations.cgra.listsched import schedule_at_ii, schedule_with_ejection
    graph = load_graph(str(real_graph("morpher/sample_xmls/adpcm_coder_INNERMOST_LN1_DFG.xml")))
    spec = load_hardware("hycube4x4")
    problem = problem_from_graph(graph, spec)
    assert schedule_at_ii(problem, 32, 0) is None
    forced = schedule_with_ejection(problem, 32, 0)
    assert forced is not None and forced.ii == 32 and "ejection" in forced.method
    assert checked(graph, spec, forced)


def test_ejection_on_a_small_kernel_is_legal():
    """On a small loop body ejection from max_ii down reaches the list scheduler's II."""
    from formulations.cgra.listsched import eject_from_top
    spec = load_hardware("cgra4x4")
    problem = problem_from_graph(kernel(), spec)
    sched = eject_from_top(problem, Budget(600))
    assert sched.ii <= list_schedule(problem).ii
    assert checked(kernel(), spec, sched)


def _loaded_clock(monkeypatch, per_read: float) -> list[float]:
    """A loaded machine: every read of ``time.perf_counter`` / ``time.monotonic`` finds
    ``per_read`` seconds more passed than really did (the total is returned in a list)."""
    extra = [0.0]

    def slowed(clock):
        def read() -> float:
            extra[0] += per_read
            return clock() + extra[0]
        return read

    monkeypatch.setattr(time, "perf_counter", slowed(time.perf_counter))
    monkeypatch.setattr(time, "monotonic", slowed(time.monotonic))
    return extra


def _planned(budget: float, deadline: float) -> SolveSettings:
    """Settings of ``budget`` planned seconds whose run's deadline is ``deadline`` s away."""
    return SolveSettings(time_limit=budget, deadline=time.monotonic() + deadline)


def test_the_same_kernel_gives_the_same_schedule_whatever_the_load(monkeypatch):
    """The skip chain (40 operations) on the 2 x 2 mesh goes through the list scheduler, the
    descent and the sweep, each budgeted in counted work: mapped twice it gives the same
    schedule, and again on a loaded machine (every clock read 2 ms late). The plan is 6 s of
    work and the deadline ten minutes away (a minute was too near at load 13 on 2 cores):
    the wall clock cuts in only at the run's deadline, so a machine slower than the
    calibration finishes the same work later. Before the
    budgets were counted, the shares were wall-clock seconds and the loaded run mapped
    nothing (T0) where the normal one found II 11."""
    spec, graph = TINY, skip_chain()
    runs = [map_kernel(graph, spec, _planned(6, deadline=600)) for _ in range(2)]
    extra = _loaded_clock(monkeypatch, 0.002)
    runs.append(map_kernel(graph, spec, _planned(6, deadline=600)))
    assert extra[0] > 0.1                                   # the clock was read, and late
    first = runs[0].schedule
    for r in runs:
        assert (r.schedule.ii, r.schedule.pe, r.schedule.cycle, r.schedule.routes) == \
            (first.ii, first.pe, first.cycle, first.routes)
        assert r.cut_short == 0 and r.work == pytest.approx(runs[0].work)
    assert checked(graph, spec, first)


def test_searches_the_wall_clock_stopped_are_counted(stall_before_cgra_sweep):
    """The machine stalls past the time limit just before the sweep: the baseline is kept
    (legal, unproven), and the sweep stopped by the wall clock is counted."""
    spec = load_hardware("cgra4x4")
    result = map_kernel(ring(6), spec, SolveSettings(time_limit=5))
    assert result.cut_short >= 1 and not result.schedule.proven_ii
    assert result.schedule.ii == result.baseline.ii and checked(ring(6), spec, result.schedule)


def test_one_hop_per_edge_at_ii_1_is_a_real_bound(monkeypatch):
    """At II 1 every operation has a PE of its own, so every edge costs its producer's latency
    plus a hop. The length bound and the refutation this gives hold for the full model built
    without the rule: no mapping of the small loop body ends a cycle before the bound (and
    one ends at it on this fabric), and a two-operation recurrence over two iterations (RecMII
    1 by latencies alone) has no II 1 mapping at all."""
    from formulations.cgra import problem as pr
    spec = load_hardware("cgra4x4")
    p = problem_from_graph(kernel(), spec)
    bound = pr.length_bound(p, 1)
    assert bound == 9 > lower_bounds(p)["critical_path"]          # inc ld0 mul acc st + 4 hops
    pair = Graph("pair", [Node("a", op="ADD"), Node("b", op="ADD")],
                 [Edge("a", "b"), Edge("b", "a", distance=2)])
    q = problem_from_graph(pair, spec)
    assert lower_bounds(q)["rec_ii"] == 1 and pr.length_bound(q, 1) is None
    assert pr.length_bound(q, 2) is not None
    monkeypatch.setattr(pr, "hop_gap", lambda ii: 0)                # the model without the rule
    assert solve_full(p, 1, bound - 1, Budget(20))[0].status is SolveStatus.INFEASIBLE
    result, sched = solve_full(p, 1, bound + 4, Budget(20))
    assert result.status is SolveStatus.OPTIMAL and sched.length == bound
    assert solve_full(q, 1, 12, Budget(20))[0].status is SolveStatus.INFEASIBLE


def test_work_left_goes_back_to_an_unanswered_ii(monkeypatch):
    """The ladder at the II bound ends unanswered (its share spent), the II above maps; the
    work left then goes back to the bound's ladder, from the length it had proven, and the
    mapping it finds there is the answer, its II proven (nothing below the bound)."""
    from formulations.cgra import sweep as sw
    p = problem_from_graph(kernel(), load_hardware("cgra4x4"))
    low = lower_bounds(p)["ii"]
    real = list_schedule(p)
    calls: list[tuple[int, int, bool]] = []

    def ladder(problem, ii, first, high, budget, seed, results, warm=None):
        calls.append((ii, first, warm is None))
        if ii == low and len(calls) == 1:
            return None, first + 2                  # unanswered: two horizons refuted
        mapping = list_schedule(p)
        mapping.ii = ii
        return mapping, first

    monkeypatch.setattr(sw, "_relax", lambda *args, **kw: ("feasible", 0, None))
    monkeypatch.setattr(sw, "length_ladder", ladder)
    warm = real
    warm.ii = low + 2
    sched = sw.sweep_ii(p, SolveSettings(time_limit=10), warm)
    first = calls[0][1]
    assert calls[:3] == [(low, first, True), (low + 1, calls[1][1], True),
                         (low, first + 2, True)]
    assert sched.ii == low and sched.proven_ii and sched.ii_bound == low


def test_a_baseline_from_ejection_is_bisected_before_the_descent(monkeypatch):
    """Near the bound (at most MOBILITY_FIRST x it) the descent goes first, unless the
    baseline came from ejection: list scheduling mapped the kernel at no II, so the bisection
    goes first and gets the work its questions need (adpcm_coder)."""
    from formulations.cgra import kernel as k
    from formulations.cgra.listsched import EJECTION, schedule_at_ii
    problem = problem_from_graph(skip_chain(), TINY)
    calls: list[str] = []
    monkeypatch.setattr(k, "_bisect", lambda p, best, *a, **kw: calls.append("bisect") or best)
    monkeypatch.setattr(k, "_descend_below", lambda p, best, *a: calls.append("descend") or best)
    baseline = schedule_at_ii(problem, 20)
    near = {"route_ii": 18}                                 # 20 <= MOBILITY_FIRST x 18
    k._descent(problem, near, baseline, SolveSettings(time_limit=1), Budget(1), print)
    assert calls == ["descend", "bisect"]
    calls.clear()
    baseline.method = EJECTION
    k._descent(problem, near, baseline, SolveSettings(time_limit=1), Budget(1), print)
    assert calls == ["bisect", "descend"]


def test_far_above_the_bound_a_quick_descent_goes_before_the_bisection(monkeypatch):
    """Above MOBILITY_FIRST x the bound a list-scheduling baseline gets a quick descent
    first (cheap single steps where the bisection's midpoints go unanswered on the mesh),
    then the bisection from the II it reached, then the descent."""
    from formulations.cgra import kernel as k
    from formulations.cgra.listsched import schedule_at_ii
    problem = problem_from_graph(skip_chain(), TINY)
    calls: list[str] = []
    monkeypatch.setattr(k, "_quick_descent",
                        lambda p, best, *a, **kw: calls.append("quick") or best)
    monkeypatch.setattr(k, "_bisect",
                        lambda p, best, *a, top=None, **kw: calls.append(top) or best)
    monkeypatch.setattr(k, "_descend_below",
                        lambda p, best, *a, **kw: calls.append("descend") or best)
    far = {"route_ii": 10}                                  # 20 > MOBILITY_FIRST x 10
    k._descent(problem, far, schedule_at_ii(problem, 20), SolveSettings(time_limit=1),
               Budget(1), print)
    assert calls == ["quick", 20, "descend"]          # bisected from the baseline's II


def test_the_late_descent_goes_on_with_the_quick_descents_attempts(monkeypatch):
    """The quick descent and the descent after the bisection are one sequence of attempts:
    the late one tries seeds the quick one did not (with seeds of its own the quick descent
    lost the attempts that had mapped cgra8x8 gemm_nn_LN111 at II 8), and the descent
    alternates its two orders across both."""
    from formulations.cgra import kernel as k, listsched
    problem = problem_from_graph(skip_chain(), TINY)
    start = listsched.schedule_at_ii(problem, 20)
    tried: list[tuple[int, bool]] = []

    def attempt(p, ii, seed, budget, guide=None):
        budget.spend(1.0)
        tried.append((seed, guide is not None))

    monkeypatch.setattr(listsched, "schedule_at_ii", attempt)
    monkeypatch.setattr(k, "_bisect", lambda p, best, *a, top=None, **kw: best)
    monkeypatch.setattr(k, "FIRST_LEAST", float("inf"))    # no bound question: another test's
    k._descent(problem, {"route_ii": 10}, start, SolveSettings(time_limit=1), Budget(100), print)
    seeds = [seed for seed, _ in tried]
    assert len(seeds) > k.QUICK_STALL and sorted(seeds) == seeds == list(
        range(seeds[0], seeds[0] + len(seeds)))
    assert [guided for _, guided in tried] == [i % 2 == 0 for i in range(len(tried))]


def test_a_stalled_descent_stops_at_its_ii(monkeypatch):
    """With ``stall`` the descent gives up an II after that many failed attempts (the quick
    descent's cap), whatever work is left, and keeps the mapping it started from."""
    from formulations.cgra import listsched
    problem = problem_from_graph(skip_chain(), TINY)
    start = listsched.schedule_at_ii(problem, 20)
    tried: list[int] = []
    monkeypatch.setattr(listsched, "schedule_at_ii", lambda p, ii, *a: tried.append(ii))
    assert listsched.descend(problem, start, Budget(600), stall=3) is start
    assert tried == [19, 19, 19]


def fan() -> Graph:
    return Graph("fan", [Node("a", op="LOAD")] + [Node(f"m{i}", op="MUL") for i in range(6)],
                 [Edge("a", f"m{i}") for i in range(6)])


def test_the_neighbourhood_question_keeps_every_operation_near_its_pe():
    """Asked near a mapping at a larger II, the question at a smaller II maps with every
    operation within NEAR_HOPS of its PE there (a restriction of the full question)."""
    from formulations.cgra.mobility import NEAR_HOPS, window_map, window_question
    spec = load_hardware("cgra4x4")
    problem = problem_from_graph(fan(), spec)
    wide = window_map(problem, 3, Budget(10), seed=0)
    assert wide is not None and wide.ii == 3
    found, _ = window_question(problem, 1, Budget(10), seed=0, near=wide)
    assert found is not None and found.ii == 1
    assert all(problem.dist[wide.pe[n]][found.pe[n]] <= NEAR_HOPS for n in found.pe)
    assert checked(fan(), spec, found)


def test_a_question_out_of_work_is_asked_again_near_the_best_mapping(monkeypatch):
    """When the full question at an II finds nothing within its work (no proof either), the
    neighbourhood question around the mapping at the larger II is asked and its mapping kept."""
    from formulations.cgra import mobility as m
    problem = problem_from_graph(fan(), load_hardware("cgra4x4"))
    wide = m.window_map(problem, 3, Budget(10), seed=0)
    real = m.window_question
    monkeypatch.setattr(m, "window_question", lambda p, ii, b, seed=0, slack=m.SLACK, near=None:
                        (None, False) if near is None else real(p, ii, b, seed, slack, near))
    lines: list[str] = []
    found, asked = m.ask_at(problem, 1, Budget(10), 0, lines.append, near=wide)
    assert asked and found is not None and found.ii == 1
    assert any("near the mapping at II 3" in line for line in lines)
    assert m.ask_at(problem, 1, Budget(10), 0, lines.append) == (None, True)


def test_the_neighbourhood_question_leaves_the_work_of_a_full_question(monkeypatch):
    """The neighbourhood question is skipped when, after it, the work left would not cover
    a full question (the bisection's next step needs it)."""
    from formulations.cgra import mobility as m
    problem = problem_from_graph(fan(), load_hardware("cgra4x4"))
    wide = m.window_map(problem, 3, Budget(10), seed=0)
    real = m.window_question
    monkeypatch.setattr(m, "question_seconds", lambda p, ii, slack=m.SLACK: 4.0)
    monkeypatch.setattr(m, "window_question", lambda p, ii, b, seed=0, slack=m.SLACK, near=None:
                        (None, False) if near is None else real(p, ii, b, seed, slack, near))
    assert m.ask_at(problem, 1, Budget(6), 0, print, near=wide) == (None, True)
    found, _ = m.ask_at(problem, 1, Budget(1 + (1 + m.NEAR_SHARE) * 4.0), 0, print, near=wide)
    assert found is not None and found.ii == 1


def test_the_neighbourhood_question_is_asked_where_only_it_fits(monkeypatch):
    """When the work left is below the full question's need but covers the neighbourhood
    question's, that one is asked instead and its mapping kept; without a mapping to stay
    near, or without even that work, nothing is asked and the bisection stops."""
    from formulations.cgra import mobility as m
    problem = problem_from_graph(fan(), load_hardware("cgra4x4"))
    wide = m.window_map(problem, 3, Budget(10), seed=0)
    monkeypatch.setattr(m, "question_seconds", lambda p, ii, slack=m.SLACK: 4.0)
    lines: list[str] = []
    found, go_on = m.ask_at(problem, 1, Budget(3.5), 0, lines.append, near=wide)
    assert go_on and found is not None and found.ii == 1
    assert checked(fan(), load_hardware("cgra4x4"), found)
    assert any("near the mapping at II 3" in line for line in lines)
    assert m.ask_at(problem, 1, Budget(3.5), 0, print) == (None, False)
    assert m.ask_at(problem, 1, Budget(2.5), 0, print, near=wide) == (None, False)


def test_the_bisection_asks_from_the_baseline_after_a_quick_descent(monkeypatch):
    """With ``top`` (the baseline's II) the bisection asks the midpoints it would have asked
    from there, skipping those at or above the mapping it starts from (the bound is 10, the
    mapping at II 20, every question unanswered)."""
    from formulations.cgra import mobility as m
    from formulations.cgra.listsched import schedule_at_ii
    problem = problem_from_graph(skip_chain(), TINY)
    start = schedule_at_ii(problem, 20)
    asked: list[int] = []
    monkeypatch.setattr(m, "ask_at", lambda p, ii, *a, **kw: asked.append(ii) or (None, True))
    assert m.mobility_search(problem, start, Budget(600)) is start
    assert asked == [15, 18, 19]
    asked.clear()
    assert m.mobility_search(problem, start, Budget(600), top=24) is start
    assert asked == [17, 19]                      # 21 and 20 are at or above the mapping


def test_on_a_larger_fabric_the_bisection_asks_on_a_corner_sized_to_the_ii():
    """On cgra8x8 a question at an II goes to the smallest square corner with
    QUESTION_FILL x operations / II PEs (the whole fabric's questions went unasked there:
    too big), the whole fabric when no corner has that many; a 4 x 4 fabric has no corner."""
    from formulations.cgra.kernel import question_fabrics
    spec = load_hardware("cgra8x8")
    wide = Graph("wide", [Node("a", op="LOAD")] + [Node(f"m{i}", op="MUL") for i in range(39)],
                 [Edge("a", f"m{i}") for i in range(39)])
    problem = problem_from_graph(wide, spec)
    fabric = question_fabrics(wide, spec, problem)
    assert [(fabric(ii).rows, fabric(ii).cols) for ii in (4, 2, 1)] == [(4, 4), (6, 6), (8, 8)]
    assert fabric(1) is problem and fabric(5) is fabric(4)
    small = load_hardware("cgra4x4")
    assert question_fabrics(wide, small, problem_from_graph(wide, small)) is None


def test_a_corner_question_maps_onto_the_whole_fabric():
    """The bisection's mapping found on a corner is moved onto the whole fabric, where the
    simulator accepts it."""
    from formulations.cgra.kernel import question_fabrics
    from formulations.cgra.listsched import schedule_at_ii
    from formulations.cgra.mobility import mobility_search
    spec = load_hardware("cgra8x8")
    problem = problem_from_graph(fan(), spec)
    found = mobility_search(problem, schedule_at_ii(problem, 3), Budget(20), seed=0,
                            fabric=question_fabrics(fan(), spec, problem))
    assert found.ii == 1 and "4 x 4 corner" in found.method
    assert checked(fan(), spec, found)


def test_a_large_kernel_on_a_larger_fabric_is_list_scheduled_on_its_corner():
    """The model placer's baseline of a kernel of more than SECOND_NODES operations on
    cgra8x8 is list-scheduled on the 4 x 4 corner (whole-fabric attempts fail slowly at its
    low bound); a smaller kernel, or a 4 x 4 fabric, keeps the whole fabric."""
    from formulations.cgra.kernel import SECOND_NODES, _baseline_fabric

    def wide(n: int) -> Graph:
        return Graph("wide", [Node("a", op="LOAD")] + [Node(f"m{i}", op="MUL")
                                                       for i in range(n - 1)],
                     [Edge("a", f"m{i}") for i in range(n - 1)])

    big, small = load_hardware("cgra8x8"), load_hardware("cgra4x4")
    corner = _baseline_fabric(wide(SECOND_NODES + 1), big,
                              problem_from_graph(wide(SECOND_NODES + 1), big))
    assert (corner.rows, corner.cols, corner.pe_count) == (4, 4, 16)
    for graph, spec in ((wide(SECOND_NODES), big), (wide(SECOND_NODES + 1), small)):
        problem = problem_from_graph(graph, spec)
        assert _baseline_fabric(graph, spec, problem) is problem


def figure_eight() -> Graph:
    """Two recurrences of 4 adds sharing ``a``: RecMII 4, but at II 4 and 5 both leave at
    most one spare cycle, so all 7 adds must share one PE, which has II slots."""
    loops = [["a", "b", "c", "d"], ["a", "e", "f", "g"]]
    return Graph("eight", [Node(v, op="ADD") for v in "abcdefg"],
                 [Edge(x, y, distance=int(y == "a")) for loop in loops
                  for x, y in zip(loop, loop[1:] + loop[:1])])


def test_recurrences_without_room_for_hops_raise_the_proven_bound():
    """The recurrence-and-hops bound (``route_ii``) proves what the whole problem's
    relaxation refutes, without a search: the sweep starts there, maps the figure eight at
    it, and reports it as proven; the classic bound stays RecMII."""
    spec, graph = load_hardware("cgra4x4"), figure_eight()
    p = problem_from_graph(graph, spec)
    bounds = lower_bounds(p)
    assert (bounds["ii"], bounds["route_ii"]) == (4, 6)
    assert [solve_relaxation(p, ii, Budget(10))[0].status for ii in (4, 5)] == \
        [SolveStatus.INFEASIBLE] * 2
    sched = sweep_ii(p, SolveSettings(time_limit=10))
    assert (sched.ii, sched.ii_bound, sched.proven_ii) == (6, 6, True)
    assert checked(graph, spec, sched)


def two_columns() -> Graph:
    """Two recurrences of 4 adds (a, b: at II 5 one spare cycle each, so each on one PE)
    and two legs of 2 adds between them (a0 -> x1 -> x2 -> b3, b0 -> y1 -> y2 -> a3), the
    shape of aes encrypt's columns: the cycle through both legs has 2 spare cycles at II 5."""
    ring = [Edge(f"{c}{i}", f"{c}{(i + 1) % 4}", distance=int(i == 3))
            for c in "ab" for i in range(4)]
    legs = [("a0", "x1"), ("x1", "x2"), ("x2", "b3"), ("b0", "y1"), ("y1", "y2"), ("y2", "a3")]
    names = [f"{c}{i}" for c in "ab" for i in range(4)] + ["x1", "x2", "y1", "y2"]
    return Graph("columns", [Node(v, op="ADD") for v in names],
                 ring + [Edge(u, v) for u, v in legs])


def test_a_recurrence_with_more_operations_than_its_hops_reach_raises_the_proven_bound():
    """A recurrence with 2 spare cycles crosses at most 2 hops, so its operations, with the
    recurrences that must share a PE with them, sit on at most 2 PEs: at II 5, 12 operations
    on 10 slots. ``route_ii`` is 6 (5 before, where only the relaxation refutes II 5), and
    the sweep maps 6 and reports it proven."""
    spec, graph = load_hardware("cgra4x4-torus"), two_columns()
    p = problem_from_graph(graph, spec)
    bounds = lower_bounds(p)
    assert (bounds["ii"], bounds["route_ii"]) == (4, 6)
    assert solve_relaxation(p, 5, Budget(20))[0].status == SolveStatus.INFEASIBLE
    sched = sweep_ii(p, SolveSettings(time_limit=10))
    assert (sched.ii, sched.ii_bound, sched.proven_ii) == (6, 6, True)
    assert checked(graph, spec, sched)


@pytest.mark.parametrize("kernel,route_ii", [
    ("aes_encrypt/encrypt_INNERMOST_LN1_PartPred_DFG.xml", 11),
    ("aes_decrypt/decrypt_INNERMOST_LN1_PartPred_DFG.xml", 11),
    ("sample_xmls/decrypt_INNERMOST_LN1_DFG.xml", 10),
    ("sample_xmls/encrypt_INNERMOST_LN1_DFG.xml", 10)])
def test_the_aes_columns_are_proven_impossible_at_their_old_route_ii(kernel, route_ii):
    """Four column recurrences (one PE each at ``route_ii`` - 1) and the cycle of slack 4
    through them and the 16 operations between them: too many operations for 4 PEs."""
    p = problem_from_graph(load_graph(str(real_graph(f"morpher/{kernel}"))),
                           load_hardware("cgra4x4-torus"))
    assert lower_bounds(p)["route_ii"] == route_ii
    assert "on at most 4 PEs" in tight_recurrences(p, route_ii - 1)


def test_the_ladder_keeps_its_steps_and_skips_the_iis_a_crowded_recurrence_refutes(
        monkeypatch):
    """The two columns: ``group_ii`` 5 (the tight groups alone), ``route_ii`` 6. The list
    scheduler's ladder keeps its steps from 5 (5, 7, 9), asks nothing at 5, and its bisection
    below the first II that maps never asks below 6."""
    from types import SimpleNamespace
    from formulations.cgra import listsched
    p = problem_from_graph(two_columns(), load_hardware("cgra4x4-torus"))
    bounds = lower_bounds(p)
    assert (bounds["group_ii"], bounds["route_ii"]) == (5, 6)
    calls: list[int] = []

    def attempts(problem, ii, seed, tries, budget):
        calls.append(ii)
        return SimpleNamespace(ii=ii) if ii >= 9 else None

    monkeypatch.setattr(listsched, "_try_ii", attempts)
    assert listsched.list_schedule(p).ii == 9
    assert calls == [7, 9, 8]


def test_a_large_kernels_last_failed_step_gets_the_bisections_tries(monkeypatch):
    """On the way up a large kernel gets one attempt per II; the last II that failed so gets
    the bisection's ``tries`` before the bisection stops above it (here an II that needs a
    second attempt maps)."""
    from types import SimpleNamespace
    from formulations.cgra import listsched
    p = problem_from_graph(kernel(), load_hardware("cgra4x4"))
    monkeypatch.setattr(listsched, "LARGE_KERNEL", 0)
    calls: list[tuple[int, int]] = []
    steps = [1, 2, 3]              # the ladder from route_ii 1: 1, 2, 3 (x 1.25, at least + 1)
    assert lower_bounds(p)["route_ii"] == steps[0]

    def attempts(problem, ii, seed, tries, budget):
        calls.append((ii, tries))
        return SimpleNamespace(ii=ii) if ii >= steps[-1] or tries > 1 else None

    monkeypatch.setattr(listsched, "_try_ii", attempts)
    assert listsched.list_schedule(p).ii == steps[1]
    assert calls[:4] == [(1, 1), (2, 1), (3, 1), (2, 3)]


def test_a_resource_bound_kernel_asks_its_bound_plus_one_first_with_the_work(monkeypatch):
    """On a resource-bound kernel (40 adds fed by a load on a 2 x 2 mesh: ``route_ii`` 11 is
    ResMII, above RecMII) from II 20, every question mapping: with ``FIRST_LEAST`` planned
    seconds left, the first question is at ``route_ii`` + 1 = 12 with ``LOOSE_SHARE`` of the
    work (dwt FullPred on the torus maps its bound + 1 with 59.2 planned s of one question),
    before the quick descent, then 11 with ``FIRST_SHARE`` of the rest (and when that finds
    nothing the bisection asks 11 again); with less work left (a 15 s run) the bisection's
    midpoints as before, 15, 13, 12, 11."""
    from dataclasses import replace
    from formulations.cgra import kernel as k, mobility
    from formulations.cgra.listsched import schedule_at_ii
    from formulations.cgra.repair import resource_bound
    graph = Graph("fan40", [Node("a", op="LOAD")] + [Node(f"m{i}", op="ADD") for i in range(40)],
                  [Edge("a", f"m{i}") for i in range(40)])
    problem = problem_from_graph(graph, TINY)
    bounds = lower_bounds(problem)
    assert resource_bound(problem) and bounds["route_ii"] == bounds["res_ii"] == 11
    start = schedule_at_ii(problem, 20)
    asked: list[tuple[str, int, float]] = []

    def question(where: str):
        return lambda p, ii, budget, *a, **kw: asked.append(
            (where, ii, budget.left())) or (replace(start, ii=ii), False)

    monkeypatch.setattr(k, "window_question", question("first"))
    monkeypatch.setattr(mobility, "window_question", question("bisection"))
    monkeypatch.setattr(k, "descend", lambda p, best, *a, **kw: best)
    monkeypatch.setattr(k, "repair_descend", lambda p, best, *a, **kw: best)
    settings = SolveSettings(time_limit=1)
    rich = Budget(k.FIRST_LEAST * 1.2, time.monotonic() + 300)
    assert k._descent(problem, bounds, start, settings, rich, lambda line: None).ii == 11
    assert [(where, ii) for where, ii, _ in asked] == [("first", 12), ("first", 11)]
    work = k.FIRST_LEAST * 1.2                                   # the mocks spend nothing
    assert asked[0][2] == pytest.approx(work * k.LOOSE_SHARE)
    assert asked[1][2] == pytest.approx(work * k.FIRST_SHARE)
    asked.clear()
    monkeypatch.setattr(k, "window_question", lambda p, ii, budget, *a, **kw: asked.append(
        ("first", ii, budget.left())) or (replace(start, ii=ii) if ii > 11 else None, False))
    rich = Budget(k.FIRST_LEAST * 1.2, time.monotonic() + 300)
    assert k._descent(problem, bounds, start, settings, rich, lambda line: None).ii == 11
    assert [(where, ii) for where, ii, _ in asked] == [("first", 12), ("first", 11),
                                                       ("bisection", 11)]
    asked.clear()
    poor = Budget(k.FIRST_LEAST * 0.9, time.monotonic() + 300)
    assert k._descent(problem, bounds, start, settings, poor, lambda line: None).ii == 11
    assert [(where, ii) for where, ii, _ in asked] == [("bisection", ii) for ii in (15, 13, 12, 11)]


def test_a_bound_question_that_finds_nothing_leaves_the_bisection_its_work(monkeypatch):
    """The question at ``route_ii`` + 1 (12 on 40 adds on a 2 x 2 mesh) finds nothing within
    the usual horizon nor horizon by horizon, and spends its shares: the bisection after it
    (from II 20, every question mapping from 13) does not ask 12 again, and each of its
    questions gets all the work left (at least what its first would have had without the
    bound question, within the work left), not ``QUESTION_SHARE`` of ``MOBILITY_SHARE`` of it
    (dwt FullPred on the 4 x 4 mesh, before the climb: II 11 unanswered with 63.4 planned s,
    then II 15 with 6.1 of the 17.9 it needs, II 18 where main had 15)."""
    from dataclasses import replace
    from formulations.cgra import kernel as k, mobility
    from formulations.cgra.listsched import schedule_at_ii
    graph = Graph("fan40", [Node("a", op="LOAD")] + [Node(f"m{i}", op="ADD") for i in range(40)],
                  [Edge("a", f"m{i}") for i in range(40)])
    problem = problem_from_graph(graph, TINY)
    bounds = lower_bounds(problem)
    assert bounds["route_ii"] == 11
    start = schedule_at_ii(problem, 20)
    asked: list[tuple[str, int, float]] = []

    def unanswered(p, ii, budget, *a, **kw):
        asked.append(("first", ii, budget.left()))
        budget.spend(budget.left())                  # an unanswered question spends its share
        return None, False

    monkeypatch.setattr(k, "window_question", unanswered)
    monkeypatch.setattr(k, "rising_question", lambda *a, **kw: unanswered(*a, **kw)[0])
    monkeypatch.setattr(mobility, "window_question", lambda p, ii, budget, *a, **kw: asked.append(
        ("bisection", ii, budget.left())) or (replace(start, ii=ii) if ii >= 13 else None, False))
    monkeypatch.setattr(k, "descend", lambda p, best, *a, **kw: best)
    monkeypatch.setattr(k, "repair_descend", lambda p, best, *a, **kw: best)
    work = k.FIRST_LEAST * 1.2
    found = k._descent(problem, bounds, start, SolveSettings(time_limit=1),
                       Budget(work, time.monotonic() + 300), lambda line: None)
    assert found.ii == 13
    assert [(where, ii) for where, ii, _ in asked] == [("first", 12), ("first", 12),
                                                       ("bisection", 15), ("bisection", 13)]
    left = work * (1 - k.LOOSE_SHARE) * (1 - k.FIRST_SHARE)
    assert mobility.QUESTION_SHARE * k.MOBILITY_SHARE * work > left      # all of it, here
    assert [seconds for _, _, seconds in asked[2:]] == pytest.approx([left, left])


def test_a_bound_question_climbs_the_horizons_when_the_usual_one_finds_nothing(monkeypatch):
    """At ``route_ii`` + 1 the question within the usual horizon gets ``LOOSE_SHARE`` of the
    work; when it finds nothing, the questions from the tightest horizon up get
    ``FIRST_SHARE`` of what is left (dwt FullPred on the 4 x 4 mesh maps II 11 within + 5
    cycles in 20.4 planned s, and within + 6 only in 119.3): here + 2 and + 3 are refuted and
    + 4 maps, and then ``route_ii`` is asked within the usual horizon."""
    from dataclasses import replace
    from formulations.cgra import kernel as k, mobility
    from formulations.cgra.listsched import schedule_at_ii
    graph = Graph("fan40", [Node("a", op="LOAD")] + [Node(f"m{i}", op="ADD") for i in range(40)],
                  [Edge("a", f"m{i}") for i in range(40)])
    problem = problem_from_graph(graph, TINY)
    start = schedule_at_ii(problem, 20)
    asked: list[tuple[str, int, int, float]] = []

    def usual(p, ii, budget, seed, slack, *a, **kw):
        asked.append(("usual", ii, slack, budget.left()))
        budget.spend(budget.left())                  # an unanswered question spends its share
        return None, False

    def rising(p, ii, budget, seed, slack, *a, **kw):
        asked.append(("rising", ii, slack, budget.left()))
        budget.spend(1.0)
        return (replace(start, ii=ii) if slack == 4 else None), slack < 4

    monkeypatch.setattr(k, "window_question", usual)
    monkeypatch.setattr(mobility, "window_question", rising)
    work = k.FIRST_LEAST * 1.2
    found = k._bound_question(problem, start, SolveSettings(time_limit=1),
                              Budget(work, time.monotonic() + 300), lambda line: None)
    assert found.ii == 12
    assert [step[:3] for step in asked] == [("usual", 12, mobility.SLACK), ("rising", 12, 2),
                                            ("rising", 12, 3), ("rising", 12, 4),
                                            ("usual", 11, mobility.SLACK)]
    climb = work * (1 - k.LOOSE_SHARE) * k.FIRST_SHARE
    assert [step[3] for step in asked[1:4]] == pytest.approx([climb, climb - 1, climb - 2])


def test_questions_climb_the_horizons_from_the_tightest():
    """A fan of 15 adds on the 4 x 4 mesh at II 1 does not fit within its length bound + 2
    cycles (CP-SAT proves it) and fits within + 3: the climb maps it there, a mapping the
    simulator accepts."""
    from formulations.cgra.mobility import rising_question, window_question
    from formulations.cgra.problem import length_bound
    graph = Graph("fan15", [Node("a", op="LOAD")] + [Node(f"m{i}", op="ADD") for i in range(15)],
                  [Edge("a", f"m{i}") for i in range(15)])
    spec = load_hardware("cgra4x4")
    problem = problem_from_graph(graph, spec)
    assert window_question(problem, 1, Budget(10), 0, 2) == (None, True)
    found = rising_question(problem, 1, Budget(10))
    assert found.ii == 1 and found.length == length_bound(problem, 1) + 3
    assert checked(graph, spec, found)
