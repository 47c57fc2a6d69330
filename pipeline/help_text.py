"""What ``--help`` teaches: a one-line meaning of every preset, placer, router and cost model.

Tests hold that every name the command line accepts has its line here, so a new preset or
method cannot reach ``--help`` unexplained.
"""

from __future__ import annotations

import textwrap
from types import MappingProxyType

__all__ = ["PRESETS", "PLACERS", "ROUTERS", "COST_MODELS", "DECISIONS", "epilog", "DESCRIPTION"]

#: What the command does (the first lines of --help).
DESCRIPTION = textwrap.fill(
    "Map a dataflow graph onto a reconfigurable dataflow accelerator: an RDU grid (the answer: "
    "sections and simulated samples per second), a Streaming Engine or a CGRA (the answer: the "
    "initiation interval II and the cycles of one iteration). Every answer is checked by an "
    "independent checker before it is written.", 90)

#: Hardware presets (hardware/presets/*.json).
PRESETS = MappingProxyType({
    "tiny": "RDU grid of 4 x 4 sites, for tests",
    "plasticine": "RDU grid of 16 x 8 sites: 64 compute units (PCU) + 64 memory units (PMU); "
                  "the default",
    "sn10": "RDU of 4 tiles: 640 PCU + 640 PMU, 512 KiB per PMU (SambaNova SN10-like)",
    "se16": "Micron Streaming Engine: 16 tiles, modulo-scheduled time slots, II <= 6",
    "se16-ii32": "the same Streaming Engine allowing II <= 32 (beyond the paper: assumed)",
    "cgra4x4": "generic CGRA: 4 x 4 processing elements (PEs), mesh links",
    "cgra4x4-torus": "the 4 x 4 CGRA with wrap-around (torus) links",
    "cgra8x8": "generic CGRA: 8 x 8 PEs, mesh links",
    "hycube4x4": "HyCUBE-like 4 x 4 CGRA: one-hop links, memory on the left and right columns",
})

#: Placement methods (--placer).
PLACERS = MappingProxyType({
    "model": "exact placement model (CP-SAT), warm-started by greedy; a large-neighbourhood "
             "search when too big to prove; the default",
    "cp-sat": "the exact placement model on CP-SAT whatever --backend says",
    "milp": "the exact placement model on the MILP solver HiGHS",
    "annealing": "simulated annealing from the greedy placement (VPR-style baseline)",
    "greedy": "one pass in the sorted order, no search (fastest baseline)",
    "rl": "Streaming Engine only: a learned PPO policy (needs pip install -e \".[learn]\")",
})

#: Routing methods (--router).
ROUTERS = MappingProxyType({
    "model": "exact routing (multi-commodity flow with Steiner trees), warm-started by "
             "PathFinder; the default",
    "negotiated": "PathFinder negotiated-congestion routing alone (fast heuristic)",
})

#: Cost models that rank placement candidates (--cost-model).
COST_MODELS = MappingProxyType({
    "wirelength": "keep the placer's answer (shortest nets); the default",
    "analytic": "rank candidates by predicted throughput from speed rules and congestion",
    "learned": "rank by a graph neural network's predicted throughput (needs the learn extra)",
    "simulated": "rank by the performance simulator's throughput (slowest, most faithful)",
})

#: The decisions a solver backend can be chosen for (--backend DECISION=NAME).
DECISIONS = MappingProxyType({
    "sections": "cutting the graph into sections (one chip configuration each)",
    "buffers": "sizing the stage buffers that keep a section's pipeline full",
    "placement": "which unit site each node gets",
    "routing": "which links each net uses",
    "streaming": "the Streaming Engine's modulo schedule (tile and time slot of each "
                 "instruction)",
})


def epilog(presets: list[str]) -> str:
    """The text after the options: targets, methods, words, exit codes."""
    blocks = [("hardware presets (--hardware NAME)", {p: PRESETS.get(p, "") for p in presets}),
              ("placers (--placer)", PLACERS), ("routers (--router)", ROUTERS),
              ("cost models (--cost-model)", COST_MODELS),
              ("decisions (--backend DECISION=NAME)", DECISIONS)]
    lines = []
    for title, notes in blocks:
        width = max(map(len, notes)) + 2
        lines += [title + ":"] + [textwrap.fill(note, 90, initial_indent=f"  {name:<{width}}",
                                                subsequent_indent=" " * (width + 2))
                                  for name, note in notes.items()]
        lines.append("")
    lines += ["words:",
              "  section   a part of the graph that fits the chip at once; sections run one "
              "after another",
              "  II        initiation interval: cycles between the starts of two loop "
              "iterations",
              "  sample    one pass of the whole graph (an ONNX model's batch is one sample)",
              "",
              "outputs: mapping.json (for tools), report.md, report.html (open in a browser), "
              "pictures.",
              "exit codes: 0 mapped, 2 bad input, 3 could not map (diagnosis in the report), "
              "4 internal error."]
    return "\n".join(lines)
