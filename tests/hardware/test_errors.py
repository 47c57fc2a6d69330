"""Every malformed hardware file gives an InputError naming the file, the field and a fix."""

import json

import pytest

from hardware import InputError, load_hardware, preset_names, spec_to_dict


def rdu():
    return spec_to_dict(load_hardware("tiny"))


def se():
    return spec_to_dict(load_hardware("se16"))


def cgra():
    return spec_to_dict(load_hardware("cgra4x4"))


def without(data, *path):
    *head, last = path
    node = data
    for key in head:
        node = node[key]
    del node[last]
    return data


def with_(data, value, *path):
    *head, last = path
    node = data
    for key in head:
        node = node[key]
    node[last] = value
    return data


# (case id, file content, JSON path named, words the problem or fix must contain)
CASES = [
    ("missing version", without(rdu(), "version"), "version", ['"version": 1']),
    ("wrong version", with_(rdu(), 2, "version"), "version", ["unsupported version 2"]),
    ("version as text", with_(rdu(), "1", "version"), "version", ["integer"]),
    ("missing kind", without(rdu(), "kind"), "kind", ['"kind"']),
    ("unknown kind", with_(rdu(), "fpga", "kind"), "kind",
     ['"fpga"', '"rdu"', '"streaming-engine"']),
    ("missing field", without(rdu(), "array_rows"), "array_rows", ["missing", '"array_rows"']),
    ("missing channels", without(rdu(), "networks", "vector", "channels"),
     "networks.vector.channels", ["missing", '"channels"']),
    ("channels as text", with_(rdu(), "two", "networks", "vector", "channels"),
     "networks.vector.channels", ['"two"', "integer"]),
    ("zero channels", with_(rdu(), 0, "networks", "control", "channels"),
     "networks.control.channels", [">= 1"]),
    ("missing network", without(rdu(), "networks", "scalar"), "networks.scalar",
     ['"width_bits": 32']),
    ("networks not object", with_(rdu(), [1, 2], "networks"), "networks", ["JSON object"]),
    ("negative bytes", with_(rdu(), -5, "pmu_bytes"), "pmu_bytes", ["negative", ">= 1"]),
    ("bool lanes", with_(rdu(), True, "pcu_lanes"), "pcu_lanes", ["true", "integer"]),
    ("float stages", with_(rdu(), 6.0, "pcu_stages"), "pcu_stages", ["integer"]),
    ("arrays short", with_(rdu(), [2], "arrays"), "arrays", ["list of 2 integers"]),
    ("arrays negative", with_(rdu(), [2, -1], "arrays"), "arrays[1]", ["negative"]),
    ("unknown pattern", with_(rdu(), "diagonal", "pattern"), "pattern", ['"checkerboard"']),
    ("misspelt field", with_(rdu(), "fcmu", "patern"), "patern", ['did you mean "pattern"']),
    ("negative clock", with_(rdu(), -1, "clock_ghz"), "clock_ghz", ["negative"]),
    ("three agcus", with_(rdu(), 3, "agcus_per_array"), "agcus_per_array", ["4"]),
    ("assumed not text", with_(rdu(), [1], "assumed"), "assumed[0]", ["string"]),
    ("se link short", with_(se(), [[1, 1], [2]], "links"), "links[1]", ["list of 2 integers"]),
    ("se link negative", with_(se(), [[1, 1], [-2, 2]], "links"), "links[1][0]", ["negative"]),
    ("se missing ii", without(se(), "max_ii"), "max_ii", ["missing"]),
    ("se negative tiles", with_(se(), -16, "tiles"), "tiles", ["negative"]),
    ("cgra hexagonal", with_(cgra(), "hexagonal", "neighbours"), "neighbours", ['"mesh"']),
    ("not an object", [1, 2, 3], "", ["JSON object"]),
]


@pytest.mark.parametrize("data, where, words", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_bad_field_is_named_with_a_fix(tmp_path, data, where, words):
    path = tmp_path / "hw.json"
    path.write_text(json.dumps(data))
    with pytest.raises(InputError) as info:
        load_hardware(str(path))
    err = info.value
    assert err.file == str(path)
    assert err.where == where
    assert err.fix, "every error must say how to fix it"
    message = str(err)
    assert message.startswith(str(path))
    assert where in message and "(fix: " in message
    for word in words:
        assert word in message, (word, message)


def test_not_json(tmp_path):
    path = tmp_path / "broken.json"
    path.write_text('{"version": 1,\n "kind": rdu}')
    with pytest.raises(InputError) as info:
        load_hardware(str(path))
    assert info.value.file == str(path)
    assert info.value.where == "line 2 column 10"
    assert "not valid JSON" in str(info.value) and "fix:" in str(info.value)


@pytest.mark.parametrize("raw", [b"", b"\xff\xfe\x00binary"])
def test_empty_or_binary_file(tmp_path, raw):
    path = tmp_path / "blob.json"
    path.write_bytes(raw)
    with pytest.raises(InputError) as info:
        load_hardware(str(path))
    assert str(path) in str(info.value) and "fix:" in str(info.value)


def test_unknown_preset_lists_the_known_ones():
    with pytest.raises(InputError) as info:
        load_hardware("sn40")
    message = str(info.value)
    assert message.startswith("sn40: ")
    assert 'unknown hardware preset "sn40"' in message
    for name in preset_names():
        assert name in message


def test_missing_file(tmp_path):
    path = tmp_path / "nope" / "hw.json"
    with pytest.raises(InputError) as info:
        load_hardware(str(path))
    assert "file not found" in str(info.value) and "tiny" in str(info.value)


def test_input_error_is_a_value_error():
    with pytest.raises(ValueError):
        load_hardware("nosuchpreset")


def test_a_message_shows_control_characters_escaped_on_one_line():
    """An id or a name from the input never puts a NUL, a newline or an ESC sequence on the
    user's terminal: the message is one line, shown as written."""
    error = InputError("g.json", "nodes[0].id", 'node "a\x00b\nc\x1b[31m" does not exist',
                       "fix it")
    assert str(error) == (r'g.json: nodes[0].id: node "a\x00b\x0ac\x1b[31m" does not exist '
                          "(fix: fix it)")
