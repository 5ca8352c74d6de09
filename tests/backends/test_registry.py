"""The backend registry: what each backend declares, and how a refusal becomes a visible row."""

from __future__ import annotations

import pytest

from qlabench.measure.timing import TimerPlan
from qlabench.run.options import InProcess, RunOptions
from qlabench.measure import env as envmod
from qlabench.backends import ORACLE, REGISTRY, Backend, get_backend
from qlabench.backends.naive import RECURRENT_MAX_TOKENS, NaiveChunk, NaiveRecurrent
from qlabench.core.errors import BackendError
from qlabench.run.point import MeasureContext, run_point
from qlabench.core.point import DTYPES, MODES
from qlabench.run.sweep import run_sweep
from qlabench.core.spec import parse_suite
from qlabench.store.files import read_rows

SUITE = {
    "name": "registry-test",
    "device": "cpu",
    "sweep": {"backends": [], "modes": ["fwd", "fwd_bwd"], "seqlen": [16], "varlen": [[5, 11]],
              "heads": [{"h_qk": 1, "h_v": 2}], "K": 8, "V": 8, "dtype": "float32"},
    "timing": {"timer": "wall", "warmup": 0, "min_samples": 2, "max_samples": 2},
    "check": {"oracle_max_tokens": 16},
}


def suite(*backends: str, **sweep):
    data = {**SUITE, "sweep": {**SUITE["sweep"], "backends": list(backends), **sweep}}
    return parse_suite(data, "registry-test.toml")


class MissingLibrary(NaiveChunk):
    name = "missing-lib"
    description = "a backend whose library is not installed"

    def available(self):
        return False, "No module named 'imaginary_kernels'"


class Picky(NaiveChunk):
    name = "picky"
    modes = frozenset({"fwd"})
    dtypes = frozenset({"bfloat16"})
    devices = frozenset({"cuda"})


class Wrong(NaiveChunk):
    name = "wrong"

    def forward(self, inp):
        o, ht = super().forward(inp)
        return o * 1.1, ht


class Crashing(NaiveChunk):
    name = "crashing"

    def forward(self, inp):
        raise RuntimeError("kernel launch failed")


def registry(*backends: Backend) -> dict[str, Backend]:
    # The oracle must be present: every other backend is checked against it.
    return {b.name: b for b in (NaiveRecurrent(), *backends)}


@pytest.fixture(scope="module")
def cpu_env():
    return envmod.capture("cpu")


def context(s, reg, env, check=True) -> MeasureContext:
    return MeasureContext(suite=s, device="cpu", env=env, run_id="test-run",
                          timer=TimerPlan.resolve("wall", "cpu", s.timing), registry=reg, check=check)


# -- declarations -------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", list(REGISTRY))
def test_every_backend_declares_itself(name):
    b = REGISTRY[name]
    assert b.name == name
    assert b.description
    assert b.modes and set(b.modes) <= set(MODES)
    assert b.dtypes and set(b.dtypes) <= set(DTYPES)
    assert b.devices and set(b.devices) <= {"cpu", "cuda"}
    ok, why = b.available()
    assert isinstance(ok, bool) and isinstance(why, str)
    if not ok:
        assert why, f"{name} is unavailable without saying why"


def test_the_declared_facts_name_exactly_the_registered_backends_and_are_what_each_backend_says():
    # core/backend_facts.py is what advise, site and the docs read without importing the backends: a backend
    # registered without an entry there would be unknown to advise's suites, and a stale entry advised.
    from qlabench.core.backend_facts import FACTS, view_facts

    assert list(FACTS) == list(REGISTRY)
    assert set(view_facts()["calls"]) == set(REGISTRY)
    for name, b in REGISTRY.items():
        f = FACTS[name]
        assert (b.call_signature, b.autotune_modules, b.size_dependent_path) == (
            f.call_signature, f.autotune_modules, f.size_dependent_path), name
    # a layer autotunes where its core does (the facts of `layer:fla` are derived, not written twice)
    assert REGISTRY["layer:fla"].autotune_modules == REGISTRY["fla"].autotune_modules != ()


def test_naive_backends_and_oracle_are_registered():
    assert ORACLE in REGISTRY
    assert get_backend("naive-chunk").available() == (True, "")
    assert get_backend("naive-recurrent").available() == (True, "")


def test_unknown_backend_is_a_backend_error():
    with pytest.raises(BackendError, match="naive-chunk"):
        get_backend("warp-speed")


def test_supports_gives_reasons():
    b = Picky()
    p = suite("picky").points[0].with_(dtype="bfloat16")
    ok, why = b.supports(p, "cpu")
    assert not ok and "does not run on cpu" in why and "cuda" in why
    ok, why = b.supports(p.with_(mode="fwd_bwd"), "cuda")
    assert not ok and "has no fwd_bwd mode" in why
    ok, why = b.supports(p.with_(dtype="float32"), "cuda")
    assert not ok and "does not support float32" in why and "bfloat16" in why
    assert b.supports(p, "cuda:0") == (True, "")


def test_recurrence_refuses_huge_points():
    p = suite("naive-recurrent").points[0]
    big = p.with_(seqlens=(RECURRENT_MAX_TOKENS + 1,))
    ok, why = NaiveRecurrent().supports(big, "cpu")
    assert not ok and str(RECURRENT_MAX_TOKENS) in why
    assert NaiveChunk().supports(big, "cpu") == (True, "")


# -- refusals and failures become rows ------------------------------------------------------------------


def test_unavailable_backend_yields_a_skipped_row(cpu_env):
    s = suite("missing-lib")
    row = run_point(s.points[0], context(s, registry(MissingLibrary()), cpu_env))
    assert row.status == "skipped"
    assert "backend unavailable" in row.reason and "imaginary_kernels" in row.reason
    assert row.median_ms is None and row.backend == "missing-lib"


def test_unsupported_point_yields_a_skipped_row(cpu_env):
    s = suite("picky")
    row = run_point(s.points[0], context(s, registry(Picky()), cpu_env))
    assert row.status == "skipped"
    assert row.reason.startswith("unsupported: picky does not run on cpu")


def test_unknown_backend_in_a_point_yields_an_error_row(cpu_env):
    s = suite("naive-chunk")
    row = run_point(s.points[0].with_(backend="ghost"), context(s, registry(), cpu_env))
    assert row.status == "error" and "ghost" in row.reason


def test_wrong_outputs_yield_an_incorrect_row_without_a_time(cpu_env):
    s = suite("wrong")
    row = run_point(s.points[0], context(s, registry(Wrong()), cpu_env))
    assert row.status == "incorrect"
    assert "o rel err" in row.reason
    assert row.err_o == pytest.approx(0.1, rel=1e-3)
    assert row.err_ht is not None and row.err_ht < 1e-5
    assert row.median_ms is None and row.samples_ms == ()


def test_a_crash_yields_an_error_row(cpu_env):
    s = suite("crashing")
    row = run_point(s.points[0], context(s, registry(Crashing()), cpu_env))
    assert row.status == "error"
    assert "RuntimeError: kernel launch failed" in row.reason


def test_ok_row_carries_errors_times_and_compile_group(cpu_env):
    s = suite("naive-chunk")
    ctx = context(s, registry(NaiveChunk()), cpu_env)
    first, second = (run_point(p, ctx) for p in s.points if p.mode == "fwd")
    for row in (first, second):
        assert row.status == "ok", row.reason
        assert row.err_o < 1e-5 and row.err_ht < 1e-5
        assert row.n_samples == len(row.samples_ms) == 2
        assert row.median_ms > 0 and row.first_call_s > 0
        assert row.oracle.startswith(ORACLE)
    # one compile group (same heads, dims, dtype): only the first point pays the compile time
    assert first.compile_s is not None and second.compile_s is None


def test_fwd_bwd_rows_check_gradients(cpu_env):
    s = suite("naive-chunk", modes=["fwd_bwd"])
    row = run_point(s.points[0], context(s, registry(NaiveChunk()), cpu_env))
    assert row.status == "ok", row.reason
    for name in ("dq", "dk", "dv", "dg", "dbeta", "dh0"):
        assert getattr(row, f"err_{name}") < 1e-4, name


def test_run_sweep_writes_skipped_rows_with_reasons(tmp_path):
    s = suite("naive-recurrent", "missing-lib", "picky")
    res = run_sweep(s, tmp_path, RunOptions(executor=InProcess(registry(MissingLibrary(), Picky())), timer="wall"))
    assert res.path.parent == tmp_path / "registry-test"
    rows = read_rows(res.path)
    assert len(rows) == len(s.points) == 3 * 2 * 2
    by_backend = {}
    for r in rows:
        by_backend.setdefault(r.backend, set()).add((r.status, r.reason))
    assert by_backend["naive-recurrent"] == {("ok", None)}
    assert by_backend["missing-lib"] == {("skipped", "backend unavailable: No module named 'imaginary_kernels'")}
    (status, reason), = by_backend["picky"]
    assert status == "skipped" and "does not run on cpu" in reason


def test_run_sweep_without_check_has_no_errors(tmp_path):
    s = suite("naive-chunk")
    res = run_sweep(s, tmp_path, RunOptions(executor=InProcess(registry(NaiveChunk())), timer="wall", check=False))
    assert all(r.status == "ok" and r.err_o is None and r.oracle is None for r in res.rows)


def test_cuda_timers_are_refused_on_cpu():
    from qlabench.core.errors import TimerError

    with pytest.raises(TimerError, match="needs a CUDA device"):  # the plan a worker gets cannot be made
        TimerPlan.resolve("events", "cpu", suite("naive-chunk").timing)


@pytest.mark.gpu
def test_naive_chunk_runs_on_cuda(tmp_path):
    s = parse_suite({**SUITE, "device": "cuda", "sweep": {**SUITE["sweep"], "backends": ["naive-chunk"]}})
    res = run_sweep(s, tmp_path, RunOptions(executor=InProcess(registry(NaiveChunk()))))
    assert res.device == "cuda"
    assert all(r.status == "ok" for r in res.rows), [r.reason for r in res.rows]


def test_runnable_backend_names_why_a_point_cannot_run():
    from qlabench.backends import runnable_backend
    from qlabench.core.errors import BackendError
    from qlabench.core.point import Point

    def pt(backend):
        return Point(backend=backend, mode="fwd", layout="dense", batch=1, seqlens=(8,), h_qk=1, h_v=1, K=16, V=16,
                     dtype="float32")

    assert runnable_backend(pt("naive-chunk"), "cpu").name == "naive-chunk"
    with pytest.raises(BackendError, match="unknown backend 'nope'"):
        runnable_backend(pt("nope"), "cpu")
    with pytest.raises(BackendError, match="is unavailable|cannot run this point on cpu"):  # FLA: not installed, or CUDA only
        runnable_backend(pt("fla"), "cpu")


def test_every_auto_choice_names_registered_backends_of_its_library():
    """core's AUTO_CHOICES (the study's regret, advise's auto-CP caveat) names backends that exist, of the
    library it says, each pinning a different setting."""
    from qlabench.core.backend_decl import AUTO_CHOICES, library_of

    for choice in AUTO_CHOICES:
        for backend in choice.variants:
            assert backend in REGISTRY, backend
            assert library_of(backend).name == choice.library, backend
        assert len(set(choice.settings)) == len(choice.settings) and "auto" not in choice.settings
