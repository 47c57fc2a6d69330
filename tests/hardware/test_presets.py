"""Presets: they load, have the documented numbers, and round-trip through JSON."""

import json

import pytest

from hardware import (
    DEFAULT_PRESET,
    CgraSpec,
    RduSpec,
    StreamingEngineSpec,
    load_hardware,
    preset_names,
    spec_from_dict,
    spec_to_dict,
)

KiB = 1024


def test_required_presets_exist():
    assert {"tiny", "plasticine", "sn10", "se16", "cgra4x4"} <= set(preset_names())
    assert DEFAULT_PRESET == "plasticine" and DEFAULT_PRESET in preset_names()
    assert preset_names() == sorted(preset_names())


@pytest.mark.parametrize("name", preset_names())
def test_every_preset_loads_and_lists_its_assumptions(name):
    spec = load_hardware(name)
    assert spec.name == name
    assert spec.assumed, "every preset must say what it assumes"
    assert all(isinstance(a, str) and a for a in spec.assumed)
    assert spec.notes


@pytest.mark.parametrize("name, pcu, pmu, agcu, pmu_bytes", [
    ("tiny", 8, 8, 4, 256 * KiB),
    ("plasticine", 64, 64, 4, 256 * KiB),
    ("sn10", 640, 640, 16, 512 * KiB),
])
def test_rdu_preset_counts(name, pcu, pmu, agcu, pmu_bytes):
    spec = load_hardware(name)
    assert isinstance(spec, RduSpec) and spec.kind == "rdu"
    assert (spec.pcu_count, spec.pmu_count, spec.agcu_count) == (pcu, pmu, agcu)
    assert spec.pmu_bytes == pmu_bytes
    assert spec.site_count == pcu + pmu
    assert spec.networks["vector"].width_bits == 512
    assert spec.networks["scalar"].width_bits == 32
    assert set(spec.networks) == {"vector", "scalar", "control"}


def test_plasticine_and_sn10_shapes():
    p = load_hardware("plasticine")
    assert (p.array_rows, p.array_cols, p.arrays) == (16, 8, (1, 1))
    assert (p.pcu_lanes, p.pcu_stages, p.clock_ghz) == (16, 6, 1.0)
    s = load_hardware("sn10")
    assert s.array_count == 4 and (s.rows, s.cols) == (40, 32)
    assert s.pmu_bytes_total == 320 * 1024 * KiB
    assert any("layout" in a for a in s.assumed)


def test_se16_numbers():
    se = load_hardware("se16")
    assert isinstance(se, StreamingEngineSpec) and se.kind == "streaming-engine"
    assert se.tiles == 16 and se.links == ((1, 1), (2, 2))
    assert (se.instruction_latency, se.max_ii, se.max_operands) == (3, 6, 3)
    assert (se.memories_per_tile, se.memory_width_bits) == (2, 512)
    assert 512 <= se.memory_depth <= 1024
    assert se.slot_count == 96
    assert se.neighbours(15) == [(13, 2), (14, 1)]
    assert se.link_latency(4, 5) == 1 and se.link_latency(4, 2) == 2
    assert se.link_latency(4, 7) is None and se.link_latency(15, 17) is None


def test_cgra_preset():
    c = load_hardware("cgra4x4")
    assert isinstance(c, CgraSpec) and (c.rows, c.cols, c.pe_count) == (4, 4, 16)


@pytest.mark.parametrize("name", preset_names())
def test_round_trip_through_a_json_file(name, tmp_path):
    spec = load_hardware(name)
    path = tmp_path / "copy.json"
    path.write_text(json.dumps(spec_to_dict(spec), indent=2))
    again = load_hardware(str(path))
    assert again == spec and hash(again) == hash(spec)
    assert spec_from_dict(spec_to_dict(spec)) == spec
    assert load_hardware(path) == spec          # a pathlib.Path works too


def test_name_defaults_to_file_stem(tmp_path):
    data = spec_to_dict(load_hardware("tiny"))
    del data["name"]
    path = tmp_path / "my-chip.json"
    path.write_text(json.dumps(data))
    assert load_hardware(str(path)).name == "my-chip"


def test_spec_passes_through_and_default_is_plasticine():
    spec = load_hardware("tiny")
    assert load_hardware(spec) is spec
    assert load_hardware().name == "plasticine"


def test_patterns_change_the_counts():
    base = spec_to_dict(load_hardware("tiny"))
    fcmu = spec_from_dict({**base, "pattern": "fcmu"})
    assert (fcmu.pcu_count, fcmu.pmu_count) == (16, 16)
    cols = spec_from_dict({**base, "array_cols": 5, "pattern": "columns"})
    assert (cols.pcu_count, cols.pmu_count) == (12, 8)
    odd = spec_from_dict({**base, "array_rows": 3, "array_cols": 3})
    assert (odd.pcu_count, odd.pmu_count) == (5, 4)


def test_specs_check_themselves_when_built_in_code():
    spec = load_hardware("tiny")
    with pytest.raises(ValueError):
        RduSpec(**{**spec.__dict__, "array_rows": 0})
    with pytest.raises(ValueError):
        StreamingEngineSpec(name="x", links=((0, 1),))
    with pytest.raises(ValueError):
        CgraSpec(name="x", rows=2, cols=2, neighbours="hexagonal")


def test_pmu_depth():
    spec = load_hardware("sn10")
    assert spec.pmu_depth(4096) == 128
    assert spec.pmu_depth(10**9) == 1
    with pytest.raises(ValueError):
        spec.pmu_depth(0)
