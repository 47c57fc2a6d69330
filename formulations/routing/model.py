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

It is the warm start and baseline of the exact routing model (issue 5):

:func:`route_model` (registry ``model``: on HiGHS; ``milp``; ``cp-sat``) is a
multi-commodity flow model. Data: per net its root, sinks and the links it may
use (the box of its terminals and warm tree plus :data:`REGION_MARGIN`
switches, grown step by step up to the whole mesh while links stay over
capacity; a unit is only a first or last vertex). Variables: ``u[net, link]``
(link in the net's tree), ``f[net, sink, link]`` (the sink's path), ``over`` per
link, ``z`` the maximum load. Constraints: ``flow`` (one unit from root to each
sink), ``tree`` (``f <= u``), ``steiner`` (a tree enters every vertex at most
once), ``capacity`` (nets per link and network within its channels, soft: the
``over`` variables pay first), ``max_load``. Objective, lexicographic: overflow,
links used, maximum link load. A section with at most :data:`MAX_ROUTE_VARS`
flow variables is one model (optimal answers come with a bound: the wirelength
gap, valid for the nets' regions); bigger ones are re-routed chunk by chunk
with the other nets fixed. The
answer is never worse than PathFinder's. When the overflow stays positive the
result names the over-used links (``overused``), and ``extra["proven_unroutable"]``
says whether the model proved that no routing of this placement fits.
"""

from __future__ import annotations

import heapq
import logging
import math
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from model.graph import Graph

__all__ = ["RouterConfig", "RoutingResult", "Overuse", "ROUTERS", "route_negotiated",
           "net_network", "route_model", "route_default", "route_milp", "route_cpsat", "build_routing_model",
           "MAX_ROUTE_VARS"]

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
        self.index_of_link: dict[str, int] = {}
        for u, v, data in fabric.graph.edges(data=True):
            link = len(self.link_ids)
            self.index_of_link[data["id"]] = link
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


# =============================================================================================
# The exact routing model: multi-commodity flow with Steiner-tree constraints
# =============================================================================================

#: The whole section is one model when it has at most this many flow variables; above it,
#: the model re-routes chunks of nets with the others fixed (a large-neighbourhood search).
MAX_ROUTE_VARS = 12000
#: Switches a net may use beyond the bounding box of its terminals (and of its warm start).
REGION_MARGIN = 2


@dataclass
class _NetData:
    """One net of the model: root, sinks, the links it may use, and its current tree."""

    id: str
    network: str
    root: int
    sinks: list[int]
    links: list[int]
    tree: list[int]


def _region_links(fab: _Fabric, root: int, sinks: list[int], tree: list[int],
                  margin: int) -> list[int]:
    """Links a net may use: inside the box of its terminals and warm tree, plus ``margin``."""
    points = [fab.pos[root]] + [fab.pos[t] for t in sinks] + [fab.pos[fab.link_head[l]]
                                                              for l in tree]
    xs, ys = [p[0] for p in points], [p[1] for p in points]
    box = (min(xs) - margin - 1, max(xs) + margin + 1, min(ys) - margin - 1, max(ys) + margin + 1)
    ends = set(sinks)

    def inside(v: int) -> bool:
        x, y = fab.pos[v]
        return box[0] <= x <= box[1] and box[2] <= y <= box[3]

    links = []
    for link in range(len(fab.link_ids)):
        u, v = fab.link_tail[link], fab.link_head[link]
        if not (fab.relay[u] or u == root) or not (fab.relay[v] or v in ends):
            continue
        if inside(u) and inside(v):
            links.append(link)
    return sorted(set(links) | set(tree))


def _net_data(graph: Graph, fab: _Fabric, placement, trees: dict[str, list[int]],
              margin: int) -> list[_NetData]:
    out = []
    for net in graph.nets:
        root = fab.index[placement[net.driver]]
        sinks = sorted({fab.index[placement[s]] for s in net.sinks} - {root})
        if not sinks:
            continue
        network = net_network(graph, net)
        tree = trees.get(net.id, [])
        links = [l for l in _region_links(fab, root, sinks, tree, margin)
                 if fab.capacity[l].get(network, 0) > 0]
        out.append(_NetData(net.id, network, root, sinks, links, tree))
    return out


def build_routing_model(fab: _Fabric, nets: list[_NetData], fixed_load: dict):
    """The routing MILP of ``nets``; ``fixed_load`` holds the load of the other nets.

    data → variables (``u[net, link]`` tree links, ``f[net, sink, link]`` flows, ``over``
    per shared link, ``z`` the maximum load) → constraints (families ``flow``, ``tree``,
    ``steiner`` (in-degree ≤ 1), ``capacity``, ``max_load``) → objective (overflow first,
    then links used, then the maximum link load).  Returns ``(model, u, f, weights)``.
    """
    from formulations.solver import LinearModel
    model = LinearModel("routing")
    u = {(k, l): model.add_binary(f"u{k}_{l}") for k, n in enumerate(nets) for l in n.links}
    f = {(k, t, l): model.add_binary(f"f{k}_{t}_{l}") for k, n in enumerate(nets)
         for t in n.sinks for l in n.links if _commodity_may_use(fab, n, t, l)}
    _add_flow(model, fab, nets, f)
    _add_tree(model, fab, nets, u, f)
    over, z, z_max = _add_capacity(model, fab, nets, u, fixed_load)
    link_weight = z_max + 1
    over_weight = link_weight * (len(u) + 1)
    from formulations.solver import quicksum
    model.minimize(over_weight * quicksum(over.values()) + link_weight * quicksum(u.values()) + z)
    return model, u, f, {"link": link_weight, "over": over_weight, "over_vars": over, "z": z}


def _commodity_may_use(fab: _Fabric, net: _NetData, sink: int, link: int) -> bool:
    head = fab.link_head[link]
    return fab.relay[head] or head == sink


def _add_flow(model, fab: _Fabric, nets, f) -> None:
    """One unit of flow from the root to each sink (family ``flow``)."""
    rows: dict[tuple[int, int, int], tuple[list, list]] = {}
    for (k, t, l), var in f.items():
        for vertex, sign in ((fab.link_tail[l], 1.0), (fab.link_head[l], -1.0)):
            vars_, coefs = rows.setdefault((k, t, vertex), ([], []))
            vars_.append(var)
            coefs.append(sign)
    for k, n in enumerate(nets):
        for t in n.sinks:
            for v in {n.root, t}:
                rows.setdefault((k, t, v), ([], []))
    for (k, t, vertex), (vars_, coefs) in sorted(rows.items()):
        rhs = 1.0 if vertex == nets[k].root else (-1.0 if vertex == t else 0.0)
        model.add_row(vars_, coefs, rhs, rhs, family="flow")


def _add_tree(model, fab: _Fabric, nets, u, f) -> None:
    """Flows only on tree links (``tree``); a tree enters every vertex once (``steiner``)."""
    for (k, t, l), var in f.items():
        model.add_row([var, u[k, l]], [1.0, -1.0], -np.inf, 0.0, family="tree")
    into: dict[tuple[int, int], list] = {}
    for (k, l), var in u.items():
        into.setdefault((k, fab.link_head[l]), []).append(var)
    for key, vars_ in sorted(into.items()):
        if len(vars_) > 1:
            model.add_row(vars_, [1.0] * len(vars_), -np.inf, 1.0, family="steiner")


def _add_capacity(model, fab: _Fabric, nets, u, fixed_load):
    """Channels per link and network (``capacity``, soft: ``over`` pays) and ``max_load``."""
    users: dict[tuple[int, str], list] = {}
    for (k, l), var in u.items():
        users.setdefault((l, nets[k].network), []).append(var)
    z_max = max([len(v) + fixed_load.get(key, 0) for key, v in users.items()] + [1])
    z = model.add_var("z_max_load", 0, z_max, integer=True)
    over = {}
    for (l, network), vars_ in sorted(users.items()):
        fixed = fixed_load.get((l, network), 0)
        room = fab.capacity[l].get(network, 0) - fixed
        if len(vars_) > room:
            over[l, network] = model.add_var(f"over_{l}_{network}", 0, len(vars_), integer=True)
            model.add_row(vars_ + [over[l, network]], [1.0] * len(vars_) + [-1.0], -np.inf,
                          room, family="capacity")
        model.add_row(vars_ + [z], [1.0] * len(vars_) + [-1.0], -np.inf, -fixed,
                      family="max_load")
    return over, z, z_max


def _routing_hint(fab: _Fabric, nets, u, f) -> dict:
    hint = {var: 0.0 for var in u.values()} | {var: 0.0 for var in f.values()}
    for k, n in enumerate(nets):
        parent = {fab.link_head[l]: l for l in n.tree}
        for l in n.tree:
            if (k, l) in u:
                hint[u[k, l]] = 1.0
        for t in n.sinks:
            for l in _walk_back(fab, parent, n.root, t) or []:
                if (k, t, l) in f:
                    hint[f[k, t, l]] = 1.0
    return hint


def _walk_back(fab: _Fabric, parent: dict[int, int], root: int, sink: int) -> list[int] | None:
    """The links from ``root`` to ``sink`` following each vertex's unique in-link."""
    path, node, seen = [], sink, set()
    while node != root:
        if node in seen or node not in parent:
            return None
        seen.add(node)
        path.append(parent[node])
        node = fab.link_tail[parent[node]]
    return path[::-1]


def _decode_trees(fab: _Fabric, nets, u, result) -> dict[str, list[int]]:
    """Each net's tree: the union of its sinks' paths (falls back to the warm tree)."""
    trees = {}
    for k, n in enumerate(nets):
        parent = {fab.link_head[l]: l for l in n.links if result.value(u[k, l], 0.0) > 0.5}
        paths = [_walk_back(fab, parent, n.root, t) for t in n.sinks]
        if any(p is None for p in paths):
            trees[n.id] = list(n.tree)
            continue
        trees[n.id] = sorted({l for p in paths for l in p})
    return trees


def _loads(nets: list[_NetData], trees: dict[str, list[int]]) -> dict[tuple[int, str], int]:
    load: dict[tuple[int, str], int] = {}
    for n in nets:
        for l in trees.get(n.id, []):
            load[(l, n.network)] = load.get((l, n.network), 0) + 1
    return load


def _score(fab: _Fabric, nets, trees) -> tuple[int, int, int]:
    """(overflow, links used, max load): the model's lexicographic objective (a net
    without a tree counts as one unit of overflow)."""
    load = _loads(nets, trees)
    overflow = sum(max(0, c - fab.capacity[l].get(net, 0)) for (l, net), c in load.items())
    overflow += sum(1 for n in nets if not trees.get(n.id))
    return overflow, sum(len(trees.get(n.id, [])) for n in nets), max(load.values(), default=0)


def route_model(graph: Graph, fabric, placement: dict[str, str], *, backend: str = "cp-sat",
                time_limit: float = 10.0, seed: int = 0, export_dir: str | None = None,
                progress: Callable[[str], None] | None = None,
                router_config: RouterConfig | None = None, margin: int = REGION_MARGIN,
                warm_start: bool = True, **_options) -> RoutingResult:
    """Exact routing (multi-commodity flow + Steiner-tree rows), warm-started by PathFinder.

    Parameters
    ----------
    graph, fabric, placement : the section, the chip, node -> site.
    backend : a LinearModel backend (``cp-sat`` or a MILP solver such as ``highs``).
    time_limit : seconds for all solves together.
    seed : solver seed.
    export_dir : when set, the whole-section model is written there as ``routing_<graph name>.mps``.
    progress : called with one line per solve.
    router_config : knobs of the negotiated-congestion warm start.
    margin : switches a net may stray beyond the box of its terminals and warm tree at
        first; while links stay over capacity the regions grow (``2 * margin + 2``, ...)
        until they cover the whole mesh (``extra["region_margins"]`` lists the margins
        tried).
    warm_start : start from the negotiated router's trees (hint and region); False
        routes from the terminals' boxes alone (for tests and ablations).

    Returns
    -------
    RoutingResult
        Never worse than the warm start (overflow, then links, then max load); ``bound``
        is a proven lower bound on links used when the whole section was one model;
        ``extra`` holds the warm start's wirelength, the model's status and gap.

    Examples
    --------
    >>> from hardware import build_fabric, load_hardware
    >>> from model.graph import Graph, Node, Edge
    >>> g = Graph("t", [Node("a", unit="pcu"), Node("b", unit="pmu")], [Edge("a", "b")])
    >>> r = route_model(g, build_fabric(load_hardware("tiny")), {"a": "U0_0", "b": "U0_3"})
    >>> r.success, r.wirelength, r.bound
    (True, 4, 4.0)
    """
    import time as _time
    started = _time.perf_counter()
    warm = route_negotiated(graph, fabric, placement, router_config)
    fab = _Fabric(fabric)
    trees = {nid: [fab.index_of_link[l] for l in t] for nid, t in warm.trees.items()}
    if not warm_start:
        trees = {}
        warm.success = False
    nets = _net_data(graph, fab, placement, trees, margin)
    extra = {"warm_start_wirelength": warm.wirelength, "warm_start_success": warm.success,
             "first_solution_time": round(_time.perf_counter() - started, 4)}
    if export_dir:
        _export_routing(fab, nets, export_dir, graph.name)
    deadline = started + time_limit
    margins = _growing_margins(fab, margin)
    tried: list[int] = []
    for position, current in enumerate(margins):
        if position and (_score(fab, nets, trees)[0] == 0 or _time.perf_counter() > deadline - 0.2):
            break
        nets = _net_data(graph, fab, placement, trees, current)
        left = deadline - _time.perf_counter()
        last = position == len(margins) - 1 or (position == 0 and warm.success)
        share = left if last else 0.5 * left
        bound, status, solved, chunks = _solve_region(fab, nets, trees, backend,
                                                      _time.perf_counter() + share, seed,
                                                      progress)
        tried.append(current)
    whole_mesh = tried[-1] >= margins[-1]
    if not whole_mesh and status == "OPTIMAL":
        status = "FEASIBLE"      # optimal inside a region only: no proof for the whole mesh
    return _routing_result(graph, fab, nets, trees, placement, backend, status, bound,
                           extra | {"chunks": chunks, "chunks_solved": solved,
                                    "region_margins": tried,
                                    "final_time": round(_time.perf_counter() - started, 4)})


def _growing_margins(fab: _Fabric, margin: int) -> list[int]:
    """``margin``, then wider regions until one covers the whole mesh (tried in turn while
    the routing stays over capacity)."""
    xs, ys = [p[0] for p in fab.pos], [p[1] for p in fab.pos]
    whole = int(math.ceil(max(max(xs) - min(xs), max(ys) - min(ys)))) + 1
    margins = [margin]
    while margins[-1] < whole:
        margins.append(min(whole, 2 * margins[-1] + 2))
    return margins


def _solve_region(fab, nets, trees, backend, deadline, seed, progress):
    """Solve the nets chunk by chunk inside their regions; updates ``trees`` in place.

    Returns ``(bound, status, chunks solved, chunks)``."""
    import time as _time
    chunks = _chunks(fab, nets)
    bound, status, solved = None, "FEASIBLE", 0
    for position, chunk in enumerate(chunks):
        left = (deadline - _time.perf_counter()) / (len(chunks) - position)
        if left < 0.1:
            break
        result, new = _solve_chunk(fab, nets, chunk, trees, backend, left, seed)
        solved += 1
        if new is not None and _score(fab, nets, trees | new) <= _score(fab, nets, trees):
            trees |= new
        if len(chunks) == 1 and result.has_solution:
            status = result.status.name
            bound = _link_bound(result, nets, trees, fab)
        if progress:
            progress(f"routing model: chunk {solved}/{len(chunks)} {result.status.name}, "
                     f"score {_score(fab, nets, trees)}")
    return bound, status, solved, len(chunks)


def _chunks(fab: _Fabric, nets: list[_NetData]) -> list[list[int]]:
    """Groups of nets whose models stay below :data:`MAX_ROUTE_VARS` flow variables."""
    size = [len(n.links) * len(n.sinks) for n in nets]
    if sum(size) <= MAX_ROUTE_VARS:
        return [list(range(len(nets)))] if nets else []
    chunks, current, total = [], [], 0
    limit = MAX_ROUTE_VARS // 3
    for k in sorted(range(len(nets)), key=lambda k: fab.pos[nets[k].root]):
        if current and total + size[k] > limit:
            chunks.append(current)
            current, total = [], 0
        current.append(k)
        total += size[k]
    return chunks + ([current] if current else [])


def _solve_chunk(fab, nets, chunk, trees, backend, time_limit, seed):
    members = [nets[k] for k in chunk]
    others = [n for k, n in enumerate(nets) if k not in set(chunk)]
    fixed = _loads(others, trees)
    for n in members:
        n.tree = trees.get(n.id, [])
    model, u, f, _ = build_routing_model(fab, members, fixed)
    model.set_hint(_routing_hint(fab, members, u, f))
    result = model.solve(backend=backend, time_limit=time_limit, seed=seed, threads=1)
    if not result.has_solution:
        return result, None
    return result, _decode_trees(fab, members, u, result)


def _link_bound(result, nets, trees, fab) -> float | None:
    if result.bound is None:
        return None
    overflow, links, z = _score(fab, nets, trees)
    if overflow:
        return None
    if result.status.name == "OPTIMAL":
        return float(links)
    weight = _z_cap(fab, nets) + 1
    return float(max(0, math.ceil((result.bound - weight + 1) / weight)))


def _z_cap(fab, nets) -> int:
    counts: dict[tuple[int, str], int] = {}
    for n in nets:
        for l in n.links:
            counts[(l, n.network)] = counts.get((l, n.network), 0) + 1
    return max(list(counts.values()) + [1])


def _routing_result(graph, fab, nets, trees, placement, backend, status, bound, extra
                    ) -> RoutingResult:
    overflow, links, max_load = _score(fab, nets, trees)
    pairs = [(next(x for x in graph.nets if x.id == n.id), n.network) for n in nets]
    load = _loads(nets, trees)
    result = RoutingResult(success=overflow == 0, method=f"routing model ({backend})",
                           backend=backend, bound=bound)
    result.trees = {n.id: [fab.link_ids[l] for l in trees[n.id]] for n in nets}
    result.paths = _edge_paths(fab, graph, pairs, trees, placement)
    if overflow:
        result.overused = _describe_overuse(fab, load, pairs, trees)
        status = "INFEASIBLE" if status == "OPTIMAL" else status
        extra["proven_unroutable"] = status == "INFEASIBLE"
    result.extra = extra | {"model_status": status, "max_link_load": max_load,
                            "gap": None if bound is None or not links else
                            round((links - bound) / links, 4)}
    return result


def _export_routing(fab, nets, export_dir, name: str) -> None:
    """Write the whole-section model as ``routing_<graph name>.mps`` (one file per section)."""
    import re
    from pathlib import Path
    Path(export_dir).mkdir(parents=True, exist_ok=True)
    model, *_ = build_routing_model(fab, nets, {})
    model.write_mps(str(Path(export_dir) / f"routing_{re.sub(r'[^A-Za-z0-9_.-]', '_', name)}.mps"))


def route_milp(graph: Graph, fabric, placement: dict[str, str], **options) -> RoutingResult:
    """:func:`route_model` on the MILP backend ``highs``."""
    options["backend"] = "highs"
    return route_model(graph, fabric, placement, **options)


def route_default(graph: Graph, fabric, placement: dict[str, str], **options) -> RoutingResult:
    """The ``model`` router: :func:`route_model` on a MILP backend.

    The flow formulation's LP relaxation is strong (HiGHS proves most sections
    optimal at the root) while single-worker CP-SAT rarely closes its gap, so
    ``backend="cp-sat"`` (the pipeline's default) is replaced by ``highs`` here;
    any other backend is kept. ``--router cp-sat`` runs the CP-SAT version.
    """
    if options.get("backend", "cp-sat") == "cp-sat":
        options["backend"] = "highs"
    return route_model(graph, fabric, placement, **options)


def route_cpsat(graph: Graph, fabric, placement: dict[str, str], **options) -> RoutingResult:
    """:func:`route_model` on CP-SAT."""
    options["backend"] = "cp-sat"
    return route_model(graph, fabric, placement, **options)


#: Routers by name, for ``--router``: ``f(graph, fabric, placement, *, backend, time_limit,
#: seed, export_dir, progress) -> RoutingResult`` (``success`` False with ``overused``
#: when links stay over capacity).
ROUTERS: dict[str, Callable[..., RoutingResult]] = {
    "negotiated": _route_negotiated_entry, "model": route_default, "milp": route_milp,
    "cp-sat": route_cpsat}
