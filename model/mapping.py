"""mapping.json version 1: the result of a run, for people and other tools.

A :class:`Mapping` says where every node went and how every edge travels:

- ``order``: the node order the placer used (the sorter's output);
- ``sections``: ``[{"id", "nodes"}]``, configurations run one after another;
- ``buffers``: per edge, its stage-buffer depth (final, added, PMUs);
- ``placement``: per node ``{"section", "site", "x", "y", "unit"}`` on an RDU
  (``{"tile", "slot", "cycle"}`` on a Streaming Engine, plus ``"ii"``,
  ``"tiles"`` (per tile spoke entries) and ``"memory"`` (tile-memory variables));
- ``routes``: per edge ``{"edge", "src", "dst", "net", "section", "links"}``;
  an edge between sections goes through DRAM (``"via": "dram"``, no links);
- ``metrics`` and ``stages`` (one solver or heuristic result per stage);
- ``run``: how the run was asked for (seed, budget, backend per decision, placer,
  router) and whether the wall clock cut a search short (then the same seed is not
  promised to give the same mapping);
- ``status`` (``"mapped"`` or ``"failed"``) and, when failed, ``diagnosis``.
"""

from __future__ import annotations

import os
from dataclasses import asdict, dataclass, field, fields, is_dataclass
from typing import Any

import msgspec

from model.errors import InputError
from model.files import write_text_atomic
from model.graphjson import load_json

__all__ = ["Mapping", "write_mapping", "read_mapping", "MAPPING_VERSION"]

MAPPING_VERSION = 1


@dataclass
class Mapping:
    """Everything a run decided; see the module docstring for the fields."""

    graph: str
    hardware: str
    status: str = "failed"
    order: list[str] = field(default_factory=list)
    sections: list[dict[str, Any]] = field(default_factory=list)
    buffers: list[dict[str, Any]] = field(default_factory=list)
    placement: dict[str, dict[str, Any]] = field(default_factory=dict)
    routes: list[dict[str, Any]] = field(default_factory=list)
    metrics: dict[str, Any] = field(default_factory=dict)
    stages: list[dict[str, Any]] = field(default_factory=list)
    trace: list[dict[str, Any]] = field(default_factory=list)
    diagnosis: str | None = None
    ii: int | None = None                      # Streaming Engine: the initiation interval
    tiles: list[dict[str, Any]] | None = None  # Streaming Engine: per tile spoke entries
    memory: dict[str, Any] | None = None       # Streaming Engine: tile-memory variables
    run: dict[str, Any] = field(default_factory=dict)  # seed, budget, backends, cut short

    def to_dict(self) -> dict[str, Any]:
        data = {"version": MAPPING_VERSION} | asdict(self)
        for optional in ("ii", "tiles", "memory"):
            if data[optional] is None:
                data.pop(optional)
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any], file: str = "mapping.json") -> "Mapping":
        if not isinstance(data, dict) or data.get("version") != MAPPING_VERSION:
            raise InputError(file, "version", "not a mapping.json version 1",
                             "pass a mapping.json written by pipeline.run")
        known = set(cls.__dataclass_fields__)
        missing = {"graph", "hardware"} - set(data)
        if missing:
            raise InputError(file, sorted(missing)[0], "missing", "pass a complete mapping.json")
        return cls(**{k: v for k, v in data.items() if k in known})


def write_mapping(mapping: Mapping, path: str | os.PathLike) -> None:
    """Write ``mapping`` as mapping.json (atomically: never half-written, mode 0644).

    The text is made in memory first, so a value JSON cannot hold fails before
    anything is written. msgspec encodes it from the fields as they are, without
    :meth:`Mapping.to_dict`'s deep copy: a 50,000-node chain's mapping.json took 50 s
    through ``asdict`` and the standard encoder, and takes about a second.
    """
    data = {"version": MAPPING_VERSION} | {f.name: getattr(mapping, f.name)
                                           for f in fields(mapping)}
    for optional in ("ii", "tiles", "memory"):
        if data[optional] is None:
            data.pop(optional)
    text = msgspec.json.format(msgspec.json.encode(data, enc_hook=_plain), indent=1)
    write_text_atomic(path, text.decode("utf-8") + "\n")


def _plain(value: Any) -> Any:
    """What msgspec does not encode by itself: dataclasses and numpy numbers."""
    if is_dataclass(value) and not isinstance(value, type):
        return asdict(value)
    if hasattr(value, "item"):
        return value.item()
    raise TypeError(f"mapping.json cannot hold a {type(value).__name__}: {value!r}")


def read_mapping(path: str | os.PathLike) -> Mapping:
    """Read a mapping.json written by :func:`write_mapping`."""
    return Mapping.from_dict(load_json(path), str(path))
