"""CGRA kernels at a planned budget, side by side with another code tree (issue 35).

The suite ``cgra`` (:mod:`benchmarks.suites.cgra`) caps every run at its time limit on the
wall clock; on a shared, loaded machine that cap stops searches whose planned work is not
spent, and the answers then depend on the load. Here each kernel gets ``--limit`` planned
seconds (:class:`~formulations.solver.budget.Budget`) and a wall-clock deadline ``--wall`` times
later, so the answer is the one the planned work gives (``cut`` counts the searches the
deadline still stopped). Each run is a fresh process importing the code tree ``--tree``
(e.g. an export of the previous commit), so two trees compare on the same kernels.

Run: ``python -m benchmarks.cgra_planned --tree . --target cgra4x4-torus --limit 15
--kernels adpcm_decoder,needwun > rows.jsonl`` (one JSON row per kernel: bounds, II, the
method of the answer, seconds, the seconds at which the final II was reached, simulator
verdict). ``--table old.jsonl new.jsonl`` prints the markdown comparison.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

from benchmarks.suites.cgra import kernel_files, kernel_name

ONE = r'''
import json, sys, time
from formulations.cgra import map_kernel
from formulations.solver import SolveSettings
from hardware import load_hardware
from model.importers import load_graph
from sim.cgra import check_cgra
path, target, limit, wall = sys.argv[1], sys.argv[2], float(sys.argv[3]), float(sys.argv[4])
graph, spec = load_graph(path), load_hardware(target)
t0 = time.monotonic()
lines = []
say = lambda line: lines.append((time.monotonic() - t0, line))
r = map_kernel(graph, spec, SolveSettings(time_limit=limit, seed=0, deadline=t0 + wall * limit),
               progress=say)
s = r.schedule
pes = r.problem.pes
placement = {n: {"pe": list(pes[s.pe[n]]), "cycle": s.cycle[n]} for n in s.pe}
routes = [{"src": u, "dst": v, "distance": d,
           "steps": [{"pe": list(pes[p]), "cycle": c} for p, c in path_]}
          for (u, v, d), path_ in s.routes.items()]
ok = check_cgra(graph, spec, placement, s.ii, routes).ok
first = next((t for t, line in lines if f"II {s.ii}" in line and "asking" not in line),
             time.monotonic() - t0)
print(json.dumps({"nodes": r.problem.n, "bound": r.bounds["ii"], "ii": s.ii,
                  "route_ii": r.bounds.get("route_ii", r.bounds["ii"]),
                  "proven": bool(s.proven_ii), "ii_bound": s.ii_bound, "method": s.method,
                  "seconds": time.monotonic() - t0, "final_ii_at": first,
                  "cut": r.cut_short, "work": r.work, "sim": "ok" if ok else "REJECTED",
                  "mobility": any("mobility windows: II" in l and "needs" not in l
                                  for _, l in lines),
                  "unanswered": sum(l.endswith("not found") for _, l in lines),
                  "trail": [l for _, l in lines if "mobility windows" in l or "descent" in l
                            or l.startswith("list scheduling")]}))
'''


def run(tree: str, path: str, target: str, limit: float, wall: float) -> dict:
    env = dict(os.environ, PYTHONPATH=os.path.abspath(tree))
    done = subprocess.run([sys.executable, "-c", ONE, path, target, str(limit), str(wall)],
                          capture_output=True, text=True, env=env, cwd=os.path.abspath(tree),
                          timeout=wall * limit + 120)
    out = done.stdout.strip().splitlines()
    row = json.loads(out[-1]) if done.returncode == 0 and out else \
        {"error": (done.stderr.strip().splitlines() or ["?"])[-1][:120]}
    return row


def table(old_rows: str, new_rows: str) -> str:
    """The markdown comparison: per kernel the static bound (``bound``: ResMII, MemII, RecMII,
    RegMII), the proven bound of each run (``ii_bound``: every smaller II proven impossible,
    by the recurrences with their hops or the sweep's relaxation), the IIs; then the counts
    within bound + 1 against both bounds."""
    old = {(r["kernel"], r["target"]): r for r in map(json.loads, open(old_rows))}
    new = [json.loads(line) for line in open(new_rows)]
    out = ["| kernel | target | nodes | II bound | proven bound old / new | old II | new II | "
           "new II / bound | new method | new s | new s to final II | cut | sim |",
           "|" + "---|" * 13]
    for r in new:
        o = old.get((r["kernel"], r["target"]), {})
        ratio = f"{r['ii'] / r['bound']:.2f}" if "ii" in r else "—"
        out.append(f"| {r['kernel']} | {r['target']} | {r.get('nodes', '')} | "
                   f"{r.get('bound', '')} | {o.get('ii_bound', '—')} / "
                   f"{r.get('ii_bound', '—')} | "
                   f"{o.get('ii', '—')} | {r.get('ii', r.get('error'))} | "
                   f"{ratio} | {r.get('method', '')} | {r.get('seconds', 0):.1f} | "
                   f"{r.get('final_ii_at', 0):.1f} | {r.get('cut', '')} | {r.get('sim', '')} |")
    pairs = [(r, old.get((r["kernel"], r["target"]), r)) for r in new if "ii" in r]
    pairs = [(r, o) for r, o in pairs if "ii" in o]
    if pairs:
        out += ["", f"{len(pairs)} kernels: new II lower on "
                f"{sum(r['ii'] < o['ii'] for r, o in pairs)}, higher on "
                f"{sum(r['ii'] > o['ii'] for r, o in pairs)}; mean II / bound new "
                f"{statistics.mean(r['ii'] / r['bound'] for r, _ in pairs):.3f}, old "
                f"{statistics.mean(o['ii'] / o['bound'] for _, o in pairs):.3f}; "
                f"{_counts('new', [r for r, _ in pairs])}; {_counts('old', [o for _, o in pairs])}"
                f"; median s to final II new "
                f"{statistics.median(r['final_ii_at'] for r, _ in pairs):.1f}, old "
                f"{statistics.median(o['final_ii_at'] for _, o in pairs):.1f}"]
    return "\n".join(out)


def _counts(label: str, rows: list[dict]) -> str:
    """Rows within bound + 1 against the static bound and against each row's proven bound,
    above 1.5 x the static bound, proven minimal."""
    return (f"{label}: II <= bound + 1 {sum(r['ii'] <= r['bound'] + 1 for r in rows)}, "
            f"II <= proven bound + 1 {sum(r['ii'] <= r['ii_bound'] + 1 for r in rows)}, "
            f"II > 1.5 x bound {sum(r['ii'] > 1.5 * r['bound'] for r in rows)}, proven minimal "
            f"{sum(bool(r['proven']) for r in rows)}")


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tree", default=".")
    ap.add_argument("--target", default="cgra4x4-torus")
    ap.add_argument("--limit", type=float, default=15.0)
    ap.add_argument("--wall", type=float, default=4.0)
    ap.add_argument("--kernels", default="")
    ap.add_argument("--table", nargs=2)
    args = ap.parse_args(argv)
    if args.table:
        print(table(*args.table))
        return
    for name in [k for k in args.kernels.split(",") if k]:
        path = next(f for f in kernel_files() if kernel_name(f) == name)
        row = {"kernel": name, "target": args.target, "limit": args.limit}
        row |= run(args.tree, path, args.target, args.limit, args.wall)
        print(json.dumps(row), flush=True)
        print(f"{name}: {row.get('ii', row.get('error'))}", file=sys.stderr, flush=True)


if __name__ == "__main__":
    main()
