"""A serving row's bytes and fraction of the bandwidth limit, and the row that claims more than HBM allows."""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest

from qlabench.core import bytes_model
from qlabench.core.flops import Peaks
from qlabench.core.point import Point
from qlabench.core.result import Status
from qlabench.run.point import PointRow

P = Point(backend="fla-recurrent", mode="decode", layout="dense", batch=256, seqlens=(1,) * 256, h_qk=8, h_v=32,
          state_dtype="float32", state_layout="kv", pool=512)
PEAKS = Peaks(tflops=700.0, gbps=2700.0, read_tbs=4.47, write_tbs=4.70)


def row(median_ms):
    r = PointRow(P, SimpleNamespace(run_id="r", suite=SimpleNamespace(name="s"), env={}, timer=None, groups_seen=set()))
    r.fields["median_ms"] = median_ms
    return r


def test_a_row_records_its_bytes_and_the_fraction_of_the_limit():
    r = row(0.362)
    assert r.bandwidth(PEAKS) is None
    b = bytes_model.step_bytes(P)
    assert r.fields["bytes_moved"] == b.moved and r.fields["hbm_peak_read_tbs"] == 4.47
    assert r.fields["hbm_frac"] == pytest.approx(bytes_model.limit_seconds(b, 4.47, 4.70) / 0.362e-3)
    assert 0.5 < r.fields["hbm_frac"] < 1.0


def test_a_step_faster_than_hbm_allows_fails_its_check():
    r = row(0.100)  # ~1.07 GB in 0.1 ms: 10 TB/s, twice what the memory can do
    why = r.bandwidth(PEAKS)
    assert why and "faster than the measured HBM peaks allow" in why and r.fields["hbm_frac"] > 1
    done = r.done(Status.INCORRECT, why)
    assert done.status == "incorrect" and done.hbm_frac > 1


def test_above_the_limit_with_its_states_in_l2_is_an_l2_time_not_a_wrong_kernel():
    """On an H100 (50 MB of L2) three decode rows of 25-34 MB pools read 103-112% of HBM's limit: their states
    stayed in L2 across steps. Such a row stays ok and says so; the same time with states beyond L2 fails."""
    r = row(0.100)
    assert r.bandwidth(PEAKS, l2_resident=True) is None and r.fields["hbm_frac"] > 1
    done = r.done(Status.OK)
    assert "L2 time" in json.loads(done.extra_json)["above_hbm_limit"]
    for beyond in (False, None):  # beyond L2, or not known: the check stands
        why = row(0.100).bandwidth(PEAKS, l2_resident=beyond)
        assert why and "faster than the measured HBM peaks allow" in why


def test_without_peaks_there_is_no_fraction_and_no_verdict():
    r = row(0.100)
    assert r.bandwidth(None) is None and r.fields["hbm_frac"] is None and r.fields["bytes_moved"] > 0


def test_a_row_names_the_kernels_that_set_its_peaks():
    peaks = Peaks(tflops=700.0, gbps=2700.0, read_tbs=4.47, write_tbs=4.70, read_kernel="sum-f64-view",
                  write_kernel="fill", stream_bytes=4 << 30, read_kernels=(("sum", 4.40), ("sum-f64-view", 4.47)),
                  write_kernels=(("fill", 4.70),))
    r = row(0.362)
    assert r.bandwidth(peaks) is None
    done = r.done(Status.OK)
    rec = json.loads(done.extra_json)["hbm_peaks"]
    assert rec["read_kernel"] == "sum-f64-view" and rec["write_kernel"] == "fill"
    assert rec["read_tbs"] == {"sum": 4.40, "sum-f64-view": 4.47} and rec["bytes"] == 4 << 30
