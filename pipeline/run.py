"""The command line: ``python -m pipeline.run GRAPH [options]``.

Exit codes: 0 mapped, 2 bad input (the message names the file, the place and
the fix), 3 could not map (the diagnosis is in the report and in
mapping.json), 4 internal error (a bug: please report it).
"""

from __future__ import annotations

import gc

if __name__ == "__main__":    # the command line: see :func:`pipeline.cluster.settle_heap`
    gc.disable()

import argparse
import multiprocessing.util
import os
import signal
import sys
import threading
import time
from pathlib import Path

from formulations.placement import PLACERS
from formulations.routing import ROUTERS
from formulations.solver import deferred_signals, watch_signals
from hardware import DEFAULT_PRESET, InputError, load_hardware, preset_names
from model.importers import FORMATS, load_graph
from model.mapping import Mapping, write_mapping
from pipeline.budget import process_started
from pipeline.cost_model import COST_MODELS
from pipeline.cluster import (default_workers, kill_local_workers, quiet_dask_logs,
                              settle_heap, warm_up)
from pipeline.feedback import CheckerRejected, MappingFailed
from pipeline.flow import map_graph
from pipeline.options import (BACKEND_REASONS, DEFAULT_BACKENDS, RunOptions, parse_backends,
                              parse_dims)
from pipeline.headline import files_lines, headline_lines
from pipeline.help_text import DESCRIPTION, epilog
from pipeline.html_report import write_html
from pipeline.progress import Console
from pipeline.outputs import earlier_run, prepare_export_dir, prepare_out_dir, remove_stale_outputs
from pipeline.report import render_report, write_report
from pipeline.targets import target_of

__all__ = ["main", "build_parser", "EXIT_MAPPED", "EXIT_BAD_INPUT", "EXIT_UNMAPPABLE",
           "EXIT_INTERNAL"]

EXIT_MAPPED, EXIT_BAD_INPUT, EXIT_UNMAPPABLE, EXIT_INTERNAL = 0, 2, 3, 4


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m pipeline.run",
        description=DESCRIPTION,
        epilog=epilog(preset_names()), formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("graph", help="graph.json v1, or a graph file of another format "
                        f"({', '.join(f for f in FORMATS if f != 'graph-json')}), recognised "
                        "by content")
    parser.add_argument("--format", choices=sorted(FORMATS), default=None,
                        help="read the file as this format instead of recognising it")
    parser.add_argument("--hardware", default=DEFAULT_PRESET, metavar="NAME|FILE",
                        help=f"a preset (listed below) or a hardware JSON file (default: "
                             f"{DEFAULT_PRESET})")
    parser.add_argument("-o", "--out", default="out", metavar="DIR",
                        help="output folder; an earlier run's files there are replaced "
                             "(default: out)")
    parser.add_argument("--time-limit", type=float, default=RunOptions.time_limit,
                        metavar="S", help="seconds for the whole run on the wall clock, from the "
                        "process start to the last file written, pictures included (default: "
                        f"{RunOptions.time_limit:g})")
    parser.add_argument("--work", type=float, default=None, metavar="S",
                        help="planned seconds of search, counted as solver work and not on the "
                             "clock (default: 90%% of --time-limit): the same seed and work give "
                             "the same mapping.json on any machine that does the work before "
                             "--time-limit; on a slow or busy machine give less work than time")
    parser.add_argument("--seed", type=int, default=0,
                        help="random seed of every search; the same seed gives the same "
                             "mapping (default: 0)")
    _add_method_options(parser)
    _add_parallel_options(parser)
    _add_model_options(parser)
    _add_output_options(parser)
    return parser


def _add_method_options(parser: argparse.ArgumentParser) -> None:
    """How each decision is made: methods, solvers, cost models."""
    parser.add_argument("--placer", choices=sorted(PLACERS) + ["rl"],
                        default=RunOptions.placer, metavar="NAME",
                        help=f"placement method, listed below (default: {RunOptions.placer})")
    parser.add_argument("--policy-file", metavar="FILE", default=None,
                        help="with --placer rl: a policy written by python -m "
                             "benchmarks.suites.rl train (default: the shipped policy)")
    parser.add_argument("--router", choices=sorted(ROUTERS), default=RunOptions.router,
                        metavar="NAME",
                        help=f"routing method, listed below (default: {RunOptions.router})")
    parser.add_argument("--cost-model", choices=COST_MODELS, default=RunOptions.cost_model,
                        metavar="NAME", help="how each section's placement candidates are "
                        f"ranked, listed below (default: {RunOptions.cost_model})")
    parser.add_argument("--cost-model-file", metavar="FILE", default=None,
                        help="with --cost-model learned: a model file (default: the shipped "
                             "one, trained on plasticine blocks)")
    parser.add_argument("--backend", action="append", metavar="[DECISION=]NAME",
                        help="solver of every decision, or of one (repeatable, e.g. --backend "
                             "routing=scip; decisions listed below); defaults: " + "; ".join(
                                 f"{d} {b} ({BACKEND_REASONS[d]})"
                                 for d, b in DEFAULT_BACKENDS.items()))


def _add_parallel_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--workers", type=int, default=default_workers(), metavar="N",
                        help="processes compiling sections in parallel; the mapping is the "
                             "same for any number (default: this machine's cores, "
                             f"{default_workers()})")
    parser.add_argument("--scheduler", metavar="ADDRESS", default=None,
                        help="compile sections on a running Dask scheduler instead of local "
                             "processes (e.g. tcp://10.0.0.5:8786; its workers need this "
                             "project)")


def _add_model_options(parser: argparse.ArgumentParser) -> None:
    """Numbers of the hardware and of ONNX models a run may override."""
    parser.add_argument("--depth-per-pmu", type=int, default=None, metavar="N",
                        help="stage-buffer depth one memory unit (PMU) holds (default: the "
                             "hardware file's)")
    parser.add_argument("--tile-pmus", type=int, default=None, metavar="N",
                        help="PMUs one tensor may occupy before it is split into tiles "
                             "(default: 1/16 of the chip's PMUs)")
    parser.add_argument("--af-latency", type=int, default=None, metavar="N",
                        help="Streaming Engine: cycles of a transfer between two parts of a "
                             "kernel split over the asynchronous fabric (default: the hardware "
                             "file's, 16, assumed)")
    parser.add_argument("--batch", type=int, default=RunOptions.batch, metavar="N",
                        help="ONNX: size of every symbolic batch dimension; one simulated "
                             f"sample is then a whole batch (default: {RunOptions.batch})")
    parser.add_argument("--dim", action="append", metavar="NAME=VALUE",
                        help="ONNX: size of a named symbolic dimension (repeatable, e.g. "
                             "--dim seq=128)")


def _add_output_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--export-models", metavar="DIR", default=None,
                        help="also write every solver model built, as .mps/.lp or CP-SAT "
                             "proto text, into DIR")
    parser.add_argument("--picture-format", choices=("svg", "png"), default="svg",
                        help="file format of the pictures (default: svg)")
    parser.add_argument("--no-pictures", action="store_true",
                        help="draw no pictures (report.html is still written)")
    noise = parser.add_mutually_exclusive_group()
    noise.add_argument("--quiet", action="store_true", help="print nothing but errors")
    noise.add_argument("--verbose", action="store_true", help="also log every router iteration")


class RunInterrupted(BaseException):
    """SIGINT or SIGTERM arrived; the running solve has been stopped.

    A BaseException, like KeyboardInterrupt, so no ``except Exception`` on the way
    (a failed solve is a result there) can swallow it."""

    def __init__(self, signum: int):
        self.signum = signum
        super().__init__(signal.Signals(signum).name)


#: Seconds an interrupted command line gives the run to unwind to its exit (its local
#: workers killed, Dask closed) before it ends the process anyway: a thread may still be
#: finishing a solve begun before the signal, and a supervisor (``docker stop``: 10 s)
#: would kill the process outright, leaving workers and semaphores behind.
UNWIND_SECONDS = 1.0


class _Ending:
    """How an interrupted run ends: SIGINT and SIGTERM alike, from the first line of
    :func:`main` to the last (loading included), with one message and exit code
    128 + the signal; on the command line (``cli``) the process then exits at once, its
    local workers killed, or :data:`UNWIND_SECONDS` after the signal at the latest."""

    def __init__(self, cli: bool):
        self.cli, self.started = cli, time.perf_counter()
        self._once = threading.Lock()

    def interrupt(self, signum: int) -> None:
        """The signal handler (main thread): stop the run by raising RunInterrupted."""
        quiet_dask_logs()          # the killed workers' lost tasks are no news
        if self.cli:
            timer = threading.Timer(UNWIND_SECONDS, self.interrupted, (signum,))
            timer.daemon = True
            timer.start()
        raise RunInterrupted(signum)

    def interrupted(self, signum: int) -> int:
        """Say so and end: the exit code (the command line exits here)."""
        if not self._once.acquire(blocking=False):   # the other path is ending the run
            return 128 + signum
        print(f"interrupted by {signal.Signals(signum).name} after "
              f"{time.perf_counter() - self.started:.2f} s: the solve was stopped; nothing "
              "written (no complete checked mapping yet)", file=sys.stderr)
        if self.cli:              # nothing is left to write: exit now, not after Dask's teardown
            kill_local_workers()
            _exit_now(128 + signum)
        return 128 + signum


def main(argv: list[str] | None = None) -> int:
    if argv is None:
        settle_heap()
    args = build_parser().parse_args(argv)
    ending = _Ending(cli=argv is None)
    try:
        with watch_signals(ending.interrupt):
            # the command line's clock starts with the process (imports and loading count)
            return _run(args, process_started() if argv is None else time.monotonic())
    except RunInterrupted as exc:
        return ending.interrupted(exc.signum)


def _run(args, started: float) -> int:
    """Load, map and write, the run's clock started at ``started`` (``time.monotonic()``),
    never silent for long (:class:`Console`); the exit code."""
    console = Console(args.quiet, args.verbose, time_limit=args.time_limit, started=started)
    with console.watch():
        return _run_watched(args, started, console)


def _run_watched(args, started: float, console: Console) -> int:
    try:
        options = _options(args, started)
        spec = load_hardware(args.hardware)
        if target_of(spec).may_use_workers(options):
            warm_up()          # the workers' imports run while the graph loads
        out = prepare_out_dir(args.out)
        earlier = earlier_run(out)
        prepare_export_dir(args.export_models)
        console.say(f"loading {args.graph}")
        graph = load_graph(args.graph, args.format, batch=options.batch, dims=options.dims)
    except InputError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    for warning in graph.attrs.get("import_warnings", []):
        console.say(f"warning: {warning}")
    console.say(f"mapping {graph.name} ({len(graph.nodes)} nodes, {len(graph.edges)} edges) "
                f"on {spec.name}, budget {options.time_limit:g} s")
    if earlier:
        console.say(f"note: {out}/ holds {earlier}; its files are replaced when this run ends")
    deadline = options.started + options.time_limit    # the whole run's, pictures included
    try:
        mapping, code = _map(graph, spec, options, console)
    except InputError as exc:        # e.g. a --scheduler that cannot be reached
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    elapsed = time.monotonic() - options.started
    console.say("writing mapping.json, the reports and the pictures")
    with deferred_signals():     # outputs are written whole: an interrupt waits for them
        written = _write_outputs(mapping, spec, out, args, options.started, deadline, graph)
        remove_stale_outputs(out, written)
    if code == EXIT_MAPPED:
        for line in headline_lines(mapping, graph.attrs, elapsed, out, written):
            console.say(line, stamp=False)
    else:
        print(f"could not map {graph.name}: {mapping.diagnosis}", file=sys.stderr)
        for line in files_lines(out, written):
            console.say(line, stamp=False)
    return code


def _exit_now(code: int) -> None:
    """End the process at once with ``code``: streams flushed, exit handlers skipped (Dask's
    teardown would take seconds). multiprocessing's finalizers of priority 0 and up still
    run first: they unlink the named semaphores of the local workers' queues, which the
    resource tracker would otherwise report ("12 leaked semaphore objects" for two
    workers); those below 0 (joins of threads and processes) may wait, and are skipped."""
    multiprocessing.util._run_finalizers(0)
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


def _map(graph, spec, options: RunOptions, console: Console) -> tuple[Mapping, int]:
    """The mapping and the exit code (a failed mapping carries its diagnosis)."""
    try:
        mapping = map_graph(graph, spec, options,
                            progress=lambda line: console.say(line, detail="iteration" in line),
                            advance=console.advance)
        return mapping, EXIT_MAPPED
    except MappingFailed as exc:
        return exc.mapping, EXIT_UNMAPPABLE
    except CheckerRejected as exc:
        return Mapping(graph=graph.name, hardware=spec.name, status="failed",
                       diagnosis=f"internal error: {exc} (a bug: please report it)"), EXIT_INTERNAL


def _options(args, started: float) -> RunOptions:
    """The run's options from the command line (validated by RunOptions); the run's clock
    started at ``started`` (``time.monotonic()``)."""
    return RunOptions(backends=parse_backends(args.backend or []), time_limit=args.time_limit,
                      work=args.work, started=started, seed=args.seed, placer=args.placer,
                      router=args.router,
                      export_dir=args.export_models, depth_per_pmu=args.depth_per_pmu,
                      tile_pmus=args.tile_pmus, af_latency=args.af_latency,
                      batch=args.batch, dims=parse_dims(args.dim or []),
                      cost_model=args.cost_model, cost_model_file=args.cost_model_file,
                      workers=args.workers, scheduler=args.scheduler,
                      policy_file=args.policy_file)


def _write_outputs(mapping: Mapping, spec, out: Path, args, started: float,
                   deadline: float, graph=None) -> list[str]:
    """Write mapping.json, the pictures (RDU sections while the run's ``deadline`` lasts),
    report.md, whose wall time is the process's (from ``started``), and report.html;
    returns the names written."""
    write_mapping(mapping, out / "mapping.json")
    target = target_of(spec)
    fabric = target.fabric(spec)
    pictures = None
    if mapping.status == "mapped" and not args.no_pictures:
        pictures = target.draw(mapping, spec, fabric, out, args.picture_format, deadline)
    elapsed = time.monotonic() - started
    write_report(render_report(mapping, pictures, target.describe(spec, fabric),
                               target.report_lines(mapping), elapsed=elapsed,
                               graph_attrs=graph.attrs if graph is not None else None),
                 out / "report.md")
    files = ["mapping.json", "report.md", *(pictures or [])]
    write_html(mapping, spec, out / "report.html", fabric, graph, files)
    return ["report.html", *files]


if __name__ == "__main__":
    sys.exit(main())
