"""FlashInfer's module build (backends/flashinfer_build.py) and the warm-up step that runs it ahead, on CPU.

FlashInfer itself cannot build here (no GPU); what is tested is qlabench's part: which variants a point
needs and which files that keeps, the env setting and its errors, ninja's progress lines, the skip
reason for a point whose variant is not built, and warm-up holding a backend's compile groups until its
build is done (or not running them when it failed).
"""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from qlabench.backends import REGISTRY
from qlabench.backends import flashinfer as fi_mod
from qlabench.backends import flashinfer_build as fib
from qlabench.backends.base import JitBuild
from qlabench.core.errors import ConfigError
from qlabench.core.point import Point
from qlabench.run import warmup


def fi_point(**kw) -> Point:
    base = dict(backend="flashinfer", mode="fwd", layout="varlen", batch=1, seqlens=(64,), h_qk=2, h_v=8,
                K=128, V=128, dtype="bfloat16", gate="flashqla", initial_state=True)
    base.update(kw)
    return Point(**base)


def flashinfer_sources() -> list[Path]:
    """The file list FlashInfer 0.6.13's gen_gdn_prefill_sm90_module() makes: 64 instantiations + 2 more."""
    names = [f"gdn_prefill_kernel_{d}_g{g}b{b}a{a}i{i}c{c}.cu" for d in ("half", "bf16")
             for g in (0, 1) for b in (0, 1) for a in (0, 1) for i in (0, 1) for c in (0, 1)]
    return [Path("/gen") / n for n in names + ["gdn_prefill_launcher.cu", "prefill_kernel_delta_rule_sm90.cu"]]


def test_a_point_needs_one_variant():
    assert fib.variant_of(fi_point()).tag == "bf16-gva-h0"
    assert fib.variant_of(fi_point(h_qk=4, h_v=4, initial_state=False, dtype="float16")).tag == "fp16-mha-noh0"
    assert fib.variant_of(fi_point(dtype="float32")) is None
    v = fib.variant_of(fi_point())
    assert v.source_name == "gdn_prefill_kernel_bf16_g1b1a1i1c0.cu"  # beta and alpha on, no checkpoints
    assert fib.Variant.parse(v.tag) == v


def test_the_default_is_the_eight_qlabench_can_call(monkeypatch):
    monkeypatch.delenv(fib.VARIANTS_ENV, raising=False)
    assert set(fib.selected()) == set(fib.QLABENCH_VARIANTS) and len(fib.QLABENCH_VARIANTS) == 8
    assert fib.selected("qlabench") == fib.selected()
    assert fib.selected("all") is None and fib.module_name(None) == "gdn_prefill_sm90"
    assert fib.module_name(fib.QLABENCH_VARIANTS) == "gdn_prefill_sm90_qlabench"
    one = fib.selected("bf16-gva-h0")
    assert one == (fib.Variant("bf16", True, True),) and fib.module_name(one) == "gdn_prefill_sm90_bf16gvah0"
    monkeypatch.setenv(fib.VARIANTS_ENV, "fp16-mha-noh0, bf16-gva-h0")
    assert [v.tag for v in fib.selected()] == ["bf16-gva-h0", "fp16-mha-noh0"]


@pytest.mark.parametrize("bad", ["bf16", "bf32-gva-h0", "bf16-gqa-h0", "bf16-gva-yes"])
def test_a_bad_variant_is_a_clear_error(bad):
    with pytest.raises(ConfigError, match=f"bad FlashInfer variant '{bad}'.*bf16-gva-h0"):
        fib.selected(bad)


def test_the_lean_build_keeps_only_the_chosen_instantiations():
    src = flashinfer_sources()
    kept = fib.lean_sources(src, fib.QLABENCH_VARIANTS)
    assert len(src) == 66 and len(kept) == 8 + 2
    assert {p.name for p in kept} >= {"gdn_prefill_launcher.cu", "prefill_kernel_delta_rule_sm90.cu"}
    assert all("b1a1" in p.name and p.name.endswith("c0.cu") for p in kept if p.name.startswith("gdn_prefill_kernel_"))
    one = fib.lean_sources(src, fib.selected("bf16-gva-h0"))
    assert [p.name for p in one][0] == "gdn_prefill_kernel_bf16_g1b1a1i1c0.cu" and len(one) == 3
    # a FlashInfer that names its files otherwise: an error, not a module without its kernel
    with pytest.raises(ConfigError, match="no .*gdn_prefill_kernel_bf16_g1b1a1i1c0.cu"):
        fib.lean_sources([p for p in src if "bf16_g1b1a1i1c0" not in p.name], fib.selected("bf16-gva-h0"))


def test_ninja_progress_is_reported_line_by_line(tmp_path):
    script = ("import sys\nfor k in (1, 2, 3):\n    print(f'[{k}/3] Building CUDA object x{k}.cuda.o', flush=True)\n"
              "print('ninja: done')\n")
    steps = []
    out = fib.run_ninja([sys.executable, "-c", script], str(tmp_path), lambda k, n, what: steps.append((k, n, what)))
    assert steps == [(1, 3, "Building CUDA object x1.cuda.o"), (2, 3, "Building CUDA object x2.cuda.o"),
                     (3, 3, "Building CUDA object x3.cuda.o")]
    assert out.endswith("ninja: done\n")


def test_a_failed_build_raises_with_its_output(tmp_path):
    script = "print('[1/2] nvcc a.cu'); print('a.cu(3): error: identifier undefined'); raise SystemExit(1)"
    with pytest.raises(RuntimeError, match=r"(?s)ninja exit 1.*identifier undefined"):
        fib.run_ninja([sys.executable, "-c", script], str(tmp_path))


def test_a_point_whose_variant_is_not_built_is_skipped_with_why(monkeypatch):
    b = REGISTRY["flashinfer"]
    monkeypatch.setenv(fib.VARIANTS_ENV, "bf16-gva-h0")
    assert b.check_point(fi_point(), "cuda") == (True, "")
    ok, why = b.check_point(fi_point(initial_state=False), "cuda")
    assert not ok and "bf16-gva-noh0 is not built here" in why and "QLABENCH_FLASHINFER_VARIANTS=bf16-gva-h0" in why
    monkeypatch.setenv(fib.VARIANTS_ENV, "nonsense")
    ok, why = b.check_point(fi_point(), "cuda")
    assert not ok and "bad FlashInfer variant" in why


def test_backends_says_what_the_first_use_costs(monkeypatch):
    monkeypatch.delenv(fib.VARIANTS_ENV, raising=False)
    note = REGISTRY["flashinfer"].first_use_note()
    assert "builds 8 of FlashInfer's 64 kernel variants" in note and "qlabench warmup" in note
    monkeypatch.setenv(fib.VARIANTS_ENV, "all")
    assert "builds 64 of" in REGISTRY["flashinfer"].first_use_note()
    assert REGISTRY["naive-recurrent"].first_use_note() == ""


def test_no_build_is_offered_where_flashinfer_cannot_run(monkeypatch):
    monkeypatch.setattr(fi_mod, "_import", lambda: (None, "flashinfer-python is not installed"))
    assert REGISTRY["flashinfer"].jit_build([fi_point()]) is None


# -- warm-up runs the build ahead, and holds the backend's groups until it is done ---------------------


def _write_suite(tmp_path) -> tuple[str, object]:
    text = ('name = "wb"\ndevice = "cpu"\n[sweep]\nbackends = ["naive-recurrent"]\nvarlen = [[16]]\n'
            'heads = [{ h_qk = 1, h_v = 1 }]\nK = 8\nV = 8\ndtype = "float32"\n')
    path = tmp_path / "wb.toml"
    path.write_text(text)
    from qlabench.core.spec import load_suite

    return str(path), load_suite(str(path))


def test_warmup_holds_a_backends_groups_until_its_build_is_done(tmp_path, monkeypatch):
    path, suite = _write_suite(tmp_path)
    go, stepped = threading.Event(), threading.Event()

    def run(on_step):
        on_step(1, 2, "nvcc a.cu")
        stepped.set()
        assert go.wait(30)
        on_step(2, 2, "link")
        return 1.25

    backend = REGISTRY["naive-recurrent"]
    monkeypatch.setattr(type(backend), "jit_build", lambda self, pts: JitBuild("fake module", run))
    spawned = []
    real_popen = subprocess.Popen

    def popen(*a, **kw):
        spawned.append(time.monotonic())
        return real_popen(*a, **kw)

    monkeypatch.setattr(warmup.subprocess, "Popen", popen)
    events = []

    def release():
        assert stepped.wait(30)
        time.sleep(0.6)  # the warm-up loop polls every 0.2 s: it had three chances to start the group
        events.append(("spawned while building", len(spawned)))
        go.set()

    t = threading.Thread(target=release)
    t.start()
    results = warmup.warm_suite(path, suite.points, jobs=2, device="cpu",
                                on_build_step=lambda label, k, n, what: events.append(("step", label, k, n)),
                                on_build_done=lambda b: events.append(("built", b.label, b.ok, b.wall_s)))
    t.join()
    assert ("spawned while building", 0) in events
    assert events[0] == ("step", "fake module", 1, 2) and ("built", "fake module", True, 1.25) in events
    assert len(spawned) == 1 and [r.returncode for r in results] == [0]


def test_a_failed_build_fails_its_groups_without_running_them(tmp_path, monkeypatch):
    path, suite = _write_suite(tmp_path)

    def run(on_step):
        raise RuntimeError("building FlashInfer's gdn_prefill_sm90 failed (ninja exit 1)")

    backend = REGISTRY["naive-recurrent"]
    monkeypatch.setattr(type(backend), "jit_build", lambda self, pts: JitBuild("fake module", run))
    monkeypatch.setattr(warmup.subprocess, "Popen", lambda *a, **kw: pytest.fail("a group ran after a failed build"))
    built = []
    results = warmup.warm_suite(path, suite.points, jobs=2, device="cpu", on_build_done=built.append)
    assert [b.ok for b in built] == [False] and "ninja exit 1" in built[0].error
    assert [r.returncode for r in results] == [1] and "not run" in results[0].log_tail
