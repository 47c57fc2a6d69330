"""Shared fixtures: where the real graphs live (skipped cleanly when absent), fabrics, a
machine that stalls before the CGRA sweep."""

import time
from pathlib import Path

import pytest

#: The real graphs nobody here wrote; read in place, never copied.
SHARED_GRAPHS = Path(__file__).resolve().parents[2] / "shared" / "graphs"


def real_graph(relative: str) -> Path:
    """Path of a real graph, or skip the test with the reason."""
    path = SHARED_GRAPHS / relative
    if not path.exists():
        pytest.skip(f"real graphs not available ({path} is absent; CI has them)")
    return path


@pytest.fixture(scope="session")
def tiny():
    """The ``tiny`` preset's fabric (built once)."""
    from hardware import build_fabric, load_hardware
    return build_fabric(load_hardware("tiny"))


@pytest.fixture(scope="session")
def plasticine():
    """The ``plasticine`` preset's fabric (built once)."""
    from hardware import build_fabric, load_hardware
    return build_fabric(load_hardware("plasticine"))


@pytest.fixture
def stall_before_cgra_sweep(monkeypatch):
    """The machine stalls 1000 s on the wall clock just before the CGRA II sweep starts (a
    wall-clock cap then stops it, whatever its planned work)."""
    from formulations.cgra import kernel
    real_sweep, real_clock, stall = kernel.sweep_ii, time.monotonic, [0.0]
    monkeypatch.setattr(time, "monotonic", lambda: real_clock() + stall[0])

    def stalled(*args):
        stall[0] = 1000.0
        return real_sweep(*args)

    monkeypatch.setattr(kernel, "sweep_ii", stalled)
