"""One table of targets: how each kind of hardware is mapped, reported and drawn.

The pipeline asks which kind of hardware it has in one place only, :func:`target_of`: the
command line, ``pipeline.draw`` and report.html take everything kind-specific from the
:class:`Target` it returns. A new kind of hardware is one more entry in :data:`TARGETS`.

>>> from hardware import load_hardware
>>> target_of(load_hardware("cgra4x4")).kind, target_of(load_hardware("se16")).pictures
('cgra', ('tiles',))
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from hardware import InputError, RduFabric, build_fabric
from model.mapping import Mapping
from pipeline.cgra import map_cgra
from pipeline.options import RunOptions
from pipeline.page_parts import cgra_page, rdu_page, streaming_page
from pipeline.pictures import draw_cgra, draw_mapping, draw_streaming
from pipeline.rdu import map_rdu, may_use_workers
from pipeline.report import cgra_lines, streaming_lines
from pipeline.streaming import map_streaming

__all__ = ["Target", "TARGETS", "target_of"]


@dataclass(frozen=True)
class Target:
    """What one kind of hardware maps with, says in report.md, and draws.

    ``map(graph, spec, options, progress, advance, levels)`` raises
    :class:`~pipeline.feedback.MappingFailed` with a diagnosis; ``fabric(spec)`` is the
    routing fabric (None where the target has none); ``report_lines(mapping)`` the target's
    own report lines; ``draw(mapping, spec, fabric, out, fmt, deadline)`` writes the
    pictures and returns their names (``pictures`` names them before they exist);
    ``page(mapping, spec, fabric, graph)`` what report.html draws; ``may_use_workers(options)``
    whether a run may start local workers.
    """

    kind: str
    map: Callable[..., Mapping]
    draw: Callable[..., list[str]]
    page: Callable[..., dict]
    pictures: tuple[str, ...] = ()
    fabric: Callable = lambda spec: None
    report_lines: Callable[[Mapping], list[str]] = lambda mapping: []
    may_use_workers: Callable[[RunOptions], bool] = lambda options: False

    def describe(self, spec, fabric: RduFabric | None = None) -> str:
        """The hardware in one line: the fabric's own description, else name and kind."""
        return fabric.describe() if fabric is not None else f"{spec.name} ({spec.kind})"


def _one_picture(draw, stem: str) -> Callable[..., list[str]]:
    """A target drawn in one picture, ``stem.fmt``, by ``draw(mapping, spec, path)``."""
    def drawn(mapping: Mapping, spec, fabric: RduFabric | None, out: Path, fmt: str,
              deadline=None) -> list[str]:
        name = f"{stem}.{fmt}"
        draw(mapping, spec, Path(out) / name)
        return [name]
    return drawn


def _map_streaming(graph, spec, options, progress=None, advance=None, levels=None) -> Mapping:
    return map_streaming(graph, spec, options, progress)


def _map_cgra(graph, spec, options, progress=None, advance=None, levels=None) -> Mapping:
    return map_cgra(graph, spec, options, progress)


def _draw_rdu(mapping: Mapping, spec, fabric: RduFabric, out: Path, fmt: str,
              deadline=None) -> list[str]:
    return draw_mapping(mapping, fabric, out, fmt, deadline=deadline)


TARGETS: dict[str, Target] = {
    "rdu": Target("rdu", map_rdu, _draw_rdu, rdu_page, ("sections",), fabric=build_fabric,
                  may_use_workers=may_use_workers),
    "streaming-engine": Target("streaming-engine", _map_streaming,
                               _one_picture(draw_streaming, "tiles"), streaming_page,
                               ("tiles",), report_lines=streaming_lines),
    "cgra": Target("cgra", _map_cgra, _one_picture(draw_cgra, "pes"), cgra_page, ("pes",),
                   report_lines=cgra_lines),
}


def target_of(spec) -> Target:
    """The target of the hardware ``spec``; an :class:`~hardware.InputError` names the kinds
    this version maps when ``spec.kind`` is none of them."""
    try:
        return TARGETS[spec.kind]
    except KeyError:
        raise InputError(getattr(spec, "source", None) or spec.name, "kind",
                         f"{spec.kind} targets are not supported by this version",
                         f"choose one of {', '.join(TARGETS)}: a preset such as "
                         "--hardware plasticine, se16 or cgra4x4") from None
