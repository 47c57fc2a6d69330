"""Fixtures of the formulation tests: the exhaustive Streaming Engine oracle."""

import importlib.util
from pathlib import Path

import pytest


@pytest.fixture(scope="session")
def streaming_oracle():
    """The module ``streaming_oracle.py`` beside this file (``exhaustive_schedule``)."""
    path = Path(__file__).with_name("streaming_oracle.py")
    spec = importlib.util.spec_from_file_location("streaming_oracle", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
