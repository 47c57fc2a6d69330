"""The human report of a run (markdown), written next to mapping.json."""

from __future__ import annotations

import os
from pathlib import Path

from model.mapping import Mapping

__all__ = ["render_report", "write_report"]


def render_report(mapping: Mapping, pictures: list[str] | None = None,
                  hardware_summary: str = "", extra: list[str] | None = None) -> str:
    """Markdown text: outcome, metrics, sections, stages, a target's own lines, pictures."""
    lines = [f"# Mapping of `{mapping.graph}` on `{mapping.hardware}`", ""]
    if mapping.status == "mapped":
        lines.append("**Status: mapped.** Every answer passed the independent checker "
                     "(`sim/`) before it was reported.")
    else:
        lines += ["**Status: failed.**", "", f"Diagnosis: {mapping.diagnosis}"]
    if hardware_summary:
        lines += ["", f"Hardware: {hardware_summary}"]
    if mapping.metrics:
        lines += ["", "## Metrics", "", "| metric | value |", "|---|---|"]
        lines += [f"| {k.replace('_', ' ')} | {v} |" for k, v in mapping.metrics.items()]
    if mapping.sections and mapping.ii is None:        # an RDU run (sections of sites)
        lines += _sections(mapping) + _cuts(mapping) + _buffers(mapping)
    if mapping.trace:
        lines += ["", "## Feedback rounds", "",
                  "| round | failed at | code | section | fixed by | change |",
                  "|---|---|---|---|---|---|"]
        for t in mapping.trace:
            lines.append(f"| {t['iteration']} | {t['level']} | {t['code']} | "
                         f"{'-' if t['section'] is None else t['section']} | "
                         f"{t.get('fixed_by') or 'nobody'} | {t.get('change') or t['message']} |")
    lines += ["", "## Stages", "",
              "| stage | section | method | status | objective | time (s) |",
              "|---|---|---|---|---|---|"]
    for s in mapping.stages:
        objective = "-" if s.get("objective") is None else f"{s['objective']:.6g}"
        section = "-" if s.get("section") is None else s["section"]
        lines.append(f"| {s['stage']} | {section} | {s['method']} | {s['status']} | "
                     f"{objective} | {s['time']:.3f} |")
    if extra:
        lines += [""] + list(extra)
    if pictures:
        lines += ["", "## Pictures", ""] + [f"![{p}]({p})" for p in pictures]
    return "\n".join(lines) + "\n"


def _sections(mapping: Mapping) -> list[str]:
    lines = ["", "## Sections", "",
             "| section | category | nodes | PCU est. | PMU est. | buffer units | scale | "
             "wirelength | routing iterations | reused |", "|---|---|---|---|---|---|---|---|---|---|"]
    routing = {s["section"]: s for s in mapping.stages if s["stage"] == "routing"}
    for s in mapping.sections:
        r = routing.get(s["id"], {})
        scale = ", ".join(f"{k} {v:.3g}" for k, v in sorted((s.get("scale") or {}).items())) or "1"
        lines.append(f"| {s['id']} | {s.get('category') or '-'} | {len(s['nodes'])} | "
                     f"{s.get('pcu', 0):g} | {s.get('pmu', 0):g} | {s.get('buffer_units', 0)} | "
                     f"{scale} | {r.get('objective', '-')} | {r.get('iterations', '-')} | "
                     f"{'yes' if s.get('reused') else 'no'} |")
    return lines


def _cuts(mapping: Mapping) -> list[str]:
    cuts = [s for s in mapping.stages if s["stage"] == "sections"]
    if not cuts:
        return []
    lines = ["", "## Section cuts", "",
             "| cut | method | sections | lower bound | greedy sections | DRAM bytes | "
             "greedy DRAM bytes | status | backend | time (s) |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for k, s in enumerate(cuts):
        lines.append(f"| {k}{' (re-cut from ' + str(s['recut_from']) + ')' if s.get('recut_from') else ''} "
                     f"| {s['method']} | {s.get('sections', '-')} | {s.get('lower_bound', '-')} | "
                     f"{s.get('greedy_sections', '-')} | {_num(s.get('objective'))} | "
                     f"{_num(s.get('greedy_traffic'))} | {s['status']} | {s.get('backend') or '-'} | "
                     f"{s['time']:.2f} |")
    return lines


def _buffers(mapping: Mapping) -> list[str]:
    rows = [s for s in mapping.stages if s["stage"] == "buffers"]
    if not rows:
        return []
    lines = ["", "## Stage-buffer balancing", "",
             "| section | method | PMUs before | PMUs after | inserted buffers | "
             "throughput before | throughput after | status | backend |",
             "|---|---|---|---|---|---|---|---|---|"]
    for s in rows:
        lines.append(f"| {s.get('section')} | {s['method']} | {s.get('pmus_before', '-')} | "
                     f"{s.get('pmus_after', '-')} | {s.get('inserted_buffers', '-')} | "
                     f"{_num(s.get('throughput_before'))} | {_num(s.get('throughput_after'))} | "
                     f"{s['status']} | {s.get('backend') or '-'} |")
    skipped = sum(s.get("loop_edges_skipped") or 0 for s in rows)
    if skipped:
        lines += ["", f"{skipped} loop-carried edge(s) were not balanced (they feed the next "
                      "iteration, so their depth is not a pipeline stage)."]
    lines += ["", "PMUs added by balancing become stage-buffer units placed in their section."]
    return lines


def _num(value) -> str:
    if value is None:
        return "-"
    return f"{value:,.4g}" if isinstance(value, float) and abs(value) < 1e4 else f"{value:,.0f}"


def write_report(text: str, path: str | os.PathLike) -> None:
    """Write the report atomically."""
    path = Path(path)
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)
