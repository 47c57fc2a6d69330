"""The learning mapper of source 004 (§3.2, §3.6, §5): PPO with a GNN and Global Graph Attention.

Scope
-----
:class:`RLPolicy` is an actor-critic over :class:`~formulations.streaming.env.StreamingEnv`
(one instruction per step, action ``tile * max_ii + slot``, ``info["mask"]`` the legal ones,
reward ``-(t_n - max_p t_p)``, ``-lambda`` at a dead end). :func:`train` fits one with PPO on a
list of graphs; :func:`rl_schedule` maps a graph with a trained policy the way
:func:`~formulations.streaming.env.run_policy` does (one pass per II from the lower bound up:
greedy decoding plus ``samples - 1`` sampled episodes, the best complete one wins).
:meth:`RLPolicy.save` / :meth:`RLPolicy.load` keep it in one small ``.npz`` (parameters,
configuration as JSON, nothing pickled).

The network (the paper's Fig. 4, with its gaps resolved)
--------------------------------------------------------
* **Static node features** (the paper: "tile memory dependencies"; we add what the placement
  rules depend on): the size of the node's tile-memory component (instructions sharing a
  variable must share a tile) and whether it reads a variable; in- and out-degree; depth
  (ASAP issue) and tail (longest path to a sink) over the critical path; SDF start; sibling
  count (the env's definition: other children of a common parent, which need distinct tiles);
  loop-carried edges; the op class (memory, multiply, add/sub, other).
* **GNN** (type and depth not given): ``K`` rounds of ``h <- ReLU(W [h || mean_pred h ||
  mean_succ h || mean_mem h])`` over three relations -- operands, consumers and tile-memory
  sharing (so the memory dependencies are edges as well as features).
* **Dynamic node state** (placed, tile, ready time, current) is added to the embeddings through
  a dense layer before attention, so the attention sees where the placed nodes sit.
* **GGA** (the paper's "attention module ... to select which dependency nodes are relevant to
  the current node"): one head, query = the current node's embedding, keys and values = all
  node embeddings (padding masked), scaled dot product.
* **Device-state MLP** (the paper's TS + 1 observation, "device state, node to be placed and
  placed node latencies"): per (tile, slot) the occupancy and ready time of the occupant, the
  legality, and for a legal entry what placing the current node there implies (its ready time
  over the earliest legal one, the delay entries it needs, its distance to the operands' tiles,
  and its rank among the legal entries by those three keys), plus the tile's load; with
  II / max II and the step fraction. Two dense layers.
* **Heads**: ``[current node, GGA context, device embedding]`` -> dense -> 96 logits, plus a
  small MLP shared by every action over that action's own device features (a pointer-style
  score, so a tile/slot's meaning does not have to be relearned per output unit); the critic is
  a dense layer on the same hidden vector (actor and critic share the trunk, Fig. 4).
* **Masking** (the empty §5.3): illegal logits are set to ``-inf`` before the softmax, so an
  illegal action has probability exactly 0; the entropy sums over legal actions only.
* **Baseline** ``arch="mlp"`` (Fig. 6): "3 MLPs stacked" over the current node's raw features,
  the same device features and globals -- no GNN, no attention -- with the same heads.

PPO (§3.2 gives no hyper-parameters): clipped surrogate (0.2), value regression (0.5), entropy
bonus (0.01), GAE with gamma 1 (an episode's return telescopes to minus the cycle count), Adam,
gradient norm clipped at 1, ``ppo_epochs`` full-batch passes per update over
``batch_episodes`` episodes. Rewards are divided by ``reward_scale``; the dead-end penalty
``lam`` (the paper's lambda, value not given) is the env's 1000: it must outweigh the cost of
any complete episode, or stopping early pays (a first try with 50 taught the policy to walk
into a dead end after a few cheap steps). The paper's action never chooses the II; a graph
is trained at the lowest II the greedy or random heuristics reach (II / max II is an input).
Cycling a graph's episodes through the IIs from the lower bound up was tried and is worse
within our budgets: at the tight IIs almost every episode dead-ends, and the policy collapsed
onto a dead-ending path (mean return stuck at -lambda on the distance graph). Inference sweeps
the II from the lower bound up, so a policy can still find a smaller II than it trained at.
The first update's time is mostly JAX compilation.

Node order: ``order="topological"`` (the env's) or ``"unordered"`` (Fig. 8): a seeded random
permutation per graph. The env accepts any order, but it issues a node at the earliest cycle
its placed neighbours allow, so a consumer placed before its operands leaves them no cycle;
:class:`UnorderedEnv` (a subclass, the env untouched) issues such a node no earlier than its
operands could arrive over the slowest link, which costs cycles -- part of why the paper's
topological order wins.

Dependencies: JAX and optax are the optional extra ``learn`` (``pip install -e
".[learn]"``), imported only when a policy is built, trained or run (:func:`require_jax`).
Parameters are initialised with numpy from the seed and actions are sampled with a numpy
generator from the seed, so a run is deterministic per seed.
"""

from __future__ import annotations

import functools
import io
import json
import math
import os
import time
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

import numpy as np

from formulations.streaming.env import StreamingEnv, greedy_or_none, random_schedule
from formulations.streaming.problem import (StreamingInfeasible, StreamingSchedule,
                                            asap_and_tail, lower_bounds, precheck,
                                            problem_from_graph)
from hardware import StreamingEngineSpec
from model.files import write_bytes_atomic
from model.graph import Graph

__all__ = ["RLConfig", "RLPolicy", "RLUnavailable", "TrainResult", "require_jax",
           "rl_available", "train", "rl_schedule", "graph_arrays", "step_arrays", "RL_HINT",
           "NODE_FEATURES", "DEVICE_FEATURES", "DEFAULT_POLICY", "run_episode",
           "training_iis", "init_params", "UnorderedEnv"]

#: The policy ``--placer rl`` uses unless ``--policy-file`` names another (trained by
#: ``python -m benchmarks.suites.rl train --graphs random --max-nodes 20 ...``, see the README).
DEFAULT_POLICY = str(Path(__file__).with_name("rl_policy.npz"))
#: What to tell a user whose install lacks the extra.
RL_HINT = 'the RL placer needs JAX: pip install -e ".[learn]"'
#: Static features per node (see the module docstring).
NODE_FEATURES = 13
#: Dynamic features per node.
NODE_DYNAMIC = 4
#: Features per (tile, slot) of the device state.
DEVICE_FEATURES = 9
#: Cycles are divided by this before they enter the network.
TIME_SCALE = 32.0
_OPS = {"load": 9, "store": 9, "mul": 10, "fma": 10, "mac": 10, "madd": 10, "shl": 10,
        "add": 11, "sub": 11}


class RLUnavailable(RuntimeError):
    """JAX or optax is not installed (the ``learn`` extra)."""


def require_jax():
    """``(jax, jax.numpy, optax)``, or :class:`RLUnavailable` with the fix."""
    try:
        import jax
        import jax.numpy as jnp
        import optax
    except ImportError as exc:
        raise RLUnavailable(f"{RL_HINT} ({exc})") from None
    return jax, jnp, optax


def rl_available() -> bool:
    """Whether the ``learn`` extra is installed."""
    try:
        require_jax()
    except RLUnavailable:
        return False
    return True


@dataclass(frozen=True)
class RLConfig:
    """Architecture and PPO knobs (the paper gives none of them)."""

    arch: str = "gga"            # "gga" (GNN + GGA) or "mlp" (the 3-MLP baseline)
    order: str = "topological"   # or "unordered"
    dim: int = 32
    layers: int = 2
    hidden: int = 64
    learning_rate: float = 3e-3
    clip: float = 0.2
    gae: float = 0.95
    entropy: float = 0.01
    value_coef: float = 0.5
    ppo_epochs: int = 4
    batch_episodes: int = 8
    lam: float = 1000.0
    reward_scale: float = 10.0
    seed: int = 0

    def __post_init__(self):
        if self.arch not in ("gga", "mlp"):
            raise ValueError(f'arch must be "gga" or "mlp", got {self.arch!r}')
        if self.order not in ("topological", "unordered"):
            raise ValueError(f'order must be "topological" or "unordered", got {self.order!r}')


# ---------------------------------------------------------------------------------------------
# features
# ---------------------------------------------------------------------------------------------
def _pad_size(n: int) -> int:
    return max(16, 1 << max(0, n - 1).bit_length())


def graph_arrays(env: StreamingEnv, pad: int | None = None) -> dict[str, np.ndarray]:
    """Static arrays of the env's graph: node features ``x``, relations ``adj``, ``valid``.

    Examples
    --------
    >>> from hardware import load_hardware
    >>> from sim.streaming import distance_graph
    >>> a = graph_arrays(StreamingEnv(distance_graph(), load_hardware("se16"), ii=3))
    >>> a["x"].shape, a["adj"].shape, int(a["valid"].sum())
    ((16, 13), (3, 16, 16), 7)
    """
    p = env.problem
    n = p.n
    pad = pad or _pad_size(n)
    asap, tail = asap_and_tail(p)
    crit = max(max((a + t for a, t in zip(asap, tail)), default=1), 1)
    x = np.zeros((pad, NODE_FEATURES), np.float32)
    adj = np.zeros((3, pad, pad), np.float32)
    loops = set()
    for u, v, d in p.edges:
        if d == 0 and u != v:
            adj[0, v, u] = adj[1, u, v] = 1.0
        else:
            loops |= {u, v}
    for comp in p.components:
        for a in comp:
            for b in comp:
                if a != b:
                    adj[2, a, b] = 1.0
    starts = set(p.starts)
    for v in range(n):
        sibs = {w for u in env._parents[v] for w in p.children[u] if w != v}
        comp = p.component[v]
        op = env.graph.node(p.names[v]).op
        x[v, :9] = [adj[0, v].sum() / 3, adj[1, v].sum() / 4, asap[v] / crit, tail[v] / crit,
                    v in starts, len(sibs) / 8, (len(p.components[comp]) - 1) / 4,
                    bool(p.component_vars[comp]), v in loops]
        x[v, _OPS.get(str(op).lower(), 12)] = 1.0
    valid = np.zeros(pad, np.float32)
    valid[:n] = 1.0
    return {"x": x, "adj": adj, "valid": valid}


def step_arrays(env: StreamingEnv, pad: int) -> dict[str, np.ndarray]:
    """Dynamic arrays of the env's state: node state, device state, globals, mask, current."""
    p, spec = env.problem, env.spec
    L = p.op_latency
    node = np.zeros((pad, NODE_DYNAMIC), np.float32)
    for v in range(p.n):
        if env.tile[v] >= 0:
            node[v, :3] = [1.0, env.tile[v] / spec.tiles, (env.tau[v] + L) / TIME_SCALE]
    cur = env.current
    node[cur, 3] = 1.0
    dev = np.zeros((spec.tiles, spec.max_ii, DEVICE_FEATURES), np.float32)
    for (t, s), v in env.occupied.items():
        dev[t, s, :2] = [1.0, (env.tau[v] + L) / TIME_SCALE]
    dev[:, env.ii:, 6] = 1.0
    dev[:, :, 7] = (np.asarray(env.load, np.float32) / env.ii)[:, None]
    cands = env.candidates()
    earliest = min((c.tau for c in cands.values()), default=0)
    near = [env.tile[u] for u in env._parents[cur] + [w for w, _ in env._out[cur]]
            if env.tile[u] >= 0]
    centre = float(np.mean(near)) if near else None
    key = {a: (c.tau, sum(c.delays.values()), 0.0 if centre is None else abs(c.tile - centre), a)
           for a, c in cands.items()}
    for rank, a in enumerate(sorted(cands, key=key.get)):
        t, s = divmod(a, spec.max_ii)
        dev[t, s, 2:6] = [1.0, (key[a][0] - earliest) / 8.0, key[a][1] / 2.0, key[a][2] / 4.0]
        dev[t, s, 8] = min(rank, 16) / 8.0
    mask = np.zeros(spec.tiles * spec.max_ii, bool)
    mask[list(cands)] = True
    glob = np.array([env.ii / spec.max_ii, env.step_index / max(len(env.order), 1)], np.float32)
    return {"node": node, "dev": dev.reshape(-1, DEVICE_FEATURES), "glob": glob, "mask": mask,
            "cur": np.int32(cur)}


# ---------------------------------------------------------------------------------------------
# the network
# ---------------------------------------------------------------------------------------------
def _dense(rng: np.random.Generator, fan_in: int, fan_out: int) -> dict[str, np.ndarray]:
    scale = math.sqrt(2.0 / fan_in)
    return {"w": (rng.standard_normal((fan_in, fan_out)) * scale).astype(np.float32),
            "b": np.zeros(fan_out, np.float32)}


def init_params(config: RLConfig, actions: int) -> dict[str, dict[str, np.ndarray]]:
    """Fresh parameters for ``config`` (numpy, from ``config.seed``)."""
    rng = np.random.default_rng(config.seed)
    d, h = config.dim, config.hidden
    flat = actions * DEVICE_FEATURES + 2
    p = {"act1": _dense(rng, DEVICE_FEATURES, 16), "act2": _dense(rng, 16, 1),
         "out": _dense(rng, h, actions), "value": _dense(rng, h, 1)}
    p["out"]["w"] *= 0.1
    if config.arch == "mlp":
        p |= {"m1": _dense(rng, NODE_FEATURES + flat, h), "m2": _dense(rng, h, h),
              "m3": _dense(rng, h, h)}
        return p
    p |= {"embed": _dense(rng, NODE_FEATURES, d), "dyn": _dense(rng, NODE_DYNAMIC, d),
          "q": _dense(rng, d, d), "k": _dense(rng, d, d), "v": _dense(rng, d, d),
          "s1": _dense(rng, flat, h), "s2": _dense(rng, h, d),
          "join": _dense(rng, 3 * d, h)}
    for k in range(config.layers):
        p[f"gnn{k}"] = _dense(rng, 4 * d, d)
    return p


def _forward(params, g, s, config: RLConfig, jnp):
    """Logits (masked) and value of one state; ``g`` static arrays, ``s`` dynamic ones."""
    def dense(name, x):
        return x @ params[name]["w"] + params[name]["b"]

    relu = lambda x: jnp.maximum(x, 0.0)  # noqa: E731 - local shorthand
    flat = jnp.concatenate([s["dev"].reshape(-1), s["glob"]])
    if config.arch == "mlp":
        z = jnp.concatenate([g["x"][s["cur"]], flat])
        z = relu(dense("m3", relu(dense("m2", relu(dense("m1", z))))))
    else:
        h = relu(dense("embed", g["x"]))
        deg = jnp.maximum(g["adj"].sum(-1, keepdims=True), 1.0)
        for k in range(config.layers):
            agg = [(g["adj"][r] @ h) / deg[r] for r in range(3)]
            h = relu(dense(f"gnn{k}", jnp.concatenate([h] + agg, axis=-1)))
        h = h + relu(dense("dyn", s["node"]))
        q = dense("q", h[s["cur"]])
        keys, vals = dense("k", h), dense("v", h)
        score = keys @ q / math.sqrt(config.dim)
        score = jnp.where(g["valid"] > 0, score, -1e9)
        att = jnp.exp(score - score.max()) * g["valid"]
        ctx = (att / att.sum()) @ vals
        state = relu(dense("s2", relu(dense("s1", flat))))
        z = relu(dense("join", jnp.concatenate([h[s["cur"]], ctx, state])))
    per_action = dense("act2", relu(dense("act1", s["dev"])))[:, 0]
    logits = dense("out", z) + per_action
    logits = jnp.where(s["mask"], logits, -jnp.inf)
    return logits, dense("value", z)[0]


def _net_key(config: RLConfig) -> RLConfig:
    """The configuration with the fields the compiled functions do not read reset."""
    return replace(config, seed=0, order="topological")


@functools.lru_cache(maxsize=8)
def _jitted_forward(config: RLConfig):
    jax, jnp, _ = require_jax()
    return jax.jit(lambda params, g, s: _forward(params, g, s, config, jnp))


@functools.lru_cache(maxsize=8)
def _jitted_grad(config: RLConfig):
    jax, jnp, _ = require_jax()
    return jax.jit(jax.grad(_loss_fn(config, jax, jnp)))


@dataclass
class RLPolicy:
    """A trained (or fresh) actor-critic; ``params`` are numpy arrays."""

    params: dict
    config: RLConfig
    actions: int = 96
    _fn: object = field(default=None, repr=False, compare=False)

    @classmethod
    def initial(cls, config: RLConfig | None = None, actions: int = 96) -> "RLPolicy":
        config = config or RLConfig()
        return cls(init_params(config, actions), config, actions)

    def forward_fn(self):
        """The jitted ``(params, g, s) -> (logits, value)`` (one per configuration)."""
        if self._fn is None:
            self._fn = _jitted_forward(_net_key(self.config))
        return self._fn

    def logits(self, g: dict, s: dict) -> tuple[np.ndarray, float]:
        """Masked logits (illegal actions ``-inf``) and the critic's value of one state."""
        logits, value = self.forward_fn()(self.params, g, s)
        return np.asarray(logits), float(value)

    def save(self, path: str | os.PathLike) -> None:
        """One ``.npz``: every parameter and the configuration as JSON."""
        arrays = {f"{k}/{n}": np.asarray(v) for k, layer in self.params.items()
                  for n, v in layer.items()}
        arrays["config"] = np.frombuffer(json.dumps(
            asdict(self.config) | {"actions": self.actions}).encode(), np.uint8)
        buffer = io.BytesIO()
        np.savez_compressed(buffer, **arrays)
        write_bytes_atomic(path, buffer.getvalue())

    @classmethod
    def load(cls, path: str | os.PathLike) -> "RLPolicy":
        """A policy written by :meth:`save`; ValueError names the file when it is not one."""
        try:
            with np.load(path) as data:
                meta = json.loads(bytes(data["config"]).decode())
                params: dict = {}
                for key in data.files:
                    if key != "config":
                        layer, name = key.split("/")
                        params.setdefault(layer, {})[name] = data[key].astype(np.float32)
        except (OSError, KeyError, ValueError) as exc:
            raise ValueError(f"{path}: not an RL policy file ({exc}); write one with "
                             "python -m benchmarks.suites.rl train") from None
        actions = meta.pop("actions")
        return cls(params, RLConfig(**meta), actions)


# ---------------------------------------------------------------------------------------------
# episodes
# ---------------------------------------------------------------------------------------------
def _order(graph: Graph, config: RLConfig, seed: int) -> list[str] | None:
    if config.order == "topological":
        return None
    names = sorted(graph.node_ids)
    rng = np.random.default_rng(seed)
    return [names[i] for i in rng.permutation(len(names))]


class UnorderedEnv(StreamingEnv):
    """The env for a node order that is not topological (Fig. 8).

    The env issues a node at the earliest cycle its *placed* neighbours allow; a consumer
    placed before its operands would then issue so early that no operand fits before it.
    Here a node with an unplaced operand issues no earlier than its earliest cycle if every
    operand chain were placed two tiles away (the slowest link), so the operands placed
    later always have a legal cycle. Nodes whose operands are placed are timed as in the env.
    """

    def __init__(self, graph: Graph, spec: StreamingEngineSpec, ii: int,
                 order: list[str] | None = None, lam: float = 1000.0):
        problem = problem_from_graph(graph, spec)
        index = {n: i for i, n in enumerate(problem.names)}
        step = problem.op_latency + max(problem.latency.values())
        self._early = [0] * problem.n
        preds: list[list[int]] = [[] for _ in range(problem.n)]
        for u, v, d in problem.edges:
            if d == 0 and u != v:
                preds[v].append(u)
        for name in graph.topological_order():
            v = index[name]
            self._early[v] = max((self._early[u] + step for u in preds[v]), default=0)
        super().__init__(graph, spec, ii, order=order, lam=lam)

    def _timed(self, v: int, t: int, s: int):
        if all(self.tau[u] >= 0 for u, d in self._in[v] if d == 0 and u != v):
            return super()._timed(v, t, s)
        keep = self._release[v]
        self._release[v] = max(keep, self._early[v])
        try:
            return super()._timed(v, t, s)
        finally:
            self._release[v] = keep


def _make_env(graph: Graph, spec: StreamingEngineSpec, ii: int, config: RLConfig,
              order_seed: int, lam: float) -> StreamingEnv:
    if config.order == "unordered":
        return UnorderedEnv(graph, spec, ii, order=_order(graph, config, order_seed), lam=lam)
    return StreamingEnv(graph, spec, ii, lam=lam)


def run_episode(policy: RLPolicy, env: StreamingEnv, g: dict, rng: np.random.Generator | None,
                record: bool = False) -> tuple[StreamingSchedule | None, float, list[dict]]:
    """One episode: sample from the policy (``rng``) or decode greedily (``rng=None``).

    Returns the schedule (None on a dead end), the env's return and, when ``record``, one dict
    per step (dynamic arrays, action, log-probability, value, reward).
    """
    env.reset(seed=0)
    pad = len(g["valid"])
    total, steps = 0.0, []
    while not env.done:
        if not env.candidates():
            _, reward, *_ = env.step(0)
            total += reward
            if steps:
                steps[-1]["reward"] += reward
            break
        s = step_arrays(env, pad)
        logits, value = policy.logits(g, s)
        z = logits - logits.max()
        prob = np.exp(z)
        prob /= prob.sum()
        action = int(np.argmax(logits)) if rng is None else int(rng.choice(len(prob), p=prob))
        _, reward, *_ = env.step(action)
        total += reward
        if record:
            steps.append(s | {"action": action, "logp": float(np.log(prob[action] + 1e-30)),
                              "value": value, "reward": reward})
    return (env.schedule() if env.complete else None), total, steps


def rl_schedule(graph: Graph, spec: StreamingEngineSpec, policy: RLPolicy, samples: int = 8,
                seed: int = 0) -> StreamingSchedule:
    """Map ``graph`` with ``policy``: per II from the lower bound up, greedy decoding plus
    ``samples - 1`` sampled episodes; the first II with a complete episode wins (its fewest
    cycles). Raises :class:`StreamingInfeasible` when every II dead-ends, and
    :class:`RLUnavailable` without JAX (so no doctest here: the core install has none; see
    ``tests/formulations/test_streaming_rl.py``).
    """
    started = time.perf_counter()
    problem = problem_from_graph(graph, spec)
    reasons = precheck(problem)
    if reasons:
        raise StreamingInfeasible(reasons)
    rng = np.random.default_rng(seed)
    for ii in range(lower_bounds(problem)["ii"], spec.max_ii + 1):
        env = _make_env(graph, spec, ii, policy.config, seed, LAMBDA_INFER)
        g = graph_arrays(env)
        best = None
        for k in range(max(1, samples)):
            sched, _, _ = run_episode(policy, env, g, None if k == 0 else rng)
            if sched is not None and (best is None or sched.cycles < best.cycles):
                best = sched
        if best is not None:
            best.method, best.seconds = "rl", time.perf_counter() - started
            return best
    raise StreamingInfeasible([f"rl: every episode dead-ended up to II {spec.max_ii}"])


#: Dead-end penalty at inference (only the return's bookkeeping; the env's default).
LAMBDA_INFER = 1000.0


# ---------------------------------------------------------------------------------------------
# PPO
# ---------------------------------------------------------------------------------------------
@dataclass
class TrainResult:
    """The trained policy, its history and the best mapping it met per graph."""

    policy: RLPolicy
    history: list[dict] = field(default_factory=list)   # per update
    best: dict[str, StreamingSchedule] = field(default_factory=dict)
    train_ii: dict[str, list[int]] = field(default_factory=dict)
    episodes: int = 0
    seconds: float = 0.0


def training_iis(graph: Graph, spec: StreamingEngineSpec) -> list[int]:
    """The II a graph is trained at (a list, for callers that cycle through several): the
    lowest II the greedy or best-of-20 random heuristics reach, else the lower bound."""
    found = [s.ii for s in (greedy_or_none(graph, spec),) if s is not None]
    try:
        found.append(random_schedule(graph, spec, seed=0, tries=20).ii)
    except StreamingInfeasible:
        pass
    lb = lower_bounds(problem_from_graph(graph, spec))["ii"]
    return [min(found, default=lb)]


def _advantages(steps: list[dict], config: RLConfig) -> None:
    """GAE with gamma 1 over one episode, in place (``adv``, ``ret``)."""
    gae, next_value = 0.0, 0.0
    for st in reversed(steps):
        r = st["reward"] / config.reward_scale
        delta = r + next_value - st["value"]
        gae = delta + config.gae * gae
        st["adv"], st["ret"] = gae, gae + st["value"]
        next_value = st["value"]


def _loss_fn(config: RLConfig, jax, jnp):
    def one(params, g, s):
        return _forward(params, g, s, config, jnp)

    batched = jax.vmap(one, in_axes=(None, 0, 0))

    def loss(params, g, s, action, old_logp, adv, ret, weight):
        logits, value = batched(params, g, s)
        logp_all = jax.nn.log_softmax(logits)
        logp = jnp.take_along_axis(logp_all, action[:, None], axis=1)[:, 0]
        ratio = jnp.exp(logp - old_logp)
        surrogate = jnp.minimum(ratio * adv, jnp.clip(ratio, 1 - config.clip,
                                                      1 + config.clip) * adv)
        safe = jnp.where(s["mask"], logp_all, 0.0)
        entropy = -(jnp.exp(safe) * safe * s["mask"]).sum(-1)
        total = weight.sum()
        return (-(surrogate * weight).sum() + config.value_coef * ((value - ret) ** 2
                * weight).sum() - config.entropy * (entropy * weight).sum()) / total
    return loss


def _batch(steps: list[tuple[dict, dict]], size: int) -> tuple[dict, ...]:
    """Stack (static, step) pairs padded to ``size`` rows (weight 0 on padding)."""
    rows = steps + [steps[-1]] * (size - len(steps))
    g = {k: np.stack([r[0][k] for r in rows]) for k in ("x", "adj", "valid")}
    s = {k: np.stack([r[1][k] for r in rows]) for k in ("node", "dev", "glob", "mask", "cur")}
    col = lambda key, dt: np.array([r[1][key] for r in rows], dt)  # noqa: E731
    adv = col("adv", np.float32)
    real = adv[:len(steps)]
    adv = (adv - real.mean()) / (real.std() + 1e-6)
    weight = np.zeros(size, np.float32)
    weight[:len(steps)] = 1.0
    return (g, s, col("action", np.int32), col("logp", np.float32), adv,
            col("ret", np.float32), weight)


def train(graphs: list[Graph], spec: StreamingEngineSpec, config: RLConfig | None = None,
          episodes: int = 200, progress=None, policy: RLPolicy | None = None) -> TrainResult:
    """PPO on ``graphs`` for ``episodes`` episodes: round robin over the graphs, each graph's
    episodes cycling through its :func:`training_iis`.

    ``progress(update_record)`` is called after each update. The result keeps the best
    complete mapping sampled per graph (the paper's "best mapping given by the RL model").
    """
    jax, jnp, optax = require_jax()
    config = config or RLConfig()
    started = time.perf_counter()
    policy = policy or RLPolicy.initial(config, spec.tiles * spec.max_ii)
    setups = []
    pad = max(_pad_size(len(g.nodes)) for g in graphs)
    for i, graph in enumerate(graphs):
        envs = [_make_env(graph, spec, ii, config, config.seed + i, config.lam)
                for ii in training_iis(graph, spec)]
        setups.append((graph.name, envs, graph_arrays(envs[0], pad)))
    result = TrainResult(policy, train_ii={n: [e.ii for e in envs] for n, envs, _ in setups})
    optimizer = optax.chain(optax.clip_by_global_norm(1.0), optax.adam(config.learning_rate))
    params = jax.tree_util.tree_map(jnp.asarray, policy.params)
    opt_state = optimizer.init(params)
    grad = _jitted_grad(_net_key(config))
    rng = np.random.default_rng(config.seed)
    rows = 1 << (config.batch_episodes * max(len(g.nodes) for g in graphs) - 1).bit_length()
    done = 0
    while done < episodes:
        batch, returns = [], []
        for _ in range(min(config.batch_episodes, episodes - done)):
            name, envs, g = setups[done % len(setups)]
            env = envs[(done // len(setups)) % len(envs)]
            sched, ret, steps = run_episode(policy, env, g, rng, record=True)
            done += 1
            returns.append(ret)
            _keep_best(result, name, sched)
            _advantages(steps, config)
            batch += [(g, st) for st in steps]
        if batch:
            arrays = _batch(batch[:rows], rows)
            for _ in range(config.ppo_epochs):
                grads = grad(params, *arrays)
                updates, opt_state = optimizer.update(grads, opt_state, params)
                params = optax.apply_updates(params, updates)
            policy.params = jax.tree_util.tree_map(np.asarray, params)
        record = {"episodes": done, "mean_return": float(np.mean(returns)),
                  "best": {n: s.cycles for n, s in result.best.items()},
                  "seconds": round(time.perf_counter() - started, 2)}
        result.history.append(record)
        if progress is not None:
            progress(record)
    result.episodes, result.seconds = done, time.perf_counter() - started
    return result


def _keep_best(result: TrainResult, name: str, sched: StreamingSchedule | None) -> None:
    if sched is None:
        return
    old = result.best.get(name)
    if old is None or (sched.ii, sched.cycles) < (old.ii, old.cycles):
        sched.method = "rl"
        result.best[name] = sched
