"""Write the ONNX examples: a BERT-base encoder layer and a GPT-2 (small) block.

    python examples/make_onnx_examples.py      # writes examples/*.onnx next to this file

Real shapes: hidden 768, 12 heads of 64, FFN 3072 (BERT-base, GPT-2 small). The
sequence length and the batch are symbolic (``seq``, ``batch``): map with
``--dim seq=128`` (and ``--batch N``). The weights are ``ConstantOfShape``
nodes (a shape, no data), the way the onnx package's "light" models keep their
weights, so the files stay a few kB; the importer turns each into a stored
tensor with the weight's bytes. The output is deterministic (same bytes every
run), and ``tests/model/test_onnx.py`` checks that the committed files match.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HIDDEN, HEADS, HEAD, FFN = 768, 12, 64, 3072
OPSET = 20          # Gelu is in the standard domain from opset 20
HERE = Path(__file__).resolve().parent


class _Net:
    """Nodes and initialisers of one graph under construction."""

    def __init__(self, prefix: str):
        self.prefix, self.nodes, self.inits = prefix, [], []

    def op(self, op_type: str, inputs: list[str], out: str, **attrs) -> str:
        name = f"{self.prefix}{out}"
        self.nodes.append(helper.make_node(op_type, inputs, [name], name=name, **attrs))
        return name

    def const(self, name: str, values, dtype=np.int64) -> str:
        full = f"{self.prefix}{name}"
        self.inits.append(numpy_helper.from_array(np.array(values, dtype=dtype), full))
        return full

    def weight(self, name: str, shape: tuple[int, ...]) -> str:
        """A float32 weight of ``shape``: ConstantOfShape of a shape initialiser."""
        shape_name = self.const(f"{name}__shape", list(shape))
        value = helper.make_tensor("value", TensorProto.FLOAT, [1], [0.02])
        return self.op("ConstantOfShape", [shape_name], name, value=value)

    def linear(self, x: str, name: str, n_in: int, n_out: int) -> str:
        y = self.op("MatMul", [x, self.weight(f"{name}.weight", (n_in, n_out))], f"{name}.mm")
        return self.op("Add", [y, self.weight(f"{name}.bias", (n_out,))], name)

    def layer_norm(self, x: str, name: str) -> str:
        return self.op("LayerNormalization", [x, self.weight(f"{name}.gamma", (HIDDEN,)),
                                              self.weight(f"{name}.beta", (HIDDEN,))],
                       name, axis=-1, epsilon=1e-5)

    def heads(self, x: str, name: str, shape: str, key: bool = False) -> str:
        """[B, S, 768] -> [B, 12, S, 64] ([B, 12, 64, S] for keys)."""
        split = self.op("Reshape", [x, shape], f"{name}.split")
        return self.op("Transpose", [split], f"{name}.t",
                       perm=[0, 2, 3, 1] if key else [0, 2, 1, 3])

    def attention(self, q: str, k: str, v: str, bias: str | None) -> str:
        """Scaled dot-product attention of 12 heads and the output projection."""
        shape = self.const("heads_shape", [0, 0, HEADS, HEAD])
        qh, kh = self.heads(q, "q", shape), self.heads(k, "k", shape, key=True)
        vh = self.heads(v, "v", shape)
        scores = self.op("MatMul", [qh, kh], "scores")
        scaled = self.op("Mul", [scores, self.const("scale", 1 / np.sqrt(HEAD), np.float32)],
                         "scores.scaled")
        if bias is not None:
            scaled = self.op("Add", [scaled, bias], "scores.masked")
        probs = self.op("Softmax", [scaled], "probs", axis=-1)
        ctx = self.op("MatMul", [probs, vh], "context")
        merged = self.op("Transpose", [ctx], "context.t", perm=[0, 2, 1, 3])
        flat = self.op("Reshape", [merged, self.const("merge_shape", [0, 0, HIDDEN])],
                       "context.merged")
        return self.linear(flat, "attn.out", HIDDEN, HIDDEN)

    def ffn(self, x: str, approximate: str) -> str:
        up = self.linear(x, "ffn.up", HIDDEN, FFN)
        act = self.op("Gelu", [up], "ffn.gelu", approximate=approximate)
        return self.linear(act, "ffn.down", FFN, HIDDEN)


def _model(net: _Net, name: str, inputs, output: str, doc: str) -> onnx.ModelProto:
    out = helper.make_tensor_value_info(output, TensorProto.FLOAT, ["batch", "seq", HIDDEN])
    graph = helper.make_graph(net.nodes, name, inputs, [out], initializer=net.inits, doc_string=doc)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)],
                              producer_name="rdamap examples/make_onnx_examples.py")
    model.ir_version = 10
    onnx.checker.check_model(model)
    return model


def bert_encoder_layer() -> onnx.ModelProto:
    """BERT-base encoder layer (post-LN): self-attention, add & norm, GELU FFN, add & norm."""
    net = _Net("")
    x = "hidden_states"
    mask = "attention_bias"     # additive mask, 0 or -10000, broadcast over heads and queries
    q, k, v = (net.linear(x, f"attn.{p}", HIDDEN, HIDDEN) for p in "qkv")
    attn = net.attention(q, k, v, mask)
    h = net.layer_norm(net.op("Add", [attn, x], "attn.residual"), "attn.norm")
    y = net.layer_norm(net.op("Add", [net.ffn(h, "none"), h], "ffn.residual"), "ffn.norm")
    inputs = [helper.make_tensor_value_info(x, TensorProto.FLOAT, ["batch", "seq", HIDDEN]),
              helper.make_tensor_value_info(mask, TensorProto.FLOAT, ["batch", 1, 1, "seq"])]
    return _model(net, "bert_encoder_layer", inputs, y,
                  "BERT-base encoder layer: hidden 768, 12 heads, FFN 3072")


def gpt2_block() -> onnx.ModelProto:
    """GPT-2 small block (pre-LN): fused QKV projection, causal attention, GELU (tanh) MLP."""
    net = _Net("")
    x = "hidden_states"
    causal = "causal_bias"      # additive causal mask [1, 1, seq, seq]
    ln1 = net.layer_norm(x, "ln_1")
    qkv = net.linear(ln1, "attn.c_attn", HIDDEN, 3 * HIDDEN)
    parts = [f"attn.{p}" for p in "qkv"]
    net.nodes.append(helper.make_node("Split", [qkv, net.const("qkv_split", [HIDDEN] * 3)], parts,
                                      name="attn.split", axis=-1))
    attn = net.attention(*parts, causal)
    h = net.op("Add", [x, attn], "attn.residual")
    y = net.op("Add", [h, net.ffn(net.layer_norm(h, "ln_2"), "tanh")], "mlp.residual")
    inputs = [helper.make_tensor_value_info(x, TensorProto.FLOAT, ["batch", "seq", HIDDEN]),
              helper.make_tensor_value_info(causal, TensorProto.FLOAT, [1, 1, "seq", "seq"])]
    return _model(net, "gpt2_block", inputs, y,
                  "GPT-2 small block: hidden 768, 12 heads, MLP 3072, causal attention")


EXAMPLES = {"bert_encoder_layer.onnx": bert_encoder_layer, "gpt2_block.onnx": gpt2_block}


def main(out: Path = HERE) -> list[Path]:
    written = []
    for name, build in EXAMPLES.items():
        path = out / name
        path.write_bytes(build().SerializeToString(deterministic=True))
        written.append(path)
    return written


if __name__ == "__main__":
    for path in main(Path(sys.argv[1]) if len(sys.argv) > 1 else HERE):
        print(f"wrote {path} ({path.stat().st_size:,} bytes)")
