"""The paper's sequential placement process, its policies, evolutionary search and the oracle."""

import numpy as np
import pytest

from formulations.solver import Budget
from formulations.streaming.env import (LAMBDA, StreamingEnv, evolutionary_schedule,
                                        greedy_policy, greedy_schedule, random_schedule)
from formulations.streaming.problem import StreamingInfeasible
from hardware import load_hardware
from model.graph import Edge, Graph, Node
from sim.streaming import check_streaming, distance_graph

SE = load_hardware("se16")


def _ok(graph, s):
    placement = {n: {"tile": s.tile[n], "slot": s.slot[n], "cycle": s.cycle[n]} for n in s.tile}
    report = check_streaming(graph, SE, placement, s.ii, s.delays)
    assert report.ok, report.violations


def test_mask_and_observation():
    g = Graph("g", [Node("a"), Node("b"), Node("c")], [Edge("a", "b"), Edge("a", "c")])
    env = StreamingEnv(g, SE, ii=2)
    obs, info = env.reset(seed=0)
    assert obs.shape == (97,) and obs[-1] == 0
    mask = info["mask"]
    assert mask.sum() == 32  # 16 tiles x 2 slots; slots 2..5 masked
    assert not mask[0 * 6 + 2]
    obs, reward, done, truncated, info = env.step(5 * 6 + 0)  # a on tile 5, slot 0
    legal = np.flatnonzero(info["mask"])
    assert {a // 6 for a in legal} == {3, 4, 5, 6, 7} and 5 * 6 + 0 not in legal
    env.step(int(legal[0]))
    sibling_tiles = {a // 6 for a in np.flatnonzero(env.mask())}
    assert env.tile[1] not in sibling_tiles  # siblings b, c on distinct tiles


def test_rewards_telescope_to_minus_makespan_on_a_chain():
    g = Graph("chain", [Node("a"), Node("b"), Node("c")], [Edge("a", "b"), Edge("b", "c")])
    env = StreamingEnv(g, SE, ii=1)
    env.reset()
    total = 0.0
    while not env.done:
        _, r, *_ = env.step(greedy_policy(env))
        total += r
    assert total == -env.schedule().cycles


def test_dead_end_gives_minus_lambda():
    # memory pair that cannot share a tile at II 1
    g = Graph("m", [Node("a", mem_vars=("v",)), Node("b", mem_vars=("v",))], [])
    env = StreamingEnv(g, SE, ii=1)
    _, info = env.reset()
    assert info["mask"].sum() == 0
    _, reward, done, _, _ = env.step(0)
    assert reward == -LAMBDA and done


def test_policies_give_legal_schedules():
    g = distance_graph()
    for sched in (greedy_schedule(g, SE), random_schedule(g, SE, seed=1),
                  evolutionary_schedule(g, SE, seed=0, generations=5, budget=Budget(3))):
        _ok(g, sched)
    assert random_schedule(g, SE, seed=3).cycles == random_schedule(g, SE, seed=3).cycles


def test_oracle_limits_and_infeasible(streaming_oracle):
    with pytest.raises(ValueError):
        streaming_oracle.exhaustive_schedule(Graph("big", [Node(f"n{i}") for i in range(9)], []),
                                             SE)
    g = Graph("s", [Node("p"), Node("a", mem_vars=("v",)), Node("b", mem_vars=("v",))],
              [Edge("p", "a"), Edge("p", "b")])
    with pytest.raises(StreamingInfeasible):
        streaming_oracle.exhaustive_schedule(g, SE)
