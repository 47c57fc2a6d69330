"""The reliability suite's bad-input rows: exit 2 with a message, never a traceback.

Runs a few cases through the suite's entry function (the real CLI in a subprocess); no
timing is asserted.
"""

import pytest

from benchmarks.registry import get_suite
from benchmarks.suites.reliability import (bad_input, bad_input_cases, output_check, strip_timing,
                                           summarize)


@pytest.mark.parametrize("case", ["graph_attrs_string.json", "hw_se_one_tile.json",
                                  "--time-limit inf", "graph a named pipe",
                                  "morpher_missing_node_close.xml"])
def test_bad_input_row_is_exit_2_with_a_fix(case):
    row = bad_input(case)
    assert row["exit"] == 2, row
    assert row["fix"] and not row["traceback"], row
    assert row["message"].startswith("error: "), row


def test_every_corpus_file_and_cli_case_is_a_row():
    cases = bad_input_cases()
    assert "graph_empty.json" in cases and "--out ''" in cases and "--hardware a directory" in cases
    assert "onnx_zero_dim.onnx" in cases and "graph a named pipe" in cases
    names = [e.name for e in get_suite("reliability").entries(False)]
    assert sum(name.startswith("bad input: ") for name in names) == len(cases)


def test_timing_keys_are_removed_at_any_depth():
    assert strip_timing({"seconds": 1, "x": [{"time_limit": 2, "y": 3}]}) == {"x": [{"y": 3}]}


def test_summary_counts_unexpected_exits():
    rows = [{"part": "1 bad input", "case": "a", "exit": "1", "expected": "2", "fix": "False",
             "traceback": "True"}]
    line = summarize(rows)[2]
    assert "0 of 1" in line and "tracebacks: 1" in line and "a (exit 1)" in line


def test_an_output_row_judges_the_files_written():
    row = output_check("ids with | < > & $ \\ `, a graph name with a control character")
    assert row["exit"] == 0 and not row["traceback"], row
    assert "SVG parse as XML" in row["message"] and "report tables intact: yes" in row["message"]
    count, _, total = row["message"].partition(" SVG")[0].partition(" of ")
    assert count == total and int(total) > 0, row
