"""Benchmark entries on a Dask cluster: each still in a fresh process, rows as a local run."""

from __future__ import annotations

import logging

from distributed import Client, LocalCluster

from benchmarks.registry import get_suite
from benchmarks.run import run_suite

#: Row keys that are measurements of time or memory, not content.
MEASURED = ("_s", "peak_mib", "nodes_per_s", "speedup", "vs_networkx")


def _content(rows):
    return [{k: v for k, v in row.items() if not k.endswith(MEASURED)} for row in rows]


def test_entries_on_cluster_workers_give_the_rows_of_a_local_run(tmp_path):
    suite = get_suite("sorter")
    entries = suite.entries(True)[:3]
    local, _, _ = run_suite(suite, entries=entries, out_dir=tmp_path / "local", log=None)
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                      dashboard_address=None, silence_logs=logging.ERROR,
                      scheduler_kwargs={"dashboard": False,
                                        "dashboard_address": ":0"}) as cluster, \
            Client(cluster, set_as_default=False) as client:
        remote, _, md = run_suite(suite, entries=entries, out_dir=tmp_path / "remote", log=None,
                                  client=client)
    assert _content(remote) == _content(local)
    assert all(row.get("status") != "error" for row in remote) and md.exists()
