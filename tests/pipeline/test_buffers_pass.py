"""Pass 2 of the pipeline: balance_section on generated and real sections."""

from __future__ import annotations

import time

import pytest

from benchmarks.generators import reconvergent_dag
from formulations.solver import SolveSettings, available_backends
from hardware import load_hardware
from model.graph import Edge, Graph, Node
from pipeline.rdu.buffers_pass import balance_section
from pipeline.options import DEFAULT_BACKENDS, RunOptions
from sim.backpressure import check_balancing
from tests.conftest import real_graph

#: The buffers backend of these tests (the others keep the run's defaults).
HIGHS = {"buffers": "highs"}
ROW_KEYS = {"original_depth", "final_depth", "depth_added", "buffer_inserted", "pmus"}


def balance(g: Graph, spec, options: RunOptions, seconds: float, section: int | None = None):
    """balance_section with the settings the pipeline would plan for ``seconds``."""
    settings = SolveSettings(options.backend_for("buffers"), seconds, options.seed,
                             options.export_dir)
    return balance_section(g, spec, options, settings, section=section)


def test_balances_a_reconvergent_section_on_the_default_backend():
    g = reconvergent_dag(4, branches=3, max_branch_length=3, seed=1)
    out = balance(g, load_hardware("plasticine"), RunOptions(), 20.0, section=0)
    assert out.stage["backend"] == DEFAULT_BACKENDS["buffers"] and out.stage["stage"] == "buffers"
    assert out.balanced and out.violations == []
    assert set(out.rows) == set(range(len(g.edges)))
    assert all(ROW_KEYS <= set(row) for row in out.rows.values())
    assert all(row["final_depth"] >= row["original_depth"] for row in out.rows.values())
    assert out.throughput_before < 1.0 and out.throughput_after == 1.0
    assert out.pmus_after >= out.pmus_before
    lines = out.report_lines()
    assert lines[0] == "#### Stage buffers (section 0)"
    assert any("simulated throughput" in line for line in lines)


def test_depth_per_pmu_option_and_lp_integrality_note():
    g = reconvergent_dag(3, seed=2)
    out = balance(g, None, RunOptions(backends=HIGHS, depth_per_pmu=1), 10.0)
    assert out.solution.lp_integral is True
    assert any("network matrix" in line for line in out.report_lines())
    assert out.pmus_after - out.pmus_before == out.solution.added_depth > 0


@pytest.mark.parametrize("backend", [b for b in ("highs", "cp-sat", "scip", "pyomo-highs")
                                     if b in available_backends()])
def test_every_backend_name_works(backend):
    g = reconvergent_dag(3, seed=3)
    out = balance(g, load_hardware("tiny"),
                          RunOptions(backends={"buffers": backend}, depth_per_pmu=2), 10.0)
    reference = balance(g, load_hardware("tiny"), RunOptions(backends=HIGHS,
                                                                  depth_per_pmu=2), 10.0)
    assert out.balanced and out.pmus_after == reference.pmus_after


def test_exports_the_model(tmp_path):
    g = reconvergent_dag(2, seed=0)
    balance(g, None, RunOptions(backends=HIGHS, export_dir=str(tmp_path)), 10.0,
                    section=3)
    assert (tmp_path / "buffers_section3.mps").exists()


def test_loop_carried_edges_are_noted():
    g = Graph("loop", [Node("F"), Node("a"), Node("J")],
              [Edge("F", "a"), Edge("a", "J"), Edge("F", "J"), Edge("J", "F", distance=1)])
    out = balance(g, None, RunOptions(backends=HIGHS), 10.0)
    assert any("loop-carried" in note for note in out.notes)
    assert out.rows[3]["depth_added"] == 0 and out.balanced


def test_infeasible_tune_only_reports_a_diagnosis():
    g = Graph("conflict", [Node("F"), Node("M"), Node("J1"), Node("J2")],
              [Edge("F", "J1", net="b"), Edge("F", "J2", net="b"), Edge("F", "M", net="c"),
               Edge("F", "J2", net="c"), Edge("M", "J1")])
    out = balance(g, None, RunOptions(backends=HIGHS, buffer_mode="tune"), 10.0)
    assert not out.balanced and out.stage["status"] == "INFEASIBLE"
    assert any("diagnosis" in line and "M -> J1" in line for line in out.report_lines())
    assert out.pmus_after == out.pmus_before


def test_real_section_is_balanced_and_checked():
    from model.importers import load_graph

    graph = load_graph(real_graph("msr-dnn/OperatorGraphs/bert_l-3_inference.json"))
    sub = graph.subgraph(graph.topological_order()[:150], name="bert3-head")
    spec = load_hardware("plasticine")
    out = balance(sub, spec, RunOptions(backends=HIGHS), 30.0, section=0)
    assert out.balanced, out.violations or out.solution.diagnosis
    assert check_balancing(sub, out.rows, out.solution.loads, spec=spec) == []
    assert out.throughput_after >= out.throughput_before


def test_past_the_deadline_the_answer_is_checked_but_not_simulated():
    g = reconvergent_dag(3, seed=2)
    options = RunOptions(backends=HIGHS, depth_per_pmu=1)
    late = SolveSettings("highs", 10.0, deadline=time.monotonic() - 1.0)
    out = balance_section(g, None, options, late)
    assert out.violations == [] and out.throughput_before is None
    assert any("past the run's deadline" in note for note in out.notes)


def test_a_section_balancing_leaves_alone_is_simulated_once():
    chain = Graph("chain", [Node("a"), Node("b"), Node("c")], [Edge("a", "b"), Edge("b", "c")])
    out = balance(chain, None, RunOptions(backends=HIGHS), 10.0)
    assert out.throughput_before == out.throughput_after == 1.0
