"""Outputs a user can trust: checked directories, atomic files, no stale leftovers.

A run writes into ``--out`` (mapping.json, report.md, pictures) and, with
``--export-models DIR``, model files into DIR. This module makes sure that

* a bad directory is refused *before* any work (:func:`prepare_out_dir`,
  :func:`prepare_export_dir`): an empty name, an existing file, a place that
  cannot be created or written, each as an :class:`hardware.InputError`
  (exit code 2 on the command line) naming the option and the fix;
* every file appears whole or not at all (:func:`write_text_atomic`,
  :func:`write_bytes_atomic`, :func:`save_figure`): temporary file in the same
  directory, fsync, rename; the final file gets the mode a plain ``open()``
  would give (0644 under umask 022);
* the directory describes *this* run only (:func:`remove_stale_outputs`): files
  an earlier run wrote there and this run did not (``section7.svg`` when this
  run has three sections, ``tiles.svg`` after an RDU run) are removed. Only
  names the mapper itself writes (:data:`OUTPUT_NAME`) are ever touched; a
  user's own files in the directory are left alone.

Caveat: ``--export-models DIR`` is checked but never cleaned: its model files
are named by the models a run builds, and a directory of exported models from
several runs is a legitimate thing to keep.
"""

from __future__ import annotations

import html
import io
import json
import os
import time
import re
import tempfile
from collections.abc import Iterable
from pathlib import Path

from hardware import InputError
from model.files import TEMP_MARK, write_bytes_atomic, write_text_atomic

__all__ = ["earlier_run", "prepare_out_dir", "prepare_export_dir", "write_text_atomic",
           "write_bytes_atomic",
           "save_figure", "add_svg_titles", "stale_outputs", "remove_stale_outputs", "OUTPUT_NAME"]

#: Every file name the mapper writes into ``--out``, and nothing else:
#: mapping.json (model.mapping), report.md (pipeline.report), report.html
#: (pipeline.html_report), per RDU section the
#: placement, nets and congestion pictures and the performance picture
#: (pipeline.pictures), the Streaming Engine's tiles picture and the CGRA's PEs picture,
#: and temporary files of a killed run: ours (``.<name>.rdamap-tmp*``) and those of
#: earlier versions (``.mapping.json.<random>``, ``.report.md.tmp``, ``tiles.tmp.svg``).
OUTPUT_NAME = re.compile(
    r"mapping\.json|report\.md|report\.html"
    r"|section\d+(_nets|_congestion)?\.(svg|png)"
    r"|(tiles|pes|performance)\.(svg|png)"
    rf"|\.(mapping\.json|report\.md|report\.html|section\d+(_nets|_congestion)?\.(svg|png)"
    r"|(tiles|pes|performance)\.(svg|png))"
    rf"{re.escape(TEMP_MARK)}\w*"
    r"|\.mapping\.json\.\w{8}|\.report\.md\.tmp|tiles\.tmp\.(svg|png)")


def prepare_out_dir(path: str | os.PathLike | None, option: str = "--out") -> Path:
    """Check and create the output directory before any work is done.

    Parameters
    ----------
    path : str or PathLike
        The directory the user named.
    option : str
        The command-line option it came from, named in the error.

    Returns
    -------
    Path
        The directory, created if needed, known to be writable.

    Raises
    ------
    hardware.InputError
        ``path`` is empty, is an existing file (or has a file on its way), or
        cannot be created or written.

    Examples
    --------
    >>> import tempfile, os
    >>> prepare_out_dir(os.path.join(tempfile.mkdtemp(), "a", "b")).is_dir()
    True
    >>> prepare_out_dir("")
    Traceback (most recent call last):
    ...
    hardware.errors.InputError: command line: --out: is empty (fix: name a directory, e.g.
    --out out)
    """
    if path is None or not str(path).strip():
        raise InputError("command line", option, "is empty",
                         f"name a directory, e.g. {option} out")
    directory = Path(path)
    if directory.exists() and not directory.is_dir():
        raise InputError("command line", option, f'"{directory}" is a file, not a directory',
                         "name a directory, or move the file away")
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise InputError("command line", option,
                         f'"{directory}" cannot be created ({exc.strerror or exc})',
                         "name a directory you may create, or create it first") from None
    _probe_writable(directory, option)
    return directory


def earlier_run(out_dir: str | os.PathLike) -> str | None:
    """Words for the earlier run whose outputs ``out_dir`` holds (its mapping.json: graph,
    hardware, status and when it was written), or ``None`` when it holds none.

    >>> import tempfile, os, json
    >>> d = tempfile.mkdtemp(); earlier_run(d) is None
    True
    >>> with open(os.path.join(d, "mapping.json"), "w") as f:
    ...     json.dump({"graph": "g", "hardware": "tiny", "status": "mapped"}, f)
    >>> earlier_run(d).startswith("an earlier run (g on tiny, mapped, written ")
    True
    """
    path = Path(out_dir) / "mapping.json"
    if not path.is_file():          # none, or not ours (a named pipe would block a read)
        return None
    try:
        when = time.strftime("%Y-%m-%d %H:%M", time.localtime(path.stat().st_mtime))
        with open(path, "rb") as f:
            head = json.loads(f.read(_HEAD_BYTES)) if path.stat().st_size <= _HEAD_BYTES else {}
    except (OSError, ValueError):
        return "an earlier run's mapping.json"
    if not isinstance(head, dict) or not head:
        return f"an earlier run (written {when})"
    return (f"an earlier run ({head.get('graph')} on {head.get('hardware')}, "
            f"{head.get('status')}, written {when})")


#: Largest mapping.json :func:`earlier_run` reads for its names (a larger one is only dated).
_HEAD_BYTES = 16 * 2**20


def prepare_export_dir(path: str | os.PathLike | None) -> Path | None:
    """:func:`prepare_out_dir` for ``--export-models DIR``; ``None`` when not asked for."""
    if path is None:
        return None
    return prepare_out_dir(path, option="--export-models")


def _probe_writable(directory: Path, option: str) -> None:
    """Create and delete a file: the only test that sees read-only mounts, ACLs and quotas."""
    try:
        fd, probe = tempfile.mkstemp(prefix=f".probe{TEMP_MARK}", dir=directory)
        os.close(fd)
        os.unlink(probe)
    except OSError as exc:
        raise InputError("command line", option,
                         f'"{directory}" cannot be written ({exc.strerror or exc})',
                         "name a directory you may write to") from None


def save_figure(figure, path: str | os.PathLike, tooltips: dict[str, str] | None = None) -> None:
    """Save a matplotlib figure to ``path`` atomically (format from the suffix).

    The picture is rendered in memory, then written like every other output
    (temporary file, fsync, rename), so a failure while drawing leaves the old
    picture in place. The caller still owns (and closes) the figure. In an SVG, each
    artist whose gid is a key of ``tooltips`` gets its text as a ``<title>`` (what a
    browser shows on hover: full names where a label had to be short).
    """
    buffer = io.BytesIO()
    fmt = Path(path).suffix.lstrip(".") or "svg"
    figure.savefig(buffer, format=fmt)
    data = buffer.getvalue()
    if tooltips and fmt == "svg":
        data = add_svg_titles(data, tooltips)
    write_bytes_atomic(path, data)


#: Characters XML 1.0 cannot hold even escaped.
_NOT_XML = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f]")


def add_svg_titles(svg: bytes, tooltips: dict[str, str]) -> bytes:
    """``svg`` with a ``<title>`` first in every group whose id is a key of ``tooltips``.

    >>> add_svg_titles(b'<g id="t0">\\n<path/>', {"t0": "a<b"})
    b'<g id="t0"><title>a&lt;b</title>\\n<path/>'
    """
    def titled(match: re.Match) -> bytes:
        text = tooltips.get(match.group(1).decode())
        if text is None:
            return match.group(0)
        safe = html.escape(_NOT_XML.sub("?", text), quote=False)
        return match.group(0) + f"<title>{safe}</title>".encode()
    return re.sub(rb'<g id="([^"]+)">', titled, svg)


def stale_outputs(out_dir: str | os.PathLike, written: Iterable[str | os.PathLike]) -> list[Path]:
    """Files in ``out_dir`` the mapper writes that this run did not write.

    Parameters
    ----------
    out_dir : str or PathLike
        The run's output directory.
    written : iterable of str or PathLike
        What this run wrote there (names or paths; only the name counts).

    Returns
    -------
    list of Path
        Sorted; only names matching :data:`OUTPUT_NAME`, only regular files (or
        links) directly in ``out_dir``.

    Examples
    --------
    >>> import tempfile, os
    >>> d = tempfile.mkdtemp()
    >>> for name in ("mapping.json", "section0.svg", "section7.svg", "notes.txt"):
    ...     open(os.path.join(d, name), "w").close()
    >>> [p.name for p in stale_outputs(d, ["mapping.json", "section0.svg"])]
    ['section7.svg']
    """
    keep = {Path(name).name for name in written}
    out_dir = Path(out_dir)
    if not out_dir.is_dir():
        return []
    return sorted(p for p in out_dir.iterdir()
                  if p.name not in keep and OUTPUT_NAME.fullmatch(p.name)
                  and (p.is_symlink() or p.is_file()))


def remove_stale_outputs(out_dir: str | os.PathLike,
                         written: Iterable[str | os.PathLike]) -> list[Path]:
    """Delete :func:`stale_outputs`; returns what was removed.

    Call it after this run's files are written, so a crash in between leaves
    the old outputs rather than none.
    """
    removed = []
    for path in stale_outputs(out_dir, written):
        try:
            path.unlink()
            removed.append(path)
        except FileNotFoundError:   # another process removed it first: fine
            pass
    return removed
