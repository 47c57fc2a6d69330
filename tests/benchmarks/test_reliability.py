"""The reliability suite's bad-input rows: exit 2 with a message, never a traceback.

Runs a few cases through the suite's entry function (the real CLI in a subprocess); no
timing is asserted.
"""

import pytest

from benchmarks.registry import get_suite
from benchmarks.suites.reliability import bad_input, bad_input_cases, strip_timing, summarize


@pytest.mark.parametrize("case", ["graph_attrs_string.json", "hw_se_one_tile.json",
                                  "--time-limit inf"])
def test_bad_input_row_is_exit_2_with_a_fix(case):
    row = bad_input(case)
    assert row["exit"] == 2, row
    assert row["fix"] and not row["traceback"], row
    assert row["message"].startswith("error: "), row


def test_every_corpus_file_and_cli_case_is_a_row():
    cases = bad_input_cases()
    assert "graph_empty.json" in cases and "--out ''" in cases and "--hardware a directory" in cases
    names = [e.name for e in get_suite("reliability").entries(False)]
    assert sum(name.startswith("bad input: ") for name in names) == len(cases)


def test_timing_keys_are_removed_at_any_depth():
    assert strip_timing({"seconds": 1, "x": [{"time_limit": 2, "y": 3}]}) == {"x": [{"y": 3}]}


def test_summary_counts_unexpected_exits():
    rows = [{"part": "1 bad input", "case": "a", "exit": "1", "expected": "2", "fix": "False",
             "traceback": "True"}]
    line = summarize(rows)[2]
    assert "0 of 1" in line and "tracebacks: 1" in line and "a (exit 1)" in line
