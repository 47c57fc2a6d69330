"""The learned cost model's data set: deterministic per seed, legal, labelled, rebuildable."""

import numpy as np

from benchmarks.cost_model_blocks import FAMILIES, ffn_block, gemm_block, mha_block, mlp_block
from benchmarks.cost_model_data import decision_of, generate, load_samples, save_samples
from formulations.placement.cost_models.features import section_features
from hardware import build_fabric, load_hardware
from sim.check import check_section


def test_blocks_have_flops_on_pcus_and_bytes_on_edges():
    for g in (gemm_block(2, 64, 64, 2), mlp_block(1, 32, 3, 2), ffn_block(4, 64, 256, 2),
              mha_block(2, 64, 8, 1, 2, 128)):
        assert all((n.flops or 0) > 0 for n in g.nodes if n.unit == "pcu")
        assert all(n.flops is None for n in g.nodes if n.unit == "pmu")
        assert all(e.bytes and e.bytes > 0 for e in g.edges)
        g.topological_order()                                 # a DAG


def test_same_seed_same_samples_and_every_decision_is_legal(tmp_path):
    fabric = build_fabric(load_hardware("plasticine"))
    a_features, a = generate(16, seed=3)
    b_features, b = generate(16, seed=3, workers=2)
    assert np.array_equal(a["label"], b["label"]) and np.array_equal(a["site"], b["site"])
    assert np.array_equal(a_features.edge_x, b_features.edge_x)
    assert set(a["family"].tolist()) <= set(range(len(FAMILIES)))
    assert np.all((a["label"] > 0) & (a["label"] <= 1 + 1e-9))
    save_samples(tmp_path / "s.npz", a_features, a, {"seed": 3})
    features, columns = load_samples(tmp_path / "s.npz")
    for k in range(len(features)):
        graph, placement, routes = decision_of(features, columns, k, fabric, 3)
        assert check_section(graph, fabric, placement, routes).ok
        again = section_features(graph, fabric, placement, routes)
        assert np.array_equal(again.edge_x, features.section(k).edge_x)


def test_suite_places_msr_onnx_and_block_sections_and_maps_onnx_whole():
    from benchmarks.suites.cost_model import ONNX_SEQS, SUITE, onnx_section
    entries = SUITE.entries(False)
    cases = [e.fixed["case"] for e in entries if e.fixed.get("part") == "placement"]
    piped = [e.params for e in entries if e.fixed.get("part") == "pipeline"]
    for seq in ONNX_SEQS:
        for preset in ("plasticine", "sn10"):
            assert f"gpt2_block seq {seq} s0 on {preset}" in cases
            assert {"name": "bert_encoder_layer", "preset": preset, "seq": seq} in piped
    assert any(c.startswith("bert_L-12_training") for c in cases)
    assert sum(" block " in c for c in cases) == 8
    graph, fabric = onnx_section("gpt2_block", "sn10", 0, seq=16)
    assert fabric.spec.name == "sn10" and any(n.flops for n in graph.nodes)
    small = {n.id: n.flops for n in graph.nodes if n.flops}
    big = {n.id: n.flops for n in onnx_section("gpt2_block", "sn10", 0, seq=128)[0].nodes
           if n.flops}
    assert all(big[k] > small[k] for k in small if k in big)   # seq scales the work
