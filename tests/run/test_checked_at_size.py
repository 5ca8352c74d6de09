"""Every timed row is checked at its own size (issue 51): a kernel right on the check's few hundred tokens and
wrong beyond is `incorrect`, never ranked; a row checked only on a reduced problem says so (checked_at_size)."""

from __future__ import annotations

import torch

from qlabench.backends import REGISTRY
from qlabench.backends.function import FunctionBackend
from qlabench.backends.naive import NaiveChunk
from qlabench.core import backend_decl
from qlabench.core.point import Point
from qlabench.core.spec import CheckSpec, Suite, TimingSpec
from qlabench.measure import env as envmod
from qlabench.measure.timing import TimerPlan
from qlabench.run.point import MeasureContext, run_point

CHECK_TOKENS = 64


def right_only_on_short_calls(q, k, v, g, beta, scale=None, initial_state=None, output_final_state=True,
                              cu_seqlens=None, **_):
    """naive-chunk's outputs where the call holds at most CHECK_TOKENS tokens, zeros beyond: the hostile kernel a
    reduced check alone would pass and rank."""
    from qlabench.measure.inputs import GDNInputs

    o, ht = NaiveChunk().forward(GDNInputs(q=q, k=k, v=v, g=g, beta=beta, h0=initial_state, cu_seqlens=cu_seqlens,
                                           scale=scale, do=None, dht=None))
    if q.shape[1] > CHECK_TOKENS:
        o = torch.zeros_like(o)
    return o, ht


def _run(backend, tokens: int, full_size: bool = True):
    p = Point(backend=backend.name, mode="fwd", layout="dense", batch=1, seqlens=(tokens,), h_qk=2, h_v=4, K=16, V=16,
              dtype="float32")
    timing = TimingSpec(timer="wall", warmup=0, min_samples=2, max_samples=2, max_time_s=0.5)
    suite = Suite(name="t", path="<t>", points=(p,), timing=timing,
                  check=CheckSpec(oracle_max_tokens=CHECK_TOKENS, full_size=full_size))
    ctx = MeasureContext(suite=suite, device="cpu", env=envmod.capture("cpu"), run_id="r",
                         timer=TimerPlan.resolve("wall", "cpu", timing), registry=dict(REGISTRY, **{backend.name: backend}),
                         check=True)
    return run_point(p, ctx)


def _hostile():
    decl = backend_decl.plugin_decl("short-right", "hostile_mod:right_only_on_short_calls", None)
    return FunctionBackend(decl, right_only_on_short_calls)


def test_a_kernel_right_only_on_the_checks_tokens_is_incorrect_at_its_size():
    row = _run(_hostile(), 256)
    assert row.status == "incorrect"
    assert "full size vs naive-chunk" in row.reason


def test_the_same_kernel_on_a_call_the_oracle_covers_whole_is_ok_and_checked_at_size():
    row = _run(_hostile(), CHECK_TOKENS)
    assert row.status == "ok" and row.checked_at_size is True
    assert row.check_tokens == CHECK_TOKENS


def test_with_the_full_size_check_turned_off_the_row_says_it_was_checked_reduced_only():
    row = _run(_hostile(), 256, full_size=False)
    assert row.status == "ok"  # the reduced check cannot see it: the row must say so, and no view ranks it
    assert row.checked_at_size is False and row.check_tokens == CHECK_TOKENS


def test_a_correct_backend_is_checked_at_its_size_against_the_fp32_chunked_form():
    row = _run(REGISTRY["naive-recurrent"], 256)
    assert row.status == "ok" and row.checked_at_size is True
    assert row.oracle == "naive-chunk float32 @256 tokens" and row.check_tokens == 256


def test_the_chunked_reference_itself_is_checked_against_the_recurrence_on_the_whole_problem():
    row = _run(REGISTRY["naive-chunk"], 256)
    assert row.status == "ok" and row.checked_at_size is True
    assert row.oracle == "naive-recurrent float32 @256 tokens"


def test_a_cpu_row_records_its_wall_time_as_the_eager_and_host_time_and_no_device_time():
    row = _run(REGISTRY["naive-chunk"], CHECK_TOKENS)
    assert row.device_ms is None and row.launch_bound is None
    assert row.eager_ms == row.median_ms and row.host_ms == row.median_ms
    assert row.host_cpu
