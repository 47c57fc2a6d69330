"""Tests of the benchmark harness: generators, table writer, registry, a tiny run."""

from __future__ import annotations

import csv
import doctest
import importlib

import networkx as nx
import pytest

from benchmarks import generators, tables
from benchmarks.generators import layered_dag, random_dag, reconvergent_dag
from benchmarks.registry import Column, Entry, get_suite, suites
from benchmarks.run import REPO_ROOT, main, run_isolated, run_suite
from benchmarks.suites import pipeline as pipeline_suite
from benchmarks.suites import sorter as sorter_suite
from benchmarks.suites.common import msr_graphs
from model.graphjson import validate_graph


# -- generators ---------------------------------------------------------------
def _assert_valid(graph):
    validate_graph(graph, graph.name)  # ids exist, one driver per net, acyclic
    ids = set(graph.node_ids)
    assert len(ids) == len(graph.nodes)
    assert all(e.src in ids and e.dst in ids for e in graph.edges)
    assert len(graph.topological_order()) == len(graph.nodes)
    assert all(0 < e.bandwidth <= 1 for e in graph.edges)
    assert len({(e.src, e.dst) for e in graph.edges}) == len(graph.edges)


@pytest.mark.parametrize("make", [
    lambda seed: random_dag(400, 900, seed=seed),
    lambda seed: layered_dag(6, 10, fanin=3, seed=seed),
    lambda seed: reconvergent_dag(8, branches=3, max_branch_length=4, seed=seed),
])
def test_generators_are_deterministic_and_valid(make):
    first, again, other = make(7), make(7), make(8)
    assert first == again
    assert first != other
    _assert_valid(first)
    _assert_valid(other)


@pytest.mark.parametrize("n_nodes,n_edges,components", [(1, 0, 1), (10, 9, 1), (300, 299, 1),
                                                        (1000, 2000, None), (5000, 12000, 4)])
def test_random_dag_sizes(n_nodes, n_edges, components):
    g = random_dag(n_nodes, n_edges, seed=1, components=components)
    assert (len(g.nodes), len(g.edges)) == (n_nodes, n_edges)
    _assert_valid(g)


def test_random_dag_features():
    g = random_dag(2000, 4000, seed=0, components=5)
    weak = nx.number_weakly_connected_components(g.to_networkx())
    assert weak == g.attrs["components"] == 5
    assert any(net.fanout >= 2 for net in g.nets)
    assert any(e.virtual_channel for e in g.edges)
    assert {n.unit for n in g.nodes} == {"pcu", "pmu"}
    assert g.topological_order() != g.node_ids  # file order is not a topological order
    assert {n.unit for n in random_dag(50, 100, units="any").nodes} == {"any"}


def test_random_dag_rejects_too_few_edges():
    with pytest.raises(ValueError, match="at least"):
        random_dag(100, 10, seed=0, components=1)


def test_layered_and_reconvergent_shapes():
    g = layered_dag(5, 8, fanin=2, seed=2)
    assert (len(g.nodes), len(g.edges)) == (40, 4 * 8 * 2)
    assert all(len(g.predecessors(f"L{k}_{i}")) == 2 for k in range(1, 5) for i in range(8))
    r = reconvergent_dag(10, branches=2, max_branch_length=4, seed=5)
    assert all(len(r.predecessors(f"f{d}")) == 2 for d in range(1, 11))
    assert any(net.fanout == 2 for net in r.nets)
    branch_lengths = {sum(n.id.startswith(f"d{d}_b{b}_") for n in r.nodes)
                      for d in range(10) for b in range(2)}
    assert len(branch_lengths) > 1  # unequal paths reconverge


def test_generator_doctests():
    for module in (generators, tables, importlib.import_module("benchmarks.suites.common")):
        assert doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE).failed == 0


# -- tables and registry --------------------------------------------------------
def test_write_tables_writes_csv_and_markdown(tmp_path):
    columns = (Column("graph", "graph"), Column("sec", "time (s)", "{:.2f}"),
               Column("ok", "ok"))
    rows = [{"graph": "a|b", "sec": 1.234, "ok": True}, {"graph": "c"}]
    csv_path, md_path, text = tables.write_tables(tmp_path / "out", "demo", "Demo", columns, rows,
                                                  notes=["a note"])
    with open(csv_path, newline="") as f:
        assert list(csv.reader(f)) == [["graph", "sec", "ok"], ["a|b", "1.234", "True"],
                                       ["c", "", ""]]
    assert md_path.read_text() == text
    assert "| graph | time (s) | ok |" in text and "| a\\|b | 1.23 | yes |" in text
    assert "| c | — | — |" in text and "Machine: " in text and "cores" in text
    assert "- a note" in text


def test_registry_lists_suites():
    assert {"sorter", "pipeline"} <= set(suites())
    with pytest.raises(KeyError, match="unknown suite"):
        get_suite("nope")
    assert main(["--suite", "nope"]) == 2
    assert main(["--list"]) == 0


# -- running ------------------------------------------------------------------------
def test_tiny_sorter_run_writes_both_files(tmp_path):
    entries = sorter_suite.entries_for(((200, 400), (300, 700)), reference_max_nodes=200,
                                       reference_limit=30)
    rows, csv_path, md_path = run_suite(get_suite("sorter"), out_dir=tmp_path, entries=entries,
                                        log=None)
    assert csv_path.exists() and md_path.exists()
    assert [r["status"] for r in rows] == ["ok"] * 3
    assert rows[0]["check"] == "permutation, FIG. 9 order"
    assert all(r["check"].startswith("permutation") for r in rows)
    assert rows[1]["same_order"] is True and rows[1]["speedup"] > 0
    assert rows[2].get("reference_s") is None
    assert rows[2]["nodes"] == 300 and rows[2]["peak_mib"] > 0
    assert "speed-up vs reference" in md_path.read_text()
    assert rows[1]["sort_vs_networkx"] > 0 and rows[1]["cold_vs_networkx"] > 0
    assert "sort / networkx" in md_path.read_text()


def test_sorter_row_against_a_baseline_checkout(monkeypatch):
    monkeypatch.setenv("RDAMAP_BASELINE", str(REPO_ROOT))  # this checkout as its own baseline
    row = sorter_suite.sort_random(300, 700)
    assert row["status"] == "ok" and "note" not in row
    assert row["same_order_base"] is True
    assert row["base_sort_s"] > 0 and row["base_vs_networkx"] > 0 and row["base_speedup"] > 0


def test_isolated_entry_failures_become_rows():
    error = run_isolated(Entry("bad", "benchmarks.worker:no_such_function", fixed={"graph": "x"}))
    assert error["status"] == "error" and "no_such_function" in error["note"]
    assert error["graph"] == "x"
    slow = run_isolated(Entry("slow", "benchmarks.suites.sorter:sort_random",
                              {"n_nodes": 3_000_000, "n_edges": 6_000_000}, timeout=1.0))
    assert slow["status"] == "timeout"
    assert run_isolated(Entry("s", "", skip="why"))["status"] == "skipped"


def test_pipeline_suite_skips_without_real_graphs(tmp_path, monkeypatch):
    monkeypatch.setenv("RDAMAP_GRAPHS", str(tmp_path / "absent"))
    entries = get_suite("pipeline").entries(True)
    assert len(entries) == 1 and "not available" in entries[0].skip
    assert run_isolated(entries[0])["status"] == "skipped"


def test_pipeline_row_on_smallest_real_graph():
    graphs = msr_graphs()
    if not graphs:
        pytest.skip("real graphs not available (shared msr-dnn folder is absent; CI has it)")
    name, path, nodes, edges = graphs[0]
    row = pipeline_suite.map_file(str(path), "plasticine")
    assert row["status"] == "mapped" and row["sections"] >= row["lower_bound"] >= 1
    assert (row["nodes"], row["edges"]) == (nodes, edges)
    assert row["total_s"] >= 0 and set(f"{k}_s" for k in pipeline_suite.STAGE_KINDS) <= set(row)
