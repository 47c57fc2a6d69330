"""The pairwise "raise the lesser path" heuristic of source 001 (FIG. 12), and warm starts.

:func:`pairwise_balance` is the baseline the patent argues against ([0170]): visit the joins
in some order and, at each, raise every input that arrives early up to the latest one by
tuning the buffer that feeds the join; when insertion is allowed, a buffer shared by several
consumers is not tuned but gets a whole buffer inserted next to the join (and in insert-only
mode every raise is an insertion). In tune-only mode, raising a buffer that feeds several
joins can unbalance a join visited earlier, so one pass depends on the order: on FIG. 12,
order (J2, J1) ends at 5/5/4 with J2 unbalanced, order (J1, J2) at 5/5/5. ``rounds > 1``
repeats the pass until nothing changes (tune-only may still stop unbalanced, or keep
raising when no tuning balances the section; it never minimises PMUs).

:func:`warm_start` gives :func:`formulations.buffers.model.solve_buffers` a feasible start: with
insertion allowed, every node at its latest input arrival (loads 0) and a new buffer filling
each early input; in tune-only mode, the repeated pairwise pass when it balances.

Caveats
-------
* Arrival depths are longest-path sums from the sources at load time 0: the heuristic never
  shifts load times.
"""

from __future__ import annotations

from dataclasses import dataclass

from formulations.buffers.problem import (BufferProblem, arrival_depths, pmus_for,
                                          unbalanced_joins)

__all__ = ["HeuristicAnswer", "pairwise_balance", "warm_start"]


@dataclass(frozen=True)
class HeuristicAnswer:
    """Depths per buffer and per insertion slot after the heuristic, and what is left."""

    depths: list[int]
    new_depths: list[int]
    unbalanced: list[str]
    pmus: int
    rounds: int

    @property
    def balanced(self) -> bool:
        return not self.unbalanced


def pairwise_balance(problem: BufferProblem, order=None, rounds: int = 1) -> HeuristicAnswer:
    """Raise the lesser inputs join by join, in ``order`` (default: topological).

    Parameters
    ----------
    problem : formulations.buffers.problem.BufferProblem
    order : sequence of str, optional
        Joins in the order to visit them.
    rounds : int, default 1
        Passes over the joins; stops early when a pass changes nothing.

    Returns
    -------
    HeuristicAnswer

    Examples
    --------
    >>> from formulations.buffers.problem import BufferOptions, buffer_problem
    >>> from model.graph import Edge, Graph, Node
    >>> fig12 = Graph("fig12", [Node(n) for n in ("L", "P1", "P2", "P3", "J1", "J2")],
    ...               [Edge("L", "P1"), Edge("L", "P2"), Edge("L", "P3"),
    ...                Edge("P1", "J1", depth=5), Edge("P2", "J1", depth=3, net="p2"),
    ...                Edge("P2", "J2", depth=3, net="p2"), Edge("P3", "J2", depth=4)])
    >>> p = buffer_problem(fig12, options=BufferOptions(mode="tune", depth_per_pmu=1))
    >>> a = pairwise_balance(p, order=["J2", "J1"])
    >>> a.depths[3:], a.unbalanced
    ([5, 5, 4], ['J2'])
    >>> pairwise_balance(p, order=["J1", "J2"]).depths[3:]
    [5, 5, 5]
    """

    topological = order is None
    order = list(problem.joins if order is None else order)
    unknown = [v for v in order if v not in problem.inputs or len(problem.inputs[v]) < 2]
    if unknown:
        raise ValueError(f"not joins of {problem.graph.name}: {', '.join(map(str, unknown))}")
    depths = [b.original_depth for b in problem.buffers]
    new_depths = [0] * len(problem.slots)
    done = 0
    for done in range(1, max(1, rounds) + 1):
        if topological:
            changed = _topological_pass(problem, depths, new_depths)
        else:
            changed = False
            for join in order:
                arrival = arrival_depths(problem, depths, new_depths)
                changed |= _raise_lesser(problem, join, depths, new_depths, arrival)
        if not changed:
            break
    strict = problem.options.strict_new_capacity
    pmus = sum(pmus_for(depths[b.index], b.capacity) for b in problem.buffers) + sum(
        pmus_for(new_depths[k.index], k.capacity, strict) for k in problem.slots)
    return HeuristicAnswer(depths, new_depths, unbalanced_joins(problem, depths, new_depths),
                           pmus, done)


def _topological_pass(problem, depths, new_depths) -> bool:
    """One pass over the joins in topological order, arrivals computed on the way (O(E))."""
    arrival: dict[str, int] = {}
    changed = False
    for v in problem.nodes:
        ins = problem.inputs.get(v, ())
        if len(ins) >= 2:
            changed |= _raise_lesser(problem, v, depths, new_depths, arrival)
        arrival[v] = max((_input(problem, arrival, b, v, depths, new_depths) for b in ins),
                         default=0)
    return changed


def _raise_lesser(problem, join, depths, new_depths, arrival) -> bool:
    inputs = {b: _input(problem, arrival, b, join, depths, new_depths)
              for b in problem.inputs[join]}
    latest = max(inputs.values())
    changed = False
    for b, at in sorted(inputs.items()):
        if at < latest:
            slot = problem.slot_of(b, join)
            shared = len(problem.buffers[b].sinks) > 1
            if slot is None or (problem.options.tuning and not shared):
                depths[b] += latest - at
            else:
                new_depths[slot.index] += latest - at
            changed = True
    return changed


def _input(problem, arrival, b, join, depths, new_depths) -> int:
    slot = problem.slot_of(b, join)
    extra = new_depths[slot.index] if slot is not None else 0
    return arrival[problem.buffers[b].driver] + depths[b] + extra


def warm_start(problem):
    """A feasible ``(depths, new_depths, arrival)`` for the model, or None if none is known.

    Examples
    --------
    >>> from formulations.buffers.problem import buffer_problem
    >>> from model.graph import Graph, Node, Edge
    >>> g = Graph("d", [Node(n) for n in "fabj"], [Edge("f", "a"), Edge("a", "j", depth=2),
    ...                                             Edge("f", "b"), Edge("b", "j")])
    >>> depths, new_depths, arrival = warm_start(buffer_problem(g))
    >>> new_depths, arrival["j"]
    ([0, 1], 3)
    """

    if problem.options.insertion:
        depths = [b.original_depth for b in problem.buffers]
        arrival = arrival_depths(problem, depths)
        new_depths = [0] * len(problem.slots)
        for k in problem.slots:
            buf = problem.buffers[k.buffer]
            new_depths[k.index] = arrival[k.join] - arrival[buf.driver] - depths[k.buffer]
        return depths, new_depths, arrival
    answer = pairwise_balance(problem, rounds=len(problem.joins) + 1)
    if not answer.balanced:
        return None
    return answer.depths, answer.new_depths, arrival_depths(problem, answer.depths)
