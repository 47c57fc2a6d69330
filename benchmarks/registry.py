"""The suite registry: what a benchmark suite is and where suites are listed.

A :class:`Suite` names its table columns and, for a run (full or ``--quick``),
the :class:`Entry` list to measure. Each entry is one call of a function
(``"module:function"`` with JSON-able keyword arguments) that the harness runs
in a fresh subprocess and that returns one table row (a dict keyed by column).

Adding a suite takes one line: write a module that defines ``SUITE`` and add
its name to :data:`SUITE_MODULES`. Suite modules are imported only when asked
for; like every module here they import what they use at the top (the worker
that runs an entry imports only that entry's suite).

Examples
--------
>>> {"pipeline", "sorter"} <= set(suites())
True
>>> get_suite("sorter").columns[0].key
'graph'
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

__all__ = ["Column", "Entry", "Suite", "SUITE_MODULES", "suites", "get_suite"]

#: Modules that define a ``SUITE``; one line per suite (buffers, sections, placement, SE ...).
SUITE_MODULES = (
    "benchmarks.suites.sorter",
    "benchmarks.suites.pipeline",
    "benchmarks.suites.placement",
    "benchmarks.suites.placement_seeds",
    "benchmarks.suites.sections",
    "benchmarks.suites.buffers",
    "benchmarks.suites.streaming",
    "benchmarks.suites.reliability",
    "benchmarks.suites.frontend",
    "benchmarks.suites.onnx",
    "benchmarks.suites.onnx_par",
    "benchmarks.suites.perf",
    "benchmarks.suites.cost_model",
    "benchmarks.suites.parallel",
    "benchmarks.suites.first_cut",
    "benchmarks.suites.trust",
    "benchmarks.suites.cgra",
    "benchmarks.suites.rl",
)


@dataclass(frozen=True)
class Column:
    """One table column: the row key, its markdown header and a value format.

    ``fmt`` is a ``str.format`` pattern applied to numbers (e.g. ``"{:.3f}"``);
    missing values show as an em dash in markdown and stay empty in CSV.
    """

    key: str
    header: str
    fmt: str = "{}"


@dataclass(frozen=True)
class Entry:
    """One measurement: ``target(**params)`` in a fresh subprocess, at most ``timeout`` s.

    ``fixed`` holds row values known without running (graph name, sizes), so a
    row that times out or is skipped still says what it was. When ``skip`` is
    set the entry is not run and the reason is reported.
    """

    name: str
    target: str
    params: dict[str, Any] = field(default_factory=dict)
    timeout: float = 300.0
    fixed: dict[str, Any] = field(default_factory=dict)
    skip: str | None = None


@dataclass(frozen=True)
class Suite:
    """A named list of entries and the columns of its table.

    ``entries(quick)`` returns the entries of a full run (``quick=False``) or of
    a run that must finish in under a minute (``quick=True``).
    """

    name: str
    title: str
    columns: tuple[Column, ...]
    entries: Callable[[bool], list[Entry]]
    notes: str = ""
    #: Called with the results' base path (no suffix) after the tables are written,
    #: to append a summary against the suite's targets; None for none.
    summary: Callable[[Path], None] | None = None


def suites() -> dict[str, Suite]:
    """Every registered suite by name, in :data:`SUITE_MODULES` order."""
    found = {}
    for module in SUITE_MODULES:
        suite = importlib.import_module(module).SUITE
        found[suite.name] = suite
    return found


def get_suite(name: str) -> Suite:
    """The suite called ``name``.

    Raises
    ------
    KeyError
        With the known names, when no suite has that name.
    """
    known = suites()
    if name not in known:
        raise KeyError(f'unknown suite "{name}"; known: {", ".join(known)}')
    return known[name]
