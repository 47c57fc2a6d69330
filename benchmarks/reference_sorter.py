"""The literal reference of the priority-queue sorter (source 000), and FIG. 9's order.

:func:`reference_sort` is the pseudo-code of digest §3.7 as written: every
iteration re-ranks the whole ODS from the criteria's definitions
(:class:`formulations.sorter.LiteralKeys`), O(V * ODS * E). It shares no
bookkeeping with :func:`formulations.sorter.sort_nodes` (a heap with lazy key
updates), so the tests use it as the oracle and the ``sorter`` benchmark as the
baseline of its speed-up column.

Examples
--------
>>> from pathlib import Path
>>> from model.graphjson import read_graph
>>> fig9 = read_graph(Path(__file__).resolve().parents[1] / "examples" / "fig9.json")
>>> reference_sort(fig9).order == FIG9_ORDER
True
"""

from __future__ import annotations

from formulations.sorter import (LiteralKeys, SorterConfig, SortResult, TraceStep, seed_order,
                                 select_seed)
from model.graph import Graph

__all__ = ["FIG9_ORDER", "reference_sort"]

#: The order FIG. 9 (``examples/fig9.json``) must sort to (DESIGN.md; the patent's final
#: list [0302] drops GRAD1 by mistake, the step-by-step text puts it at position 7).
FIG9_ORDER = (
    "IN0 GRAD0 LOSS0 B0 IN1 LOSS1 GRAD1 IN2 GRAD2 LOSS2 B2 B1 N6 N5 N4 N3 N2 N1"
).split()


def reference_sort(graph: Graph, config: SorterConfig | None = None) -> SortResult:
    """The literal pseudo-code of digest §3.7: re-rank the whole ODS every iteration.

    O(V * ODS * E) -- kept to cross-check :func:`sort_nodes` in the tests. The
    seed is recomputed on the subgraph of the unsorted nodes (1025) for the
    path and bandwidth policies.
    """
    config = config or SorterConfig()
    ids = graph.node_ids
    idrank = {v: r for r, v in enumerate(sorted(ids))}
    literal = LiteralKeys(graph, config)
    fixed_order = seed_order(graph, config)
    unsorted, osn, seeds = set(ids), [], []
    trace: list[TraceStep] | None = [] if config.trace else None
    age: dict[str, int] = {}
    ins: dict[str, int] = {}
    t = 0
    while unsorted:  # 1020
        if config.seed_policy in ("first_in_component", "random"):  # 1025
            seed = next(v for v in fixed_order if v in unsorted)
        else:
            seed = select_seed(graph.subgraph(unsorted), config)
        seeds.append(seed)
        ods, age[seed], ins[seed] = [seed], 0, t + 1  # 1030
        while ods:  # 1035
            cur = ods.pop(0)  # 1040
            osn.append(cur)  # 1045, 1050
            t += 1
            s = set(osn)
            near = {literal.other(i, cur) for i in literal.incident[cur]} & unsorted
            new = sorted(near - s - set(ods), key=idrank.__getitem__)  # 1055
            for m in new:  # 1060
                ods.append(m)
                age[m], ins[m] = 0, t
            for m in ods:
                age[m] += 1
            ranked = {m: literal.keys(m, s, age[m]) for m in ods}
            ods.sort(key=lambda m: (ranked[m], ins[m], idrank[m]))
            unsorted.remove(cur)  # 1070
            if trace is not None:
                trace.append(TraceStep(t, cur, new, [(m, ranked[m]) for m in ods]))
    return SortResult(osn, seeds, config.key_names, trace)  # 1080
