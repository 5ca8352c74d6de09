"""Crash isolation: every fault of the `fault` backend, run through worker subprocesses, costs only its row."""

from __future__ import annotations

import pytest

from qlabench.backends.fault import FAULT_BY_V
from qlabench.run.sweep import run_sweep
from qlabench.core.spec import parse_suite
from qlabench.store.files import read_results

from fault_suites import TIMEOUT_S, fault_suite

# V -> (status, text the reason must contain); V=16 is a normal point.
EXPECTED = {
    16: ("ok", None),
    17: ("error", "RuntimeError: injected fault"),
    18: ("incorrect", "NaN/Inf"),
    19: ("incorrect", "NaN/Inf"),
    20: ("error", "worker died: SIGSEGV"),
    21: ("error", "worker died: SIGABRT"),
    22: ("error", f"timeout: no result within {TIMEOUT_S:g}s"),
    23: ("error", "MemoryError"),
    24: ("error", "worker died: SIGKILL"),
    25: ("skipped", "unsupported"),
    26: ("ok", None),
}


@pytest.fixture(scope="module")
def fault_run(tmp_path_factory):
    # Two ok points first (one compile group: the worker is reused), then every fault, then ok again.
    out = tmp_path_factory.mktemp("faults")
    data = fault_suite([16], seqlens=(8, 12))
    faults = sorted(set(FAULT_BY_V) - {26, 27})
    data["include"] = [{"V": faults, "seqlen": [8]}, {"V": [26], "seqlen": [8]}]
    return run_sweep(parse_suite(data, "<faults>"), out), out


def test_every_fault_costs_only_its_row(fault_run):
    res, _ = fault_run
    by_v = {}
    for r in res.rows:
        by_v.setdefault(r.V, []).append(r)
    assert sorted(by_v) == sorted(EXPECTED)
    assert len(by_v[16]) == 2
    for v, (status, text) in EXPECTED.items():
        for r in by_v[v]:
            assert r.status == status, (v, r.status, r.reason)
            if text is None:
                assert r.reason is None and r.median_ms > 0
            else:
                assert text in r.reason, (v, r.reason)
    assert res.complete and res.not_run == 0


def test_segfault_reason_quotes_the_workers_last_error_line(fault_run):
    res, _ = fault_run
    segv = next(r for r in res.rows if r.V == 20)
    assert "Fatal Python error: Segmentation fault" in segv.reason


def test_worker_replaced_after_each_error_and_reused_otherwise(fault_run):
    res, _ = fault_run
    # A new worker after every error row (crash, timeout or exception) that is followed by another point;
    # ok, incorrect and skipped rows keep their worker.
    errors_before_last = sum(r.status == "error" for r in res.rows[:-1])
    assert res.workers_started == 1 + errors_before_last


def test_failed_rows_carry_the_run_and_environment(fault_run):
    res, out = fault_run
    ok = next(r for r in res.rows if r.ok)
    for r in res.rows:
        assert r.run_id == res.run_id and r.env_fingerprint == ok.env_fingerprint and r.host == ok.host
    df = read_results([out])
    assert len(df) == len(res.rows)
    assert res.path is not None and res.path.name == f"{res.run_id}.parquet"
    assert not (res.path.parent / res.run_id).exists()  # parts were compacted away


def test_point_timeout_applies_after_the_first_point_of_a_group(tmp_path):
    # V=27 runs 8 tokens fine (opening its compile group) and hangs on 16: the point limit applies there.
    data = fault_suite([27], seqlens=(8, 16), point_timeout_s=1.0, compile_timeout_s=60.0)
    res = run_sweep(parse_suite(data, "<hang>"), tmp_path)
    short, long = sorted(res.rows, key=lambda r: r.total_tokens)
    assert short.ok and short.compile_s is not None
    assert long.status == "error"
    assert "timeout: no result within 1s (run.point_timeout_s)" in long.reason
