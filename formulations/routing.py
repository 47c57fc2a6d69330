"""Routing nets over the switch mesh: the negotiated-congestion router.

Every net (one driver, one or more sinks) becomes a tree of directed links
from the driver's site to each sink's site, on the network the net uses
(:attr:`model.graph.Edge.network`: vector, or scalar for one-word values). Only switches relay: a unit or AGCU is only ever
the first or the last vertex of a path.

The router is PathFinder-style (McMurchie and Ebeling, 1995), the background
method of source 000 [0118]-[0119]: every iteration rips up and re-routes the
nets, each by A* searches that grow its tree sink by sink, with link cost

    cost(l) = (base + history(l)) * (1 + present_factor * overuse_if_taken(l))

The present factor grows each iteration up to a cap; history accumulates the
overuse of past iterations, so a contested link gets dearer until only the
nets that need it most keep it. It stops when no link is over capacity, or
after ``max_iterations`` with the list of over-used links.

It is the warm start and baseline of the exact routing model (issue 5).
"""

from __future__ import annotations

import heapq
import logging
from dataclasses import dataclass, field
from typing import Callable

from model.graph import Graph

__all__ = ["RouterConfig", "RoutingResult", "Overuse", "ROUTERS", "route_negotiated",
           "net_network"]

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class RouterConfig:
    """Knobs of the negotiated-congestion router (PathFinder names)."""

    max_iterations: int = 60
    base_cost: float = 1.0
    present_factor: float = 0.5       # first iteration's present-congestion factor
    present_growth: float = 1.6       # multiplied in every iteration
    present_cap: float = 1e4          # the present factor never exceeds this
    history_factor: float = 0.3       # added per unit of overuse per iteration


@dataclass(frozen=True)
class Overuse:
    """One link carrying more nets than it has channels."""

    link: str
    network: str
    load: int
    capacity: int
    nets: tuple[str, ...]


@dataclass
class RoutingResult:
    """Trees per net (link ids) and paths per edge; ``overused`` empty on success."""

    success: bool
    trees: dict[str, list[str]] = field(default_factory=dict)    # net id -> link ids
    paths: dict[int, list[str]] = field(default_factory=dict)    # edge index -> link ids
    iterations: int = 0
    overused: list[Overuse] = field(default_factory=list)
    log: list[str] = field(default_factory=list)
    method: str = "negotiated congestion"
    bound: float | None = None          # a proven lower bound on wirelength, from a model
    backend: str | None = None
    extra: dict = field(default_factory=dict)

    @property
    def wirelength(self) -> int:
        """Links used, each net counted once per link."""
        return sum(len(t) for t in self.trees.values())


def net_network(graph: Graph, net) -> str:
    """The network a net travels on (see :attr:`model.graph.Edge.network`)."""
    return graph.edges[net.edges[0]].network


class _Fabric:
    """The fabric as integer arrays, for fast searches."""

    def __init__(self, fabric):
        self.names = list(fabric.graph.nodes)
        self.index = {n: k for k, n in enumerate(self.names)}
        self.relay = [fabric.graph.nodes[n].get("kind") == "switch" for n in self.names]
        self.pos = [fabric.graph.nodes[n]["pos"] for n in self.names]
        self.link_ids: list[str] = []
        self.link_head: list[int] = []
        self.link_tail: list[int] = []
        self.capacity: list[dict[str, int]] = []
        self.out: list[list[tuple[int, int]]] = [[] for _ in self.names]
        for u, v, data in fabric.graph.edges(data=True):
            link = len(self.link_ids)
            self.link_ids.append(data["id"])
            self.link_head.append(self.index[v])
            self.link_tail.append(self.index[u])
            self.capacity.append(dict(data["capacity"]))
            self.out[self.index[u]].append((self.index[v], link))

    def heuristic(self, a: int, b: int) -> float:
        (xa, ya), (xb, yb) = self.pos[a], self.pos[b]
        return max(0.0, abs(xa - xb) + abs(ya - yb) - 2.0)


def route_negotiated(graph: Graph, fabric, placement: dict[str, str],
                     config: RouterConfig | None = None,
                     progress: Callable[[str], None] | None = None) -> RoutingResult:
    """Route every net of ``graph`` between the sites of ``placement``.

    Parameters
    ----------
    graph : the section to route (every node placed).
    fabric : a :class:`hardware.RduFabric`.
    placement : node id -> site id.
    config : router knobs.
    progress : called with one log line per iteration.

    Returns
    -------
    RoutingResult
        ``success`` False means some link stayed over capacity: ``overused``
        lists them with the nets that share them.
    """
    config = config or RouterConfig()
    fab = _Fabric(fabric)
    nets = [(net, net_network(graph, net)) for net in graph.nets
            if any(placement[s] != placement[net.driver] for s in net.sinks)]
    history = [0.0] * len(fab.link_ids)
    load: dict[tuple[int, str], int] = {}
    trees: dict[str, list[int]] = {}
    result = RoutingResult(success=False)
    present = config.present_factor
    for iteration in range(1, config.max_iterations + 1):
        for net, network in nets:
            _rip_up(trees.pop(net.id, []), network, load)
            tree = _route_net(fab, net, network, placement, load, history, present, config)
            trees[net.id] = tree
            for link in tree:
                load[(link, network)] = load.get((link, network), 0) + 1
        over = _overused(fab, load)
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
    result.paths = _edge_paths(fab, graph, nets, trees, placement)
    if not result.success:
        result.overused = _describe_overuse(fab, load, nets, trees)
    return result


def _rip_up(tree: list[int], network: str, load: dict) -> None:
    for link in tree:
        load[(link, network)] -= 1


def _route_net(fab: _Fabric, net, network: str, placement: dict[str, str], load: dict,
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


def _link_cost(fab: _Fabric, link: int, network: str, load: dict, history: list[float],
               present: float, config: RouterConfig) -> float:
    capacity = fab.capacity[link].get(network, 0)
    overuse = max(0, load.get((link, network), 0) + 1 - capacity)
    return (config.base_cost + history[link]) * (1.0 + present * overuse)


def _astar(fab: _Fabric, sources: set[int], root: int, target: int, network: str, load: dict,
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


def _overused(fab: _Fabric, load: dict) -> list[tuple[int, str, int]]:
    over = []
    for (link, network), used in sorted(load.items()):
        excess = used - fab.capacity[link].get(network, 0)
        if excess > 0:
            over.append((link, network, excess))
    return over


def _describe_overuse(fab: _Fabric, load: dict, nets, trees) -> list[Overuse]:
    users: dict[tuple[int, str], list[str]] = {}
    for net, network in nets:
        for link in trees.get(net.id, []):
            users.setdefault((link, network), []).append(net.id)
    return [Overuse(fab.link_ids[link], network, load[(link, network)],
                    fab.capacity[link].get(network, 0), tuple(users[(link, network)]))
            for link, network, _ in _overused(fab, load)]


def _edge_paths(fab: _Fabric, graph: Graph, nets, trees, placement) -> dict[int, list[str]]:
    """Each edge's path inside its net's tree, from the driver's site to its sink's."""
    paths: dict[int, list[str]] = {}
    for net, _ in nets:
        parent = {fab.link_head[l]: l for l in trees[net.id]}
        for i in net.edges:
            node = fab.index[placement[graph.edges[i].dst]]
            path = []
            while node in parent:
                link = parent[node]
                path.append(fab.link_ids[link])
                node = fab.link_tail[link]
            paths[i] = path[::-1]
    return paths


def _route_negotiated_entry(graph: Graph, fabric, placement: dict[str, str], *,
                            progress: Callable[[str], None] | None = None,
                            router_config: RouterConfig | None = None,
                            **_options) -> RoutingResult:
    return route_negotiated(graph, fabric, placement, router_config, progress)


#: Routers by name, for ``--router``: ``f(graph, fabric, placement, *, backend, time_limit,
#: seed, export_dir, progress) -> RoutingResult`` (``success`` False with ``overused``
#: when links stay over capacity).
ROUTERS: dict[str, Callable[..., RoutingResult]] = {"negotiated": _route_negotiated_entry}
