"""The input limits: enforced at load, and documented where users look (docs/limits.md,
hardware/README.md) with the same numbers as the code."""

import json
from pathlib import Path

import pytest

from hardware import InputError, load_hardware
from hardware.description import LIMITS as HARDWARE_LIMITS
from model.graphjson import LIMITS as GRAPH_LIMITS
from model.importers import load_graph

REPO = Path(__file__).resolve().parents[2]
CORPUS = REPO / "tests" / "fuzz" / "corpus"
LIMITS_DOC = (REPO / "docs" / "limits.md").read_text()
HARDWARE_DOC = (REPO / "hardware" / "README.md").read_text()

#: limit name -> the table row's field marker (each limit must have a documented row)
GRAPH_ROWS = {"pcu": "node `pcu`", "pmu": "node `pcu`, `pmu`", "latency": "node `latency`",
              "bytes": "edge `bytes`", "depth": "edge `depth`", "distance": "edge `distance`",
              "state_bytes": "`attrs.state_bytes`", "flops": "node `flops`"}
HARDWARE_ROWS = {"rdu_sites": "`array_rows` × `array_cols`", "cgra_pes": "`rows` × `cols`",
                 "arrays_per_side": "`arrays` (each side)", "pmu_bytes": "`pmu_bytes`",
                 "pcu_lanes": "`pcu_lanes`", "pcu_stages": "`pcu_stages`",
                 "width_bits": "`networks.*.width_bits`", "channels": "`networks.*.channels`",
                 "clock_ghz": "`clock_ghz`", "se_tiles": "`tiles`", "link_latency": "`links`",
                 "max_ii": "`max_ii`", "memories_per_tile": "`memories_per_tile`",
                 "memory_width_bits": "`memory_width_bits`", "memory_depth": "`memory_depth`",
                 "max_operands": "`max_operands`",
                 "pcu_flops_per_cycle": "`pcu_flops_per_cycle`",
                 "pmu_bytes_per_cycle": "`pmu_read_bytes_per_cycle`", "hop_cycles": "`hop_cycles`",
                 "dram_bytes_per_s": "`dram_bytes_per_s`", "reconfig_us": "`reconfig_us`",
                 "cgra_registers": "`registers`", "cgra_latency": "`op_latency`"}


def written(limit) -> str:
    """How the tables write a bound: 2^k for large powers of two, else with thousands commas."""
    if isinstance(limit, int) and limit >= 2**16 and limit & (limit - 1) == 0:
        return f"2^{limit.bit_length() - 1}"
    return f"{limit:,g}" if isinstance(limit, float) else f"{limit:,}"


def row(doc: str, marker: str) -> str:
    rows = [line for line in doc.splitlines()
            if line.startswith("|") and marker in line.split("|")[1]]
    assert rows, f"no table row for {marker}"
    return rows[0]


def test_every_graph_limit_is_documented():
    assert set(GRAPH_ROWS) == set(GRAPH_LIMITS)
    for name, marker in GRAPH_ROWS.items():
        assert written(GRAPH_LIMITS[name]) in row(LIMITS_DOC, marker), name


@pytest.mark.parametrize("doc", [HARDWARE_DOC, LIMITS_DOC], ids=["hardware/README", "limits"])
def test_every_hardware_limit_is_documented(doc):
    assert set(HARDWARE_ROWS) == set(HARDWARE_LIMITS)
    for name, marker in HARDWARE_ROWS.items():
        assert written(HARDWARE_LIMITS[name]) in row(doc, marker), name


@pytest.mark.parametrize("name", sorted(p.name for p in CORPUS.glob("*.json")
                                        if p.name != "graph_bom.json"))
def test_corpus_file_is_refused_at_load(name):
    path = CORPUS / name
    with pytest.raises(InputError) as info:
        (load_hardware if name.startswith("hw_") else load_graph)(str(path))
    assert info.value.file == str(path) and info.value.fix


def test_byte_order_mark_is_skipped():
    assert load_graph(str(CORPUS / "graph_bom.json")).node_ids == ["a", "b"]


def pair(**edge) -> dict:
    return {"version": 1, "nodes": [{"id": "a"}, {"id": "b"}],
            "edges": [{"src": "a", "dst": "b", **edge}]}


@pytest.mark.parametrize("field", ["depth", "distance"])
def test_bound_is_inclusive(tmp_path, field):
    path = tmp_path / "g.json"
    path.write_text(json.dumps(pair(**{field: 2**16})))
    assert getattr(load_graph(str(path)).edges[0], field) == 2**16
    path.write_text(json.dumps(pair(**{field: 2**16 + 1})))
    with pytest.raises(InputError, match=r"outside 0 to 2\^16"):
        load_graph(str(path))


@pytest.mark.parametrize("data, where, words", [
    ({"version": True, "nodes": [{"id": "a"}], "edges": []}, "version", "unsupported version"),
    (pair(attrs={"network": "optical"}), "edges[0].attrs.network", 'unknown network "optical"'),
    ({"version": 1, "nodes": [{"id": "a", "attrs": {"state_bytes": -1}}], "edges": []},
     "nodes[0].attrs.state_bytes", "outside 0 to 2^62"),
    (pair(bandwidth=-0.5), "edges[0].bandwidth", "outside (0, 1]"),
    ({"version": 1, "nodes": [{"id": "a", "attrs": {"x": 2}}]
                             + [{"id": "b", "attrs": {"deep": [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[
                                 [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]
                                 ]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]}}],
     "edges": []},
     "nodes[1].attrs.deep", "nested too deeply"),
])
def test_field_problems_are_named(tmp_path, data, where, words):
    path = tmp_path / "g.json"
    path.write_text(json.dumps(data))
    with pytest.raises(InputError) as info:
        load_graph(str(path))
    assert info.value.where.startswith(where) and words in str(info.value), str(info.value)


def test_a_device_is_not_read():
    with pytest.raises(InputError, match="not a regular file"):
        load_graph("/dev/zero")


def test_se_link_latency_bound(tmp_path):
    data = json.loads((REPO / "hardware" / "presets" / "se16.json").read_text())
    data["links"] = [[1, 1], [2, 65]]
    path = tmp_path / "se.json"
    path.write_text(json.dumps(data))
    with pytest.raises(InputError, match=r"links\[1\]\[1\].*from 1 to 64"):
        load_hardware(str(path))


def test_cgra_pe_bound(tmp_path):
    data = json.loads((REPO / "hardware" / "presets" / "cgra4x4.json").read_text())
    data["rows"] = data["cols"] = 65
    path = tmp_path / "c.json"
    path.write_text(json.dumps(data))
    with pytest.raises(InputError, match="4,225 PEs is above the limit of 4,096"):
        load_hardware(str(path))
