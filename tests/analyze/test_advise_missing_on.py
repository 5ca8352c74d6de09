"""`advise --measure` measures what the answer misses on this GPU model (analyze/advise/advice.py missing_on): rows
of another GPU answer nothing about this one, and a candidate measured here is not measured again."""

from __future__ import annotations

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
