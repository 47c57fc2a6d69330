"""The last lines of a run: what was mapped, the result in the user's terms, where the files are.

An RDU run's result is its sections and the simulated samples per second (with what a sample
is, and the bottleneck); a Streaming Engine or CGRA run's is its initiation interval (whether
proven minimal) and the cycles of one iteration.

Examples
--------
>>> from model.mapping import Mapping
>>> m = Mapping("atax", "cgra4x4", "mapped", ii=4, metrics={"ii": 4, "proven_ii": True,
...             "ii_lower_bound": 4, "cycles": 13, "nodes": 24, "edges": 29})
>>> print(result_lines(m, {})[0])
result: II 4 cycles (a new iteration starts every 4 cycles), proven minimal; one iteration
takes 13 cycles
"""

from __future__ import annotations

from pathlib import Path

from model.mapping import Mapping
from pipeline.metric_notes import sample_meaning

__all__ = ["headline_lines", "result_lines"]


def headline_lines(mapping: Mapping, graph_attrs: dict | None, elapsed: float, out: Path,
                   written: list[str]) -> list[str]:
    """Every closing line of a mapped run (printed to stderr, last)."""
    m = mapping.metrics
    lines = [f"mapped {mapping.graph} ({m.get('nodes')} nodes, {m.get('edges')} edges) onto "
             f"{mapping.hardware} in {elapsed:.2f} s"]
    lines += ["  " + line for line in result_lines(mapping, graph_attrs)]
    lines += ["  " + line for line in files_lines(out, written)]
    return lines


def result_lines(mapping: Mapping, graph_attrs: dict | None) -> list[str]:
    """The result in the user's terms, with units."""
    if mapping.ii is not None:
        return _modulo_lines(mapping)
    return _rdu_lines(mapping, graph_attrs)


def _rdu_lines(mapping: Mapping, graph_attrs: dict | None) -> list[str]:
    m = mapping.metrics
    sections = m.get("sections", len(mapping.sections))
    head = (f"result: {sections} section(s) (chip configurations run one after another), "
            f"wirelength {m.get('wirelength')} links")
    if "throughput" not in m:
        return [head, f"performance: {m.get('performance', 'not estimated')}"]
    per_sample = 1.0 / m["throughput"] if m["throughput"] else float("inf")
    lines = [head, f"simulated: {_rate(m['throughput'])} samples/s ({_seconds(per_sample)} "
                   f"per sample in steady state; one sample alone takes "
                   f"{_seconds(m['latency_s'])}); {sample_meaning(graph_attrs)}"]
    batch = (graph_attrs or {}).get("batch")
    if isinstance(batch, int) and batch > 1:
        lines.append(f"  = {_rate(m['throughput'] * batch)} inputs/s")
    lines.append(f"bottleneck: {m.get('bottleneck', '-')}")
    return lines


def _modulo_lines(mapping: Mapping) -> list[str]:
    m = mapping.metrics
    ii = mapping.ii
    proven = ("proven minimal" if m.get("proven_ii") else
              f"not proven minimal (no II below {m.get('ii_bound', m.get('ii_lower_bound'))} "
              "is possible)")
    lines = [f"result: II {ii} cycles (a new iteration starts every {ii} cycles), {proven}; "
             f"one iteration takes {m.get('cycles')} cycles"]
    if m.get("sdfs", 1) > 1:
        lines.append(f"split into {m['sdfs']} synchronous data-flows run as phases: "
                     f"{m.get('effective_ii')} cycles per iteration over the phases")
    return lines


def files_lines(out: Path, written: list[str]) -> list[str]:
    """Where the files are: the interactive report first."""
    where = out.resolve()
    lines = []
    if "report.html" in written:
        lines.append(f"open {where / 'report.html'} in a browser (interactive report)")
    pictures = [w for w in written if w.endswith((".svg", ".png"))]
    lines.append(f"files in {where}/: " + ", ".join(
        [w for w in written if not w.endswith((".svg", ".png"))]
        + ([f"{len(pictures)} picture(s)"] if pictures else [])))
    return lines


def _rate(value: float) -> str:
    return f"{value:,.4g}" if value < 1e4 else f"{value:,.0f}"


def _seconds(value: float) -> str:
    """Seconds in the unit a person reads best."""
    if value >= 1:
        return f"{value:.3g} s"
    if value >= 1e-3:
        return f"{value * 1e3:.3g} ms"
    return f"{value * 1e6:.3g} us"
