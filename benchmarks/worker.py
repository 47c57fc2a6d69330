"""The child side of one benchmark entry: ``python -m benchmarks.worker SPEC OUT``.

``SPEC`` is a JSON object ``{"target": "module:function", "params": {...}}``;
the worker imports the function, calls it with the params and writes the row
it returns, as JSON, to the file ``OUT``. It adds ``peak_mib``, the peak
resident memory of this process (``getrusage(RUSAGE_SELF).ru_maxrss``), unless
the function measured it itself at a better moment (see :func:`peak_mib`).

A failing function still writes a row: ``{"status": "error", "error": ...}``,
and the worker exits with code 1.
"""

from __future__ import annotations

import importlib
import json
import resource
import sys
import traceback
from typing import Any, Callable

__all__ = ["peak_mib", "resolve", "run_entry", "main"]


def peak_mib() -> float:
    """Peak resident memory of this process so far, in MiB (Linux ru_maxrss is KiB).

    Examples
    --------
    >>> peak_mib() > 0
    True
    """
    scale = 1024 * 1024 if sys.platform == "darwin" else 1024  # macOS reports bytes
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / scale, 1)


def resolve(target: str) -> Callable[..., dict[str, Any]]:
    """The function named ``"module:function"``.

    Examples
    --------
    >>> resolve("benchmarks.worker:peak_mib") is peak_mib
    True
    """
    module, _, name = target.partition(":")
    return getattr(importlib.import_module(module), name)


def run_entry(target: str, params: dict[str, Any]) -> dict[str, Any]:
    """Call ``target(**params)`` and add ``peak_mib`` to the row it returns."""
    row = dict(resolve(target)(**params))
    row.setdefault("peak_mib", peak_mib())
    return row


def main(argv: list[str] | None = None) -> int:
    spec_text, out_path = (argv if argv is not None else sys.argv[1:])[:2]
    spec = json.loads(spec_text)
    try:
        row, code = run_entry(spec["target"], spec.get("params", {})), 0
    except Exception as exc:  # a broken entry becomes a row, not a crashed run
        traceback.print_exc()
        row, code = {"status": "error", "error": f"{type(exc).__name__}: {exc}"}, 1
    with open(out_path, "w", encoding="utf-8") as f:
        json.dump(row, f, default=str)
    return code


if __name__ == "__main__":
    sys.exit(main())
