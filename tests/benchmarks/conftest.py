"""What the benchmark tests share: loading a script of ``benchmarks/`` as a module."""

import importlib.util
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"


@pytest.fixture
def benchmark_script():
    """``benchmark_script("name")``: ``benchmarks/name.py`` imported as a module, to call its
    ``main(argv)`` in this process."""
    def load(name: str):
        spec = importlib.util.spec_from_file_location(name, BENCHMARKS / f"{name}.py")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module
    return load
