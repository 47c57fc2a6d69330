"""The legality checker: an independent judge of placements and routes.

It reads only the graph, the hardware and the answer (never the models that
produced it) and re-derives everything it judges from the hardware
description: which site hosts which unit kind, which links exist, on which
networks, with how many channels.

Rules checked for one section on an RDU:

- placement: every node placed exactly once, on an existing unit site whose
  kind can host the node's unit; at most one node per site;
- routes: every net (one driver, its sinks) is a tree of existing links on
  the net's network, rooted at the driver's site and reaching every sink's
  site; only switches relay (a unit site is never passed through); no link
  carries more nets than its channels on that network.

It also measures what it checked: wirelength (links used, a net once per link)
and the load of every link.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass, field

from hardware import RduFabric
from model.graph import Graph

__all__ = ["CheckReport", "check_placement", "check_routes", "check_section"]


@dataclass
class CheckReport:
    """What the checker found: ``ok`` when ``violations`` is empty."""

    violations: list[str] = field(default_factory=list)
    wirelength: int = 0
    max_link_load: float = 0.0          # highest load / capacity over all links
    link_load: dict[str, int] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return not self.violations

    def merge(self, other: "CheckReport") -> "CheckReport":
        self.violations += other.violations
        self.wirelength += other.wirelength
        self.max_link_load = max(self.max_link_load, other.max_link_load)
        for link, load in other.link_load.items():
            self.link_load[link] = self.link_load.get(link, 0) + load
        return self


def _site_kinds(fabric: RduFabric) -> dict[str, str]:
    return {n: d.get("kind") for n, d in fabric.graph.nodes(data=True) if d.get("kind") != "switch"}


def _hosts(site_kind: str, unit: str) -> bool:
    """The placement rule, stated here independently of the placer."""
    if unit == "agcu":
        return site_kind == "agcu"
    if unit == "any":
        return site_kind in ("pcu", "pmu", "fcmu")
    return site_kind in (unit, "fcmu")


def check_placement(graph: Graph, fabric: RduFabric, placement: dict[str, str]) -> CheckReport:
    """Check that ``placement`` (node -> site id) is legal for ``graph``."""
    report = CheckReport()
    kinds = _site_kinds(fabric)
    for node in graph.nodes:
        site = placement.get(node.id)
        if site is None:
            report.violations.append(f'node "{node.id}" is not placed')
        elif site not in kinds:
            report.violations.append(f'node "{node.id}" is on "{site}", which is not a unit site')
        elif not _hosts(kinds[site], node.unit):
            report.violations.append(f'node "{node.id}" needs a {node.unit.upper()} but '
                                     f'"{site}" is a {kinds[site].upper()}')
    extra = set(placement) - set(graph.node_ids)
    if extra:
        report.violations.append(f"placement names nodes not in the section: {sorted(extra)[:5]}")
    for site, count in Counter(placement[n] for n in graph.node_ids if n in placement).items():
        if count > 1:
            owners = sorted(n for n in graph.node_ids if placement.get(n) == site)
            report.violations.append(f'site "{site}" holds {count} nodes: {", ".join(owners)}')
    return report


def check_routes(graph: Graph, fabric: RduFabric, placement: dict[str, str],
                 routes: dict[int, list[str]]) -> CheckReport:
    """Check the route of every edge of ``graph`` (edge index -> link ids).

    The links of a net's edges together must form one tree from the driver's
    site; each edge's own links must form a path from its driver's site to its
    sink's site.
    """
    report = CheckReport()
    links = {d["id"]: (u, v, d["capacity"]) for u, v, d in fabric.graph.edges(data=True)}
    kinds = _site_kinds(fabric)
    load: dict[tuple[str, str], int] = defaultdict(int)
    for net in graph.nets:
        network = graph.edges[net.edges[0]].network
        tree: set[str] = set()
        for i in net.edges:
            edge = graph.edges[i]
            path = routes.get(i, [])
            problem = _path_problem(path, placement[edge.src], placement[edge.dst], links, kinds,
                                    network)
            if problem:
                report.violations.append(f"edge {i} ({edge.src} -> {edge.dst}): {problem}")
            tree.update(path)
        heads = Counter(links[l][1] for l in tree if l in links)
        for vertex, count in heads.items():
            if count > 1:
                report.violations.append(f'net "{net.id}" of {net.driver} enters "{vertex}" '
                                         f"{count} times: its routes do not form a tree")
        for link in tree:
            load[(link, network)] += 1
    for (link, network), used in sorted(load.items()):
        if link not in links:
            continue
        capacity = links[link][2].get(network, 0)
        report.link_load[link] = report.link_load.get(link, 0) + used
        if capacity and used / capacity > report.max_link_load:
            report.max_link_load = used / capacity
        if used > capacity:
            report.violations.append(f'link "{link}" carries {used} nets on the {network} '
                                     f"network but has {capacity} channels")
    report.wirelength = sum(load.values())
    return report


def _path_problem(path: list[str], start: str, end: str, links: dict, kinds: dict,
                  network: str) -> str | None:
    if start == end:
        return None if not path else "both ends share a site but the route is not empty"
    if not path:
        return "not routed"
    at = start
    for k, link in enumerate(path):
        if link not in links:
            return f'link "{link}" does not exist'
        tail, head, capacity = links[link]
        if tail != at:
            return f'link "{link}" does not start where the route stands ("{at}")'
        if capacity.get(network, 0) <= 0:
            return f'link "{link}" has no {network} channel'
        if k < len(path) - 1 and head in kinds:
            return f'the route passes through unit "{head}" (only switches relay)'
        at = head
    return None if at == end else f'the route ends at "{at}", not at "{end}"'


def check_section(graph: Graph, fabric: RduFabric, placement: dict[str, str],
                  routes: dict[int, list[str]]) -> CheckReport:
    """Placement and routes of one section, checked together."""
    report = check_placement(graph, fabric, placement)
    if report.ok:
        report.merge(check_routes(graph, fabric, placement, routes))
    return report
