"""The options of one run: one typed, validated object, every default in one place.

Each decision solves on the backend of :data:`DEFAULT_BACKENDS` unless the run
names another, for every decision (``--backend highs``) or for one
(``--backend routing=highs``). A backend a decision cannot use, an unknown
decision or a misspelt option is an :class:`OptionError` naming it: nothing is
swapped silently.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Mapping

from formulations.routing import ROUTERS, RouterConfig
from formulations.cgra.kernel import PLACERS as CGRA_PLACERS
from formulations.placement import PLACERS
from formulations.solver import available_backends, get_backend
from formulations.streaming.rl import rl_available
from hardware import InputError
from pipeline.cost_model import CANDIDATES, COST_MODELS, learned_available

__all__ = ["DECISIONS", "DEFAULT_BACKENDS", "BACKEND_REASONS", "OptionError", "RunOptions",
           "parse_backends", "BUFFER_MODES", "MAX_TIME_LIMIT", "parse_dims", "MAX_DIM",
           "MAX_WORKERS"]

#: The decisions that solve a model, in pipeline order.
DECISIONS = ("sections", "buffers", "placement", "routing", "streaming")

#: The backend each decision uses unless the run names another.
DEFAULT_BACKENDS: Mapping[str, str] = MappingProxyType({
    "sections": "cp-sat", "buffers": "highs", "placement": "cp-sat", "routing": "highs",
    "streaming": "cp-sat"})

#: Why each default (shown in ``--help`` and in the report).
BACKEND_REASONS: Mapping[str, str] = MappingProxyType({
    "sections": "CP-SAT's search finds the cut windows' optima fastest",
    "buffers": "HiGHS proves bert_L-12 training optimal in 4 s, CP-SAT needs 59 s",
    "placement": "CP-SAT propagates the distance terms; the LNS windows prove fastest",
    "routing": "the flow model's LP relaxation is strong: HiGHS proves most sections at the root",
    "streaming": "the modulo schedule is disjunctive: CP-SAT proves it, MILPs stall"})

#: The longest budget a run may be given (one week): beyond it a budget is a typo, and the
#: deterministic work derived from it would overflow the solvers' limits.
MAX_TIME_LIMIT = 7 * 24 * 3600

#: The largest --batch or --dim size (2^31): a tensor's elements stay exact as a float.
MAX_DIM = 2**31

#: Balancing modes of the buffer model (tune existing buffers, insert new ones, or both).
BUFFER_MODES = ("both", "tune", "insert")


class OptionError(InputError):
    """An option of the run is unknown or out of range (exit code 2)."""

    def __init__(self, option: str, what: str, fix: str):
        super().__init__("command line", option, what, fix)


def parse_backends(values: list[str] | tuple[str, ...]) -> dict[str, str]:
    """Backends per decision from ``--backend`` values: ``NAME`` or ``DECISION=NAME``.

    >>> parse_backends(["highs", "routing=cp-sat"])["routing"], parse_backends(["scip"])["buffers"]
    ('cp-sat', 'scip')
    """
    chosen = dict(DEFAULT_BACKENDS)
    for value in values:
        decision, _, name = value.rpartition("=")
        for d in ([decision] if decision else DECISIONS):
            if d not in DECISIONS:
                raise OptionError("--backend", f'unknown decision "{d}"',
                                  "use one of " + ", ".join(DECISIONS) + ", e.g. routing=highs")
            chosen[d] = name
    return chosen


def parse_dims(values: list[str] | tuple[str, ...]) -> dict[str, int]:
    """Named dimension sizes from ``--dim NAME=VALUE`` values (checked by RunOptions).

    >>> parse_dims(["seq=128", "batch=4"])
    {'seq': 128, 'batch': 4}
    >>> parse_dims(["seq"])  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    pipeline.options.OptionError: command line: --dim: "seq" is not NAME=VALUE (fix: ...)
    """
    dims: dict[str, int] = {}
    for value in values:
        name, sep, size = value.partition("=")
        if not sep or not name.strip() or not size.strip().lstrip("+").isdigit():
            raise OptionError("--dim", f'"{value}" is not NAME=VALUE',
                              "give a dimension's name and a whole number, e.g. --dim seq=128")
        dims[name.strip()] = int(size)
    return dims


#: The most local worker processes a run starts (a cluster goes through --scheduler).
MAX_WORKERS = 256


@dataclass(frozen=True)
class RunOptions:
    """Everything a run is told; validated when made (see :class:`OptionError`).

    Examples
    --------
    >>> RunOptions(backends={"routing": "cp-sat"}).backend_for("routing")
    'cp-sat'
    >>> RunOptions().backend_for("buffers")
    'highs'
    >>> RunOptions(time_limit=float("nan"))  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    pipeline.options.OptionError: command line: --time-limit: nan is not a finite number ...
    """

    time_limit: float = 60.0                  # seconds, the whole run: its deadline
    #: planned seconds of search (None: the time limit's mapping share); the same seed and
    #: work give the same mapping on any machine that finishes the work before the deadline
    work: float | None = None
    #: ``time.monotonic()`` when the run's clock started (the command line: the process
    #: start, :func:`pipeline.budget.process_started`); None: when mapping begins
    started: float | None = None
    seed: int = 0
    backends: Mapping[str, str] = field(default_factory=dict)  # per decision, over the defaults
    placer: str = "model"
    router: str = "model"
    router_config: RouterConfig = field(default_factory=RouterConfig)
    export_dir: str | None = None
    depth_per_pmu: int | None = None          # stage-buffer depth of one PMU (default: hardware)
    tile_pmus: int | None = None              # PMUs per tensor before tiling (default: hardware)
    af_latency: int | None = None             # SE: cycles of an AF transfer (default: hardware)
    buffer_mode: str = "both"
    load_shift: bool = True
    strict_new_capacity: bool = False
    section_time_limit: float | None = None   # the section model's share (default: planned)
    max_iterations: int = 30                  # feedback rounds before giving up
    batch: int = 1                            # ONNX: size of the symbolic batch dimension
    dims: Mapping[str, int] = field(default_factory=dict)  # ONNX: named dimension sizes
    cost_model: str = "wirelength"           # ranks placement candidates (pipeline.cost_model)
    cost_model_file: str | None = None        # learned: the model file (default: shipped)
    candidates: int = CANDIDATES              # placements ranked per section
    workers: int = 1                          # processes compiling sections (the CLI: cores)
    scheduler: str | None = None              # a Dask scheduler's address, over workers
    policy_file: str | None = None            # --placer rl (SE): the policy (default: shipped)

    def __post_init__(self):
        t = self.time_limit
        if not (isinstance(t, (int, float)) and math.isfinite(t) and t > 0):
            raise OptionError("--time-limit", f"{t} is not a finite number of seconds > 0",
                              "give seconds > 0, e.g. --time-limit 60")
        if t > MAX_TIME_LIMIT:
            raise OptionError("--time-limit", f"{t:g} s is more than the limit of "
                              f"{MAX_TIME_LIMIT:,} s (one week)",
                              "give a budget of at most a week; searches stop earlier at a "
                              "proven optimum anyway")
        w = self.work
        if w is not None and not (isinstance(w, (int, float)) and math.isfinite(w)
                                  and 0 < w <= MAX_TIME_LIMIT):
            raise OptionError("--work", f"{w} is not a finite number of seconds > 0",
                              "give planned seconds of search, e.g. --work 20, or leave it "
                              "out for 90 % of --time-limit")
        self._check_backends()
        _choice("--placer", self.placer, tuple(PLACERS) + tuple(
            p for p in CGRA_PLACERS if p not in PLACERS) + ("rl",))
        self._check_rl()
        _choice("--router", self.router, ROUTERS)
        _choice("buffer_mode", self.buffer_mode, BUFFER_MODES)
        self._check_cost_model()
        for name in ("depth_per_pmu", "tile_pmus", "af_latency"):
            value = getattr(self, name)
            if value is not None and (not isinstance(value, int) or value < 1):
                raise OptionError("--" + name.replace("_", "-"), f"{value!r} is below 1",
                                  "give a whole number >= 1")
        if self.max_iterations < 1:
            raise OptionError("max_iterations", "must be at least 1", "give a whole number >= 1")
        if isinstance(self.workers, bool) or not isinstance(self.workers, int) or \
                not 1 <= self.workers <= MAX_WORKERS:
            raise OptionError("--workers", f"{self.workers!r} is not a whole number from 1 to "
                              f"{MAX_WORKERS}", "give the processes to use, e.g. --workers 2")
        if self.scheduler is not None and not self.scheduler.strip():
            raise OptionError("--scheduler", "the address is empty",
                              "give a Dask scheduler's address, e.g. tcp://10.0.0.5:8786")
        for option, size in [("--batch", self.batch), *(
                (f"--dim {name}", value) for name, value in self.dims.items())]:
            if isinstance(size, bool) or not isinstance(size, int) or not 1 <= size <= MAX_DIM:
                raise OptionError(option, f"{size!r} is not a whole number from 1 to 2^31",
                                  "give a size >= 1, e.g. --batch 8 or --dim seq=128")

    def _check_backends(self) -> None:
        for decision, name in self.backends.items():
            if decision not in DECISIONS:
                raise OptionError("--backend", f'unknown decision "{decision}"',
                                  "use one of " + ", ".join(DECISIONS))
            try:           # probes this backend only: the full list asks Pyomo (0.4 s)
                get_backend(name)
            except ValueError:
                raise OptionError("--backend", f'backend "{name}" for {decision} is not '
                                  "installed or unknown",
                                  "use one of " + ", ".join(available_backends())) from None

    def _check_cost_model(self) -> None:
        _choice("--cost-model", self.cost_model, COST_MODELS)
        if self.cost_model == "learned" and not learned_available():
            raise OptionError("--cost-model", "learned needs JAX, which is not installed",
                              'pip install -e ".[learn]", or use --cost-model analytic')
        if self.cost_model_file is not None and not Path(self.cost_model_file).is_file():
            raise OptionError("--cost-model-file", f"{self.cost_model_file}: no such file",
                              "give a model written by python -m benchmarks.suites.cost_model "
                              "--train, or leave it out for the shipped one")
        if isinstance(self.candidates, bool) or not isinstance(self.candidates, int) \
                or not 1 <= self.candidates <= 1000:
            raise OptionError("--candidates", f"{self.candidates!r} is not 1..1000",
                              "give a whole number of placements to rank, e.g. 8")

    def _check_rl(self) -> None:
        if self.placer == "rl" and not rl_available():
            raise OptionError("--placer", "rl (the PPO policy of source 004) needs JAX, which is "
                              "not installed", 'pip install -e ".[learn]", or use --placer model')
        if self.policy_file is not None and not Path(self.policy_file).is_file():
            raise OptionError("--policy-file", f"{self.policy_file}: no such file",
                              "give a policy written by python -m benchmarks.suites.rl train, or "
                              "leave it out for the shipped one")

    def backend_for(self, decision: str) -> str:
        """The backend ``decision`` solves on."""
        return self.backends.get(decision) or DEFAULT_BACKENDS[decision]

    def record(self, stages: list[dict]) -> dict:
        """mapping.json's ``run``: what was asked, and how many searches the wall clock cut short.

        >>> RunOptions(seed=2).record([{"cut_short": True}, {}])["cut_short"]
        1
        """
        return {"seed": self.seed, "time_limit": self.time_limit, "work": self.work,
                "backends": {d: self.backend_for(d) for d in DECISIONS},
                "placer": self.placer, "router": self.router, "cost_model": self.cost_model,
                "cut_short": sum(bool(s.get("cut_short")) for s in stages)}


def _choice(option: str, value: str, allowed) -> None:
    if value not in allowed:
        raise OptionError(option, f'unknown choice "{value}"',
                          "use one of " + ", ".join(sorted(allowed)))
