"""Hardware descriptions and the resource graphs derived from them.

The lowest package of the mapper: it may import only the standard library, numpy
and networkx. Everything else reads hardware numbers from here.

* :func:`load_hardware` -- a preset name (:func:`preset_names`) or a JSON file ->
  :class:`RduSpec`, :class:`StreamingEngineSpec` or :class:`CgraSpec`.
* :func:`build_fabric` -- an RDU spec -> :class:`RduFabric` (sites, switches,
  links, capacities, O(1) distances).
* :func:`build_tile_graph` -- a Streaming Engine or CGRA spec -> its tile / PE
  link graph.
* :class:`InputError` -- every problem with a user's file.

Examples
--------
>>> import hardware
>>> spec = hardware.load_hardware(hardware.DEFAULT_PRESET)
>>> spec.name, spec.pcu_count, spec.pmu_count
('plasticine', 64, 64)
>>> hardware.build_fabric(spec).distance("U0_0", "U15_7")
20
"""

from hardware.description import (
    DEFAULT_PRESET,
    CgraSpec,
    HardwareSpec,
    NetworkSpec,
    RduSpec,
    StreamingEngineSpec,
    load_hardware,
    preset_names,
    spec_from_dict,
    spec_to_dict,
)
from hardware.errors import InputError
from hardware.fabric import RduFabric, Site, build_fabric
from hardware.tiles import build_tile_graph

__all__ = [
    "DEFAULT_PRESET",
    "CgraSpec",
    "HardwareSpec",
    "InputError",
    "NetworkSpec",
    "RduFabric",
    "RduSpec",
    "Site",
    "StreamingEngineSpec",
    "build_fabric",
    "build_tile_graph",
    "load_hardware",
    "preset_names",
    "spec_from_dict",
    "spec_to_dict",
]
