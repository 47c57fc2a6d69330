"""The solver layer: one model builder, one backend registry, one result type.

* :class:`LinearModel` -- a backend-neutral MILP with named constraint families, hints, and
  ``.mps``/``.lp`` export (:mod:`.linear`).
* :func:`solve` / :meth:`LinearModel.solve` -- on any backend of the registry
  (:func:`available_backends`: ``highs``, ``cp-sat``, ``scip``, ``cbc``, ``pyomo-highs``,
  ``pyomo:<solver>``), always returning a :class:`SolveResult` (:mod:`.backends`).
* :func:`solve_cp_model` / :func:`export_cp_model` -- CP-SAT models with CP constraints
  (:mod:`.cp`).
* :class:`ModelDescription` -- one model stated once, emitted as a CP-SAT model or a
  :class:`LinearModel` (:mod:`.description`).
* :func:`write_model_file` / :func:`solve_model_file` -- model files by suffix (:mod:`.files`).
* :class:`Budget` -- the planned work a search spends and the run's deadline (:mod:`.budget`);
  :class:`SolveSettings` -- what a decision's solve takes from the run (:mod:`.settings`).
* :func:`diagnose_infeasible` -- which constraint families make a model infeasible
  (:mod:`.diagnose`).

Examples
--------
>>> from formulations.solver import LinearModel, quicksum
>>> m = LinearModel("knapsack")
>>> x = [m.add_binary(f"take{i}") for i in range(4)]
>>> _ = m.add(quicksum(w * xi for w, xi in zip([5, 4, 3, 2], x)) <= 9, family="capacity")
>>> m.maximize(quicksum(v * xi for v, xi in zip([10, 7, 5, 3], x)))
>>> r = m.solve(backend="highs", time_limit=5, seed=0)
>>> r.status.name, r.objective, [r.value(xi) for xi in x]
('OPTIMAL', 17.0, [1.0, 1.0, 0.0, 0.0])
"""

from .backends import (DEFAULT_BACKEND, Backend, SolveOptions, available_backends, get_backend,
                       register_backend, solve, solve_cp_planned, solve_options, solve_planned,
                       unregister_backend, work_options)
from .cp import (CP_SAT_WORK_PER_SECOND, check_cp_hint, export_cp_model, load_cp_model,
                 run_cp_sat, solve_cp_model, was_cut_short, work_of)
from .description import DVar, ModelDescription, Negated
from .diagnose import Diagnosis, diagnose_infeasible, explain_infeasible
from .files import MODEL_SUFFIXES, solve_model_file, write_model_file
from .linear import (INF, HintCheck, LinearConstraint, LinearModel, LinExpr, ModelArrays, Var,
                     quicksum)
from .result import SolveResult, SolveStatus, relative_gap
from .interrupt import (clear_stop, deferred_signals, request_stop, running, stop_requested,
                        watch_signals)
from .budget import Budget, deadline_for, from_epoch, to_epoch
from .settings import SolveSettings

__all__ = [
    # model building
    "LinearModel", "Var", "LinExpr", "LinearConstraint", "ModelArrays", "HintCheck", "quicksum",
    "INF",
    # solving
    "solve", "SolveOptions", "SolveSettings", "SolveResult", "SolveStatus", "relative_gap",
    # the budget every search spends, and solves planned in counted work
    "Budget", "deadline_for", "to_epoch", "from_epoch", "solve_planned", "solve_cp_planned",
    "work_options", "work_of", "was_cut_short", "CP_SAT_WORK_PER_SECOND", "solve_options",
    # backends
    "Backend", "DEFAULT_BACKEND", "available_backends", "get_backend", "register_backend",
    "unregister_backend",
    # one model for CP-SAT and the linear backends
    "ModelDescription", "DVar", "Negated",
    # CP-SAT models
    "solve_cp_model", "export_cp_model", "load_cp_model", "check_cp_hint", "run_cp_sat",
    # files
    "write_model_file", "solve_model_file", "MODEL_SUFFIXES",
    # interrupts
    "running", "request_stop", "stop_requested", "clear_stop", "watch_signals",
    "deferred_signals",
    # diagnosis
    "diagnose_infeasible", "explain_infeasible", "Diagnosis",
]
