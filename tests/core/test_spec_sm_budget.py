"""The suite's `sm_budget` axis (core/spec.py, core/spec_tables.py): SM counts and "all" (the whole GPU, null),
each a point of its own; anything else is refused naming the axis and what is allowed."""

from __future__ import annotations

import pytest

from qlabench.core.errors import SpecError
from qlabench.core.spec import load_suite, parse_suite

BASE = {"backends": ["naive-chunk"], "seqlen": [64], "heads": [{"h_qk": 2, "h_v": 4}]}


def _suite(**sweep):
    return parse_suite({"name": "t", "sweep": {**BASE, **sweep}})


def test_each_budget_is_a_point_and_all_is_the_whole_gpu():
    s = _suite(sm_budget=[32, 16, "all"])
    assert [p.sm_budget for p in s.points] == [32, 16, None]
    assert s.points[0].label().endswith(" sm32") and "sm" not in s.points[2].label().split()[-1]
    assert [p.sm_budget for p in _suite().points] == [None]  # absent: the whole GPU
    assert [p.sm_budget for p in _suite(sm_budget=64).points] == [64]


@pytest.mark.parametrize("value, words", [
    ("half", "must be a positive number of SMs or 'all'"),
    (0, "must be positive, got 0"),
    (1.5, "must be an integer"),
])
def test_a_budget_that_is_no_count_is_refused(value, words):
    with pytest.raises(SpecError, match="sm_budget") as e:
        _suite(sm_budget=[value])
    assert words in str(e.value)


def test_a_distributed_point_cannot_hold_a_budget():
    with pytest.raises(SpecError, match="sweep.sm_budget") as e:
        _suite(seqlen=[128], cp=[{"world_size": 2, "mode": "inter"}], sm_budget=[32])
    assert "distributed (cp) point runs on whole GPUs" in str(e.value)


def test_an_exclude_rule_can_drop_a_budget():
    s = parse_suite({"name": "t", "sweep": {**BASE, "backends": ["naive-chunk", "naive-recurrent"],
                                            "sm_budget": [32, 16]},
                     "exclude": [{"backend": "naive-recurrent", "sm_budget": 16}]})
    assert sorted((p.backend, p.sm_budget) for p in s.points) == [
        ("naive-chunk", 16), ("naive-chunk", 32), ("naive-recurrent", 32)]


def test_the_sm_budget_study_suite_loads():
    s = load_suite("sm-budget")
    assert {p.sm_budget for p in s.points} == {132, 96, 64, 32, 16}
    # every prefill candidate advise ranks has a row at each budget (else every answer at a budget is provisional)
    from qlabench.core.backend_decl import candidates

    assert set(candidates("prefill")) <= {p.backend for p in s.points}
    assert {p.backend for p in s.points} >= {"fla-recurrent", "flashinfer-decode-pt"}
    assert {p.batch for p in s.points if p.mode == "decode"} == {64, 256}
