"""The ONNX importer: shapes, FLOPs, bytes, nets, dimensions and bad input."""

from __future__ import annotations

import collections
import importlib.util
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from model.errors import InputError
from model.importers import detect_format, load_graph
from model.importers.onnx_flops import FLOP_RULES, OpShapes, count_flops
from model.importers.onnx_model import load_onnx, looks_like_onnx
from tests.conftest import real_graph

REPO = Path(__file__).resolve().parents[2]
LIGHT = Path(onnx.__file__).parent / "backend" / "test" / "data" / "light"
F = TensorProto.FLOAT


def light(name: str) -> Path:
    path = LIGHT / f"light_{name}.onnx"
    if not path.exists():
        pytest.skip(f"the installed onnx wheel has no {path.name}")
    return path


def save(tmp_path, nodes, inputs, outputs, inits=(), opset=17, name="m.onnx") -> Path:
    graph = helper.make_graph(nodes, "g", inputs, outputs, initializer=list(inits))
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8
    path = tmp_path / name
    onnx.save(model, path)
    return path


def vi(name, shape, dtype=F):
    return helper.make_tensor_value_info(name, dtype, shape)


def weight(name, shape):
    return numpy_helper.from_array(np.zeros(shape, np.float32), name)


def conv_gemm(tmp_path, batch="N") -> Path:
    """x -> Conv(3x3, 8->16, bias) -> Relu -> {Flatten -> Gemm, ReduceSum}: the Relu feeds two."""
    nodes = [helper.make_node("Conv", ["x", "w", "b"], ["c"], name="conv", pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["c"], ["r"], name="relu"),
             helper.make_node("Flatten", ["r"], ["f"], name="flat"),
             helper.make_node("Gemm", ["f", "fc_w", "fcb"], ["y"], name="fc", transB=1),
             helper.make_node("ReduceSum", ["r"], ["s"], name="sum", keepdims=0)]
    return save(tmp_path, nodes, [vi("x", [batch, 8, 10, 10])],
                [vi("y", [batch, 5]), vi("s", [])],
                [weight("w", (16, 8, 3, 3)), weight("b", (16,)), weight("fc_w", (5, 1600)),
                 weight("fcb", (5,))])


def test_each_operator_a_pcu_node_with_its_flops(tmp_path):
    g = load_graph(conv_gemm(tmp_path))
    flops = {n.id: n.flops for n in g.nodes if n.unit == "pcu"}
    out = 16 * 10 * 10
    assert flops == {"conv": 2 * out * 8 * 9 + out, "relu": out, "flat": 0,
                     "fc": 2 * 5 * 1600 + 5, "sum": out}
    assert g.node("conv").op == "Conv" and g.node("conv").attrs["shape"] == [1, 16, 10, 10]
    assert g.attrs["total_flops"] == sum(flops.values())


def test_weights_and_inputs_are_pmu_tensors_with_state_bytes(tmp_path):
    g = load_graph(conv_gemm(tmp_path))
    stored = {n.id: (n.op, n.attrs["state_bytes"]) for n in g.nodes if n.unit == "pmu"}
    assert stored == {"x": ("input", 4 * 800), "w": ("initializer", 4 * 16 * 8 * 9),
                      "b": ("initializer", 64), "fc_w": ("initializer", 4 * 5 * 1600),
                      "fcb": ("initializer", 20)}
    assert g.attrs["weight_bytes"] == 4 * (16 * 8 * 9 + 16 + 5 * 1600 + 5)


def test_a_tensor_read_twice_is_one_net_with_its_bytes(tmp_path):
    g = load_graph(conv_gemm(tmp_path))
    fanout = [net for net in g.nets if net.fanout > 1]
    assert [(n.id, n.driver, n.sinks) for n in fanout] == [("r", "relu", ("flat", "sum"))]
    assert {g.edges[i].bytes for i in fanout[0].edges} == {4 * 1600}
    widest = max(e.bytes for e in g.edges)
    assert all(e.bandwidth == pytest.approx(max(e.bytes / widest, 1e-6)) for e in g.edges)


def test_batch_fixes_the_symbolic_batch_and_scales_flops_and_bytes(tmp_path):
    one, four = load_graph(conv_gemm(tmp_path)), load_graph(conv_gemm(tmp_path), batch=4)
    assert four.attrs["total_flops"] == 4 * one.attrs["total_flops"]
    assert four.node("conv").attrs["shape"] == [4, 16, 10, 10]
    assert [e.bytes for e in four.edges if e.src == "relu"] == [4 * 4 * 1600] * 2
    assert four.node("w").attrs["state_bytes"] == one.node("w").attrs["state_bytes"]


def test_named_dimensions_need_dim(tmp_path):
    path = save(tmp_path, [helper.make_node("Softmax", ["x"], ["y"], name="sm", axis=-1)],
                [vi("x", ["batch", "seq", 64])], [vi("y", ["batch", "seq", 64])])
    with pytest.raises(InputError, match=r"graph input 'x': dimension 1 \(seq\) has no size"
                       r".*--dim seq=VALUE"):
        load_graph(path)
    g = load_graph(path, batch=2, dims={"seq": 128})
    assert g.node("sm").flops == 5 * 2 * 128 * 64
    with pytest.raises(InputError, match="no dimension named sequence .*batch, seq"):
        load_graph(path, dims={"seq": 8, "sequence": 8})


def test_a_data_dependent_dimension_is_named_with_its_producer(tmp_path):
    path = save(tmp_path, [helper.make_node("NonZero", ["x"], ["nz"], name="nonzero"),
                           helper.make_node("Neg", ["nz"], ["y"], name="neg")],
                [vi("x", [2, 3])], [vi("y", [2, "k"], TensorProto.INT64)])
    with pytest.raises(InputError, match=r"tensor 'nz': dimension 1 .*unknown after shape "
                       r"inference \(produced by NonZero node 'nonzero'\)"):
        load_graph(path)


def test_an_op_without_a_rule_is_imported_with_one_warning_per_type(tmp_path):
    nodes = [helper.make_node("Det", ["x"], ["d1"], name="det1"),
             helper.make_node("Det", ["x"], ["d2"], name="det2"),
             helper.make_node("Add", ["d1", "d2"], ["y"], name="add")]
    g = load_graph(save(tmp_path, nodes, [vi("x", [4, 3, 3])], [vi("y", [4])]))
    assert "Det" not in FLOP_RULES
    assert g.node("det1").flops is None and g.node("add").flops == 4
    assert g.attrs["unrated_ops"] == {"Det": 2}
    assert len(g.attrs["import_warnings"]) == 1 and "Det (2 nodes)" in g.attrs["import_warnings"][0]


def test_matmul_counts_every_batch_of_an_attention_product(tmp_path):
    nodes = [helper.make_node("MatMul", ["q", "k"], ["s"], name="qk"),
             helper.make_node("MatMul", ["s", "v"], ["y"], name="pv")]
    g = load_graph(save(tmp_path, nodes, [vi("q", [2, 12, 128, 64]), vi("k", [2, 12, 64, 128]),
                                          vi("v", [12, 128, 64])], [vi("y", [2, 12, 128, 64])]))
    assert g.node("qk").flops == 2 * 2 * 12 * 128 * 128 * 64
    assert g.node("pv").flops == 2 * 2 * 12 * 128 * 64 * 128    # v broadcast over the batch


def test_recognised_by_content_whatever_the_name(tmp_path):
    path = conv_gemm(tmp_path)
    renamed = tmp_path / "model.bin"
    renamed.write_bytes(path.read_bytes())
    assert looks_like_onnx(renamed) and not looks_like_onnx(REPO / "examples" / "fig9.json")
    assert load_graph(renamed).attrs["source_format"] == "onnx"
    assert detect_format({"version": 1}) == "graph-json"


def test_truncated_file_is_refused_with_the_reason(tmp_path):
    cut = tmp_path / "cut.onnx"
    cut.write_bytes(light("squeezenet").read_bytes()[:5000])
    with pytest.raises(InputError, match=r"cut.onnx: not a readable ONNX model \(protobuf: "
                       r"Error parsing message.*complete .onnx file"):
        load_graph(cut)


def test_newer_opset_is_refused_naming_the_versions(tmp_path):
    path = save(tmp_path, [helper.make_node("Relu", ["x"], ["y"])], [vi("x", [2])],
                [vi("y", [2])], opset=onnx.defs.onnx_opset_version() + 5)
    with pytest.raises(InputError,
                       match=rf"opset_import: opset {onnx.defs.onnx_opset_version() + 5}"
                             rf" is newer than the installed onnx {onnx.__version__} reads .*"
                             r"version_converter"):
        load_graph(path)


def test_invalid_model_gets_the_checkers_reason(tmp_path):
    path = save(tmp_path, [helper.make_node("Relu", ["x", "z"], ["y"], name="relu")],
                [vi("x", [2]), vi("z", [2])], [vi("y", [2])])
    with pytest.raises(InputError, match=r"invalid ONNX model \(checker: .*Relu"):
        load_graph(path)


def test_light_squeezenet_end_to_end_counts():
    g = load_graph(light("squeezenet"))
    ops = collections.Counter(n.op for n in g.nodes if n.unit == "pcu")
    assert ops == {"Conv": 26, "Relu": 26, "Concat": 8, "MaxPool": 3, "Dropout": 1,
                   "GlobalAveragePool": 1, "Softmax": 1}
    # 26 weights and 26 biases (ConstantOfShape or initialiser) and the image
    assert collections.Counter(n.op for n in g.nodes if n.unit == "pmu")["input"] == 1
    assert sum(1 for n in g.nodes if n.unit == "pmu") == 53
    assert g.attrs["unrated_ops"] == {}
    # each fire module's squeeze output feeds its two expand convolutions: 8 nets of 2 sinks
    assert sum(1 for net in g.nets if net.fanout == 2) >= 8


def test_resnet50_flops_match_the_published_4_1_gmacs():
    g = load_graph(light("resnet50"))
    macs = sum(n.flops for n in g.nodes if n.op in ("Conv", "Gemm")) / 2
    assert macs == pytest.approx(4.1e9, rel=0.01)          # He et al.: 3.8-4.1 G multiply-adds
    assert g.attrs["total_flops"] == pytest.approx(8.2e9, rel=0.01)   # 2 FLOPs per MAC
    assert g.attrs["weight_bytes"] / 4 == pytest.approx(25.6e6, rel=0.01)  # 25.6 M parameters


def test_resnet50_overlaps_the_msr_operator_graph():
    """Same Caffe2 model: equal weights and operator counts; activations at MSR's batch 32."""
    msr = load_graph(real_graph("msr-dnn/OperatorGraphs/resnet50_inference.json"))
    ours = load_graph(light("resnet50"))
    weights = {n.id: n.attrs["state_bytes"] for n in msr.nodes if n.unit == "pmu"}
    assert len(weights) == 161
    assert all(ours.node(w).attrs["state_bytes"] == b for w, b in weights.items())
    kinds = collections.Counter(n.op for n in ours.nodes if n.unit == "pcu")
    msr_ops = collections.Counter(n.id.rstrip("0123456789") for n in msr.nodes if n.unit == "pcu")
    assert all(msr_ops[op] == count for op, count in kinds.items())
    matched = set()
    for w in weights:      # the operator reading a weight in both graphs: Conv and Gemm outputs
        for m_op, o_op in zip(msr.successors(w), ours.successors(w)):
            if ours.node(o_op).op in ("Conv", "Gemm"):
                out = max(ours.edges[i].bytes for i in ours.out_edges(o_op))
                assert msr.node(m_op).attrs["state_bytes"] == 32 * out
                matched.add(o_op)
    assert len(matched) == 54


def _examples_module():
    spec = importlib.util.spec_from_file_location("make_onnx_examples",
                                                  REPO / "examples" / "make_onnx_examples.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_shipped_examples_are_what_the_generator_writes(tmp_path):
    for path in _examples_module().main(tmp_path):
        assert path.read_bytes() == (REPO / "examples" / path.name).read_bytes(), path.name


def test_bert_layer_flops_are_the_analytic_count():
    g = load_graph(REPO / "examples" / "bert_encoder_layer.onnx", dims={"seq": 128})
    s, h, f, heads = 128, 768, 3072, 12
    matmuls = 4 * 2 * s * h * h + 2 * 2 * s * h * f + 2 * 2 * heads * s * s * (h // heads)
    assert sum(n.flops for n in g.nodes if n.op == "MatMul") == matmuls
    shapes = 8 * (4 + 3) + 4            # the two reshape targets (int64) and the 1/8 scale
    assert g.attrs["weight_bytes"] == 4 * (4 * (h * h + h) + 2 * h * f + f + h + 4 * h) + shapes
    assert g.attrs["unrated_ops"] == {}


def test_gpt2_block_imports_with_a_batch():
    g = load_graph(REPO / "examples" / "gpt2_block.onnx", batch=2, dims={"seq": 64})
    qk = next(n for n in g.nodes if n.id == "scores")
    assert qk.attrs["shape"] == [2, 12, 64, 64]
    assert g.node("attn.c_attn.mm").flops == 2 * 2 * 64 * 768 * 2304


def test_large_initialiser_data_is_not_needed(tmp_path):
    """Weights without their bytes (external data missing) import from dims and dtype."""
    path = conv_gemm(tmp_path)
    model = onnx.load(path)
    onnx.save(model, tmp_path / "ext.onnx", save_as_external_data=True,
              all_tensors_to_one_file=True, location="ext.data", size_threshold=0)
    g = load_onnx(tmp_path / "ext.onnx", "ext")
    assert g.node("fc").flops == 2 * 5 * 1600 + 5


@pytest.mark.parametrize("op, inputs, outputs, attrs, flops", [
    ("Gemm", [(64, 32), (16, 64)], [(32, 16)], {"transA": 1, "transB": 1}, 2 * 32 * 16 * 64),
    ("ConvTranspose", [(1, 8, 5, 5), (8, 4, 3, 3)], [(1, 4, 7, 7)], {}, 2 * 200 * 4 * 9),
    ("Conv", [(1, 8, 5, 5), (8, 2, 3, 3), (8,)], [(1, 8, 5, 5)], {"group": 4},
     2 * 200 * 2 * 9 + 200),
    ("Einsum", [(2, 12, 128, 64), (2, 12, 128, 64)], [(2, 12, 128, 128)],
     {"equation": "bhqd,bhkd->bhqk"}, 2 * 2 * 12 * 128 * 128 * 64),
    ("Einsum", [(3, 4)], [(4, 3)], {"equation": "ij->ji"}, 12),
    ("MaxPool", [(1, 4, 8, 8)], [(1, 4, 4, 4)], {"kernel_shape": [3, 3]}, 64 * 9),
    ("GlobalAveragePool", [(1, 4, 8, 8)], [(1, 4, 1, 1)], {}, 256),
    ("LRN", [(1, 4, 2, 2)], [(1, 4, 2, 2)], {"size": 5}, 14 * 16),
    ("LayerNormalization", [(2, 8), (8,), (8,)], [(2, 8)], {}, 8 * 16),
    ("Sum", [(4,), (4,), (4,)], [(4,)], {}, 8),
    ("Mean", [(4,), (4,), (4,)], [(4,)], {}, 12),
    ("ReduceL2", [(4, 5)], [(4, 1)], {}, 40),
    ("Transpose", [(4, 5)], [(5, 4)], {}, 0),
    ("Attention", [(2, 12, 128, 64), (2, 12, 256, 64), (2, 12, 256, 64)], [(2, 12, 128, 64)],
     {}, 2 * 12 * 128 * 256 * (2 * 64 + 5 + 2 * 64)),
    ("Attention", [(2, 128, 768), (2, 256, 768), (2, 256, 768)], [(2, 128, 768)],
     {"q_num_heads": 12, "kv_num_heads": 12}, 2 * 12 * 128 * 256 * (2 * 64 + 5 + 2 * 64)),
])
def test_one_rule_per_operator_type(op, inputs, outputs, attrs, flops):
    got, rule = count_flops(op, "", OpShapes(tuple(inputs), tuple(outputs), attrs))
    assert got == flops and rule == FLOP_RULES[op][0]


# -- a name that is not UTF-8: protobuf hands it over as bytes (found by the fuzz suite) --------
def test_a_node_name_that_is_not_utf8_text_is_refused(tmp_path):
    path = save(tmp_path, [helper.make_node("Relu", ["x"], ["y"], name="qonv")],
                [vi("x", [1, 4])], [vi("y", [1, 4])])
    raw = Path(path).read_bytes()
    Path(path).write_bytes(raw.replace(b"qonv", b"\xe3onv"))     # a lone UTF-8 lead byte
    with pytest.raises(InputError, match=r"node 0: the name b'\\xe3onv' is not valid UTF-8"):
        load_graph(path)


# -- a dimension of size 0: no data, no work (once mapped at 5.8 M samples/s) -------------------
def test_a_graph_input_with_a_dimension_of_size_0_is_refused(tmp_path):
    path = save(tmp_path, [helper.make_node("Relu", ["x"], ["y"], name="relu")],
                [vi("x", [1, 0, 4])], [vi("y", [1, 0, 4])])
    with pytest.raises(InputError, match=r"graph input 'x': dimension 1 has size 0: the tensor "
                                         r"holds no data .*--dim NAME=VALUE"):
        load_graph(path)


def test_an_empty_weight_is_refused_where_it_empties_the_data(tmp_path):
    path = save(tmp_path, [helper.make_node("MatMul", ["x", "w"], ["y"], name="mm")],
                [vi("x", [1, 4])], [vi("y", [1, 0])], [weight("w", (4, 0))])
    with pytest.raises(InputError, match=r"tensor 'y': dimension 1 has size 0 after shape "
                                         r"inference \(produced by MatMul node 'mm'\)"):
        load_graph(path)


def test_an_empty_parameter_is_no_empty_data(tmp_path):
    """A Resize given its scales leaves its roi empty, as exporters write it."""
    scales = numpy_helper.from_array(np.array([1, 1, 2, 2], np.float32), "scales")
    path = save(tmp_path, [helper.make_node("Resize", ["x", "roi", "scales"], ["y"], name="up")],
                [vi("x", [1, 3, 4, 4])], [vi("y", [1, 3, 8, 8])], [weight("roi", (0,)), scales])
    assert load_graph(path).node("up").attrs["shape"] == [1, 3, 8, 8]


def test_an_empty_tensor_made_by_an_operator_is_named_with_its_producer(tmp_path):
    ints = [numpy_helper.from_array(np.array(v, np.int64), n)
            for n, v in (("st", [2]), ("en", [2]), ("ax", [1]))]
    path = save(tmp_path, [helper.make_node("Slice", ["x", "st", "en", "ax"], ["s"], name="cut"),
                           helper.make_node("Relu", ["s"], ["y"], name="relu")],
                [vi("x", [1, 4])], [vi("y", [1, None])], ints)
    with pytest.raises(InputError, match=r"tensor 's': dimension 1 has size 0 after shape "
                                         r"inference \(produced by Slice node 'cut'\)"):
        load_graph(path)
