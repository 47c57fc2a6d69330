"""The feedback loop between compiler levels (source 003).

Levels run in order (cutting and estimation; buffer insertion; placement and
routing). A level that fails raises :class:`MappingError` carrying the
error-handling data of the patent: the error code, every section's unit usage
against capacity, which sections failed, the first failed one, the sections
compiled so far, and type-specific hints. The registry :data:`FIXED_BY` maps
each code to the level that can fix it; the loop asks that level to adjust
its decisions and re-runs from it. Sections compiled before the first failed
one are kept and reused. The loop stops on success, on a code nobody fixes,
when the fixing level can make no more progress, or at the iteration cap;
every iteration is traced (level, section, code, scale factor).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from enum import Enum
from typing import Any

from model.mapping import Mapping

__all__ = ["ErrorCode", "SectionUsage", "ErrorHandlingData", "MappingError", "Unresolvable",
           "Level", "FIXED_BY", "run_levels", "MappingFailed", "CheckerRejected"]


class ErrorCode(str, Enum):
    """The fixed list of mapping errors (digest §3.3)."""

    INSUFFICIENT_RESOURCES = "INSUFFICIENT_RESOURCES"          # F1: a section does not fit
    RESOURCE_TOO_LOW_PREDICTED = "RESOURCE_TOO_LOW_PREDICTED"  # F2: seen before placement
    LATENCY_BOTTLENECK = "LATENCY_BOTTLENECK"                  # F5: two ops must be split
    PNR_LOCAL = "PNR_LOCAL"                                    # F4: placement/routing retries
    UNRESOLVABLE = "UNRESOLVABLE"                              # F7: nobody can fix it
    TIME_LIMIT = "TIME_LIMIT"               # the run's time limit ran out with sections to go


#: Which level fixes which error; None means stop with the diagnosis.
FIXED_BY: dict[ErrorCode, str | None] = {
    ErrorCode.INSUFFICIENT_RESOURCES: "cut",
    ErrorCode.RESOURCE_TOO_LOW_PREDICTED: "cut",
    ErrorCode.LATENCY_BOTTLENECK: "cut",
    ErrorCode.PNR_LOCAL: "place-route",
    ErrorCode.UNRESOLVABLE: None,
    ErrorCode.TIME_LIMIT: None,
}


@dataclass
class SectionUsage:
    """Sites one section needs (placed units) against capacity, and its estimate."""

    section: int
    pcu: float
    pmu: float
    units: float
    pcu_capacity: int
    pmu_capacity: int
    unit_capacity: int
    estimated_units: float
    failed: bool = False
    lack_of_resource: bool = False
    estimated_pcu: float = 0.0
    estimated_pmu: float = 0.0


@dataclass
class ErrorHandlingData:
    """What a failing level tells the level that will fix it."""

    code: ErrorCode
    level: str
    message: str
    sections: list[SectionUsage] = field(default_factory=list)
    first_failed: int | None = None
    succeeded: list[int] = field(default_factory=list)
    hints: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["code"] = self.code.value
        return data


class MappingError(Exception):
    """Raised by a level that cannot finish; carries the error-handling data."""

    def __init__(self, data: ErrorHandlingData):
        self.data = data
        super().__init__(f"{data.code.value} at {data.level}: {data.message}")


class Unresolvable(Exception):
    """The loop gave up; ``data`` is the last error and ``reason`` why it stopped."""

    def __init__(self, data: ErrorHandlingData, reason: str):
        self.data, self.reason = data, reason
        super().__init__(f"{data.message} ({reason})")


class Level:
    """One compiler level: ``run`` does its work; ``fix`` adjusts it after an error that
    :data:`FIXED_BY` sends to it. A level that fixes nothing keeps this ``fix``."""

    name: str = ""

    def run(self, state) -> None:
        raise NotImplementedError

    def fix(self, state, data: ErrorHandlingData) -> str | None:
        """Adjust decisions for ``data``; return what changed, or None if no progress."""
        return None


#: What each level does, for the progress lines (a level's name alone is a word of the code).
LEVEL_WORDS = {"cut": "dividing the graph into parts that fit the hardware",
               "buffers": "balancing stage buffers",
               "place-route": "placing, routing and checking every section",
               "schedule": "modulo scheduling (II sweep)", "check": "simulating the schedule"}


def run_levels(state, levels: list[Level], max_iterations: int) -> None:
    """Run ``levels`` until all succeed, re-entering at the level that fixes each error.

    ``state.trace`` gets one entry per failed iteration.

    Raises
    ------
    Unresolvable
        When an error has no fixing level, the fixing level makes no progress,
        or ``max_iterations`` is reached.
    """
    by_name = {level.name: k for k, level in enumerate(levels)}
    say = getattr(state, "say", None) or (lambda line: None)
    start = 0
    for iteration in range(1, max_iterations + 1):
        try:
            for level in levels[start:]:
                say(f"level {level.name}: {LEVEL_WORDS.get(level.name, 'running')}")
                level.run(state)
            return
        except MappingError as error:
            data = error.data
            target = FIXED_BY.get(data.code)
            entry = {"iteration": iteration, "level": data.level, "code": data.code.value,
                     "section": data.first_failed, "message": data.message,
                     "fixed_by": target}
            state.trace.append(entry)
            if target is None or target not in by_name:
                raise Unresolvable(data, "no level can fix this error") from None
            change = levels[by_name[target]].fix(state, data)
            entry["change"] = change
            say(f"feedback round {iteration}: level {data.level} failed ({data.code.value}: "
                f"{data.message}); the {target} level "
                + (f"changes: {change}" if change else "can make no more progress"))
            if change is None:
                raise Unresolvable(data, f"the {target} level can make no more progress") from None
            start = by_name[target]
    raise Unresolvable(data, f"still failing after {max_iterations} iterations")


class CheckerRejected(Exception):
    """The checker found a heuristic's or model's answer illegal: a bug, never a result."""

    def __init__(self, section: int, violations: list[str]):
        self.section, self.violations = section, violations
        super().__init__(f"the checker rejected section {section}: " + "; ".join(violations[:5]))


class MappingFailed(Exception):
    """The graph could not be mapped; ``mapping`` holds what was done and why."""

    def __init__(self, mapping: Mapping):
        self.mapping = mapping
        super().__init__(mapping.diagnosis)
