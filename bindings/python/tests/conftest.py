"""Shared fixtures: the repository's example kernels and a fresh context per test. The package
is imported from src/ (tests/bindings/run.sh sets PYTHONPATH and TRI_LIBRARY)."""

import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]
sys.path.insert(0, str(HERE.parent / "src"))
sys.path.insert(0, str(HERE.parent / "examples"))

import tri  # noqa: E402

EXAMPLES = ROOT / "examples"


@pytest.fixture
def ctx():
    with tri.Context() as c:
        yield c


@pytest.fixture
def vector_add(ctx):
    return ctx.load(EXAMPLES / "vector_add.tri").compile("vector_add")
