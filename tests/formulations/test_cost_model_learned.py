"""The learned cost model (source 002, Algorithm 1): training, saving, determinism."""

import numpy as np
import pytest

from formulations.placement.cost_models.features import SectionFeatures, pack, section_features
from formulations.placement.cost_models.learned import (CostModelConfig, LearnedCostModel,
                                                        relative_error, spearman, train)
from hardware import build_fabric, load_hardware
from model.graph import Edge, Graph, Node

jax = pytest.importorskip("jax")
pytest.importorskip("optax")

SMALL = CostModelConfig(dim=16, layers=2, op_dim=4, stage_dim=4, hidden=16, epochs=12,
                        batch=16, learning_rate=5e-3)


def _chain(length: int, hops: list[int]) -> SectionFeatures:
    """A PMU -> PCU ... -> PMU chain whose routes have the given lengths."""
    n = length
    unit = np.array([1] + [0] * (n - 2) + [1], dtype=np.int32)
    node_x = np.zeros((n, 6), np.float32)
    node_x[1:-1, 0] = 1.0
    edge_x = np.zeros((n - 1, 7), np.float32)
    edge_x[:, 0] = hops
    edge_x[:, 2] = np.log1p(np.array(hops) / 4.0)
    return SectionFeatures(unit, np.full(n, 2, np.int32), np.arange(n, dtype=np.int32), node_x,
                           np.arange(n - 1, dtype=np.int32), np.arange(1, n, dtype=np.int32),
                           edge_x)


def _data(count: int = 96, seed: int = 0):
    """Chains whose label falls with their longest route (a rule the model can learn)."""
    rng = np.random.default_rng(seed)
    sections, labels = [], []
    for _ in range(count):
        length = int(rng.integers(3, 9))
        hops = rng.integers(1, 12, size=length - 1).tolist()
        sections.append(_chain(length, hops))
        labels.append(1.0 / (1.0 + 0.15 * max(hops)))
    return pack(sections), np.array(labels)


def test_training_reduces_the_loss_and_ranks_held_out_sections():
    features, labels = _data()
    result = train(features.subset(range(80)), labels[:80], SMALL)
    assert result.losses[-1] < 0.6 * result.losses[0]
    held = result.model.predict(features.subset(range(80, 96)))
    assert spearman(held, labels[80:]) > 0.6
    assert relative_error(held, labels[80:]) < 0.3
    assert np.all((held >= 0) & (held <= 1))


def test_save_and_load_give_identical_predictions(tmp_path):
    features, labels = _data(32)
    model = train(features, labels, CostModelConfig(**{**SMALL.__dict__, "epochs": 2})).model
    model.save(tmp_path / "model.npz")
    again = LearnedCostModel.load(tmp_path / "model.npz")
    assert again.config == model.config
    assert np.array_equal(again.predict(features), model.predict(features))


def test_load_rejects_a_file_that_is_not_a_model(tmp_path):
    bad = tmp_path / "bad.npz"
    np.savez(bad, x=np.zeros(3))
    with pytest.raises(ValueError, match="not a learned cost model file"):
        LearnedCostModel.load(bad)


def test_same_seed_same_model_other_seed_other_model():
    features, labels = _data(32)
    config = CostModelConfig(**{**SMALL.__dict__, "epochs": 3})
    a = train(features, labels, config).model
    b = train(features, labels, config).model
    c = train(features, labels, CostModelConfig(**{**config.__dict__, "seed": 1})).model
    assert all(np.array_equal(a.params[k], b.params[k]) for k in a.params)
    assert not np.array_equal(a.predict(features), c.predict(features))


def test_prediction_ignores_node_numbering_and_takes_a_lone_unit():
    model = LearnedCostModel.initial(SMALL)
    f = _chain(5, [1, 6, 2, 3])
    perm = np.array([3, 0, 4, 1, 2])              # new index of old node k is inv[k]
    inv = np.argsort(perm)
    g = SectionFeatures(f.unit[perm], f.op[perm], f.stage[perm], f.node_x[perm],
                        inv[f.src].astype(np.int32), inv[f.dst].astype(np.int32), f.edge_x)
    lone = SectionFeatures(np.array([0], np.int32), np.array([2], np.int32),
                           np.array([0], np.int32), np.zeros((1, 6), np.float32),
                           np.zeros(0, np.int32), np.zeros(0, np.int32),
                           np.zeros((0, 7), np.float32))
    p = model.predict([f, g, lone])
    assert p[0] == pytest.approx(p[1], abs=1e-6) and 0 <= p[2] <= 1


def test_score_reads_a_placed_and_routed_section():
    fabric = build_fabric(load_hardware("tiny"))
    g = Graph("t", [Node("a", op="matmul", unit="pcu", flops=100.0), Node("b", unit="pmu")],
              [Edge("a", "b", bytes=64.0)])
    model = LearnedCostModel.initial(SMALL)
    placed, routes = {"a": "U0_0", "b": "U0_1"}, {0: ["U0_0->S0_1", "S0_1->U0_1"]}
    expected = model.predict([section_features(g, fabric, placed, routes)])[0]
    assert model.score(g, fabric, placed, routes) == pytest.approx(expected)


def test_grouped_training_ranks_within_groups_and_is_deterministic():
    features, labels = _data(48)
    groups = np.arange(48) // 8
    config = CostModelConfig(**{**SMALL.__dict__, "epochs": 3, "rank_weight": 1.0})
    a = train(features, labels, config, groups=groups)
    b = train(features, labels, config, groups=groups)
    assert a.losses == b.losses and len(a.losses) == 3


def test_mixed_training_interleaves_mixed_and_whole_group_batches():
    from formulations.placement.cost_models.learned import _epoch_batches
    features, labels = _data(64)
    groups = np.arange(64) // 8
    sections = [features.section(k) for k in range(64)]
    config = CostModelConfig(**{**SMALL.__dict__, "mixed": True})
    batches = _epoch_batches(sections, groups, np.random.default_rng(0), config)
    kinds = [grouped for _, grouped in batches]
    assert kinds[:2] == [False, True] and kinds.count(True) == kinds.count(False)
    for kind in (False, True):                  # each kind covers every sample once
        seen = np.concatenate([b for b, g in batches if g == kind])
        assert sorted(seen.tolist()) == list(range(64))
    for b, grouped in batches:
        if grouped:                             # whole groups only
            assert all((groups[b] == g).sum() == 8 for g in np.unique(groups[b]))
    plain = _epoch_batches(sections, groups, np.random.default_rng(0), SMALL)
    assert all(grouped for _, grouped in plain)
    assert not any(g for _, g in _epoch_batches(sections, None, np.random.default_rng(0), config))
    run = CostModelConfig(**{**config.__dict__, "epochs": 6, "rank_weight": 0.3})
    a, b = train(features, labels, run, groups=groups), train(features, labels, run, groups=groups)
    assert a.losses == b.losses and a.losses[-1] < a.losses[0]


def test_an_ensemble_predicts_the_mean_and_survives_save_and_load(tmp_path):
    from formulations.placement.cost_models.learned import CostModelEnsemble
    features, labels = _data(32)
    quick = CostModelConfig(**{**SMALL.__dict__, "epochs": 2})
    a = train(features, labels, quick).model
    b = train(features, labels, CostModelConfig(**{**quick.__dict__, "seed": 1})).model
    pair = CostModelEnsemble([a, b])
    want = (a.predict(features) + b.predict(features)) / 2
    assert np.allclose(pair.predict(features), want)
    pair.save(tmp_path / "pair.npz")
    again = LearnedCostModel.load(tmp_path / "pair.npz")
    assert isinstance(again, CostModelEnsemble) and len(again.members) == 2
    assert np.allclose(again.predict(features), want, atol=1e-6)
    a.save(tmp_path / "one.npz")
    assert isinstance(LearnedCostModel.load(tmp_path / "one.npz"), LearnedCostModel)
    data = dict(np.load(tmp_path / "pair.npz"))
    data.pop(next(k for k in data if k.startswith("m1/")))
    np.savez(tmp_path / "broken.npz", **data)
    with pytest.raises(ValueError, match="broken.npz: parameters"):
        LearnedCostModel.load(tmp_path / "broken.npz")
