"""``--cost-model``: rank placement candidates by predicted throughput (source 002, §IV-C).

Scope
-----
With ``--cost-model wirelength`` (the default) a section keeps its placer's answer: the
placers minimise bandwidth-weighted wirelength plus congestion. With any other model a
searching placer (:data:`~formulations.placement.placers.POOLED`) keeps its whole planned
time and fills a :class:`~formulations.placement.candidates.CandidatePool`
(:func:`candidate_pool`) with the distinct good placements its searches visit (the
annealer's temperatures and restarts, the LNS's incumbents and kicks, the exact model's
answer and warm start): its answer is the one ``wirelength`` keeps (same work, same
seed), and the candidates cost it nothing. The candidates
(:func:`formulations.placement.candidates.placement_candidates`: the answer, the pool's
members within 25 % of its wirelength cost, and short low-temperature walks from the
answer when the pool holds fewer than ``--candidates``) are routed by the
negotiated-congestion router and scored, and the best score is kept (ties: the placer's
own answer); a placer without a pool (``greedy``) gets :data:`PLACER_SHARE` of the time and
the rest buys the walks:

* ``analytic`` -- :func:`formulations.placement.cost_models.analytic.predict_normalised`,
  per-operator speed rules plus a congestion estimate (source 002's baseline);
* ``learned`` -- the GNN of :mod:`formulations.placement.cost_models.learned`, from
  ``--cost-model-file`` or the model shipped beside it (:data:`DEFAULT_MODEL`), trained
  on the data set of ``benchmarks/cost_model_data.py`` (needs the extra ``learn``);
* ``simulated`` -- the performance simulator itself (:func:`sim.perf.simulate_section`):
  the slowest and most faithful ranking, the upper line the learned model aims at.

Every score is a predicted normalised throughput (higher is better). The section's stage
record ``ranking`` says which model chose, among how many candidates, and the scores of
the chosen and of the placer's answer, and how many candidates came from the search's
pool (``from_search``).
"""

from __future__ import annotations

import importlib.util
import time
from functools import lru_cache
from pathlib import Path
from typing import Callable, Sequence

from formulations.placement.candidates import CandidatePool, placement_candidates
from formulations.placement.cost_models.analytic import predict_normalised
from formulations.placement.cost_models.features import section_features
from formulations.placement.cost_models.learned import (LEARN_HINT, CostModelEnsemble,
                                                        LearnedCostModel)
from formulations.placement.placers import POOLED
from formulations.routing import ROUTERS
from formulations.solver import Budget
from hardware import RduFabric
from model.graph import Graph
from sim.perf import simulate_section

__all__ = ["COST_MODELS", "DEFAULT_MODEL", "PLACER_SHARE", "CANDIDATES", "learned_available",
           "scorer_for", "rank_placement", "load_learned", "candidate_pool", "POOL_FACTOR"]

#: The names ``--cost-model`` takes.
COST_MODELS = ("wirelength", "analytic", "learned", "simulated")
#: The learned model shipped with the package (trained on plasticine blocks).
DEFAULT_MODEL = (Path(__file__).resolve().parents[1] / "formulations" / "placement"
                 / "cost_models" / "learned_plasticine.npz")
#: Share of the placement's planned seconds a placer without a pool keeps when candidates
#: are ranked (the rest buys walks).
PLACER_SHARE = 0.75
#: Candidates per section (the placer's answer included).
CANDIDATES = 8
#: The search's pool keeps this many times ``--candidates`` placements (its admission
#: compares the searches' own costs; the candidates are then re-costed and filtered).
POOL_FACTOR = 2

Scorer = Callable[[Graph, object, list[tuple[dict[str, str], dict[int, list[str]]]]], list[float]]


def learned_available() -> bool:
    """Whether JAX and optax (the extra ``learn``) are installed, without importing them."""
    return all(importlib.util.find_spec(m) is not None for m in ("jax", "optax"))


@lru_cache(maxsize=4)
def load_learned(path: str) -> LearnedCostModel | CostModelEnsemble:
    """The learned model at ``path`` (read once per process)."""
    return LearnedCostModel.load(path)


def scorer_for(name: str, model_file: str | None = None) -> Scorer | None:
    """The batch scorer of cost model ``name`` (None for ``wirelength``)."""
    if name == "wirelength":
        return None
    if name == "analytic":
        return lambda g, fabric, items: [
            float(predict_normalised(g, fabric.spec, p, r, fabric=fabric)) for p, r in items]
    if name == "simulated":
        return lambda g, fabric, items: [
            float(simulate_section(g, fabric.spec, p, r, fabric=fabric).normalised)
            for p, r in items]
    if name == "learned":
        if not learned_available():
            raise RuntimeError(LEARN_HINT)
        model = load_learned(str(model_file or DEFAULT_MODEL))
        return lambda g, fabric, items: [float(v) for v in model.predict(
            [section_features(g, fabric, p, r) for p, r in items])]
    raise ValueError(f"unknown cost model {name!r}; use one of {COST_MODELS}")


def candidate_pool(placer: str, count: int = CANDIDATES) -> CandidatePool | None:
    """A pool for ``placer``'s searches to fill (None when the placer takes none).

    Examples
    --------
    >>> candidate_pool("model", 8).size, candidate_pool("greedy")
    (16, None)
    """
    return CandidatePool(POOL_FACTOR * count) if placer in POOLED else None


def rank_placement(graph: Graph, fabric: RduFabric, placement: dict[str, str], scorer: Scorer, *,
                   name: str, budget: Budget, seed: int, count: int = CANDIDATES,
                   site_penalty: dict[str, float] | None = None,
                   pool: Sequence[dict[str, str]] = ()) -> tuple[dict[str, str], dict]:
    """The best of ``placement`` and its candidates by ``scorer``, and the stage fields.

    ``pool``: the placements the placer's searches kept (:func:`candidate_pool`), taken
    before any walk. Candidates that the negotiated router cannot route are dropped; when
    none routes, ``placement`` is kept unscored (the section's own router decides).
    """
    started = time.perf_counter()
    found = placement_candidates(graph, fabric, placement, count=count, budget=budget,
                                 seed=seed, site_penalty=site_penalty, pool=pool)
    pooled = {tuple(sorted(p.items())) for p in pool}
    routed = []
    for p in found:
        routing = ROUTERS["negotiated"](graph, fabric, p, None)
        if routing.success:
            routed.append((p, routing.paths))
    extra = {"cost_model": name, "candidates": len(found), "routed": len(routed),
             "from_search": sum(1 for p in found[1:] if tuple(sorted(p.items())) in pooled)}
    if not routed:
        return placement, extra | {"chosen": 0}
    scores = scorer(graph, fabric, routed)
    best = max(range(len(scores)), key=lambda k: (scores[k], -k))
    first = scores[0] if routed[0][0] == placement else None
    extra |= {"chosen": best, "score": round(scores[best], 6),
              "placer_score": None if first is None else round(first, 6),
              "ranking_time": round(time.perf_counter() - started, 4)}
    return routed[best][0], extra
