"""Routing nets over the switch mesh: the negotiated-congestion router (PathFinder).

Every net (one driver, one or more sinks) becomes a tree of directed links from the
driver's site to each sink's site, on the network the net uses; only switches relay
(see :mod:`formulations.routing.problem`).

The router is PathFinder-style (McMurchie and Ebeling, 1995), the background
method of source 000 [0118]-[0119]: every iteration rips up and re-routes the
nets, each by A* searches that grow its tree sink by sink, with link cost

    cost(l) = (base + history(l)) * (1 + present_factor * overuse_if_taken(l))

The present factor grows each iteration up to a cap; history accumulates the
overuse of past iterations, so a contested link gets dearer until only the
nets that need it most keep it. It stops when no link is over capacity, or
after ``max_iterations`` with the list of over-used links.

It is the warm start and baseline of the exact routing model
(:func:`formulations.routing.model.route_model`). It needs no solver: the
:class:`~formulations.solver.SolveSettings` of the router signature are accepted
and unused (the search is deterministic and bounded by ``max_iterations``).
"""

from __future__ import annotations

import heapq
import logging
import time
from typing import Callable

from formulations.routing.problem import (FabricView, RouterConfig, RoutingResult,
                                          describe_overuse, edge_paths, net_network,
                                          overused_links)
from formulations.solver import SolveSettings, stop_requested
from hardware import RduFabric
from model.graph import Graph

__all__ = ["route_negotiated"]

log = logging.getLogger(__name__)


def route_negotiated(graph: Graph, fabric: RduFabric, placement: dict[str, str],
                     settings: SolveSettings | None = None, *,
                     config: RouterConfig | None = None,
                     progress: Callable[[str], None] | None = None) -> RoutingResult:
    """Route every net of ``graph`` between the sites of ``placement``.

    Parameters
    ----------
    graph : the section to route (every node placed).
    fabric : a :class:`hardware.RduFabric`.
    placement : node id -> site id.
    settings : the run's solve settings: no solver and no time limit (the search is bounded
        by ``config.max_iterations``), but its ``deadline`` stops the iterations, after a
        whole one, with ``extra["cut_short"]`` (a large congested section can take seconds
        an iteration).
    config : router knobs (default :class:`RouterConfig`).
    progress : called with one log line per iteration.

    Returns
    -------
    RoutingResult
        ``success`` False means some link stayed over capacity: ``overused``
        lists them with the nets that share them.
    """
    config = config or RouterConfig()
    fab = FabricView(fabric)
    nets = [(net, net_network(graph, net)) for net in graph.nets
            if any(placement[s] != placement[net.driver] for s in net.sinks)]
    history = [0.0] * len(fab.link_ids)
    load: dict[tuple[int, str], int] = {}
    trees: dict[str, list[int]] = {}
    result = RoutingResult(success=False)
    present = config.present_factor
    stop_at = settings.deadline if settings is not None else None
    for iteration in range(1, config.max_iterations + 1):
        if iteration > 1 and ((stop_at is not None and time.monotonic() >= stop_at)
                              or stop_requested()):     # the run is interrupted
            result.extra["cut_short"] = True
            break
        for net, network in nets:
            _rip_up(trees.pop(net.id, []), network, load)
            tree = _route_net(fab, net, network, placement, load, history, present, config)
            trees[net.id] = tree
            for link in tree:
                load[(link, network)] = load.get((link, network), 0) + 1
        over = overused_links(fab, load)
        line = (f"routing iteration {iteration}: {len(over)} links over capacity "
                f"(excess {sum(x for _, _, x in over)}), wirelength "
                f"{sum(len(t) for t in trees.values())}, present factor {present:.3g}")
        result.log.append(line)
        log.debug(line)
        if progress:
            progress(line)
        result.iterations = iteration
        if not over:
            result.success = True
            break
        for link, _, excess in over:
            history[link] += config.history_factor * excess
        present = min(present * config.present_growth, config.present_cap)
    result.trees = {nid: [fab.link_ids[l] for l in tree] for nid, tree in trees.items()}
    result.paths = edge_paths(fab, graph, nets, trees, placement)
    if not result.success:
        result.overused = describe_overuse(fab, load, nets, trees)
    return result


def _rip_up(tree: list[int], network: str, load: dict) -> None:
    for link in tree:
        load[(link, network)] -= 1


def _route_net(fab: FabricView, net, network: str, placement: dict[str, str], load: dict,
               history: list[float], present: float, config: RouterConfig) -> list[int]:
    """Grow a tree from the driver's site to each sink's site (nearest sink first)."""
    root = fab.index[placement[net.driver]]
    targets = sorted({fab.index[placement[s]] for s in net.sinks} - {root},
                     key=lambda t: (fab.heuristic(root, t), t))
    in_tree = {root}
    tree: list[int] = []
    for target in targets:
        if target in in_tree:
            continue
        path = _astar(fab, in_tree, root, target, network, load, history, present, config)
        for link in path:
            if link not in tree:
                tree.append(link)
            in_tree.add(fab.link_head[link])
    return tree


def _link_cost(fab: FabricView, link: int, network: str, load: dict, history: list[float],
               present: float, config: RouterConfig) -> float:
    capacity = fab.capacity[link].get(network, 0)
    overuse = max(0, load.get((link, network), 0) + 1 - capacity)
    return (config.base_cost + history[link]) * (1.0 + present * overuse)


def _astar(fab: FabricView, sources: set[int], root: int, target: int, network: str, load: dict,
           history: list[float], present: float, config: RouterConfig) -> list[int]:
    """Cheapest path from any tree vertex to ``target``; only switches relay."""
    best = {s: 0.0 for s in sources}
    came: dict[int, tuple[int, int]] = {}
    heap = [(fab.heuristic(s, target), 0.0, s) for s in sorted(sources)]
    heapq.heapify(heap)
    while heap:
        _, cost, node = heapq.heappop(heap)
        if node == target:
            break
        if cost > best.get(node, float("inf")):
            continue
        if node != root and not fab.relay[node]:
            continue  # a unit's site is an end point, never a hop
        for head, link in fab.out[node]:
            if fab.capacity[link].get(network, 0) <= 0:
                continue
            if not fab.relay[head] and head != target:
                continue
            new = cost + _link_cost(fab, link, network, load, history, present, config)
            if new < best.get(head, float("inf")):
                best[head] = new
                came[head] = (node, link)
                heapq.heappush(heap, (new + fab.heuristic(head, target), new, head))
    if target not in came:
        raise RuntimeError(f"no path to {fab.names[target]} on the {network} network")
    path = []
    node = target
    while node not in sources:
        node, link = came[node]
        path.append(link)
    return path[::-1]

