"""Typed readers for the fields of a hardware description (JSON).

Scope: reading one field of a parsed JSON object, checking its type and range,
and raising :class:`~hardware.errors.InputError` that names the file, the JSON
path of the field (``networks.vector.channels``) and a fix. Nothing here knows
what an RDU is; :mod:`hardware.description` says which fields exist.

Caveats: ``bool`` is never accepted where a number is expected (JSON ``true``
is not ``1``), and an integer field does not accept ``16.0``.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from typing import Any

from hardware.errors import InputError

__all__ = ["Reader", "MISSING"]

MISSING = object()


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
    hardware.errors.InputError: hw.json: cols: required field is missing (fix: add "cols": <integer >= 1> (unit columns))
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
    def integer(self, key: str, *, minimum: int = 0, default: Any = MISSING,
                meaning: str = "") -> int:
        """An integer field that is at least ``minimum``."""
        if key not in self.data and default is not MISSING:
            return default
        value = self._get(key, default, f"<integer >= {minimum}>", meaning)
        if isinstance(value, bool) or not isinstance(value, int):
            raise self._wrong_type(key, value, f"an integer >= {minimum}", meaning)
        if value < minimum:
            kind = "negative" if value < 0 else "too small"
            raise self.fail(key, f"value {value} is {kind}",
                            f"use an integer >= {minimum} ({meaning})")
        return value

    def number(self, key: str, *, default: Any = MISSING, allow_null: bool = False,
               meaning: str = "") -> float | None:
        """A positive number (int or float), or ``None`` if ``allow_null``."""
        if key not in self.data and default is not MISSING:
            return default
        value = self._get(key, default, "<number > 0>", meaning)
        if value is None and allow_null:
            return None
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            expected = "a number > 0" + (" or null" if allow_null else "")
            raise self._wrong_type(key, value, expected, meaning)
        if not value > 0:
            kind = "negative" if value < 0 else "non-positive"
            raise self.fail(key, f"value {value} is {kind}", f"use a number > 0 ({meaning})")
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
                 default: Any = MISSING, meaning: str = "") -> tuple[int, ...]:
        """A list of integers >= ``minimum`` (of a fixed ``length`` if given)."""
        example = "[" + ", ".join(["1"] * (length or 2)) + "]"
        if key not in self.data and default is not MISSING:
            return default
        value = self._get(key, default, example, meaning)
        if not isinstance(value, (list, tuple)) or (length is not None and len(value) != length):
            what = f"a list of {length} integers" if length else "a list of integers"
            raise self._wrong_type(key, value, what, meaning)
        return tuple(self.item(key, i).integer_value(minimum, meaning) for i in range(len(value)))

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

    def integer_value(self, minimum: int, meaning: str) -> int:
        value = self.value
        if isinstance(value, bool) or not isinstance(value, int):
            raise InputError(self.file, self.path,
                             f"expected an integer >= {minimum}, got {_shown(value)}",
                             f"write an integer >= {minimum} ({meaning})")
        if value < minimum:
            kind = "negative" if value < 0 else "too small"
            raise InputError(self.file, self.path, f"value {value} is {kind}",
                             f"use an integer >= {minimum} ({meaning})")
        return value

    def int_list(self, length: int, minimum: int, meaning: str) -> tuple[int, ...]:
        """This element as a list of ``length`` integers."""
        if not isinstance(self.value, (list, tuple)) or len(self.value) != length:
            raise InputError(self.file, self.path,
                             f"expected a list of {length} integers, got {_shown(self.value)}",
                             f"write a list of {length} integers ({meaning})")
        return tuple(_Item(self.file, v, _join(self.path, i)).integer_value(minimum, meaning)
                     for i, v in enumerate(self.value))
