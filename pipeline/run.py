"""The command line: ``python -m pipeline.run GRAPH [options]``.

Exit codes: 0 mapped, 2 bad input (the message names the file, the place and
the fix), 3 could not map (the diagnosis is in the report and in
mapping.json), 4 internal error (a bug: please report it).
"""

from __future__ import annotations

import argparse
import sys
import time
from contextlib import nullcontext
from pathlib import Path

from formulations.placement import PLACERS
from formulations.routing import ROUTERS
from hardware import DEFAULT_PRESET, InputError, build_fabric, load_hardware, preset_names
from model.importers import FORMATS, load_graph
from model.mapping import Mapping, write_mapping
from pipeline.feedback import CheckerRejected, MappingFailed
from pipeline.flow import map_graph
from pipeline.options import BACKEND_REASONS, DEFAULT_BACKENDS, RunOptions, parse_backends
from pipeline.report import render_report, write_report

__all__ = ["main", "build_parser", "EXIT_MAPPED", "EXIT_BAD_INPUT", "EXIT_UNMAPPABLE",
           "EXIT_INTERNAL"]

EXIT_MAPPED, EXIT_BAD_INPUT, EXIT_UNMAPPABLE, EXIT_INTERNAL = 0, 2, 3, 4


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m pipeline.run",
        description="Map a dataflow graph onto a reconfigurable dataflow accelerator.",
        epilog="Exit codes: 0 mapped, 2 bad input, 3 could not map (diagnosis in the report), "
               "4 internal error.",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    parser.add_argument("graph", help="graph.json v1, or a foreign graph file an importer knows "
                        f"({', '.join(FORMATS)}), recognised by content")
    parser.add_argument("--format", choices=sorted(FORMATS), default=None,
                        help="force the input format instead of recognising it")
    parser.add_argument("--hardware", default=DEFAULT_PRESET,
                        help=f"a preset ({', '.join(preset_names())}) or a hardware JSON file")
    parser.add_argument("-o", "--out", default="out", help="output directory")
    parser.add_argument("--backend", action="append", default=[], metavar="[DECISION=]NAME",
                        help="solver backend of every decision, or of one (repeatable, e.g. "
                             "--backend routing=scip); defaults: " + ", ".join(
                                 f"{d}={b} ({BACKEND_REASONS[d]})"
                                 for d, b in DEFAULT_BACKENDS.items()))
    parser.add_argument("--placer", choices=sorted(PLACERS), default=RunOptions.placer,
                        help="placement method")
    parser.add_argument("--router", choices=sorted(ROUTERS), default=RunOptions.router,
                        help="routing method")
    parser.add_argument("--time-limit", type=float, default=RunOptions.time_limit,
                        help="seconds for the whole run (wall clock)")
    parser.add_argument("--seed", type=int, default=0, help="random seed of every solve")
    parser.add_argument("--export-models", metavar="DIR", default=None,
                        help="write every model built as .mps/.lp or CP-SAT proto text into DIR")
    parser.add_argument("--depth-per-pmu", type=int, default=None,
                        help="override the stage-buffer depth one memory unit holds")
    parser.add_argument("--tile-pmus", type=int, default=None,
                        help="PMUs one tensor may occupy before it is tiled (default: 1/16 of "
                             "the chip's PMUs)")
    parser.add_argument("--af-latency", type=int, default=None,
                        help="Streaming Engine: cycles of a transfer between synchronous "
                             "data-flows over the asynchronous fabric (default 16, assumed)")
    parser.add_argument("--picture-format", choices=("svg", "png"), default="svg",
                        help="file format of the placement pictures")
    parser.add_argument("--no-pictures", action="store_true", help="skip drawing pictures")
    noise = parser.add_mutually_exclusive_group()
    noise.add_argument("--quiet", action="store_true", help="print nothing but errors")
    noise.add_argument("--verbose", action="store_true", help="log every router iteration")
    return parser


class _Console:
    """Progress for people: a bar on a terminal, plain lines otherwise."""

    def __init__(self, quiet: bool, verbose: bool):
        self.quiet, self.verbose = quiet, verbose
        self.tty = sys.stderr.isatty()

    def say(self, line: str, detail: bool = False) -> None:
        if self.quiet or (detail and not self.verbose):
            return
        print(line, file=sys.stderr, flush=True)

    def bar(self, total: int):
        if self.quiet or not self.tty:
            return nullcontext(None)
        from rich.progress import Progress
        return Progress(transient=True)


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    console = _Console(args.quiet, args.verbose)
    try:
        options = _options(args)
        graph = load_graph(args.graph, args.format)
        spec = load_hardware(args.hardware)
    except InputError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    out = Path(args.out)
    console.say(f"mapping {graph.name} ({len(graph.nodes)} nodes, {len(graph.edges)} edges) "
                f"on {spec.name}")
    started = time.perf_counter()
    code = EXIT_MAPPED
    try:
        with console.bar(0) as bar:
            task = bar.add_task("sections", total=None) if bar else None
            mapping = map_graph(graph, spec, options,
                                progress=lambda line: console.say(line, detail="iteration" in line),
                                advance=(lambda: bar.advance(task)) if bar else None)
    except MappingFailed as exc:
        mapping, code = exc.mapping, EXIT_UNMAPPABLE
    except CheckerRejected as exc:
        mapping = Mapping(graph=graph.name, hardware=spec.name, status="failed",
                          diagnosis=f"internal error: {exc} (a bug: please report it)")
        code = EXIT_INTERNAL
    _write_outputs(mapping, spec, out, args)
    seconds = time.perf_counter() - started
    if code == EXIT_MAPPED:
        shown = {k: mapping.metrics[k] for k in ("sections", "wirelength", "ii", "cycles")
                 if k in mapping.metrics}
        console.say(f"mapped in {seconds:.2f} s: " + ", ".join(f"{k} {v}" for k, v in shown.items()))
    else:
        print(f"could not map {graph.name}: {mapping.diagnosis}", file=sys.stderr)
    console.say(f"outputs in {out.resolve()}/ (mapping.json, report.md)")
    return code


def _options(args) -> RunOptions:
    """The run's options from the command line (validated by RunOptions)."""
    return RunOptions(backends=parse_backends(args.backend), time_limit=args.time_limit,
                      seed=args.seed, placer=args.placer, router=args.router,
                      export_dir=args.export_models, depth_per_pmu=args.depth_per_pmu,
                      tile_pmus=args.tile_pmus, af_latency=args.af_latency)


def _write_outputs(mapping: Mapping, spec, out: Path, args) -> None:
    out.mkdir(parents=True, exist_ok=True)
    write_mapping(mapping, out / "mapping.json")
    pictures: list[str] = []
    extra: list[str] = []
    draw = mapping.status == "mapped" and not args.no_pictures
    if spec.kind == "rdu":
        fabric = build_fabric(spec)
        summary = fabric.describe()
        if draw:
            from pipeline.pictures import draw_mapping
            pictures = draw_mapping(mapping, fabric, out, args.picture_format)
    else:
        summary = f"{spec.name} ({spec.kind})"
        if spec.kind == "streaming-engine":
            from pipeline.streaming import draw_streaming, report_lines
            extra = report_lines(mapping)
            if draw:
                name = f"tiles.{args.picture_format}"
                draw_streaming(mapping, spec, out / name)
                pictures = [name]
    write_report(render_report(mapping, pictures, summary, extra), out / "report.md")


if __name__ == "__main__":
    sys.exit(main())
