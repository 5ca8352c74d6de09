"""The autotune probe reads the config each Triton autotuner launched during one call, on CPU with a
stand-in for `triton.runtime.autotuner` (triton's Autotuner.run sets `.best_config` to the config it
launches); without triton loaded it records nothing."""

from __future__ import annotations

import sys
import types

import pytest

from qlabench.measure.probes.autotune import AUTOTUNER_MODULE, autotune_choices


class Config:  # triton.Config's fields the probe reads
    def __init__(self, kwargs, num_warps=4, num_stages=2, num_ctas=1):
        self.kwargs, self.num_warps, self.num_stages, self.num_ctas = kwargs, num_warps, num_stages, num_ctas


class Autotuner:
    """triton.runtime.autotuner.Autotuner in miniature: a cache per key, best_config set by run."""

    def __init__(self, fn, configs, pick):
        self.fn, self.base_fn, self.configs, self.pick, self.cache, self.best_config = fn, fn, configs, pick, {}, None

    def run(self, *args, **kwargs):
        key = args[0]
        if key not in self.cache:
            self.cache[key] = self.configs[self.pick(key)]
        self.best_config = self.cache[key]
        return key


def jit(name):
    return types.SimpleNamespace(__name__=name)


@pytest.fixture
def fake_triton(monkeypatch):
    mod = types.ModuleType(AUTOTUNER_MODULE)
    mod.Autotuner = Autotuner
    monkeypatch.setitem(sys.modules, AUTOTUNER_MODULE, mod)
    return mod


def test_without_triton_loaded_nothing_is_recorded_and_fn_is_not_called(monkeypatch):
    monkeypatch.delitem(sys.modules, AUTOTUNER_MODULE, raising=False)
    calls = []
    assert autotune_choices(lambda: calls.append(1)) == ()
    assert calls == []


def test_each_autotuned_kernel_of_the_call_is_recorded_with_its_config(fake_triton):
    configs = [Config({"BT": 64, "BV": 32}, num_warps=4), Config({"BT": 64, "BV": 64}, num_warps=8, num_stages=3)]
    fwd_o = Autotuner(jit("chunk_fwd_kernel_o"), configs, pick=lambda key: 1 if key > 1000 else 0)
    kkt = Autotuner(jit("chunk_scaled_dot_kkt_fwd_kernel"), configs, pick=lambda key: 0)
    other = Autotuner(jit("not_called_kernel"), configs, pick=lambda key: 0)
    other.run(5)  # tuned by an earlier point: not part of this call

    def call():
        kkt.run(4096)
        fwd_o.run(4096)
        fwd_o.run(4096)  # launched twice with one config: recorded once

    got = autotune_choices(call)
    assert got == ({"kernel": "chunk_scaled_dot_kkt_fwd_kernel", "num_warps": 4, "num_stages": 2, "num_ctas": 1,
                    "kwargs": {"BT": "64", "BV": "32"}},
                   {"kernel": "chunk_fwd_kernel_o", "num_warps": 8, "num_stages": 3, "num_ctas": 1,
                    "kwargs": {"BT": "64", "BV": "64"}})
    assert Autotuner.run is not None and "recording" not in Autotuner.run.__name__  # put back after the call


def test_the_class_is_put_back_when_the_call_raises(fake_triton):
    original = Autotuner.run

    def boom():
        raise RuntimeError("kernel failed")

    with pytest.raises(RuntimeError):
        autotune_choices(boom)
    assert Autotuner.run is original


def test_a_real_triton_autotuner_is_read_where_triton_is_installed():
    pytest.importorskip("triton.runtime.autotuner")
    import triton
    import triton.language as tl

    from qlabench.measure.probes.autotune import describe

    def tiny_kernel(x_ptr, BLOCK: tl.constexpr):
        pass

    tuner = triton.autotune(configs=[triton.Config({"BLOCK": 64}, num_warps=8, num_stages=3)], key=[])(
        triton.jit(tiny_kernel))
    assert describe(tuner) is None  # nothing launched yet
    tuner.best_config = tuner.configs[0]  # what run() sets when it launches; no kernel runs here
    got = describe(tuner)
    assert (got["kernel"], got["num_warps"], got["num_stages"], got["kwargs"]) == ("tiny_kernel", 8, 3, {"BLOCK": "64"})
