"""Tuning for the point (measure/probes/autotune.py: retune, tuned_choices, install), on CPU with a stand-in
for `triton.runtime.autotuner`: an autotuner keyed without the length keeps the first shape's choice until
`retune` forgets it, memory and disk look-ups alike; `install` puts another shape's choices in place."""

from __future__ import annotations

import sys
import types

import pytest
import standin_autotuner

from qlabench.measure.probes.autotune import AUTOTUNER_MODULE, install, loaded_autotuners, retune, tuned_choices


class Autotuner(standin_autotuner.Autotuner):
    def run(self, heads, length):
        return f"tuned@{super().run(heads, length)}"


class Heuristics:  # @triton.heuristics over @triton.autotune: the autotuner is its `.fn`
    def __init__(self, fn):
        self.fn = fn


@pytest.fixture
def lib(monkeypatch):
    triton_mod = types.ModuleType(AUTOTUNER_MODULE)
    triton_mod.Autotuner = Autotuner
    monkeypatch.setitem(sys.modules, AUTOTUNER_MODULE, triton_mod)
    kernels = types.ModuleType("fakelib.ops")
    kernels.plain = Autotuner("plain_kernel")
    kernels.wrapped = Heuristics(Autotuner("wrapped_kernel"))
    kernels.not_a_kernel = 3
    other = types.ModuleType("otherlib")
    other.tuner = Autotuner("other_kernel")
    monkeypatch.setitem(sys.modules, "fakelib.ops", kernels)
    monkeypatch.setitem(sys.modules, "otherlib", other)
    return kernels, other


def test_autotuners_are_found_under_heuristics_and_only_in_the_named_modules(lib):
    kernels, other = lib
    found = loaded_autotuners(("fakelib.",))
    assert {id(t) for t in found} == {id(kernels.plain), id(kernels.wrapped.fn)}
    assert id(other.tuner) in {id(t) for t in loaded_autotuners()}


def test_without_retune_the_first_length_decides_and_retune_makes_the_next_call_tune_for_its_own(lib):
    kernels, other = lib
    assert kernels.plain.run(8, 8192) == "tuned@8192"
    assert kernels.plain.run(8, 32768) == "tuned@8192"  # the order-dependence being fixed
    assert retune(("fakelib.",)) == 2
    assert kernels.plain.run(8, 32768) == "tuned@32768"
    assert kernels.plain.cache_results is False  # no choice read back from the disk cache either
    other.tuner.run(8, 1)
    retune(("fakelib.",))
    # another library's choices are left alone
    assert {k: c.kwargs["BLOCK"] for k, c in other.tuner.cache.items()} == {8: 1}


def test_install_times_one_shape_under_the_choices_another_shape_tuned(lib):
    kernels, _ = lib
    retune(("fakelib.",))
    kernels.plain.run(8, 1024)
    on_short = tuned_choices(("fakelib.",))
    retune(("fakelib.",))
    kernels.plain.run(8, 32768)
    on_long = tuned_choices(("fakelib.",))
    install(on_short, ("fakelib.",))
    assert kernels.plain.run(8, 32768) == "tuned@1024"
    install(on_long, ("fakelib.",))
    assert kernels.plain.run(8, 32768) == "tuned@32768"
    assert kernels.plain.tunings == 2  # installing never tunes


def test_without_triton_there_is_nothing_to_retune(monkeypatch):
    monkeypatch.delitem(sys.modules, AUTOTUNER_MODULE, raising=False)
    assert retune() == 0
    assert loaded_autotuners() == []
