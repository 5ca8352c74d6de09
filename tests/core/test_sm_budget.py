"""SM budgets as data (core/sm_budget.py): the counts a device grants, why one is refused, and when a traced call
escaped its budget."""

from __future__ import annotations

from qlabench.core.kernel_event import KernelEvent
from qlabench.core.point import Point
from qlabench.core.sm_budget import (budget_problem, budgets_of, context_problem, escape_problem, grantable,
                                     grantable_text, granularity)


def test_an_h200_grants_multiples_of_8_below_132_and_the_whole_device():
    assert granularity(9) == 8 and granularity(8) == 2
    counts = grantable(132, 9)
    assert counts[:3] == [8, 16, 24] and counts[-2:] == [128, 132]
    assert budget_problem(16, 132, 9) is None and budget_problem(132, 132, 9) is None


def test_a_count_the_device_cannot_grant_says_which_it_can():
    for bad in (12, 136, 4):
        problem = budget_problem(bad, 132, 9)
        assert problem is not None and f"sm_budget {bad}" in problem
        assert "8, 16, ..., 128 (multiples of 8) or 132 (the whole device)" in problem
    assert grantable_text(8, 9) == "8 (the whole device)"


def test_the_budgets_of_a_suite_are_its_distinct_counts():
    p = Point(backend="naive-chunk", mode="fwd", layout="dense", batch=1, seqlens=(64,), h_qk=2, h_v=4)
    assert budgets_of([p, p.with_(sm_budget=32), p.with_(sm_budget=16), p.with_(sm_budget=32)]) == [16, 32]
    assert budgets_of([p]) == []


def _ev(name, stream):
    return KernelEvent(name, 1.0, (1, 1, 1), (128, 1, 1), None, stream=stream)


def test_a_kernel_on_another_stream_escapes_the_budget():
    assert escape_problem([_ev("a", 13), _ev("b", 13)], 13, 32) is None
    problem = escape_problem([_ev("a", 13), _ev("b", 7)], 13, 32)
    assert problem is not None and "escaped the SM budget of 32" in problem and "1 of the call's 2" in problem
    assert "(b)" in problem
    # no known budget stream, or kernels with no stream: nothing to hold them to
    assert escape_problem([_ev("b", 7)], None, 32) is None
    assert escape_problem([_ev("b", None)], 13, 32) is None


def test_a_call_that_changes_the_current_context_escapes_the_budget():
    assert context_problem(0x10, 0x10, 16) is None
    assert "changed the current CUDA context" in context_problem(0x10, 0x20, 16)
    assert context_problem(None, 0x20, 16) is None and context_problem(0x10, None, 16) is None
    assert context_problem(0, 0x20, 16) is None  # no context before: nothing was changed away from
