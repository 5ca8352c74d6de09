"""The SM-budget study from rows (analyze/sm_budget/): winners per budget, each library's auto-CP regret
against its pinned settings, where a kernel stops scaling, extra memory beside the times, and the page."""

from __future__ import annotations

import pandas as pd
import pytest

from qlabench.analyze.sm_budget import build_budget_study, write_budget_page
from qlabench.analyze.sm_budget.page import BANDWIDTH_NOTE
from qlabench.core.errors import QlabenchError

H = dict(h_qk=2, h_v=8, K=128, V=128, dtype="bfloat16", model="qwen3.5-397b", tp=8, layout="varlen", batch=1,
         seqlens=(32768,), num_seqs=1, total_tokens=32768, timer="graph", num_sms=132)
# ms at each SM count (132: the whole GPU, no budget): flash_qla's auto CP wins on the whole GPU and loses at
# 16 SMs, where its split made for 132 SMs costs more than it gains; fla stops scaling below 64 SMs
TIMES = {
    "flash_qla": {132: 1.0, 64: 1.6, 32: 3.0, 16: 7.0},
    "flash_qla-nocp": {132: 2.0, 64: 2.2, 32: 3.2, 16: 5.0},
    "flash_qla-forcecp": {132: 1.0, 64: 1.7, 32: 3.3, 16: 7.5},
    "fla": {132: 3.0, 64: 3.1, 32: 4.0, 16: 6.0},
}
MEM = {"flash_qla": 40.0, "flash_qla-nocp": 24.0, "flash_qla-forcecp": 40.0, "fla": 8.0}


def _rows(make_row):
    out = []
    for backend, by in TIMES.items():
        for sms, ms in by.items():
            budget = None if sms == 132 else sms
            out.append(make_row(**H, backend=backend, sm_budget=budget, sm_granted=budget, median_ms=ms,
                                extra_mem_mib=MEM[backend], outside_mem_mib=0.0).as_dict())
    out.append(make_row(**H, backend="flashinfer", sm_budget=16, sm_granted=16, status="error",
                        reason="the library escaped the SM budget of 16: 2 of the call's 4 kernels ran on another "
                               "stream than the budget's green context (k)").as_dict())
    return pd.DataFrame(out)


def test_the_winner_changes_with_the_budget(make_row):
    s = build_budget_study(_rows(make_row))
    w = s.winners.set_index("SMs")
    # equal times at 132 SMs are a tie, never a winner by sort order
    assert w.loc[132, "winner"] == "tie: flash_qla, flash_qla-forcecp" and w.loc[16, "winner"] == "flash_qla-nocp"
    assert w.loc[16, "extra MiB"] == 24.0 and w.loc[16, "margin"] == pytest.approx(6.0 / 5.0)
    assert s.budgets == [16, 32, 64, 132]


def test_the_auto_cp_regret_is_against_the_best_pinned_setting(make_row):
    r = build_budget_study(_rows(make_row)).regret.set_index("SMs")
    assert r.loc[16, "regret"] == pytest.approx(7.0 / 5.0) and r.loc[16, "best pinned"] == "nocp"
    assert r.loc[132, "regret"] == pytest.approx(1.0)
    assert set(r["library"]) == {"flash-qla"}  # FlashInfer has no ok auto and pinned rows here


def test_where_a_kernel_stops_scaling_and_its_memory(make_row):
    sc = build_budget_study(_rows(make_row)).scaling.set_index("backend")
    assert sc.loc["fla", "saturates at"] == "64 SMs" and sc.loc["flash_qla", "saturates at"] == "132 SMs"
    assert sc.loc["fla", "16 SMs"] == 6.0 and sc.loc["flash_qla", "extra MiB"] == 40.0


def test_rows_without_a_budget_are_no_study(make_row):
    with pytest.raises(QlabenchError, match="no row here was held to an SM budget"):
        build_budget_study(pd.DataFrame([make_row(**H, backend="fla").as_dict()]))


def test_the_page_shows_winners_regret_figures_memory_and_the_escape(tmp_path, make_row):
    files = write_budget_page(build_budget_study(_rows(make_row), sources=["results/sm-budget"]), tmp_path,
                              "qlabench report --sm-budget results/sm-budget")
    text = files.page.read_text()
    assert [f.name for f in files.figures] == ["sm_budget_time_fwd.png"] and files.figures[0].stat().st_size > 0
    for needle in ("## The winner per budget", "flash-qla at 16 SMs: median regret 1.40x over 1 problem; worst 1.40x", "extra MiB",
                   "saturates at", "escaped the SM budget of 16", BANDWIDTH_NOTE, "![sm_budget_time_fwd]"):
        assert needle in text, needle
