"""Importer for ONNX models (``--format onnx``, recognised by content).

The model is read with the ``onnx`` package without its weights' bytes
(``load_external_data=False``; initialisers larger than
:data:`KEEP_DATA_ELEMENTS` elements lose their data before shape inference:
their dtype and shape are all the importer needs), checked with
``onnx.checker``, its symbolic dimensions fixed (``--batch``, ``--dim``) and
its shapes inferred with ``onnx.shape_inference`` (with data propagation, so
shapes computed by ``Shape``/``Gather``/``Concat`` chains are known). Then:

- every operator is a node with ``unit = "pcu"``, ``op`` its operator type
  (``domain.Type`` outside the standard domain), ``flops`` per sample from the
  rule of its type (:mod:`model.importers.onnx_flops`; a multiply-add counts 2)
  and ``attrs`` ``{"onnx_name", "flop_rule", "shape"}`` (shape of its first
  output). An operator type without a rule has no ``flops``; the import warns
  once per such type (``graph.attrs["import_warnings"]``, printed by the
  command line) and goes on;
- every initialiser and every graph input an operator reads is a stored tensor
  with ``unit = "pmu"``, ``op`` ``"initializer"`` or ``"input"`` and
  ``attrs.state_bytes`` = elements x dtype size. The output of a ``Constant``
  or of a ``ConstantOfShape`` of constants is a stored tensor too
  (``op = "constant"``; the "light" models shipped with onnx store their
  weights this way), and constants only those read are dropped;
- every tensor an operator or stored tensor produces and operators read is one
  net (``net`` = the tensor's name) with one edge per reading operator,
  ``bytes`` = elements x dtype size, ``bandwidth`` = bytes / the largest
  tensor's bytes (floored at 1e-6). Graph outputs and tensors nobody reads
  add no edges.

A sample is one inference at the imported shapes: with ``--batch N`` the
``flops`` and ``bytes`` are those of a batch of N. ``--batch`` fixes every
symbolic or unset *first* dimension of a graph input; any other symbolic
dimension needs ``--dim NAME=VALUE``. A dimension still unknown after inference
is an error naming the tensor, its producer and the fix; so is a dimension of
size 0 in a graph input or in an operator's floating-point output (no data to
compute on: the estimate would be a rate for no work). An empty initialiser is a
parameter (a Resize's ``roi``) and is kept. Subgraphs of ``If``/``Loop``/``Scan``
are not expanded (the operator is one node without a FLOP rule).

Errors name the file and the fix: a file protobuf cannot parse (truncated,
not ONNX), an opset or IR version newer than the installed ``onnx`` reads, the
checker's reason for an invalid model, a shape inference error.
"""

from __future__ import annotations

import os
from collections import Counter
from dataclasses import dataclass, field
from typing import Mapping

import numpy as np
import onnx
from google.protobuf.message import DecodeError
from onnx import checker, helper, shape_inference

from model.errors import InputError
from model.graph import Edge, Graph, Node
from model.graphjson import validate_graph
from model.importers.msr_dnn import MIN_BANDWIDTH
from model.importers.onnx_flops import OpShapes, count_flops

__all__ = ["looks_like_onnx", "load_onnx", "MAX_ONNX_BYTES", "KEEP_DATA_ELEMENTS",
           "tensor_bytes"]

#: The largest .onnx file read (protobuf's 2 GiB limit; larger models keep weights outside).
MAX_ONNX_BYTES = 2**31 - 1

#: Initialisers with more elements lose their data before shape inference (shape tensors keep it).
KEEP_DATA_ELEMENTS = 1024

_STANDARD = ("", "ai.onnx")
_FOLDED = ("Constant", "ConstantOfShape")


def _dim_fix(name: str) -> str:
    return f"give its size with --dim {name}=VALUE (e.g. --dim {name}=128; repeatable)"

Shape = tuple[int, ...]


def looks_like_onnx(path: str | os.PathLike) -> bool:
    """True for a file that starts as a serialised ONNX ModelProto (field 1, ``ir_version``,
    is byte ``0x08``) or is named ``*.onnx`` and does not start like JSON or markup. Only
    a regular file is opened (a named pipe would wait for a writer)."""
    if not os.path.isfile(path):
        return False
    try:
        with open(path, "rb") as stream:
            head = stream.read(1)
    except OSError:
        return False
    if head == b"\x08":
        return True
    return str(path).lower().endswith(".onnx") and head not in (b"{", b"[", b"<", b"\xef")


def tensor_bytes(elem_type: int, shape: Shape) -> float:
    """Bytes of a tensor: elements x the dtype's size (4-bit types count half a byte).

    Examples
    --------
    >>> FLOAT, INT4 = onnx.TensorProto.FLOAT, onnx.TensorProto.INT4
    >>> tensor_bytes(FLOAT, (1, 64, 56, 56)), tensor_bytes(INT4, (3,))
    (802816.0, 1.5)
    """
    count = float(np.prod(shape, dtype=np.float64)) if shape else 1.0
    name = onnx.TensorProto.DataType.Name(elem_type)
    if name.endswith("4") and name[:-1] in ("INT", "UINT") or "FLOAT4" in name:
        return count / 2
    if name in ("STRING", "UNDEFINED"):
        return count * 8.0
    return count * helper.tensor_dtype_to_np_dtype(elem_type).itemsize


@dataclass
class _Tensors:
    """Every tensor's dtype and shape, and which are constants."""

    types: dict[str, tuple[int, Shape | None]] = field(default_factory=dict)
    initializers: set[str] = field(default_factory=set)
    inputs: list[str] = field(default_factory=list)


def load_onnx(path: str | os.PathLike, name: str, batch: int = 1,
              dims: Mapping[str, int] | None = None) -> Graph:
    """Read an ONNX model as a validated :class:`Graph` (see the module docstring).

    Parameters
    ----------
    path : the .onnx file (external weight files are not read).
    name : the graph's name.
    batch : the size of every symbolic first dimension of a graph input.
    dims : sizes of named symbolic dimensions (``--dim NAME=VALUE``); they win over ``batch``.

    Raises
    ------
    InputError
        If the file is not a readable, valid ONNX model or a dimension stays unknown.
    """
    file = str(path)
    _check(file)               # first: its copy of the model is freed before ours is read
    model = _read(file)
    _check_versions(model, file)
    _refuse_names_not_text(model.graph, file)
    _refuse_empty_inputs(model.graph, file)
    _drop_large_data(model.graph)
    _fix_dims(model.graph, file, batch, dict(dims or {}))
    try:
        model = shape_inference.infer_shapes(model, check_type=False, strict_mode=True,
                                             data_prop=True)
    except (onnx.shape_inference.InferenceError, onnx.checker.ValidationError, ValueError,
            RuntimeError) as exc:
        raise InputError(file, "", f"ONNX shape inference failed: {_first_line(exc)}",
                         "correct the model's shapes (onnxruntime runs it?)") from None
    graph = _build(model, file, name)
    graph.attrs.update({"batch": batch, "dims": dict(sorted((dims or {}).items())),
                        "onnx_ir_version": model.ir_version,
                        "onnx_opsets": {o.domain or "ai.onnx": o.version
                                        for o in model.opset_import}})
    validate_graph(graph, file)
    return graph


def _first_line(exc: Exception) -> str:
    text = " ".join(str(exc).split())
    return text[:400]


def _stat(file: str) -> None:
    try:
        size = os.stat(file).st_size
        if not os.path.isfile(file):
            raise InputError(file, "", "not a regular file", "give the path of a .onnx file")
    except OSError as exc:
        raise InputError(file, "", f"cannot read the file ({exc.strerror})",
                         "check the path") from None
    if size == 0:
        raise InputError(file, "", "empty file", "give a complete .onnx model file")
    if size > MAX_ONNX_BYTES:
        raise InputError(file, "", f"{size:,} bytes is above the 2 GiB protobuf limit",
                         "save the model with its weights as external data "
                         "(onnx.save(..., save_as_external_data=True))")


def _read(file: str) -> onnx.ModelProto:
    try:
        # format="protobuf": never guessed from the suffix (a .json file is not read as JSON)
        return onnx.load(file, format="protobuf", load_external_data=False)
    except (DecodeError, RuntimeError, ValueError) as exc:
        raise InputError(file, "", f"not a readable ONNX model (protobuf: {_first_line(exc)})",
                         "check that the file is a complete .onnx file (a download or copy "
                         "cut short?); re-export it from the framework") from None


def _check_versions(model: onnx.ModelProto, file: str) -> None:
    """An IR version or standard opset newer than the installed onnx is refused, named."""
    newest = onnx.defs.onnx_opset_version()
    if model.ir_version > onnx.IR_VERSION:
        raise InputError(file, "ir_version", f"IR version {model.ir_version} is newer than the "
                         f"installed onnx {onnx.__version__} reads (up to {onnx.IR_VERSION})",
                         "re-export the model for an older IR version or upgrade onnx")
    for opset in model.opset_import:
        if opset.domain in _STANDARD and opset.version > newest:
            raise InputError(file, "opset_import", f"opset {opset.version} is newer than the "
                             f"installed onnx {onnx.__version__} reads (up to opset {newest})",
                             f"convert the model to opset {newest} or lower "
                             "(onnx.version_converter.convert_version) or upgrade onnx")


def _check(file: str) -> None:
    """The checker's verdict; a file that does not parse or is too new says so instead."""
    _stat(file)
    try:
        checker.check_model(file)      # by path: external data is looked for beside the file
    except (checker.ValidationError, onnx.shape_inference.InferenceError) as exc:
        reason = _first_line(exc)
    except (ValueError, RuntimeError) as exc:   # e.g. a name that is not UTF-8
        reason = f"{type(exc).__name__}: {_first_line(exc)}"
    else:
        return
    _check_versions(_read(file), file)
    raise InputError(file, "", f"invalid ONNX model (checker: {reason})",
                     "correct the model; onnx.checker.check_model names the same problem")


#: The fix of a graph input's dimension of size 0 (a number in the model: ``--dim`` cannot
#: reach it).
_EMPTY_FIX = ("give the dimension a size of at least 1 and export the model again (where 0 "
              "stands for a size known only at run time, make it a named dimension and give "
              "its size with --dim NAME=VALUE)")


def _refuse_names_not_text(graph: onnx.GraphProto, file: str) -> None:
    """Every name is text: protobuf hands over a name that is not valid UTF-8 as bytes
    (a mutated file passed the checker so, and then broke the id checks)."""
    places = [(f"node {k}", [n.name, n.op_type, *n.input, *n.output])
              for k, n in enumerate(graph.node)]
    places += [(f"graph {kind}", [t.name for t in getattr(graph, kind)])
               for kind in ("input", "output", "initializer", "value_info")]
    for place, names in places:
        for name in names:
            if isinstance(name, bytes):
                raise InputError(file, place, f"the name {name!r} is not valid UTF-8 text",
                                 "re-export the model with names in UTF-8")


def _refuse_empty_inputs(graph: onnx.GraphProto, file: str) -> None:
    """A graph input with a dimension of size 0 brings no data: every count made from it
    (FLOPs, bytes) is 0 and the estimate would be a rate for no work at all. Refused,
    named, before shape inference spreads the 0 to the tensors after it. (An empty
    initialiser is a parameter, e.g. a Resize's unused ``roi``: kept.)"""
    initializers = {t.name for t in graph.initializer}
    for info in graph.input:
        if info.name in initializers or not info.type.tensor_type.HasField("shape"):
            continue
        for axis, dim in enumerate(info.type.tensor_type.shape.dim):
            if dim.HasField("dim_value") and dim.dim_value == 0:
                raise InputError(file, f"graph input {info.name!r}", f"dimension {axis} has "
                                 "size 0: the tensor holds no data", _EMPTY_FIX)


def _refuse_empty_output(build: "_Builder", tensor: str, shape: Shape, producer: str) -> None:
    """An operator's output of numbers to compute on (floating point) with a dimension of
    size 0, e.g. a Slice of nothing or a MatMul with an empty weight: the operators after
    it do no work. Integer outputs may be empty by design (the shape of a scalar)."""
    elem, _ = build.tensors.types.get(tensor, (0, None))
    kind = onnx.TensorProto.DataType.Name(elem)
    if 0 not in shape or not (kind.startswith(("FLOAT", "BFLOAT", "COMPLEX")) or
                              kind == "DOUBLE"):
        return
    axis = shape.index(0)
    names = _dim_names(build.graph, tensor)
    name = names[axis] if axis < len(names) else ""
    what = f"dimension {axis} ({name})" if name else f"dimension {axis}"
    raise InputError(build.file, f"tensor {tensor!r}", f"{what} has size 0 after shape "
                     f"inference (produced by {producer}): the tensor holds no data",
                     _dim_fix(name) if name else "correct the operator that makes it empty "
                     "(e.g. a Slice of 0 elements, a weight with a dimension of size 0) or "
                     "remove it")


def _drop_large_data(graph: onnx.GraphProto) -> None:
    """Clear the data of large initialisers (dims and dtype stay): inference needs no weights."""
    for tensor in graph.initializer:
        if int(np.prod(tensor.dims, dtype=np.float64)) > KEEP_DATA_ELEMENTS:
            for name in ("raw_data", "float_data", "int32_data", "int64_data", "double_data",
                         "uint64_data", "string_data"):
                tensor.ClearField(name)
            del tensor.external_data[:]
            tensor.data_location = onnx.TensorProto.DEFAULT


def _fix_dims(graph: onnx.GraphProto, file: str, batch: int, dims: dict[str, int]) -> None:
    """Give every symbolic dimension of the declared shapes its size, or refuse, named."""
    initializers = {t.name for t in graph.initializer}
    inputs = {i.name for i in graph.input} - initializers
    declared = [info for info in [*graph.input, *graph.output, *graph.value_info]
                if info.type.HasField("tensor_type") and info.type.tensor_type.HasField("shape")]
    named = {dim.dim_param for info in declared for dim in info.type.tensor_type.shape.dim
             if not dim.HasField("dim_value") and dim.dim_param}
    unused = sorted(set(dims) - named)
    if unused:
        raise InputError("command line", "--dim", f"{file} has no dimension named "
                         f"{', '.join(unused)} (its named dimensions: "
                         f"{', '.join(sorted(named)) or 'none'})", "drop it or correct the name")
    for info in declared:
        is_input = info.name in inputs
        for axis, dim in enumerate(info.type.tensor_type.shape.dim):
            if dim.HasField("dim_value"):
                continue
            size = dims.get(dim.dim_param) if dim.dim_param else None
            if size is None and is_input and axis == 0:
                size = batch
            if size is not None:
                dim.dim_value = size
            elif is_input:
                raise InputError(file, f"graph input {info.name!r}", f"dimension {axis} "
                                 f"({dim.dim_param or 'unnamed'}) has no size",
                                 _dim_fix(dim.dim_param) if dim.dim_param else
                                 "give the model's input a fixed or named size")


def _tensors(graph: onnx.GraphProto, file: str) -> _Tensors:
    found = _Tensors()
    for tensor in graph.initializer:
        found.types[tensor.name] = (tensor.data_type, tuple(int(d) for d in tensor.dims))
        found.initializers.add(tensor.name)
    for info in [*graph.value_info, *graph.output, *graph.input]:
        if info.name in found.initializers or not info.type.HasField("tensor_type"):
            continue
        kind = info.type.tensor_type
        shape = None
        if kind.HasField("shape"):
            shape = tuple(int(d.dim_value) if d.HasField("dim_value") else -1
                          for d in kind.shape.dim)
        found.types[info.name] = (kind.elem_type, shape)
    found.inputs = [i.name for i in graph.input if i.name not in found.initializers]
    return found


def _shape(tensors: _Tensors, file: str, tensor: str, producer: str,
           graph: onnx.GraphProto) -> Shape:
    """A tensor's known shape, or an error naming it, its producer and the fix."""
    _, shape = tensors.types.get(tensor, (0, None))
    if shape is not None and -1 not in shape:
        return shape
    if shape is None:
        raise InputError(file, f"tensor {tensor!r}", f"shape unknown after shape inference "
                         f"(produced by {producer})", "give its shape in the model's value_info "
                         "(e.g. run onnxruntime's symbolic shape inference and save the model)")
    names = _dim_names(graph, tensor)
    axis = shape.index(-1)
    what = f"dimension {axis} ({names[axis]})" if names[axis] else f"dimension {axis}"
    raise InputError(file, f"tensor {tensor!r}", f"{what} is unknown after shape inference "
                     f"(produced by {producer})", _dim_fix(names[axis]) if names[axis] else
                     "it depends on the data: give the model a fixed shape for this tensor")


def _dim_names(graph: onnx.GraphProto, tensor: str) -> list[str]:
    for info in [*graph.value_info, *graph.output, *graph.input]:
        if info.name == tensor:
            return [d.dim_param for d in info.type.tensor_type.shape.dim]
    return []


def _folded(graph: onnx.GraphProto, tensors: _Tensors) -> dict[str, int]:
    """Tensor -> index of the node that makes it from constants (Constant, ConstantOfShape)."""
    constant = set(tensors.initializers)
    folded: dict[str, int] = {}
    for k, node in enumerate(graph.node):
        if node.domain in _STANDARD and node.op_type in _FOLDED and \
                all(not i or i in constant for i in node.input) and len(node.output) == 1:
            folded[node.output[0]] = k
            constant.add(node.output[0])
    return folded


@dataclass
class _Builder:
    """The graph under construction: node ids, each tensor's producer and readers."""

    file: str
    graph: onnx.GraphProto
    tensors: _Tensors
    nodes: list[Node] = field(default_factory=list)
    used: set[str] = field(default_factory=set)
    producer: dict[str, str] = field(default_factory=dict)     # tensor -> node id
    readers: dict[str, list[str]] = field(default_factory=dict)  # tensor -> operator ids
    unrated: Counter = field(default_factory=Counter)
    read: set[str] = field(default_factory=set)                  # tensors some node reads

    def unique(self, base: str) -> str:
        node_id, k = base or "node", 1
        while node_id in self.used:
            k += 1
            node_id = f"{base}~{k}"
        self.used.add(node_id)
        return node_id


def _build(model: onnx.ModelProto, file: str, name: str) -> Graph:
    graph = model.graph
    build = _Builder(file, graph, _tensors(graph, file))
    build.read = {t for node in graph.node for t in node.input}
    folded = _folded(graph, build.tensors)
    folded_nodes = set(folded.values())
    for k, node in enumerate(graph.node):
        if k not in folded_nodes:
            _add_operator(build, k, node)
    operators = len(build.nodes)
    _add_stored(build, folded)
    edges = _edges(build)
    weights = sum(n.attrs["state_bytes"] for n in build.nodes[operators:] if n.op != "input")
    rated = [n.flops for n in build.nodes if n.flops is not None]
    attrs = {"source_format": "onnx", "operators": operators,
             "total_flops": float(sum(rated)), "weight_bytes": float(weights),
             "unrated_ops": dict(sorted(build.unrated.items()))}
    if build.unrated:
        attrs["import_warnings"] = [
            f"{file}: no FLOP rule for operator type {op} ({count} node"
            f"{'s' if count > 1 else ''}): imported without flops"
            for op, count in sorted(build.unrated.items())]
    return Graph(name, build.nodes, edges, attrs)


def _op_name(node: onnx.NodeProto) -> str:
    return node.op_type if node.domain in _STANDARD else f"{node.domain}.{node.op_type}"


def _add_operator(build: _Builder, k: int, node: onnx.NodeProto) -> None:
    op = _op_name(node)
    node_id = build.unique(node.name or f"{node.op_type}_{k}")
    where = f"{op} node {node_id!r}"
    outputs = tuple(_shape(build.tensors, build.file, t, where, build.graph)
                    if t and (slot == 0 or t in build.read) else None
                    for slot, t in enumerate(node.output))
    for tensor, shape in zip(node.output, outputs):
        if shape is not None:
            _refuse_empty_output(build, tensor, shape, where)
    inputs = tuple(_shape(build.tensors, build.file, t, f"the input of {where}", build.graph)
                   if t else None for t in node.input)
    attrs = {a.name: helper.get_attribute_value(a) for a in node.attribute
             if a.type in (onnx.AttributeProto.INT, onnx.AttributeProto.INTS,
                           onnx.AttributeProto.FLOAT, onnx.AttributeProto.STRING)}
    attrs = {key: (value.decode("utf-8", "replace") if isinstance(value, bytes) else value)
             for key, value in attrs.items()}
    flops, rule = count_flops(node.op_type, node.domain, OpShapes(inputs, outputs, attrs))
    if rule is None:
        build.unrated[op] += 1
    first = next((s for s in outputs if s is not None), ())
    build.nodes.append(Node(node_id, op=op, unit="pcu", flops=flops,
                            attrs={"onnx_name": node.name, "flop_rule": rule,
                                   "shape": list(first)}))
    for tensor in node.output:
        if tensor:
            build.producer[tensor] = node_id
    for tensor in dict.fromkeys(t for t in node.input if t):
        build.readers.setdefault(tensor, []).append(node_id)


def _add_stored(build: _Builder, folded: dict[str, int]) -> None:
    """A pmu node for every input, initialiser or folded constant an operator reads."""
    tensors = build.tensors
    order = [*tensors.inputs, *(t.name for t in build.graph.initializer), *folded]
    for tensor in dict.fromkeys(order):
        if tensor not in build.readers or tensor in build.producer:
            continue
        kind = ("input" if tensor in tensors.inputs else
                "constant" if tensor in folded else "initializer")
        elem, _ = tensors.types.get(tensor, (0, None))
        shape = _shape(tensors, build.file, tensor, f"the {kind}", build.graph)
        node_id = build.unique(tensor)
        build.nodes.append(Node(node_id, op=kind, unit="pmu", attrs={
            "state_bytes": tensor_bytes(elem, shape), "shape": list(shape),
            "dtype": onnx.TensorProto.DataType.Name(elem).lower()}))
        build.producer[tensor] = node_id


def _edges(build: _Builder) -> list[Edge]:
    """One net per tensor read by operators: its producer to every reader."""
    nets = []
    for tensor, readers in build.readers.items():
        if tensor not in build.producer:
            raise InputError(build.file, f"tensor {tensor!r}", "read by an operator but no "
                             "operator, input or initialiser makes it",
                             "correct the model (onnx.checker.check_model)")
        elem, shape = build.tensors.types.get(tensor, (0, None))
        size = tensor_bytes(elem, shape or ())
        nets.append((tensor, build.producer[tensor], readers, size))
    widest = max((size for *_, size in nets), default=0.0) or 1.0
    return [Edge(src, dst, bandwidth=max(size / widest, MIN_BANDWIDTH), bytes=size, net=tensor)
            for tensor, src, readers, size in nets for dst in readers]
