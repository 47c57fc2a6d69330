"""Live progress: plain stamped lines off a terminal, never silent for long, the reason of
every feedback round (re-cuts) said, sections numbered from 0 as the files are."""

from __future__ import annotations

import time
from types import SimpleNamespace

from pipeline import progress
from pipeline.feedback import ErrorCode, ErrorHandlingData, MappingError, run_levels
from pipeline.progress import Console
from pipeline.run import main


def test_plain_lines_with_the_elapsed_time_when_not_a_terminal(capsys):
    console = Console(quiet=False, verbose=False)
    console.say("hello")
    console.say("closing line", stamp=False)
    console.say("detail", detail=True)
    err = capsys.readouterr().err.splitlines()
    assert err[0].startswith("[") and err[0].endswith("s] hello")
    assert err[1:] == ["closing line"]


def test_a_silent_stretch_is_broken_by_a_line_saying_what_runs(capsys, monkeypatch):
    monkeypatch.setattr(progress, "QUIET_SECONDS", 0.3)
    console = Console(quiet=False, verbose=False, time_limit=60)
    with console.watch():
        console.say("placing section 3")
        time.sleep(1.2)
    lines = capsys.readouterr().err.splitlines()
    beats = [line for line in lines if "still working: placing section 3" in line]
    assert beats and "of 60 s budget used" in beats[0]


def test_quiet_says_nothing_even_when_silent_for_long(capsys, monkeypatch):
    monkeypatch.setattr(progress, "QUIET_SECONDS", 0.1)
    with Console(quiet=True, verbose=False).watch():
        time.sleep(0.4)
    assert capsys.readouterr().err == ""


class _Cut:
    name, rounds = "cut", 0

    def run(self, state):
        pass

    def fix(self, state, data):
        return "re-cut from section 1: it needs more PMUs than the chip has"


class _Place:
    name = "place-route"

    def __init__(self):
        self.failed = False

    def run(self, state):
        if not self.failed:
            self.failed = True
            raise MappingError(ErrorHandlingData(ErrorCode.INSUFFICIENT_RESOURCES, "place-route",
                                                 "section 1 needs 70 PMUs, the chip has 64"))


def test_every_feedback_round_says_its_reason():
    said = []
    state = SimpleNamespace(trace=[], say=said.append)
    run_levels(state, [_Cut(), _Place()], max_iterations=3)
    rounds = [line for line in said if line.startswith("feedback round")]
    assert rounds == ["feedback round 1: level place-route failed (INSUFFICIENT_RESOURCES: "
                      "section 1 needs 70 PMUs, the chip has 64); the cut level changes: "
                      "re-cut from section 1: it needs more PMUs than the chip has"]
    assert said.count("level cut: dividing the graph into parts that fit the hardware") == 2


def test_sections_are_numbered_from_0_as_the_files_are(tmp_path, capsys):
    assert main(["examples/fig9.json", "--out", str(tmp_path), "--time-limit", "20",
                 "--no-pictures", "--workers", "1"]) == 0
    err = capsys.readouterr().err
    assert "section 0 (of 0-0) placed, routed and checked" in err and "section 1/1" not in err
    assert "mapped fig9 (18 nodes, 17 edges) onto plasticine" in err
    assert "a sample is one pass of the whole graph" in err
    assert f"open {tmp_path.resolve() / 'report.html'}" in err
