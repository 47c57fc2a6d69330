"""No number reaches a user without its unit: every metric a run of each target writes has a
unit and a one-line meaning (pipeline/metric_notes.py), shown in report.md."""

from __future__ import annotations

from pathlib import Path

import pytest

from hardware import load_hardware
from model.importers import load_graph
from pipeline.flow import map_graph
from pipeline.metric_notes import METRICS
from pipeline.options import RunOptions
from pipeline.report import render_report

FIG9 = Path(__file__).resolve().parents[2] / "examples" / "fig9.json"


@pytest.mark.parametrize("hardware", ["plasticine", "se16", "cgra4x4"])
def test_every_metric_of_every_target_has_a_unit_and_a_meaning(hardware):
    mapping = map_graph(load_graph(str(FIG9)), load_hardware(hardware),
                        RunOptions(time_limit=20, workers=1))
    assert mapping.status == "mapped"
    missing = [k for k in mapping.metrics if k not in METRICS]
    assert missing == []
    text = render_report(mapping)
    assert "| metric | value | unit | meaning |" in text and "## Result" in text
    for key, (unit, meaning) in METRICS.items():
        if key in mapping.metrics and key != "seconds":
            assert f"| {unit} | {meaning} |" in text
