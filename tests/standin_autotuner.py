"""A stand-in for `triton.runtime.autotuner` on CPU: an Autotuner keyed by heads only, "tuned" on the first
length it meets (as FLA's kernels are keyed without the sequence length), installed into sys.modules with a
module of a library that holds one (the tests of measure/probes/autotune.py, run_point's per-point tuning,
the tuning store and the autotune-regret workflow share it).

As Triton's does, it offers a fixed list of configs (`configs`, each with kwargs and launch fields) and
keeps the one it chose per key in `cache`; tuning on a length picks the block of that length (the largest
power of two not above it), and `run` returns the chosen block."""

from __future__ import annotations

import sys
import types

from qlabench.measure.probes.autotune import AUTOTUNER_MODULE


class Config:
    def __init__(self, kwargs, num_warps=4, num_stages=3, num_ctas=1, pre_hook=None):
        self.kwargs, self.num_warps, self.num_stages, self.num_ctas = kwargs, num_warps, num_stages, num_ctas
        self.pre_hook = pre_hook

    def __repr__(self):
        return f"Config({self.kwargs}, num_warps={self.num_warps})"


BLOCKS = tuple(2 ** i for i in range(20))


class Autotuner:
    def __init__(self, name: str = "stand_in_kernel", module: str = "standin"):
        self.fn = self.base_fn = types.SimpleNamespace(__name__=name, __qualname__=name, __module__=module)
        self.cache, self.cache_results, self.tunings = {}, True, 0
        self.keys, self.arg_names = ["heads"], ["heads", "length"]
        self.configs = [Config({"BLOCK": b}, num_warps=8 if b >= 64 else 4) for b in BLOCKS]

    def run(self, heads, length):
        if heads not in self.cache:
            self.tunings += 1
            self.cache[heads] = max((c for c in self.configs if c.kwargs["BLOCK"] <= length),
                                    key=lambda c: c.kwargs["BLOCK"])
        return self.cache[heads].kwargs["BLOCK"]


def install(monkeypatch, module: str) -> types.ModuleType:
    """Put the stand-in triton and a library module `module` holding one autotuner (`.kernel`) in sys.modules."""
    triton_mod = types.ModuleType(AUTOTUNER_MODULE)
    triton_mod.Autotuner = Autotuner
    monkeypatch.setitem(sys.modules, AUTOTUNER_MODULE, triton_mod)
    lib = types.ModuleType(module)
    lib.kernel = Autotuner(module=module)
    monkeypatch.setitem(sys.modules, module, lib)
    return lib
