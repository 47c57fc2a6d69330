"""cut_ceiling.py GRAPH:K ...: a proven floor on the cut's time per sample at <= K sections.

``python -m benchmarks.cut_ceiling bert_l-12_inference:11 bert_l-6_training:17`` prints,
per OperatorGraph on plasticine and per section count k up to K, a lower bound on
``cut_time`` (:mod:`formulations.sections.costs`, which equals :mod:`sim.perf`'s steady
state ``sum_k max(period_k, DRAM_k)``) over *every* cut into at most k sections, and the
samples/s ceiling it gives (benchmarks/results/first_cut.md, "proven floors", has the
method in full). Every step relaxes, so the number is a floor, never a guess:

1. A *spine*: a longest path m_1 -> ... -> m_L (by nodes, or by fixed stage).
2. A cut is a chain of ideals I_1 c ... c I_K, each holding a prefix of the milestones, so
   the sections cut the spine into at most K intervals a..b.
3. A section holding m_a and m_b holds their hull H(a, b) = desc(m_a) & anc(m_b) (sections
   are convex): H must fit one section (stage buffers and scale factors only add, so they
   are left out) and hold one category.
4. Its T = max(slowest stage, DRAM) is at least H's stages (:meth:`Relaxation.floors`) and
   its forced DRAM, plus what the room left by H cannot keep on chip (a knapsack).
5. Nets to another category that no section floor sees still cross DRAM; a section absorbs
   them only up to its slack (:func:`floor_by_count`).
6. Section counts: prefixes hold anc(m_q), suffixes desc(m_q), two spine sections and the
   g between them the hull of their milestones (:class:`Limits`).
7. A dynamic programme over (sections so far, last interval) takes the least sum.
"""

from __future__ import annotations

import sys

import numpy as np

from formulations.buffers import solve_buffers
from formulations.sections import estimate_units
from formulations.sections.costs import cut_costs, cut_nets
from formulations.sections.estimates import tile_pmus
from formulations.sections.problem import Capacity, lower_bound, unit_demand
from formulations.solver import SolveSettings
from hardware import build_fabric, load_hardware
from model.importers import load_graph
from sim.perf import DEFAULT_BATCH

GRAPHS = "/work/shared/graphs/msr-dnn/OperatorGraphs"
RESOURCES = ("pcu", "pmu", "any", "agcu")


class Relaxation:
    """The arrays the floor reads: reachability, demands, stages and nets by index."""

    def __init__(self, graph, spec, cap: Capacity | None = None):
        self.graph, self.spec = graph, spec
        self.cap = cap or Capacity.of_fabric(build_fabric(spec))
        self.order = graph.topological_order()
        n = len(self.order)
        self.pos = {v: i for i, v in enumerate(self.order)}
        self.anc = self._ancestors()
        demand = [unit_demand(graph.node(v)) for v in self.order]
        self.demand = np.array([[d[r] for r in RESOURCES] for d in demand])
        cats = sorted({str(graph.node(v).category) for v in self.order})
        self.category = np.array([cats.index(str(graph.node(v).category)) for v in self.order])
        self.one_hot = np.eye(len(cats))[self.category]
        costs = cut_costs(graph, spec)
        self.fixed = np.array([costs.stage.get(v, 1.0) for v in self.order])
        self.streamed = [self.pos[v] for v in costs.streamed]
        self.inputs = np.zeros((len(self.streamed), n))
        for row, v in enumerate(costs.streamed):
            for u, c in costs.streamed[v]:
                self.inputs[row, self.pos[u]] += c
        self._nets(cut_nets(graph, costs))
        self.per_byte = costs.dram_per_byte

    def _ancestors(self) -> np.ndarray:
        """anc[i, j]: node j reaches node i along same-iteration edges (i reaches itself)."""
        g, n = self.graph, len(self.order)
        anc = np.zeros((n, n), dtype=bool)
        for i, v in enumerate(self.order):
            anc[i, i] = True
            for e in (g.edges[j] for j in g.in_edges(v)):
                if not e.loop_carried and e.src != v:
                    anc[i] |= anc[self.pos[e.src]]
        return anc

    def _nets(self, nets) -> None:
        """Per net: driver, bytes, sink incidence, and whether a sink lies in another
        category (then the driver's section writes it whatever the cut)."""
        nets = [n for n in nets if n.driver is not None]
        n = len(self.order)
        self.driver = np.array([self.pos[x.driver] for x in nets], dtype=int)
        self.bytes = np.array([x.bytes for x in nets])
        self.sinks = np.zeros((len(nets), n), dtype=bool)
        for row, x in enumerate(nets):
            self.sinks[row, [self.pos[s] for s in x.sinks]] = True
        cat = self.category
        self.foreign = np.array([bool((cat[self.sinks[r]] != cat[self.driver[r]]).any())
                                 for r in range(len(nets))], dtype=bool)

    def spine(self, by: str = "nodes") -> list[int]:
        """A longest path of same-iteration edges, as node indices: by nodes, or by
        ``"stage"`` (the sum of fixed stages, so that it runs through the heavy nodes;
        any path gives a valid floor, and each leaves other nodes free)."""
        g = self.graph
        weight = (self.fixed if by == "stage" else np.ones(len(self.order)))
        length, back = {}, {}
        for v in self.order:
            preds = [g.edges[j].src for j in g.in_edges(v)
                     if not g.edges[j].loop_carried and g.edges[j].src != v]
            best = max(preds, key=lambda u: length[u], default=None)
            length[v] = (length[best] if best else 0.0) + weight[self.pos[v]]
            back[v] = best
        v = max(self.order, key=lambda u: length[u])
        path = []
        while v is not None:
            path.append(self.pos[v])
            v = back[v]
        return path[::-1]

    def fits(self, hull: np.ndarray) -> np.ndarray:
        """Per hull (rows of a boolean matrix): whether it fits one section, one category."""
        use = hull.astype(float) @ self.demand
        cap = self.cap
        ok = ((use[:, 0] <= cap.pcu + 1e-9) & (use[:, 1] <= cap.pmu + 1e-9)
              & (use[:, 0] + use[:, 1] + use[:, 2] <= cap.total + 1e-9)
              & (use[:, 3] <= cap.agcu + 1e-9))
        kinds = (hull.astype(float) @ self.one_hot > 0).sum(axis=1)
        return ok & (kinds <= 1)

    def floors(self, hull: np.ndarray, before: np.ndarray,
               after: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Per hull: the least slowest stage and the least DRAM cycles of a section holding
        it, and of those the cycles reading nets from another category, with ``before``
        (nodes in earlier sections) and ``after`` (nodes in later ones) as boolean rows."""
        h = hull.astype(float)
        stage = (h * self.fixed).max(axis=1)
        if self.streamed:
            moved = (h @ self.inputs.T) * hull[:, self.streamed]
            stage = np.maximum(stage, moved.max(axis=1))
        driven = hull[:, self.driver]
        into = (h @ self.sinks.T) > 0
        written = driven & (((after.astype(float) @ self.sinks.T) > 0) | self.foreign)
        home = self.category[hull.argmax(axis=1)]          # a hull holds one category
        other = home[:, None] != self.category[self.driver][None, :]
        read = into & ~driven & (before[:, self.driver] | other)
        dram = (written | read).astype(float) @ self.bytes
        leaving = (((~hull).astype(float) @ self.sinks.T) > 0) & driven & ~written
        entering = into & ~driven & ~read
        for row in range(len(hull)):
            dram[row] += self._unavoidable(hull[row], entering[row], leaving[row])
        crossed = (read & other).astype(float) @ self.bytes
        return stage, dram * self.per_byte, crossed * self.per_byte

    def _unavoidable(self, hull: np.ndarray, entering: np.ndarray, leaving: np.ndarray) -> float:
        """Bytes a section holding ``hull`` moves through DRAM beyond the forced ones: a net
        entering it is read unless its driver joins, one leaving it is written unless all
        its sinks outside join, and what joins must fit the room the hull leaves. A node
        that several such nets need is shared out among them, so that any set of nets kept
        on chip costs at least the sum of their shares: the fractional knapsack on one
        weighted sum of PCUs and PMUs (several weights, the best kept) then keeps at least
        as many bytes as any fitting choice, and the rest is a floor."""
        ins, outs = np.flatnonzero(entering), np.flatnonzero(leaving)
        if not len(ins) and not len(outs):
            return 0.0
        need = np.zeros((len(ins) + len(outs), len(hull)))
        need[np.arange(len(ins)), self.driver[ins]] = 1.0
        need[len(ins):] = self.sinks[outs] & ~hull
        shared = need / np.maximum(need.sum(axis=0), 1.0)
        cost = shared @ self.demand[:, :2]
        value = self.bytes[np.concatenate([ins, outs])]
        room = np.array([self.cap.pcu, self.cap.pmu]) - hull.astype(float) @ self.demand[:, :2]
        kept = min(_knapsack(value, cost @ w, room @ w) for w in WEIGHTS)
        return float(value.sum() - kept)


#: Weights of (PCUs, PMUs) in the knapsack's one constraint: each is a relaxation of both.
WEIGHTS = (np.array([1.0, 0.0]), np.array([0.0, 1.0]), np.array([0.5, 0.5]),
           np.array([0.25, 0.75]), np.array([0.75, 0.25]))


def _knapsack(value: np.ndarray, cost: np.ndarray, room: float) -> float:
    """The fractional knapsack's best value: at least that of any 0/1 choice."""
    free = cost <= 1e-12
    kept = float(value[free].sum())
    room = max(0.0, room)
    order = np.argsort(-value[~free] / cost[~free])
    for v, c in zip(value[~free][order], cost[~free][order]):
        if c <= room:
            kept, room = kept + v, room - c
        else:
            return kept + v * room / c
    return kept


def least_sections(rel: Relaxation, sets: np.ndarray) -> np.ndarray:
    """Per node set (rows): the fewest sections that can hold it (:func:`lower_bound`'s
    count: per category, the largest resource ratio rounded up)."""
    cap = rel.cap
    total = np.zeros(len(sets), dtype=int)
    for c in range(rel.one_hot.shape[1]):
        use = (sets & (rel.category == c)).astype(float) @ rel.demand
        ratios = np.stack([use[:, 0] / cap.pcu, use[:, 1] / cap.pmu,
                           (use[:, 0] + use[:, 1] + use[:, 2]) / cap.total,
                           use[:, 3] / max(cap.agcu, 1)], axis=1)
        held = (sets & (rel.category == c)).any(axis=1)
        total += np.where(held, np.maximum(1, np.ceil(ratios.max(axis=1) - 1e-9)), 0).astype(int)
    return total


def section_floors(rel: Relaxation, spine: list[int]) -> dict[int, dict[int, float]]:
    """cost[a][b]: the floor of a section holding milestones a..b (inclusive), for every
    interval whose hull fits one section."""
    length, n = len(spine), len(rel.order)
    empty = np.zeros(n, dtype=bool)
    cost: dict[int, dict[int, float]] = {}
    for a in range(length):
        desc = rel.anc[:, spine[a]]
        ends = []
        for b in range(a, length):       # hulls grow with b: stop past the first misfit
            ends.append(b)
            if len(ends) % 16 == 0 and not rel.fits((desc & rel.anc[spine[b]])[None])[0]:
                break
        ends = np.array(ends)
        hull = desc[None, :] & rel.anc[[spine[b] for b in ends]]
        ok = rel.fits(hull)
        ends, hull = ends[ok], hull[ok]
        if not len(ends):
            raise ValueError(f"milestone {rel.order[spine[a]]} fits no section")
        after = np.array([rel.anc[:, spine[b + 1]] if b + 1 < length else empty for b in ends])
        before = np.broadcast_to(rel.anc[spine[a - 1]] if a else empty, hull.shape)
        cost[a] = dict(zip(ends.tolist(),
                           zip(*(x.tolist() for x in rel.floors(hull, before, after)))))
    return cost


def forced_of_node(rel: Relaxation) -> np.ndarray:
    """Per node: bytes every cut writes to DRAM for it, wherever it lies: the nets it
    drives to another category (written once)."""
    out = np.zeros(len(rel.order))
    np.add.at(out, rel.driver[rel.foreign], rel.bytes[rel.foreign])
    return out


def straddling_dram(rel: Relaxation, spine: list[int]) -> np.ndarray:
    """E[a, b]: DRAM cycles of :func:`forced_of_node` for the nodes of the spine's hull that a
    section of milestones a..b leaves out although it holds their last milestone ancestor
    (a <= lo(v) <= b < hi(v)): no section floor counts them, and each is counted at the
    first boundary it straddles only."""
    length = len(spine)
    below = rel.anc[:, spine]                 # below[v, i]: m_i reaches v
    above = rel.anc[spine].T                  # above[v, i]: v reaches m_i
    has_lo, has_hi = below.any(axis=1), above.any(axis=1)
    lo = length - 1 - np.argmax(below[:, ::-1], axis=1)
    hi = np.argmax(above, axis=1)
    weight = forced_of_node(rel) * rel.per_byte
    grid = np.zeros((length + 1, length + 1))
    keep = has_lo & has_hi & (weight > 0)
    np.add.at(grid, (lo[keep], hi[keep]), weight[keep])
    # E[a, b] = sum over lo in [a, b], hi in [b + 1, L): a 2-D prefix sum of grid
    cum = grid[::-1].cumsum(axis=0)[::-1]                  # cum[l, h]: lo >= l
    tail = cum[:, ::-1].cumsum(axis=1)[:, ::-1]            # tail[l, h]: lo >= l, hi >= h
    out = np.zeros((length, length))
    for b in range(length):
        out[:b + 1, b] = tail[:b + 1, b + 1] - tail[b + 1, b + 1]
    return out


def off_spine_dram(rel: Relaxation, spine: list[int]) -> float:
    """DRAM cycles every cut spends that no section floor counts, or counts only as the
    reads ``crossed`` it subtracts: the nets driven off the spine's hull to another
    category (written once), and every net to another category read at least once (R).
    Nodes of the hull that no section's interval holds add their writes
    (:func:`straddling_dram`)."""
    inside = rel.anc[:, spine[0]] & rel.anc[spine[-1]]
    written = rel.foreign & ~inside[rel.driver]
    return float(rel.bytes[written].sum() + rel.bytes[rel.foreign].sum()) * rel.per_byte


def floor_by_count(rel: Relaxation, counts, spine: list[int] | None = None,
                   pairs: bool = True) -> dict[int, float]:
    """F(k) for each k in ``counts`` (inf where no cut of k sections passes the
    relaxation).

    A section holding spine interval (a, b] costs at least max(s, d) (its stage and DRAM
    floors). DRAM that no floor counts lands in some sections on top, where each spine
    section absorbs at most its slack (s - d)^+ for free: at least D (:func:`off_spine_dram`)
    + the straddling writes E (:func:`straddling_dram`) - the reads r of other categories'
    nets the floors count (a net read by no floor is one of R's, and R - sum r undercounts
    the rest). So for any mu in [0, 1] every cut costs at least mu D + sum over its spine
    sections of max(s, d) - mu (s - d)^+ + mu (E - r), whose least sum over the cuts of
    the spine :func:`_least_sum` finds. The best mu of a grid is kept."""
    spine = spine or rel.spine()
    parts = section_floors(rel, spine)
    off = off_spine_dram(rel, spine)
    straddle = straddling_dram(rel, spine)
    limits = Limits(rel, spine, parts)
    out = {}
    for most in counts:
        out[most] = max(mu * off + _least_sum(parts, straddle, most, limits, mu, pairs)
                        for mu in MUS)
    return out


#: The grid of mu in :func:`floor_by_count`.
MUS = (0.0, 0.25, 0.5, 0.75, 0.9, 1.0)


class Limits:
    """Section counts the spine's cut must respect: the first sections up to the one
    holding m_q hold anc(m_q) (``below[q]`` of them at least), the later ones desc(m_q)
    (``above[q]``), and two spine sections holding m_a and m_c with s sections between
    them hold the hull of m_a and m_c in s + 2 sections (``pair(a, c)``)."""

    def __init__(self, rel: Relaxation, spine: list[int], parts):
        self.below = least_sections(rel, rel.anc[spine])
        self.above = least_sections(rel, rel.anc[:, spine].T)
        self.ends = {a: np.array(sorted(e)) for a, e in parts.items()}
        self.length = len(spine)
        self._pair = {}
        for a, ends in self.ends.items():
            last = max(int(self.ends[b + 1].max()) if b + 1 < self.length else b for b in ends)
            hull = rel.anc[:, spine[a]][None, :] & rel.anc[spine[a:last + 1]]
            self._pair[a] = least_sections(rel, hull)

    def pair(self, a: int, c: np.ndarray) -> np.ndarray:
        return self._pair[a][c - a]


def _least_sum(parts, straddle, most: int, limits: Limits, mu: float,
               pairs: bool = True) -> float:
    """The least sum of section costs max(s, d) - mu (s - d)^+ + mu (E - r) over the cuts
    of the spine into intervals, with sections free of milestones (cost 0) wherever the
    section counts of ``limits`` allow, at most ``most`` sections in all. A state is (j
    sections so far, the last interval a..b); without ``pairs`` (j, milestones covered),
    which drops the pair counts (a weaker floor, for long spines)."""
    cost = {a: np.array([max(s, d) - mu * max(0.0, s - d) + mu * (straddle[a, b] - r)
                         for b, (s, d, r) in sorted(e.items())]) for a, e in parts.items()}
    if not pairs:
        return _least_sum_by_prefix(cost, most, limits)
    length, ends = limits.length, limits.ends
    states = [dict() for _ in range(most + 1)]
    for j in range(1, most + 1):                         # the first interval, j - 1 before it
        states[j][0] = np.where(_allowed(limits, ends[0], j, most), cost[0], np.inf)
    best = np.inf
    for j in range(1, most + 1):
        for a, values in states[j].items():
            for b, value in zip(ends[a], values):
                if value == np.inf:
                    continue
                if b + 1 == length:
                    best = min(best, value)
                    continue
                c = ends[b + 1]
                pair = limits.pair(a, c)
                for gap in range(most - j):
                    k = j + 1 + gap
                    ok = _allowed(limits, c, k, most) & (pair <= 2 + gap)
                    step = np.where(ok, value + cost[b + 1], np.inf)
                    held = states[k].get(b + 1)
                    states[k][b + 1] = step if held is None else np.minimum(held, step)
    return best


def _allowed(limits: Limits, last: np.ndarray, j: int, most: int) -> np.ndarray:
    """Whether j sections can end at milestones ``last`` with ``most`` in all."""
    length = limits.length
    later = np.where(last + 1 < length, limits.above[np.minimum(last + 1, length - 1)], 0)
    return (limits.below[last] <= j) & (later <= most - j)


def _least_sum_by_prefix(cost, most: int, limits: Limits) -> float:
    """:func:`_least_sum` without the pair counts: a state is (j sections so far, the
    milestones covered), and a section free of milestones may come anywhere."""
    length, ends = limits.length, limits.ends
    best = np.full(length + 1, np.inf)
    best[0] = 0.0
    done = np.inf
    for j in range(1, most + 1):
        nxt = best.copy()                                # a section free of milestones
        covered = np.arange(1, length + 1)
        nxt[1:] = np.where(_allowed(limits, covered - 1, j, most), nxt[1:], np.inf)
        for a in np.flatnonzero(np.isfinite(best[:length])):
            step = np.where(_allowed(limits, ends[a], j, most), best[a] + cost[a], np.inf)
            np.minimum.at(nxt, ends[a] + 1, step)
        best = nxt
        done = min(done, best[length])
    return done


def ceiling(graph, spec, floor: float, sections: int) -> float:
    """Samples/s no cut with this floor (cycles a sample) can beat."""
    state = sum(float(graph.node(v).attrs.get("state_bytes") or 0) for v in graph.node_ids)
    seconds = ((DEFAULT_BATCH - 1) * floor / spec.clock_hz + state / spec.dram_rate
               + sections * spec.reconfig_seconds)
    return DEFAULT_BATCH / seconds


def hull_report(graph, spec, first: str, last: str, seconds: float = 20.0) -> str:
    """The hull of ``first`` and ``last`` (every section holding both holds it): its units
    and the stage-buffer PMUs its exact balancing adds (:func:`formulations.buffers.solve_buffers`;
    a section holding the hull balances it too, so it needs at least these when OPTIMAL)."""
    rel = Relaxation(graph, spec)
    hull = rel.anc[:, rel.pos[first]] & rel.anc[rel.pos[last]]
    nodes = [rel.order[i] for i in np.flatnonzero(hull)]
    pcu, pmu = hull.astype(float) @ rel.demand[:, :2]
    sol = solve_buffers(graph.subgraph(nodes), SolveSettings(time_limit=seconds, seed=0), spec)
    return (f"hull {first} .. {last}: {len(nodes)} nodes, {pcu:g} PCUs, {pmu:g} PMUs, "
            f"balancing {sol.status}: {sol.pmus_after - sol.pmus_before} buffer PMUs")


def main(argv: list[str]) -> None:
    """Each argument GRAPH:K[:SPINE][:nopairs]: the floors at the fewest sections to K, on
    the spine by nodes and by stage (or the one named), the larger kept per count (with
    ``nopairs`` the faster, weaker programme of :func:`_least_sum_by_prefix`); or
    GRAPH:hull:FIRST:LAST, :func:`hull_report`."""
    spec = load_hardware("plasticine")
    for arg in argv:
        name, most, *which = arg.split(":")
        pairs = "nopairs" not in which
        which = [w for w in which if w != "nopairs"]
        if most == "hull":
            graph = estimate_units(load_graph(f"{GRAPHS}/{name}.json", None), spec,
                                   tile_pmus(spec))
            print(f"{name}: {hull_report(graph, spec, *which)}")
            continue
        graph = estimate_units(load_graph(f"{GRAPHS}/{name}.json", None), spec, tile_pmus(spec))
        rel = Relaxation(graph, spec)
        fewest = lower_bound(graph, rel.cap)
        counts = range(fewest, int(most) + 1)
        print(f"{name}: {len(rel.order)} nodes, {rel.demand[:, 0].sum():g} PCUs, "
              f"fewest sections {fewest}")
        floors = {k: 0.0 for k in counts}
        for by in which or ("nodes", "stage"):
            spine = rel.spine(by)
            inside = rel.anc[:, spine[0]] & rel.anc[spine[-1]]
            found = floor_by_count(rel, counts, spine, pairs)
            print(f"  spine by {by}: {len(spine)} milestones ({rel.order[spine[0]]} .. "
                  f"{rel.order[spine[-1]]}), its hull {rel.demand[inside, 0].sum():g} PCUs; "
                  + ", ".join(f"<= {k}: {f / 1e6:.4f}" for k, f in found.items()))
            floors = {k: max(floors[k], found[k]) for k in counts}
        for k, f in floors.items():
            if np.isfinite(f):
                print(f"  <= {k} sections: floor {f / 1e6:.4f} M cycles a sample, ceiling "
                      f"{ceiling(graph, spec, f, fewest):.3f} samples/s")


if __name__ == "__main__":
    main(sys.argv[1:])
