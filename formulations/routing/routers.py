"""The routers by name, for ``--router`` and the benchmarks.

Every router has one signature::

    router(graph, fabric, placement, settings, *, config=None, progress=None) -> RoutingResult

``settings`` is the run's :class:`~formulations.solver.SolveSettings` for routing
(the backend comes from the run's backend table, ``--backend routing=NAME``, and is
used as given), ``config`` the negotiated router's knobs, ``progress`` a callback
for log lines. ``success`` False comes with ``overused`` when links stay over
capacity.
"""

from __future__ import annotations

from typing import Callable

from formulations.routing.model import route_model
from formulations.routing.negotiated import route_negotiated
from formulations.routing.problem import RoutingResult

__all__ = ["ROUTERS"]

#: Routers by name: ``negotiated`` (PathFinder alone) and ``model`` (the flow model,
#: warm-started by PathFinder).
ROUTERS: dict[str, Callable[..., RoutingResult]] = {
    "negotiated": route_negotiated, "model": route_model}
