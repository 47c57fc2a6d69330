"""Pictures of what went where: three SVGs per section.

* ``section<k>.svg`` -- placement and routes: unit sites are squares (PCU blue,
  PMU green, AGCU grey), occupied ones filled and labelled when there is room;
  switches are dots; every routed link is a line whose width and colour grow
  with the number of nets it carries.
* ``section<k>_nets.svg`` -- the placement with its nets drawn as straight
  lines from each driver's site to each sink's site (what the placer optimised:
  short lines are cheap).
* ``section<k>_congestion.svg`` -- a link-congestion heat map: every link of the
  fabric coloured by its load over its capacity (nets on the link / vector
  channels), with a colour bar; over-full links are red whatever the scale.

Caveat: mapping.json does not record each route's network, so the heat map
divides by the vector network's channels (the scalar network has more).
"""

from __future__ import annotations

import os
from collections import Counter
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.collections import LineCollection  # noqa: E402

from model.mapping import Mapping  # noqa: E402

__all__ = ["draw_section", "draw_nets", "draw_congestion", "draw_mapping", "link_loads"]

_COLOURS = {"pcu": "#4c72b0", "pmu": "#55a868", "fcmu": "#8172b2", "agcu": "#8c8c8c"}
MAX_PICTURES = 24


def draw_section(mapping: Mapping, fabric, section: int, path: str | os.PathLike) -> None:
    """Draw one section's placement and routes on the grid to ``path`` (SVG or PNG)."""
    spec = fabric.spec
    scale = max(spec.cols, spec.rows)
    fig, ax = plt.subplots(figsize=(min(14, 2 + spec.cols * 0.45), min(14, 2 + spec.rows * 0.45)))
    placed = {v["site"]: n for n, v in mapping.placement.items() if v["section"] == section}
    for site in fabric.sites:
        used = site.id in placed
        ax.add_patch(plt.Rectangle((site.x - 0.35, site.y - 0.35), 0.7, 0.7,
                                   facecolor=_COLOURS.get(site.unit, "#cccccc") if used else "white",
                                   edgecolor=_COLOURS.get(site.unit, "#999999"), linewidth=0.8))
        if used and scale <= 20:
            ax.text(site.x, site.y, placed[site.id][:6], ha="center", va="center", fontsize=5,
                    color="white")
    load = Counter(link for r in mapping.routes if r.get("section") == section
                   for link in set(r["links"]))
    pos = {n: d["pos"] for n, d in fabric.graph.nodes(data=True)}
    if load:
        segments = [(pos[fabric.link_ends(l)[0]], pos[fabric.link_ends(l)[1]]) for l in load]
        widths = [0.6 + 0.8 * load[l] for l in load]
        lines = LineCollection(segments, linewidths=widths, colors=[
            plt.cm.plasma(min(1.0, load[l] / 4)) for l in load], alpha=0.8)
        ax.add_collection(lines)
    switches = [pos[s] for s in fabric.switches]
    ax.scatter([p[0] for p in switches], [p[1] for p in switches], s=2, color="#333333")
    ax.set_xlim(-1, spec.cols + 1)
    ax.set_ylim(spec.rows + 1, -1)
    ax.set_aspect("equal")
    ax.set_axis_off()
    ax.set_title(f"{mapping.graph} on {mapping.hardware}: section {section} "
                 f"({len(placed)} units, {sum(load.values())} link uses)", fontsize=9)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


def _grid_axes(fabric, title: str):
    spec = fabric.spec
    fig, ax = plt.subplots(figsize=(min(14, 2 + spec.cols * 0.45), min(14, 2 + spec.rows * 0.45)))
    ax.set_xlim(-1, spec.cols + 1)
    ax.set_ylim(spec.rows + 1, -1)
    ax.set_aspect("equal")
    ax.set_axis_off()
    ax.set_title(title, fontsize=9)
    return fig, ax


def _draw_sites(ax, fabric, placed: dict[str, str]) -> None:
    for site in fabric.sites:
        used = site.id in placed
        ax.add_patch(plt.Rectangle((site.x - 0.35, site.y - 0.35), 0.7, 0.7,
                                   facecolor=_COLOURS.get(site.unit, "#cccccc") if used else "white",
                                   edgecolor=_COLOURS.get(site.unit, "#999999"), linewidth=0.8))


def draw_nets(mapping: Mapping, fabric, section: int, path: str | os.PathLike) -> None:
    """Draw one section's placement with every edge as a straight driver-to-sink line."""
    placed = {v["site"]: n for n, v in mapping.placement.items() if v["section"] == section}
    site_of = {n: v["site"] for n, v in mapping.placement.items() if v["section"] == section}
    fig, ax = _grid_axes(fabric, f"{mapping.graph}: section {section} placement and nets")
    _draw_sites(ax, fabric, placed)
    segments = []
    for r in mapping.routes:
        if r.get("section") == section and r["src"] in site_of and r["dst"] in site_of:
            a, b = fabric.site(site_of[r["src"]]), fabric.site(site_of[r["dst"]])
            segments.append(((a.x, a.y), (b.x, b.y)))
    if segments:
        ax.add_collection(LineCollection(segments, linewidths=0.7, colors="#c44e52", alpha=0.6))
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


def link_loads(mapping: Mapping, section: int) -> Counter:
    """Nets per link in one section (a net counted once per link)."""
    nets: dict[str, set] = {}
    for r in mapping.routes:
        if r.get("section") == section:
            for link in r["links"]:
                nets.setdefault(link, set()).add(r.get("net"))
    return Counter({link: len(users) for link, users in nets.items()})


def draw_congestion(mapping: Mapping, fabric, section: int, path: str | os.PathLike) -> None:
    """Heat map of one section's link loads over capacities (all links drawn)."""
    load = link_loads(mapping, section)
    pos = {n: d["pos"] for n, d in fabric.graph.nodes(data=True)}
    links = list(fabric.links)
    ratio = [load.get(l, 0) / max(1, fabric.capacity(l, "vector")) for l in links]
    worst = max(ratio, default=0.0)
    fig, ax = _grid_axes(fabric, f"{mapping.graph}: section {section} link load / capacity "
                                 f"(max {worst:.2f})")
    norm = matplotlib.colors.Normalize(vmin=0.0, vmax=1.0)
    cmap = plt.cm.viridis
    colours = [cmap(norm(min(r, 1.0))) if r <= 1.0 else (0.85, 0.1, 0.1, 1.0) for r in ratio]
    segments = [(pos[fabric.link_ends(l)[0]], pos[fabric.link_ends(l)[1]]) for l in links]
    ax.add_collection(LineCollection(segments, colors=colours,
                                     linewidths=[0.4 + 2.0 * min(r, 1.5) for r in ratio]))
    fig.colorbar(plt.cm.ScalarMappable(norm=norm, cmap=cmap), ax=ax, shrink=0.6,
                 label="nets / channels")
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


def draw_mapping(mapping: Mapping, fabric, out_dir: str | os.PathLike,
                 fmt: str = "svg") -> list[str]:
    """Draw every section (at most :data:`MAX_PICTURES`): routes, nets and congestion.

    Returns the relative file names, three per section.
    """
    out_dir = Path(out_dir)
    names = []
    for section in mapping.sections[:MAX_PICTURES]:
        k = section["id"]
        for suffix, draw in (("", draw_section), ("_nets", draw_nets),
                             ("_congestion", draw_congestion)):
            name = f"section{k}{suffix}.{fmt}"
            draw(mapping, fabric, k, out_dir / name)
            names.append(name)
    return names
