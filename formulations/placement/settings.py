"""The search knobs of the placers, apart from the run's solve settings.

A placer takes the run's :class:`~formulations.solver.SolveSettings` (backend, time
limit, seed, export folder) and, where it searches, a :class:`PlacementSearch`: how
long the LNS keeps going, how large its windows start, how much of the budget the warm
anneals get, how much of each mesh cut the congestion term allows. The defaults are the
pipeline's; the benchmarks change ``patience`` (None: use the whole budget).
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["PlacementSearch", "PATIENCE"]

#: LNS stops after this many rounds without a 0.1 % improvement (unless ``patience=None``).
PATIENCE = 20


@dataclass(frozen=True)
class PlacementSearch:
    """How the placement model searches (and how the annealing placer anneals).

    Attributes
    ----------
    window : nodes re-optimised together per LNS round at first (the size adapts).
    patience : the LNS stops after this many rounds without a 0.1 % improvement;
        None = never stop early: share the time between LNS rounds and hot anneals from
        the incumbent until the time limit.
    anneal_share : share of the time limit spent annealing the greedy placement before
        the model starts from the best result; None = by the spread of the pair weights
        (:func:`formulations.placement.search.anneal_share_for`); 0 = straight from the
        greedy.
    cut_share : share of each switch-mesh cut's channels the congestion term allows
        (:mod:`formulations.placement.congestion`).
    drop_idle : place the nodes without any pair (they cost nothing anywhere) last, on
        the sites the others leave free (a bipartite matching); when the leftover sites
        cannot take them, the whole section is placed again with them.
    anneal_restarts : the annealing placer fills the time limit (a fast anneal, a slow
        one, then restarts from the best placement); False = one anneal.
    anneal_congestion : the annealing placer prices the congestion term in its moves;
        False = wirelength and penalty only (a faster surrogate; the full cost of the
        result is still reported).

    Examples
    --------
    >>> PlacementSearch(patience=None).window
    8
    >>> PlacementSearch(anneal_share=1.5)
    Traceback (most recent call last):
    ...
    ValueError: anneal_share must be None or in [0, 1], not 1.5
    """

    window: int = 8
    patience: int | None = PATIENCE
    anneal_share: float | None = None
    cut_share: float = 1.0
    drop_idle: bool = True
    anneal_restarts: bool = True
    anneal_congestion: bool = True

    def __post_init__(self):
        if self.window < 1:
            raise ValueError(f"window must be at least 1 node, not {self.window!r}")
        if self.patience is not None and self.patience < 0:
            raise ValueError(f"patience must be None or >= 0 rounds, not {self.patience!r}")
        if self.anneal_share is not None and not 0 <= self.anneal_share <= 1:
            raise ValueError(f"anneal_share must be None or in [0, 1], not {self.anneal_share!r}")
        if not self.cut_share > 0:
            raise ValueError(f"cut_share must be > 0, not {self.cut_share!r}")
