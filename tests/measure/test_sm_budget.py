"""Holding points to an SM budget (measure/sm_budget.py) where green contexts cannot be made: one clear
SMBudgetError before any point runs, and nothing changes for points without a budget."""

from __future__ import annotations

import pytest

from qlabench.core.errors import ConfigError, SMBudgetError
from qlabench.core.point import Point
from qlabench.measure import sm_budget

P = Point(backend="naive-chunk", mode="fwd", layout="dense", batch=1, seqlens=(64,), h_qk=2, h_v=4)


def test_a_budget_on_a_cpu_run_is_one_error_naming_the_budgets_and_the_device():
    with pytest.raises(SMBudgetError, match=r"SM budgets \(16, 32 SMs\).*this run is on cpu") as e:
        sm_budget.check_budgets([P.with_(sm_budget=32), P.with_(sm_budget=16), P], "cpu")
    assert isinstance(e.value, ConfigError)  # the CLI's exit code 2


def test_points_without_a_budget_need_nothing():
    sm_budget.check_budgets([P], "cpu")


def test_a_cuda_run_without_green_contexts_says_why(monkeypatch):
    monkeypatch.setattr(sm_budget, "support_problem", lambda: "torch 0.0 has no torch.cuda.green_contexts")
    with pytest.raises(SMBudgetError, match="need CUDA green contexts: torch 0.0 has no"):
        sm_budget.check_budgets([P.with_(sm_budget=16)], "cuda")


def test_this_torch_without_cuda_cannot_make_green_contexts():
    torch = pytest.importorskip("torch")
    if torch.cuda.is_available():
        pytest.skip("a CUDA host")
    assert sm_budget.support_problem() == "CUDA is not available here"


def test_no_budget_and_the_whole_device_change_nothing():
    with sm_budget.held_to(None):
        assert sm_budget.active_stream() is None
    whole = sm_budget.Grant(budget=132, granted=132, device_index=0, stream=None, granted_from="device")
    with sm_budget.held_to(whole), sm_budget.whole_device():
        assert sm_budget.active_stream() is None
    assert whole.details() == {"sm_budget": {"asked": 132, "granted": 132, "granted_from": "device",
                                             "partition": "whole device"}}


def test_the_current_context_reads_as_a_handle_or_not_at_all():
    ctx = sm_budget.current_context()
    assert ctx is None or isinstance(ctx, int)
