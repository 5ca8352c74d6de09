"""Shared test setup: GPU tests skip cleanly on a machine without CUDA.

The `gpu` and `slow` markers are declared in pyproject.toml; nothing is registered here.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

DATA = Path(__file__).resolve().parent / "data"


def _cuda_available() -> bool:
    try:
        import torch
    except ImportError:  # the data-model tests must still run without torch
        return False
    return torch.cuda.is_available()


def pytest_collection_modifyitems(config, items):
    if _cuda_available():
        return
    skip = pytest.mark.skip(reason="needs CUDA")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)


@pytest.fixture
def data_dir() -> Path:
    return DATA


@pytest.fixture
def make_row():
    """Factory for valid ResultRows: a small dense fwd point, ok with a time unless told otherwise."""
    from qlabench.core.result import ResultRow

    def make(**changes):
        fields = dict(
            run_id="run-1", suite="test", timestamp="2025-01-01T00:00:00+00:00", host="h", device="cpu",
            backend="naive-chunk", mode="fwd", layout="dense", batch=1, seqlens=(64,), num_seqs=1,
            total_tokens=64, h_qk=2, h_v=4, K=16, V=16, dtype="float32", gate="flashqla", seed=0,
            initial_state=True, status="ok", timer="wall", samples_ms=(1.0, 1.2, 1.1), n_samples=3,
            median_ms=1.1,
        )
        fields.update(changes)
        if fields["status"] == "ok" and "oracle" not in changes:
            # an ok row records the check it passed (analyze/evidence/belief.py believes no unchecked row)
            fields["oracle"] = f"naive-recurrent float32 @{fields['total_tokens']} tokens"
            fields.setdefault("check_tokens", fields["total_tokens"])
            fields.setdefault("err_o", 1e-6)
        if changes.get("median_ms") is not None and "samples_ms" not in changes:
            # a stored median is the median of the row's samples (analyze/evidence/belief.py holds rows to it)
            fields["samples_ms"] = (changes["median_ms"],) * 3
        if fields["status"] != "ok":
            fields.setdefault("reason", "a reason")
            if "median_ms" not in changes:
                fields["median_ms"] = None
        return ResultRow(**fields)

    return make


@pytest.fixture(autouse=True)
def _declarations_stay_in_their_test():
    """Backends a test declares or loads in this process (a stand-in registered from the test file, a plugin put
    on sys.path for one test and resolved into the registry) are forgotten when it ends: every later test sees the
    package's own declarations and whatever is really installed, as a fresh `qlabench` process does."""
    from qlabench.core import backend_decl

    runtime = dict(backend_decl._RUNTIME)
    registry = sys.modules.get("qlabench.backends.registry")
    names = set(dict.keys(registry.REGISTRY)) if registry is not None else None
    yield
    changed = backend_decl._RUNTIME != runtime
    backend_decl._RUNTIME.clear()
    backend_decl._RUNTIME.update(runtime)
    registry = sys.modules.get("qlabench.backends.registry")
    if registry is not None and (changed or names is None or set(dict.keys(registry.REGISTRY)) != names):
        fresh = registry.build()  # in place: modules hold the REGISTRY object itself
        dict.clear(registry.REGISTRY)
        dict.update(registry.REGISTRY, fresh)
