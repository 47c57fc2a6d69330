"""Tests of the solver layer (formulations.solver): backends, files, hints, diagnosis."""

from __future__ import annotations

import json
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from formulations.solver import (
    Budget,
    INF,
    LinearModel,
    SolveResult,
    SolveStatus,
    available_backends,
    diagnose_infeasible,
    explain_infeasible,
    export_cp_model,
    get_backend,
    load_cp_model,
    quicksum,
    register_backend,
    solve_cp_model,
    solve_model_file,
    unregister_backend,
    write_model_file,
)

BACKENDS = available_backends()


# ---------------------------------------------------------------------------------------------
# models
# ---------------------------------------------------------------------------------------------
def knapsack(weights=(5, 4, 3, 2, 7, 6), values=(10, 7, 5, 3, 12, 9), capacity=14):
    m = LinearModel("knapsack")
    x = [m.add_binary(f"take[{i}]") for i in range(len(weights))]
    m.add(quicksum(w * xi for w, xi in zip(weights, x)) <= capacity, name="weight",
          family="capacity")
    m.maximize(quicksum(v * xi for v, xi in zip(values, x)))
    return m, x


def assignment(costs, capacity=1, name="assign"):
    """Nodes to units: each node on one unit (assignment), at most ``capacity`` per unit."""
    m = LinearModel(name)
    n_nodes, n_units = len(costs), len(costs[0])
    x = {(i, u): m.add_binary(f"x[n{i},u{u}]") for i in range(n_nodes) for u in range(n_units)}
    for i in range(n_nodes):
        m.add(quicksum(x[i, u] for u in range(n_units)) == 1, name=f"place[n{i}]",
              family="assignment")
    for u in range(n_units):
        m.add(quicksum(x[i, u] for i in range(n_nodes)) <= capacity, name=f"cap[u{u}]",
              family="capacity")
    m.minimize(quicksum(costs[i][u] * x[i, u] for i, u in x))
    return m, x


COSTS = [[4, 1, 3, 7], [2, 0, 5, 3], [3, 2, 2, 6], [5, 4, 1, 2]]


def market_split(rows=5, n=40, seed=1):
    """A hard-ish equality knapsack system (Cornuejols-Dawande), minimising the violation."""
    rng = random.Random(seed)
    m = LinearModel("market_split")
    x = [m.add_binary(f"x{j}") for j in range(n)]
    slack = [m.add_var(f"s{i}{side}", ub=1000, integer=True) for i in range(rows) for side in "pm"]
    for i in range(rows):
        a = [rng.randint(0, 99) for _ in range(n)]
        m.add(quicksum(c * v for c, v in zip(a, x)) + slack[2 * i] - slack[2 * i + 1]
              == sum(a) // 2, name=f"split{i}", family="split")
    m.minimize(quicksum(slack))
    return m


def infeasible_model():
    m = LinearModel("infeasible")
    x = m.add_var("x", ub=3, integer=True)
    y = m.add_var("y", ub=3, integer=True)
    m.add(x + y >= 7, name="too_much", family="reach")
    m.minimize(x + y)
    return m


# ---------------------------------------------------------------------------------------------
# every backend gives the same optimum
# ---------------------------------------------------------------------------------------------
def test_expected_backends_are_registered():
    for name in ("highs", "cp-sat", "scip", "pyomo-highs"):
        assert name in BACKENDS
    assert all(get_backend(b).name == b for b in BACKENDS)


@pytest.mark.parametrize("backend", BACKENDS)
def test_knapsack_same_optimum_on_every_backend(backend):
    m, x = knapsack()
    r = m.solve(backend=backend, time_limit=10, seed=0)
    assert r.status is SolveStatus.OPTIMAL, r.message
    assert r.objective == pytest.approx(25.0)
    assert r.bound == pytest.approx(25.0, abs=1e-3)
    assert r.gap == pytest.approx(0.0, abs=1e-4)
    assert r.backend == backend and (r.n_vars, r.n_constraints) == (6, 1)
    chosen = sum(w for w, xi in zip((5, 4, 3, 2, 7, 6), x) if r.value(xi) > 0.5)
    assert chosen <= 14


@pytest.mark.parametrize("backend", BACKENDS)
def test_assignment_same_optimum_on_every_backend(backend):
    m, x = assignment(COSTS)
    r = m.solve(backend=backend, time_limit=10)
    assert r.status is SolveStatus.OPTIMAL, r.message
    assert r.objective == pytest.approx(7.0)
    for i in range(4):
        assert sum(r.value(x[i, u]) for u in range(4)) == 1.0


def test_fractional_coefficients_scaled_for_cp_sat():
    m = LinearModel("frac")
    x = m.add_var("x", ub=20, integer=True)
    y = m.add_var("y", ub=20, integer=True)
    m.add(0.5 * x + 1.25 * y <= 7.3, name="half")
    m.maximize(1.5 * x + 0.1 * y + 0.25)
    expected = m.solve(backend="highs").objective
    r = m.solve(backend="cp-sat")
    assert r.status is SolveStatus.OPTIMAL
    assert r.objective == pytest.approx(expected) == pytest.approx(21.25)


@settings(max_examples=15, deadline=None)
@given(st.lists(st.tuples(st.integers(1, 20), st.integers(0, 30)), min_size=1, max_size=8),
       st.integers(0, 60))
def test_random_knapsacks_agree_between_highs_and_cp_sat(items, capacity):
    m, _ = knapsack([w for w, _ in items], [v for _, v in items], capacity)
    a, b = m.solve(backend="highs", mip_gap=0.0), m.solve(backend="cp-sat")
    assert a.status is b.status is SolveStatus.OPTIMAL
    assert a.objective == pytest.approx(b.objective)


# ---------------------------------------------------------------------------------------------
# files
# ---------------------------------------------------------------------------------------------
def test_mps_round_trip_highs_and_scip(tmp_path):
    m = market_split(rows=3, n=12)
    in_memory = m.solve(backend="cp-sat", time_limit=10)
    path = write_model_file(m, tmp_path / "split.mps")
    text = path.read_text()
    assert "'MARKER'" in text and "INTORG" in text  # integer markers
    for backend in ("highs", "scip"):
        r = solve_model_file(path, backend=backend, time_limit=10)
        assert r.status is SolveStatus.OPTIMAL, r.message
        assert r.objective == pytest.approx(in_memory.objective)
        assert r.n_vars == m.n_vars and r.n_constraints == m.n_constraints
        assert set(r.values) == {v.name for v in m.vars}


def test_lp_round_trip_highs(tmp_path):
    m, _ = assignment(COSTS)
    in_memory = m.solve(backend="scip")
    path = tmp_path / "assign.lp"
    m.write_lp(str(path))
    r = solve_model_file(path, backend="highs")
    assert r.status is SolveStatus.OPTIMAL
    assert r.objective == pytest.approx(in_memory.objective)
    assert "x_n0_u0_" in r.values  # names made LP-safe, not replaced by c0, c1, ...


def test_objective_offset_and_continuous_vars_survive_mps(tmp_path):
    m = LinearModel("lp")
    x, y = m.add_var("x", lb=-INF), m.add_var("y", ub=4)
    m.add(x + 2 * y >= 3.5, name="a")
    m.add(x - y <= 1, name="b")
    m.minimize(2 * x + y + 10)
    expected = m.solve(backend="scip").objective
    m.write_mps(str(tmp_path / "lp.mps"))
    for backend in ("highs", "scip"):
        r = solve_model_file(tmp_path / "lp.mps", backend=backend)
        assert r.objective == pytest.approx(expected)


def test_write_model_file_rejects_mismatch(tmp_path):
    m, _ = knapsack()
    with pytest.raises(ValueError, match="pb.txt"):
        write_model_file(m, tmp_path / "k.pb.txt")
    with pytest.raises(ValueError, match="suffix"):
        write_model_file(m, tmp_path / "k.json")


def test_cp_sat_proto_export_parses_and_solves(tmp_path):
    from google.protobuf import text_format
    from ortools.sat import cp_model_pb2
    from ortools.sat.python import cp_model

    model, _ = _jobs_model(cp_model)
    direct = solve_cp_model(model, time_limit=10)
    path = tmp_path / "jobs.pb.txt"
    export_cp_model(model, str(path))
    proto = text_format.Parse(path.read_text(), cp_model_pb2.CpModelProto())
    assert len(proto.variables) == len(model.proto.variables)
    reread = cp_model.CpModel()
    reread.proto.parse_text_format(text_format.MessageToString(proto))
    for again in (solve_cp_model(reread, time_limit=10), solve_model_file(path),
                  solve_cp_model(load_cp_model(str(path)))):
        assert again.status is SolveStatus.OPTIMAL
        assert again.objective == direct.objective == 9.0


def _jobs_model(cp_model):
    """Three jobs on one machine (NoOverlap), minimise the makespan; jobs on distinct slots."""
    m = cp_model.CpModel()
    durations = [2, 3, 4]
    starts = [m.new_int_var(0, 20, f"start[j{k}]") for k in range(3)]
    intervals = [m.new_interval_var(s, d, s + d, f"job[j{k}]")
                 for k, (s, d) in enumerate(zip(starts, durations))]
    m.add_no_overlap(intervals).with_name("machine")
    slots = [m.new_int_var(0, 2, f"slot[j{k}]") for k in range(3)]
    m.add_all_different(slots).with_name("distinct_slots")
    makespan = m.new_int_var(0, 30, "makespan")
    for s, d in zip(starts, durations):
        m.add(makespan >= s + d).with_name(f"end_{d}")
    m.minimize(makespan)
    return m, (starts, slots, makespan)


# ---------------------------------------------------------------------------------------------
# highspy and ortools in one process
# ---------------------------------------------------------------------------------------------
def test_highspy_and_ortools_in_one_process():
    import highspy
    from ortools.linear_solver import pywraplp
    from ortools.sat.python import cp_model

    h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    x = h.addVariable(lb=0, ub=10)
    y = h.addVariable(lb=0, ub=10)
    h.addConstr(x + 2 * y <= 14)
    h.maximize(3 * x + 4 * y)
    assert h.getInfo().objective_function_value == pytest.approx(38.0)

    s = pywraplp.Solver.CreateSolver("HIGHS")  # OR-Tools' bundled HiGHS
    assert s is not None
    a, b = s.NumVar(0, 10, "a"), s.NumVar(0, 10, "b")
    s.Add(a + 2 * b <= 14)
    s.Maximize(3 * a + 4 * b)
    assert s.Solve() == pywraplp.Solver.OPTIMAL
    assert s.Objective().Value() == pytest.approx(38.0)

    m = cp_model.CpModel()
    p, q = m.new_int_var(0, 10, "p"), m.new_int_var(0, 10, "q")
    m.add(p + 2 * q <= 14)
    m.maximize(3 * p + 4 * q)
    solver = cp_model.CpSolver()
    assert solver.solve(m) == cp_model.OPTIMAL and solver.objective_value == 38


# ---------------------------------------------------------------------------------------------
# statuses
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("backend", BACKENDS)
def test_infeasible_model_is_reported(backend):
    r = infeasible_model().solve(backend=backend, time_limit=10)
    assert r.status is SolveStatus.INFEASIBLE, r.message
    assert not r.has_solution and r.objective is None and r.values == {}


@pytest.mark.parametrize("backend", BACKENDS)
def test_tiny_time_limit_never_crashes(backend):
    r = market_split(rows=6, n=60).solve(backend=backend, time_limit=0.02, seed=1)
    assert r.status in (SolveStatus.FEASIBLE, SolveStatus.TIMEOUT_NO_SOLUTION), r.message
    if r.has_solution:
        assert r.objective >= 0 and len(r.values) == 72


def test_unknown_backend_is_a_clear_value_error():
    m, _ = knapsack()
    with pytest.raises(ValueError, match=r"unknown solver backend 'gurobi-magic'.*highs.*cp-sat"):
        m.solve(backend="gurobi-magic")
    with pytest.raises(ValueError, match="available"):
        get_backend("pyomo:no-such-solver")


def test_invalid_options_are_value_errors():
    m, _ = knapsack()
    with pytest.raises(ValueError, match="time_limit"):
        m.solve(time_limit=0)
    with pytest.raises(ValueError, match="threads"):
        m.solve(threads=0)


@pytest.mark.parametrize("backend, options", [
    ("cp-sat", {"max_time_in_seconds": 0.05}),
    ("highs", {"time_limit": 0.05}),
    ("scip", {"limits/time": 0.05}),
])
def test_solver_native_options_override_the_common_ones(backend, options):
    if backend not in BACKENDS:
        pytest.skip(f"{backend} not available")
    r = market_split(rows=6, n=60).solve(backend=backend, time_limit=60, options=options)
    assert r.status is not SolveStatus.OPTIMAL and r.wall_time < 30, r.message


@pytest.mark.parametrize("backend, options, named", [
    ("cp-sat", {"no_such_parameter": 1}, "no_such_parameter"),
    ("highs", {"presolve": "sometimes"}, "presolve"),
])
def test_unknown_solver_option_is_an_error_status_naming_it(backend, options, named):
    m, _ = knapsack()
    r = m.solve(backend=backend, options=options)
    assert r.status is SolveStatus.ERROR and named in r.message


@pytest.mark.parametrize("backend, suffix, options, named", [
    ("highs", ".mps", {"presolve": "sometimes"}, "presolve"),
    ("cp-sat", ".pb.txt", {"no_such_parameter": 1}, "no_such_parameter"),
])
def test_model_files_take_solver_options_too(tmp_path, backend, suffix, options, named):
    from formulations.solver import export_cp_model
    from formulations.solver._cpsat_linear import to_cp_model
    m, _ = knapsack()
    path = tmp_path / f"knapsack{suffix}"
    if suffix == ".mps":
        m.write_mps(str(path))
    else:
        export_cp_model(to_cp_model(m.to_arrays()), str(path))
    assert solve_model_file(path, backend=backend).status is SolveStatus.OPTIMAL
    bad = solve_model_file(path, backend=backend, options=options)
    assert bad.status is SolveStatus.ERROR and named in bad.message


def test_cp_sat_rejects_continuous_variables_with_error_status():
    m = LinearModel("mixed")
    x = m.add_var("flow")
    m.add(x >= 1.5)
    m.minimize(x)
    r = m.solve(backend="cp-sat")
    assert r.status is SolveStatus.ERROR and "flow" in r.message and "continuous" in r.message


def test_backend_exception_becomes_error_status():
    def broken(arrays, opts):
        raise RuntimeError("solver exploded")

    register_backend("test-broken", broken)
    try:
        r = knapsack()[0].solve(backend="test-broken")
    finally:
        unregister_backend("test-broken")
    assert r.status is SolveStatus.ERROR and "solver exploded" in r.message
    assert "test-broken" not in available_backends()


def test_result_to_dict_is_json_ready():
    r = knapsack()[0].solve(backend="highs")
    d = json.loads(json.dumps(r.to_dict()))
    assert d["status"] == "optimal" and d["backend"] == "highs" and d["objective"] == 25.0
    assert d["n_vars"] == 6 and d["hint_status"] == "none" and "values" not in d
    assert "values" in r.to_dict(include_values=True)
    with pytest.raises(ValueError):
        SolveResult(SolveStatus.OPTIMAL, hint_status="maybe")


# ---------------------------------------------------------------------------------------------
# hints
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("backend", BACKENDS)
def test_feasible_hint_is_accepted(backend):
    m, x = knapsack()
    m.set_hint({xi: v for xi, v in zip(x, (1, 1, 0, 0, 0, 0))})
    r = m.solve(backend=backend)
    assert r.hint_status == "accepted" and r.hint_violations == ()
    assert r.objective == pytest.approx(25.0)


@pytest.mark.parametrize("backend", BACKENDS)
def test_infeasible_hint_is_reported_with_constraint_names(backend):
    m, x = assignment(COSTS)
    m.set_hint({v: 1 for v in x.values()})  # every node on every unit
    r = m.solve(backend=backend)
    assert r.hint_status == "infeasible"
    assert {"place[n0]", "cap[u3]"} <= set(r.hint_violations)
    assert "hint infeasible" in r.message
    assert r.objective == pytest.approx(7.0)  # the solve still goes on


def test_partial_and_out_of_bounds_hints():
    m, x = knapsack()
    m.set_hint({x[0]: 1})
    assert m.check_hint().status == "partial"
    m.set_hint({"take[0]": 2, "take[1]": 0.5})
    check = m.check_hint()
    assert check.status == "infeasible"
    assert check.violations == ("bound:take[0]", "integrality:take[1]")
    m.clear_hint()
    assert m.check_hint().status == "none"


def test_cp_model_hint_checked_against_cp_constraints():
    from ortools.sat.python import cp_model

    model, (starts, slots, makespan) = _jobs_model(cp_model)
    good = {**dict(zip(starts, (0, 2, 5))), **dict(zip(slots, (0, 1, 2))), makespan: 9}
    r = solve_cp_model(model, hint=good, variables=[makespan])
    assert r.hint_status == "accepted" and r.values == {"makespan": 9}
    bad = {**dict(zip(starts, (0, 1, 5))), **dict(zip(slots, (0, 0, 2))), makespan: 9}
    r = solve_cp_model(model, hint=bad)
    assert r.hint_status == "infeasible"
    assert set(r.hint_violations) == {"machine", "distinct_slots"}
    assert r.objective == 9.0 and not model.proto.solution_hint.vars  # model untouched
    r = solve_cp_model(model, hint={makespan: 9})
    assert r.hint_status == "partial"


# ---------------------------------------------------------------------------------------------
# diagnosis
# ---------------------------------------------------------------------------------------------
def test_diagnose_names_the_capacity_family():
    m, x = assignment([[1, 2]] * 3, capacity=1, name="too_small")  # 3 nodes, 2 unit slots
    u = [m.add_binary(f"used[u{k}]") for k in range(2)]
    for k in range(2):  # a harmless family that must not be blamed
        m.add(x[0, k] <= u[k], name=f"reach[n0,u{k}]", family="reach")
    assert diagnose_infeasible(m, keep=["assignment"]) == ["capacity"]
    assert diagnose_infeasible(m) == ["assignment", "capacity"]
    d = explain_infeasible(m, keep=["assignment"])
    assert d.status == "infeasible" and d.kept == ("assignment",)
    assert set(d.constraints["capacity"]) <= {"cap[u0]", "cap[u1]"} and d.constraints["capacity"]
    assert "capacity" in str(d) and "cap[u" in str(d)


def test_diagnose_feasible_model_and_cp_sat_backend():
    m, _ = assignment(COSTS)
    assert diagnose_infeasible(m) == []
    m.add(quicksum(m.vars) <= 3, name="total[units]", family="memory")
    assert diagnose_infeasible(m, backend="cp-sat", keep=["assignment"]) == ["memory"]


def test_diagnose_bounds_alone():
    m = LinearModel()
    m.add_var("x", lb=2, ub=1)
    assert diagnose_infeasible(m) == ["(bounds)"]


# ---------------------------------------------------------------------------------------------
# determinism
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("backend", ["highs", "cp-sat", "scip"])
def test_same_seed_same_values(backend):
    def run():
        m, _ = assignment([[1] * 6] * 6, capacity=2, name="ties")  # many optimal solutions
        return m.solve(backend=backend, seed=7, time_limit=10)

    first, second = run(), run()
    assert first.status is SolveStatus.OPTIMAL
    assert first.values == second.values


# ---------------------------------------------------------------------------------------------
# the builder
# ---------------------------------------------------------------------------------------------
def test_expressions_sum_and_bulk_rows_build_the_same_model():
    a = LinearModel("a")
    xs = a.add_vars(5, ub=1, integer=True)
    a.add(sum(xs) - xs[0] + 2 * xs[0] <= 3, name="r0", family="capacity")
    b = LinearModel("b")
    ys = b.add_vars(5, ub=1, integer=True)
    b.add_rows([(ys, [2, 1, 1, 1, 1])], ub=[3], names=["r0"], family="capacity")
    for field in ("row_start", "row_index", "row_value", "row_lo", "row_hi", "col_ub"):
        assert getattr(a.to_arrays(), field).tolist() == getattr(b.to_arrays(), field).tolist()


def test_builder_errors_are_clear():
    m = LinearModel()
    x = m.add_var("x")
    with pytest.raises(ValueError, match="duplicate"):
        m.add_var("x")
    with pytest.raises(ValueError, match="whitespace"):
        m.add_var("a b")
    with pytest.raises(TypeError, match="add_range"):
        m.add(0 <= x <= 5)
    with pytest.raises(TypeError):
        m.add(True)
    other = LinearModel().add_var("y")
    with pytest.raises(ValueError, match="another model"):
        m.add(x + other <= 1)
    assert {x: 1}[x] == 1 and x in {x}  # vars stay usable as dict keys


def test_constants_move_to_the_bounds():
    m = LinearModel()
    x, y = m.add_var("x"), m.add_var("y")
    row = m.add(2 * (x + 1) - y >= 3 + y, name="c")
    a = m.to_arrays()
    assert a.row_lo[row] == 1.0 and a.row_hi[row] == INF
    assert dict(zip(a.row_index.tolist(), a.row_value.tolist())) == {0: 2.0, 1: -2.0}


# ---------------------------------------------------------------------------------------------
# work limits (issue 18: same seed, same answer; the wall clock only the outer cap)
# ---------------------------------------------------------------------------------------------
def _hard_cp_model():
    from ortools.sat.python import cp_model
    rng = __import__("random").Random(3)
    m = cp_model.CpModel()
    xs = [m.new_int_var(0, 39, f"x{i}") for i in range(40)]
    m.add_all_different(xs)
    m.minimize(sum(rng.randint(1, 50) * abs_var for abs_var in _abs_diffs(m, xs, rng)))
    return m


def _abs_diffs(m, xs, rng):
    out = []
    for k in range(80):
        a, b = rng.sample(xs, 2)
        d = m.new_int_var(0, 39, f"d{k}")
        m.add_abs_equality(d, a - b)
        out.append(d)
    return out


def test_cp_sat_stops_at_its_deterministic_time_the_same_way_twice():
    from formulations.solver import solve_cp_model, was_cut_short, work_of
    runs = [solve_cp_model(_hard_cp_model(), time_limit=60, seed=1, deterministic_time=0.3)
            for _ in range(2)]
    assert [r.status.name for r in runs] == ["FEASIBLE", "FEASIBLE"]
    assert runs[0].values == runs[1].values and runs[0].objective == runs[1].objective
    assert not any(was_cut_short(r) for r in runs)
    assert work_of(runs[0]) == pytest.approx(work_of(runs[1])) and work_of(runs[0]) > 0


def test_a_cp_sat_solve_the_wall_clock_stops_first_says_so():
    from formulations.solver import solve_cp_model, was_cut_short
    result = solve_cp_model(_hard_cp_model(), time_limit=0.05, seed=1, deterministic_time=100)
    assert result.status.name in ("FEASIBLE", "TIMEOUT_NO_SOLUTION")
    assert was_cut_short(result) and "cut short by the wall clock" in result.message


def test_highs_stops_at_its_node_limit_and_is_not_cut_short():
    from formulations.solver import LinearModel
    from formulations.solver import was_cut_short, work_of, work_options
    rng = __import__("random").Random(0)
    m = LinearModel()
    xs = [m.add_var(f"x{i}", ub=1, integer=True) for i in range(60)]
    weights = [rng.randint(10, 99) for _ in xs]
    m.add(sum(w * x for w, x in zip(weights, xs)) <= sum(weights) // 2, name="cap")
    m.add(sum(rng.randint(10, 99) * x for x in xs) <= sum(weights) // 2, name="cap2")
    m.maximize(sum(rng.randint(10, 99) * x for x in xs))
    options = work_options("highs", 0.01)
    assert options == {"mip_max_nodes": 1}
    runs = [m.solve(backend="highs", time_limit=60, options=options) for _ in range(2)]
    assert runs[0].objective == runs[1].objective and runs[0].values == runs[1].values
    assert not was_cut_short(runs[0]) and work_of(runs[0]) is not None


def test_solve_planned_charges_its_work_and_caps_the_wall_clock():
    import time
    from formulations.solver import LinearModel
    from formulations.solver import Budget, deadline_for
    from formulations.solver import solve_planned
    m = LinearModel()
    x = m.add_var("x", ub=10, integer=True)
    m.add(2 * x <= 7, name="cap")
    m.maximize(x)
    budget = Budget(1.0, time.monotonic() + 60)
    result = solve_planned(m, "cp-sat", budget.share(0.5))
    assert result.objective == 3 and 0 < budget.spent <= 0.5 and not budget.cut_short
    now = time.monotonic()
    assert 6.0 <= deadline_for(3.0) - now < 6.5 and 2.0 <= deadline_for(0.01) - now < 2.5
    assert deadline_for(3.0, deadline=now + 1) == now + 1


# ---------------------------------------------------------------------------------------------
# interrupts: a solve begun after a stop request stops at once
# ---------------------------------------------------------------------------------------------
@pytest.fixture
def stop_asked():
    """A stop request, as SIGINT/SIGTERM make it; cleared afterwards."""
    from formulations.solver import clear_stop, request_stop
    request_stop()
    yield
    clear_stop()


@pytest.mark.parametrize("backend", ["highs", "cp-sat"])
def test_a_solve_begun_after_a_stop_request_stops_at_once(stop_asked, backend):
    """Once every solve after a Ctrl-C ran to its limit: HiGHS and CP-SAT drop a stop
    that comes before their run starts (and highspy drops every cancel unless asked to
    handle interrupts)."""
    import time
    from formulations.solver import LinearModel
    rng = random.Random(0)
    m = LinearModel()
    xs = [m.add_var(f"x{i}", ub=1, integer=True) for i in range(80)]
    for k in range(20):
        m.add(sum(rng.randint(10, 99) * x for x in xs) <= 1500, name=f"cap{k}")
    m.maximize(sum(rng.randint(10, 99) * x for x in xs))
    started = time.monotonic()
    result = m.solve(backend=backend, time_limit=20)
    assert time.monotonic() - started < 2.0, result.message
    assert result.status is not SolveStatus.OPTIMAL


def test_an_anneal_after_a_stop_request_returns_at_once(stop_asked, plasticine):
    """The annealer is no solver: it reads the stop request itself, once per temperature."""
    from formulations.placement import anneal, greedy_place
    from formulations.placement.problem import placement_problem
    from tests.formulations.test_placement_model import random_section
    g = random_section(40)
    problem = placement_problem(g, plasticine)
    _, _, stats = anneal(problem, plasticine, greedy_place(g, plasticine, g.node_ids),
                         Budget(60), seed=0)
    assert stats["temperatures"] == 0 and stats["cut_short"]
