"""Suite settings that would hang a run or crash its workers are refused when the suite is parsed."""

from __future__ import annotations

import pytest

from qlabench.core.errors import SpecError
from qlabench.core.spec import parse_suite
from qlabench.core.spec_limits import MAX_CPU_THREADS, MAX_SAMPLES, MAX_WARMUP

BASE = {"sweep": {"backends": ["naive-chunk"], "seqlen": [16], "heads": [{"h_qk": 1, "h_v": 1}]}}


@pytest.mark.parametrize("table, key, value", [
    ("run", "cpu_threads", 100_000),  # torch segfaults in every worker
    ("run", "cpu_threads", MAX_CPU_THREADS + 1),
    ("run", "cpu_threads", -1),
    ("timing", "warmup", 2**63 - 1),  # warm-up calls are bounded by no time limit: a hang
    ("timing", "warmup", MAX_WARMUP + 1),
    ("timing", "min_samples", MAX_SAMPLES + 1),
    ("timing", "max_samples", 2**63 - 1),
])
def test_settings_out_of_range_are_refused_at_parse(table, key, value):
    extra = {"max_samples": max(value, 5)} if key == "min_samples" else {}
    with pytest.raises(SpecError, match=rf"{table}\.{key}"):
        parse_suite({**BASE, table: {key: value, **extra}})


@pytest.mark.parametrize("table, key, value", [("run", "cpu_threads", MAX_CPU_THREADS), ("run", "cpu_threads", 0),
                                               ("timing", "warmup", MAX_WARMUP), ("timing", "max_samples", MAX_SAMPLES)])
def test_the_bounds_themselves_are_allowed(table, key, value):
    s = parse_suite({**BASE, table: {key: value}})
    assert getattr(getattr(s, table), key) == value


def test_a_count_bound_says_no_seconds():
    with pytest.raises(SpecError) as e:
        parse_suite({**BASE, "timing": {"warmup": MAX_WARMUP + 1}})
    assert "seconds" not in str(e.value)
