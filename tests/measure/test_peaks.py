"""The HBM peaks (measure/probes/peaks.py): each the best of several kernels, the winner named, and a kernel
that fails or skips work setting no peak. The kernels' checks run here on CPU tensors; the timed GPU part runs
in tests/gpu/test_peaks_gpu.py."""

from __future__ import annotations

import pytest
import torch

from qlabench.core.flops import Peaks
from qlabench.measure.probes import peaks as pk


def test_the_best_kernel_sets_the_peak_and_is_named():
    assert pk.best_of({"sum": 4.27, "sum-f64-view": 4.47, "amax": None}) == ("sum-f64-view", 4.47)
    assert pk.best_of({"sum": None}) == (None, None)


def test_a_kernel_that_fails_or_skips_bytes_sets_no_peak(monkeypatch):
    monkeypatch.setattr(pk, "_best_ms", lambda fn, reps, trials: 0.25)
    errors: dict = {}
    figures = pk._run_candidates({
        "complete": (lambda: None, lambda: None),
        "skips": (lambda: None, lambda: pk._close(50.0, 100.0)),  # a sum that saw half the buffer
        "raises": (lambda: None, lambda: 1 / 0),
        "absent": ImportError("No module named 'triton'"),
    }, 10**9, 10, 5, errors)
    assert figures == {"complete": pytest.approx(4.0), "skips": None, "raises": None, "absent": None}
    assert "did not read every byte" in errors["skips"] and errors["raises"].startswith("ZeroDivisionError")
    assert errors["absent"] == "unavailable: ImportError: No module named 'triton'"


def test_every_read_kernel_sees_the_whole_buffer_and_its_check_passes():
    buf = torch.empty(4 * pk.ROW * 4, dtype=torch.uint8)
    x = buf.view(torch.float32)
    x.fill_(1.0)
    x[-1] = 2.0
    cands = pk._read_candidates(buf)
    assert set(cands) == set(pk.READ_KERNELS)
    ran = {n: c for n, c in cands.items() if not isinstance(c, Exception)}
    assert {"sum", "sum-f64-view", "amax", "row-sum"} <= set(ran)
    assert all(check() is None for _, check in ran.values())
    x[-x.numel() // 50:] = 0.0  # what a kernel stopping 2% short would see: the sums come out short
    assert all(check() is not None for _, check in ran.values())


def test_every_write_kernel_reaches_the_end_of_the_buffer():
    buf = torch.empty(4 * pk.ROW * 4, dtype=torch.uint8)
    cands = pk._write_candidates(buf)
    assert set(cands) == set(pk.WRITE_KERNELS)
    assert all(c[1]() is None for c in cands.values() if not isinstance(c, Exception))


def test_the_stream_size_fits_the_free_memory_in_whole_rows():
    assert pk.stream_size(100 << 30) == pk.STREAM_BYTES
    small = pk.stream_size(1 << 30)
    assert small <= (1 << 30) // 4 and small % (pk.ROW * 4) == 0


def test_a_row_keeps_which_kernel_set_each_peak():
    p = Peaks(tflops=1.0, gbps=1.0, read_tbs=4.47, write_tbs=4.70, read_kernel="sum-f64-view", write_kernel="zero",
              stream_bytes=4 << 30, read_kernels=(("sum", 4.40), ("sum-f64-view", 4.47), ("triton-sum", None)),
              write_kernels=(("fill", 4.70), ("zero", 4.70)), kernel_errors=(("triton-sum", "unavailable"),))
    rec = p.stream_record()
    assert rec["read_kernel"] == "sum-f64-view" and rec["read_tbs"]["sum"] == 4.40
    assert rec["failed"] == {"triton-sum": "unavailable"} and rec["bytes"] == 4 << 30
