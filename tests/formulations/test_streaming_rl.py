"""The PPO mapper of source 004 (formulations/streaming/rl.py) and ``--placer rl``."""

from __future__ import annotations

import numpy as np
import pytest

from formulations.streaming import rl as rl_module
from formulations.streaming.env import StreamingEnv, greedy_schedule
from hardware import load_hardware
from model.graph import Edge, Graph, Node
from model.graphjson import write_graph
from pipeline.options import OptionError, RunOptions
from pipeline.run import main
from pipeline.streaming import map_streaming
from sim.streaming import check_streaming, distance_graph


@pytest.fixture(scope="module")
def se():
    return load_hardware("se16")


def _fan(children: int = 3) -> Graph:
    """A parent with ``children`` consumers (siblings: distinct tiles) and a sink."""
    nodes = [Node("p")] + [Node(f"c{i}") for i in range(children)] + [Node("s")]
    edges = [Edge("p", f"c{i}") for i in range(children)] + [Edge("c0", "s")]
    return Graph("fan", nodes, edges)


def test_without_jax_the_rl_placer_is_a_clear_exit_2(monkeypatch, tmp_path, capsys):
    monkeypatch.setattr("pipeline.options.rl_available", lambda: False)
    with pytest.raises(OptionError) as exc:
        RunOptions(placer="rl")
    assert 'pip install -e ".[learn]"' in str(exc.value)
    write_graph(distance_graph(), tmp_path / "g.json")
    code = main([str(tmp_path / "g.json"), "--hardware", "se16", "--placer", "rl",
                 "-o", str(tmp_path / "out"), "--quiet"])
    assert code == 2
    assert "--placer" in capsys.readouterr().err


def test_features_describe_the_rules(se):
    env = StreamingEnv(_fan(3), se, ii=2)
    g = rl_module.graph_arrays(env)
    names = env.problem.names
    c1 = names.index("c1")
    assert g["x"][c1, 5] == pytest.approx(2 / 8)      # two siblings
    assert g["adj"][0, c1, names.index("p")] == 1.0   # operand relation
    assert g["valid"].sum() == 5


class TestWithJax:
    @pytest.fixture(autouse=True)
    def _jax(self):
        pytest.importorskip("jax")
        pytest.importorskip("optax")

    def test_masked_logits_never_pick_an_illegal_action(self, se):
        policy = rl_module.RLPolicy.initial(rl_module.RLConfig(seed=3))
        env = StreamingEnv(_fan(4), se, ii=2)
        g = rl_module.graph_arrays(env)
        rng = np.random.default_rng(0)
        for _ in range(5):
            env.reset(seed=0)
            while not env.done and env.candidates():
                s = rl_module.step_arrays(env, len(g["valid"]))
                logits, _ = policy.logits(g, s)
                assert np.all(np.isneginf(logits[~s["mask"]]))
                prob = np.exp(logits - logits.max())
                assert prob[~s["mask"]].sum() == 0.0
                action = int(rng.choice(len(prob), p=prob / prob.sum()))
                assert action in env.candidates()
                env.step(action)

    def test_save_load_round_trip_gives_identical_actions(self, se, tmp_path):
        policy = rl_module.RLPolicy.initial(rl_module.RLConfig(arch="gga", seed=1))
        path = tmp_path / "p.npz"
        policy.save(path)
        again = rl_module.RLPolicy.load(path)
        assert again.config == policy.config
        a = rl_module.rl_schedule(distance_graph(), se, policy, samples=3, seed=2)
        b = rl_module.rl_schedule(distance_graph(), se, again, samples=3, seed=2)
        assert (a.ii, a.tile, a.cycle) == (b.ii, b.tile, b.cycle)

    def test_a_broken_policy_file_names_the_file(self, tmp_path):
        bad = tmp_path / "bad.npz"
        bad.write_bytes(b"not a policy")
        with pytest.raises(ValueError, match="bad.npz: not an RL policy file"):
            rl_module.RLPolicy.load(bad)

    def test_training_is_deterministic_per_seed(self, se):
        config = rl_module.RLConfig(seed=0, batch_episodes=4)
        first = rl_module.train([distance_graph()], se, config, episodes=12)
        again = rl_module.train([distance_graph()], se, config, episodes=12)
        assert [h["mean_return"] for h in first.history] == \
            [h["mean_return"] for h in again.history]
        assert first.policy.params["out"]["w"].tobytes() == \
            again.policy.params["out"]["w"].tobytes()

    def test_short_training_learns_to_avoid_dead_ends(self, se):
        """Untrained, most episodes on the distance graph at II 3 walk into a dead end
        (return below -lambda); 480 PPO episodes cut the mean return's loss by a lot."""
        graph = distance_graph()
        result = rl_module.train([graph], se, rl_module.RLConfig(seed=0), episodes=480)
        returns = [h["mean_return"] for h in result.history]
        assert np.mean(returns[:3]) < -500
        assert np.mean(returns[-3:]) > np.mean(returns[:3]) + 300
        best = result.best[graph.name]
        greedy = greedy_schedule(graph, se)
        assert (best.ii, best.cycles) <= (greedy.ii, greedy.cycles + 4)

    def test_mlp_baseline_and_unordered_variant_map_and_check(self, se):
        graph = distance_graph()
        for config in (rl_module.RLConfig(arch="mlp"), rl_module.RLConfig(order="unordered")):
            sched = rl_module.rl_schedule(graph, se, rl_module.RLPolicy.initial(config),
                                          samples=16)
            placement = {n: {"tile": sched.tile[n], "slot": sched.slot[n],
                             "cycle": sched.cycle[n]} for n in sched.tile}
            report = check_streaming(graph, se, placement, sched.ii, sched.delays)
            assert report.ok, report.violations

    def test_placer_rl_maps_and_the_simulator_checks(self, se, tmp_path):
        path = tmp_path / "p.npz"
        rl_module.RLPolicy.initial().save(path)
        m = map_streaming(distance_graph(), se, RunOptions(placer="rl", policy_file=str(path),
                                                           time_limit=5))
        assert m.status == "mapped" and m.metrics["method"] == "rl"
        assert any(s.get("method", "").startswith("rl policy") for s in m.stages)
