"""The work rates of the CGRA path: how its searches spend planned seconds as counted work.

Scope
-----
Every search of :func:`~formulations.cgra.kernel.map_kernel` spends a
:class:`~formulations.solver.budget.Budget`: a
share of the planned seconds (``settings.time_limit``), spent as work that does not depend on
the machine's load:

* the list scheduler, the descent, ejection and PathFinder count the routing steps of
  :meth:`~formulations.cgra.listsched.Router.route` (a PE and its links examined at one cycle),
  :data:`ROUTER_STEPS_PER_SECOND` per planned second, plus :data:`PLACE_STEPS` per operation
  placed;
* every CP-SAT call of the sweep and the relaxation is limited by CP-SAT's deterministic time,
  :data:`RELAX_WORK_PER_SECOND` (relaxation) or :data:`FULL_WORK_PER_SECOND` (full model)
  units per planned second, and building a full model is charged :data:`BUILD_SECONDS` per
  routing variable.

The constants are calibrated on this project's 2-core machine with one core free, so that a
planned second takes about a wall second there. The wall clock (``time.monotonic()``) is only
the outer cap: a search it stops first is counted (:attr:`Budget.cuts
<formulations.solver.budget.Budget.cuts>`) and the run's answer is then no longer promised to
repeat.
"""

__all__ = ["ROUTER_STEPS_PER_SECOND", "PLACE_STEPS", "PLACE_EDGE_STEPS",
           "RELAX_WORK_PER_SECOND", "FULL_WORK_PER_SECOND",
           "BUILD_SECONDS", "RELAX_BUILD_SECONDS", "WORK_SHARE"]

#: Router steps (a PE and its out-links examined at one cycle of a route) per planned second.
#: Calibrated by a least-squares fit of the wall time of list scheduling and descent on 7
#: Morpher kernels (18-150 operations) on cgra4x4, cgra8x8 and hycube4x4 with one core free
#: (load 1.8 on the 2 cores): 0.63 us per step, 0.096 ms per operation placed, 0.099 us per
#: candidate PE and kernel edge; the fit is within 0.85-1.09 of every run's wall time (at
#: load 3.5 the same work took about 1.3 times longer).
ROUTER_STEPS_PER_SECOND = 1.6e6
#: Router steps charged per operation placed (recurrence and candidate bookkeeping), and per
#: candidate PE and kernel edge of that placement (its issue window reads every edge).
PLACE_STEPS = 150
PLACE_EDGE_STEPS = 0.16
#: CP-SAT deterministic time units per planned second: on the relaxation
#: (:mod:`~formulations.cgra.relax`) and on the full model (:mod:`~formulations.cgra.model`).
#: Measured on the relaxation and full-model solves (over 0.05 s) of the sweeps of 5 Morpher
#: kernels (18-52 operations): relaxation 0.32-0.35 units per wall second on cgra4x4 and
#: cgra8x8; full model 0.92-0.95 on cgra4x4, 0.97-2.0 on cgra8x8 (load about 2 on the 2 cores;
#: 0.27-0.30 and 0.54-0.76 at load 3-4.7).
RELAX_WORK_PER_SECOND = 0.33
FULL_WORK_PER_SECOND = 1.5
#: Planned seconds per routing variable for building (and decoding) a full model, and per
#: operation-or-value and PE for building a relaxation (adpcm_decoder's on cgra8x8, 85
#: operations and 85 values on 64 PEs, took 0.2-0.5 s outside CP-SAT).
BUILD_SECONDS = 1.0e-5
RELAX_BUILD_SECONDS = 3.0e-5
#: Share of ``settings.time_limit`` planned as work; the rest covers what no counter sees
#: (indexing the kernel, pre-checks, the relaxation's build) and moderate load.
WORK_SHARE = 0.85
