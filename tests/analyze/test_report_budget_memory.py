"""The speedup table's SM budget and device memory (analyze/report.py): a row held to a budget is its own
line, labelled with the budget; each time carries its call's extra device memory where it was measured."""

from __future__ import annotations

import pandas as pd

from qlabench.analyze.kit.labels import memory_label, sequences_label
from qlabench.analyze.kit.speedups import speedup_table


def test_a_budget_row_is_its_own_line_and_says_its_budget(make_row):
    df = pd.DataFrame([make_row(backend=b, sm_budget=budget, median_ms=ms).as_dict()
                       for b, budget, ms in (("naive-chunk", None, 2.0), ("fla", None, 1.0),
                                             ("naive-chunk", 16, 8.0), ("fla", 16, 4.0))])
    t = speedup_table(df, "naive-chunk")
    assert list(t["sequences"]) == ["1x64", "1x64 sm16"]
    assert list(t["fla x"]) == [2.0, 2.0]


def test_the_extra_memory_of_a_call_sits_beside_its_time(make_row):
    df = pd.DataFrame([make_row(backend="naive-chunk").as_dict(),
                       make_row(backend="fla", extra_mem_mib=48.2, outside_mem_mib=12.0).as_dict()])
    t = speedup_table(df, "naive-chunk")
    assert list(t["fla mem"]) == ["+48 MiB +12 outside"] and list(t["naive-chunk mem"]) == [""]
    assert memory_label({"extra_mem_mib": 0.25, "outside_mem_mib": 0.0}) == "+0.25 MiB"
    assert memory_label({"extra_mem_mib": None}) == "" and memory_label({}) == ""
