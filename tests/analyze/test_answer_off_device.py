"""A backend whose library says it does not run on this GPU answers for every point of that GPU model (issue 51):
its skipped row at one point keeps the answer at another from waiting for it, and the answer says why."""

from __future__ import annotations

from qlabench.analyze.answer import answer_question, make_question
from qlabench.core.result import device_unsupported_why, off_device
from qlabench.store.files import write_rows

OFF = "unsupported: " + device_unsupported_why("SM90", "flashinfer", "0.7.4",
                                               "is_gdn_train_supported('cuda') returned False")
H = dict(h_qk=2, h_v=8, K=128, V=128, dtype="bfloat16", model="qwen3.5-397b", tp=8, layout="varlen", batch=1,
         timer="graph", rel_noise=0.003, eager_rel_noise=0.01, flash_qla_version="0.1.3", fla_version="0.6.0",
         mode="fwd_bwd", run_id="r1", device="NVIDIA H200")


def row(make_row, backend, seqlen, ms=None, **extra):
    times = {"median_ms": ms, "device_ms": ms, "eager_ms": ms, "host_ms": ms} if ms else {}
    return make_row(**{**H, "backend": backend, "seqlens": (seqlen,), "num_seqs": 1, "total_tokens": seqlen,
                       **times, **extra})


def ask(tmp_path, rows, seqlens):
    write_rows(tmp_path / "r.parquet", rows)
    return answer_question(make_question("qwen3.5-397b", 8, "train", seqlens, None, "fla"), [tmp_path / "r.parquet"])


def test_the_reason_the_library_gives_reads_back_as_off_device_and_nothing_else_does():
    assert off_device("skipped", OFF) and off_device("skipped", OFF.removeprefix("unsupported: "))
    assert not off_device("ok", OFF)
    assert not off_device("skipped", "unsupported: fla-intracp splits only varlen points")
    assert not off_device("skipped", "backend unavailable: flashinfer not installed")


def test_a_device_level_skip_at_one_point_answers_for_another_point_of_that_gpu(tmp_path, make_row):
    rows = [row(make_row, "flash_qla", 32768, 1.8), row(make_row, "fla", 32768, 3.7),
            row(make_row, "flashinfer-train", 32768, status="skipped", reason=OFF),
            row(make_row, "flash_qla", 8192, 1.6), row(make_row, "fla", 8192, 2.6)]
    at_8192 = ask(tmp_path, rows, "8192").cases[0]
    assert at_8192.best is not None and at_8192.best.backend == "flash_qla"  # not provisional
    assert "flashinfer-train" not in at_8192.missing
    assert any(n.startswith("off device: flashinfer-train does not run on this GPU model (not supported on SM90")
               for n in at_8192.caveats)


def test_a_skip_of_one_point_only_or_an_ok_row_elsewhere_keeps_the_backend_a_missing_candidate(tmp_path, make_row):
    rows = [row(make_row, "flash_qla", 8192, 1.6), row(make_row, "fla", 8192, 2.6),
            row(make_row, "flashinfer-train", 32768, status="skipped", reason="unsupported: no initial state"),
            row(make_row, "flash_qla", 32768, 1.8)]
    assert "flashinfer-train" in ask(tmp_path, rows, "8192").cases[0].missing
    rows[2] = row(make_row, "flashinfer-train", 32768, status="skipped", reason=OFF)
    rows.append(row(make_row, "flashinfer-train", 16384, 1.0))  # it ran at another point: the skip is not the GPU's
    assert "flashinfer-train" in ask(tmp_path, rows, "8192").cases[0].missing


def test_a_host_without_the_package_says_nothing_of_the_gpu_model_and_the_newer_complete_run_is_ranked(
        tmp_path, make_row):
    """A row skipped because the package is not installed on that host is no sign that the backend runs on the GPU
    model: the off-device skip elsewhere still answers for it, and a run that timed every other candidate later is
    the one ranked (H100, 2026-12-07)."""
    old = dict(run_id="old", timestamp="2026-12-06T10:00:00")
    new = dict(run_id="new", timestamp="2026-12-07T10:00:00")
    rows = [row(make_row, "flash_qla", 32768, 1.8, **old), row(make_row, "fla", 32768, 3.7, **old),
            row(make_row, "flashinfer-train", 32768, status="skipped", reason=OFF, **old),
            row(make_row, "flash_qla", 32768, 1.3, **new), row(make_row, "fla", 32768, 3.8, **new),
            row(make_row, "flashinfer-train", 32768, status="skipped",
                reason="backend unavailable: flashinfer-python is not installed", **new)]
    case = ask(tmp_path, rows, "32768").cases[0]
    assert case.best is not None and case.best.backend == "flash_qla" and case.best.time_ms == 1.3
    assert [tuple(e.runs) for e in case.entries if e.ok] == [("new",), ("new",)]
    assert "flashinfer-train" not in case.missing
    assert any(n.startswith("off device: flashinfer-train does not run on this GPU model") for n in case.caveats)
