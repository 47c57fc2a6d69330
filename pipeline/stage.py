"""One stage record: what one decision did, as mapping.json's ``stages`` and the report list it.

Every target's flow (the RDU's levels, the Streaming Engine's and the CGRA's schedulers)
records its decisions the same way, so the report and the benchmarks read one shape.
"""

from __future__ import annotations

import time
from typing import Any, Mapping

__all__ = ["stage_record"]


def stage_record(stage: str, section: int | None, method: str, started: float, *,
                 objective: float | None = None, status: str = "FEASIBLE",
                 bound: float | None = None, backend: str | None = None,
                 extra: Mapping[str, Any] | None = None) -> dict:
    """One row of mapping.json's ``stages``: what ran, how it ended, how long it took,
    and the stage's own fields (``extra``)."""
    return {"stage": stage, "section": section, "method": method, "backend": backend,
            "status": status, "objective": objective, "bound": bound,
            "time": round(time.perf_counter() - started, 4)} | dict(extra or {})
