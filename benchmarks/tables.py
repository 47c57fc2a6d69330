"""Result tables: rows of one suite as CSV (raw values) and markdown (formatted).

Both files are written atomically (temporary file, then rename), so an
interrupted run never leaves half a table. The markdown file starts with a
title and the machine line (cores, CPU, Python version, platform, date) so a
table read later says where it was measured.

Examples
--------
>>> from benchmarks.registry import Column
>>> cols = (Column("graph", "graph"), Column("sec", "time (s)", "{:.2f}"))
>>> print(markdown_table(cols, [{"graph": "g", "sec": 1.234}, {"graph": "h"}]))
| graph | time (s) |
|---|---|
| g | 1.23 |
| h | — |
"""

from __future__ import annotations

import csv
import datetime as _dt
import io
import os
import platform
from pathlib import Path
from typing import Any, Iterable, Sequence

from benchmarks.registry import Column

__all__ = ["MISSING", "machine_line", "format_value", "markdown_table", "csv_text",
           "write_tables", "replace_summary"]

#: How a missing value shows in markdown.
MISSING = "—"


def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def machine_line(now: _dt.datetime | None = None) -> str:
    """Cores, CPU model, Python version, platform and date of this machine."""
    now = now or _dt.datetime.now().astimezone()
    return (f"Machine: {os.cpu_count()} cores ({_cpu_model()}), Python "
            f"{platform.python_version()}, {platform.system()} {platform.machine()}, "
            f"{now:%Y-%m-%d %H:%M %Z}")


def format_value(value: Any, fmt: str = "{}") -> str:
    """A cell: ``fmt`` for numbers, text as is (``|`` escaped), None as :data:`MISSING`."""
    if value is None or value == "":
        return MISSING
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, (int, float)):
        try:
            return fmt.format(value)
        except (ValueError, TypeError):
            return str(value)
    return str(value).replace("|", "\\|").replace("\n", " ")


def markdown_table(columns: Sequence[Column], rows: Iterable[dict[str, Any]]) -> str:
    """A GitHub markdown table of ``rows`` with one column per :class:`Column`."""
    lines = ["| " + " | ".join(c.header for c in columns) + " |",
             "|" + "---|" * len(columns)]
    for row in rows:
        lines.append("| " + " | ".join(format_value(row.get(c.key), c.fmt) for c in columns)
                     + " |")
    return "\n".join(lines)


def csv_text(columns: Sequence[Column], rows: Iterable[dict[str, Any]]) -> str:
    """CSV with the column keys as header and raw values (None as empty)."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow([c.key for c in columns])
    for row in rows:
        writer.writerow(["" if row.get(c.key) is None else row.get(c.key) for c in columns])
    return buffer.getvalue()


def _write_atomic(path: Path, text: str) -> None:
    tmp = path.with_name(f".{path.name}.tmp{os.getpid()}")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


def write_tables(out_dir: str | os.PathLike, stem: str, title: str,
                 columns: Sequence[Column], rows: list[dict[str, Any]],
                 notes: Sequence[str] = ()) -> tuple[Path, Path, str]:
    """Write ``<stem>.csv`` and ``<stem>.md`` into ``out_dir``.

    Parameters
    ----------
    out_dir : directory, created if missing.
    stem : file name without extension (the suite name, ``-quick`` for quick runs).
    title : the markdown heading.
    columns, rows : the table.
    notes : lines printed under the table (skipped entries, caveats).

    Returns
    -------
    (csv path, markdown path, markdown text)
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    body = [f"# {title}", "", machine_line(), "", markdown_table(columns, rows)]
    if notes:
        body += [""] + [f"- {note}" for note in notes]
    markdown = "\n".join(body) + "\n"
    csv_path, md_path = out / f"{stem}.csv", out / f"{stem}.md"
    _write_atomic(csv_path, csv_text(columns, rows))
    _write_atomic(md_path, markdown)
    return csv_path, md_path, markdown


def replace_summary(results: str | os.PathLike, lines_of: Any) -> None:
    """Replace the ``## Summary`` part of ``<results>.md`` by ``lines_of(rows)``, the rows
    being those of ``<results>.csv`` (a suite's summary, written after its table)."""
    base = Path(results)
    with open(base.with_suffix(".csv"), newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    md = base.with_suffix(".md")
    text = md.read_text(encoding="utf-8")
    if "\n## Summary" in text:
        text = text[:text.index("\n## Summary")]
    md.write_text(text.rstrip("\n") + "\n" + "\n".join(lines_of(rows)), encoding="utf-8")
