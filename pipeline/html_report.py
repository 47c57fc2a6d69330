"""report.html: one self-contained interactive page per run (no network: CSS, JS, data inline).

What it shows:

* the result in the user's terms (as the command line's last lines) and every metric with its
  unit and meaning;
* RDU: the sections as a timeline of simulated time for one batch (reconfiguration, DRAM,
  compute, on-chip transfer; from the performance simulator's result already in the mapping),
  and every section's grid: unit sites (filled where used), links coloured by load (nets over
  channels); hovering a unit shows its node's id, op and units, clicking it highlights its
  nets;
* Streaming Engine and CGRA: the schedule as a table of tiles or PEs x time slots.

Every id comes from the user's files and may hold ``<``, ``|`` or quotes: the data travels as
JSON inside a ``<script type="application/json">`` with ``<``, ``>`` and ``&`` escaped, and the
page's script puts text only through ``textContent`` and ``setAttribute`` (never markup);
the few strings written into the page by Python go through :func:`html.escape`.
"""

from __future__ import annotations

import html
import json
import os
from importlib import resources
from pathlib import Path

from hardware import RduFabric
from model.files import write_text_atomic
from model.mapping import Mapping
from pipeline.headline import result_lines
from pipeline.metric_notes import meaning_of, unit_of
from pipeline.report import stage_durations
from pipeline.targets import target_of

__all__ = ["render_html", "write_html", "page_data", "json_for_script"]

#: The parts of a section's batch time, in the order the timeline draws them.
TIME_PARTS = ("reconfig_s", "dram_s", "compute_s", "transfer_s")


def write_html(mapping: Mapping, spec, path: str | os.PathLike, fabric: RduFabric | None = None,
               graph=None, files: list[str] | None = None) -> None:
    """Write report.html atomically (see :func:`render_html`)."""
    write_text_atomic(Path(path), render_html(mapping, spec, fabric, graph, files))


def render_html(mapping: Mapping, spec, fabric: RduFabric | None = None, graph=None,
                files: list[str] | None = None) -> str:
    """The whole page: ``fabric`` for an RDU's grids, ``graph`` for the nodes' ops and what a
    sample is, ``files`` the other outputs to link to."""
    data = page_data(mapping, spec, fabric, graph)
    title = f"{mapping.graph} on {mapping.hardware}"
    links = " ".join(f'<a href="{html.escape(f)}">{html.escape(f)}</a>' for f in files or [])
    return _TEMPLATE.format(title=html.escape(title), css=_asset("report.css"),
                            js=_asset("report.js"), data=json_for_script(data),
                            files=links or "-")


def json_for_script(data) -> str:
    """``data`` as JSON that cannot end its ``<script>`` element or open a comment.

    >>> json_for_script({"id": "</script><!--&"})
    '{"id": "\\\\u003c/script\\\\u003e\\\\u003c!--\\\\u0026"}'
    """
    text = json.dumps(data, allow_nan=False, default=str)
    for raw, escaped in (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026"),
                         ("\u2028", "\\u2028"), ("\u2029", "\\u2029")):
        text = text.replace(raw, escaped)
    return text


def page_data(mapping: Mapping, spec, fabric: RduFabric | None = None, graph=None) -> dict:
    """Everything the page's script draws, as plain JSON values."""
    attrs = graph.attrs if graph is not None else None
    data = {"graph": mapping.graph, "hardware": mapping.hardware, "kind": spec.kind,
            "status": mapping.status, "diagnosis": mapping.diagnosis,
            "result": result_lines(mapping, attrs) if mapping.status == "mapped" else [],
            "metrics": [[k.replace("_", " "), _plain(v), unit_of(k), meaning_of(k)]
                        for k, v in mapping.metrics.items()],
            "stages": [[s["stage"], s.get("section"), s["method"], s["status"], round(d, 4)]
                       for s, d in zip(mapping.stages, stage_durations(mapping))]}
    if mapping.status != "mapped":
        return data
    return data | target_of(spec).page(mapping, spec, fabric, graph)


def _plain(value):
    """A metric as JSON can hold it (no NaN), floats shortened."""
    if isinstance(value, float):
        return round(value, 6) if value == value and abs(value) != float("inf") else str(value)
    return value


def _asset(name: str) -> str:
    return resources.files("pipeline").joinpath("assets", name).read_text(encoding="utf-8")


_TEMPLATE = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>rdamap: {title}</title>
<style>{css}</style></head>
<body>
<header><h1>rdamap: {title}</h1><div id="status"></div><ul id="result"></ul>
<p class="files">Files: {files}</p></header>
<main>
<section id="timeline-box" hidden><h2>Timeline of one batch (simulated)</h2>
<p class="note">Sections run one after another; each bar is a section's share of one batch:
reconfiguring the chip, DRAM traffic, compute at the slowest stage's rate, and the rest of the
on-chip pipeline (links, memories, filling). Hover a bar for its seconds.</p>
<div id="timeline"></div></section>
<section id="grids-box" hidden><h2>Sections: placement and routes</h2>
<p class="note">Squares are unit sites (filled: used by this section), dots are switches, lines
are links coloured by load (nets over channels). Hover a unit for its node; click it to
highlight its nets, click again or on empty space to clear.</p>
<div id="legend"></div><div id="info" class="info">hover a unit</div><div id="grids"></div>
</section>
<section id="schedule-box" hidden><h2>Schedule</h2><div id="schedule"></div></section>
<section><h2>Metrics</h2><table id="metrics"></table></section>
<section><h2>Stages</h2><p class="note">Every model solved or pass run, in order; duration in
seconds.</p><table id="stages"></table></section>
</main>
<script type="application/json" id="data">{data}</script>
<script>{js}</script>
</body></html>
"""
