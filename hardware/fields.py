"""Typed readers for the fields of a hardware description (JSON).

Scope: reading one field of a parsed JSON object, checking its type and range,
and raising :class:`~hardware.errors.InputError` that names the file, the JSON
path of the field (``networks.vector.channels``) and a fix. Nothing here knows
what an RDU is; :mod:`hardware.description` says which fields exist.

Caveats: ``bool`` is never accepted where a number is expected (JSON ``true``
is not ``1``), and an integer field does not accept ``16.0``. Every number must
be finite and within a documented bound (``hardware/README.md``, "Limits"):
an integer field without its own bound is capped at :data:`MAX_INTEGER`.

:func:`parse_json` is the one JSON reader for users' files (hardware
descriptions and graphs): it accepts a UTF-8 byte-order mark, and turns syntax
errors, excessive nesting, over-long numbers, non-finite numbers and lone
surrogates into :class:`InputError` with the place.
"""

from __future__ import annotations

import difflib
import json
import math
import re
import stat
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hardware.errors import InputError

__all__ = ["Reader", "MISSING", "MAX_INTEGER", "MAX_NESTING", "MAX_FILE_BYTES", "parse_json",
           "read_bounded", "special_file", "shown_number", "shown_limit"]

MISSING = object()

#: Largest value of an integer field that names no bound of its own (2^31 - 1):
#: far above any real count, and small enough for every solver's int32 variables.
MAX_INTEGER = 2**31 - 1

#: Deepest nesting of JSON lists and objects accepted. Real files nest 4 levels;
#: a bound far below Python's recursion limit keeps every later recursive walk
#: (copying, hashing, writing mapping.json) safe.
MAX_NESTING = 64

#: Largest input file read (1 GiB); the biggest real graph is a few MB.
MAX_FILE_BYTES = 2**30


#: What a path that is neither a regular file nor a directory is, by its ``stat`` mode.
_SPECIAL_KINDS = ((stat.S_ISFIFO, "a named pipe (FIFO)"), (stat.S_ISSOCK, "a socket"),
                  (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"))


def special_file(path: Path) -> str | None:
    """What ``path`` is when it exists but is neither a regular file nor a directory
    ("a named pipe (FIFO)", "a socket", ...); None otherwise. Read from ``stat`` alone:
    opening a named pipe waits for a writer, so a reader that opens first can hang.

    Examples
    --------
    >>> special_file(Path("/dev/null")), special_file(Path("/")), special_file(Path("/no/such"))
    ('a character device', None, None)
    """
    try:
        mode = path.stat().st_mode
    except OSError:              # missing or unreadable: the caller's own checks say so
        return None
    if stat.S_ISREG(mode) or stat.S_ISDIR(mode):
        return None
    return next((kind for test, kind in _SPECIAL_KINDS if test(mode)), "a special file")


def read_bounded(path: Path, file: str, size_fix: str, read_fix: str) -> bytes:
    """The bytes of a user's input file ``path`` (named ``file`` in messages), refused
    above :data:`MAX_FILE_BYTES` before reading, or when it cannot be read; the one reader
    of graph and hardware files."""
    try:
        if path.stat().st_size > MAX_FILE_BYTES:
            raise InputError(file, "", f"larger than the limit of {MAX_FILE_BYTES:,} bytes",
                             size_fix)
        return path.read_bytes()
    except OSError as exc:
        raise InputError(file, "", f"cannot be read ({exc.strerror})", read_fix) from None


def _join(path: str, key: str | int) -> str:
    if isinstance(key, int):
        return f"{path}[{key}]"
    return f"{path}.{key}" if path else key


def _shown(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    if isinstance(value, str):
        return f'"{value}"'
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, list):
        return "a list"
    return repr(value)


def shown_number(value: int | float) -> str:
    """A number as an error message shows it: a huge integer by its digit count.

    Examples
    --------
    >>> shown_number(10**400), shown_number(2.5)
    ('a 401-digit number', '2.5')
    """
    if isinstance(value, int) and abs(value) >= 10**20:
        return f"a {len(str(abs(value)))}-digit number"
    return repr(value)


def shown_limit(limit: int | float) -> str:
    """A bound as messages and docs/limits.md write it: powers of two as 2^k.

    Examples
    --------
    >>> shown_limit(2**62), shown_limit(64), shown_limit(100.0)
    ('2^62 (4,611,686,018,427,387,904)', '64', '100')
    """
    if isinstance(limit, int) and limit >= 1024 and limit & (limit - 1) == 0:
        return f"2^{limit.bit_length() - 1} ({limit:,})"
    return f"{limit:,g}" if isinstance(limit, float) else f"{limit:,}"


def _with_example(fix: str, example: str) -> str:
    return f"{fix} ({example})" if example else fix


def _json_spelling(value: float) -> str:
    if math.isnan(value):
        return "NaN"
    return "Infinity" if value > 0 else "-Infinity"


def parse_json(raw: bytes, file: str, example: str = "") -> Any:
    """Parse the bytes of a user's JSON file, or raise :class:`InputError`.

    Parameters
    ----------
    raw : bytes
        The file's content; a UTF-8 byte-order mark is skipped.
    file : str
        The file name shown in errors.
    example : str, optional
        Where a correct file can be seen (ends each fix, e.g. "see examples/fig9.json").

    Raises
    ------
    InputError
        Not UTF-8, not JSON, nested deeper than :data:`MAX_NESTING`, a number of
        more digits than Python reads, a NaN or infinite number, a lone
        surrogate (``"\\ud800"``) in a string, or an object that names a key twice
        (a JSON reader would keep the last value, silently), each with its place.

    Examples
    --------
    >>> parse_json(b'\\xef\\xbb\\xbf{"a": [1, 2]}', "f.json", "see x")
    {'a': [1, 2]}
    >>> parse_json(b'{"a": [1, NaN]}', "f.json", "see x")
    Traceback (most recent call last):
    ...
    hardware.errors.InputError: f.json: a[1]: NaN is not allowed: a number must be a finite number
    (fix: write a finite number in its place (see x))
    """
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as err:
        raise InputError(file, f"byte {err.start}", "not a UTF-8 text file",
                         _with_example("save the file as UTF-8 JSON", example)) from None
    try:
        data = json.loads(text, object_pairs_hook=_marked_if_repeated)
    except json.JSONDecodeError as err:
        raise InputError(file, f"line {err.lineno} column {err.colno}",
                         f"not valid JSON ({err.msg})",
                         _with_example("fix the JSON syntax there", example)) from None
    except RecursionError:
        raise InputError(file, "", f"nested too deeply (more than {MAX_NESTING} levels of [ or {{)",
                         _with_example("flatten the lists and objects", example)) from None
    except ValueError:  # Python refuses to read an integer of more than 4300 digits
        raise InputError(file, _long_number_place(text),
                         f"a number has more than {sys.get_int_max_str_digits()} digits",
                         _with_example("write numbers within the limits of docs/limits.md",
                                       example)) from None
    _check_values(data, file, example)
    return data


class _RepeatedKey(dict):
    """A JSON object that named ``key`` twice, marked to be reported with its place."""

    key = ""


def _marked_if_repeated(pairs: list[tuple[str, Any]]) -> dict:
    """``object_pairs_hook``: the object as a dict, marked (:class:`_RepeatedKey`) when a
    key appears twice; :func:`_check_values` names its place (the hook does not know it).
    json.loads of a 600 KB file: 9 -> 12 ms."""
    found = dict(pairs)
    if len(found) == len(pairs):
        return found
    seen: set[str] = set()
    marked = _RepeatedKey(found)
    marked.key = next(key for key, _ in pairs if key in seen or seen.add(key))
    return marked


def _long_number_place(text: str) -> str:
    """``line L column C`` of the first over-long run of digits (empty if none found)."""
    found = re.search(r"\d{%d,}" % (sys.get_int_max_str_digits() + 1), text)
    if found is None:
        return ""
    line = text.count("\n", 0, found.start()) + 1
    return f"line {line} column {found.start() - text.rfind(chr(10), 0, found.start())}"


def _check_values(data: Any, file: str, example: str) -> None:
    """Reject what no field accepts: deep nesting, NaN/infinity, lone surrogates, a key
    named twice in one object (marked by :func:`_marked_if_repeated`).

    An explicit stack, not recursion, so that any depth is walked safely.
    """
    stack = [(data, "", 0)]
    while stack:
        value, where, depth = stack.pop()
        if isinstance(value, float) and not math.isfinite(value):
            raise InputError(file, where, f"{_json_spelling(value)} is not allowed: a number must "
                             "be a finite number",
                             _with_example("write a finite number in its place", example))
        if isinstance(value, str):
            _check_text(value, file, where, example)
        elif isinstance(value, (dict, list)):
            if type(value) is _RepeatedKey:
                raise InputError(file, _join(where, value.key), f'the key "{value.key}" appears '
                                 "twice in one object (a JSON reader keeps only the last value)",
                                 _with_example(f'keep one "{value.key}" in that object',
                                               example))
            if depth >= MAX_NESTING:
                raise InputError(file, where, f"nested too deeply (more than {MAX_NESTING} levels)",
                                 _with_example("flatten the lists and objects", example))
            items = value.items() if isinstance(value, dict) else enumerate(value)
            for key, item in items:
                if isinstance(key, str):
                    _check_text(key, file, _join(where, key), example)
                stack.append((item, _join(where, key), depth + 1))


def _check_text(text: str, file: str, where: str, example: str) -> None:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as err:
        raise InputError(file, where, f"text with an invalid character (a lone surrogate "
                         f"{text[err.start]!r} at position {err.start})",
                         _with_example("write valid Unicode text", example)) from None


@dataclass(frozen=True)
class Reader:
    """Read fields of one JSON object, reporting problems against ``file``.

    Parameters
    ----------
    file : str
        The file name shown in every error.
    data : dict
        The JSON object being read.
    path : str
        The JSON path of ``data`` inside the file (``""`` for the top level).

    Examples
    --------
    >>> r = Reader("hw.json", {"rows": 4, "name": "x"})
    >>> r.integer("rows", minimum=1, meaning="unit rows")
    4
    >>> r.integer("cols", minimum=1, meaning="unit columns")
    Traceback (most recent call last):
    ...
    hardware.errors.InputError: hw.json: cols: required field is missing (fix: add "cols":
    <integer >= 1> (unit columns))
    """

    file: str
    data: dict
    path: str = ""

    # -- plumbing ---------------------------------------------------------
    def where(self, key: str | int) -> str:
        """The JSON path of ``key`` inside this object."""
        return _join(self.path, key)

    def fail(self, key: str | int, problem: str, fix: str) -> InputError:
        """An :class:`InputError` about ``key`` (to be raised by the caller)."""
        return InputError(self.file, self.where(key), problem, fix)

    def _get(self, key: str, default: Any, example: str, meaning: str) -> Any:
        if key in self.data:
            return self.data[key]
        if default is MISSING:
            raise self.fail(key, "required field is missing",
                            f'add "{key}": {example} ({meaning})')
        return default

    def _wrong_type(self, key: str, value: Any, expected: str, meaning: str) -> InputError:
        return self.fail(key, f"expected {expected}, got {_shown(value)}",
                         f"write {expected} ({meaning})")

    # -- scalar fields -----------------------------------------------------
    def integer(self, key: str, *, minimum: int = 0, maximum: int = MAX_INTEGER,
                default: Any = MISSING, meaning: str = "") -> int:
        """An integer field from ``minimum`` to ``maximum``."""
        if key not in self.data and default is not MISSING:
            return default
        value = self._get(key, default, f"<integer >= {minimum}>", meaning)
        return _Item(self.file, value, self.where(key)).integer_value(minimum, meaning, maximum)

    def number(self, key: str, *, maximum: float = float(MAX_INTEGER), default: Any = MISSING,
               allow_null: bool = False, meaning: str = "") -> float | None:
        """A finite number in (0, ``maximum``] (int or float), or ``None`` if ``allow_null``."""
        if key not in self.data and default is not MISSING:
            return default
        value = self._get(key, default, "<number > 0>", meaning)
        if value is None and allow_null:
            return None
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            expected = "a number > 0" + (" or null" if allow_null else "")
            raise self._wrong_type(key, value, expected, meaning)
        if isinstance(value, float) and not math.isfinite(value):
            raise self.fail(key, f"{value} is not a finite number",
                            f"use a finite number > 0 and <= {maximum:g} ({meaning})")
        if not 0 < value <= maximum:
            kind = "negative" if value < 0 else "zero" if value == 0 else "above the limit"
            raise self.fail(key, f"value {shown_number(value)} is {kind}",
                            f"use a number > 0 and <= {maximum:g} ({meaning})")
        return float(value)

    def string(self, key: str, *, default: Any = MISSING, choices: tuple[str, ...] = (),
               meaning: str = "") -> str:
        """A string field, optionally one of ``choices``."""
        example = f'"{choices[0]}"' if choices else '"<text>"'
        if key not in self.data and default is not MISSING:
            return default
        value = self._get(key, default, example, meaning)
        if not isinstance(value, str):
            raise self._wrong_type(key, value, "a string", meaning)
        if choices and value not in choices:
            listed = ", ".join(f'"{c}"' for c in choices)
            raise self.fail(key, f"unknown value {_shown(value)}", f"use one of {listed}")
        return value

    def strings(self, key: str, *, default: Any = MISSING, meaning: str = "") -> tuple[str, ...]:
        """A list of strings, returned as a tuple."""
        if key not in self.data and default is not MISSING:
            return default
        value = self._get(key, default, '["<text>", ...]', meaning)
        if not isinstance(value, (list, tuple)):
            raise self._wrong_type(key, value, "a list of strings", meaning)
        for i, item in enumerate(value):
            if not isinstance(item, str):
                raise InputError(self.file, _join(self.where(key), i),
                                 f"expected a string, got {_shown(item)}",
                                 f"write each entry as a string ({meaning})")
        return tuple(value)

    def int_list(self, key: str, *, length: int | None = None, minimum: int = 1,
                 maximum: int = MAX_INTEGER, default: Any = MISSING,
                 meaning: str = "") -> tuple[int, ...]:
        """A list of integers from ``minimum`` to ``maximum`` (of a fixed ``length`` if given)."""
        example = "[" + ", ".join(["1"] * (length or 2)) + "]"
        if key not in self.data and default is not MISSING:
            return default
        value = self._get(key, default, example, meaning)
        if not isinstance(value, (list, tuple)) or (length is not None and len(value) != length):
            what = f"a list of {length} integers" if length else "a list of integers"
            raise self._wrong_type(key, value, what, meaning)
        return tuple(self.item(key, i).integer_value(minimum, meaning, maximum)
                     for i in range(len(value)))

    # -- nested objects ----------------------------------------------------
    def object(self, key: str, *, meaning: str = "") -> "Reader":
        """A nested JSON object, as a :class:`Reader` with the longer path."""
        value = self._get(key, MISSING, "{...}", meaning)
        if not isinstance(value, dict):
            raise self._wrong_type(key, value, "a JSON object", meaning)
        return Reader(self.file, value, self.where(key))

    def item(self, key: str, index: int) -> "_Item":
        """Element ``index`` of the list field ``key``."""
        return _Item(self.file, self.data[key][index], _join(self.where(key), index))

    def reject_unknown(self, known: tuple[str, ...]) -> None:
        """Raise for the first key of this object that is not in ``known``."""
        for key in sorted(self.data):
            if key in known:
                continue
            close = difflib.get_close_matches(key, known, n=1)
            hint = f'did you mean "{close[0]}"?' if close else \
                "known fields: " + ", ".join(sorted(known))
            raise self.fail(key, "unknown field", f"remove it or correct its name ({hint})")


@dataclass(frozen=True)
class _Item:
    """One element of a JSON list, with its path, for typed reads."""

    file: str
    value: Any
    path: str

    def integer_value(self, minimum: int, meaning: str, maximum: int = MAX_INTEGER) -> int:
        value = self.value
        valid = f"an integer >= {minimum}" + (f" and <= {maximum}" if maximum != MAX_INTEGER
                                              else "")
        if isinstance(value, bool) or not isinstance(value, int):
            raise InputError(self.file, self.path, f"expected {valid}, got {_shown(value)}",
                             f"write {valid} ({meaning})")
        if value < minimum:
            kind = "negative" if value < 0 else "too small"
            raise InputError(self.file, self.path, f"value {shown_number(value)} is {kind}",
                             f"use {valid} ({meaning})")
        if value > maximum:
            raise InputError(self.file, self.path,
                             f"value {shown_number(value)} is above the limit {maximum}",
                             f"use an integer from {minimum} to {maximum} ({meaning})")
        return value

    def int_list(self, length: int, minimum: int, meaning: str,
                 maximum: int = MAX_INTEGER) -> tuple[int, ...]:
        """This element as a list of ``length`` integers from ``minimum`` to ``maximum``."""
        if not isinstance(self.value, (list, tuple)) or len(self.value) != length:
            raise InputError(self.file, self.path,
                             f"expected a list of {length} integers, got {_shown(self.value)}",
                             f"write a list of {length} integers ({meaning})")
        return tuple(_Item(self.file, v, _join(self.path, i))
                     .integer_value(minimum, meaning, maximum)
                     for i, v in enumerate(self.value))
