"""The paper's sequential placement process (source 004 §3) and the heuristics built on it.

Scope
-----
* :class:`StreamingEnv` -- a gymnasium-style environment (``reset(seed) -> (obs, info)``,
  ``step(action) -> (obs, reward, terminated, truncated, info)``) that places one instruction per
  step in topological order. An action is ``tile * max_ii + slot``; ``info["mask"]`` marks the
  legal ones (free slot ``< II``, memory co-location with room for the rest of the component,
  distinct tiles for SDF starts and siblings, reach of every placed neighbour, an issue cycle
  that meets every placed operand and loop-carried consumer, delay entries that fit). The
  instruction issues at the earliest cycle of that slot its operands allow. Reward
  ``R_n = -(t_n - max_p t_p)`` (ready times; the digest's sign fix), ``-lambda`` and the end of the
  episode when no action is legal. The observation is the paper's TS + 1 vector: the ready time
  of the instruction in each (tile, slot) (``-1`` when empty) and the index of the next node.
* Policies: :func:`greedy_policy` (earliest ready time, fewest delays, nearest tile -- the warm
  start), :func:`random_policy`.
* :func:`run_policy` / :func:`greedy_schedule` / :func:`random_schedule` -- one episode per II
  from the lower bound up; the first II that completes wins.
* :func:`evolutionary_schedule` -- the paper's promised comparator: a (mu + lambda) search over
  genomes that pick the r-th best legal action at each step (genome 0 is greedy).

Caveats: the environment (and so every heuristic here) issues each instruction at the
earliest cycle of the chosen slot, which is not always optimal (waiting can save delay
entries); the CP-SAT model (and the exhaustive test oracle in ``tests/``) do not have that
restriction. Every latency comes from the spec (through the problem).

Examples
--------
>>> from hardware import load_hardware
>>> from sim.streaming import distance_graph
>>> s = greedy_schedule(distance_graph(), load_hardware("se16"))
>>> s.ii, s.cycles <= 30
(3, True)
"""

from __future__ import annotations

import random
import time
from dataclasses import dataclass
from typing import Callable

import numpy as np

from formulations.solver import Budget
from formulations.streaming.problem import (StreamingInfeasible, StreamingProblem,
                                            StreamingSchedule, asap_and_tail, delays_needed,
                                            lower_bounds, precheck, problem_from_graph,
                                            schedule_from_lists)
from hardware import StreamingEngineSpec
from model.graph import Graph

__all__ = ["StreamingEnv", "Candidate", "Policy", "greedy_policy", "random_policy",
           "run_policy", "greedy_schedule", "random_schedule", "greedy_or_none",
           "evolutionary_schedule", "LAMBDA", "STEP_SECONDS", "EVOLUTION_SECONDS"]

#: Penalty of a dead end (the paper's lambda, value not given).
LAMBDA = 1000.0


#: Planned seconds a placement step (one instruction placed, or a dead end) is charged to the
#: heuristics' budget: measured 0.25-1.3 ms a step on the Morpher kernels of 10-163
#: instructions at II 1-32, load 2-3; 0.41 ms on the 8,263 steps of Taylor FullPred's second
#: SDF.
STEP_SECONDS = 5e-4
#: Planned seconds of :func:`evolutionary_schedule` called without a budget.
EVOLUTION_SECONDS = 10.0


@dataclass
class Candidate:
    tile: int
    slot: int
    tau: int
    delays: dict[int, int]  # tile -> delay entries added there


class StreamingEnv:
    """Place the instructions of one SDF in topological order at a fixed II.

    Examples
    --------
    >>> from hardware import load_hardware
    >>> from model.graph import Graph, Node, Edge
    >>> env = StreamingEnv(Graph("g", [Node("a"), Node("b")], [Edge("a", "b")]),
    ...                    load_hardware("se16"), ii=1)
    >>> obs, info = env.reset(seed=0)
    >>> obs.shape, int(info["mask"].sum())
    ((97,), 16)
    >>> obs, reward, done, _, info = env.step(0)
    >>> reward, int(info["mask"].sum())
    (-3.0, 2)
    >>> obs, reward, done, _, info = env.step(1 * 6 + 0)
    >>> reward, done, env.schedule().cycles
    (-4.0, True, 7)
    """

    def __init__(self, graph: Graph, spec: StreamingEngineSpec, ii: int,
                 order: list[str] | None = None, lam: float = LAMBDA):
        self.graph, self.spec, self.ii, self.lam = graph, spec, ii, lam
        self.problem: StreamingProblem = problem_from_graph(graph, spec)
        index = {nid: i for i, nid in enumerate(self.problem.names)}
        self.order = [index[n] for n in (order or graph.topological_order())]
        self.n_actions = spec.tiles * spec.max_ii
        self._in = [[] for _ in range(self.problem.n)]
        self._out = [[] for _ in range(self.problem.n)]
        for u, v, d in self.problem.edges:
            self._in[v].append((u, d))
            self._out[u].append((v, d))
        self._parents = [[u for u, _ in self._in[v] if u != v] for v in range(self.problem.n)]
        asap, tail = asap_and_tail(self.problem)
        L = self.problem.op_latency
        critical = max((a + L for a in asap), default=0)
        # sources issue as late as the critical path allows, so reconvergent operands line up
        self._release = [critical - L - tail[v] if not any(d == 0 for _, d in self._in[v]) else 0
                         for v in range(self.problem.n)]
        self.reset()

    # -- gymnasium API -------------------------------------------------------------------------
    def reset(self, seed: int | None = None) -> tuple[np.ndarray, dict]:
        """Empty device; returns the observation and ``{"mask": ...}``."""
        p = self.problem
        self.rng = random.Random(seed)
        self.step_index = 0
        self.tile = [-1] * p.n
        self.tau = [-1] * p.n
        self.occupied: dict[tuple[int, int], int] = {}
        self.load = [0] * p.tiles  # instructions + delay entries per tile
        self.comp_tile = [-1] * len(p.components)
        self.reserved = [0] * p.tiles  # unplaced members of components anchored there
        self.failed = False
        self._candidates = self._legal()
        return self._obs(), self._info()

    def step(self, action: int) -> tuple[np.ndarray, float, bool, bool, dict]:
        """Place the current node with ``action = tile * max_ii + slot``."""
        if self.done:
            raise RuntimeError("episode is over; call reset()")
        if not self._candidates:
            self.failed = True
            return self._obs(), -self.lam, True, False, self._info()
        cand = self._candidates.get(int(action))
        if cand is None:
            raise ValueError(f"action {action} is masked out")
        v = self.current
        self._place(v, cand)
        L = self.problem.op_latency
        parents_ready = [self.tau[u] + L for u, d in self._in[v] if d == 0 and u != v]
        reward = -float(cand.tau + L - max(parents_ready, default=0))
        self.step_index += 1
        self._candidates = self._legal() if not self.done else {}
        terminated = self.done or not self._candidates
        if not self.done and not self._candidates:
            self.failed = True
            reward -= self.lam
        return self._obs(), reward, terminated, False, self._info()

    # -- state ---------------------------------------------------------------------------------
    @property
    def done(self) -> bool:
        return self.step_index >= len(self.order) or self.failed

    @property
    def current(self) -> int:
        return self.order[self.step_index]

    @property
    def complete(self) -> bool:
        return self.step_index >= len(self.order) and not self.failed

    def candidates(self) -> dict[int, Candidate]:
        """Legal actions of the current node, with the issue cycle each implies."""
        return self._candidates

    def mask(self) -> np.ndarray:
        m = np.zeros(self.n_actions, dtype=bool)
        m[list(self._candidates)] = True
        return m

    def schedule(self) -> StreamingSchedule:
        """The finished placement as a :class:`StreamingSchedule`."""
        if not self.complete:
            raise RuntimeError("the episode did not place every node")
        return schedule_from_lists(self.problem, self.ii, self.tile, self.tau)

    def _obs(self) -> np.ndarray:
        obs = -np.ones(self.n_actions + 1, dtype=np.int64)
        for (t, s), v in self.occupied.items():
            obs[t * self.spec.max_ii + s] = self.tau[v] + self.problem.op_latency
        obs[-1] = self.current if not self.done else -1
        return obs

    def _info(self) -> dict:
        return {"mask": self.mask(),
                "node": None if self.done else self.problem.names[self.current]}

    # -- legality ------------------------------------------------------------------------------
    def _place(self, v: int, cand: Candidate) -> None:
        p = self.problem
        self.tile[v], self.tau[v] = cand.tile, cand.tau
        self.occupied[(cand.tile, cand.slot)] = v
        self.load[cand.tile] += 1
        for t, count in cand.delays.items():
            self.load[t] += count
        c = p.component[v]
        if self.comp_tile[c] < 0:
            self.comp_tile[c] = cand.tile
            self.reserved[cand.tile] += len(p.components[c]) - 1
        else:
            self.reserved[cand.tile] -= 1

    def _legal(self) -> dict[int, Candidate]:
        if self.done:
            return {}
        v = self.current
        out = {}
        for t in self._tiles_for(v):
            for s in range(self.ii):
                if (t, s) in self.occupied:
                    continue
                cand = self._timed(v, t, s)
                if cand is not None:
                    out[t * self.spec.max_ii + s] = cand
        return out

    def _tiles_for(self, v: int) -> list[int]:
        p = self.problem
        c = p.component[v]
        tiles = [self.comp_tile[c]] if self.comp_tile[c] >= 0 else list(range(p.tiles))
        banned = set()
        if v in p.starts:
            banned |= {self.tile[s] for s in p.starts if self.tile[s] >= 0}
        for u in self._parents[v]:
            banned |= {self.tile[w] for w in p.children[u] if w != v and self.tile[w] >= 0}
        neighbours = [u for u, _ in self._in[v]] + [w for w, _ in self._out[v]]
        near = [self.tile[u] for u in neighbours if u != v and self.tile[u] >= 0]
        return [t for t in tiles if t not in banned
                and all(abs(t - o) <= p.reach and (t - o) in p.latency for o in near)]

    def _timed(self, v: int, t: int, s: int) -> Candidate | None:
        p, ii = self.problem, self.ii
        L = p.op_latency
        lo, hi = self._release[v], None
        for u, d in self._in[v]:
            if u != v and self.tau[u] >= 0:
                lo = max(lo, self.tau[u] + L + p.latency[t - self.tile[u]] - d * ii)
        for w, d in self._out[v]:
            if w != v and self.tau[w] >= 0:
                bound = self.tau[w] + d * ii - L - p.latency[self.tile[w] - t]
                hi = bound if hi is None else min(hi, bound)
        tau = lo + (s - lo) % ii
        if hi is not None and tau > hi:
            return None
        delays = self._delays(v, t, tau)
        if delays is None:
            return None
        return Candidate(t, s, tau, delays)

    def _delays(self, v: int, t: int, tau: int) -> dict[int, int] | None:
        p, ii = self.problem, self.ii
        L = p.op_latency
        add: dict[int, int] = {t: 0}
        for u, d in self._in[v]:
            if u == v:
                add[t] += delays_needed(d * ii - L, ii)
            elif self.tau[u] >= 0:
                add[t] += delays_needed(tau + d * ii - self.tau[u] - L
                                        - p.latency[t - self.tile[u]], ii)
        for w, d in self._out[v]:
            if w != v and self.tau[w] >= 0:
                hold = self.tau[w] + d * ii - tau - L - p.latency[self.tile[w] - t]
                add[self.tile[w]] = add.get(self.tile[w], 0) + delays_needed(hold, ii)
        own_reservation = self._reservation_after(v, t)
        for tile, extra in add.items():
            need = self.load[tile] + extra + (1 + own_reservation if tile == t else 0)
            if need + (self.reserved[tile] if tile != t else self._reserved_other(v, t)) > ii:
                return None
        return {k: c for k, c in add.items() if c}

    def _reservation_after(self, v: int, t: int) -> int:
        """Slots the rest of ``v``'s memory component will need on ``t`` once ``v`` is placed."""
        c = self.problem.component[v]
        if self.comp_tile[c] < 0:
            return len(self.problem.components[c]) - 1
        return 0

    def _reserved_other(self, v: int, t: int) -> int:
        """Reservations on ``t`` not counting ``v``'s own (already anchored) component slot."""
        c = self.problem.component[v]
        return self.reserved[t] - (1 if self.comp_tile[c] == t else 0)


# ---------------------------------------------------------------------------------------------
# policies and episodes
# ---------------------------------------------------------------------------------------------
Policy = Callable[[StreamingEnv], int]


def _greedy_key(env: StreamingEnv, action: int, cand: Candidate) -> tuple:
    v = env.current
    near = [env.tile[u] for u in env._parents[v] if env.tile[u] >= 0]
    centre = sum(near) / len(near) if near else env.spec.tiles / 2 - 0.5
    return (cand.tau, sum(cand.delays.values()), abs(cand.tile - centre), cand.tile, cand.slot)


def greedy_policy(env: StreamingEnv) -> int:
    """Earliest ready time, then fewest delay entries, then the tile nearest the operands."""
    ranked = sorted(env.candidates().items(), key=lambda kv: _greedy_key(env, *kv))
    return ranked[0][0]


def random_policy(env: StreamingEnv) -> int:
    """A uniformly random legal action (the env's seeded generator)."""
    return env.rng.choice(sorted(env.candidates()))


def _ranked_policy(genome: list[int]) -> Policy:
    def policy(env: StreamingEnv) -> int:
        ranked = sorted(env.candidates().items(), key=lambda kv: _greedy_key(env, *kv))
        return ranked[min(genome[env.step_index], len(ranked) - 1)][0]
    return policy


def _episode(graph: Graph, spec: StreamingEngineSpec, ii: int, policy: Policy,
             seed: int | None = None, budget: Budget | None = None
             ) -> tuple[StreamingSchedule | None, float]:
    env = StreamingEnv(graph, spec, ii)
    env.reset(seed=seed)
    total = 0.0
    while not env.done:
        if budget is not None:
            budget.spend(STEP_SECONDS)
        if not env.candidates():
            _, reward, *_ = env.step(0)
            total += reward
            break
        _, reward, *_ = env.step(policy(env))
        total += reward
    return (env.schedule() if env.complete else None), total


def run_policy(graph: Graph, spec: StreamingEngineSpec, policy: Policy, method: str,
               seed: int | None = None, tries: int = 1,
               budget: Budget | None = None) -> StreamingSchedule:
    """One episode per II from the lower bound up (``tries`` per II); the first success wins.
    Each placement step is charged :data:`STEP_SECONDS` to ``budget``; no episode is begun
    once it is spent (never the clock: the steps are the heuristics' deterministic work).

    Raises :class:`StreamingInfeasible` when every II dead-ends (or the budget is spent).
    """
    started = time.perf_counter()
    problem = problem_from_graph(graph, spec)
    reasons = precheck(problem)
    if reasons:
        raise StreamingInfeasible(reasons)
    for ii in range(lower_bounds(problem)["ii"], spec.max_ii + 1):
        best = None
        for k in range(tries):
            spent = budget is not None and budget.exhausted()
            if spent and best is None:
                raise StreamingInfeasible([f"{method}: its {budget.seconds:.3g} planned s of "
                                           f"placement steps were spent before II {ii} "
                                           f"(a budget, nothing proven)"])
            if spent:
                break
            sched, _ = _episode(graph, spec, ii, policy, None if seed is None else seed + k,
                                budget)
            if sched is not None and (best is None or sched.cycles < best.cycles):
                best = sched
        if best is not None:
            best.method, best.seconds = method, time.perf_counter() - started
            return best
    raise StreamingInfeasible([f"{method}: every episode dead-ended up to II {spec.max_ii}"])


def greedy_schedule(graph: Graph, spec: StreamingEngineSpec,
                    budget: Budget | None = None) -> StreamingSchedule:
    """The greedy warm start (see :func:`greedy_policy`)."""
    return run_policy(graph, spec, greedy_policy, "greedy", budget=budget)


def random_schedule(graph: Graph, spec: StreamingEngineSpec, seed: int = 0,
                    tries: int = 20, budget: Budget | None = None) -> StreamingSchedule:
    """Best of ``tries`` random valid episodes per II (within ``budget``)."""
    return run_policy(graph, spec, random_policy, "random", seed=seed, tries=tries,
                      budget=budget)


def evolutionary_schedule(graph: Graph, spec: StreamingEngineSpec, seed: int = 0,
                          generations: int = 30, population: int = 8, children: int = 16,
                          budget: Budget | None = None) -> StreamingSchedule:
    """(mu + lambda) search over rank genomes; fitness = (II, cycles, delay entries), for
    at most ``generations`` per II within ``budget`` (default :data:`EVOLUTION_SECONDS`
    planned seconds), spent as placement steps (:data:`STEP_SECONDS` each: the same genomes
    on any machine).

    Examples
    --------
    >>> from hardware import load_hardware
    >>> from sim.streaming import distance_graph
    >>> g = distance_graph(); se = load_hardware("se16")
    >>> evolutionary_schedule(g, se, generations=5).cycles <= greedy_schedule(g, se).cycles
    True
    """
    started = time.perf_counter()
    rng = random.Random(seed)
    budget = budget if budget is not None else Budget(EVOLUTION_SECONDS)
    problem = problem_from_graph(graph, spec)
    reasons = precheck(problem)
    if reasons:
        raise StreamingInfeasible(reasons)
    n = problem.n
    for ii in range(lower_bounds(problem)["ii"], spec.max_ii + 1):
        def fitness(genome: list[int]) -> tuple:
            sched, _ = _episode(graph, spec, ii, _ranked_policy(genome), budget=budget)
            if sched is None:
                return (1, 0, 0), None
            return (0, sched.cycles, sum(sched.delays.values())), sched
        pool = [[0] * n] + [[_gene(rng) for _ in range(n)] for _ in range(population - 1)]
        scored = sorted(((fitness(g), g) for g in pool), key=lambda x: x[0][0])
        for _ in range(generations):
            if budget.over():
                break
            kids = [_mutate(rng, rng.choice(scored[:population])[1]) for _ in range(children)]
            scored = sorted(scored + [(fitness(g), g) for g in kids],
                            key=lambda x: x[0][0])[:population]
        (key, best), _ = scored[0]
        if best is not None:
            best.method, best.seconds = "evolutionary", time.perf_counter() - started
            return best
    raise StreamingInfeasible([f"evolutionary: no genome completed up to II {spec.max_ii}"])


def _gene(rng: random.Random) -> int:
    return min(int(rng.expovariate(0.8)), 12)


def _mutate(rng: random.Random, genome: list[int]) -> list[int]:
    child = list(genome)
    for _ in range(1 + int(rng.expovariate(1.0))):
        child[rng.randrange(len(child))] = _gene(rng)
    return child


def greedy_or_none(graph: Graph, spec: StreamingEngineSpec) -> StreamingSchedule | None:
    """The greedy schedule, or None when every II dead-ends."""
    try:
        return greedy_schedule(graph, spec)
    except StreamingInfeasible:
        return None
