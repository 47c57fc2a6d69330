"""Suite ``rl``: the learning mapper of source 004 (PPO + GNN + GGA) against exact and heuristics.

Rows (all on se16, every answer checked by :mod:`sim.streaming`, column ``sim``):

* ``fig6`` -- per graph (vector add, the distance function, the 4-point IFFT, random DAGs of
  8..40 nodes): a GGA policy and the 3-MLP baseline are each trained with PPO on that graph
  alone for ``episodes`` episodes (the paper's protocol: "best mapping given by the RL model"
  over training); the best mapping sampled in training is reported, with the best-so-far
  cycles at a few episode counts (``curve``: the Fig. 7 sample-efficiency table) and the
  greedy decoding of the trained policy with its inference time. Side by side: CP-SAT's
  answer (``schedule_kernel``, optimal when the status says so), greedy, best of 20 random
  episodes, the evolutionary search; the gap is ``cycles / cp cycles - 1`` at the same II.
* ``fig8`` -- a 15-node random DAG on 16 tiles (the paper's setting): GGA with the env's
  topological order vs a random ("unordered") order, same budget.
* ``general`` -- one GGA policy trained on random DAGs of <= 20 nodes (training seeds 0..),
  evaluated without further training on unseen DAGs of 20..40 nodes (seeds from 100): the
  fraction mapped at all, the fraction at CP-SAT's II, and the mean cycle gap where both agree
  on the II.

Training budgets are small (this runs on a shared 2-core machine, niced): the numbers say what
a few hundred PPO episodes reach, not what the paper's 50,000 epochs would.

Command line::

    python -m benchmarks.suites.rl train --graphs random --max-nodes 20 --episodes 400 \\
        --seed 0 --out policy.npz
"""

from __future__ import annotations

import argparse
import sys
import time
from typing import Any

import numpy as np

from benchmarks.registry import Column, Entry, Suite
from benchmarks.se_generators import ifft_graph, se_random_dag
from formulations.solver import Budget, SolveSettings
from formulations.streaming.env import (evolutionary_schedule, greedy_schedule,
                                        random_schedule)
from formulations.streaming.kernel import schedule_kernel
from formulations.streaming.problem import StreamingInfeasible
from formulations.streaming.rl import (RLConfig, RLPolicy, RLUnavailable, rl_schedule,
                                       train)
from hardware import load_hardware
from model.graph import Edge, Graph, Node
from sim.streaming import check_streaming, distance_graph

__all__ = ["SUITE", "vector_add_graph", "compare_one", "order_one", "generalise", "main",
           "training_graphs"]

FIG6_GRAPHS = (("vecadd", 0), ("distance", 0), ("ifft", 4), ("random", 8), ("random", 12),
               ("random", 16), ("random", 20), ("random", 30), ("random", 40))
CURVE_AT = (25, 50, 100, 200, 400, 800)
#: Seeds of evaluation DAGs (training DAGs use seeds below this).
EVAL_SEED = 100

COLUMNS = (
    Column("experiment", "exp."), Column("graph", "graph"), Column("nodes", "nodes"),
    Column("cp", "CP-SAT II/cycles"), Column("cp_status", "CP-SAT status"),
    Column("greedy", "greedy"), Column("random", "random (20)"), Column("evo", "evolutionary"),
    Column("gga", "GGA-PPO best"), Column("mlp", "MLP-PPO best"),
    Column("gga_gap", "GGA gap", "{:+.1%}"), Column("mlp_gap", "MLP gap", "{:+.1%}"),
    Column("gga_decode", "GGA greedy decode"), Column("mlp_decode", "MLP greedy decode"),
    Column("episodes", "episodes"), Column("gga_train_s", "GGA train s", "{:.0f}"),
    Column("mlp_train_s", "MLP train s", "{:.0f}"),
    Column("gga_jit_s", "GGA 1st update s", "{:.0f}"),
    Column("mlp_jit_s", "MLP 1st update s", "{:.0f}"),
    Column("infer_s", "GGA infer s", "{:.2f}"),
    Column("gga_curve", "GGA best cycles @ episodes"),
    Column("mlp_curve", "MLP best cycles @ episodes"),
    Column("mapped", "mapped"), Column("sim", "sim"), Column("note", "note"),
)


def vector_add_graph() -> Graph:
    """``c[i] = a[i] + b[i]``: two loads (the SDF starts), the add, the store."""
    nodes = [Node("ld_a", "load"), Node("ld_b", "load"), Node("add", "add"),
             Node("st_c", "store")]
    edges = [Edge("ld_a", "add"), Edge("ld_b", "add"), Edge("add", "st_c")]
    return Graph("vecadd", nodes, edges, {"generator": "vector_add_graph"})


def _graph(family: str, arg: int, seed: int = 0) -> Graph:
    if family == "vecadd":
        return vector_add_graph()
    if family == "distance":
        return distance_graph()
    if family == "ifft":
        return ifft_graph(arg)
    return se_random_dag(arg, seed=seed)


def _fmt(sched) -> str:
    return "—" if sched is None else f"{sched.ii}/{sched.cycles}"


def _gap(sched, cp) -> float | None:
    if sched is None or cp is None or sched.ii != cp.ii:
        return None
    return sched.cycles / cp.cycles - 1.0


def _check(graph: Graph, se, sched) -> bool:
    if sched is None:
        return True
    placement = {n: {"tile": sched.tile[n], "slot": sched.slot[n], "cycle": sched.cycle[n]}
                 for n in sched.tile}
    return check_streaming(graph, se, placement, sched.ii, sched.delays).ok


def _baselines(graph: Graph, se, cp_limit: float) -> dict[str, Any]:
    out: dict[str, Any] = {}
    runs = (("greedy", lambda: greedy_schedule(graph, se)),
            ("random", lambda: random_schedule(graph, se, seed=0, tries=20)),
            ("evo", lambda: evolutionary_schedule(graph, se, seed=0, budget=Budget(5.0))),
            ("cp", lambda: _one_sdf(schedule_kernel(graph, se, SolveSettings(
                time_limit=cp_limit, seed=0)))))
    for name, run in runs:
        try:
            out[name] = run()
        except StreamingInfeasible:
            out[name] = None
    return out


def _one_sdf(result):
    return result.answers[0].schedule if result.split is None else None


def _curve(history: list[dict], name: str) -> str:
    marks = []
    for at in CURVE_AT:
        rec = next((h for h in history if h["episodes"] >= at), None)
        if rec is not None:
            marks.append(f"{at}:{rec['best'].get(name, '—')}")
    return " ".join(marks)


def _train_one(graph: Graph, se, arch: str, episodes: int, seed: int,
               order: str = "topological") -> dict[str, Any]:
    started = time.perf_counter()
    result = train([graph], se, RLConfig(arch=arch, order=order, seed=seed), episodes)
    seconds = time.perf_counter() - started
    t0 = time.perf_counter()
    try:
        decode = rl_schedule(graph, se, result.policy, samples=1, seed=seed)
    except StreamingInfeasible:
        decode = None
    return {"best": result.best.get(graph.name), "decode": decode, "train_s": seconds,
            "jit_s": result.history[0]["seconds"] if result.history else None,
            "infer_s": time.perf_counter() - t0, "history": result.history,
            "curve": _curve(result.history, graph.name)}


def compare_one(family: str, arg: int, seed: int = 0, episodes: int = 300,
                cp_limit: float = 10.0) -> dict[str, Any]:
    """One Fig. 6 row: CP-SAT, heuristics, GGA-PPO and MLP-PPO trained on this graph."""
    se = load_hardware("se16")
    graph = _graph(family, arg, seed)
    base = _baselines(graph, se, cp_limit)
    cp = base["cp"]
    row: dict[str, Any] = {"experiment": "fig6", "graph": graph.name, "nodes": len(graph.nodes),
                           "cp": _fmt(cp), "cp_status": None if cp is None else cp.status,
                           "episodes": episodes}
    row |= {k: _fmt(base[k]) for k in ("greedy", "random", "evo")}
    checked = [_check(graph, se, s) for s in base.values()]
    for arch in ("gga", "mlp"):
        out = _train_one(graph, se, arch, episodes, seed)
        row |= {arch: _fmt(out["best"]), f"{arch}_gap": _gap(out["best"], cp),
                f"{arch}_decode": _fmt(out["decode"]), f"{arch}_train_s": out["train_s"],
                f"{arch}_jit_s": out["jit_s"],
                f"{arch}_curve": out["curve"]}
        if arch == "gga":
            row["infer_s"] = out["infer_s"]
        checked += [_check(graph, se, out["best"]), _check(graph, se, out["decode"])]
    row["sim"] = "ok" if all(checked) else "REJECTED"
    return row


def order_one(nodes: int = 15, seed: int = 0, episodes: int = 300) -> dict[str, Any]:
    """The Fig. 8 row: GGA with topological vs unordered node order on one random DAG."""
    se = load_hardware("se16")
    graph = se_random_dag(nodes, seed=seed)
    base = _baselines(graph, se, 10.0)
    cp = base["cp"]
    row: dict[str, Any] = {"experiment": "fig8", "graph": graph.name, "nodes": nodes,
                           "cp": _fmt(cp), "cp_status": None if cp is None else cp.status,
                           "episodes": episodes}
    row |= {k: _fmt(base[k]) for k in ("greedy", "random", "evo")}
    topo = _train_one(graph, se, "gga", episodes, seed)
    free = _train_one(graph, se, "gga", episodes, seed, order="unordered")
    row |= {"gga": _fmt(topo["best"]), "gga_gap": _gap(topo["best"], cp),
            "mlp": _fmt(free["best"]), "mlp_gap": _gap(free["best"], cp),
            "gga_decode": _fmt(topo["decode"]), "mlp_decode": _fmt(free["decode"]),
            "gga_train_s": topo["train_s"], "mlp_train_s": free["train_s"],
            "gga_jit_s": topo["jit_s"], "mlp_jit_s": free["jit_s"],
            "gga_curve": topo["curve"], "mlp_curve": free["curve"],
            "note": "columns GGA = topological order, MLP = GGA with unordered (random) order; "
                    "mean return of the last 5 updates: "
                    f"{_tail_return(topo['history']):.1f} vs {_tail_return(free['history']):.1f}"}
    ok = all(_check(graph, se, s) for s in [*base.values(), topo["best"], free["best"]])
    row["sim"] = "ok" if ok else "REJECTED"
    return row


def _tail_return(history: list[dict]) -> float:
    tail = history[-5:]
    return float(np.mean([h["mean_return"] for h in tail])) if tail else float("nan")


def training_graphs(max_nodes: int, count: int = 24, seed: int = 0) -> list[Graph]:
    """Random DAGs of 8..``max_nodes`` nodes with seeds below :data:`EVAL_SEED`."""
    rng = np.random.default_rng(seed)
    sizes = rng.integers(8, max_nodes + 1, size=count)
    return [se_random_dag(int(n), seed=int(i % EVAL_SEED)) for i, n in enumerate(sizes)]


def generalise(max_nodes: int = 20, episodes: int = 1500, seed: int = 0,
               sizes: tuple[int, ...] = (20, 25, 30, 35, 40), per_size: int = 2,
               cp_limit: float = 10.0) -> dict[str, Any]:
    """The generalisation row: one GGA policy trained on DAGs <= ``max_nodes``, evaluated on
    unseen larger DAGs (greedy decoding + 7 samples per II), beside CP-SAT and the
    heuristics on the same DAGs (cells: mapped, at CP-SAT's II, mean gap there)."""
    se = load_hardware("se16")
    started = time.perf_counter()
    result = train(training_graphs(max_nodes, seed=seed), se, RLConfig(seed=seed), episodes)
    train_s = time.perf_counter() - started
    found: dict[str, list] = {m: [] for m in ("cp", "greedy", "random", "evo", "gga")}
    infer, ok = [], True
    for n in sizes:
        for k in range(per_size):
            graph = se_random_dag(n, seed=EVAL_SEED + k)
            base = _baselines(graph, se, cp_limit)
            t0 = time.perf_counter()
            try:
                base["gga"] = rl_schedule(graph, se, result.policy, samples=8, seed=seed)
            except StreamingInfeasible:
                base["gga"] = None
            infer.append(time.perf_counter() - t0)
            ok = ok and all(_check(graph, se, sched) for sched in base.values())
            for m, sched in base.items():
                found[m].append((sched, base["cp"]))
    total = len(found["gga"])
    row = {m: _summary(found[m]) for m in ("cp", "greedy", "random", "evo", "gga")}
    gaps = [_gap(s, cp) for s, cp in found["gga"] if _gap(s, cp) is not None]
    return row | {
        "experiment": "general", "graph": f"{total} unseen DAGs of {sizes[0]}-{sizes[-1]}",
        "nodes": f"{sizes[0]}-{sizes[-1]}", "episodes": episodes, "gga_train_s": train_s,
        "infer_s": float(np.mean(infer)), "mapped": f"{sum(s is not None for s, _ in found['gga'])}"
        f"/{total}", "gga_gap": float(np.mean(gaps)) if gaps else None,
        "sim": "ok" if ok else "REJECTED",
        "note": f"trained on 24 random DAGs of 8-{max_nodes} nodes; cells: mapped / at "
                "CP-SAT's II / mean cycle gap there"}


def _summary(pairs: list) -> str:
    """``mapped/total, k at CP II, gap`` of one method over the evaluation DAGs."""
    mapped = sum(s is not None for s, _ in pairs)
    gaps = [_gap(s, cp) for s, cp in pairs if _gap(s, cp) is not None]
    gap = f", {np.mean(gaps):+.1%}" if gaps else ""
    return f"{mapped}/{len(pairs)}, {len(gaps)} at CP II{gap}"


def _baselines_cp(graph: Graph, se, cp_limit: float):
    try:
        return _one_sdf(schedule_kernel(graph, se, SolveSettings(time_limit=cp_limit, seed=0)))
    except StreamingInfeasible:
        return None


def _entries(quick: bool) -> list[Entry]:
    episodes = 40 if quick else 500
    graphs = FIG6_GRAPHS[:3] if quick else FIG6_GRAPHS
    entries = [Entry(f"fig6 {f} {a}", "benchmarks.suites.rl:compare_one",
                     {"family": f, "arg": a, "episodes": episodes}, timeout=1800,
                     fixed={"experiment": "fig6"}) for f, a in graphs]
    entries.append(Entry("fig8", "benchmarks.suites.rl:order_one", {"episodes": episodes},
                         timeout=1800, fixed={"experiment": "fig8"}))
    entries.append(Entry("general", "benchmarks.suites.rl:generalise",
                         {"episodes": 80 if quick else 1500,
                          "sizes": [20, 30] if quick else [20, 25, 30, 35, 40],
                          "per_size": 1 if quick else 2}, timeout=3600,
                         fixed={"experiment": "general"}))
    return entries


SUITE = Suite(
    name="rl", title="PPO with graph attention (source 004) on the Streaming Engine se16",
    columns=COLUMNS, entries=_entries,
    notes=("Cells are II/cycles. fig6: GGA-PPO and the 3-MLP PPO baseline each trained with "
           "PPO on that graph alone (500 episodes, 8 per update, 4 PPO epochs, seed 0, one "
           "niced process on a shared 2-core machine); 'best' is the best mapping sampled in "
           "training (the paper's Fig. 6 metric), 'greedy decode' the trained policy's argmax "
           "run, II swept from the lower bound. The curve columns are Fig. 7 (best cycles "
           "so far at N episodes). Gap = cycles / CP-SAT cycles - 1 when both use the same II "
           "(CP-SAT: 10 s per II, 1 worker; status optimal = II and cycles proven). fig8: "
           "topological vs random node order (GGA). general: trained on 24 DAGs of 8-20 "
           "nodes (1500 episodes, seed 0: the same run as the train command that made the "
           "shipped policy), evaluated on unseen DAGs (seeds >= 100) with greedy "
           "decoding + 7 samples per II. Training seconds include JAX compilation, which "
           "is most of the first update's seconds (the 1st-update columns; the machine "
           "was shared with 3 other agents). "
           "Each graph is trained at the lowest II greedy or best-of-20 random reach; "
           "inference sweeps the II from the lower bound."))


# ---------------------------------------------------------------------------------------------
# command line: train a policy
# ---------------------------------------------------------------------------------------------
def main(argv: list[str] | None = None) -> int:
    """``train``: fit a policy and save it as ``.npz``."""
    parser = argparse.ArgumentParser(prog="python -m benchmarks.suites.rl")
    sub = parser.add_subparsers(dest="command", required=True)
    t = sub.add_parser("train", help="train a PPO policy and save it")
    t.add_argument("--graphs", choices=("random", "paper"), default="random")
    t.add_argument("--max-nodes", type=int, default=20)
    t.add_argument("--count", type=int, default=24, help="random training DAGs")
    t.add_argument("--episodes", type=int, default=400)
    t.add_argument("--seed", type=int, default=0)
    t.add_argument("--arch", choices=("gga", "mlp"), default="gga")
    t.add_argument("--order", choices=("topological", "unordered"), default="topological")
    t.add_argument("--out", required=True)
    args = parser.parse_args(argv)
    if args.max_nodes < 8 or args.episodes < 1:
        print("--max-nodes must be >= 8 and --episodes >= 1", file=sys.stderr)
        return 2
    graphs = (training_graphs(args.max_nodes, args.count, args.seed) if args.graphs == "random"
              else [vector_add_graph(), distance_graph(), ifft_graph(4)])
    config = RLConfig(arch=args.arch, order=args.order, seed=args.seed)
    try:
        result = train(graphs, load_hardware("se16"), config, args.episodes,
                       progress=lambda r: print(f"episodes {r['episodes']}: mean return "
                                                f"{r['mean_return']:.1f}", file=sys.stderr))
    except RLUnavailable as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    result.policy.save(args.out)
    print(f"trained {result.episodes} episodes on {len(graphs)} graphs in "
          f"{result.seconds:.0f} s; policy in {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
