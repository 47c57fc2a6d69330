"""Shared fixtures: where the real graphs live (skipped cleanly when absent), fabrics."""

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
