"""The exact routing model: multi-commodity flow with Steiner-tree rows.

:func:`route_model` (router ``model`` of :data:`formulations.routing.routers.ROUTERS`,
on the run's routing backend, HiGHS by default) reads top to bottom:

- data: per net (:class:`RouteNet`) its root, sinks and the links it may use (the box
  of its terminals and warm tree plus :data:`REGION_MARGIN` switches, grown step by
  step up to the whole mesh while links stay over capacity; a unit is only a first or
  last vertex);
- variables: ``u[net, link]`` (link in the net's tree), ``f[net, sink, link]`` (the
  sink's path), ``over`` per link, ``z`` the maximum load;
- constraints: ``flow`` (one unit from root to each sink), ``tree`` (``f <= u``),
  ``steiner`` (a tree enters every vertex at most once), ``capacity`` (nets per link
  and network within its channels, soft: the ``over`` variables pay first),
  ``max_load``;
- objective, lexicographic: overflow, links used, maximum link load;
- solve: a section with at most :data:`MAX_ROUTE_VARS` flow variables is one model
  (optimal answers come with a bound: the wirelength gap, valid for the nets'
  regions); bigger ones are re-routed chunk by chunk with the other nets fixed, only
  while some link is over capacity (:func:`_solve_region`); a section whose nets all
  take as few links as their regions allow, with no link over capacity, is optimal
  without a solve (:func:`_settled`);
- decode: each net's tree is the union of its sinks' paths.

It is warm-started by the negotiated-congestion router
(:mod:`formulations.routing.negotiated`) and its answer is never worse. When the
overflow stays positive the result names the over-used links (``overused``), and
``extra["proven_unroutable"]`` says whether the model proved that no routing of
this placement fits.
"""

from __future__ import annotations

import heapq
import math
import re
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import numpy as np

from formulations.routing.negotiated import route_negotiated
from formulations.routing.problem import (FabricView, RouterConfig, RoutingResult,
                                          describe_overuse, edge_paths, net_network)
from formulations.solver import (Budget, LinearModel, SolveSettings, quicksum, was_cut_short,
                                 work_of, work_options)
from hardware import RduFabric
from model.graph import Graph

__all__ = ["RouteNet", "route_nets", "build_routing_model", "route_model", "MAX_ROUTE_VARS",
           "REGION_MARGIN"]

#: The whole section is one model when it has at most this many flow variables; above it,
#: the model re-routes chunks of nets with the others fixed (a large-neighbourhood search).
MAX_ROUTE_VARS = 12000
#: Switches a net may use beyond the bounding box of its terminals (and of its warm start).
REGION_MARGIN = 2


@dataclass
class RouteNet:
    """One net of the model: root, sinks, the links it may use, and its current tree."""

    id: str
    network: str
    root: int
    sinks: list[int]
    links: list[int]
    tree: list[int]


def _region_links(fab: FabricView, root: int, sinks: list[int], tree: list[int],
                  margin: int) -> list[int]:
    """Links a net may use: inside the box of its terminals and warm tree, plus ``margin``;
    out of the root or a switch, into a sink or a switch."""
    points = [fab.pos[root]] + [fab.pos[t] for t in sinks] + [fab.pos[fab.link_head[l]]
                                                              for l in tree]
    xs, ys = [p[0] for p in points], [p[1] for p in points]
    x0, x1 = min(xs) - margin - 1, max(xs) + margin + 1
    y0, y1 = min(ys) - margin - 1, max(ys) + margin + 1
    (tail_x, tail_y, head_x, head_y), (tail_relay, head_relay) = fab.ends_xy, fab.relay_ends
    usable = ((tail_relay | (fab.tail_array == root))
              & (head_relay | np.isin(fab.head_array, sinks))
              & (x0 <= tail_x) & (tail_x <= x1) & (y0 <= tail_y) & (tail_y <= y1)
              & (x0 <= head_x) & (head_x <= x1) & (y0 <= head_y) & (head_y <= y1))
    return np.union1d(np.flatnonzero(usable), np.array(tree, dtype=np.int64)).tolist()


def route_nets(graph: Graph, fab: FabricView, placement, trees: dict[str, list[int]],
              margin: int) -> list[RouteNet]:
    """The model's nets (those leaving their driver's site): root, sinks, the links inside
    the region of ``margin`` switches, and the current tree from ``trees`` (net id ->
    link indices, empty when absent)."""
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
        out.append(RouteNet(net.id, network, root, sinks, links, tree))
    return out


def build_routing_model(fab: FabricView, nets: list[RouteNet], fixed_load: dict):
    """The routing MILP of ``nets``; ``fixed_load`` holds the load of the other nets.

    data → variables (``u[net, link]`` tree links, ``f[net, sink, link]`` flows, ``over``
    per shared link, ``z`` the maximum load) → constraints (families ``flow``, ``tree``,
    ``steiner`` (in-degree ≤ 1), ``capacity``, ``max_load``) → objective (overflow first,
    then links used, then the maximum link load).  Returns ``(model, u, f, weights)``.
    """
    model = LinearModel("routing")
    u = {(k, l): model.add_binary(f"u{k}_{l}") for k, n in enumerate(nets) for l in n.links}
    f = {(k, t, l): model.add_binary(f"f{k}_{t}_{l}") for k, n in enumerate(nets)
         for t in n.sinks for l in n.links if _commodity_may_use(fab, n, t, l)}
    _add_flow(model, fab, nets, f)
    _add_tree(model, fab, nets, u, f)
    over, z, z_max = _add_capacity(model, fab, nets, u, fixed_load)
    link_weight = z_max + 1
    over_weight = link_weight * (len(u) + 1)
    model.minimize(over_weight * quicksum(over.values()) + link_weight * quicksum(u.values()) + z)
    return model, u, f, {"link": link_weight, "over": over_weight, "over_vars": over, "z": z}


def _commodity_may_use(fab: FabricView, net: RouteNet, sink: int, link: int) -> bool:
    head = fab.link_head[link]
    return fab.relay[head] or head == sink


def _add_flow(model, fab: FabricView, nets, f) -> None:
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


def _add_tree(model, fab: FabricView, nets, u, f) -> None:
    """Flows only on tree links (``tree``); a tree enters every vertex once (``steiner``)."""
    for (k, t, l), var in f.items():
        model.add_row([var, u[k, l]], [1.0, -1.0], -np.inf, 0.0, family="tree")
    into: dict[tuple[int, int], list] = {}
    for (k, l), var in u.items():
        into.setdefault((k, fab.link_head[l]), []).append(var)
    for key, vars_ in sorted(into.items()):
        if len(vars_) > 1:
            model.add_row(vars_, [1.0] * len(vars_), -np.inf, 1.0, family="steiner")


def _add_capacity(model, fab: FabricView, nets, u, fixed_load):
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


def _routing_hint(fab: FabricView, nets, u, f) -> dict:
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


def _walk_back(fab: FabricView, parent: dict[int, int], root: int, sink: int) -> list[int] | None:
    """The links from ``root`` to ``sink`` following each vertex's unique in-link."""
    path, node, seen = [], sink, set()
    while node != root:
        if node in seen or node not in parent:
            return None
        seen.add(node)
        path.append(parent[node])
        node = fab.link_tail[parent[node]]
    return path[::-1]


def _decode_trees(fab: FabricView, nets, u, result) -> dict[str, list[int]]:
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


def _loads(nets: list[RouteNet], trees: dict[str, list[int]]) -> dict[tuple[int, str], int]:
    load: dict[tuple[int, str], int] = {}
    for n in nets:
        for l in trees.get(n.id, []):
            load[(l, n.network)] = load.get((l, n.network), 0) + 1
    return load


def _score(fab: FabricView, nets, trees) -> tuple[int, int, int]:
    """(overflow, links used, max load): the model's lexicographic objective (a net
    without a tree counts as one unit of overflow)."""
    load = _loads(nets, trees)
    overflow = sum(max(0, c - fab.capacity[l].get(net, 0)) for (l, net), c in load.items())
    overflow += sum(1 for n in nets if not trees.get(n.id))
    return overflow, sum(len(trees.get(n.id, [])) for n in nets), max(load.values(), default=0)


def route_model(graph: Graph, fabric: RduFabric, placement: dict[str, str],
                settings: SolveSettings, *, config: RouterConfig | None = None,
                progress: Callable[[str], None] | None = None,
                margin: int = REGION_MARGIN, warm_start: bool = True) -> RoutingResult:
    """Exact routing (multi-commodity flow + Steiner-tree rows), warm-started by PathFinder.

    Parameters
    ----------
    graph, fabric, placement : the section, the chip, node -> site.
    settings : the solve's backend (a LinearModel backend: ``cp-sat`` or a MILP solver
        such as ``highs``, used as given), seconds for all solves together, seed, and
        ``export_dir``: when set, the whole-section model is written there as
        ``routing_<graph name>.mps``.
    config : knobs of the negotiated-congestion warm start.
    progress : called with one line per solve.
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
    >>> r = route_model(g, build_fabric(load_hardware("tiny")), {"a": "U0_0", "b": "U0_3"},
    ...                 SolveSettings(backend="highs"))
    >>> r.success, r.wirelength, r.bound
    (True, 4, 4.0)
    """
    started = time.perf_counter()
    warm = route_negotiated(graph, fabric, placement, settings, config=config)
    fab = FabricView(fabric)
    trees = {nid: [fab.index_of_link[l] for l in t] for nid, t in warm.trees.items()}
    if not warm_start:
        trees = {}
        warm.success = False
    nets = route_nets(graph, fab, placement, trees, margin)
    extra = {"warm_start_wirelength": warm.wirelength, "warm_start_success": warm.success,
             "first_solution_time": round(time.perf_counter() - started, 4)}
    if settings.export_dir:
        _export_routing(fab, nets, settings.export_dir, graph.name)
    # the budget is planned work (solver work limits), the wall clock only the outer cap
    budget = settings.budget()
    margins = _growing_margins(fab, margin)
    tried: list[int] = []
    for position, current in enumerate(margins):
        if position and (_score(fab, nets, trees)[0] == 0 or budget.left() < 0.2
                         or budget.wall_out()):
            break
        nets = route_nets(graph, fab, placement, trees, current)
        left = budget.left()
        last = position == len(margins) - 1 or (position == 0 and warm.success)
        share = left if last else 0.5 * left
        bound, status, solved, chunks = _solve_region(fab, nets, trees, settings.backend,
                                                      budget.share(share), settings.seed,
                                                      progress)
        tried.append(current)
    if budget.cut_short:
        extra["cut_short"] = True
    whole_mesh = tried[-1] >= margins[-1]
    if not whole_mesh and status == "OPTIMAL":
        status = "FEASIBLE"      # optimal inside a region only: no proof for the whole mesh
    return _routing_result(graph, fab, nets, trees, placement, settings.backend, status, bound,
                           extra | {"chunks": chunks, "chunks_solved": solved,
                                    "region_margins": tried,
                                    "final_time": round(time.perf_counter() - started, 4)})


def _growing_margins(fab: FabricView, margin: int) -> list[int]:
    """``margin``, then wider regions until one covers the whole mesh (tried in turn while
    the routing stays over capacity)."""
    xs, ys = [p[0] for p in fab.pos], [p[1] for p in fab.pos]
    whole = int(math.ceil(max(max(xs) - min(xs), max(ys) - min(ys)))) + 1
    margins = [margin]
    while margins[-1] < whole:
        margins.append(min(whole, 2 * margins[-1] + 2))
    return margins


#: Planned seconds a chunk is charged besides its solver's work (building the model in
#: Python and starting the solver). Calibrated on this project's 2-core machine: chunks of
#: the 60-node generated section (100 nets, 15 chunks per region) took 0.15-0.2 s of wall
#: time each with 1 node and a few hundred simplex iterations.
CHUNK_SECONDS = 0.15


def _solve_region(fab, nets, trees, backend, budget: Budget, seed, progress):
    """Solve the nets chunk by chunk inside their regions within ``budget`` (planned
    seconds: each chunk gets an equal share of what is left as a solver work limit, and is
    charged the work it used); updates ``trees`` in place.

    Chunk by chunk, the model runs only while some link is over capacity. Once the
    routing is legal, a chunk could only shorten it and would prove nothing: at 120 s on
    2 workers, such chunks took 0.24 % off the links of bert_L-12 training, 0.33 % off
    bert_l-12 inference's and 0.49 % off resnet50 training's on sn10, for 54, 33 and 28 %
    of the stage seconds of placement and routing. A single model (one chunk) is solved
    for its bound, unless it is :func:`_settled` (then its bound is its links).

    Returns ``(bound, status, chunks solved, chunks)``."""
    chunks = _chunks(fab, nets)
    bound, status, solved = None, "FEASIBLE", 0
    if len(chunks) == 1 and _settled(fab, nets, trees):
        return float(_score(fab, nets, trees)[1]), "OPTIMAL", 0, 1
    for position, chunk in enumerate(chunks):
        left = budget.left() / (len(chunks) - position)
        if (left < 0.1 or budget.wall_out()
                or (len(chunks) > 1 and _score(fab, nets, trees)[0] == 0)):
            break
        result, new = _solve_chunk(fab, nets, chunk, trees, backend, budget.share(left), seed)
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


def _chunks(fab: FabricView, nets: list[RouteNet]) -> list[list[int]]:
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


def _solve_chunk(fab, nets, chunk, trees, backend, budget: Budget, seed):
    """One chunk's model, solved within ``budget`` (charged the work it used plus
    :data:`CHUNK_SECONDS`, at most the whole budget); returns the result and the new trees."""
    members = [nets[k] for k in chunk]
    in_chunk = set(chunk)
    others = [n for k, n in enumerate(nets) if k not in in_chunk]
    fixed = _loads(others, trees)
    for n in members:
        n.tree = trees.get(n.id, [])
    model, u, f, _ = build_routing_model(fab, members, fixed)
    model.set_hint(_routing_hint(fab, members, u, f))
    result = model.solve(backend=backend, time_limit=budget.wall_left(), seed=seed, threads=1,
                         options=work_options(backend, budget.seconds))
    used = work_of(result)
    budget.spend(budget.seconds if used is None else min(budget.seconds, used + CHUNK_SECONDS))
    if was_cut_short(result):
        budget.mark_cut()
    if not result.has_solution:
        return result, None
    return result, _decode_trees(fab, members, u, result)


def _settled(fab: FabricView, nets: list[RouteNet], trees: dict[str, list[int]]) -> bool:
    """Whether no link is over capacity and every net's tree has the fewest links a tree
    from its root to its sinks can have inside its region (:func:`_fewest_links`): then no
    routing of these nets in their regions has less overflow or fewer links.

    >>> from hardware import build_fabric, load_hardware
    >>> fab = FabricView(build_fabric(load_hardware("tiny")))
    >>> a, b = fab.index["U0_0"], fab.index["U0_3"]
    >>> [net] = [RouteNet("n", "vector", a, [b], list(range(len(fab.link_ids))), [])]
    >>> hops = _hops(fab, net)[b]
    >>> [_settled(fab, [net], {"n": list(range(k))}) for k in (hops, hops + 1)]
    [True, False]
    """
    load = _loads(nets, trees)
    if any(c > fab.capacity[l].get(network, 0) for (l, network), c in load.items()):
        return False
    return all(trees.get(n.id) and len(trees[n.id]) == _fewest_links(fab, n, len(trees[n.id]))
               for n in nets)


#: The most sinks of a net whose fewest links :func:`_fewest_links` finds exactly (its work
#: grows as 3^sinks x the region's links); a larger net is settled only at the hops to its
#: farthest sink.
STEINER_SINKS = 4


def _fewest_links(fab: FabricView, net: RouteNet, links: int | None = None) -> float:
    """The fewest links of a tree from the net's root to all its sinks inside its region, a
    lower bound on its links in any routing; ``links``: its tree's, when only whether the
    tree has the fewest is asked.

    The hops to its farthest sink, when they are ``links`` (a tree of one path, as most
    are) or the net has one sink or more than :data:`STEINER_SINKS`; else exact, by the
    Dreyfus-Wagner recurrence over the sinks' subsets on the region's directed links (a
    unit relays nothing, so every sink is a leaf). bert_L-12 training on plasticine: the
    sections whose nets of 2-3 sinks branch early needed a solve of 0.3-0.74 s to prove
    their warm trees shortest, and are proven here in milliseconds.

    >>> from hardware import build_fabric, load_hardware
    >>> fab = FabricView(build_fabric(load_hardware("tiny")))
    >>> root, sinks = fab.index["U1_1"], [fab.index["U0_0"], fab.index["U3_3"]]
    >>> net = RouteNet("n", "vector", root, sinks, list(range(len(fab.link_ids))), [])
    >>> max(_hops(fab, net)[t] for t in sinks), _fewest_links(fab, net)
    (4, 6)
    """
    sinks = sorted(set(net.sinks))
    hops = _hops(fab, net)
    farthest = max(hops.get(t, math.inf) for t in sinks)
    if links == farthest or len(sinks) == 1 or len(sinks) > STEINER_SINKS \
            or farthest == math.inf:
        return farthest
    into: dict[int, list[int]] = {}
    for l in net.links:
        into.setdefault(fab.link_head[l], []).append(fab.link_tail[l])
    vertices = set(into).union(*into.values())
    # fewest[S][v]: the fewest links of a tree from v to the sinks of subset S
    fewest = {1 << i: _spread(into, {t: 0}) for i, t in enumerate(sinks)}
    for subset in range(3, 1 << len(sinks)):
        if subset & (subset - 1):           # two sinks or more: the tree splits at some u
            parts = [part for part in range(1, subset) if part & subset == part]
            split = {u: min(fewest[part].get(u, math.inf) + fewest[subset ^ part].get(u, math.inf)
                            for part in parts) for u in vertices}
            fewest[subset] = _spread(into, split)
    return fewest[(1 << len(sinks)) - 1].get(net.root, math.inf)


def _spread(into: dict[int, list[int]], start: dict[int, float]) -> dict[int, float]:
    """Per vertex v, the least ``hops(v, u) + start[u]`` over the vertices u (Dijkstra
    along the links ``into`` each vertex, backwards)."""
    heap = [(cost, u) for u, cost in start.items() if cost < math.inf]
    heapq.heapify(heap)
    best: dict[int, float] = {}
    while heap:
        cost, u = heapq.heappop(heap)
        if u not in best:
            best[u] = cost
            for t in into.get(u, ()):
                if t not in best:
                    heapq.heappush(heap, (cost + 1, t))
    return best


def _hops(fab: FabricView, net: RouteNet) -> dict[int, int]:
    """Links from the net's root to every vertex it can reach inside its region."""
    out: dict[int, list[int]] = {}
    for l in net.links:
        out.setdefault(fab.link_tail[l], []).append(fab.link_head[l])
    hops, frontier = {net.root: 0}, [net.root]
    while frontier:
        following = []
        for v in frontier:
            for w in out.get(v, []):
                if w not in hops:
                    hops[w] = hops[v] + 1
                    following.append(w)
        frontier = following
    return hops


def _link_bound(result, nets, trees, fab) -> float | None:
    if result.bound is None or not math.isfinite(result.bound):   # stopped before a bound
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
    result.paths = edge_paths(fab, graph, pairs, trees, placement)
    if overflow:
        result.overused = describe_overuse(fab, load, pairs, trees)
        status = "INFEASIBLE" if status == "OPTIMAL" else status
        extra["proven_unroutable"] = status == "INFEASIBLE"
    result.extra = extra | {"model_status": status, "max_link_load": max_load,
                            "gap": None if bound is None or not links else
                            round((links - bound) / links, 4)}
    return result


def _export_routing(fab, nets, export_dir, name: str) -> None:
    """Write the whole-section model as ``routing_<graph name>.mps`` (one file per section)."""
    Path(export_dir).mkdir(parents=True, exist_ok=True)
    model, *_ = build_routing_model(fab, nets, {})
    model.write_mps(str(Path(export_dir) / f"routing_{re.sub(r'[^A-Za-z0-9_.-]', '_', name)}.mps"))
