"""advise at an SM budget (`--sm-budget N`): it ranks only the rows held to N SMs, a whole-GPU question never
ranks a budget row, and a budget with no rows says so."""

from __future__ import annotations

import tomllib

import pytest

from qlabench.analyze.advise import advise
from qlabench.analyze.answer import make_question
from qlabench.core.errors import ConfigError
from qlabench.core.spec import parse_suite
from qlabench.store.files import write_rows

H = dict(h_qk=8, h_v=32, K=128, V=128, dtype="bfloat16", model="qwen3.5-397b", tp=2, layout="varlen", batch=1,
         seqlens=(32768,), num_seqs=1, total_tokens=32768, timer="graph", rel_noise=0.003,
         flash_qla_version="0.1.3", fla_version="0.6.0")


def _rows(make_row):
    # whole GPU: flash_qla wins; at 32 SMs its CP plan for 132 SMs no longer pays and fla wins
    times = {None: {"flash_qla": 1.0, "fla": 2.0}, 32: {"flash_qla": 6.0, "fla": 5.0}}
    return [make_row(**H, backend=b, sm_budget=budget, median_ms=ms) for budget, by in times.items()
            for b, ms in by.items()]


def _ask(tmp_path, rows, budget):
    write_rows(tmp_path / "r.parquet", rows)
    return advise(make_question("qwen3.5-397b", 2, "prefill", "32768", sm_budget=budget), [tmp_path / "r.parquet"])


def test_a_budget_question_ranks_the_rows_at_that_budget(tmp_path, make_row):
    ans = _ask(tmp_path, _rows(make_row), 32)
    c = ans.cases[0]
    assert [(e.backend, e.time_ms) for e in c.entries] == [("fla", 5.0), ("flash_qla", 6.0)]
    assert ans.as_dict()["question"]["sm_budget"] == 32


def test_a_whole_gpu_question_never_ranks_a_budget_row(tmp_path, make_row):
    ans = _ask(tmp_path, _rows(make_row), None)
    assert [(e.backend, e.time_ms) for e in ans.cases[0].entries] == [("flash_qla", 1.0), ("fla", 2.0)]
    assert any("2 row(s) held to an SM budget are left out" in n for n in ans.notes)


def test_a_budget_without_rows_says_so_and_its_suite_measures_it(tmp_path, make_row):
    ans = _ask(tmp_path, _rows(make_row), 16)
    assert not any(c.entries for c in ans.cases)
    assert any("no row here was measured at an SM budget of 16 (budgets measured: 32)" in n for n in ans.notes)
    assert tomllib.loads(ans.suite_toml)["sweep"]["sm_budget"] == 16
    assert {p.sm_budget for p in parse_suite(tomllib.loads(ans.suite_toml)).points} == {16}


def test_a_budget_is_a_positive_count():
    with pytest.raises(ConfigError, match="--sm-budget must be a positive number of SMs"):
        make_question("qwen3.5-397b", 2, "prefill", "32768", sm_budget=0)
