"""The study page's advice table is advise's own ranking, per model, TP degree and prompt."""

from __future__ import annotations

from qlabench.analyze.study.advice import advice_markdown, advice_table


def test_advice_rows_follow_the_ranking(make_row):
    import pandas as pd

    rows = []
    for lens, fla, fq in (((4096,), 0.2, 0.1), ((32768,), 0.9, 0.4), ((4096,) * 8, 0.5, 0.6), ((1024,), 0.1, None)):
        for backend, ms in (("fla", fla), ("flash_qla", fq)) if fq else (("flashinfer", fla),):  # flashinfer: 1024
            rows.append(make_row(backend=backend, median_ms=ms, h_qk=2, h_v=8, K=128, V=128, dtype="bfloat16",
                                 model="qwen3.5-397b", tp=8, layout="varlen", batch=1, seqlens=lens,
                                 num_seqs=len(lens), total_tokens=sum(lens), flash_qla_version="0.1.3"))
    df = pd.DataFrame([r.as_dict() for r in rows])
    t = advice_table(df)
    # FlashInfer, measured at another prompt only, has no row here: the fastest measured is named provisional
    assert list(t["recommended"])[:3] == ["flash_qla (provisional)", "flash_qla (provisional)", "fla (provisional)"]
    assert "flashinfer" in t["not measured"].iloc[0]
    assert list(t["x vs fla"]) == [2.0, 2.25, 1.0]
    assert "| qwen3.5-397b | 8 | 2/8 | packed (8x4096) | fla (provisional) |" in advice_markdown(t)


def test_the_layer_gain_is_a_ratio_within_one_run_or_nothing(make_row):
    import pandas as pd

    from qlabench.analyze.study.advice import layer_gain

    def layer(backend, ms, run):
        return make_row(backend=backend, median_ms=ms, run_id=run, h_qk=2, h_v=8, K=128, V=128, dtype="bfloat16",
                        model="qwen3.5-397b", tp=8, layout="varlen", batch=1, seqlens=(32768,), num_seqs=1,
                        total_tokens=32768, gate="fla")

    one_run = pd.DataFrame([r.as_dict() for r in (layer("layer:fla", 4.8, "a"), layer("layer:flash_qla", 3.9, "a"))])
    assert layer_gain(one_run, "qwen3.5-397b", 8, (32768,), "flash_qla", "fla") == round(4.8 / 3.9, 2)
    assert layer_gain(one_run, "qwen3.5-397b", 8, (8192,), "flash_qla", "fla") is None  # not measured there
    assert layer_gain(one_run, "qwen3.5-397b", 8, (32768,), "flash_qla-nocp", "fla") is None
    two_runs = pd.DataFrame([r.as_dict() for r in (layer("layer:fla", 4.8, "a"), layer("layer:flash_qla", 3.9, "b"))])
    assert layer_gain(two_runs, "qwen3.5-397b", 8, (32768,), "flash_qla", "fla") is None
