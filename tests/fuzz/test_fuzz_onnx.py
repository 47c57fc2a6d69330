"""Fuzzing the ONNX importer through the command line: exit 0, 2 or 3, never a traceback.

Two strategies, each ``RDAMAP_FUZZ_EXAMPLES`` examples (default 5), run like the other
fuzz strategies (:func:`tests.fuzz.test_fuzz_inputs.run_file`: in process, ``tiny``
preset, 2 s): byte-level mutations of a small valid model (truncation, flipped bytes,
spliced random bytes), and generated models: random operator chains (rated, unrated,
custom-domain, data-dependent), random symbolic dimensions, opsets and IR versions,
written without the checker.
"""

from __future__ import annotations

import onnx
from hypothesis import given
from hypothesis import strategies as st
from onnx import TensorProto, helper, numpy_helper
import numpy as np

from tests.fuzz.test_fuzz_inputs import FUZZ, run_file


def _base_model() -> bytes:
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"], name="conv", pads=[1, 1]),
             helper.make_node("Relu", ["c"], ["r"], name="relu"),
             helper.make_node("Add", ["r", "r"], ["y"], name="add")]
    graph = helper.make_graph(
        nodes, "base", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 2, 6])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 4, 6])],
        initializer=[numpy_helper.from_array(np.ones((4, 2, 3), np.float32), "w")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    return model.SerializeToString(deterministic=True)


BASE = _base_model()


@FUZZ
@given(st.data())
def test_mutated_onnx_bytes(data):
    raw = bytearray(BASE)
    for _ in range(data.draw(st.integers(1, 3))):
        kind = data.draw(st.sampled_from(["truncate", "flip", "splice"]))
        at = data.draw(st.integers(0, max(len(raw) - 1, 0)))
        if kind == "truncate":
            raw = raw[:at]
        elif kind == "flip" and raw:
            raw[at] ^= data.draw(st.integers(1, 255))
        else:
            raw[at:at] = data.draw(st.binary(min_size=1, max_size=8))
    run_file("onnx bytes", bytes(raw), "m.onnx")


#: Operators of one input and one output (shape-preserving or not), rated and unrated.
UNARY_OPS = ["Relu", "Softmax", "Sigmoid", "Identity", "Det", "NonZero", "Flatten",
             "GlobalAveragePool", "ReduceSum", "Hardmax", "Shape", "Size"]
DIMS = st.one_of(st.integers(1, 4), st.sampled_from(["N", "seq", ""]))


@FUZZ
@given(ops=st.lists(st.one_of(st.sampled_from(UNARY_OPS), st.just("custom")), min_size=1,
                    max_size=4),
       shape=st.lists(DIMS, min_size=0, max_size=4),
       opset=st.integers(1, 35), ir=st.integers(1, 15))
def test_generated_onnx_models(ops, shape, opset, ir):
    nodes, previous = [], "x"
    for k, op in enumerate(ops):
        domain = "fuzz.custom" if op == "custom" else ""
        nodes.append(helper.make_node("Op" if op == "custom" else op, [previous], [f"t{k}"],
                                      name=f"n{k}", domain=domain))
        previous = f"t{k}"
    dims = [d if d != "" else None for d in shape]
    graph = helper.make_graph(nodes, "gen",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, dims)],
                              [helper.make_tensor_value_info(previous, TensorProto.FLOAT, None)])
    opsets = [helper.make_opsetid("", opset), helper.make_opsetid("fuzz.custom", 1)]
    model = helper.make_model(graph, opset_imports=opsets)
    model.ir_version = ir
    run_file("onnx models", model.SerializeToString(), "gen.onnx")
