"""The resource graph of an RDU: unit sites, AGCUs, switches and links.

Scope
-----
:func:`build_fabric` turns an :class:`~hardware.description.RduSpec` into an
:class:`RduFabric`: the sites that placement chooses from, the switch mesh, and
a :class:`networkx.DiGraph` of directed physical links with per-network channel
capacities that routing uses. Geometry conventions are in
:mod:`hardware.geometry`.

* Unit site ``U{row}_{col}`` (chip-wide) at ``x = col + 0.5, y = row + 0.5``;
  it links both ways to its four corner switches (NW, NE, SW, SE).
* Switch ``S{r}_{c}`` at ``x = c, y = r``, ``0 <= r <= rows``, ``0 <= c <= cols``;
  switches link both ways to their N/S/E/W neighbours.
* AGCU ``A{array}_{q}`` (quadrant q = 0 NW, 1 NE, 2 SW, 3 SE) just outside its
  array's north (q < 2) or south edge, linked both ways to two switches of its
  quadrant on that edge.
* ``y`` grows southwards (row 0 is the north edge).

Caveats
-------
Only switches relay: a route is a path whose first and last vertices may be a
unit or an AGCU and whose inner vertices are all switches. The graph itself
cannot say that (unit sites have in- and out-edges), so **a router must enforce
it**, e.g. by searching :meth:`RduFabric.routable_view` or by skipping nodes for
which :meth:`RduFabric.is_switch` is false. Every link has the same channel
capacities (``spec.networks[n].channels`` per direction); switch ports and the
FCMU port split of source 000 FIG. 5 (PMU on NW/SW, PCU on NE/SE) are not
modelled. Fabrics are cached per spec and shared: copy the graph before
changing it.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import networkx as nx
import numpy as np

from hardware.description import NETWORK_NAMES, RduSpec
from hardware.geometry import CORNERS, agcu_switches, array_of, quadrant_of, unit_at

__all__ = ["RduFabric", "Site", "UNIT_KINDS", "build_fabric"]

UNIT_KINDS = ("pcu", "pmu", "fcmu", "agcu")
_SERVES = {"pcu": ("pcu",), "pmu": ("pmu",), "fcmu": ("pcu", "pmu"), "agcu": ("agcu",)}
_STEPS = (("N", -1, 0), ("S", 1, 0), ("W", 0, -1), ("E", 0, 1))
AGCU_OFFSET = 0.25   # how far outside its array edge an AGCU is drawn


@dataclass(frozen=True)
class Site:
    """A place a node can go: a unit site or an AGCU.

    ``row``/``col`` are chip-wide site coordinates for a unit; for an AGCU they
    are the switch coordinates of the first of its two switches.

    Examples
    --------
    >>> from hardware import build_fabric, load_hardware
    >>> build_fabric(load_hardware("tiny")).site("U1_2")
    Site(id='U1_2', unit='pmu', row=1, col=2, x=2.5, y=1.5, array=0)
    """

    id: str
    unit: str
    row: int
    col: int
    x: float
    y: float
    array: int


class RduFabric:
    """Sites, switches and links of one RDU chip (use :func:`build_fabric`).

    Attributes
    ----------
    spec : RduSpec
    sites : list of Site
        Unit sites row-major, then AGCUs by array and quadrant.
    switches : list of str
        Switch ids row-major.
    graph : networkx.DiGraph
        Nodes: every site and switch id, with ``kind`` (``"switch"``, ``"pcu"``,
        ``"pmu"``, ``"fcmu"``, ``"agcu"``) and ``pos`` ``(x, y)``. Edges: directed
        links with ``id`` (``"a->b"``), ``kind`` (``"switch"``, ``"unit"``,
        ``"agcu"``), ``port`` (the unit's corner, the direction of travel, or
        ``"AGCU"``) and ``capacity`` (network name -> channels).
    links : list of str
        Every link id, in graph edge order.
    relay_nodes : frozenset of str
        The nodes a route may pass through (the switches).

    Examples
    --------
    >>> from hardware import build_fabric, load_hardware
    >>> fab = build_fabric(load_hardware("tiny"))
    >>> len(fab.sites), len(fab.switches), len(fab.links)
    (20, 25, 224)
    >>> fab.distance("U0_0", "U3_3"), fab.capacity("U0_0->S0_0", "scalar")
    (4, 4)
    """

    def __init__(self, spec: RduSpec):
        self.spec = spec
        self.sites: list[Site] = _unit_sites(spec) + _agcu_sites(spec)
        self._by_id = {s.id: s for s in self.sites}
        self._attach = {s.id: _attachments(spec, s) for s in self.sites}
        self._rect = {i: _bounds(points) for i, points in self._attach.items()}
        self._quadrant = {s.id: _quadrant(spec, s) for s in self.sites}
        self._of_unit = {u: [s for s in self.sites if s.unit == u] for u in UNIT_KINDS}
        self.switches = [_switch_id(r, c) for r in range(spec.rows + 1)
                         for c in range(spec.cols + 1)]
        self.relay_nodes = frozenset(self.switches)
        self.graph = self._build_graph()
        self._ends = {d["id"]: (a, b) for a, b, d in self.graph.edges(data=True)}
        self.links = list(self._ends)

    # -- graph ----------------------------------------------------------------
    def _build_graph(self) -> nx.DiGraph:
        g = nx.DiGraph(name=self.spec.name)
        g.add_nodes_from((s.id, {"kind": s.unit, "pos": (s.x, s.y)}) for s in self.sites)
        g.add_nodes_from((_switch_id(r, c), {"kind": "switch", "pos": (float(c), float(r))})
                         for r in range(self.spec.rows + 1) for c in range(self.spec.cols + 1))
        caps = {n: self.spec.networks[n].channels for n in NETWORK_NAMES}
        g.add_edges_from((a, b, {"id": f"{a}->{b}", "kind": kind, "port": port,
                                 "capacity": dict(caps)})
                         for a, b, kind, port in self._link_list())
        return g

    def _link_list(self):
        for site in self.sites:
            kind = "agcu" if site.unit == "agcu" else "unit"
            for port, (r, c) in self._attach[site.id]:
                switch = _switch_id(r, c)
                yield site.id, switch, kind, port
                yield switch, site.id, kind, port
        rows, cols = self.spec.rows, self.spec.cols
        for r in range(rows + 1):
            for c in range(cols + 1):
                for port, dr, dc in _STEPS:
                    if 0 <= r + dr <= rows and 0 <= c + dc <= cols:
                        yield _switch_id(r, c), _switch_id(r + dr, c + dc), "switch", port

    # -- sites ----------------------------------------------------------------
    def site(self, site_id: str) -> Site:
        """The site with id ``site_id`` (``KeyError`` if none)."""
        try:
            return self._by_id[site_id]
        except KeyError:
            raise KeyError(f"no site {site_id!r} on {self.spec.name}") from None

    def sites_of(self, unit: str) -> list[Site]:
        """Sites that can host a node of kind ``unit``.

        ``"pcu"``/``"pmu"`` include FCMU sites; ``"any"`` is every unit site;
        ``"agcu"`` the AGCUs; ``"fcmu"`` the FCMU sites.

        Examples
        --------
        >>> from hardware import build_fabric, load_hardware
        >>> fab = build_fabric(load_hardware("tiny"))
        >>> [s.id for s in fab.sites_of("pcu")][:3], len(fab.sites_of("any"))
        (['U0_0', 'U0_2', 'U1_1'], 16)
        """
        if unit == "any":
            return [s for s in self.sites if s.unit != "agcu"]
        if unit not in UNIT_KINDS:
            raise ValueError(f"unknown unit {unit!r}; use one of {UNIT_KINDS + ('any',)}")
        if unit in ("pcu", "pmu"):
            return [s for s in self.sites if unit in _SERVES[s.unit]]
        return list(self._of_unit[unit])

    def can_host(self, site_id: str, unit: str) -> bool:
        """Whether ``site_id`` can host a node of kind ``unit`` (``"any"`` = pcu/pmu).

        Examples
        --------
        >>> from hardware import build_fabric, load_hardware
        >>> fab = build_fabric(load_hardware("tiny"))
        >>> fab.can_host("U0_0", "pcu"), fab.can_host("U0_0", "pmu"), fab.can_host("A0_0", "any")
        (True, False, False)
        """
        have = self.site(site_id).unit
        if unit == "any":
            return have != "agcu"
        return unit == have or unit in _SERVES[have]

    def units_at(self, site_id: str) -> tuple[str, ...]:
        """The units a site provides: one, or ``("pcu", "pmu")`` for an FCMU."""
        return _SERVES[self.site(site_id).unit]

    def quadrant(self, site_id: str) -> int:
        """Quadrant of a site within its array: 0 NW, 1 NE, 2 SW, 3 SE.

        Combine with ``site(site_id).array`` for a chip-wide quadrant.
        """
        self.site(site_id)
        return self._quadrant[site_id]

    def agcu_of(self, site_id: str) -> str | None:
        """The AGCU serving the quadrant of ``site_id`` (``None`` without AGCUs)."""
        site = self.site(site_id)
        if not self.spec.agcus_per_array:
            return None
        return f"A{site.array}_{self._quadrant[site_id]}"

    def attached_switches(self, site_id: str) -> list[str]:
        """The switches a site links to (4 corners of a unit, 2 for an AGCU)."""
        return [_switch_id(r, c) for _, (r, c) in self._attach[self.site(site_id).id]]

    # -- links and routes -----------------------------------------------------
    def is_switch(self, node: str) -> bool:
        """Whether ``node`` is a switch (the only nodes a route may pass through)."""
        return node in self.relay_nodes

    def link_ends(self, link_id: str) -> tuple[str, str]:
        """``(source, target)`` of a link id such as ``"U0_0->S0_0"``."""
        try:
            return self._ends[link_id]
        except KeyError:
            raise KeyError(f"no link {link_id!r} on {self.spec.name}") from None

    def capacity(self, link_id: str, network: str = "vector") -> int:
        """Channels of ``network`` on a link, per direction."""
        a, b = self.link_ends(link_id)
        caps = self.graph.edges[a, b]["capacity"]
        if network not in caps:
            raise KeyError(f"unknown network {network!r}; use one of {NETWORK_NAMES}")
        return caps[network]

    def routable_view(self, src: str, dst: str) -> nx.DiGraph:
        """A read-only view of the graph with only the switches, ``src`` and ``dst``:
        every path in it from ``src`` to ``dst`` is a legal route.

        Examples
        --------
        >>> from hardware import build_fabric, load_hardware
        >>> fab = build_fabric(load_hardware("tiny"))
        >>> nx.shortest_path_length(fab.routable_view("U0_0", "U0_3"), "U0_0", "U0_3")
        4
        """
        ends = {src, dst}
        return nx.subgraph_view(self.graph,
                                filter_node=lambda n: n in self.relay_nodes or n in ends)

    # -- distances ------------------------------------------------------------
    def distance(self, site_a: str, site_b: str) -> int:
        """Switch-to-switch links on a shortest route between two sites (O(1)).

        Routes go site -> attached switch -> mesh -> attached switch -> site;
        neighbouring units that share a corner switch are at distance 0.

        Examples
        --------
        >>> from hardware import build_fabric, load_hardware
        >>> fab = build_fabric(load_hardware("tiny"))
        >>> fab.distance("U0_0", "U0_1"), fab.distance("U0_0", "U0_2"), fab.distance("A0_0", "U3_3")
        (0, 1, 5)
        """
        a, b = self._rect[site_a], self._rect[site_b]
        return (max(0, b[0] - a[1], a[0] - b[1]) + max(0, b[2] - a[3], a[2] - b[3]))

    def distance_matrix(self, site_ids: list[str] | None = None) -> np.ndarray:
        """:meth:`distance` between all pairs of ``site_ids`` (default: all sites).

        Examples
        --------
        >>> from hardware import build_fabric, load_hardware
        >>> fab = build_fabric(load_hardware("tiny"))
        >>> fab.distance_matrix(["U0_0", "U0_2", "U3_3"]).tolist()
        [[0, 1, 4], [1, 0, 2], [4, 2, 0]]
        """
        ids = [s.id for s in self.sites] if site_ids is None else list(site_ids)
        rect = np.array([self._rect[i] for i in ids], dtype=np.int64).reshape(-1, 4)
        r_lo, r_hi, c_lo, c_hi = (rect[:, k] for k in range(4))
        rows = np.maximum(0, np.maximum(r_lo[None, :] - r_hi[:, None],
                                        r_lo[:, None] - r_hi[None, :]))
        cols = np.maximum(0, np.maximum(c_lo[None, :] - c_hi[:, None],
                                        c_lo[:, None] - c_hi[None, :]))
        return rows + cols

    # -- summary ----------------------------------------------------------------
    def describe(self) -> str:
        """A one-paragraph summary: sites, switches, links and capacities.

        Examples
        --------
        >>> from hardware import build_fabric, load_hardware
        >>> print(build_fabric(load_hardware("tiny")).describe())  # doctest: +ELLIPSIS
        tiny: 1 array of 4 x 4 sites (4 x 4 chip-wide, checkerboard): 8 PCU, 8 PMU, 4 AGCU; ...
        """
        spec = self.spec
        kinds = {}
        for _, _, kind in self.graph.edges(data="kind"):
            kinds[kind] = kinds.get(kind, 0) + 1
        nets = ", ".join(f"{n} {spec.networks[n].channels} x {spec.networks[n].width_bits} bit"
                         for n in NETWORK_NAMES)
        arrays = f"{spec.array_count} array{'s' if spec.array_count > 1 else ''}"
        layout = f" as {spec.arrays[0]} x {spec.arrays[1]}" if spec.array_count > 1 else ""
        clock = f", {spec.clock_ghz:g} GHz" if spec.clock_ghz else ""
        return (f"{spec.name}: {arrays}{layout} of {spec.array_rows} x {spec.array_cols} sites "
                f"({spec.rows} x {spec.cols} chip-wide, {spec.pattern}): {spec.pcu_count} PCU, "
                f"{spec.pmu_count} PMU, {spec.agcu_count} AGCU; {len(self.switches)} switches; "
                f"{len(self.links)} directed links ({kinds.get('unit', 0)} unit, "
                f"{kinds.get('switch', 0)} switch, {kinds.get('agcu', 0)} AGCU); per link and "
                f"direction: {nets}; PMU {_kib(spec.pmu_bytes)}, PCU {spec.pcu_lanes} lanes x "
                f"{spec.pcu_stages} stages{clock}; {len(spec.assumed)} assumptions listed in "
                f"spec.assumed.")

    def __repr__(self) -> str:
        return (f"RduFabric({self.spec.name!r}: {len(self.sites)} sites, "
                f"{len(self.switches)} switches, {len(self.links)} links)")


@lru_cache(maxsize=16)
def build_fabric(spec: RduSpec) -> RduFabric:
    """The :class:`RduFabric` of an RDU spec (cached per spec; do not mutate it).

    Parameters
    ----------
    spec : RduSpec

    Returns
    -------
    RduFabric

    Raises
    ------
    TypeError
        If ``spec`` is not an RDU (use :func:`hardware.tiles.build_tile_graph`).

    Examples
    --------
    >>> from hardware import build_fabric, load_hardware
    >>> fab = build_fabric(load_hardware("sn10"))
    >>> len(fab.sites_of("pcu")), len(fab.sites_of("pmu")), len(fab.sites_of("agcu"))
    (640, 640, 16)
    >>> build_fabric(load_hardware("sn10")) is fab
    True
    """
    if not isinstance(spec, RduSpec):
        raise TypeError(f"build_fabric needs an RduSpec, got {type(spec).__name__} "
                        "(use hardware.build_tile_graph for tiles and PEs)")
    return RduFabric(spec)


# ---------------------------------------------------------------------------
# helpers
# ---------------------------------------------------------------------------
def _switch_id(r: int, c: int) -> str:
    return f"S{r}_{c}"


def _unit_sites(spec: RduSpec) -> list[Site]:
    return [Site(f"U{r}_{c}", unit_at(spec, r, c), r, c, c + 0.5, r + 0.5, array_of(spec, r, c))
            for r in range(spec.rows) for c in range(spec.cols)]


def _agcu_sites(spec: RduSpec) -> list[Site]:
    out = []
    for array in range(spec.array_count if spec.agcus_per_array else 0):
        for q in range(4):
            (r, c), _ = agcu_switches(spec, array, q)
            y = r - AGCU_OFFSET if q < 2 else r + AGCU_OFFSET
            out.append(Site(f"A{array}_{q}", "agcu", r, c, c + 0.5, y, array))
    return out


def _attachments(spec: RduSpec, site: Site) -> list[tuple[str, tuple[int, int]]]:
    """``(port, (switch row, switch col))`` for each switch a site links to."""
    if site.unit == "agcu":
        q = int(site.id.rsplit("_", 1)[1])
        return [("AGCU", rc) for rc in agcu_switches(spec, site.array, q)]
    return [(port, (site.row + dr, site.col + dc)) for port, (dr, dc) in CORNERS.items()]


def _bounds(points: list[tuple[str, tuple[int, int]]]) -> tuple[int, int, int, int]:
    """Switch rectangle ``(r_lo, r_hi, c_lo, c_hi)`` spanned by a site's switches.

    Each site's switches fill their bounding rectangle (2 x 2 or 1 x 2), so the
    Manhattan gap between two rectangles is the exact mesh distance."""
    rows = [rc[0] for _, rc in points]
    cols = [rc[1] for _, rc in points]
    return min(rows), max(rows), min(cols), max(cols)


def _quadrant(spec: RduSpec, site: Site) -> int:
    if site.unit == "agcu":
        return int(site.id.rsplit("_", 1)[1])
    return quadrant_of(spec, site.row, site.col)


def _kib(n: int) -> str:
    return f"{n // 1024} KiB" if n % 1024 == 0 else f"{n} B"
