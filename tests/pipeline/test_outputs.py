"""Outputs a user can trust: atomic files with normal modes, checked directories, no stale files."""

import os
import stat

import pytest

from hardware import InputError
from model.mapping import Mapping, read_mapping, write_mapping
from pipeline.outputs import (prepare_export_dir, prepare_out_dir, remove_stale_outputs,
                              save_figure, stale_outputs, write_bytes_atomic, write_text_atomic)
from pipeline.report import write_report


@pytest.fixture
def plain_umask():
    """Umask 022 for the test (what a user's shell usually has), restored afterwards."""
    old = os.umask(0o022)
    yield
    os.umask(old)


def _mode(path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


def test_atomic_write_leaves_no_temporary_and_gives_0644(tmp_path, plain_umask):
    write_text_atomic(tmp_path / "a.md", "hello\n")
    write_bytes_atomic(tmp_path / "b.bin", b"\x00\x01")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.md", "b.bin"]
    assert (tmp_path / "a.md").read_text() == "hello\n"
    assert (tmp_path / "b.bin").read_bytes() == b"\x00\x01"
    assert _mode(tmp_path / "a.md") == _mode(tmp_path / "b.bin") == 0o644


def test_mode_follows_the_umask(tmp_path):
    old = os.umask(0o077)
    try:
        write_text_atomic(tmp_path / "private.md", "x")
    finally:
        os.umask(old)
    assert _mode(tmp_path / "private.md") == 0o600


def test_mapping_and_report_are_written_0644(tmp_path, plain_umask):
    """mapping.json used to end up 0600 (tempfile's mode); now like any file."""
    write_mapping(Mapping(graph="g", hardware="tiny"), tmp_path / "mapping.json")
    write_report("# r\n", tmp_path / "report.md")
    assert _mode(tmp_path / "mapping.json") == _mode(tmp_path / "report.md") == 0o644
    assert read_mapping(tmp_path / "mapping.json").graph == "g"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["mapping.json", "report.md"]


class _Boom(Exception):
    pass


def test_failure_during_write_keeps_the_old_file(tmp_path, monkeypatch):
    target = tmp_path / "mapping.json"
    target.write_text("old\n")

    def fail_fsync(fd):
        raise _Boom("disk full")            # after part of the data went to the temporary

    monkeypatch.setattr(os, "fsync", fail_fsync)
    with pytest.raises(_Boom):
        write_text_atomic(target, "new and much longer\n")
    assert target.read_text() == "old\n"
    assert [p.name for p in tmp_path.iterdir()] == ["mapping.json"]


def test_a_mapping_json_cannot_hold_fails_before_writing(tmp_path):
    target = tmp_path / "mapping.json"
    write_mapping(Mapping(graph="g", hardware="tiny"), target)
    before = target.read_bytes()
    with pytest.raises(TypeError):
        write_mapping(Mapping(graph="g", hardware="tiny", metrics={"x": object()}), target)
    assert target.read_bytes() == before


def test_save_figure_is_atomic(tmp_path, plain_umask):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots()
    ax.plot([0, 1], [0, 1])
    save_figure(fig, tmp_path / "p.svg")
    save_figure(fig, tmp_path / "p.png")
    plt.close(fig)
    assert (tmp_path / "p.svg").read_text().lstrip().startswith("<?xml")
    assert (tmp_path / "p.png").read_bytes().startswith(b"\x89PNG")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["p.png", "p.svg"]
    assert _mode(tmp_path / "p.svg") == 0o644


# --- prepare_out_dir / prepare_export_dir -----------------------------------------------------
def test_prepare_out_dir_creates_nested_directories(tmp_path):
    out = prepare_out_dir(tmp_path / "a" / "b")
    assert out.is_dir() and list(out.iterdir()) == []     # the write probe is cleaned up


@pytest.mark.parametrize("empty", ["", "   ", None])
def test_prepare_out_dir_refuses_empty(empty):
    with pytest.raises(InputError) as err:
        prepare_out_dir(empty)
    assert "--out" in str(err.value) and "empty" in str(err.value)


def test_prepare_out_dir_refuses_a_file(tmp_path):
    (tmp_path / "f").write_text("mine")
    with pytest.raises(InputError) as err:
        prepare_out_dir(tmp_path / "f")
    assert "is a file" in str(err.value) and "--out" in str(err.value)
    assert (tmp_path / "f").read_text() == "mine"


def test_prepare_out_dir_refuses_a_place_under_a_file(tmp_path):
    """A file on the way cannot become a directory, whoever runs the test (root too)."""
    (tmp_path / "f").write_text("mine")
    with pytest.raises(InputError) as err:
        prepare_out_dir(tmp_path / "f" / "out")
    assert "cannot be created" in str(err.value)


@pytest.mark.skipif(os.name != "posix" or os.geteuid() == 0,
                    reason="root writes into read-only directories: permissions not enforced")
def test_prepare_out_dir_refuses_an_unwritable_directory(tmp_path):
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o500)
    try:
        with pytest.raises(InputError) as err:
            prepare_out_dir(locked)
        assert "cannot be written" in str(err.value)
        with pytest.raises(InputError) as err:
            prepare_out_dir(locked / "sub")
        assert "cannot be created" in str(err.value)
    finally:
        locked.chmod(0o700)


def test_prepare_export_dir_names_its_option(tmp_path):
    assert prepare_export_dir(None) is None
    assert prepare_export_dir(tmp_path / "models").is_dir()
    (tmp_path / "f").write_text("")
    with pytest.raises(InputError) as err:
        prepare_export_dir(tmp_path / "f")
    assert "--export-models" in str(err.value)


# --- stale outputs ------------------------------------------------------------------------------
def test_stale_section7_pictures_go_but_user_files_stay(tmp_path):
    ours_before = ["mapping.json", "report.md", "tiles.svg", ".report.md.tmp"]
    ours_before += [f"section{k}{kind}.svg" for k in (0, 1, 2, 7) for kind in ("", "_nets",
                                                                                  "_congestion")]
    users = ["notes.txt", "section7_notes.svg", "section7.pdf", "mapping.json.bak", "my.png"]
    for name in ours_before + users:
        (tmp_path / name).write_text("x")
    (tmp_path / "section9.svg").mkdir()                     # a directory is never removed
    written = ["mapping.json", "report.md"] + [f"section{k}{kind}.svg" for k in (0, 1, 2)
                                               for kind in ("", "_nets", "_congestion")]
    stale = [p.name for p in stale_outputs(tmp_path, written)]
    assert stale == sorted([".report.md.tmp", "section7.svg", "section7_congestion.svg",
                            "section7_nets.svg", "tiles.svg"])
    removed = remove_stale_outputs(tmp_path, [tmp_path / n for n in written])
    assert sorted(p.name for p in removed) == stale
    left = {p.name for p in tmp_path.iterdir()}
    assert left == set(written) | set(users) | {"section9.svg"}


def test_stale_outputs_of_a_missing_directory_is_empty(tmp_path):
    assert stale_outputs(tmp_path / "nothing", []) == []
