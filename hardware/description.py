"""Hardware descriptions: the schema, the presets and the JSON form.

Scope
-----
One hardware description is an immutable spec of one of three kinds:

* :class:`RduSpec` (``"kind": "rdu"``) -- a SambaNova-style reconfigurable
  dataflow unit: a grid of PCU/PMU sites with a switch at every grid corner,
  three networks (vector, scalar, control) and 4 AGCUs per array (sources 000,
  001, 003).
* :class:`StreamingEngineSpec` (``"kind": "streaming-engine"``) -- Micron's
  Streaming Engine: tiles in a line, synchronous-fabric links to tiles +-1 and
  +-2, a modulo schedule of at most ``max_ii`` slots per tile (source 004).
* :class:`CgraSpec` (``"kind": "cgra"``) -- a generic CGRA mesh of PEs, for
  comparing with published CGRA mappers.

A description is a JSON file with ``"version": 1`` and a ``"kind"``; presets ship
as package data in ``hardware/presets/<name>.json`` and are chosen by name.
:func:`load_hardware` takes a preset name or a path; :func:`spec_to_dict` gives
the JSON form back (it round-trips through :func:`load_hardware`).

Caveats
-------
The sources publish few numbers: every preset lists in ``assumed`` each number
or structural choice that is an assumption rather than a published fact (see
``hardware/README.md`` for the table). Unknown fields in a file are rejected
(with a did-you-mean hint) so that a misspelt optional field is not silently
ignored. ``RduSpec.networks`` is a plain dict for convenience: treat it as
read-only (specs are hashed and fabrics are cached by spec).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any, Union

from hardware.errors import InputError
from hardware.fields import Reader, parse_json, read_bounded, special_file

__all__ = [
    "CgraSpec",
    "DEFAULT_PRESET",
    "HardwareSpec",
    "KINDS",
    "LIMITS",
    "NETWORK_NAMES",
    "NetworkSpec",
    "PATTERNS",
    "RduSpec",
    "StreamingEngineSpec",
    "load_hardware",
    "preset_names",
    "spec_from_dict",
    "spec_to_dict",
]

VERSION = 1
DEFAULT_PRESET = "plasticine"
KINDS = ("rdu", "streaming-engine", "cgra")
NETWORK_NAMES = ("vector", "scalar", "control")
PATTERNS = ("checkerboard", "fcmu", "columns")
CGRA_NEIGHBOURS = ("mesh", "torus", "diagonal", "one-hop")
CGRA_MEMORY_PES = ("all", "left", "left-right", "boundary")
#: Operations that access memory (Morpher's names): they run on PEs that reach memory.
CGRA_MEMORY_OPS = ("LOAD", "LOADB", "LOADH", "STORE", "STOREB", "STOREH", "OLOAD", "OLOADB",
                   "OLOADH", "OSTORE", "OSTOREB", "OSTOREH")

#: Bounds on a description's numbers (documented in hardware/README.md, "Limits").
#: ``rdu_sites``: building the resource graph costs about 12 KB per site (measured:
#: 128 x 128 sites take 3 s and 220 MB, 256 x 256 take 14 s and 740 MB), so a chip
#: is refused above 16,384 sites, 12 times the SN10 preset's 1,280.
LIMITS = {
    "rdu_sites": 16_384,
    "cgra_pes": 4_096,
    "cgra_registers": 256,
    "cgra_latency": 64,
    "arrays_per_side": 64,
    "pmu_bytes": 2**40,
    "pcu_lanes": 1_024,
    "pcu_stages": 1_024,
    "width_bits": 4_096,
    "channels": 64,
    "clock_ghz": 100.0,
    "pcu_flops_per_cycle": 2**20,
    "pmu_bytes_per_cycle": 2**20,
    "hop_cycles": 1_024,
    "dram_bytes_per_s": 2**50,
    "reconfig_us": 1_000_000,
    "se_tiles": 1_024,
    "link_latency": 64,
    "max_ii": 64,
    "memories_per_tile": 16,
    "memory_width_bits": 4_096,
    "memory_depth": 2**20,
    "max_operands": 8,
}
#: Performance defaults of an RDU description that leaves the field out (assumed; see
#: hardware/README.md, "Performance numbers").
DEFAULT_CLOCK_GHZ = 1.0
DEFAULT_DRAM_BYTES_PER_S = 100e9
DEFAULT_RECONFIG_US = 10.0
#: Memory the RDU resource graph needs per unit site (measured, see ``LIMITS``).
_BYTES_PER_SITE = 12_000


# ---------------------------------------------------------------------------
# the specs
# ---------------------------------------------------------------------------
@dataclass(frozen=True)
class NetworkSpec:
    """One on-chip network of an RDU.

    Parameters
    ----------
    name : str
        ``"vector"``, ``"scalar"`` or ``"control"``.
    width_bits : int
        Bits per channel (vector 512, scalar 32: published; control: assumed).
    channels : int
        Channels per physical link per direction (an assumption in every preset).

    Examples
    --------
    >>> NetworkSpec("vector", 512, 2)
    NetworkSpec(name='vector', width_bits=512, channels=2)
    """

    name: str
    width_bits: int
    channels: int


@dataclass(frozen=True, kw_only=True)
class RduSpec:
    """A reconfigurable dataflow unit: PCU/PMU sites, switches, AGCUs.

    The chip is ``arrays[0] x arrays[1]`` arrays, each ``array_rows x array_cols``
    unit sites; chip-wide it is :attr:`rows` x :attr:`cols` sites. Which unit a
    site holds follows ``pattern``: ``"checkerboard"`` (PCU where row + col is
    even), ``"columns"`` (PCU in even columns) or ``"fcmu"`` (every site is a
    fused unit that provides one PCU and one PMU).

    Examples
    --------
    >>> spec = load_hardware("tiny")
    >>> (spec.rows, spec.cols, spec.pcu_count, spec.pmu_count, spec.agcu_count)
    (4, 4, 8, 8, 4)
    >>> spec.networks["vector"].width_bits
    512
    >>> spec.pmu_depth(4096)            # samples of 4 KiB that fit in one PMU
    64

    Performance numbers (read by ``sim.perf``); a field left out (``None``) takes
    the documented default of its property:

    >>> p = load_hardware("plasticine")
    >>> p.flops_per_pcu_cycle, p.clock_hz, p.link_rate("vector"), p.pmu_read_rate
    (192.0, 1000000000.0, 64.0, 64.0)
    """

    name: str
    kind: str = "rdu"
    array_rows: int
    array_cols: int
    arrays: tuple[int, int] = (1, 1)
    pattern: str = "checkerboard"
    networks: dict[str, NetworkSpec]
    pmu_bytes: int
    pcu_lanes: int
    pcu_stages: int
    agcus_per_array: int = 4
    clock_ghz: float | None = None
    pcu_flops_per_cycle: float | None = None
    pmu_read_bytes_per_cycle: float | None = None
    pmu_write_bytes_per_cycle: float | None = None
    hop_cycles: int = 1
    dram_bytes_per_s: float | None = None
    reconfig_us: float | None = None
    assumed: tuple[str, ...] = ()
    notes: str = ""

    def __post_init__(self) -> None:
        object.__setattr__(self, "arrays", tuple(self.arrays))
        object.__setattr__(self, "assumed", tuple(self.assumed))
        _check_rdu(self)

    @property
    def clock_hz(self) -> float:
        """Clock in Hz; ``clock_ghz`` null means 1 GHz (assumed, the Plasticine clock)."""
        return (self.clock_ghz if self.clock_ghz is not None else DEFAULT_CLOCK_GHZ) * 1e9

    @property
    def flops_per_pcu_cycle(self) -> float:
        """FLOPs one PCU completes per cycle: ``pcu_flops_per_cycle``, else
        ``2 * pcu_lanes * pcu_stages`` (every stage of every lane does one multiply-add
        per cycle, and a multiply-add counts 2 FLOPs)."""
        if self.pcu_flops_per_cycle is not None:
            return float(self.pcu_flops_per_cycle)
        return float(2 * self.pcu_lanes * self.pcu_stages)

    def link_rate(self, network: str = "vector") -> float:
        """Bytes one channel of ``network`` moves per cycle on one link (one flit of
        ``width_bits`` per cycle, assumed)."""
        return self.networks[network].width_bits / 8

    @property
    def pmu_read_rate(self) -> float:
        """Bytes one PMU reads per cycle: ``pmu_read_bytes_per_cycle``, else one vector
        (``networks.vector.width_bits / 8``)."""
        if self.pmu_read_bytes_per_cycle is not None:
            return float(self.pmu_read_bytes_per_cycle)
        return self.link_rate("vector")

    @property
    def pmu_write_rate(self) -> float:
        """Bytes one PMU writes per cycle: ``pmu_write_bytes_per_cycle``, else one vector."""
        if self.pmu_write_bytes_per_cycle is not None:
            return float(self.pmu_write_bytes_per_cycle)
        return self.link_rate("vector")

    @property
    def dram_rate(self) -> float:
        """DRAM bytes per second: ``dram_bytes_per_s``, else 100 GB/s (assumed)."""
        return float(self.dram_bytes_per_s or DEFAULT_DRAM_BYTES_PER_S)

    @property
    def reconfig_seconds(self) -> float:
        """Seconds to load one section's configuration: ``reconfig_us`` microseconds,
        else 10 us (assumed)."""
        return float(self.reconfig_us or DEFAULT_RECONFIG_US) * 1e-6

    def __hash__(self) -> int:
        return hash(_frozen(spec_to_dict(self)))

    @property
    def rows(self) -> int:
        """Unit-site rows of the whole chip."""
        return self.arrays[0] * self.array_rows

    @property
    def cols(self) -> int:
        """Unit-site columns of the whole chip."""
        return self.arrays[1] * self.array_cols

    @property
    def array_count(self) -> int:
        """Number of arrays (tiles) on the chip."""
        return self.arrays[0] * self.arrays[1]

    @property
    def site_count(self) -> int:
        """Unit sites (PCU, PMU or FCMU) on the chip; AGCUs are not counted."""
        return self.rows * self.cols

    @property
    def pcu_count(self) -> int:
        """Sites that provide a PCU (every site with pattern ``"fcmu"``)."""
        if self.pattern == "fcmu":
            return self.site_count
        if self.pattern == "columns":
            return self.rows * ((self.cols + 1) // 2)
        return (self.site_count + 1) // 2

    @property
    def pmu_count(self) -> int:
        """Sites that provide a PMU (every site with pattern ``"fcmu"``)."""
        if self.pattern == "fcmu":
            return self.site_count
        return self.site_count - self.pcu_count

    @property
    def agcu_count(self) -> int:
        """AGCUs on the chip (``agcus_per_array`` per array)."""
        return self.agcus_per_array * self.array_count

    @property
    def pmu_bytes_total(self) -> int:
        """On-chip scratchpad bytes of all PMUs."""
        return self.pmu_bytes * self.pmu_count

    def pmu_depth(self, sample_bytes: int) -> int:
        """How many samples of ``sample_bytes`` bytes one PMU holds (source 001's
        ``depth_per_PMU`` for one buffer); at least 1 sample is assumed to fit."""
        if sample_bytes <= 0:
            raise ValueError(f"sample_bytes must be positive, got {sample_bytes}")
        return max(1, self.pmu_bytes // sample_bytes)


@dataclass(frozen=True, kw_only=True)
class StreamingEngineSpec:
    """Micron's Streaming Engine (source 004): tiles in a line.

    ``links`` holds ``(offset, latency)`` pairs: tile ``t`` reaches ``t +- offset``
    in ``latency`` cycles over the synchronous fabric. ``af_latency`` is the cycles of
    one asynchronous-fabric transfer between two SDFs (assumed: 16 by default).

    Examples
    --------
    >>> se = load_hardware("se16")
    >>> (se.tiles, se.max_ii, se.slot_count)
    (16, 6, 96)
    >>> se.link_latency(3, 1), se.link_latency(3, 6)
    (2, None)
    >>> se.neighbours(0)
    [(1, 1), (2, 2)]
    """

    name: str
    kind: str = "streaming-engine"
    tiles: int = 16
    links: tuple[tuple[int, int], ...] = ((1, 1), (2, 2))
    instruction_latency: int = 3
    max_ii: int = 6
    memories_per_tile: int = 2
    memory_width_bits: int = 512
    memory_depth: int = 1024
    max_operands: int = 3
    af_latency: int = 16
    assumed: tuple[str, ...] = ()
    notes: str = ""

    def __post_init__(self) -> None:
        object.__setattr__(self, "links", tuple(tuple(link) for link in self.links))
        object.__setattr__(self, "assumed", tuple(self.assumed))
        _check_positive(self, ("tiles", "instruction_latency", "max_ii", "memories_per_tile",
                               "memory_width_bits", "memory_depth", "max_operands",
                               "af_latency"))
        for offset, latency in self.links:
            if offset < 1 or latency < 1:
                raise ValueError(f"link (offset {offset}, latency {latency}) must be positive")

    @property
    def slot_count(self) -> int:
        """Tile slices available: ``tiles * max_ii``."""
        return self.tiles * self.max_ii

    def link_latency(self, src: int, dst: int) -> int | None:
        """Cycles on the direct link from tile ``src`` to ``dst`` (``None`` if none)."""
        for offset, latency in self.links:
            if abs(dst - src) == offset and 0 <= dst < self.tiles:
                return latency
        return None

    def neighbours(self, tile: int) -> list[tuple[int, int]]:
        """``(tile, latency)`` of every tile reached directly from ``tile``, sorted."""
        out = {tile + s * o: lat for o, lat in self.links for s in (-1, 1)
               if 0 <= tile + s * o < self.tiles}
        return sorted(out.items())


@dataclass(frozen=True, kw_only=True)
class CgraSpec:
    """A generic CGRA: ``rows x cols`` PEs with neighbour links and modulo II.

    ``neighbours`` is ``"mesh"`` (N/S/E/W), ``"torus"`` (mesh with wrap-around),
    ``"diagonal"`` (mesh plus the four diagonals) or ``"one-hop"`` (mesh plus links to the
    PEs two steps away in the same row or column, HyCUBE/ADRES-style). Every link takes
    one cycle and carries one value per cycle. ``memory_pes`` says which PEs reach memory
    (``"all"``, ``"left"`` column, ``"left-right"`` columns, ``"boundary"``); memory
    operations (``memory_ops``, case-insensitive) run only there. ``registers`` values fit
    in one PE per cycle; ``operations`` lists the operations every PE runs (empty: all);
    ``latency`` is the default operation latency, ``op_latency`` per-operation overrides.

    Examples
    --------
    >>> c = load_hardware("cgra4x4")
    >>> (c.pe_count, c.neighbours, c.registers)
    (16, 'mesh', 4)
    >>> c.neighbours_of(0, 0), c.latency_of("add"), c.is_memory_op("load")
    ([(0, 1), (1, 0)], 1, True)
    """

    name: str
    kind: str = "cgra"
    rows: int
    cols: int
    neighbours: str = "mesh"
    max_ii: int = 8
    registers: int = 4
    memory_pes: str = "all"
    memory_ops: tuple[str, ...] = CGRA_MEMORY_OPS
    operations: tuple[str, ...] = ()
    latency: int = 1
    op_latency: tuple[tuple[str, int], ...] = ()
    assumed: tuple[str, ...] = ()
    notes: str = ""

    def __post_init__(self) -> None:
        object.__setattr__(self, "assumed", tuple(self.assumed))
        object.__setattr__(self, "memory_ops", tuple(o.upper() for o in self.memory_ops))
        object.__setattr__(self, "operations", tuple(o.upper() for o in self.operations))
        object.__setattr__(self, "op_latency", tuple(sorted(
            (o.upper(), int(v)) for o, v in dict(self.op_latency).items())))
        _check_positive(self, ("rows", "cols", "max_ii", "registers", "latency"))
        if self.neighbours not in CGRA_NEIGHBOURS:
            raise ValueError(f"neighbours must be one of {CGRA_NEIGHBOURS}, "
                             f"got {self.neighbours!r}")
        if self.memory_pes not in CGRA_MEMORY_PES:
            raise ValueError(f"memory_pes must be one of {CGRA_MEMORY_PES}, "
                             f"got {self.memory_pes!r}")

    @property
    def pe_count(self) -> int:
        """Number of PEs."""
        return self.rows * self.cols

    def neighbours_of(self, row: int, col: int) -> list[tuple[int, int]]:
        """The PEs a value at ``(row, col)`` reaches in one cycle (sorted, itself excluded)."""
        steps = [(-1, 0), (1, 0), (0, -1), (0, 1)]
        if self.neighbours == "diagonal":
            steps += [(-1, -1), (-1, 1), (1, -1), (1, 1)]
        if self.neighbours == "one-hop":
            steps += [(-2, 0), (2, 0), (0, -2), (0, 2)]
        out = set()
        for dr, dc in steps:
            r, c = row + dr, col + dc
            if self.neighbours == "torus":
                r, c = r % self.rows, c % self.cols
            if 0 <= r < self.rows and 0 <= c < self.cols and (r, c) != (row, col):
                out.add((r, c))
        return sorted(out)

    def reaches_memory(self, row: int, col: int) -> bool:
        """Whether the PE at ``(row, col)`` may run memory operations."""
        if self.memory_pes == "all":
            return True
        if self.memory_pes == "left":
            return col == 0
        if self.memory_pes == "left-right":
            return col in (0, self.cols - 1)
        return row in (0, self.rows - 1) or col in (0, self.cols - 1)

    def is_memory_op(self, op: str) -> bool:
        """Whether ``op`` (any case) is a memory operation."""
        return op.upper() in self.memory_ops

    def supports(self, op: str) -> bool:
        """Whether the PEs run ``op`` (any case); memory operations always (on memory PEs)."""
        return not self.operations or op.upper() in self.operations or self.is_memory_op(op)

    def latency_of(self, op: str) -> int:
        """Cycles from issue until ``op``'s result sits in its PE's registers."""
        return dict(self.op_latency).get(op.upper(), self.latency)


HardwareSpec = Union[RduSpec, StreamingEngineSpec, CgraSpec]


def _check_positive(spec: Any, names: tuple[str, ...]) -> None:
    for name in names:
        value = getattr(spec, name)
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ValueError(f"{type(spec).__name__}.{name} must be a positive integer, "
                             f"got {value!r}")


def _check_rdu(spec: RduSpec) -> None:
    _check_positive(spec, ("array_rows", "array_cols", "pmu_bytes", "pcu_lanes", "pcu_stages"))
    if len(spec.arrays) != 2 or min(spec.arrays) < 1:
        raise ValueError(f"arrays must be two positive integers, got {spec.arrays!r}")
    if spec.agcus_per_array not in (0, 4):
        raise ValueError(f"agcus_per_array must be 4 (one per quadrant) or 0, "
                         f"got {spec.agcus_per_array}")
    if spec.agcus_per_array and min(spec.array_rows, spec.array_cols) < 2:
        raise ValueError("an array with AGCUs needs at least 2 x 2 sites (four quadrants)")
    if spec.pattern not in PATTERNS:
        raise ValueError(f"pattern must be one of {PATTERNS}, got {spec.pattern!r}")
    if spec.site_count > LIMITS["rdu_sites"]:
        raise ValueError(f"{spec.rows} x {spec.cols} sites is above the limit of "
                         f"{LIMITS['rdu_sites']} sites")
    if sorted(spec.networks) != sorted(NETWORK_NAMES):
        raise ValueError(f"networks must be exactly {NETWORK_NAMES}, got {sorted(spec.networks)}")
    for key in _RDU_PERF_FIELDS:
        value = getattr(spec, key)
        if value is not None and not (isinstance(value, (int, float)) and value >= 0
                                      and (value > 0 or key == "hop_cycles")):
            raise ValueError(f"{key} must be a positive number or None, got {value!r}")


def _frozen(value: Any) -> Any:
    """A hashable copy of a JSON value (for hashing specs)."""
    if isinstance(value, dict):
        return tuple(sorted((k, _frozen(v)) for k, v in value.items()))
    if isinstance(value, (list, tuple)):
        return tuple(_frozen(v) for v in value)
    return value


# ---------------------------------------------------------------------------
# JSON form
# ---------------------------------------------------------------------------
def spec_to_dict(spec: HardwareSpec) -> dict:
    """The JSON form of a spec (``version``, ``kind``, then the fields).

    Parameters
    ----------
    spec : RduSpec, StreamingEngineSpec or CgraSpec

    Returns
    -------
    dict
        Plain JSON types only; :func:`spec_from_dict` of it equals ``spec``.

    Examples
    --------
    >>> d = spec_to_dict(load_hardware("tiny"))
    >>> d["version"], d["kind"], d["networks"]["scalar"]
    (1, 'rdu', {'width_bits': 32, 'channels': 4})
    >>> spec_from_dict(d) == load_hardware("tiny")
    True
    """
    out: dict[str, Any] = {"version": VERSION, "kind": spec.kind, "name": spec.name}
    if isinstance(spec, RduSpec):
        out.update(array_rows=spec.array_rows, array_cols=spec.array_cols,
                   arrays=list(spec.arrays), pattern=spec.pattern,
                   networks={n: {"width_bits": spec.networks[n].width_bits,
                                 "channels": spec.networks[n].channels}
                             for n in NETWORK_NAMES},
                   pmu_bytes=spec.pmu_bytes, pcu_lanes=spec.pcu_lanes,
                   pcu_stages=spec.pcu_stages, agcus_per_array=spec.agcus_per_array,
                   clock_ghz=spec.clock_ghz)
        out.update({key: getattr(spec, key) for key in _RDU_PERF_FIELDS
                    if getattr(spec, key) is not None})
    elif isinstance(spec, StreamingEngineSpec):
        out.update(tiles=spec.tiles, links=[list(link) for link in spec.links],
                   instruction_latency=spec.instruction_latency, max_ii=spec.max_ii,
                   memories_per_tile=spec.memories_per_tile,
                   memory_width_bits=spec.memory_width_bits,
                   memory_depth=spec.memory_depth, max_operands=spec.max_operands,
                   af_latency=spec.af_latency)
    elif isinstance(spec, CgraSpec):
        out.update(rows=spec.rows, cols=spec.cols, neighbours=spec.neighbours,
                   max_ii=spec.max_ii, registers=spec.registers, memory_pes=spec.memory_pes,
                   memory_ops=list(spec.memory_ops), operations=list(spec.operations),
                   latency=spec.latency, op_latency=dict(spec.op_latency))
    else:
        raise TypeError(f"not a hardware spec: {type(spec).__name__}")
    out.update(assumed=list(spec.assumed), notes=spec.notes)
    return out


_COMMON = ("version", "kind", "name", "assumed", "notes")
_RDU_FIELDS = _COMMON + ("array_rows", "array_cols", "arrays", "pattern", "networks",
                         "pmu_bytes", "pcu_lanes", "pcu_stages", "agcus_per_array", "clock_ghz",
                         "pcu_flops_per_cycle", "pmu_read_bytes_per_cycle",
                         "pmu_write_bytes_per_cycle", "hop_cycles", "dram_bytes_per_s",
                         "reconfig_us")
#: optional RDU performance fields, written by spec_to_dict only when set
_RDU_PERF_FIELDS = ("pcu_flops_per_cycle", "pmu_read_bytes_per_cycle",
                    "pmu_write_bytes_per_cycle", "hop_cycles", "dram_bytes_per_s",
                    "reconfig_us")
_SE_FIELDS = _COMMON + ("tiles", "links", "instruction_latency", "max_ii", "memories_per_tile",
                        "memory_width_bits", "memory_depth", "max_operands", "af_latency")
_CGRA_FIELDS = _COMMON + ("rows", "cols", "neighbours", "max_ii", "registers", "memory_pes",
                          "memory_ops", "operations", "latency", "op_latency")
_NETWORK_EXAMPLE = {"vector": (512, 2), "scalar": (32, 4), "control": (1, 8)}


def spec_from_dict(data: Any, file: str = "<hardware>", default_name: str | None = None
                   ) -> HardwareSpec:
    """Build a spec from its JSON form, checking every field.

    Parameters
    ----------
    data : object
        The parsed JSON (should be a dict).
    file : str
        The file name used in error messages.
    default_name : str, optional
        The name to use when ``data`` has none (the file's stem when loading a file).

    Returns
    -------
    RduSpec, StreamingEngineSpec or CgraSpec

    Raises
    ------
    InputError
        Naming ``file``, the JSON path of the bad field and a fix.

    Examples
    --------
    >>> spec_from_dict({"version": 1, "kind": "cgra", "name": "m", "rows": 2, "cols": 3,
    ...                 "max_ii": 4}).pe_count
    6
    >>> spec_from_dict({"version": 1, "kind": "cgra", "name": "m", "rows": -2, "cols": 3,
    ...                 "max_ii": 4}, file="m.json")
    Traceback (most recent call last):
    ...
    hardware.errors.InputError: m.json: rows: value -2 is negative (fix: use an integer >= 1
    (PE rows))
    """
    if not isinstance(data, dict):
        raise InputError(file, "", "a hardware description must be a JSON object",
                         'write {"version": 1, "kind": "rdu", ...} '
                         '(see hardware/presets/tiny.json)')
    r = Reader(file, data)
    if "version" not in data:
        raise r.fail("version", "required field is missing",
                     f'add "version": {VERSION} as the first field')
    version = r.integer("version", minimum=0, meaning=f'the format version, "version": {VERSION}')
    if version != VERSION:
        raise r.fail("version", f"unsupported version {version}",
                     f'this program reads "version": {VERSION}; convert the file')
    kind = r.string("kind", choices=KINDS, meaning="which kind of hardware")
    name = _read_name(r, default_name)
    if kind == "rdu":
        return _read_rdu(r, name)
    if kind == "streaming-engine":
        return _read_se(r, name)
    return _read_cgra(r, name)


def _read_name(r: Reader, default_name: str | None) -> str:
    if default_name is None:
        return r.string("name", meaning="the hardware's name")
    return r.string("name", default=default_name, meaning="the hardware's name")


def _read_common(r: Reader) -> dict[str, Any]:
    return {"assumed": r.strings("assumed", default=(), meaning="assumptions, one per string"),
            "notes": r.string("notes", default="", meaning="free text")}


def _read_rdu(r: Reader, name: str) -> RduSpec:
    r.reject_unknown(_RDU_FIELDS)
    rows = r.integer("array_rows", minimum=1, meaning="unit-site rows per array")
    cols = r.integer("array_cols", minimum=1, meaning="unit-site columns per array")
    arrays = r.int_list("arrays", length=2, minimum=1, maximum=LIMITS["arrays_per_side"],
                        default=(1, 1), meaning="arrays on the chip as [rows, cols]")
    _check_site_count(r, rows * arrays[0], cols * arrays[1])
    agcus = r.integer("agcus_per_array", minimum=0, default=4,
                      meaning="AGCUs per array: 4, one per quadrant, or 0")
    if agcus not in (0, 4):
        raise r.fail("agcus_per_array", f"unsupported value {agcus}",
                     "use 4 (one AGCU per quadrant, as in source 000) or 0 (none)")
    if agcus and min(rows, cols) < 2:
        bad = "array_rows" if rows < 2 else "array_cols"
        raise r.fail(bad, "an array with AGCUs needs at least 2 x 2 sites (four quadrants)",
                     f'use {bad} >= 2, or set "agcus_per_array": 0')
    return RduSpec(
        name=name, array_rows=rows, array_cols=cols, arrays=arrays,
        pattern=r.string("pattern", default="checkerboard", choices=PATTERNS,
                         meaning="which unit each site holds"),
        networks=_read_networks(r),
        pmu_bytes=r.integer("pmu_bytes", minimum=1, maximum=LIMITS["pmu_bytes"],
                            meaning="scratchpad bytes per PMU"),
        pcu_lanes=r.integer("pcu_lanes", minimum=1, maximum=LIMITS["pcu_lanes"],
                            meaning="SIMD lanes per PCU stage"),
        pcu_stages=r.integer("pcu_stages", minimum=1, maximum=LIMITS["pcu_stages"],
                             meaning="pipeline stages per PCU"),
        agcus_per_array=agcus,
        clock_ghz=r.number("clock_ghz", maximum=LIMITS["clock_ghz"], default=None,
                           allow_null=True, meaning="clock in GHz"),
        **_read_rdu_perf(r),
        **_read_common(r))


def _read_rdu_perf(r: Reader) -> dict[str, Any]:
    """The optional performance fields of an RDU (``None`` = the property's default)."""
    def rate(key: str, limit: str, meaning: str) -> float | None:
        return r.number(key, maximum=LIMITS[limit], default=None, allow_null=True,
                        meaning=meaning)
    return {
        "pcu_flops_per_cycle": rate("pcu_flops_per_cycle", "pcu_flops_per_cycle",
                                    "FLOPs per PCU per cycle; default 2 x lanes x stages"),
        "pmu_read_bytes_per_cycle": rate("pmu_read_bytes_per_cycle", "pmu_bytes_per_cycle",
                                         "bytes one PMU reads per cycle"),
        "pmu_write_bytes_per_cycle": rate("pmu_write_bytes_per_cycle", "pmu_bytes_per_cycle",
                                          "bytes one PMU writes per cycle"),
        "hop_cycles": r.integer("hop_cycles", minimum=0, maximum=LIMITS["hop_cycles"],
                                default=1, meaning="cycles per link hop"),
        "dram_bytes_per_s": rate("dram_bytes_per_s", "dram_bytes_per_s",
                                 "DRAM bandwidth in bytes per second"),
        "reconfig_us": rate("reconfig_us", "reconfig_us",
                            "microseconds to load one section's configuration"),
    }


def _read_networks(r: Reader) -> dict[str, NetworkSpec]:
    nets = r.object("networks", meaning="the vector, scalar and control networks")
    nets.reject_unknown(NETWORK_NAMES)
    out = {}
    for net in NETWORK_NAMES:
        width, channels = _NETWORK_EXAMPLE[net]
        if net not in nets.data:
            raise nets.fail(net, "required network is missing",
                            f'add "{net}": {{"width_bits": {width}, "channels": {channels}}}')
        n = nets.object(net, meaning=f"the {net} network")
        n.reject_unknown(("width_bits", "channels"))
        out[net] = NetworkSpec(
            net,
            n.integer("width_bits", minimum=1, maximum=LIMITS["width_bits"],
                      meaning=f"bits per {net} channel"),
            n.integer("channels", minimum=1, maximum=LIMITS["channels"],
                      meaning=f"{net} channels per link per direction"))
    return out


def _check_site_count(r: Reader, rows: int, cols: int) -> None:
    """Refuse a chip whose resource graph would not fit in memory (see ``LIMITS``)."""
    sites, limit = rows * cols, LIMITS["rdu_sites"]
    if sites <= limit:
        return
    need_gb = sites * _BYTES_PER_SITE / 1e9
    raise r.fail("array_rows", f"{rows} x {cols} = {sites:,} unit sites is above the limit of "
                 f"{limit:,} (its resource graph would need about {need_gb:,.1f} GB of memory)",
                 f"describe at most {limit:,} sites (e.g. 128 x 128): array_rows x array_cols "
                 "x arrays")


def _read_se(r: Reader, name: str) -> StreamingEngineSpec:
    r.reject_unknown(_SE_FIELDS)
    # one tile has no neighbour to link to, so a line needs two
    tiles = r.integer("tiles", minimum=2, maximum=LIMITS["se_tiles"], meaning="tiles in the line")
    return StreamingEngineSpec(
        name=name,
        tiles=tiles,
        links=_read_links(r, tiles),
        instruction_latency=r.integer("instruction_latency", minimum=1,
                                      meaning="cycles from issue to result"),
        max_ii=r.integer("max_ii", minimum=1, maximum=LIMITS["max_ii"],
                         meaning="largest initiation interval (slots per tile)"),
        memories_per_tile=r.integer("memories_per_tile", minimum=1,
                                    maximum=LIMITS["memories_per_tile"],
                                    meaning="tile memories per tile"),
        memory_width_bits=r.integer("memory_width_bits", minimum=1,
                                    maximum=LIMITS["memory_width_bits"],
                                    meaning="bits per memory entry"),
        memory_depth=r.integer("memory_depth", minimum=1, maximum=LIMITS["memory_depth"],
                               meaning="entries per tile memory"),
        max_operands=r.integer("max_operands", minimum=1, maximum=LIMITS["max_operands"],
                               meaning="data operands per instruction"),
        af_latency=r.integer("af_latency", minimum=1, default=16,
                             meaning="cycles of one asynchronous-fabric transfer between SDFs"),
        **_read_common(r))


def _read_links(r: Reader, tiles: int) -> tuple[tuple[int, int], ...]:
    meaning = f"[tile offset 1..{tiles - 1}, latency 1..{LIMITS['link_latency']} cycles]"
    if "links" not in r.data:
        raise r.fail("links", "required field is missing",
                     f'add "links": [[1, 1], [2, 2]] ({meaning})')
    value = r.data["links"]
    if not isinstance(value, list):
        raise r.fail("links", "expected a list of [offset, latency] pairs",
                     'write e.g. "links": [[1, 1], [2, 2]]')
    links = tuple(_read_link(r, i, tiles, meaning) for i in range(len(value)))
    offsets = [offset for offset, _ in links]
    if len(set(offsets)) != len(offsets):
        raise r.fail("links", "the same tile offset is listed twice", "list each offset once")
    return links


def _read_link(r: Reader, index: int, tiles: int, meaning: str) -> tuple[int, int]:
    """One ``[offset, latency]`` pair; an offset must reach a tile of the line."""
    item = r.item("links", index)
    offset, latency = item.int_list(2, 1, meaning)
    if offset > tiles - 1:
        raise InputError(r.file, f"{item.path}[0]", f"tile offset {offset} reaches past "
                         f"the {tiles} tiles of the line", f"use an offset from 1 to {tiles - 1}")
    if latency > LIMITS["link_latency"]:
        raise InputError(r.file, f"{item.path}[1]", f"latency {latency} is above the limit "
                         f"{LIMITS['link_latency']}",
                         f"use a latency from 1 to {LIMITS['link_latency']} cycles")
    return offset, latency


def _read_cgra(r: Reader, name: str) -> CgraSpec:
    r.reject_unknown(_CGRA_FIELDS)
    rows = r.integer("rows", minimum=1, meaning="PE rows")
    cols = r.integer("cols", minimum=1, meaning="PE columns")
    if rows * cols > LIMITS["cgra_pes"]:
        raise r.fail("rows", f"{rows} x {cols} = {rows * cols:,} PEs is above the limit of "
                     f"{LIMITS['cgra_pes']:,}",
                     f"describe at most {LIMITS['cgra_pes']:,} PEs (e.g. 64 x 64)")
    return CgraSpec(
        name=name,
        rows=rows,
        cols=cols,
        neighbours=r.string("neighbours", default="mesh", choices=CGRA_NEIGHBOURS,
                            meaning="which PEs are linked"),
        max_ii=r.integer("max_ii", minimum=1, maximum=LIMITS["max_ii"],
                         meaning="largest initiation interval"),
        registers=r.integer("registers", minimum=1, maximum=LIMITS["cgra_registers"],
                            default=4, meaning="values one PE holds per cycle"),
        memory_pes=r.string("memory_pes", default="all", choices=CGRA_MEMORY_PES,
                            meaning="which PEs reach memory"),
        memory_ops=r.strings("memory_ops", default=CGRA_MEMORY_OPS,
                             meaning="operations that access memory"),
        operations=r.strings("operations", default=(),
                             meaning="operations every PE runs; empty: all"),
        latency=r.integer("latency", minimum=1, maximum=LIMITS["cgra_latency"], default=1,
                          meaning="cycles from issue to result"),
        op_latency=_read_op_latency(r),
        **_read_common(r))


def _read_op_latency(r: Reader) -> tuple[tuple[str, int], ...]:
    """``{"MUL": 2, ...}``: per-operation latency overrides."""
    if "op_latency" not in r.data:
        return ()
    table = r.object("op_latency", meaning="cycles per operation name")
    return tuple((op, table.integer(op, minimum=1, maximum=LIMITS["cgra_latency"],
                                    meaning=f"cycles of {op}")) for op in sorted(table.data))


# ---------------------------------------------------------------------------
# presets and files
# ---------------------------------------------------------------------------
_NAME = re.compile(r"^[A-Za-z0-9_\-]+$")


def _presets_dir():
    return resources.files("hardware").joinpath("presets")


def preset_names() -> list[str]:
    """Names of the presets shipped in ``hardware/presets``, sorted.

    Examples
    --------
    >>> [n for n in ("tiny", "plasticine", "sn10", "se16", "cgra4x4") if n in preset_names()]
    ['tiny', 'plasticine', 'sn10', 'se16', 'cgra4x4']
    """
    return sorted(p.name[:-5] for p in _presets_dir().iterdir() if p.name.endswith(".json"))


def load_hardware(name_or_path: str | os.PathLike | HardwareSpec = DEFAULT_PRESET) -> HardwareSpec:
    """Load a hardware description by preset name or from a JSON file.

    Parameters
    ----------
    name_or_path : str, path or spec
        A preset name (see :func:`preset_names`), or the path of a JSON file.
        A preset name wins over a file of the same name in the working
        directory (write ``./tiny`` for the file). A spec passes through
        unchanged. Default: :data:`DEFAULT_PRESET`.

    Returns
    -------
    RduSpec, StreamingEngineSpec or CgraSpec

    Raises
    ------
    InputError
        For an unknown preset name (the message lists the known ones), a file that
        is missing or not JSON, or any bad field (named by its JSON path).

    Examples
    --------
    >>> load_hardware("plasticine").pcu_count
    64
    >>> load_hardware("nosuch")            # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    hardware.errors.InputError: nosuch: unknown hardware preset "nosuch" (fix: use one of the
    presets cgra4x4, cgra4x4-torus, ...)
    """
    if isinstance(name_or_path, (RduSpec, StreamingEngineSpec, CgraSpec)):
        return name_or_path
    text = os.fspath(name_or_path)
    is_name = bool(_NAME.match(text))
    if is_name and text in preset_names():
        preset = _presets_dir().joinpath(f"{text}.json")
        return _parse(preset.read_bytes(), f"hardware/presets/{text}.json", text)
    path = Path(text)
    if path.is_file():
        raw = read_bounded(path, text, "give a hardware description (a few KB, see "
                           "hardware/presets/tiny.json)", "check the path and its permissions")
        return _parse(raw, text, path.stem)
    if path.is_dir():
        raise InputError(text, "", "is a directory, not a hardware file",
                         f"give a hardware JSON file (e.g. {text.rstrip('/')}/chip.json) "
                         f"or a preset name ({', '.join(preset_names())})")
    special = special_file(path)     # a named pipe is never opened: it would wait for a writer
    if special is not None:
        raise InputError(text, "", f"is {special}, not a hardware file",
                         "save the description to a JSON file and pass that file, or a "
                         f"preset name ({', '.join(preset_names())})")
    if is_name:
        raise InputError(text, "", f'unknown hardware preset "{text}"',
                         f"use one of the presets {', '.join(preset_names())}, "
                         "or the path of a hardware JSON file")
    raise InputError(text, "", "file not found",
                     f"give an existing JSON file or a preset name ({', '.join(preset_names())})")


def _parse(raw: bytes, file: str, stem: str) -> HardwareSpec:
    data = parse_json(raw, file, "see hardware/presets/tiny.json")
    return spec_from_dict(data, file, default_name=stem)
