"""The whole-kernel model in mobility windows (issue 35): lower IIs than list scheduling on
kernels above the sweep's reach, legal, and the same mapping for the same seed."""

from __future__ import annotations

import time
from dataclasses import replace

from formulations.cgra.listsched import schedule_at_ii
from formulations.cgra.mobility import (ask_at, mobility_search, pe_representatives,
                                        pe_symmetries, question_seconds, window_map,
                                        window_question)
from formulations.cgra.problem import lower_bounds, problem_from_graph
from formulations.solver import Budget
from hardware import load_hardware
from model.importers import load_graph
from tests.conftest import real_graph
from tests.formulations.test_cgra import TINY, checked, skip_chain

NEEDWUN = "morpher/nw/needwun_INNERMOST_LN1_FullPred_DFG.xml"


def test_mobility_windows_map_needwun_where_list_scheduling_cannot():
    """needwun FullPred (61 operations, recurrence bound 16) on the 4 x 4 torus: eight list
    scheduling attempts at II 20 all fail (today's run lands at II 23 after 120 s), while one
    question of the full model in the mobility windows at II 20 maps it within 10 planned
    seconds (stopping at its first mapping is not counted as cut short by the clock); the
    simulator accepts the mapping, and the same seed gives the same one again."""
    graph = load_graph(str(real_graph(NEEDWUN)))
    spec = load_hardware("cgra4x4-torus")
    problem = problem_from_graph(graph, spec)
    budget = Budget(10, time.monotonic() + 300)
    assert all(schedule_at_ii(problem, 20, k, budget) is None for k in range(8))
    budget = Budget(10, time.monotonic() + 300)
    first = window_map(problem, 20, budget, seed=0)
    assert first is not None and first.ii == 20 and first.method == "CP-SAT in mobility windows"
    assert budget.cuts == 0 and 0 < budget.spent <= 10   # its first solution, not the clock
    assert checked(graph, spec, first)
    again = window_map(problem, 20, Budget(10, time.monotonic() + 300), seed=0)
    assert (again.pe, again.cycle, again.routes) == (first.pe, first.cycle, first.routes)


def test_mobility_search_bisects_down_from_a_mapping():
    """From a list-scheduling mapping at II 20 of the 40-operation skip chain on a 2 x 2 mesh,
    the bisection lowers the II, every answer legal; a budget below one question's need
    leaves the mapping as it was."""
    spec, graph = TINY, skip_chain()
    problem = problem_from_graph(graph, spec)
    start = schedule_at_ii(problem, 20)
    lines: list[str] = []
    found = mobility_search(problem, start, Budget(30, time.monotonic() + 300),
                            progress=lines.append)
    assert lower_bounds(problem)["ii"] <= found.ii < 20
    assert checked(graph, spec, found)
    assert any("mobility windows" in line for line in lines)
    mid = (lower_bounds(problem)["ii"] + 20) // 2
    short = Budget(question_seconds(problem, mid) * 0.5, time.monotonic() + 300)
    assert mobility_search(problem, start, short) is start


def test_a_question_refuted_by_its_horizon_is_asked_again_with_a_longer_one():
    """The skip chain on the 2 x 2 mesh at its bound, II 10: CP-SAT proves that no mapping
    ends within the length bound + 3 cycles (that horizon, not the II, is what fails), and
    the same II asked again within + 6 cycles maps, legal."""
    spec, graph = TINY, skip_chain()
    problem = problem_from_graph(graph, spec)
    short, refuted = window_question(problem, 10, Budget(20, time.monotonic() + 300), slack=3)
    assert short is None and refuted
    lines: list[str] = []
    found, asked = ask_at(problem, 10, Budget(20, time.monotonic() + 300), 0, lines.append,
                          slacks=(3, 6))
    assert asked and found is not None and found.ii == 10 and checked(graph, spec, found)
    assert [line.split(") ")[1] for line in lines] == ["none within the horizon",
                                                       "mapped, length " + str(found.length)]


def test_every_pe_symmetry_moves_a_mapping_onto_a_legal_one():
    """The symmetries a question breaks (its first operation only on the first PE of each
    orbit) are true ones: the skip chain's mapping on the 2 x 2 mesh, moved by each of the 8,
    still passes the simulator; the first operation then has one representative PE."""
    spec, graph = TINY, skip_chain()
    problem = problem_from_graph(graph, spec)
    sched = schedule_at_ii(problem, 20)
    group = pe_symmetries(problem)
    assert len(group) == 8 and pe_representatives(problem, 0) == [0]
    for perm in group:
        moved = replace(sched, pe={n: perm[p] for n, p in sched.pe.items()},
                        routes={k: [(perm[p], c) for p, c in path]
                                for k, path in sched.routes.items()})
        assert checked(graph, spec, moved)


def test_a_restricted_models_none_never_raises_the_ii_bound(monkeypatch):
    """Only the whole problem's proofs raise ``ii_bound``: questions in mobility windows (or
    on a corner, or near a mapping) that find no mapping within their horizon prove nothing
    about the II, so with every such question answering "none" and no relaxation refuting,
    the bound reported is the static one (``route_ii``)."""
    from formulations.cgra import kernel, mobility, sweep
    from formulations.cgra.kernel import map_kernel
    from formulations.solver import SolveSettings
    asked: list[int] = []
    monkeypatch.setattr(mobility, "window_question",
                        lambda p, ii, *a, **kw: asked.append(ii) or (None, True))
    monkeypatch.setattr(sweep, "_relax", lambda *a, **kw: ("open", 0, None))
    monkeypatch.setattr(kernel, "MOBILITY_FIRST", 1.0)            # bisect before descending
    graph = skip_chain()
    result = map_kernel(graph, TINY, SolveSettings(time_limit=4))
    assert asked        # the whole model may still map below them with the work left
    assert result.schedule.ii_bound == lower_bounds(result.problem)["route_ii"]
    assert not result.schedule.proven_ii and checked(graph, TINY, result.schedule)


def test_the_bisection_on_a_corner_ends_at_its_first_question_without_a_mapping(monkeypatch):
    """On a large kernel, questions asked on a corner of the fabric that find nothing leave
    the work to the descent on the whole fabric: the bisection stops after the first, where
    on the whole fabric, or on a smaller kernel's corner, it goes on above the unanswered
    midpoint."""
    from formulations.cgra import mobility
    monkeypatch.setattr(mobility, "LARGE_KERNEL", 30)          # the chain's 40 are many
    asked: list[int] = []
    monkeypatch.setattr(mobility, "window_question",
                        lambda p, ii, *a, **kw: asked.append(ii) or (None, False))
    problem = problem_from_graph(skip_chain(), TINY)
    corner = problem_from_graph(skip_chain(), TINY)          # another problem: "a corner"
    start = schedule_at_ii(problem, 20)
    assert mobility_search(problem, start, Budget(600), fabric=lambda ii: corner) is start
    assert len(asked) == 1
    for fabric in (None, lambda ii: corner):       # the whole fabric; a smaller kernel's corner
        monkeypatch.setattr(mobility, "LARGE_KERNEL", 60)
        asked.clear()
        mobility_search(problem, start, Budget(600), fabric=fabric)
        assert len(set(asked)) > 1


def test_a_bisection_of_one_question_asks_from_the_classic_bound(monkeypatch):
    """The bisection's midpoints are between the proven bound (``route_ii``) and the top,
    but when the work left covers only one question, the first is the midpoint from the
    classic bound (the question asked before ``route_ii`` existed; sample adpcm_coder_LN1
    at 15 s: 25 mapped where 26 was asked). The figure eight (classic bound 4, ``route_ii``
    6) from II 12, every question mapping: 9, 7, 6 with work for many questions; 8, 7, 6
    with work for one."""
    from formulations.cgra import mobility
    from tests.formulations.test_cgra import figure_eight
    problem = problem_from_graph(figure_eight(), load_hardware("cgra4x4"))
    start = schedule_at_ii(problem, 12)
    asked: list[int] = []
    monkeypatch.setattr(mobility, "question_seconds", lambda *a, **kw: 1.0)
    monkeypatch.setattr(mobility, "window_question", lambda p, ii, *a, **kw:
                        asked.append(ii) or (replace(start, ii=ii), False))
    for work, questions in ((600, [9, 7, 6]), (1.5, [8, 7, 6])):
        asked.clear()
        assert mobility_search(problem, start, Budget(work)).ii == 6
        assert asked == questions
