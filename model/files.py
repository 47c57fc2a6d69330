"""Atomic file writes: a reader sees the old file or the new one, never half of one.

Every output the mapper writes (mapping.json, report.md, pictures) goes through
:func:`write_bytes_atomic` or :func:`write_text_atomic`: the data is written to a
temporary file in the same directory (so the rename never crosses a file
system), flushed to disk with ``fsync``, given the mode a plain ``open()`` would
give (0666 less the umask, i.e. 0644 under the usual umask 022; ``tempfile``
alone would leave 0600), and renamed over the target with :func:`os.replace`.
A crash or an error at any point leaves the old file untouched and no temporary
file behind (the temporary is removed on the way out).

This module lives in ``model/`` because ``model.mapping`` writes mapping.json and
``model`` may import only ``hardware``; ``pipeline.outputs`` re-exports it.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

__all__ = ["write_bytes_atomic", "write_text_atomic", "temporary_name", "TEMP_MARK"]

#: Every temporary name starts with "." and contains this mark, so a leftover of a
#: killed run can be recognised (and removed) without touching anyone else's files.
TEMP_MARK = ".rdamap-tmp"


def temporary_name(path: str | os.PathLike) -> str:
    """The prefix of temporary files for ``path``: hidden, marked, same directory."""
    return f".{Path(path).name}{TEMP_MARK}"


def _plain_file_mode() -> int:
    """The mode ``open(..., "w")`` gives a new file: 0666 less the process umask."""
    umask = os.umask(0)   # the only portable way to read the umask is to set it...
    os.umask(umask)       # ...and put it back at once
    return 0o666 & ~umask


def write_bytes_atomic(path: str | os.PathLike, data: bytes) -> None:
    """Write ``data`` to ``path`` through a temporary file, fsync and a rename.

    Parameters
    ----------
    path : str or PathLike
        The final file; its directory must exist.
    data : bytes
        The whole content.

    Raises
    ------
    OSError
        When the directory cannot be written; ``path`` is then unchanged.

    Examples
    --------
    >>> import tempfile, os
    >>> d = tempfile.mkdtemp(); write_bytes_atomic(os.path.join(d, "a.bin"), b"xy")
    >>> sorted(os.listdir(d)), open(os.path.join(d, "a.bin"), "rb").read()
    (['a.bin'], b'xy')
    """
    path = Path(path)
    fd, tmp = tempfile.mkstemp(prefix=temporary_name(path), dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())     # the bytes are on disk before the name points at them
        os.chmod(tmp, _plain_file_mode())
        os.replace(tmp, path)
    except BaseException:             # KeyboardInterrupt too: never leave the temporary behind
        Path(tmp).unlink(missing_ok=True)
        raise


def write_text_atomic(path: str | os.PathLike, text: str) -> None:
    """Write ``text`` (UTF-8) to ``path`` atomically; see :func:`write_bytes_atomic`.

    Examples
    --------
    >>> import tempfile, os
    >>> p = os.path.join(tempfile.mkdtemp(), "r.md"); write_text_atomic(p, "# hi\\n")
    >>> open(p).read()
    '# hi\\n'
    """
    write_bytes_atomic(path, text.encode("utf-8"))
