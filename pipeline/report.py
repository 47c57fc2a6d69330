"""The human report of a run (markdown), written next to mapping.json."""

from __future__ import annotations

import os
from pathlib import Path

from model.mapping import Mapping

__all__ = ["render_report", "write_report"]


def render_report(mapping: Mapping, pictures: list[str] | None = None,
                  hardware_summary: str = "") -> str:
    """Markdown text: outcome, metrics, sections, stages, pictures."""
    lines = [f"# Mapping of `{mapping.graph}` on `{mapping.hardware}`", ""]
    if mapping.status == "mapped":
        lines.append("**Status: mapped.** Every section's placement and routes passed the "
                     "independent checker (`sim.check`).")
    else:
        lines += ["**Status: failed.**", "", f"Diagnosis: {mapping.diagnosis}"]
    if hardware_summary:
        lines += ["", f"Hardware: {hardware_summary}"]
    if mapping.metrics:
        lines += ["", "## Metrics", "", "| metric | value |", "|---|---|"]
        lines += [f"| {k.replace('_', ' ')} | {v} |" for k, v in mapping.metrics.items()]
    if mapping.sections:
        lines += ["", "## Sections", "",
                  "| section | category | nodes | PCUs | PMUs | wirelength | routing iterations |",
                  "|---|---|---|---|---|---|---|"]
        routing = {s["section"]: s for s in mapping.stages if s["stage"] == "routing"}
        for s in mapping.sections:
            r = routing.get(s["id"], {})
            lines.append(f"| {s['id']} | {s.get('category') or '-'} | {len(s['nodes'])} | "
                         f"{s.get('pcu', 0):g} | {s.get('pmu', 0):g} | {r.get('objective', '-')} | "
                         f"{r.get('iterations', '-')} |")
    lines += ["", "## Stages", "",
              "| stage | section | method | status | objective | time (s) |",
              "|---|---|---|---|---|---|"]
    for s in mapping.stages:
        objective = "-" if s.get("objective") is None else f"{s['objective']:.6g}"
        section = "-" if s.get("section") is None else s["section"]
        lines.append(f"| {s['stage']} | {section} | {s['method']} | {s['status']} | "
                     f"{objective} | {s['time']:.3f} |")
    lines += ["", "Not run in this version: stage-buffer balancing (edge depths are reported "
              "unchanged), the exact section, placement and routing models."]
    if pictures:
        lines += ["", "## Pictures", ""] + [f"![{p}]({p})" for p in pictures]
    return "\n".join(lines) + "\n"


def write_report(text: str, path: str | os.PathLike) -> None:
    """Write the report atomically."""
    path = Path(path)
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)
