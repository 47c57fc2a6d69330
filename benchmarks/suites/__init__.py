"""Benchmark suites, one module each; every module defines ``SUITE``.

Register a new suite by adding its module to
:data:`benchmarks.registry.SUITE_MODULES`.
"""

__all__: list[str] = []
