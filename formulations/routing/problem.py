"""What every router shares: its knobs, its result, and the fabric as integer arrays.

A router (:mod:`formulations.routing.negotiated`, :mod:`formulations.routing.model`)
turns a placed section into one tree of directed links per net, on the network the
net uses (:attr:`model.graph.Edge.network`: vector, or scalar for one-word values).
Only switches relay: a unit or AGCU is only ever the first or the last vertex of a
path. :class:`FabricView` is the chip's resource graph indexed for fast searches;
:func:`edge_paths` and :func:`describe_overuse` read any router's trees back in the
user's terms (link ids, nets sharing an over-used link).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from hardware import RduFabric
from model.graph import Graph

__all__ = ["RouterConfig", "RoutingResult", "Overuse", "FabricView", "net_network",
           "overused_links", "describe_overuse", "edge_paths"]

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


class FabricView:
    """The fabric (a :class:`hardware.RduFabric`) as integer arrays, for fast searches.

    Vertices (units, AGCUs, switches) and directed links are numbered in the fabric
    graph's order; ``capacity[link]`` maps a network to its channels.
    """

    def __init__(self, fabric: RduFabric):
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
        # the same as arrays, for the routing model's per-net regions (numpy, not a loop)
        xy = np.array(self.pos, dtype=float).reshape(-1, 2)
        self.tail_array = np.array(self.link_tail, dtype=np.int64)
        self.head_array = np.array(self.link_head, dtype=np.int64)
        self.ends_xy = (xy[self.tail_array, 0], xy[self.tail_array, 1],
                        xy[self.head_array, 0], xy[self.head_array, 1])
        relay = np.array(self.relay, dtype=bool)
        self.relay_ends = (relay[self.tail_array], relay[self.head_array])

    def heuristic(self, a: int, b: int) -> float:
        """A lower bound on the links between vertices ``a`` and ``b`` (A* heuristic)."""
        (xa, ya), (xb, yb) = self.pos[a], self.pos[b]
        return max(0.0, abs(xa - xb) + abs(ya - yb) - 2.0)



def overused_links(fab: FabricView, load: dict) -> list[tuple[int, str, int]]:
    """``(link, network, excess)`` of every link whose ``load[(link, network)]`` exceeds
    its channels, in sorted order."""
    over = []
    for (link, network), used in sorted(load.items()):
        excess = used - fab.capacity[link].get(network, 0)
        if excess > 0:
            over.append((link, network, excess))
    return over


def describe_overuse(fab: FabricView, load: dict, nets, trees) -> list[Overuse]:
    """The over-used links with the nets sharing them; ``nets`` holds ``(net, network)``
    pairs, ``trees`` each net id's link indices."""
    users: dict[tuple[int, str], list[str]] = {}
    for net, network in nets:
        for link in trees.get(net.id, []):
            users.setdefault((link, network), []).append(net.id)
    return [Overuse(fab.link_ids[link], network, load[(link, network)],
                    fab.capacity[link].get(network, 0), tuple(users[(link, network)]))
            for link, network, _ in overused_links(fab, load)]


def edge_paths(fab: FabricView, graph: Graph, nets, trees, placement) -> dict[int, list[str]]:
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
