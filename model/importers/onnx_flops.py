"""FLOPs of ONNX operators: one documented rule per operator type.

A multiply-add counts **2 FLOPs** (one multiply, one add), the convention of
graph.json's ``flops`` field; the published "4.1 G" of ResNet-50 counts
multiply-adds once, so it is 8.2 GFLOPs here. Counts are per sample, where a
sample is one inference of the model at the imported shapes (with
``--batch N``, a batch of N inputs). ``out`` is the number of elements of the
first output, ``in`` of the first input.

========================================  =====================================================
operator types                            FLOPs
========================================  =====================================================
Conv, ConvInteger, QLinearConv            ``2 * out * (C_in / group) * prod(kernel)``, plus
                                          ``out`` with a bias
ConvTranspose                             ``2 * in * (C_out / group) * prod(kernel)``, plus
                                          ``out`` with a bias
Gemm                                      ``2 * M * N * K``, plus ``M * N`` with ``C``
MatMul, MatMulInteger, QLinearMatMul      ``2 * out * K`` (K the shared axis; batched and
                                          broadcast MatMuls, e.g. attention's ``Q K^T`` and
                                          ``P V``, count every batch)
Einsum                                    ``2 * prod(size of every index)`` when an index is
                                          summed, else ``out``
Attention (opset 23)                      ``rows * S_kv * (2 * d_qk + 5 + 2 * d_v)``, rows =
                                          ``B * heads * S_q``: ``Q K^T``, softmax, ``P V``
Add, Sub, Mul, Div, Pow, Max, Min, Sum,   ``(inputs - 1) * out`` (one operation per pair)
Mod, PRelu, comparisons, logic, bitwise
Mean                                      ``inputs * out`` (the adds and one divide)
unary element-wise (Relu, Sigmoid, Tanh,  ``out`` (one per element, transcendental or not)
Exp, Erf, Gelu, Clip, Cast, Where, ...)
MaxPool, AveragePool, LpPool              ``out * prod(kernel_shape)``
GlobalAveragePool, GlobalMaxPool,         ``in``
GlobalLpPool
BatchNormalization                        ``2 * out`` (inference: ``x * a + b`` with ``a``,
                                          ``b`` folded from the statistics)
LayerNormalization, InstanceNormalization ``8 * out`` (mean 1, variance 3, normalise 2,
GroupNormalization,                       scale and shift 2 per element)
MeanVarianceNormalization
RMSNormalization                          ``4 * out`` (square, sum, scale by the root, weight)
LpNormalization                           ``3 * out``
LRN                                       ``(2 * size + 4) * out`` (the window's squares
                                          summed, then bias, scale, power and divide)
Softmax, LogSoftmax                       ``5 * out`` (max, subtract, exp, sum, divide)
ReduceSum, ReduceMean, ReduceMax,         ``in``
ReduceMin, ReduceProd, ReduceL1,
ArgMax, ArgMin, CumSum
ReduceSumSquare, ReduceL2,                ``2 * in``
ReduceLogSum, ReduceLogSumExp
data movement (Reshape, Transpose,        0
Concat, Slice, Gather, Pad, Dropout, ...)
anything else                             unknown: the node has no ``flops``, and the import
                                          warns once per operator type
========================================  =====================================================
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable

__all__ = ["OpShapes", "FLOP_RULES", "count_flops"]

Shape = tuple[int, ...]


@dataclass(frozen=True)
class OpShapes:
    """What a FLOP rule sees of one operator: its shapes and attributes.

    ``inputs``/``outputs`` hold one shape per slot (None for an absent optional input).
    """

    inputs: tuple[Shape | None, ...]
    outputs: tuple[Shape | None, ...]
    attrs: dict[str, Any]

    def size(self, shape: Shape | None) -> int:
        return math.prod(shape) if shape is not None else 0

    @property
    def out(self) -> int:
        return self.size(self.outputs[0]) if self.outputs else 0

    @property
    def inp(self) -> int:
        return self.size(self.inputs[0]) if self.inputs else 0

    def has(self, slot: int) -> bool:
        return slot < len(self.inputs) and self.inputs[slot] is not None


def _conv(weight: int, bias: int) -> Callable[[OpShapes], float]:
    def rule(op: OpShapes) -> float:
        w = op.inputs[weight] or ()
        return 2.0 * op.out * math.prod(w[1:]) + (op.out if op.has(bias) else 0)
    return rule


def _conv_transpose(op: OpShapes) -> float:
    w = op.inputs[1] or ()
    return 2.0 * op.inp * math.prod(w[1:]) + (op.out if op.has(2) else 0)


def _gemm(op: OpShapes) -> float:
    a, b = op.inputs[0] or (1, 1), op.inputs[1] or (1, 1)
    m, k = (a[1], a[0]) if op.attrs.get("transA") else (a[0], a[1])
    n = b[0] if op.attrs.get("transB") else b[1]
    return 2.0 * m * n * k + (m * n if op.has(2) else 0)


def _matmul(op: OpShapes) -> float:
    a = op.inputs[0] or (1,)
    return 2.0 * max(op.out, 1) * (a[-1] if a else 1)


def _einsum(op: OpShapes) -> float:
    """Every index's size from the operands; summed indices are the ones not in the output."""
    equation = str(op.attrs.get("equation", "")).replace(" ", "")
    terms, _, result = equation.partition("->")
    sizes: dict[str, int] = {}
    for term, shape in zip(terms.split(","), op.inputs):
        letters = [c for c in term if c.isalpha()]
        if shape is None or "." in term or len(letters) != len(shape):
            return 2.0 * op.out      # ellipsis: count the output, as if one index is summed
        sizes.update(zip(letters, shape))
    if "->" not in equation:
        result = "".join(sorted(c for c in sizes if terms.count(c) == 1))
    summed = set(sizes) - set(result)
    return (2.0 if summed else 1.0) * math.prod(sizes.values())


def _attention(op: OpShapes) -> float:
    """Opset 23 Attention: ``rows = B * heads * S_q`` query rows, each against ``S_kv`` keys."""
    q, k, v = (op.inputs[i] or (1,) for i in range(3))
    q_heads = int(op.attrs.get("q_num_heads") or 1) if len(q) == 3 else 1
    kv_heads = int(op.attrs.get("kv_num_heads") or 1) if len(v) == 3 else 1
    d, dv = q[-1] // q_heads, v[-1] // kv_heads
    keys = k[-2] if len(k) == 4 else k[1] if len(k) == 3 else 1
    rows = op.out // max(dv, 1)
    return float(rows * keys * (2 * d + 5 + 2 * dv))


def _pool(op: OpShapes) -> float:
    return float(op.out * math.prod(op.attrs.get("kernel_shape") or (1,)))


def _per_out(factor: float) -> Callable[[OpShapes], float]:
    return lambda op: factor * op.out


def _per_in(factor: float) -> Callable[[OpShapes], float]:
    return lambda op: factor * op.inp


def _pairs(op: OpShapes) -> float:
    return float(max(len([s for s in op.inputs if s is not None]) - 1, 1) * op.out)


def _mean(op: OpShapes) -> float:
    return float(len([s for s in op.inputs if s is not None]) * op.out)


def _lrn(op: OpShapes) -> float:
    return float((2 * int(op.attrs.get("size", 1)) + 4) * op.out)


_UNARY = ("Relu Sigmoid Tanh Exp Log Sqrt Neg Abs Erf Reciprocal Floor Ceil Round Sign Not "
          "Clip LeakyRelu Elu Selu Celu ThresholdedRelu HardSigmoid HardSwish Softplus Softsign "
          "Gelu Mish Sin Cos Tan Asin Acos Atan Sinh Cosh Asinh Acosh Atanh Cast CastLike IsNaN "
          "IsInf BitwiseNot Shrink QuantizeLinear DequantizeLinear Where Swish").split()
_PAIRS = ("Add Sub Mul Div Pow Max Min Sum Mod PRelu Equal Less LessOrEqual Greater "
          "GreaterOrEqual And Or Xor BitShift BitwiseAnd BitwiseOr BitwiseXor").split()
_MOVES = ("Reshape Flatten Squeeze Unsqueeze Transpose Concat Split Slice Gather GatherElements "
          "GatherND Scatter ScatterElements ScatterND Identity Dropout Shape Size Expand Tile Pad "
          "DepthToSpace SpaceToDepth Constant ConstantOfShape Range OneHot Compress Trilu EyeLike "
          "ReverseSequence SplitToSequence ConcatFromSequence SequenceConstruct SequenceAt "
          "SequenceEmpty SequenceInsert SequenceErase SequenceLength Optional OptionalGetElement "
          "OptionalHasElement").split()

#: operator type -> (the documented rule, the count)
FLOP_RULES: dict[str, tuple[str, Callable[[OpShapes], float]]] = {
    "Conv": ("2*out*(C_in/group)*prod(kernel) (+out with bias)", _conv(1, 2)),
    "ConvInteger": ("2*out*(C_in/group)*prod(kernel)", _conv(1, 99)),
    "QLinearConv": ("2*out*(C_in/group)*prod(kernel) (+out with bias)", _conv(3, 8)),
    "ConvTranspose": ("2*in*(C_out/group)*prod(kernel) (+out with bias)", _conv_transpose),
    "Gemm": ("2*M*N*K (+M*N with C)", _gemm),
    "MatMul": ("2*out*K", _matmul),
    "MatMulInteger": ("2*out*K", _matmul),
    "QLinearMatMul": ("2*out*K", _matmul),
    "Einsum": ("2*prod(index sizes) when an index is summed, else out", _einsum),
    "Attention": ("rows*S_kv*(2*d_qk + 5 + 2*d_v), rows = B*heads*S_q", _attention),
    "Mean": ("inputs*out", _mean),
    "MaxPool": ("out*prod(kernel_shape)", _pool),
    "AveragePool": ("out*prod(kernel_shape)", _pool),
    "LpPool": ("out*prod(kernel_shape)", _pool),
    "GlobalAveragePool": ("in", _per_in(1)),
    "GlobalMaxPool": ("in", _per_in(1)),
    "GlobalLpPool": ("in", _per_in(1)),
    "BatchNormalization": ("2*out", _per_out(2)),
    "LayerNormalization": ("8*out", _per_out(8)),
    "InstanceNormalization": ("8*out", _per_out(8)),
    "GroupNormalization": ("8*out", _per_out(8)),
    "MeanVarianceNormalization": ("8*out", _per_out(8)),
    "RMSNormalization": ("4*out", _per_out(4)),
    "LpNormalization": ("3*out", _per_out(3)),
    "LRN": ("(2*size+4)*out", _lrn),
    "Softmax": ("5*out", _per_out(5)),
    "LogSoftmax": ("5*out", _per_out(5)),
    **{name: ("in", _per_in(1)) for name in
       "ReduceSum ReduceMean ReduceMax ReduceMin ReduceProd ReduceL1 ArgMax ArgMin CumSum".split()},
    **{name: ("2*in", _per_in(2)) for name in
       "ReduceSumSquare ReduceL2 ReduceLogSum ReduceLogSumExp".split()},
    **{name: ("out", _per_out(1)) for name in _UNARY},
    **{name: ("(inputs-1)*out", _pairs) for name in _PAIRS},
    **{name: ("0 (data movement)", _per_out(0)) for name in _MOVES},
}


def count_flops(op_type: str, domain: str, op: OpShapes) -> tuple[float | None, str | None]:
    """``(FLOPs, rule)`` of one operator, or ``(None, None)`` when no rule covers it.

    Only the standard domain (``""`` / ``ai.onnx``) has rules.

    Examples
    --------
    >>> conv = OpShapes(((1, 3, 224, 224), (64, 3, 7, 7), (64,)), ((1, 64, 112, 112),), {})
    >>> count_flops("Conv", "", conv)
    (236830720.0, '2*out*(C_in/group)*prod(kernel) (+out with bias)')
    >>> qk = OpShapes(((1, 12, 128, 64), (1, 12, 64, 128)), ((1, 12, 128, 128),), {})
    >>> count_flops("MatMul", "", qk)[0] == 2 * 12 * 128 * 128 * 64
    True
    >>> count_flops("Foo", "my.domain", qk)
    (None, None)
    """
    if domain not in ("", "ai.onnx") or op_type not in FLOP_RULES:
        return None, None
    rule, count = FLOP_RULES[op_type]
    return float(count(op)), rule
