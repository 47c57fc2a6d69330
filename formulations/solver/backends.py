"""The one registry of solver backends, and :func:`solve`.

Every backend has one name, used by the CLI flag ``--backend`` and the benchmark harness:

========================  ==============================================================
``"highs"``               HiGHS through highspy (default; hints, bound, MIP and LP)
``"cp-sat"``              OR-Tools CP-SAT (all-integer models; hints, bound)
``"scip"``                SCIP through OR-Tools pywraplp (hints, bound)
``"cbc"``                 CBC through OR-Tools pywraplp (bound; no hints)
``"pyomo-highs"``         HiGHS through Pyomo ``appsi_highs`` (hints, bound)
``"pyomo:<solver>"``      any MILP solver Pyomo finds at run time (``glpk``, ``cbc``, ...)
========================  ==============================================================

A backend is a function ``(ModelArrays, SolveOptions) -> dict`` returning the raw outcome
(``status``, ``objective``, ``bound``, ``values`` by column, ``message``, ``hint_used``);
:func:`solve` adds what every solve shares: option checks, the hint check, wall time, gap, and
turning any exception into status ERROR. Register more with :func:`register_backend`.

Caveats
-------
* Every solve is single-threaded by default and deterministic for a fixed seed and thread count
  (as long as the time limit is not what stops it). ``work_seconds`` budgets a solve in
  deterministic work (:func:`work_options`: CP-SAT's deterministic time, HiGHS's node count), so
  that the time limit is only the outer cap; :func:`was_cut_short` tells when the cap stopped it.
* ``available_backends()`` probes the solvers once per process (Pyomo's probe takes a moment).
"""

from __future__ import annotations

import dataclasses
import functools
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from ._cpsat_linear import cpsat_solve
from ._highs import HIGHS_NODES_PER_SECOND, backend_solve
from .cp import CP_SAT_WORK_PER_SECOND, annotate, solve_cp_model, was_cut_short, work_of
from ._ortools_lp import cbc_solve, scip_solve, solver_available
from ._pyomo import pyomo_available, pyomo_solve, pyomo_solvers
from .arrays import ModelArrays, check_hint
from .budget import Budget
from .result import SolveResult, SolveStatus, relative_gap

__all__ = ["Backend", "SolveOptions", "available_backends", "get_backend", "register_backend",
           "unregister_backend", "solve", "solve_options", "DEFAULT_BACKEND", "work_options",
           "was_cut_short", "work_of", "solve_planned", "solve_cp_planned"]

DEFAULT_BACKEND = "highs"

#: Planned seconds :func:`solve_planned` charges a solve at least (starting it), and per
#: column and nonzero of its model (translating it for the solver, the hint check): the
#: section models of resnet50_inference (about 3,000 columns, 20,000 nonzeros) spent 0.1-0.3 s
#: of wall time outside the solver's own clock on this project's 2-core machine.
MIN_CHARGE = 0.01
SETUP_SECONDS_PER_NONZERO = 5e-6


def work_options(backend: str, seconds: float) -> dict[str, Any]:
    """Native options that budget a solve of ``backend`` in deterministic work worth
    ``seconds`` planned seconds: CP-SAT ``max_deterministic_time``
    (:data:`~formulations.solver.cp.CP_SAT_WORK_PER_SECOND` units per second), HiGHS
    ``mip_max_nodes`` (:data:`~formulations.solver._highs.HIGHS_NODES_PER_SECOND` nodes per
    second, at least 1); other backends: none (their time limit decides).

    >>> work_options("cp-sat", 2.0), work_options("highs", 0.001), work_options("scip", 1)
    ({'max_deterministic_time': 0.8}, {'mip_max_nodes': 1}, {})
    """
    if backend == "cp-sat":
        return {"max_deterministic_time": float(seconds) * CP_SAT_WORK_PER_SECOND}
    if backend == "highs":
        return {"mip_max_nodes": max(1, int(round(float(seconds) * HIGHS_NODES_PER_SECOND)))}
    return {}


@dataclass(frozen=True)
class SolveOptions:
    """Options common to every backend."""

    time_limit: float = 10.0
    seed: int = 0
    threads: int = 1
    mip_gap: float | None = None
    verbose: bool = False
    #: Solver-native parameters by their own names (CP-SAT: SatParameters fields; HiGHS:
    #: option names; SCIP: parameter paths), set after the common options.
    options: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Backend:
    """A registered backend.

    Parameters
    ----------
    name : str
        Registry name.
    solve : callable
        ``(ModelArrays, SolveOptions) -> dict`` (see the module docstring).
    available : callable
        ``() -> bool``, whether the backend can run here.
    description : str
        One line for ``--help`` and reports.
    hints : bool
        Whether warm starts reach the solver.
    """

    name: str
    solve: Callable[[ModelArrays, SolveOptions], dict]
    available: Callable[[], bool] = lambda: True
    description: str = ""
    hints: bool = True


_REGISTRY: dict[str, Backend] = {}


def register_backend(name: str, solve_fn: Callable[[ModelArrays, SolveOptions], dict], *,
                     available: Callable[[], bool] | None = None, description: str = "",
                     hints: bool = True, replace: bool = False) -> Backend:
    """Add a backend to the registry.

    Raises
    ------
    ValueError
        When ``name`` is taken (unless ``replace``) or starts with ``pyomo:``.

    Examples
    --------
    >>> def always_infeasible(arrays, opts):
    ...     return {"status": SolveStatus.INFEASIBLE, "message": "no"}
    >>> _ = register_backend("demo-infeasible", always_infeasible)
    >>> from formulations.solver import LinearModel
    >>> LinearModel().solve(backend="demo-infeasible").status.name
    'INFEASIBLE'
    >>> unregister_backend("demo-infeasible")
    """
    if name in _REGISTRY and not replace:
        raise ValueError(f"backend {name!r} is already registered")
    if name.startswith("pyomo:"):
        raise ValueError("names starting with 'pyomo:' are reserved for Pyomo's solvers")
    backend = Backend(name, solve_fn, available or (lambda: True), description, hints)
    _REGISTRY[name] = backend
    return backend


def unregister_backend(name: str) -> None:
    """Remove a backend added with :func:`register_backend` (KeyError if absent)."""
    del _REGISTRY[name]


def available_backends() -> list[str]:
    """Names of the backends that can run here, registry order first, then ``pyomo:*``.

    Examples
    --------
    >>> names = available_backends()
    >>> names[0], "cp-sat" in names
    ('highs', True)
    """

    names = [name for name, b in _REGISTRY.items() if _is_available(b)]
    return names + [f"pyomo:{s}" for s in pyomo_solvers()]


def _is_available(backend: Backend) -> bool:
    try:
        return bool(backend.available())
    except Exception:  # noqa: BLE001 - a failing probe means "not here"
        return False


def get_backend(name: str) -> Backend:
    """The backend called ``name``.

    Raises
    ------
    ValueError
        For an unknown or unavailable name; the message lists the available names.

    Examples
    --------
    >>> get_backend("highs").name
    'highs'
    >>> get_backend("nope")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: unknown solver backend 'nope'; available: highs, ...
    """
    backend = _REGISTRY.get(name)
    if backend is None and name.startswith("pyomo:"):
        backend = _pyomo_backend(name.removeprefix("pyomo:"))
    if backend is None:
        raise ValueError(f"unknown solver backend {name!r}; available: "
                         f"{', '.join(available_backends())}")
    if not _is_available(backend):
        raise ValueError(f"solver backend {name!r} is not available here; available: "
                         f"{', '.join(available_backends())}")
    return backend


@functools.lru_cache(maxsize=None)
def _pyomo_backend(solver: str) -> Backend:

    return Backend(f"pyomo:{solver}", functools.partial(_call_pyomo, solver=solver),
                   lambda: pyomo_available(solver), f"{solver} through Pyomo")


def _call_pyomo(a: ModelArrays, opts: SolveOptions, solver: str) -> dict:
    return pyomo_solve(a, opts, solver)


# ---------------------------------------------------------------------------------------------
# solve
# ---------------------------------------------------------------------------------------------
def solve(model: LinearModel, backend: str = DEFAULT_BACKEND, time_limit: float = 10.0,
          seed: int = 0, threads: int = 1, mip_gap: float | None = None,
          verbose: bool = False, options: Mapping[str, Any] | None = None,
          work_seconds: float | None = None) -> SolveResult:
    """Solve a :class:`LinearModel` on a registered backend.

    Parameters
    ----------
    model : LinearModel
    backend : str
        A name from :func:`available_backends`.
    time_limit : float
        Seconds (> 0).
    seed : int
        Random seed passed to the solver.
    threads : int, default 1
        Solver threads.
    mip_gap : float, optional
        Relative gap at which to stop; default the solver's own (HiGHS 1e-4, SCIP and CP-SAT 0).
    verbose : bool
        Let the solver log.
    options : mapping, optional
        Solver-native parameters by the solver's own names, e.g. ``{"cp_model_presolve":
        False}`` for CP-SAT or ``{"presolve": "off"}`` for HiGHS; an unknown name or a bad
        value comes back as status ERROR naming it.
    work_seconds : float, optional
        Budget the solve in deterministic work worth this many planned seconds
        (:func:`work_options`; ``time_limit`` is then only the wall-clock cap).

    Returns
    -------
    SolveResult
        Never raises for solver failures: they come back as status ERROR with a message.
        :func:`work_of` gives the work it used (planned seconds), :func:`was_cut_short`
        whether the wall clock stopped it first.

    Raises
    ------
    ValueError
        For an unknown backend name or invalid options.

    Examples
    --------
    >>> from formulations.solver import LinearModel
    >>> m = LinearModel()
    >>> x = m.add_var("x", ub=10, integer=True)
    >>> _ = m.add(2 * x <= 7, name="cap", family="capacity")
    >>> m.maximize(x)
    >>> [solve(m, backend=b).objective for b in ("highs", "cp-sat", "scip")]
    [3.0, 3.0, 3.0]
    """
    impl = get_backend(backend)
    if work_seconds is not None:
        options = work_options(backend, work_seconds) | dict(options or {})
    opts = solve_options(time_limit, seed, threads, mip_gap, verbose, options)
    start = time.perf_counter()
    arrays = model if isinstance(model, ModelArrays) else model.to_arrays()
    hint = check_hint(arrays)
    raw = _run(impl, arrays, opts)
    if raw.get("ambiguous") and (arrays.obj.any() or arrays.obj_const):
        raw = _tell_infeasible_from_unbounded(impl, arrays, opts, raw)
    wall = time.perf_counter() - start
    return _result(arrays, raw, hint, backend, wall)


def solve_planned(model, backend: str, budget: Budget, seed: int = 0,
                  mip_gap: float | None = None,
                  options: Mapping[str, Any] | None = None) -> SolveResult:
    """Solve ``model`` (a LinearModel) with what ``budget`` has left as a work limit
    (:func:`work_options`) and its deadline as the wall-clock cap; the work used (all of
    it when the backend does not say) is charged to ``budget``, and a cut by the wall
    clock marks it."""
    seconds, cap = budget.left(), budget.wall_left()
    arrays = model if isinstance(model, ModelArrays) else model.to_arrays()
    # the model's translation and the solver's start are work too (by the model's size)
    overhead = MIN_CHARGE + SETUP_SECONDS_PER_NONZERO * (arrays.n_vars + len(arrays.row_index))
    limit = max(MIN_CHARGE, seconds - overhead)
    native = work_options(backend, limit) | dict(options or {})
    result = solve(arrays, backend=backend, time_limit=cap, seed=seed, mip_gap=mip_gap,
                   options=native)
    used = work_of(result)         # the overhead in full: a large model costs it however
    budget.spend(overhead + (limit if used is None else min(limit, used)))   # little its
    if was_cut_short(result):                                                # search is planned
        budget.mark_cut()
    return result


def solve_cp_planned(model, budget: Budget, rate: float = CP_SAT_WORK_PER_SECOND,
                     charge: float = 0.0, seed: int = 0, workers: int = 1,
                     hint: Mapping | None = None, variables: Any = None,
                     name: str | None = None,
                     params: Mapping[str, Any] | None = None) -> SolveResult:
    """:func:`solve_planned` for a CP-SAT ``model`` (a ``CpModel`` with CP constraints): what
    ``budget`` has left, less ``charge`` (what building it cost, in planned seconds), becomes
    CP-SAT's deterministic time at ``rate`` units per planned second (a model family's own
    calibration); the budget's deadline only caps it. The charge and the work used are
    charged to ``budget``, and a cut by the wall clock marks it
    (:func:`~formulations.solver.cp.was_cut_short`).

    >>> from ortools.sat.python import cp_model
    >>> m = cp_model.CpModel(); x = m.new_int_var(0, 3, "x"); m.maximize(x)
    >>> b = Budget(1.0, deadline=time.monotonic() + 60)
    >>> r = solve_cp_planned(m, b.share(0.5), charge=0.1)
    >>> r.status.name, 0.1 <= b.spent <= 0.5, b.cut_short
    ('OPTIMAL', True, False)
    """
    work = max(MIN_CHARGE, budget.left() - charge)
    result = solve_cp_model(model, time_limit=budget.wall_left(), seed=seed, workers=workers,
                            hint=hint, variables=variables, name=name, params=params,
                            deterministic_time=work * rate)
    used = work_of(result)       # in CP_SAT_WORK_PER_SECOND units: back to this rate's
    budget.spend(charge + (work if used is None else
                           min(work, used * CP_SAT_WORK_PER_SECOND / rate)))
    if was_cut_short(result):
        budget.mark_cut()
    return result


def _run(impl: Backend, arrays: ModelArrays, opts: SolveOptions) -> dict:
    try:
        return impl.solve(arrays, opts)
    except Exception as exc:  # noqa: BLE001 - a failed solve is a result, not a crash
        return {"status": SolveStatus.ERROR,
                "message": f"{impl.name}: {type(exc).__name__}: {exc}"}


def _tell_infeasible_from_unbounded(impl: Backend, arrays: ModelArrays, opts: SolveOptions,
                                    raw: dict) -> dict:
    """The backend said "infeasible or unbounded": solve without objective to decide."""
    feasibility = dataclasses.replace(arrays, obj=np.zeros(arrays.n_vars), obj_const=0.0, hint={})
    check = _run(impl, feasibility, opts)
    if check["status"].has_solution:
        return {**raw, "status": SolveStatus.UNBOUNDED,
                "message": raw.get("message", "") + "; feasible without objective: unbounded"}
    if check["status"] is SolveStatus.INFEASIBLE:
        return raw
    return {**raw, "message": raw.get("message", "") + "; infeasible or unbounded"}


def solve_options(time_limit: float, seed: int, threads: int, mip_gap: float | None,
             verbose: bool, options: Mapping[str, Any] | None = None) -> SolveOptions:
    if not time_limit > 0:
        raise ValueError(f"time_limit must be > 0 seconds, got {time_limit}")
    if int(threads) < 1:
        raise ValueError(f"threads must be >= 1, got {threads}")
    if mip_gap is not None and not mip_gap >= 0:
        raise ValueError(f"mip_gap must be >= 0, got {mip_gap}")
    return SolveOptions(float(time_limit), int(seed), int(threads), mip_gap, bool(verbose),
                        dict(options or {}))


def _result(a: ModelArrays, raw: dict, hint, backend: str, wall: float) -> SolveResult:
    status = raw["status"]
    values = raw.get("values")
    objective = raw.get("objective") if status.has_solution else None
    bound = raw.get("bound") if status.has_solution else None
    message = raw.get("message", "")
    if hint.status == "infeasible":
        message += "; hint infeasible, violates: " + ", ".join(hint.violations[:5])
    if hint.status != "none" and not raw.get("hint_used", False):
        message += f"; hint not passed to {backend}"
    result = SolveResult(
        status=status, objective=_float(objective), bound=_float(bound),
        gap=relative_gap(_float(objective), _float(bound)), wall_time=wall, backend=backend,
        n_vars=a.n_vars, n_constraints=a.n_rows,
        values=_values(a, values) if status.has_solution and values is not None else {},
        message=message, hint_status=hint.status, hint_violations=hint.violations,
        model_name=a.name)
    return annotate(result, raw.get("work"), raw.get("cut_short", False))


def _values(a: ModelArrays, values) -> dict[str, float]:
    """Column values by name; integer columns rounded."""
    x = np.asarray(values, dtype=float)
    x = np.where(a.col_int, np.round(x), x) + 0.0  # + 0.0 turns -0.0 into 0.0
    return dict(zip(a.col_names, x.tolist()))


def _float(x) -> float | None:
    return None if x is None else float(x)


# ---------------------------------------------------------------------------------------------
# the built-in backends
# ---------------------------------------------------------------------------------------------
def _highs(a: ModelArrays, opts: SolveOptions) -> dict:
    return backend_solve(a, opts)


def _cpsat(a: ModelArrays, opts: SolveOptions) -> dict:
    return cpsat_solve(a, opts)


def _scip(a: ModelArrays, opts: SolveOptions) -> dict:
    return scip_solve(a, opts)


def _cbc(a: ModelArrays, opts: SolveOptions) -> dict:
    return cbc_solve(a, opts)


@functools.lru_cache(maxsize=None)
def _pywraplp_has(solver_id: str) -> bool:
    return solver_available(solver_id)


def _pyomo_highs(a: ModelArrays, opts: SolveOptions) -> dict:
    return pyomo_solve(a, opts, "appsi_highs")


def _pyomo_highs_available() -> bool:
    return pyomo_available("appsi_highs")


register_backend("highs", _highs, description="HiGHS through highspy")
register_backend("cp-sat", _cpsat, description="OR-Tools CP-SAT (all-integer models)")
register_backend("scip", _scip, available=lambda: _pywraplp_has("SCIP"),
                 description="SCIP through OR-Tools pywraplp")
register_backend("cbc", _cbc, available=lambda: _pywraplp_has("CBC"),
                 description="CBC through OR-Tools pywraplp", hints=False)
register_backend("pyomo-highs", _pyomo_highs, available=_pyomo_highs_available,
                 description="HiGHS through Pyomo (appsi_highs)")
