"""The human report of a run (markdown), written next to mapping.json.

The report says nothing mapping.json does not: every number comes from the
mapping, shown so a person can read it (bytes as whole bytes, with thousands
separators). Where two numbers could be confused they are named apart:

* ``seconds`` in mapping.json's metrics is the time of the mapping passes; the
  wall time of the whole run (what the command line prints as ``mapped in X s``)
  is passed in as ``seconds`` and shown as its own row;
* a section's wirelength is the checker's count (links used, a net once per
  link; :func:`section_wirelength`); the per-section values add up to the
  ``wirelength`` metric;
* a re-cut's row in the section-cut table counts the kept sections in its
  section numbers, and its DRAM bytes are those of the part it cut again; the
  final cut's DRAM bytes are the ``dram_bytes`` metric.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from model.files import write_text_atomic
from model.mapping import Mapping
from pipeline.headline import result_lines
from pipeline.metric_notes import meaning_of, unit_of
from sim.perf import describe

__all__ = ["render_report", "write_report", "section_wirelength", "stage_durations",
           "streaming_lines", "cgra_lines"]

#: Metrics that count bytes: shown as whole bytes (the MSR DNN sizes are fractional).
_BYTE_METRICS = ("dram_bytes",)


def render_report(mapping: Mapping, pictures: list[str] | None = None,
                  hardware_summary: str = "", extra: list[str] | None = None,
                  elapsed: float | None = None, graph_attrs: dict | None = None) -> str:
    """Markdown text: outcome, metrics, sections, stages, a target's own lines, pictures.

    Parameters
    ----------
    mapping : Mapping
        What the run decided (the same object written as mapping.json).
    pictures : list of str, optional
        File names of the pictures drawn, relative to the report.
    hardware_summary : str
        One line describing the hardware.
    extra : list of str, optional
        Markdown lines of the target's own (e.g. the Streaming Engine's tiles).
    elapsed : float, optional
        Wall time of the whole run, the number the command line prints; shown
        with two decimals, as the command line shows it.
    graph_attrs : dict, optional
        The graph's attributes (an ONNX model's ``batch`` says what a sample is).
    """
    lines = [f"# Mapping of {_code(mapping.graph)} on {_code(mapping.hardware)}", ""]
    if mapping.status == "mapped":
        lines.append("**Status: mapped.** Every answer passed the independent checker "
                     "(`sim/`) before it was reported.")
    else:
        lines += [f"**Status: {mapping.status}.**", "", f"Diagnosis: {_md(mapping.diagnosis)}"]
    if mapping.status == "mapped":
        lines += ["", "## Result", ""] + [f"- {_md(line.removeprefix('result: '))}"
                                          for line in result_lines(mapping, graph_attrs)]
    if hardware_summary:
        lines += ["", f"Hardware: {_md(hardware_summary)}"]    # its name is the file's
    if mapping.run:
        lines += _run(mapping.run)
    if mapping.metrics or elapsed is not None:
        lines += _metrics(mapping, elapsed)
    if mapping.sections and mapping.ii is None:        # an RDU run (sections of sites)
        lines += _sections(mapping) + _cuts(mapping) + _buffers(mapping) + _performance(mapping)
    if mapping.trace:
        lines += ["", "## Feedback rounds", "",
                  "| round | failed at | code | section | fixed by | change |",
                  "|---|---|---|---|---|---|"]
        for t in mapping.trace:
            lines.append(_row(t['iteration'], t['level'], t['code'],
                              '-' if t['section'] is None else t['section'],
                              t.get('fixed_by') or 'nobody', t.get('change') or t['message']))
    lines += _stages(mapping)
    if extra:
        lines += [""] + list(extra)
    note = _pictures_note(mapping, pictures) if pictures is not None else []
    if pictures or note:
        lines += ["", "## Pictures", ""] + note
        lines += [f"![{p}]({p})" for p in pictures]
    return "\n".join(lines) + "\n"


def _stages(mapping: Mapping) -> list[str]:
    """The stages table: what ran, in order, and how long each took."""
    lines = ["", "## Stages", "",
             "Every model solved or pass run, in the order they ran (rounds the feedback loop "
             "later replaced included); duration: how long that stage took.", "",
             "| stage | section | method | status | objective | duration (s) |",
             "|---|---|---|---|---|---|"]
    for s, seconds in zip(mapping.stages, stage_durations(mapping)):
        section = "-" if s.get("section") is None else s["section"]
        lines.append(_row(s['stage'], section, s['method'], s['status'], _stage_objective(s),
                          f"{seconds:.3f}"))
    return lines


def stage_durations(mapping: Mapping) -> list[float]:
    """Seconds each stage took. An RDU stage's ``time`` is its duration; a Streaming Engine or
    CGRA stage's is the time since the run began when it was recorded, so its duration is its
    solver's own time (``time_solver``) or, without one, the time since the stage before.

    >>> m = Mapping("g", "cgra4x4", "mapped", ii=2, stages=[
    ...     {"time": 3.0, "time_solver": 0.5}, {"time": 3.0, "time_solver": 2.5}, {"time": 3.25}])
    >>> stage_durations(m)
    [0.5, 2.5, 0.25]
    """
    if mapping.ii is None:
        return [float(s.get("time") or 0.0) for s in mapping.stages]
    durations, before = [], 0.0
    for s in mapping.stages:
        at = float(s.get("time") or 0.0)
        own = s.get("time_solver")
        durations.append(float(own) if own is not None else max(0.0, at - before))
        before = max(before, at)
    return durations


def section_wirelength(mapping: Mapping, section: int) -> int | None:
    """The checker's wirelength of one RDU section (links used, a net once per link).

    It is the objective of the section's last routing stage (the router's own
    count of the routes the checker then accepted; the checker counts the same
    way, and tests hold that the sections add up to ``metrics["wirelength"]``,
    which is the checker's); ``None`` when the section was not routed.
    """
    found = None
    for s in mapping.stages:
        if s["stage"] == "routing" and s.get("section") == section:
            found = s.get("objective")
    return found


def _metrics(mapping: Mapping, elapsed: float | None) -> list[str]:
    lines = ["", "## Metrics", "", "| metric | value | unit | meaning |", "|---|---|---|---|"]
    for key, value in mapping.metrics.items():
        label = key.replace("_", " ")
        if key == "seconds" and elapsed is not None:
            label = "seconds of the mapping passes"      # not the run's wall time: named apart
        shown = _bytes(value) if key in _BYTE_METRICS else _yes_no(value)
        lines.append(_row(label, shown, unit_of(key) or "-", meaning_of(key) or "-"))
    if elapsed is not None:
        lines.append(f"| wall time of the whole run | {elapsed:.2f} | s | from the process start "
                     "to this report: loading, mapping and pictures |")
    return lines


def _yes_no(value):
    return {True: "yes", False: "no"}.get(value, value) if isinstance(value, bool) else value


def _pictures_note(mapping: Mapping, pictures: list[str]) -> list[str]:
    """A line when fewer RDU sections were drawn than there are (the run's time
    limit came first), with the command that draws the rest."""
    if mapping.ii is not None or mapping.status != "mapped":
        return []
    drawn = {p.split("_")[0].split(".")[0] for p in pictures if p.startswith("section")}
    if len(drawn) >= len(mapping.sections):
        return []
    return [f"Pictures of {len(drawn)} of {len(mapping.sections)} sections were drawn before "
            "the run's time limit; `python -m pipeline.draw OUT/mapping.json` draws every "
            "section (OUT: this report's folder).", ""]


def _run(run: dict) -> list[str]:
    """How the run was asked for, and whether its answer is promised to repeat."""
    backends = ", ".join(f"{d} `{b}`" for d, b in run.get("backends", {}).items())
    repeat = ("the same seed and work give the same mapping" if not run.get("cut_short") else
              f"the run's deadline cut {run['cut_short']} search(es) short, so the same seed is "
              "not promised to give the same mapping (less --work than --time-limit restores "
              "it: docs/budget.md)")
    work = "" if run.get("work") is None else f", work {run['work']} s"
    return ["", f"Run: seed {run.get('seed')}, budget {run.get('time_limit')} s{work}, placer "
                f"`{run.get('placer')}`, router `{run.get('router')}`, cost model "
                f"`{run.get('cost_model', 'wirelength')}`; backends: {backends}; "
                f"{repeat}."]


def _sections(mapping: Mapping) -> list[str]:
    lines = ["", "## Sections", "",
             "| section | category | nodes | PCU est. | PMU est. | buffer units | scale | "
             "wirelength | routing iterations | reused |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    routing = {s["section"]: s for s in mapping.stages if s["stage"] == "routing"}
    for s in mapping.sections:
        r = routing.get(s["id"], {})
        scale = ", ".join(f"{k} {v:.3g}" for k, v in sorted((s.get("scale") or {}).items())) or "1"
        wirelength = section_wirelength(mapping, s["id"])
        lines.append(_row(s['id'], s.get('category') or '-', len(s['nodes']),
                          f"{s.get('pcu', 0):g}", f"{s.get('pmu', 0):g}",
                          s.get('buffer_units', 0), scale,
                          '-' if wirelength is None else wirelength,
                          r.get('iterations', '-'), 'yes' if s.get('reused') else 'no'))
    lines += ["", "Wirelength: links used, a net counted once per link, as the checker measured "
                  "it (links to units a section added included); the sections add up to the "
                  "`wirelength` metric."]
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
        kept = s.get("recut_from") or 0      # a re-cut keeps sections 0..kept-1 as they were
        lines.append(_row(f"{k}{' (re-cut from ' + str(kept) + ')' if kept else ''}",
                          s['method'], _plus(s.get('sections'), kept), s.get('lower_bound', '-'),
                          _plus(s.get('greedy_sections'), kept), _bytes(s.get('objective')),
                          _bytes(s.get('greedy_traffic')), s['status'], s.get('backend') or '-',
                          f"{s['time']:.2f}"))
    if any(s.get("recut_from") for s in cuts):
        lines += ["", "Sections count the kept ones; a re-cut's DRAM bytes are those between the "
                      "sections it cut again."]
    if "dram_bytes" in mapping.metrics:
        lines += ["", f"Final cut: {len(mapping.sections)} sections, "
                      f"{_bytes(mapping.metrics['dram_bytes'])} DRAM bytes across cuts "
                      f"({mapping.metrics.get('dram_edges', '-')} edges)."]
    return lines


def _performance(mapping: Mapping) -> list[str]:
    """The performance estimate (``sim.perf``): throughput, latency, where a batch's time goes."""
    rows = [s for s in mapping.sections if s.get("perf")]
    m = mapping.metrics
    if not rows:
        note = m.get("performance")
        return ["", "## Performance estimate", "", f"{note}."] if note else []
    lines = ["", "## Performance estimate", "",
             f"Simulated by `sim/perf.py`: **{_num(m['throughput'])} samples/s** "
             f"({m['samples_per_cycle']:.4g} per cycle), one sample alone in "
             f"{m['latency_s']:.4g} s; bottleneck: {_md(m['bottleneck'])}; busiest link: "
             f"{_md(m.get('busiest_link') or '-')}. A batch of {m['perf_batch']} samples runs the "
             f"sections one after another in {m['batch_s']:.4g} s:", "",
             "| section | compute (s) | on-chip transfer (s) | DRAM (s) | reconfiguration (s) | "
             "total (s) | samples / cycle | normalised | bottleneck | busiest link |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for s in rows:
        p = s["perf"]
        link = (f"{p['busiest_link']} ({p['busiest_link_utilisation']:.0%})"
                if p.get("busiest_link") else "-")
        lines.append(_row(s['id'], *(f"{p[k]:.4g}" for k in _TIME_KEYS),
                          f"{p['normalised']:.3f}", describe(p['bottleneck']), link))
    lines += ["", "Compute: the batch at the slowest stage's compute rate; on-chip transfer: the "
                  "rest of the pipeline's time (links, PMUs, back-pressure, filling); DRAM: "
                  "what cut-crossing values and tensors larger than their PMUs (tiled: streamed "
                  "every sample) add beyond the pipeline, plus loading the tensors that fit; "
                  "normalised: throughput over the compute bound (source 002's label)."]
    return lines


def _stage_objective(stage: dict) -> str:
    """A stage's objective; the section cut's is DRAM bytes, shown as whole bytes."""
    if stage.get("objective") is None:
        return "-"
    if stage["stage"] == "sections":
        return _bytes(stage["objective"])
    return f"{stage['objective']:.6g}"


def _plus(count, kept: int) -> str:
    return "-" if count is None else str(count + kept)


def _buffers(mapping: Mapping) -> list[str]:
    rows = [s for s in mapping.stages if s["stage"] == "buffers"]
    if not rows:
        return []
    lines = ["", "## Stage-buffer balancing", "",
             "| cut | section | method | PMUs before | PMUs after | inserted buffers | "
             "throughput before | throughput after | status | backend |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for cut, s in _buffer_rows_by_cut(mapping):
        lines.append(_row(cut, s.get('section'), s['method'], s.get('pmus_before', '-'),
                          s.get('pmus_after', '-'), s.get('inserted_buffers', '-'),
                          _num(s.get('throughput_before')), _num(s.get('throughput_after')),
                          s['status'], s.get('backend') or '-'))
    skipped = sum(s.get("loop_edges_skipped") or 0 for s in rows)
    if skipped:
        lines += ["", f"{skipped} loop-carried edge(s) were not balanced (they feed the next "
                      "iteration, so their depth is not a pipeline stage)."]
    lines += ["", "PMUs added by balancing become stage-buffer units placed in their section."]
    return lines


def _buffer_rows_by_cut(mapping: Mapping) -> list[tuple[int, dict]]:
    """Balancing rows with the cut they belong to (a re-cut balances its sections again)."""
    cut, rows = -1, []
    for s in mapping.stages:
        if s["stage"] == "sections":
            cut += 1                  # numbered as in the section-cut table
        elif s["stage"] == "buffers":
            rows.append((max(cut, 0), s))
    return rows


#: The per-section numbers of the performance table, in its column order.
_TIME_KEYS = ("compute_s", "transfer_s", "dram_s", "reconfig_s", "total_s", "samples_per_cycle")
#: What must not reach markdown as written: the cell separator, HTML (a node may be called
#: "<script>"), the backslash that escapes, line breaks and other control characters.
_MD_SPECIAL = re.compile(r"[|<>&\\\x00-\x1f\x7f-\x9f]")
_MD_ESCAPES = {"|": "\\|", "<": "&lt;", ">": "&gt;", "&": "&amp;", "\\": "\\\\",
               "\n": " ", "\r": " ", "\t": " "}


def _md(value) -> str:
    r"""``value`` as markdown text that shows as written and stays in its table cell.

    Examples
    --------
    >>> print(_md("a|b <script> & c\\d"), _md("x\x00y\nz"))
    a\|b &lt;script&gt; &amp; c\\d x\x00y z
    """
    return _MD_SPECIAL.sub(lambda c: _MD_ESCAPES.get(c.group(), f"\\x{ord(c.group()):02x}"),
                           str(value))


def _row(*cells) -> str:
    """One markdown table row; every cell through :func:`_md` (node ids, names and
    messages come from the user's files)."""
    return "| " + " | ".join(map(_md, cells)) + " |"


def _code(text: str) -> str:
    r"""``text`` as a markdown code span (shown literally, HTML included): fenced by more
    backticks than it holds in a row, on one line, control characters shown as ``\xNN``."""
    text = re.sub(r"[\x00-\x1f\x7f-\x9f]", lambda c: f"\\x{ord(c.group()):02x}", str(text))
    fence = "`" * (max(map(len, re.findall("`+", text)), default=0) + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def _num(value) -> str:
    if value is None:
        return "-"
    return f"{value:,.4g}" if isinstance(value, float) and abs(value) < 1e4 else f"{value:,.0f}"


def _bytes(value) -> str:
    """Whole bytes with thousands separators (half a byte rounds up)."""
    if value is None:
        return "-"
    return f"{int(value + 0.5) if value >= 0 else -int(-value + 0.5):,}"


def streaming_lines(mapping: Mapping) -> list[str]:
    """The Streaming Engine part of report.md (markdown).

    >>> from hardware import load_hardware
    >>> from pipeline.streaming import map_streaming
    >>> from sim.streaming import distance_graph
    >>> lines = streaming_lines(map_streaming(distance_graph(), load_hardware("se16")))
    >>> lines[0]
    '## Streaming Engine mapping'
    """
    m = mapping.metrics
    lines = ["## Streaming Engine mapping", ""]
    if mapping.status != "mapped":
        return lines + [f"Not mapped: {_md(mapping.diagnosis)}", ""]
    if m.get("sdfs", 1) > 1:
        lines += _split_lines(mapping)
    lines += [f"- II **{mapping.ii}** (lower bound {m.get('ii_lower_bound')}: resource "
              f"{m.get('res_ii')}, memory {m.get('mem_ii')}, recurrence {m.get('rec_ii')}); "
              f"proven smallest: {m.get('proven_ii')}",
              f"- cycles **{m.get('cycles')}** (critical-path bound {m.get('critical_path')}); "
              f"status {m.get('status')} by {m.get('method')}; checked by the simulator "
              f"({m.get('cycles_sim')} cycles)",
              f"- {m.get('nodes')} instructions, {m.get('edges')} edges, "
              f"{m.get('tiles_used', '-')} tiles used, {m.get('delay_entries')} delay entries, "
              f"{m.get('pass_instructions', 0)} pass instructions (fan-out relief), "
              f"{m.get('seconds')} s", "",
              "| tile | slot | entry | instruction | master input | SF outputs |",
              "|---|---|---|---|---|---|"]
    for tile in mapping.tiles or []:
        for e in tile["entries"]:
            if e["kind"] == "idle":
                continue
            what = e.get("instruction") or e.get("holds")
            where = f"S{tile['sdf']}/T{tile['tile']}" if "sdf" in tile else f"T{tile['tile']}"
            lines.append(_row(where, e['slot'], e['kind'], what, e.get('master_input'),
                              ', '.join(e.get('sf_outputs', []))))
    if mapping.memory:
        lines += ["", "| variable | tile | bank | users |", "|---|---|---|---|"]
        for var, p in sorted(mapping.memory.items()):
            lines.append(_row(var, f"T{p['tile']}", p['bank'], ', '.join(p['users'])))
    return lines + [""]


def _split_lines(mapping: Mapping) -> list[str]:
    """Summary lines of a kernel split into several SDFs (phases joined over the AF)."""
    m = mapping.metrics
    lines = [f"- split into **{m['sdfs']} SDFs** run as phases on the same tiles, "
             f"{m['af_edges']} AF edges ({m['af_latency']} cycles each, assumed), batch "
             f"{m['batch']} iterations per phase, effective II {m['effective_ii']}, "
             f"{m['cycles']} cycles for one iteration through every phase"]
    for s in mapping.sections:
        lines.append(f"- SDF {s['id']}: {len(s['nodes'])} instructions, II {s['ii']}, "
                     f"{s['cycles']} cycles, phase starts at cycle {s['start']} ({s['status']})")
    return lines


def write_report(text: str, path: str | os.PathLike) -> None:
    """Write the report atomically (temporary file, fsync, rename; mode 0644)."""
    write_text_atomic(Path(path), text)


def cgra_lines(mapping: Mapping) -> list[str]:
    """The CGRA part of report.md (markdown): II and its bounds, length, the baseline beside
    it, and per operation its PE, cycle and slot.

    >>> from hardware import load_hardware
    >>> from model.graph import Graph, Node, Edge
    >>> from pipeline.cgra import map_cgra
    >>> g = Graph("pair", [Node("a", op="LOAD"), Node("b", op="ADD")], [Edge("a", "b")])
    >>> cgra_lines(map_cgra(g, load_hardware("cgra4x4")))[2][:25]
    '- II **1** (lower bound 1'
    """
    m = mapping.metrics
    lines = ["## CGRA mapping", ""]
    if mapping.status != "mapped":
        return lines + [f"Not mapped: {_md(mapping.diagnosis)}", ""]
    lines += [f"- II **{mapping.ii}** (lower bound {m.get('ii_lower_bound')}: resource "
              f"{m.get('res_ii')}, memory {m.get('mem_ii')}, recurrence {m.get('rec_ii')}, "
              f"registers {m.get('reg_ii')}; "
              f"proven: every II below {m.get('ii_bound')} impossible); proven smallest: "
              f"{m.get('proven_ii')}; list-scheduling baseline II {m.get('baseline_ii')}",
              f"- cycles per iteration **{m.get('cycles')}** (proven bound "
              f"{m.get('cycles_bound')}, critical path {m.get('critical_path')}); status "
              f"{m.get('status')} by {m.get('method')}; executed by the simulator for "
              f"{m.get('iterations_sim')} iterations",
              f"- {m.get('nodes')} operations, {m.get('edges')} edges, {m.get('pes_used')} of "
              f"{m.get('pes')} PEs used, {m.get('hops')} hops, peak {m.get('registers_peak')} "
              f"values in one PE, {m.get('seconds')} s", "",
              "| operation | PE | cycle | slot |", "|---|---|---|---|"]
    for name, p in sorted(mapping.placement.items(), key=lambda kv: (kv[1]["cycle"], kv[0])):
        lines.append(_row(name, tuple(p['pe']), p['cycle'], p['slot']))
    return lines + [""]

