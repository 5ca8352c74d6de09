"""`qlabench run sweep` and `qlabench warmup` take their default suite from core, the one place it is defined."""

from __future__ import annotations

import importlib
import inspect

import pytest

from qlabench.core import spec


@pytest.mark.parametrize("module, command", [("qlabench.cli.run", "sweep_cmd"), ("qlabench.cli.warmup", "warmup_cmd")])
def test_the_default_suite_is_cores(module, command, monkeypatch):
    mod = importlib.import_module(module)
    monkeypatch.setattr(spec, "DEFAULT_SUITE", "another-default")
    try:
        fresh = importlib.reload(mod)  # the option's default is read when the module is imported
        assert inspect.signature(getattr(fresh, command)).parameters["suite"].default.default == "another-default"
    finally:
        monkeypatch.undo()
        importlib.reload(mod)
