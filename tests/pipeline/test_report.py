"""The report says what mapping.json says: whole bytes, named times, the checker's wirelength."""

from pathlib import Path

import pytest

from model.mapping import Mapping
from pipeline.report import render_report, section_wirelength

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "fig9.json"


def _stage(stage, section=None, objective=None, **extra):
    return {"stage": stage, "section": section, "method": "m", "backend": None,
            "status": "FEASIBLE", "objective": objective, "bound": None, "time": 0.5} | extra


def rdu_mapping() -> Mapping:
    """Two sections, the second cut again (kept: section 0), fractional MSR-style bytes."""
    sections = [{"id": k, "nodes": [f"n{k}"], "category": None, "pcu": 1, "pmu": 0,
                 "scale": {}, "buffer_units": 0, "bank_units": 0, "reused": False}
                for k in (0, 1)]
    stages = [_stage("sections", objective=51397649.375, sections=2, lower_bound=2,
                     greedy_sections=2, greedy_traffic=557607841.5, recut_from=None),
              _stage("buffers", 0), _stage("buffers", 1),
              _stage("sections", objective=1234.5, sections=1, lower_bound=2,
                     greedy_sections=1, greedy_traffic=2000.25, recut_from=1),
              _stage("buffers", 1),
              _stage("routing", 0, objective=7, iterations=0),
              _stage("routing", 1, objective=3, iterations=0)]
    return Mapping(graph="g", hardware="plasticine", status="mapped", sections=sections,
                   stages=stages, metrics={"sections": 2, "wirelength": 10,
                                           "dram_bytes": 284412841.25, "seconds": 1.042})


def test_dram_bytes_are_whole_bytes():
    text = render_report(rdu_mapping())
    assert "| dram bytes | 284,412,841 | bytes/sample |" in text
    assert "284412841.25" not in text and "51397649.375" not in text
    assert "| section model | FEASIBLE |" not in text                 # stage rows still there:
    assert "| sections | - | m | FEASIBLE | 51,397,649 |" in text      # ... in whole bytes
    assert "Final cut: 2 sections, 284,412,841 DRAM bytes" in text


def test_wall_time_is_the_command_lines_number_and_named_apart():
    text = render_report(rdu_mapping(), elapsed=1.834)
    assert "| wall time of the whole run | 1.83 | s |" in text
    assert f"in {1.834:.2f} s" .split()[-2] in text              # the CLI's own format
    assert "| seconds of the mapping passes | 1.042 | s |" in text
    plain = render_report(rdu_mapping())
    assert "| seconds | 1.042 | s |" in plain and "wall time" not in plain


def test_recut_rows_count_the_kept_sections():
    text = render_report(rdu_mapping())
    assert "| 1 (re-cut from 1) | m | 2 | 2 | 2 | 1,235 | 2,000 |" in text
    assert "| 1 | 1 | m |" in text                         # buffers row of cut 1, section 1


def test_section_wirelength_adds_up_to_the_metric():
    m = rdu_mapping()
    assert [section_wirelength(m, k) for k in (0, 1, 2)] == [7, 3, None]
    assert sum(section_wirelength(m, s["id"]) for s in m.sections) == m.metrics["wirelength"]
    assert "| 0 | - | 1 | 1 | 0 | 0 | 1 | 7 | 0 | no |" in render_report(m)


def test_pictures_note_only_when_sections_are_missing():
    m = rdu_mapping()
    all_drawn = [f"section{k}{kind}.svg" for k in (0, 1) for kind in ("", "_nets", "_congestion")]
    assert "were drawn" not in render_report(m, all_drawn)
    assert "Pictures of 1 of 2 sections were drawn" in render_report(m, all_drawn[:3])
    none_drawn = render_report(m, [])       # the time limit came before the first picture
    assert "Pictures of 0 of 2 sections" in none_drawn and "python -m pipeline.draw" in none_drawn
    assert "## Pictures" not in render_report(m, None)       # --no-pictures: not asked for


def test_interrupted_status_is_named():
    m = Mapping(graph="g", hardware="tiny", status="interrupted", diagnosis="stopped by Ctrl-C")
    assert "**Status: interrupted.**" in render_report(m)


def test_a_real_run_agrees_with_its_mapping(tmp_path):
    """fig9 end to end: report, pictures' captions and mapping.json give one wirelength."""
    matplotlib = pytest.importorskip("matplotlib")
    from hardware import build_fabric, load_hardware
    from model.importers import load_graph
    from pipeline.flow import map_graph
    from pipeline.options import RunOptions
    from pipeline.pictures import draw_mapping, link_loads

    spec = load_hardware("plasticine")
    mapping = map_graph(load_graph(EXAMPLE), spec, RunOptions(time_limit=2))
    total = sum(section_wirelength(mapping, s["id"]) for s in mapping.sections)
    assert total == mapping.metrics["wirelength"]
    assert sum(sum(link_loads(mapping, s["id"]).values()) for s in mapping.sections) == total
    matplotlib.rcParams["svg.fonttype"] = "none"      # keep captions as text to read them
    try:
        names = draw_mapping(mapping, build_fabric(spec), tmp_path)
    finally:
        matplotlib.rcParams["svg.fonttype"] = "path"
    for name in ("section0.svg", "section0_nets.svg"):
        assert f"wirelength {total} links" in (tmp_path / name).read_text()
    text = render_report(mapping, names, elapsed=2.0)
    assert f"| wirelength | {total} |" in text and "were drawn" not in text
