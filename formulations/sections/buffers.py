"""Stage-buffer PMUs in the section cut: each section pays for its own.

Balancing (source 001, :mod:`formulations.buffers`) pads the shorter paths of every
reconvergent pair inside a section with stage buffers, one PMU per sample of delay at
most. A cut that counts only the nodes' own PMUs overflows once they are added
(bert_l-12 inference on plasticine: 7 of the greedy cut's 9 sections, with 245 buffer
PMUs), and a scale factor raised after the fact chases a moving target: buffer PMUs
follow a section's reconvergent paths, not its PMU estimate.

Three formulations were weighed:

- **Node potentials per section** (the balancing model inside the cut): exact, but a
  potential per node and section, tied to ``x`` by big-M rows, multiplies the model by the
  number of sections and loosens its LP bound; the window search would slow down for every
  graph, buffers or not.
- **A provably safe upper estimate**: the whole graph's balancing restricted to a
  section balances that section (every path between two nodes of a section stays inside
  it: the quotient of an ordered cut is acyclic, so sections are convex), so its PMUs on
  the section's inside edges bound the section's own. Measured on bert_l-12 inference: equal
  on 5 of 9 sections, but 401 PMUs against 30 on the last, where the global answer put a
  371-sample delay on an edge whose fork lies sections earlier. Safe, but it would force
  cuts no section needs; and the global model takes 5 s on that graph.
- **Chosen: the balancing's own per-edge answer, learned lazily.** An edge ``(u, v)``
  carries the PMUs balancing added on it in the sections it was seen inside
  (:data:`~formulations.sections.problem.BufferDemand`). The edges of one net share one
  chain, each sink tapping it at its own depth, so a section pays per net the deepest tap
  of its inside edges: ``w[n][k] >= p_e (x[u][k] + x[v][k] - 1)`` in the section model, the
  same sum in the greedy cut. The demand is learned before the first cut by *probes*
  (:func:`fits_after_balancing`): greedy cuts with the demand learned so far, every
  section balanced exactly (tens of milliseconds a section), until the greedy cut fits
  after balancing. A section the buffer level later finds too full teaches its edges the
  same way (the lazily added cut: the demand that forbids it) before any scale factor is
  raised. Measured (plasticine, greedy probes): bert_l-12 inference converges in 4 probes
  (245 → 463 PMUs of demand on 54 edges) and the section model's cut of 12 sections fits
  after balancing; bert_L-12 training in 4 probes, 32 sections that fit.

The estimate is not a proof: a section unlike any probed may need more (routing can
still fail too), so the buffer level's check and the feedback stay.
"""

from __future__ import annotations

from typing import Iterable, Mapping

from formulations.sections.problem import BufferDemand, Capacity, Section

__all__ = ["learn_demand", "fits_after_balancing"]


def learn_demand(demand: BufferDemand, edges: Iterable, added: Mapping[int, float]) -> int:
    """Raise ``demand`` to what balancing ``added`` (local edge index -> PMUs) on ``edges``
    (the balanced graph's edges, in its order); how many entries it raised.

    Examples
    --------
    >>> from model.graph import Edge
    >>> demand = {("a", "b"): 1}
    >>> learn_demand(demand, [Edge("a", "b"), Edge("b", "c")], {0: 3, 1: 0})
    1
    >>> demand
    {('a', 'b'): 3}
    """
    edges = list(edges)
    raised = 0
    for i, pmus in added.items():
        key = (edges[i].src, edges[i].dst)
        if pmus > demand.get(key, 0):
            demand[key] = pmus
            raised += 1
    return raised


def fits_after_balancing(section: Section, buffer_pmus: float, cap: Capacity) -> bool:
    """Whether ``section`` fits the chip with the ``buffer_pmus`` balancing found for it
    (its own units counted as placement will use them, unscaled).

    >>> s, cap = Section(0, ["a"], pcu=10, pmu=60), Capacity(64, 64, 128, 4)
    >>> fits_after_balancing(s, 4, cap), fits_after_balancing(s, 5, cap)
    (True, False)
    """
    pmu = section.pmu + buffer_pmus
    return (section.pcu <= cap.pcu and pmu <= cap.pmu
            and section.pcu + pmu + section.any <= cap.total and section.agcu <= cap.agcu)
