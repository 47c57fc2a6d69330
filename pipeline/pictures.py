"""Pictures of what went where: three per section, for every section.

* ``section<k>.svg`` -- placement and routes: unit sites are squares (PCU blue,
  PMU green, AGCU grey), occupied ones filled and labelled when there is room;
  switches are dots; every routed link is a line whose width and colour grow
  with the number of nets it carries.
* ``section<k>_nets.svg`` -- the placement with its edges drawn as straight
  lines from each driver's site to each sink's site (what the placer optimised:
  short lines are cheap).
* ``section<k>_congestion.svg`` -- a link-congestion heat map: every link of the
  fabric coloured by its load over its capacity (nets on the link / vector
  channels), with a colour bar; over-full links are red whatever the scale.

With the performance estimate (``perf`` of every section, :mod:`sim.perf`), one more:

* ``performance.svg`` -- the time of one batch per section as stacked bars (compute,
  on-chip transfer, DRAM, reconfiguration), and each section's link utilisation (its
  busiest link's busy share and the mean over the links it uses).

Every caption gives the section's wirelength as mapping.json counts it (the
checker's count: links used, a net once per link, see :func:`section_wirelength`).
The routes drawn are mapping.json's ``routes``, which list the graph's own edges;
links that serve only units the section added (PMU banks, PCU lanes; edges through
stage buffers count once per unit net) are in the wirelength but not drawn, and the
captions then say how many are drawn.

Every picture is written atomically (:func:`pipeline.outputs.save_figure`).
Drawing the three pictures costs about 0.4 s per section on plasticine (SVG; measured on
resnet50's 9 sections on a shared 2-core machine) and 1.6 s on sn10 (15,568 links in the heat
map), so every section is drawn; ``max_sections`` in :func:`draw_mapping` limits it when
asked, and the report then says how many were drawn.

Caveat: mapping.json does not record each route's network, so the heat map
divides by the vector network's channels (the scalar network has more).
"""

from __future__ import annotations

import functools
import os
import re
import time
from collections import Counter
from pathlib import Path

import numpy as np

from hardware import RduFabric
from model.mapping import Mapping
from pipeline.outputs import save_figure
from pipeline.report import section_wirelength

__all__ = ["draw_section", "draw_nets", "draw_congestion", "draw_mapping", "draw_streaming",
           "draw_cgra",
           "draw_performance", "link_loads", "picture_names"]

_COLOURS = {"pcu": "#4c72b0", "pmu": "#55a868", "fcmu": "#8172b2", "agcu": "#8c8c8c"}
_OVERFULL = (0.85, 0.1, 0.1, 1.0)
#: The three pictures of a section, by file-name suffix (pipeline.outputs knows these names).
_KINDS = ("", "_nets", "_congestion")


@functools.cache
def _pyplot():
    """pyplot on the Agg backend (files, no display), imported by the first picture as
    networkx's drawing functions do: a run without pictures never loads matplotlib (0.3 s)."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    return plt


#: What matplotlib would not draw as written: "$" starts mathtext (an odd count is an
#: error), and a control character cannot be in an SVG at all (XML has no NUL, even escaped).
_TEXT_SPECIAL = re.compile(r"[$\x00-\x1f\x7f-\x9f]")


def _label(text: str) -> str:
    r"""``text`` (node ids and names come from the user's files) as matplotlib draws it
    literally: "$" escaped, control characters shown as ``\xNN``; matplotlib escapes
    ``<``, ``>`` and ``&`` in the SVG itself.

    >>> print(_label("a$b\x00c"))
    a\$b\x00c
    """
    return _TEXT_SPECIAL.sub(lambda c: "\\$" if c.group() == "$" else f"\\x{ord(c.group()):02x}",
                             text)


def link_loads(mapping: Mapping, section: int) -> Counter:
    """Nets per link in one section's routes (a net counted once per link).

    Its total is the wirelength of the routes mapping.json lists; see the module
    docstring for links it does not see.
    """
    nets: dict[str, set] = {}
    for r in mapping.routes:
        if r.get("section") == section:
            for link in r["links"]:
                nets.setdefault(link, set()).add(r.get("net"))
    return Counter({link: len(users) for link, users in nets.items()})


def _wirelength_caption(mapping: Mapping, section: int, drawn: int) -> str:
    """'wirelength W links', plus how many are drawn when that is fewer."""
    total = section_wirelength(mapping, section)
    if total is None or total == drawn:
        return f"wirelength {drawn} links"
    return f"wirelength {total} links ({drawn} drawn; the rest serve units the section added)"


def _placed(mapping: Mapping, section: int) -> dict[str, str]:
    """Site id -> node id of one section."""
    return {v["site"]: n for n, v in mapping.placement.items() if v.get("section") == section}


def _grid_axes(fabric: RduFabric, title: str):
    plt = _pyplot()
    spec = fabric.spec
    width = min(14, 3 + spec.cols * 0.45)
    fig, ax = plt.subplots(figsize=(width, min(14, 2.6 + spec.rows * 0.45)))
    ax.set_xlim(-1, spec.cols + 1)
    ax.set_ylim(spec.rows + 1, -1)
    ax.set_aspect("equal")
    ax.set_axis_off()
    _fit_title(ax, title, width)
    return fig, ax


#: Characters of a graph's name a title shows (the full name is the title's tooltip).
TITLE_NAME_CHARS = 40


def _fit_title(ax, title: str, width_inches: float) -> None:
    """The title on two lines (what, then the numbers), each whole, its font shrunk until the
    longer line fits the figure's width (9 pt at most, 5 at least); the full title is the
    SVG tooltip."""
    head, _, rest = title.partition(": ")
    head = _middle(head, TITLE_NAME_CHARS * 2)
    lines = [head, rest] if rest else [head]
    size = max(5.0, min(9.0, width_inches * 72 / (0.6 * max(map(len, lines)))))
    text = ax.set_title("\n".join(map(_label, lines)), fontsize=size)
    text.set_gid(_tooltip_id(ax.figure, title))


def _middle(text: str, limit: int) -> str:
    """``text`` cut in the middle to ``limit`` characters ("…" marks the cut).

    >>> _middle("bert.encoder.layer.0.attention.self.value.weight", 20)
    'bert.enco…lue.weight'
    """
    if len(text) <= limit:
        return text
    keep = limit - 1
    return text[: keep // 2] + "…" + text[len(text) - (keep - keep // 2):]


def short_label(node: str, limit: int = 7) -> str:
    """A node's label in a small box: its end, where names differ ("bert.encoder....weight#pmu2"
    shows "…t#pmu2"), the whole name when it fits; the full name is the box's tooltip.

    >>> short_label("Add36"), short_label("bert.embeddings.word_embeddings.weight#pmu2")
    ('Add36', '…ht#pmu2')
    """
    return node if len(node) <= limit else "…" + node[-limit:]


def _tooltip_id(fig, text: str) -> str:
    """A fresh SVG id for an artist whose tooltip is ``text`` (written by :func:`_finish`)."""
    tips = fig.__dict__.setdefault("_rdamap_tooltips", {})
    gid = f"rdamap-tip-{len(tips)}"
    tips[gid] = text
    return gid


def _draw_sites(ax, fabric: RduFabric, placed: dict[str, str]) -> None:
    """Every unit site as a square, filled when used (one collection: fast on big chips)."""
    from matplotlib.collections import PatchCollection
    plt = _pyplot()
    squares = [plt.Rectangle((s.x - 0.35, s.y - 0.35), 0.7, 0.7) for s in fabric.sites]
    faces = [_COLOURS.get(s.unit, "#cccccc") if s.id in placed else "white" for s in fabric.sites]
    edges = [_COLOURS.get(s.unit, "#999999") for s in fabric.sites]
    ax.add_collection(PatchCollection(squares, facecolors=faces, edgecolors=edges,
                                      linewidths=0.8, match_original=False))


def _link_segments(fabric: RduFabric, links) -> list:
    pos = {n: d["pos"] for n, d in fabric.graph.nodes(data=True)}
    return [(pos[fabric.link_ends(l)[0]], pos[fabric.link_ends(l)[1]]) for l in links]


def _finish(fig, path: str | os.PathLike) -> None:
    plt = _pyplot()
    fig.tight_layout()
    save_figure(fig, path, tooltips=fig.__dict__.get("_rdamap_tooltips"))
    plt.close(fig)


def draw_section(mapping: Mapping, fabric: RduFabric, section: int,
                 path: str | os.PathLike) -> None:
    """Draw one section's placement and routes on the grid to ``path`` (SVG or PNG)."""
    from matplotlib.collections import LineCollection
    plt = _pyplot()
    placed = _placed(mapping, section)
    load = link_loads(mapping, section)
    caption = _wirelength_caption(mapping, section, sum(load.values()))
    fig, ax = _grid_axes(fabric, f"{mapping.graph} on {mapping.hardware}: section {section} "
                                 f"({len(placed)} units, {caption})")
    _draw_sites(ax, fabric, placed)
    if max(fabric.spec.cols, fabric.spec.rows) <= 20:        # labels only where they fit
        for site in fabric.sites:
            if site.id in placed:
                node = placed[site.id]
                label = ax.text(site.x, site.y, _label(short_label(node, 6)), ha="center",
                                va="center", fontsize=4.5, color="white")
                label.set_gid(_tooltip_id(fig, f"{node} ({site.unit} at {site.id})"))
    if load:
        nets = np.array(list(load.values()), dtype=float)
        ax.add_collection(LineCollection(_link_segments(fabric, load), linewidths=0.6 + 0.8 * nets,
                                         colors=plt.cm.plasma(np.minimum(1.0, nets / 4)),
                                         alpha=0.8))
    pos = {n: d["pos"] for n, d in fabric.graph.nodes(data=True)}
    switches = np.array([pos[s] for s in fabric.switches])
    ax.scatter(switches[:, 0], switches[:, 1], s=2, color="#333333")
    _grid_legend(ax, fabric, placed, with_nets=bool(load))
    _finish(fig, path)


def _grid_legend(ax, fabric: RduFabric, placed: dict[str, str], with_nets: bool) -> None:
    """Below the grid: the unit kinds (filled: used), and the link colours by nets carried."""
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch
    plt = _pyplot()
    kinds = sorted({s.unit for s in fabric.sites})
    handles = [Patch(facecolor=_COLOURS.get(k, "#cccccc"), edgecolor=_COLOURS.get(k, "#999999"),
                     label=f"{_UNIT_NAMES.get(k, k)} used") for k in kinds]
    handles.append(Patch(facecolor="white", edgecolor="#999999", label="site unused"))
    if with_nets:
        handles += [Line2D([], [], color=plt.cm.plasma(min(1.0, n / 4)), linewidth=0.6 + 0.8 * n,
                           label=f"link: {n}{'+' if n == 4 else ''} net(s)") for n in (1, 2, 4)]
    ax.legend(handles=handles, loc="upper center", bbox_to_anchor=(0.5, 0.0), fontsize=6,
              ncol=3, frameon=False)


#: What each unit kind is, for legends.
_UNIT_NAMES = {"pcu": "PCU (compute)", "pmu": "PMU (memory)", "fcmu": "FCMU",
               "agcu": "AGCU (DRAM port)"}


def draw_nets(mapping: Mapping, fabric: RduFabric, section: int, path: str | os.PathLike) -> None:
    """Draw one section's placement with every edge as a straight driver-to-sink line."""
    from matplotlib.collections import LineCollection
    placed = _placed(mapping, section)
    site_of = {n: s for s, n in placed.items()}
    segments = []
    for r in mapping.routes:
        if r.get("section") == section and r["src"] in site_of and r["dst"] in site_of:
            a, b = fabric.site(site_of[r["src"]]), fabric.site(site_of[r["dst"]])
            segments.append(((a.x, a.y), (b.x, b.y)))
    caption = _wirelength_caption(mapping, section, sum(link_loads(mapping, section).values()))
    fig, ax = _grid_axes(fabric, f"{mapping.graph}: section {section}, {len(segments)} edges "
                                 f"drawn straight; routed {caption}")
    _draw_sites(ax, fabric, placed)
    if segments:
        ax.add_collection(LineCollection(segments, linewidths=0.7, colors="#c44e52", alpha=0.6))
    _grid_legend(ax, fabric, placed, with_nets=False)
    _finish(fig, path)


def draw_congestion(mapping: Mapping, fabric: RduFabric, section: int,
                    path: str | os.PathLike) -> None:
    """Heat map of one section's link loads over capacities (all links drawn)."""
    from matplotlib.collections import LineCollection
    from matplotlib.colors import Normalize
    plt = _pyplot()
    load = link_loads(mapping, section)
    links = list(fabric.links)
    ratio = np.array([load.get(l, 0) / max(1, fabric.capacity(l, "vector")) for l in links])
    worst = float(ratio.max()) if len(ratio) else 0.0
    fig, ax = _grid_axes(fabric, f"{mapping.graph}: section {section} link load / capacity "
                                 f"(max {worst:.2f})")
    norm = Normalize(vmin=0.0, vmax=1.0)
    cmap = plt.cm.viridis
    colours = cmap(norm(np.minimum(ratio, 1.0)))          # one call for all links: fast
    colours[ratio > 1.0] = _OVERFULL
    ax.add_collection(LineCollection(_link_segments(fabric, links), colors=colours,
                                     linewidths=0.4 + 2.0 * np.minimum(ratio, 1.5)))
    fig.colorbar(plt.cm.ScalarMappable(norm=norm, cmap=cmap), ax=ax, shrink=0.6,
                 label="nets / channels")
    _finish(fig, path)


#: Parts of a section's batch time in the stacked bars, with their colours.
_TIME_PARTS = (("compute_s", "compute", "#4c72b0"), ("transfer_s", "on-chip transfer", "#dd8452"),
               ("dram_s", "DRAM", "#55a868"), ("reconfig_s", "reconfiguration", "#8c8c8c"))


def draw_performance(mapping: Mapping, path: str | os.PathLike) -> None:
    """Time per section (stacked bars) and link utilisation per section, from ``perf``.

    Examples
    --------
    >>> import tempfile, os
    >>> perf = {"compute_s": 2.0, "transfer_s": 1.0, "dram_s": 0.5, "reconfig_s": 0.1,
    ...         "busiest_link_utilisation": 0.9, "mean_link_utilisation": 0.3}
    >>> m = Mapping("g", "tiny", "mapped", sections=[{"id": 0, "perf": perf}],
    ...             metrics={"throughput": 10.0, "perf_batch": 256})
    >>> path = os.path.join(tempfile.mkdtemp(), "performance.svg"); draw_performance(m, path)
    >>> os.path.getsize(path) > 1000
    True
    """
    plt = _pyplot()
    rows = [s for s in mapping.sections if s.get("perf")]
    ids = np.arange(len(rows))
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(max(6.0, 1.5 + 0.3 * len(rows)), 6.5),
                                      sharex=True)
    base = np.zeros(len(rows))
    for key, label, colour in _TIME_PARTS:
        part = np.array([s["perf"][key] for s in rows], dtype=float)
        top.bar(ids, part, bottom=base, color=colour, label=label, width=0.8)
        base += part
    m = mapping.metrics
    top.set_ylabel(f"seconds per batch of {m.get('perf_batch', '?')}")
    title = (f"{mapping.graph} on {mapping.hardware}: {m.get('throughput', 0):,.4g} "
             "samples/s simulated")
    _fit_title(top, title, fig.get_figwidth())
    top.legend(fontsize=7, loc="upper right")
    busiest = [s["perf"].get("busiest_link_utilisation", 0.0) for s in rows]
    mean = [s["perf"].get("mean_link_utilisation", 0.0) for s in rows]
    bottom.bar(ids - 0.2, busiest, width=0.4, color="#c44e52", label="busiest link")
    bottom.bar(ids + 0.2, mean, width=0.4, color="#8172b2", label="mean of links used")
    bottom.set_ylim(0, 1.05)
    bottom.set_ylabel("link busy share")
    bottom.set_xlabel("section")
    bottom.set_xticks(ids, [str(s["id"]) for s in rows], fontsize=7)
    bottom.legend(fontsize=7, loc="upper right")
    _finish(fig, path)


def picture_names(section: int, fmt: str = "svg") -> list[str]:
    """The file names of one section's pictures, in drawing order."""
    return [f"section{section}{kind}.{fmt}" for kind in _KINDS]


def draw_mapping(mapping: Mapping, fabric: RduFabric, out_dir: str | os.PathLike,
                 fmt: str = "svg", max_sections: int | None = None,
                 deadline: float | None = None) -> list[str]:
    """Draw routes, nets and congestion of every section (or the first ``max_sections``,
    or those begun before ``deadline``, a :func:`time.monotonic` time).

    Returns the relative file names, one set per section drawn. The caller
    reports a limit (``pipeline.report`` says which sections were left out).
    """
    out_dir = Path(out_dir)
    drawn: dict[int, list[str]] = {}
    sections = [s["id"] for s in mapping.sections[:max_sections]]
    # every section's placement first, then the nets and congestion pictures: a deadline that
    # comes first leaves out the secondary pictures before any section's main one
    for kind, draw in enumerate((draw_section, draw_nets, draw_congestion)):
        for k in sections:
            if deadline is not None and time.monotonic() >= deadline:
                break
            name = picture_names(k, fmt)[kind]
            draw(mapping, fabric, k, out_dir / name)
            drawn.setdefault(k, []).append(name)
    names = [name for k in sections for name in drawn.get(k, [])]
    if any(s.get("perf") for s in mapping.sections):      # one picture, cheap: always drawn
        draw_performance(mapping, out_dir / f"performance.{fmt}")
        names.append(f"performance.{fmt}")
    return names


def draw_streaming(mapping: Mapping, spec, path: str | os.PathLike) -> None:
    """Tiles x slots: each spoke entry as a cell (instruction, delay or idle), SVG or PNG.

    Examples
    --------
    >>> import tempfile, os
    >>> from hardware import load_hardware
    >>> from pipeline.options import RunOptions
    >>> from pipeline.streaming import map_streaming
    >>> from sim.streaming import distance_graph
    >>> se = load_hardware("se16")
    >>> m = map_streaming(distance_graph(), se, RunOptions(time_limit=5))
    >>> path = os.path.join(tempfile.mkdtemp(), "se.svg"); draw_streaming(m, se, path)
    >>> os.path.getsize(path) > 1000
    True
    """
    plt = _pyplot()
    ii = mapping.ii or 1
    sdfs = sorted({t.get("sdf", 0) for t in mapping.tiles or []}) or [0]
    fig, axes = plt.subplots(len(sdfs), 1, squeeze=False,
                             figsize=(max(6, spec.tiles * 0.8), (1.5 + ii * 0.7) * len(sdfs)))
    for ax, sdf in zip(axes[:, 0], sdfs):
        tiles = [t for t in mapping.tiles or [] if t.get("sdf", 0) == sdf]
        _draw_sdf(ax, tiles, spec, max((t["ii"] for t in tiles), default=ii))
        name = _middle(mapping.graph, TITLE_NAME_CHARS)
        title = f"{name} on {spec.name}: II {mapping.ii} (a new iteration every " \
                f"{mapping.ii} cycles), {mapping.metrics.get('cycles')} cycles per iteration"
        if len(sdfs) > 1:
            title = f"{name}, part {sdf} of {len(sdfs)} (a synchronous data-flow run as a " \
                    f"phase; II {tiles[0]['ii'] if tiles else '?'})"
        ax.set_title(_label(title), fontsize=8).set_gid(_tooltip_id(fig, title))
    fig.tight_layout()
    _finish(fig, path)


def _draw_sdf(ax, tiles: list[dict], spec, ii: int) -> None:
    """One SDF's tiles x slots on ``ax``."""
    plt = _pyplot()
    colours = {"instruction": "#4c72b0", "delay": "#dd8452", "idle": "white"}
    for tile in tiles:
        for entry in tile["entries"]:
            x, y = tile["tile"], entry["slot"]
            ax.add_patch(plt.Rectangle((x, y), 0.95, 0.9, facecolor=colours[entry["kind"]],
                                       edgecolor="#555555", linewidth=0.6))
            label = entry.get("instruction") or ("delay" if entry["kind"] == "delay" else "")
            if label:
                text = ax.text(x + 0.47, y + 0.45, _label(short_label(str(label), 8)),
                               ha="center", va="center", fontsize=6,
                               color="white" if entry["kind"] != "idle" else "black")
                text.set_gid(_tooltip_id(ax.figure, f"{label}: tile {x}, slot {y}"))
    ax.set_xlim(0, spec.tiles)
    ax.set_ylim(ii, 0)
    ax.set_xticks([t + 0.47 for t in range(spec.tiles)], [f"T{t}" for t in range(spec.tiles)],
                  fontsize=7)
    ax.set_yticks([s + 0.45 for s in range(ii)], [f"slot {s}" for s in range(ii)], fontsize=7)


def draw_cgra(mapping: Mapping, spec, path: str | os.PathLike) -> None:
    """A CGRA mapping: PEs x cycles of one iteration with every route (left), and PEs x slots
    modulo II with the operations and the values held per slot (right); SVG or PNG.

    Examples
    --------
    >>> import tempfile, os
    >>> from hardware import load_hardware
    >>> from model.graph import Graph, Node, Edge
    >>> from pipeline.options import RunOptions
    >>> from pipeline.cgra import map_cgra
    >>> g = Graph("acc", [Node("a", op="LOAD"), Node("b", op="ADD")],
    ...           [Edge("a", "b"), Edge("b", "b", distance=1)])
    >>> cgra = load_hardware("cgra4x4")
    >>> m = map_cgra(g, cgra, RunOptions(time_limit=5))
    >>> path = os.path.join(tempfile.mkdtemp(), "pes.svg"); draw_cgra(m, cgra, path)
    >>> os.path.getsize(path) > 1000
    True
    """
    from matplotlib.collections import LineCollection
    plt = _pyplot()
    ii = mapping.ii or 1
    pes = spec.rows * spec.cols
    cycles = [p["cycle"] for p in mapping.placement.values()]
    ends = [s["cycle"] for r in mapping.routes for s in r.get("steps", [])]
    top = max(cycles + ends + [0]) + 1
    fig, (left, right) = plt.subplots(1, 2, figsize=(max(8, pes * 0.9), max(3, top * 0.3) + 1),
                                      gridspec_kw={"width_ratios": [2, 1]})
    segments = []
    held: Counter = Counter()
    for r in mapping.routes:
        steps = [(s["pe"][0] * spec.cols + s["pe"][1], s["cycle"]) for s in r.get("steps", [])]
        segments += [[(a + 0.5, ca + 0.5), (b + 0.5, cb + 0.5)]
                     for (a, ca), (b, cb) in zip(steps, steps[1:])]
        for pe, c in set(steps):
            held[(pe, c % ii, r["src"])] = 1
    left.add_collection(LineCollection(segments, colors="#dd8452", linewidths=1.2, alpha=0.7))
    for name, p in mapping.placement.items():
        x = p["pe"][0] * spec.cols + p["pe"][1]
        left.add_patch(plt.Rectangle((x + 0.05, p["cycle"] + 0.05), 0.9, 0.9, color="#4c72b0"))
        text = left.text(x + 0.5, p["cycle"] + 0.5, _label(short_label(name)), ha="center",
                         va="center", fontsize=5, color="white")
        text.set_gid(_tooltip_id(fig, f"{name}: PE {tuple(p['pe'])}, cycle {p['cycle']}"))
        right.add_patch(plt.Rectangle((x + 0.05, p["cycle"] % ii + 0.05), 0.9, 0.9,
                                      color="#4c72b0"))
        right.text(x + 0.5, p["cycle"] % ii + 0.5, _label(short_label(name, 5)), ha="center",
                   va="center", fontsize=4, color="white", rotation=90)
    values = Counter((pe, s) for pe, s, _ in held)
    for (pe, s), k in values.items():
        right.text(pe + 0.95, s + 0.95, str(k), ha="right", va="bottom", fontsize=5,
                   color="#dd8452")
    labels = [f"{r},{c}" for r in range(spec.rows) for c in range(spec.cols)]
    for ax, rows, what in ((left, top, "cycle"), (right, ii, "slot")):
        ax.set_xlim(0, pes)
        ax.set_ylim(rows, 0)
        ax.set_xticks([x + 0.5 for x in range(pes)], labels, fontsize=6, rotation=90)
        ax.set_yticks([y + 0.5 for y in range(rows)], [f"{what} {y}" for y in range(rows)],
                      fontsize=6)
        ax.set_xlabel("PE (row, col)", fontsize=7)
    left.set_title(_label(f"{_middle(mapping.graph, TITLE_NAME_CHARS)} on {spec.name}: II {ii}, "
                          f"{mapping.metrics.get('cycles')} cycles per iteration (routes in "
                          "orange)"), fontsize=8)
    right.set_title(f"modulo II {ii}: operations, values held (orange)", fontsize=8)
    _finish(fig, path)

