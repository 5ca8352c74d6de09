"""advise's engine lines: how vLLM and SGLang get the recommended kernel, or that no switch can; in the
answer's JSON and its printed form (synthetic rows)."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from qlabench.analyze.answer import answer_question, make_question
from qlabench.analyze.answer.engines import TRAIN_LINE, engine_lines, engines_for
from qlabench.cli.app import app
from qlabench.store.files import write_rows

H = dict(h_qk=2, h_v=8, K=128, V=128, dtype="bfloat16", model="qwen3.5-397b", tp=8, layout="varlen", batch=1,
         seqlens=(32768,), num_seqs=1, total_tokens=32768, timer="graph", rel_noise=0.003, device="NVIDIA H200",
         flash_qla_version="0.1.3", fla_version="0.6.0", flashinfer_version="0.7.2.post1")


def _rows(make_row, *specs):
    return [make_row(**{**H, "backend": b, "run_id": "r1", "timestamp": "2026-01-01T00:00:00+00:00",
                        "median_ms": ms, "samples_ms": (ms,) * 3}) for b, ms in specs]


def test_flashqla_is_named_as_unselectable_in_both_engines_with_their_default_beside_it():
    lines = engine_lines("flash_qla", "prefill", "NVIDIA H200")
    assert [line.split(":")[0] for line in lines] == ["vLLM 0.34.0", "SGLang 0.5.23"]
    assert all("no switch selects flash_qla" in line for line in lines)
    assert "its default on SM90: --gdn-prefill-backend flashinfer -> flashinfer" in lines[0]
    assert "its default on SM90: --linear-attn-prefill-backend flashinfer -> flashinfer" in lines[1]


def test_a_winner_that_is_the_default_says_so_and_cites_the_source():
    vllm, sglang = engine_lines("flashinfer", "prefill", "NVIDIA H200")
    assert vllm.startswith("vLLM 0.34.0: --gdn-prefill-backend flashinfer (the default on SM90 when")
    assert "no max_seqlen" in vllm and vllm.endswith("qwen_gdn_linear_attn.py:317-348, 392-451, 2117-2158]")
    assert sglang.startswith("SGLang 0.5.23: --linear-attn-prefill-backend flashinfer (the default on SM90 when")


def test_a_winner_that_is_not_the_default_names_the_switch_and_the_default():
    vllm, sglang = engine_lines("fla", "prefill", "NVIDIA H200")
    assert "--gdn-prefill-backend triton (not the default on SM90: its default on SM90: --gdn-prefill-backend " \
           "flashinfer -> flashinfer)" in vllm
    assert "vLLM's own copy of FLA's chunk kernel" in vllm


def test_the_decode_and_verify_answers_name_the_engines_own_kernels():
    vllm, sglang = engine_lines("flashinfer-decode-pt", "decode", "NVIDIA H200")
    assert "no switch selects flashinfer-decode-pt" in vllm and "-> vllm-decode" in vllm
    assert sglang.startswith("SGLang 0.5.23: --linear-attn-decode-backend flashinfer (not the default on SM90")
    vllm, _ = engine_lines("vllm-mtp", "mtp", "NVIDIA H200")
    assert "VLLM_GDN_DECODE_KERNEL=triton" in vllm and "which qlabench does not time" in vllm


def test_train_has_one_line_and_no_winner_has_none():
    assert engine_lines("flash_qla", "train", "NVIDIA H200") == [TRAIN_LINE]
    assert engine_lines(None, "prefill", "NVIDIA H200") == []
    assert engines_for([], "prefill") == []


def test_an_unknown_gpu_gives_the_rule_not_a_default():
    vllm, _ = engine_lines("flashinfer", "prefill", "cpu")
    assert "the default on SM90, SM10x, SM12x when" in vllm


def test_the_answer_carries_the_engine_lines_per_case_in_json_and_print(tmp_path, make_row, monkeypatch):
    # fla-intracp measured at another prompt only: a candidate without a row here
    other = [make_row(**{**H, "backend": "fla-intracp", "run_id": "r0", "timestamp": "2026-01-01T00:00:00+00:00",
                         "median_ms": 0.5, "samples_ms": (0.5,) * 3, "seqlens": (8192,), "total_tokens": 8192})]
    write_rows(tmp_path / "r.parquet", _rows(make_row, ("fla", 0.9), ("flash_qla", 0.4), ("flashinfer", 0.6)) + other)
    ans = answer_question(make_question("qwen3.5-397b", 8, "prefill", "32768", None, "fla"), [tmp_path / "r.parquet"])
    case = ans.as_dict()["cases"][0]
    # FlashInfer's pinned settings and fla-intracp have no row: flash_qla is the provisional answer, and the
    # engine lines say how to get it all the same
    assert case["recommended"] is None and case["provisional"] == "flash_qla"
    assert case["engines"] == engine_lines("flash_qla", "prefill", "NVIDIA H200") and len(case["engines"]) == 2
    json.dumps(ans.as_dict(), allow_nan=False)
    monkeypatch.chdir(tmp_path)
    r = CliRunner().invoke(app, ["advise", "r.parquet", "--model", "qwen3.5-397b", "--tp", "8", "--seqlens", "32768"],
                           env={"COLUMNS": "400"})
    assert r.exit_code == 0, r.output
    assert "engine: vLLM 0.34.0: no switch selects flash_qla" in r.output
    assert "engine: SGLang 0.5.23: no switch selects flash_qla" in r.output
