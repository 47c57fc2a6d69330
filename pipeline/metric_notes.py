"""What every number of mapping.json's ``metrics`` means, and in which unit.

report.md's metrics table, report.html and the command line's last lines read the unit and the
one-line meaning from :data:`METRICS`; a test holds that every metric a run of each target
writes has an entry, so no number reaches a user without its unit.

Examples
--------
>>> unit_of("throughput"), unit_of("ii")
('samples/s', 'cycles')
>>> meaning_of("no such metric")
''
"""

from __future__ import annotations

from types import MappingProxyType

__all__ = ["METRICS", "unit_of", "meaning_of", "sample_meaning"]

_COUNT = "count"
_TEXT = "text"

#: metric key -> (unit, one-line meaning). Units: a physical unit, "count", "yes/no" or "text".
METRICS = MappingProxyType({
    # every target
    "nodes": (_COUNT, "operations and tensors in the graph as mapped"),
    "edges": (_COUNT, "data dependences between them"),
    "seconds": ("s", "time of the mapping passes alone (loading and writing aside)"),
    "feedback_rounds": (_COUNT, "times a level failed and an earlier level changed its answer"),
    "status": (_TEXT, "how the schedule search ended: optimal = proven best length"),
    "method": (_TEXT, "the search that produced the kept schedule"),
    "cut_short": (_COUNT, "searches the wall clock stopped before their planned work"),
    "rules": (_TEXT, "the rule codes that made the graph unmappable"),
    "performance": (_TEXT, "why no performance estimate was made"),
    # RDU grids
    "sections": (_COUNT, "configurations the chip runs one after another (a section fits the "
                         "chip at once)"),
    "wirelength": ("links", "on-chip links used, a net counted once per link, over every section"),
    "max_link_load": ("nets/channel", "the fullest link's nets over its channels (at most 1 fits)"),
    "weighted_distance": ("objective", "sum of the placement models' objectives (smaller: "
                                       "shorter nets)"),
    "routing_iterations": (_COUNT, "negotiated-congestion rounds of the slowest routing"),
    "dram_edges": (_COUNT, "edges between sections: their values go through DRAM"),
    "dram_bytes": ("bytes/sample", "bytes those edges carry through DRAM per sample"),
    "units_used": (_COUNT, "compute and memory units placed, over every section"),
    "sites": (_COUNT, "unit sites of the chip"),
    "sections_reused": (_COUNT, "sections kept from an earlier round of the feedback loop"),
    "twin_sections": (_COUNT, "sections of the same shape as an earlier one: they reuse its "
                              "placement and routes, renamed and checked again"),
    "throughput": ("samples/s", "simulated steady-state rate of the whole graph, sections run "
                                "one after another on batches"),
    "samples_per_cycle": ("samples/cycle", "the same rate per clock cycle"),
    "latency_s": ("s", "one sample alone through every section (empty pipelines)"),
    "bottleneck": (_TEXT, "the slowest section and what limits it"),
    "busiest_link": (_TEXT, "the link busiest in its section, with its busy share"),
    "perf_batch": ("samples", "samples per batch: each section runs a whole batch before the "
                              "chip is reconfigured for the next"),
    "batch_s": ("s", "time of one batch through every section"),
    # Streaming Engine and CGRAs: the modulo schedule
    "ii": ("cycles", "initiation interval: a new loop iteration starts every II cycles"),
    "ii_lower_bound": ("cycles", "no schedule can have a smaller II (the largest bound below)"),
    "res_ii": ("cycles", "II bound from the operations per tile/PE"),
    "mem_ii": ("cycles", "II bound from memory accesses per bank"),
    "rec_ii": ("cycles", "II bound from loop-carried cycles (recurrences)"),
    "reg_ii": ("cycles", "II bound from registers per PE"),
    "recurrence_floor": ("cycles", "the II a recurrence needs in one synchronous data-flow"),
    "ii_bound": ("cycles", "proven: every II below it is impossible on this CGRA"),
    "proven_ii": ("yes/no", "whether the II is proven the smallest possible"),
    "ii_gap": ("cycles", "II minus the proven bound (0: minimal)"),
    "cycles": ("cycles", "length of one iteration, first operation to last"),
    "cycles_bound": ("cycles", "proven lower bound on that length at this II"),
    "critical_path": ("cycles", "longest dependence chain, a bound on the length"),
    "cycles_sim": ("cycles", "one iteration's length as the simulator executed it"),
    "iterations_sim": (_COUNT, "iterations the simulator executed to check the schedule"),
    "placer": (_TEXT, "the placement method"),
    "baseline_ii": ("cycles", "II of the list-scheduling baseline (the warm start)"),
    "baseline_cycles": ("cycles", "iteration length of that baseline"),
    "baseline_seconds": ("s", "time the baseline took"),
    "registers_peak": ("values", "most values held in one PE at once"),
    "link_values_peak": ("values", "most values on one link at once"),
    "pes_used": (_COUNT, "processing elements with at least one operation"),
    "pes": (_COUNT, "processing elements of the CGRA"),
    "hops": ("hops", "PE-to-PE moves of all routed values"),
    "work_seconds": ("s", "deterministic work the searches spent"),
    "total_cycles_3_iterations": ("cycles", "three iterations through the simulator"),
    "delay_entries": (_COUNT, "spoke entries that only delay a value"),
    "tiles_used": (_COUNT, "tiles with at least one instruction"),
    "sdfs": (_COUNT, "synchronous data-flows (SDFs): parts of the kernel run as phases, joined "
                     "over the asynchronous fabric"),
    "af_edges": (_COUNT, "edges between SDFs, over the asynchronous fabric"),
    "af_latency": ("cycles", "cycles of one transfer over the asynchronous fabric (assumed)"),
    "pass_instructions": (_COUNT, "instructions added only to relay a value (fan-out relief)"),
    "sdf_ii": ("cycles", "the II of each SDF"),
    "batch": ("iterations", "iterations each SDF runs per phase"),
    "batch_cycles": ("cycles", "cycles of one batch through every phase"),
    "effective_ii": ("cycles", "cycles per iteration over the phases"),
})


def unit_of(key: str) -> str:
    """The unit of metric ``key`` ('' when unknown)."""
    return METRICS.get(key, ("", ""))[0]


def meaning_of(key: str) -> str:
    """The one-line meaning of metric ``key`` ('' when unknown)."""
    return METRICS.get(key, ("", ""))[1]


def sample_meaning(graph_attrs: dict | None) -> str:
    """What one simulated sample is: one pass of the whole graph; for an ONNX model imported
    with a batch of B, that pass is the whole batch.

    >>> sample_meaning({"format": "onnx", "batch": 8})
    'a sample is one pass of the whole graph = one batch of 8 inputs (--batch 8)'
    >>> sample_meaning({})
    'a sample is one pass of the whole graph (one input through every node)'
    """
    batch = (graph_attrs or {}).get("batch")
    if isinstance(batch, int) and batch > 1:
        return (f"a sample is one pass of the whole graph = one batch of {batch} inputs "
                f"(--batch {batch})")
    if isinstance(batch, int):
        return "a sample is one pass of the whole graph = one input (--batch 1)"
    return "a sample is one pass of the whole graph (one input through every node)"
