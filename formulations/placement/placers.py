"""The placers by name, for ``--placer`` and the benchmarks.

Every placer has one signature::

    placer(graph, fabric, order, settings: SolveSettings, *,
           site_penalty: dict[str, float] | None = None) -> PlacementOutcome

(the searching ones also take ``search: PlacementSearch | None = None`` and ``keep``, a
:class:`~formulations.placement.candidates.CandidatePool` offered the placements they
visit: :data:`POOLED`) and raises
:class:`~formulations.placement.problem.PlacementError` when a unit kind runs out of sites.

* ``greedy`` -- :func:`~formulations.placement.greedy.place_greedy`, the sorted-order greedy;
* ``model`` -- :func:`~formulations.placement.search.place_model` on ``settings.backend``;
* ``milp`` / ``cp-sat`` -- the same model with the backend fixed (``highs`` / ``cp-sat``)
  whatever ``settings.backend`` says: aliases kept for ``--placer milp|cp-sat``;
* ``annealing`` -- :func:`~formulations.placement.annealing.place_annealing`, the VPR
  annealer on the same cost.
"""

from __future__ import annotations

from typing import Callable

from formulations.placement.annealing import place_annealing
from formulations.placement.candidates import CandidatePool
from formulations.placement.greedy import place_greedy
from formulations.placement.problem import PlacementOutcome
from formulations.placement.search import place_model
from formulations.placement.settings import PlacementSearch
from formulations.solver import SolveSettings
from hardware import RduFabric
from model.graph import Graph

__all__ = ["PLACERS", "POOLED", "place_milp", "place_cpsat"]


def place_milp(graph: Graph, fabric: RduFabric, order: list[str], settings: SolveSettings, *,
               site_penalty: dict[str, float] | None = None,
               search: PlacementSearch | None = None,
               keep: CandidatePool | None = None) -> PlacementOutcome:
    """:func:`~formulations.placement.search.place_model` on the MILP backend ``highs``
    whatever ``settings.backend`` says."""
    return place_model(graph, fabric, order, settings.with_backend("highs"),
                       site_penalty=site_penalty, search=search, keep=keep)


def place_cpsat(graph: Graph, fabric: RduFabric, order: list[str], settings: SolveSettings, *,
                site_penalty: dict[str, float] | None = None,
                search: PlacementSearch | None = None,
                keep: CandidatePool | None = None) -> PlacementOutcome:
    """:func:`~formulations.placement.search.place_model` on CP-SAT whatever
    ``settings.backend`` says."""
    return place_model(graph, fabric, order, settings.with_backend("cp-sat"),
                       site_penalty=site_penalty, search=search, keep=keep)


#: Placers by name (``--placer``): ``f(graph, fabric, order, settings, *, site_penalty=None)
#: -> PlacementOutcome``.
PLACERS: dict[str, Callable[..., PlacementOutcome]] = {
    "greedy": place_greedy,
    "model": place_model,
    "milp": place_milp,
    "cp-sat": place_cpsat,
    "annealing": place_annealing,
}
#: The placers that take ``keep`` (their searches' top-k, for ``--cost-model``).
POOLED = ("model", "milp", "cp-sat", "annealing")
