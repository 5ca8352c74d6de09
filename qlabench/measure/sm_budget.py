"""Holding a point to a share of the GPU's SMs: one CUDA green context per (device, SM count) per process.

A point with `sm_budget` N runs its check, warm-up, kernel trace and every timed call on the stream of a green
context of N SMs (`held_to(grant)`): the kernels are unchanged, the hardware they may use is not. The work
is launched on the green context's own stream, never by making the context current: TileLang resets the
current CUDA context inside a FlashQLA call, and popping a context made current then fails while the kernel
ran on the whole GPU. A green context is created once per process and kept alive (its stream and the
allocations made on it live as long as the process).

A sweep checks its budgets once, before any point runs (`check_budgets`, from run/sweep.py): on a CPU, with
a torch or driver without green contexts, or for a count the device cannot grant, one SMBudgetError, never
a row per point. A budget equal to the device's SM count is the whole device: no partition.

Timers capture their CUDA graphs on, and replay them on, `active_stream()` (timing/cuda.py). The device's
peaks are measured outside any budget (`whole_device()`): they are the device's, not the partition's.
"""

from __future__ import annotations

import contextlib
import ctypes
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from qlabench.core.errors import SMBudgetError
from qlabench.core.sm_budget import budget_problem, budgets_of


@dataclass(frozen=True)
class Grant:
    """A budget as the device granted it."""

    budget: int  # SMs asked for
    granted: int  # SMs the green context has (the device's count for the whole device)
    device_index: int
    stream: object | None  # the green context's torch.cuda.Stream; None: the whole device, no partition
    granted_from: str  # "driver" (its split, read back), "rule" (the granularity rule), "device" (whole device)

    @property
    def partitioned(self) -> bool:
        return self.stream is not None

    def details(self) -> dict:
        """What a row's extra_json records about its budget."""
        return {"sm_budget": {"asked": self.budget, "granted": self.granted, "granted_from": self.granted_from,
                              "partition": "green context stream" if self.partitioned else "whole device"}}


# (device index, budget) -> (green context, Grant): kept for the life of the process (see the docstring)
_GRANTS: dict[tuple[int, int], tuple[object, Grant]] = {}
_ACTIVE: list = []  # the streams of the budgets being held, innermost last


def support_problem() -> str | None:
    """Why this process cannot make green contexts (no CUDA, a torch without them), or None."""
    import torch

    if not torch.cuda.is_available():
        return "CUDA is not available here"
    try:
        from torch.cuda import green_contexts
    except ImportError:
        return f"torch {torch.__version__} has no torch.cuda.green_contexts (a CUDA 12.8+ build of torch 2.9 or later has)"
    if not getattr(green_contexts, "SUPPORTED", True) or not hasattr(green_contexts.GreenContext, "create"):
        return f"torch {torch.__version__} was built without green context support (CUDA 12.8+ builds have it)"
    return None


def _device_index(device) -> int:
    import torch

    dev = torch.device(device)
    return dev.index if dev.index is not None else torch.cuda.current_device()


def check_budgets(points: Iterable, device: str) -> None:
    """SMBudgetError unless every SM budget the points ask for can be granted on `device`; nothing when none
    asks for one. Creates each green context here once (kept for an in-process run): a driver that refuses
    one is one error before any point runs."""
    budgets = budgets_of(points)
    if not budgets:
        return
    asked = ", ".join(map(str, budgets))
    if not str(device).startswith("cuda"):
        raise SMBudgetError(f"the suite holds points to SM budgets ({asked} SMs), which need a CUDA GPU with green "
                            f"contexts; this run is on {device}: drop sm_budget from the suite, or run on a GPU")
    if why := support_problem():
        raise SMBudgetError(f"the suite holds points to SM budgets ({asked} SMs), which need CUDA green contexts: "
                            f"{why}")
    idx = _device_index(device)
    for b in budgets:
        grant(b, idx)


def grant(budget: int, device_index: int) -> Grant:
    """The green context of `budget` SMs on the device, created on first use and cached (SMBudgetError when the
    device cannot grant it)."""
    key = (device_index, budget)
    if key in _GRANTS:
        return _GRANTS[key][1]
    import torch

    props = torch.cuda.get_device_properties(device_index)
    if budget == props.multi_processor_count:
        g = Grant(budget, budget, device_index, None, "device")
        _GRANTS[key] = (None, g)
        return g
    if problem := budget_problem(budget, props.multi_processor_count, props.major):
        raise SMBudgetError(problem)
    if why := support_problem():
        raise SMBudgetError(f"sm_budget {budget}: {why}")
    from torch.cuda.green_contexts import GreenContext

    try:
        ctx = GreenContext.create(num_sms=budget, device_id=device_index)
        stream = ctx.Stream()
    except Exception as e:  # the driver's refusal, in its words
        raise SMBudgetError(f"the driver refused a green context of {budget} SMs on cuda:{device_index}: "
                            f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''} (green contexts need "
                            "a CUDA 12.8+ driver)") from None
    read = _driver_split(device_index, budget)
    g = Grant(budget, read if read is not None else budget, device_index, stream,
              "driver" if read is not None else "rule")
    _GRANTS[key] = (ctx, g)
    return g


def _driver_split(device_index: int, budget: int) -> int | None:
    """The SM count the driver's split gives a request of `budget` (the split torch's GreenContext.create
    makes), read through cuda-python where it is installed; None where it cannot be read."""
    try:
        from cuda.bindings import driver

        err, dev = driver.cuDeviceGet(device_index)
        if int(err):
            return None
        err, resource = driver.cuDeviceGetDevResource(dev, driver.CUdevResourceType.CU_DEV_RESOURCE_TYPE_SM)
        if int(err):
            return None
        err, groups, n, _ = driver.cuDevSmResourceSplitByCount(1, resource, 0, budget)
        count = int(groups[0].sm.smCount) if not int(err) and int(n) == 1 else None
    except Exception:  # no cuda-python, or another API shape: the rule's count stands
        return None
    return count if count is not None and count >= budget else None


@contextlib.contextmanager
def held_to(g: Grant | None) -> Iterator[None]:
    """Run the block on the budget's green context stream (nothing changes for None or the whole device)."""
    if g is None or not g.partitioned:
        yield
        return
    import torch

    torch.cuda.synchronize()  # what ran on other streams is done before the budget's work starts
    _ACTIVE.append(g.stream)
    try:
        with torch.cuda.stream(g.stream):
            yield
    finally:
        _ACTIVE.pop()
        # a point that failed on the device has its row already; the next point meets the error itself
        with contextlib.suppress(Exception):
            torch.cuda.synchronize()


@contextlib.contextmanager
def whole_device() -> Iterator[None]:
    """Step out of any budget for the block (the device's own peaks), on the default stream."""
    if not _ACTIVE:
        yield
        return
    import torch

    held = list(_ACTIVE)
    _ACTIVE.clear()
    torch.cuda.synchronize()
    try:
        with torch.cuda.stream(torch.cuda.default_stream()):
            yield
    finally:
        torch.cuda.synchronize()
        _ACTIVE[:] = held


def active_stream():
    """The stream of the budget being held (a CUDA graph is captured and replayed on it), or None."""
    return _ACTIVE[-1] if _ACTIVE else None


_LIBCUDA: list = []


def current_context() -> int | None:
    """The calling thread's current CUDA context (its handle as an int, 0 for none), read from the driver;
    None where the driver library cannot be loaded."""
    try:
        if not _LIBCUDA:
            _LIBCUDA.append(ctypes.CDLL("libcuda.so.1"))
        ctx = ctypes.c_void_p()
        if _LIBCUDA[0].cuCtxGetCurrent(ctypes.byref(ctx)) != 0:
            return None
        return ctx.value or 0
    except (OSError, AttributeError):
        return None
