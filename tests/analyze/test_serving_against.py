"""Every serving variant against one baseline (analyze/serving/against.py) and its docs block
(analyze/serving/blocks.py): ratios only within one run, L2-resident batches apart from HBM ones, the pool
check carried along."""

from __future__ import annotations

import pandas as pd
import pytest

import serving_rows as sr
from qlabench.analyze.blocks import BlockContext
from qlabench.analyze.serving.blocks import serving_against_block
from qlabench.analyze.serving import build_serving
from qlabench.analyze.serving.against import against_baseline
from qlabench.core.errors import ConfigError
from qlabench.core.result import ResultRow
from qlabench.store.catalog import load_catalog
from qlabench.store.files import write_rows

GROUP = "qwen3.5-397b TP8 (h2/8) · T=1 · state float32"
BASE = "flashinfer-decode-pt"


def _rows() -> pd.DataFrame:
    return pd.DataFrame(_dicts())


def _dicts() -> list[dict]:
    out = []
    for b, l2 in ((1, True), (64, False), (256, False)):
        out.append(sr.serving_row(BASE, "vk", b, sr.fi_ms(b), l2=l2, err_pool=0.0))
        # the engine's kernel: 1.5x at batch 1 (in L2), 0.9x and 1.1x from HBM
        out.append(sr.serving_row("vllm-decode", "vk", b, sr.fi_ms(b) * {1: 1.5, 64: 0.9, 256: 1.1}[b], l2=l2,
                                  err_pool=0.0))
    # a row of another run at a batch the baseline's run also measured: counted, never divided
    out.append(sr.serving_row("sglang-decode", "vk", 64, sr.fi_ms(64), run_id="other", err_pool=0.0))
    out.append(sr.serving_row("sglang-decode", "vk", 256, sr.fi_ms(256) * 2, l2=False, err_pool=0.0))
    return out


def test_each_variant_is_divided_by_the_baseline_of_its_own_run_and_l2_batches_stand_apart():
    t = against_baseline(build_serving(_rows()).rows, BASE).set_index("variant")
    v = t.loc["vllm-decode [vk]"]
    assert v["group"] == GROUP
    assert (v["from_hbm"], v["in_l2"]) == ("0.90-1.10x (batch 64-256)", "1.50x (batch 1)")
    assert v["rows"] == 3 and v["err_pool_max"] == 0.0
    s = t.loc["sglang-decode [vk]"]
    assert (s["from_hbm"], s["in_l2"], s["pairs_of_two_runs"]) == ("2.00x (batch 256)", "-", 1)
    assert BASE + " [vk]" not in t.index


def test_no_usable_baseline_row_gives_no_table():
    rows = build_serving(_rows()).rows
    assert against_baseline(rows, "flashinfer-mtp").empty


def _catalog(tmp_path, kind="serving"):
    root = tmp_path / "results"
    (root / "serving-engines").mkdir(parents=True)
    write_rows(root / "serving-engines" / "run.parquet", [ResultRow(**r) for r in _dicts()])
    (root / "catalog.toml").write_text(
        'format = 1\n[[entry]]\npath = "serving-engines"\nkind = "%s"\nstatus = "current"\ndate = 2026-01-02\n'
        'question = "q"\nstack = {}\n' % kind)
    return load_catalog(root)


def test_the_block_reads_one_current_serving_entry_and_names_its_run_and_the_pool_check(tmp_path):
    text = serving_against_block(BlockContext(catalog=_catalog(tmp_path)), entry="serving-engines", baseline=BASE)
    assert "`run-s`" in text and "`other`" in text  # both runs the entry holds are named
    assert f"| vllm-decode [vk] | {GROUP} | 0.90-1.10x (batch 64-256) | 1.50x (batch 1) | 3 | 0 (bit for bit) |" in text
    assert "2.00x (batch 256) (1 pairs of two runs left out)" in text
    assert f"`{BASE}`'s own 3 rows: 0 (bit for bit)" in text


def test_the_block_refuses_an_entry_of_another_kind(tmp_path):
    with pytest.raises(ConfigError, match="kind 'serving'"):
        serving_against_block(BlockContext(catalog=_catalog(tmp_path, kind="harness")), entry="serving-engines",
                              baseline=BASE)
