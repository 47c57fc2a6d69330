"""Pictures of what went where: one SVG per section, placement and routes.

Unit sites are squares (PCU blue, PMU green, AGCU grey), occupied ones filled
and labelled when there is room; switches are dots; every routed link is a line
whose width and colour grow with the number of nets it carries.
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

__all__ = ["draw_section", "draw_mapping"]

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


def draw_mapping(mapping: Mapping, fabric, out_dir: str | os.PathLike,
                 fmt: str = "svg") -> list[str]:
    """Draw every section (at most :data:`MAX_PICTURES`); returns relative file names."""
    out_dir = Path(out_dir)
    names = []
    for section in mapping.sections[:MAX_PICTURES]:
        name = f"section{section['id']}.{fmt}"
        draw_section(mapping, fabric, section["id"], out_dir / name)
        names.append(name)
    return names
