"""SM budgets as data: which SM counts a device can grant a CUDA green context, and why a count is refused.

A point's `sm_budget` (core/identity.py) holds it to that many SMs; measure/sm_budget.py makes the green
context. The driver splits a device's SMs in groups whose size is a multiple of a granularity that depends
on the architecture (cuDevSmResourceSplitByCount: 8 on compute capability 9.0 and later, 2 before); a count
equal to the device's whole SM count needs no partition (and on an H200's 132 SMs, 132 is no multiple of 8).
Pure Python, no torch.
"""

from __future__ import annotations

from collections.abc import Iterable


def granularity(major: int) -> int:
    """The SM-count step (and smallest group) of a green context on a device of compute capability `major`.x."""
    return 8 if major >= 9 else 2


def grantable(num_sms: int, major: int) -> list[int]:
    """Every SM budget the device can honour: the multiples of its granularity below its SM count, and the
    whole device."""
    step = granularity(major)
    return list(range(step, num_sms, step)) + [num_sms]


def grantable_text(num_sms: int, major: int) -> str:
    """'8, 16, ..., 128 (multiples of 8) or 132 (the whole device)'."""
    step = granularity(major)
    parts = grantable(num_sms, major)[:-1]
    listed = ", ".join(map(str, parts)) if len(parts) <= 4 else f"{parts[0]}, {parts[1]}, ..., {parts[-1]}"
    return f"{listed} (multiples of {step}) or {num_sms} (the whole device)" if parts else f"{num_sms} (the whole device)"


def budget_problem(budget: int, num_sms: int, major: int) -> str | None:
    """Why the device cannot hold a point to `budget` SMs, or None when it can."""
    if budget in grantable(num_sms, major):
        return None
    return (f"sm_budget {budget}: this device (compute capability {major}.x, {num_sms} SMs) grants "
            f"{grantable_text(num_sms, major)}")


def budgets_of(points: Iterable) -> list[int]:
    """The distinct SM budgets a set of points asks for, in order (none: every point runs on the whole GPU)."""
    return sorted({p.sm_budget for p in points if getattr(p, "sm_budget", None) is not None})


def escape_problem(events: list, budget_stream: int | None, budget: int) -> str | None:
    """Why a traced call escaped its SM budget (kernels on another stream than the green context's), or None.

    `events`: the call's KernelEvents; `budget_stream`: the profiler's id of the green context's stream (None:
    not known, nothing to hold them to). A kernel on another stream ran outside the partition: the call's
    time would be a whole-GPU time reported as a budget time."""
    if budget_stream is None:
        return None
    off = [e.name for e in events if e.stream is not None and e.stream != budget_stream]
    if not off:
        return None
    names = ", ".join(sorted(set(off))[:3])
    return (f"the library escaped the SM budget of {budget}: {len(off)} of the call's {len(events)} kernels ran on "
            f"another stream than the budget's green context ({names})")


def context_problem(before: int | None, after: int | None, budget: int) -> str | None:
    """Why a call that changed the thread's current CUDA context escaped its budget, or None (None also when
    either context could not be read)."""
    if before is None or after is None or before == 0 or before == after:
        return None
    return (f"the library escaped the SM budget of {budget}: the call changed the current CUDA context "
            f"({before:#x} -> {after:#x}), so its work may not run on the budget's green context")
