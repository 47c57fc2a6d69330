"""Placement and routing of one section, with their stage records.

``map_section`` orders a section's nodes, places them with the chosen placer,
routes them with the chosen router, and returns what it decided together with
one stage record per step. It never raises for a section that does not fit:
it returns a :class:`SectionFailure` saying which level failed and why, in the
user's terms, so the feedback loop (:mod:`pipeline.feedback`) can decide who fixes it.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Callable

from formulations.placement import PLACERS, PlacementError
from formulations.routing import ROUTERS, Overuse
from formulations.solver import SolveSettings
from formulations.sorter.priority_sort import sort_nodes
from hardware import RduFabric
from model.graph import Graph
from pipeline.cost_model import PLACER_SHARE, candidate_pool, rank_placement, scorer_for
from pipeline.stage import stage_record

__all__ = ["SectionFailure", "SectionOutcome", "map_section", "congestion_penalty"]


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


#: Penalty per unit of excess on an over-used link, added to the sites next to it.
PENALTY_PER_EXCESS = 1.0


def congestion_penalty(fabric: RduFabric, overused: list[Overuse], previous: dict[str,
                       float] | None = None ) -> dict[str, float]:
    """Site penalties from a failed routing: every site touching an over-used link's
    switches pays ``PENALTY_PER_EXCESS`` per net of excess (added to ``previous``)."""
    penalty = dict(previous or {})
    for o in overused:
        ends = [n for n in fabric.link_ends(o.link) if fabric.is_switch(n)]
        for site in fabric.sites:
            if set(fabric.attached_switches(site.id)) & set(ends):
                penalty[site.id] = penalty.get(site.id, 0.0) + PENALTY_PER_EXCESS * max(
                    1, o.load - o.capacity)
    return penalty


def map_section(sub: Graph, fabric: RduFabric, section_id: int, options, say: Callable[[str],
                None], settings: tuple[SolveSettings, SolveSettings],
                penalty: dict[str, float] | None = None) -> SectionOutcome:
    """Order, place and route one section once (``options``: a pipeline.options.RunOptions).

    ``settings`` are the placement's and the routing's (planned seconds and the
    run's deadline: :class:`pipeline.budget.RunPlan`); ``penalty`` is a cost per
    site that steers placement away from links an earlier attempt over-used. A
    failure is returned as a :class:`SectionFailure` in the user's terms; the
    feedback loop decides what to try next (:class:`pipeline.rdu.levels.PlaceRouteLevel`).
    """
    started = time.perf_counter()
    outcome = SectionOutcome(order=sort_nodes(sub).order)
    outcome.stages.append(stage_record("order", section_id, "priority-queue sorter", started))
    place_settings, route_settings = settings
    if not _place(sub, fabric, section_id, options, outcome, place_settings, penalty or {}):
        return outcome
    routing = _route(sub, fabric, section_id, options, outcome, route_settings, say)
    outcome.failure = None if routing.success else _routing_failure(routing)
    return outcome


def _place(sub, fabric: RduFabric, section_id, options, outcome, settings, penalty) -> bool:
    started = time.perf_counter()
    scorer = scorer_for(options.cost_model, options.cost_model_file)
    pool = None if scorer is None else candidate_pool(options.placer, options.candidates)
    if scorer is not None and pool is None:   # no top-k of its own: a share buys walks
        settings = settings.with_time(PLACER_SHARE * settings.time_limit)
    try:
        placed = PLACERS[options.placer](sub, fabric, outcome.order, settings,
                                         site_penalty=penalty or None,
                                         **({} if pool is None else {"keep": pool}))
    except PlacementError as exc:
        outcome.failure = SectionFailure("placement", str(exc), unit=exc.unit)
        return False
    outcome.stages.append(stage_record("placement", section_id, placed.method, started,
                                       objective=placed.objective, bound=placed.bound,
                                       status=placed.status, backend=placed.backend)
                          | placed.extra)
    outcome.placement = placed.placement
    if scorer is not None:
        _rank(sub, fabric, section_id, options, outcome, settings, penalty, scorer, pool)
    return True


def _rank(sub, fabric: RduFabric, section_id, options, outcome, settings, penalty, scorer,
          pool) -> None:
    """``--cost-model``: keep the best of the placement and its candidates
    (:func:`pipeline.cost_model.rank_placement`), with a ``ranking`` stage record. A placer
    with a pool searched its whole plan (the candidates cost it nothing; walks fill up
    at a minimal budget); one without spent :data:`PLACER_SHARE` and the rest is walks."""
    started = time.perf_counter()
    seconds = 0.0 if pool is not None else settings.time_limit * (1 - PLACER_SHARE) / PLACER_SHARE
    outcome.placement, extra = rank_placement(
        sub, fabric, outcome.placement, scorer, name=options.cost_model,
        budget=settings.budget(seconds),
        seed=settings.seed, count=options.candidates, site_penalty=penalty or None,
        pool=[p for p, _ in pool.members()] if pool is not None else ())
    outcome.stages.append(stage_record(
        "ranking", section_id, f"cost model {options.cost_model}: best of "
        f"{extra['routed']} routed candidates", started, objective=extra.get("score"),
        extra=extra))


def _route(sub, fabric: RduFabric, section_id, options, outcome, settings, say):
    started = time.perf_counter()
    routing = ROUTERS[options.router](
        sub, fabric, outcome.placement, settings, config=options.router_config,
        progress=lambda line: say(f"section {section_id}: {line}"))
    outcome.stages.append(stage_record("routing", section_id, routing.method, started,
                                       objective=routing.wirelength, bound=routing.bound,
                                       backend=routing.backend,
                                       status="FEASIBLE" if routing.success else "INFEASIBLE",
                                       extra={"iterations": routing.iterations})
                          | routing.extra)
    outcome.paths = routing.paths
    return routing


def _routing_failure(routing) -> SectionFailure:
    worst = sorted(routing.overused, key=lambda o: o.capacity - o.load)[:10]
    links = "; ".join(f"{o.link} ({o.network}: {o.load} nets on {o.capacity} channels, "
                      f"nets {', '.join(o.nets[:4])})" for o in worst)
    return SectionFailure(
        "routing", f"routing failed after {routing.iterations} iterations: "
                   f"{len(routing.overused)} links stay over capacity: {links}",
        overused=routing.overused)
