"""Readers of foreign graph formats, recognised by content.

:func:`load_graph` is the one entry point: it reads graph.json v1 or any format
registered in :data:`FORMATS`, chosen by ``format=`` or by looking at the file.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Callable

from model.errors import InputError
from model.graph import Graph
from model.graphjson import load_json, parse_graph
from model.importers.msr_dnn import looks_like_msr_dnn, parse_msr_dnn

__all__ = ["FORMATS", "load_graph", "detect_format"]

#: format name -> (recogniser of parsed JSON, parser(data, file, name) -> Graph)
FORMATS: dict[str, tuple[Callable[[Any], bool], Callable[[Any, str, str], Graph]]] = {
    "graph-json": (lambda d: isinstance(d, dict) and "version" in d,
                   lambda d, file, name: parse_graph(d, file, name)),
    "msr-dnn": (looks_like_msr_dnn, parse_msr_dnn),
}


def detect_format(data: Any) -> str | None:
    """The name of the first format whose recogniser accepts ``data``."""
    for name, (recognise, _) in FORMATS.items():
        if recognise(data):
            return name
    return None


def load_graph(path: str | os.PathLike, format: str | None = None) -> Graph:
    """Read a graph file in any known format.

    Parameters
    ----------
    path : path to the file.
    format : one of :data:`FORMATS`, or None to recognise it by content.

    Raises
    ------
    InputError
        If the file cannot be read, its format is unknown, or it is invalid.
    """
    file = str(path)
    if format is not None and format not in FORMATS:
        raise InputError(file, "", f'unknown format "{format}"',
                         "use --format " + " or ".join(FORMATS))
    data = load_json(path)
    format = format or detect_format(data)
    if format is None:
        raise InputError(file, "", "not a graph.json (no \"version\") nor a known foreign format",
                         'add "version": 1 for graph.json, or pass --format ' + "|".join(FORMATS))
    return FORMATS[format][1](data, file, Path(path).stem)
