"""`advise --measure` measures what the answer misses on this GPU model (analyze/advise/advice.py missing_on): rows
of another GPU answer nothing about this one, and a candidate measured here is not measured again."""

from __future__ import annotations

import dataclasses
import tomllib

from qlabench.analyze.advise import advise, missing_on
from qlabench.analyze.answer import make_question
from qlabench.core.backend_decl import candidates
from qlabench.store.files import write_rows

H = dict(h_qk=2, h_v=8, K=128, V=128, dtype="bfloat16", model="qwen3.5-397b", tp=8, layout="varlen", batch=1,
         num_seqs=1, timer="graph", device="NVIDIA H200", flash_qla_version="0.1.3", fla_version="0.6.0",
         flashinfer_version="0.7.2.post1", timing_regime="sustained", run_id="r1",
         timestamp="2026-01-01T00:00:00+00:00")


def test_rows_of_another_gpu_leave_everything_missing_here(tmp_path, make_row):
    every = candidates("prefill")
    rows = [make_row(**{**H, "backend": b, "seqlens": (4096,), "total_tokens": 4096, "median_ms": 0.1 + i / 100})
            for i, b in enumerate(every)]
    rows += [make_row(**{**H, "backend": "fla", "seqlens": (1024,), "total_tokens": 1024, "median_ms": 0.05})]
    f = write_rows(tmp_path / "r.parquet", rows)
    q = make_question("qwen3.5-397b", 8, "prefill", "4096,1024", "published", "fla", None)
    ans = advise(q, [f])
    cases = {c.label: c for c in q.cases}
    assert missing_on(ans, "NVIDIA H200") == {cases["1024"]: [b for b in every if b != "fla"]}
    assert missing_on(ans, "NVIDIA H100 80GB HBM3") == {cases["4096"]: list(every), cases["1024"]: list(every)}


def _stale_rows(make_row, checked_at_size: dict[str, bool]):
    return [make_row(**{**H, "backend": b, "seqlens": (4096,), "total_tokens": 4096, "median_ms": 0.1 + i / 100,
                        "device_ms": 0.1 + i / 100, "eager_ms": 0.2 + i / 100, "eager_rel_noise": 0.01, "checked_at_size": at_size,
                        "check_tokens": 4096 if at_size else 256})
            for i, (b, at_size) in enumerate(checked_at_size.items())]


def test_rows_checked_only_on_a_reduced_problem_are_measured_again(tmp_path, make_row):
    every = candidates("prefill")
    at_size = {b: b != "flashinfer" for b in every}
    f = write_rows(tmp_path / "r.parquet", _stale_rows(make_row, at_size))
    q = make_question("qwen3.5-397b", 8, "prefill", "4096", "published", "fla", None)
    ans = advise(q, [f])
    case = q.cases[0]
    assert ans.cases[0].stale == ["flashinfer"]
    assert missing_on(ans, "NVIDIA H200") == {case: ["flashinfer"]}
    # --suite-out measures it again, beside the current choice (the baseline of the answer's speedups)
    assert tomllib.loads(ans.suite_toml)["sweep"]["backends"] == ["fla", "flashinfer"]


def test_a_call_that_cannot_be_captured_is_not_measured_again_for_its_graph_time(tmp_path, make_row):
    # fla-intracp times with events (FLA reads cu_seqlens on the host): no new run gives it a CUDA-graph time
    every = candidates("prefill")
    rows = [r if r.backend != "fla-intracp" else dataclasses.replace(r, timer="events", device_ms=None)
            for r in _stale_rows(make_row, {b: True for b in every})]
    f = write_rows(tmp_path / "r.parquet", rows)
    q = make_question("qwen3.5-397b", 8, "prefill", "4096", "published", "fla", None, launch="graph")
    ans = advise(q, [f])
    assert ans.cases[0].unranked == ["fla-intracp"] and ans.cases[0].stale == []
    assert missing_on(ans, "NVIDIA H200") == {} and ans.suite_toml is None
