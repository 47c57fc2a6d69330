"""Closed-form geometry of an RDU chip: unit pattern, arrays, quadrants, AGCUs.

Scope: pure functions of an :class:`~hardware.description.RduSpec` and chip-wide
site coordinates ``(row, col)`` (row 0 is the north edge, col 0 the west edge).
:mod:`hardware.fabric` builds the graph from these; placement code may call them
directly.

Conventions and caveats (all assumptions, none published):

* Switch ``(r, c)`` sits at the grid corner north-west of site ``(r, c)``; site
  ``(r, c)`` links to switches ``(r, c)``, ``(r, c+1)``, ``(r+1, c)``, ``(r+1, c+1)``
  (its NW, NE, SW, SE corners).
* Arrays are laid out row-major (array ``i`` is at array-row ``i // arrays[1]``)
  and share their boundary switches, so the chip has one switch mesh.
* Quadrants are numbered 0 NW, 1 NE, 2 SW, 3 SE inside each array; with an odd
  size the extra row (column) belongs to the south (east) half.
* The AGCU of a north quadrant sits on the array's north edge, that of a south
  quadrant on its south edge; it links to two neighbouring switches of that edge
  inside its quadrant, the pair nearest the middle of the quadrant's edge. Where
  two arrays meet, a switch on the shared edge may serve an AGCU of each.
"""

from __future__ import annotations

from hardware.description import RduSpec

__all__ = [
    "CORNERS",
    "QUADRANT_NAMES",
    "agcu_switches",
    "array_of",
    "array_origin",
    "quadrant_bounds",
    "quadrant_of",
    "unit_at",
]

#: corner name -> (row offset, col offset) of the switch from the site
CORNERS = {"NW": (0, 0), "NE": (0, 1), "SW": (1, 0), "SE": (1, 1)}
QUADRANT_NAMES = ("NW", "NE", "SW", "SE")


def unit_at(spec: RduSpec, row: int, col: int) -> str:
    """The unit at site ``(row, col)``: ``"pcu"``, ``"pmu"`` or ``"fcmu"``.

    Examples
    --------
    >>> from hardware.description import load_hardware
    >>> tiny = load_hardware("tiny")
    >>> [unit_at(tiny, 0, c) for c in range(4)]
    ['pcu', 'pmu', 'pcu', 'pmu']
    """
    if spec.pattern == "fcmu":
        return "fcmu"
    parity = col if spec.pattern == "columns" else row + col
    return "pcu" if parity % 2 == 0 else "pmu"


def array_of(spec: RduSpec, row: int, col: int) -> int:
    """Index of the array holding site ``(row, col)`` (row-major over arrays).

    Examples
    --------
    >>> from hardware.description import load_hardware
    >>> sn10 = load_hardware("sn10")
    >>> array_of(sn10, 0, 0), array_of(sn10, 0, 16), array_of(sn10, 20, 0), array_of(sn10, 39, 31)
    (0, 1, 2, 3)
    """
    return (row // spec.array_rows) * spec.arrays[1] + col // spec.array_cols


def array_origin(spec: RduSpec, array: int) -> tuple[int, int]:
    """Chip-wide ``(row, col)`` of the north-west site of ``array``."""
    ar, ac = divmod(array, spec.arrays[1])
    return ar * spec.array_rows, ac * spec.array_cols


def quadrant_of(spec: RduSpec, row: int, col: int) -> int:
    """Quadrant (0 NW, 1 NE, 2 SW, 3 SE) of site ``(row, col)`` within its array.

    Examples
    --------
    >>> from hardware.description import load_hardware
    >>> tiny = load_hardware("tiny")
    >>> [quadrant_of(tiny, r, c) for r, c in [(0, 0), (1, 3), (2, 1), (3, 3)]]
    [0, 1, 2, 3]
    """
    south = row % spec.array_rows >= spec.array_rows // 2
    east = col % spec.array_cols >= spec.array_cols // 2
    return 2 * south + east


def quadrant_bounds(spec: RduSpec, array: int, quadrant: int) -> tuple[int, int, int, int]:
    """Sites of a quadrant as half-open chip-wide ranges ``(r_lo, r_hi, c_lo, c_hi)``.

    Examples
    --------
    >>> from hardware.description import load_hardware
    >>> quadrant_bounds(load_hardware("plasticine"), 0, 3)
    (8, 16, 4, 8)
    """
    r0, c0 = array_origin(spec, array)
    hr, hc = spec.array_rows // 2, spec.array_cols // 2
    rows = (r0, r0 + hr) if quadrant < 2 else (r0 + hr, r0 + spec.array_rows)
    cols = (c0, c0 + hc) if quadrant % 2 == 0 else (c0 + hc, c0 + spec.array_cols)
    return rows[0], rows[1], cols[0], cols[1]


def agcu_switches(spec: RduSpec, array: int,
                  quadrant: int) -> tuple[tuple[int, int], tuple[int, int]]:
    """The two switches ``(row, col)`` that the AGCU of a quadrant links to.

    They are neighbours on the array's north edge (quadrants NW, NE) or south edge
    (SW, SE), inside the quadrant, nearest the middle of the quadrant's edge.

    Examples
    --------
    >>> from hardware.description import load_hardware
    >>> tiny = load_hardware("tiny")
    >>> [agcu_switches(tiny, 0, q) for q in range(4)]
    [((0, 0), (0, 1)), ((0, 3), (0, 4)), ((4, 0), (4, 1)), ((4, 3), (4, 4))]
    """
    r_lo, r_hi, c_lo, c_hi = quadrant_bounds(spec, array, quadrant)
    row = r_lo if quadrant < 2 else r_hi
    inset = (c_hi - c_lo - 1) // 2
    col = c_lo + inset if quadrant % 2 == 0 else c_hi - inset - 1
    return (row, col), (row, col + 1)
