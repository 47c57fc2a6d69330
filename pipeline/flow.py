"""Map a graph on any hardware: the entry point of every run.

:func:`map_graph` looks the hardware's kind up in the target table (:mod:`pipeline.targets`)
and runs that target's flow: the RDU's compiler levels (:mod:`pipeline.rdu`), the Streaming
Engine's (:mod:`pipeline.streaming`) or a CGRA's (:mod:`pipeline.cgra`), each inside its
feedback loop. mapping.json is written either way: on success with every decision, on failure
with the diagnosis and the trace of every feedback round.
"""

from __future__ import annotations

from typing import Callable

from model.graph import Graph
from model.mapping import Mapping
from pipeline.options import RunOptions
from pipeline.targets import target_of

__all__ = ["map_graph"]


def map_graph(graph: Graph, spec, options: RunOptions | None = None,
              progress: Callable[[str], None] | None = None,
              advance: Callable[[], None] | None = None, levels: list | None = None) -> Mapping:
    """Map ``graph`` on the hardware ``spec``; raises MappingFailed with a diagnosis.

    ``progress`` receives log lines; ``advance`` is called once per section compiled (RDU);
    ``levels`` replaces the RDU's default compiler levels (for tests and for plugging in
    other passes).
    """
    return target_of(spec).map(graph, spec, options or RunOptions(), progress, advance, levels)
