"""ONNX files through the command line (in process): mapped and checked, or exit 2 with a
message."""

from __future__ import annotations

import json
from pathlib import Path

import onnx
import pytest
from onnx import TensorProto, helper

from pipeline.run import main

REPO = Path(__file__).resolve().parents[2]
LIGHT = Path(onnx.__file__).parent / "backend" / "test" / "data" / "light"


def run(args, capsys):
    code = main([str(a) for a in args])
    captured = capsys.readouterr()
    return code, captured.err


def tiny_model(tmp_path, op="Relu", opset=17, shape=(2, 8), out=(2, 8)) -> Path:
    nodes = [helper.make_node(op, ["x"], ["a"], name="first"),
             helper.make_node("Add", ["a", "a"], ["y"], name="add")]
    graph = helper.make_graph(nodes, "tiny", [helper.make_tensor_value_info("x", TensorProto.FLOAT,
                                                                              list(shape))],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, list(out))])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8
    path = tmp_path / "tiny.onnx"
    onnx.save(model, path)
    return path


@pytest.mark.parametrize("preset", ["plasticine", "sn10"])
def test_a_light_model_maps_and_passes_the_checker(tmp_path, capsys, preset):
    path = LIGHT / "light_zfnet512.onnx"
    if not path.exists():
        pytest.skip("the installed onnx wheel has no light_zfnet512.onnx")
    code, err = run([path, "--hardware", preset, "-o", tmp_path / "out", "--time-limit", "15",
                     "--no-pictures", "--quiet"], capsys)
    assert code == 0, err
    mapping = json.loads((tmp_path / "out" / "mapping.json").read_text())
    assert mapping["status"] == "mapped" and mapping["metrics"]["sections"] >= 1
    assert len(mapping["placement"]) >= 40          # every node placed (plus banks and buffers)


def test_an_op_without_a_rule_maps_with_one_warning(tmp_path, capsys):
    code, err = run([tiny_model(tmp_path, op="Det", shape=(2, 3, 3), out=(2,)),
                     "--hardware", "tiny",
                     "-o", tmp_path / "out", "--time-limit", "10", "--no-pictures"], capsys)
    assert code == 0, err
    assert err.count("warning:") == 1 and "no FLOP rule for operator type Det (1 node)" in err


def test_truncated_file_exits_2(tmp_path, capsys):
    cut = tmp_path / "cut.onnx"
    cut.write_bytes((REPO / "examples" / "gpt2_block.onnx").read_bytes()[:1500])
    code, err = run([cut, "-o", tmp_path / "out"], capsys)
    assert code == 2 and "not a readable ONNX model" in err and "Traceback" not in err


def test_unknown_dimension_exits_2_naming_the_fix(tmp_path, capsys):
    code, err = run([REPO / "examples" / "bert_encoder_layer.onnx", "-o", tmp_path / "out"],
                    capsys)
    assert code == 2
    assert "graph input 'hidden_states': dimension 1 (seq) has no size" in err
    assert "--dim seq=VALUE" in err


def test_unreadable_opset_exits_2(tmp_path, capsys):
    path = tiny_model(tmp_path, opset=onnx.defs.onnx_opset_version() + 1)
    code, err = run([path, "-o", tmp_path / "out"], capsys)
    assert code == 2 and "is newer than the installed onnx" in err


@pytest.mark.parametrize("args, message", [
    (["--batch", "0"], "--batch: 0 is not a whole number from 1 to 2^31"),
    (["--dim", "seq"], '--dim: "seq" is not NAME=VALUE'),
    (["--dim", "seq=0"], "--dim seq: 0 is not a whole number"),
    (["--dim", "sequence=8"], "has no dimension named sequence"),
])
def test_bad_batch_or_dim_exits_2(tmp_path, capsys, args, message):
    code, err = run([REPO / "examples" / "gpt2_block.onnx", "-o", tmp_path / "out", *args],
                    capsys)
    assert code == 2 and message in err, err
