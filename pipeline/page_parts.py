"""What report.html draws of each target's mapping, as plain JSON values.

One function per target (:mod:`pipeline.targets` picks it): the RDU's fabric and sections
(placed units, link loads, routes), a CGRA's and the Streaming Engine's schedules (cells of
operations per PE or tile and slot).
"""

from __future__ import annotations

from hardware import RduFabric
from model.mapping import Mapping

__all__ = ["rdu_page", "cgra_page", "streaming_page"]


def rdu_page(mapping: Mapping, spec, fabric: RduFabric | None = None, graph=None) -> dict:
    """An RDU mapping: the fabric and every section (nothing without a fabric)."""
    if fabric is None:
        return {}
    return {"fabric": _fabric(fabric),
            "sections": [_section(mapping, fabric, s, graph) for s in mapping.sections]}


def _fabric(fabric: RduFabric) -> dict:
    """Sites, switches and the links as undirected segments (both directions share one)."""
    pos = {n: d["pos"] for n, d in fabric.graph.nodes(data=True)}
    segments, index = [], {}
    for link in fabric.links:
        a, b = fabric.link_ends(link)
        key = tuple(sorted((a, b)))
        if key not in index:
            index[key] = len(segments)
            segments.append([*pos[a], *pos[b]])
    return {"cols": fabric.spec.cols, "rows": fabric.spec.rows,
            "sites": [[s.id, s.x, s.y, s.unit] for s in fabric.sites],
            "switches": [list(pos[s]) for s in fabric.switches], "segments": segments,
            "segment_of": {link: index[tuple(sorted(fabric.link_ends(link)))]
                           for link in fabric.links}}


def _section(mapping: Mapping, fabric: RduFabric, section: dict, graph) -> dict:
    """One section: placed units, segment loads (nets / channels), nets per node, perf."""
    k = section["id"]
    ops = {n.id: n.op for n in graph.nodes} if graph is not None else {}
    placed = {n: v for n, v in mapping.placement.items() if v.get("section") == k}
    units: dict[str, int] = {}
    for n in placed:
        units[n.split("#")[0]] = units.get(n.split("#")[0], 0) + 1
    loads = _link_loads(mapping, fabric, k, graph)
    return {"id": k, "perf": section.get("perf"), "category": section.get("category"),
            "units": [[v["site"], n, ops.get(n, ops.get(n.split("#")[0], "added unit")),
                       v.get("unit"), units[n.split("#")[0]]] for n, v in placed.items()],
            "loads": [[link, round(r, 3)] for link, r in loads.items()],
            "routes": [[r["src"], r["dst"], r["links"]] for r in mapping.routes
                       if r.get("section") == k]}


def _link_loads(mapping: Mapping, fabric: RduFabric, section: int, graph) -> dict[str, float]:
    """Link -> its fullest network's nets over that network's channels, as the checker counts
    (a net once per link; without the graph every route counts on the vector network)."""
    nets: dict[tuple[str, str], set] = {}
    for r in mapping.routes:
        if r.get("section") != section:
            continue
        network = "vector"
        if graph is not None and isinstance(r.get("edge"), int) and r["edge"] < len(graph.edges):
            network = graph.edges[r["edge"]].network or "vector"
        for link in r["links"]:
            nets.setdefault((link, network), set()).add(r.get("net"))
    loads: dict[str, float] = {}
    known = set(fabric.links)
    for (link, network), users in nets.items():
        if link in known:
            ratio = len(users) / max(1, fabric.capacity(link, network))
            loads[link] = max(loads.get(link, 0.0), ratio)
    return loads


def cgra_page(mapping: Mapping, spec, fabric: RduFabric | None = None, graph=None) -> dict:
    """A CGRA mapping's schedule: PEs x slots modulo II, the operations in each cell."""
    ops = {n.id: n.op for n in graph.nodes} if graph is not None else {}
    columns = [f"PE {r},{c}" for r in range(spec.rows) for c in range(spec.cols)]
    cells: dict[str, list] = {}
    for name, p in sorted(mapping.placement.items(), key=lambda kv: kv[1]["cycle"]):
        column = p["pe"][0] * spec.cols + p["pe"][1]
        cells.setdefault(f"{p['slot']},{column}", []).append(
            [name, ops.get(name, ""), f"cycle {p['cycle']}"])
    return {"schedule": {"what": "PE", "ii": mapping.ii, "parts": [
        {"title": f"II {mapping.ii}: slot = cycle mod {mapping.ii}", "columns": columns,
         "slots": mapping.ii, "cells": cells}]}}


def streaming_page(mapping: Mapping, spec, fabric: RduFabric | None = None, graph=None) -> dict:
    """A Streaming Engine mapping's schedule: tiles x slots per synchronous data-flow (one
    part each)."""
    parts = []
    for sdf in sorted({t.get("sdf", 0) for t in mapping.tiles or []}):
        tiles = [t for t in mapping.tiles or [] if t.get("sdf", 0) == sdf]
        cells: dict[str, list] = {}
        for tile in tiles:
            for e in tile["entries"]:
                if e["kind"] != "idle":
                    what = e.get("instruction") or e.get("holds") or e["kind"]
                    cells.setdefault(f"{e['slot']},{tile['tile']}", []).append(
                        [str(what), e["kind"], f"entry {e.get('entry', '')}".strip()])
        ii = max((t["ii"] for t in tiles), default=mapping.ii or 1)
        parts.append({"title": f"part {sdf}: II {ii}", "slots": ii, "cells": cells,
                      "columns": [f"tile {t}" for t in range(spec.tiles)]})
    return {"schedule": {"what": "tile", "ii": mapping.ii, "parts": parts}}
