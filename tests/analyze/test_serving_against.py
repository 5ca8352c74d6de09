"""Every serving variant against one baseline (analyze/serving/against.py): ratios only within one run,
L2-resident batches apart from HBM ones, the pool check carried along (its docs block: tests/publish/)."""

from __future__ import annotations

import pandas as pd

import serving_rows as sr
from qlabench.analyze.serving import build_serving
from qlabench.analyze.serving.against import against_baseline

GROUP, BASE = sr.AGAINST_GROUP, sr.AGAINST_BASE


def _rows() -> pd.DataFrame:
    return pd.DataFrame(sr.against_dicts())


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
