"""Placement and routing of one section, with their stage records.

``map_section`` orders a section's nodes, places them with the chosen placer,
routes them with the chosen router, and returns what it decided together with
one stage record per step. It never raises for a section that does not fit:
it returns a :class:`SectionFailure` saying which level failed and why, in the
user's terms, so the feedback loop (pipeline.flow) can decide who fixes it.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Callable

from formulations.placement import PLACERS, PlacementError
from formulations.routing import ROUTERS, Overuse
from formulations.sorter import sort_nodes
from model.graph import Graph

__all__ = ["SectionFailure", "SectionOutcome", "map_section", "stage_record"]


@dataclass
class SectionFailure:
    """Why a section could not be placed or routed.

    ``level`` is "placement" or "routing"; ``unit`` names the unit kind that
    ran out (placement), ``overused`` the links over capacity (routing).
    """

    level: str
    message: str
    unit: str | None = None
    overused: list[Overuse] = field(default_factory=list)


@dataclass
class SectionOutcome:
    """Order, placement (node -> site), routes (local edge index -> link ids), stages."""

    order: list[str]
    placement: dict[str, str] = field(default_factory=dict)
    paths: dict[int, list[str]] = field(default_factory=dict)
    stages: list[dict] = field(default_factory=list)
    failure: SectionFailure | None = None


def stage_record(stage: str, section: int | None, method: str, started: float, *,
                 objective: float | None = None, status: str = "FEASIBLE",
                 bound: float | None = None, backend: str | None = None, **extra) -> dict:
    """One row of mapping.json's ``stages``: what ran, how it ended, how long it took."""
    return {"stage": stage, "section": section, "method": method, "backend": backend,
            "status": status, "objective": objective, "bound": bound,
            "time": round(time.perf_counter() - started, 4)} | extra


def map_section(sub: Graph, fabric, section_id: int, options, say: Callable[[str], None]
                ) -> SectionOutcome:
    """Order, place and route one section (``options``: a pipeline.flow.RunOptions)."""
    started = time.perf_counter()
    outcome = SectionOutcome(order=sort_nodes(sub).order)
    outcome.stages.append(stage_record("order", section_id, "priority-queue sorter", started))

    started = time.perf_counter()
    try:
        placed = PLACERS[options.placer](sub, fabric, outcome.order, **options.solver_options())
    except PlacementError as exc:
        outcome.failure = SectionFailure("placement", str(exc), unit=exc.unit)
        return outcome
    outcome.stages.append(stage_record("placement", section_id, placed.method, started,
                                       objective=placed.objective, bound=placed.bound,
                                       status=placed.status, backend=placed.backend)
                          | placed.extra)
    outcome.placement = placed.placement

    started = time.perf_counter()
    routing = ROUTERS[options.router](
        sub, fabric, outcome.placement, router_config=options.router_config,
        progress=lambda line: say(f"section {section_id}: {line}"), **options.solver_options())
    outcome.stages.append(stage_record("routing", section_id, routing.method, started,
                                       objective=routing.wirelength, iterations=routing.iterations,
                                       bound=routing.bound, backend=routing.backend,
                                       status="FEASIBLE" if routing.success else "INFEASIBLE")
                          | routing.extra)
    outcome.paths = routing.paths
    if not routing.success:
        worst = sorted(routing.overused, key=lambda o: o.capacity - o.load)[:10]
        links = "; ".join(f"{o.link} ({o.network}: {o.load} nets on {o.capacity} channels, "
                          f"nets {', '.join(o.nets[:4])})" for o in worst)
        outcome.failure = SectionFailure(
            "routing", f"routing failed after {routing.iterations} iterations: "
                       f"{len(routing.overused)} links stay over capacity: {links}",
            overused=routing.overused)
    return outcome
