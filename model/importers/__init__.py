"""Readers of foreign graph formats, recognised by content.

:func:`load_graph` is the one entry point: it reads graph.json v1 or any format
registered in :data:`FORMATS`, chosen by ``format=`` or by looking at the file.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Callable, Mapping

from hardware.fields import parse_json
from model.errors import InputError
from model.graph import Graph
from model.graphjson import (check_graph_file, parse_graph, parse_graph_quick, quick_json,
                             read_file_bytes)
from model.importers.dot import looks_like_dot, parse_dot
from model.importers.morpher import looks_like_morpher, parse_morpher
from model.importers.msr_dnn import looks_like_msr_dnn, parse_msr_dnn
from model.importers.onnx_model import load_onnx, looks_like_onnx

__all__ = ["FORMATS", "TEXT_FORMATS", "load_graph", "detect_format"]

#: format name -> (recogniser of parsed JSON, parser(data, file, name) -> Graph)
FORMATS: dict[str, tuple[Callable[[Any], bool], Callable[[Any, str, str], Graph]]] = {
    "graph-json": (lambda d: isinstance(d, dict) and "version" in d,
                   lambda d, file, name: parse_graph(d, file, name)),
    "msr-dnn": (looks_like_msr_dnn, parse_msr_dnn),
    "morpher": (looks_like_morpher, parse_morpher),
    # binary: recognised from the file's first byte in load_graph, never from JSON
    "onnx": (lambda d: False, lambda d, file, name: load_onnx(file, name)),
    # text: a Graphviz digraph (CGRA-ME / SAT-MapIt data-flow graphs), recognised in load_graph
    "dot": (lambda d: False, parse_dot),
}

#: Formats read as text rather than JSON (recognised by their content).
TEXT_FORMATS = ("morpher", "dot")


def detect_format(data: Any) -> str | None:
    """The name of the first format whose recogniser accepts ``data``."""
    for name, (recognise, _) in FORMATS.items():
        if recognise(data):
            return name
    return None


def _text_if_markup(raw: bytes) -> str | None:
    """The file's text when it starts with '<' (markup, not JSON); None otherwise."""
    head = _head(raw).lstrip()
    return _text(raw) if head.startswith("<") or (not head and len(raw) > HEAD_BYTES) else None


def _dot_text(raw: bytes) -> str | None:
    """The file's text when it is a Graphviz digraph; None otherwise."""
    return _text(raw) if looks_like_dot(_head(raw)) else None


#: Bytes of a file enough to recognise a text format (a graph.json of 10^6 nodes is not
#: decoded whole twice over just to learn it is JSON).
HEAD_BYTES = 1 << 14


def _head(raw: bytes) -> str:
    """The text of the file's first :data:`HEAD_BYTES` (a character cut in two dropped)."""
    return raw[:HEAD_BYTES].decode("utf-8-sig", errors="ignore")


def _text(raw: bytes) -> str | None:
    """The file's text; None when it is not UTF-8 (parse_json reports it with its usual
    message)."""
    try:
        return raw.decode("utf-8-sig")  # a byte-order mark is not content
    except UnicodeDecodeError:
        return None


def load_graph(path: str | os.PathLike, format: str | None = None, *, batch: int = 1,
               dims: Mapping[str, int] | None = None) -> Graph:
    """Read a graph file in any known format.

    Parameters
    ----------
    path : path to the file.
    format : one of :data:`FORMATS`, or None to recognise it by content.
    batch, dims : ONNX only: the size of symbolic batch dimensions and of named ones
        (:func:`model.importers.onnx_model.load_onnx`).

    Raises
    ------
    InputError
        If the file cannot be read, its format is unknown, or it is invalid.
    """
    file = str(path)
    if format is not None and format not in FORMATS:
        raise InputError(file, "", f'unknown format "{format}"',
                         "use --format " + " or ".join(FORMATS))
    check_graph_file(path)      # first: recognising the format opens the file
    if format == "onnx" or (format is None and looks_like_onnx(path)):
        return load_onnx(path, Path(path).stem, batch, dims)
    raw = read_file_bytes(path)
    if format in (None, "dot"):
        dot = _dot_text(raw)
        if dot is not None or format == "dot":
            if dot is None:
                raise InputError(file, "line 1", "not a DOT file (it does not start with "
                                 "'digraph')", "check the file, or drop --format to "
                                 "recognise it by content")
            return parse_dot(dot, file, Path(path).stem)
    text = _text_if_markup(raw) if format in (None, *TEXT_FORMATS) else None
    if text is not None or format in TEXT_FORMATS:
        if text is None:
            raise InputError(file, "line 1", f"not a {format} file (it does not start with '<')",
                             "check the file, or drop --format to recognise it by content")
        if format is None and not looks_like_morpher(text):
            raise InputError(file, "line 1", "markup that is no known graph format",
                             "pass a Morpher DFG (<Node idx=...> blocks) or a graph.json")
        return FORMATS[format or "morpher"][1](text, file, Path(path).stem)
    data = quick_json(raw)      # every value is checked below, by the reader of the format
    format = format or detect_format(parse_json(raw, file) if data is None else data)
    if format == "graph-json":   # the format is not known yet: no example to point to
        del raw                  # the graph needs the room; read again for a message
        return parse_graph_quick(data, file, Path(path).stem, lambda: read_file_bytes(path))
    data = parse_json(raw, file)
    if format is None:
        raise InputError(file, "", "not a graph.json (no \"version\") nor a known foreign format",
                         'add "version": 1 for graph.json, or pass --format ' + "|".join(FORMATS))
    return FORMATS[format][1](data, file, Path(path).stem)
