"""A stand-in for `triton.runtime.autotuner` on CPU: an Autotuner keyed by heads only, "tuned" on the first
length it meets (as FLA's kernels are keyed without the sequence length), installed into sys.modules with a
module of a library that holds one (the tests of measure/probes/autotune.py, run_point's per-point tuning
and the autotune-regret workflow share it)."""

from __future__ import annotations

import sys
import types

from qlabench.measure.probes.autotune import AUTOTUNER_MODULE


class Autotuner:
    def __init__(self, name: str = "stand_in_kernel"):
        self.fn = self.base_fn = types.SimpleNamespace(__name__=name)
        self.cache, self.cache_results, self.tunings = {}, True, 0

    def run(self, heads, length):
        if heads not in self.cache:
            self.tunings += 1
            self.cache[heads] = length
        return self.cache[heads]


def install(monkeypatch, module: str) -> types.ModuleType:
    """Put the stand-in triton and a library module `module` holding one autotuner (`.kernel`) in sys.modules."""
    triton_mod = types.ModuleType(AUTOTUNER_MODULE)
    triton_mod.Autotuner = Autotuner
    monkeypatch.setitem(sys.modules, AUTOTUNER_MODULE, triton_mod)
    lib = types.ModuleType(module)
    lib.kernel = Autotuner()
    monkeypatch.setitem(sys.modules, module, lib)
    return lib
