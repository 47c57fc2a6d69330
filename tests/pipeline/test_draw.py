"""python -m pipeline.draw: the pictures of a mapping written earlier."""

import json

from pipeline.draw import main as draw_main
from pipeline.pictures import picture_names
from pipeline.run import main as run_main


def test_draws_every_section_of_a_run_that_drew_none(tmp_path, capsys):
    out = tmp_path / "out"
    assert run_main(["examples/fig9.json", "--out", str(out), "--no-pictures", "--quiet",
                     "--time-limit", "20"]) == 0
    assert not list(out.glob("*.svg"))
    sections = json.loads((out / "mapping.json").read_text())["sections"]
    assert draw_main([str(out / "mapping.json"), "--picture-format", "png"]) == 0
    expected = {name for s in sections for name in picture_names(s["id"], "png")}
    assert expected and expected <= {p.name for p in out.iterdir()}
    assert "drew" in capsys.readouterr().out


def test_bad_inputs_exit_2_and_a_failed_mapping_exits_3(tmp_path, capsys):
    assert draw_main([str(tmp_path / "missing.json")]) == 2
    mapping = {"version": 1, "graph": "g", "hardware": "my-chip", "status": "mapped"}
    (tmp_path / "m.json").write_text(json.dumps(mapping))
    assert draw_main([str(tmp_path / "m.json")]) == 2
    assert "--hardware FILE" in capsys.readouterr().err
    (tmp_path / "f.json").write_text(json.dumps(mapping | {"hardware": "tiny",
                                                           "status": "failed"}))
    assert draw_main([str(tmp_path / "f.json")]) == 3
    assert "nothing to draw" in capsys.readouterr().err


def test_draws_a_cgra_mapping_as_the_run_would(tmp_path):
    """Every target the run draws, pipeline.draw draws too (both read the target table)."""
    from hardware import load_hardware
    from model.mapping import write_mapping
    from pipeline.cgra import map_cgra
    from pipeline.options import RunOptions
    from tests.pipeline.test_cgra_pass import loop
    mapping = map_cgra(loop(), load_hardware("cgra4x4"), RunOptions(time_limit=5))
    write_mapping(mapping, tmp_path / "mapping.json")
    assert draw_main([str(tmp_path / "mapping.json")]) == 0
    assert (tmp_path / "pes.svg").stat().st_size > 1000
