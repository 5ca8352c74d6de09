"""One plan from a suite to the points: `plan_sweep` turns a suite, a run's options and the part of the suite a
command asks for into the `SweepPlan` that `run sweep`, `gate`, `ab`, `warmup` and `cold-start` execute.

Every check a suite or its options can fail is made here, once, before any work: the backend names, the
narrowing flags (backends, modes, heads, calls, shard, CPU threads, Nsight Compute, autotune), the number of
measurements, and on the device the run will use the device itself, the timer, the SM budgets, the kernel cache
folder and the points' memory. A dry run plans without the device: it prices a GPU suite on any machine.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import torch

from qlabench.core.errors import BackendError, ConfigError, DeviceError
from qlabench.core.point import Point
from qlabench.core.spec import Suite
from qlabench.measure.caches import check_cache_folder
from qlabench.measure.sm_budget import check_budgets
from qlabench.measure.timing import TimerPlan
from qlabench.run.options import RunOptions, narrow_suite


@dataclass(frozen=True)
class Selection:
    """The part of a suite a command runs and what its flags set on it (`narrow_suite`'s arguments): backends,
    modes, head configurations ('h_qk/h_v'), calls ('32768,4x8192'), a shard ('I/N'), CPU threads, Nsight
    Compute profiling, the autotune mode."""

    backends: Sequence[str] | str | None = None
    modes: Sequence[str] | str | None = None
    heads: Sequence[str] | str | None = None
    seqlens: str | None = None
    shard: str | None = None
    cpu_threads: int | None = None
    ncu: bool = False
    autotune: str | None = None


@dataclass(frozen=True)
class SweepPlan:
    """What a command executes: the suite narrowed to its points, checked, with how they run.

    device, timer: resolved once for the whole run (the timer plan travels to every worker); None in a plan
    made without the device (a dry run's).
    """

    suite: Suite
    options: RunOptions
    device: str | None = None
    timer: TimerPlan | None = None

    @property
    def on_device(self) -> bool:
        return self.device is not None


def plan_sweep(suite: Suite, options: RunOptions | None = None, selection: Selection = Selection(), *,
               on_device: bool = True, names: bool = True) -> SweepPlan:
    """The plan of `suite` under `options`, cut to `selection`; a QlabenchError (BackendError, ConfigError,
    DeviceError, TimerError, SMBudgetError, StoreError) for anything it cannot honour, before any work.

    names: check the suite's backend names against this code's registry; False where other code measures
    (`ab`'s variants: a git ref may declare a backend this checkout does not know)."""
    opts = options or RunOptions()
    if names:
        check_backend_names(suite, opts)  # the whole suite's: a typo is an error, not a sweep of error rows
    suite = narrow_suite(suite, **{f.name: getattr(selection, f.name) for f in dataclasses.fields(selection)})
    opts.check_size(suite)
    if opts.replicates > 1 and suite.run.autotune == "point-cached":
        # each replicate pays its own tuning, as it pays its own compile (docs/GATING.md): replicates that
        # installed one stored tuning would hide the tuner's share of the variance between runs
        suite = dataclasses.replace(suite, run=dataclasses.replace(suite.run, autotune="point"))
    if not on_device:
        return SweepPlan(suite, opts)
    device = resolve_device(opts.device or suite.device)
    # Once, here: a bad name or a CUDA timer on CPU fails before any worker starts; the plan travels.
    timer = TimerPlan.resolve(opts.timer or suite.timing.timer, device, suite.timing)
    check_budgets(suite.points, device)  # likewise: a budget the device cannot grant is one SMBudgetError
    check_cache_folder()  # every worker writes its compiled kernels there: unusable is one error, not a row each
    if not opts.allow_oversized:
        check_sizes(suite.points, device)
    return SweepPlan(suite, opts, device, timer)


def check_backend_names(suite: Suite, options: RunOptions) -> None:
    """BackendError naming the first backend of the suite that no registry knows (an in-process run's own
    registry, when it has one)."""
    from qlabench.backends import REGISTRY

    registry: Mapping = REGISTRY
    if options.in_process and options.executor.registry is not None:
        registry = options.executor.registry
    unknown = sorted({p.backend for p in suite.points if p.backend not in registry})  # loads `module:function` names
    if unknown:
        raise BackendError(f"{suite.path}: unknown backend {unknown[0]!r} (known: {', '.join(registry)}; or a "
                           "function of FLA's calling convention as `module:function`, docs/PLUGINS.md)")


def resolve_device(requested: str | None) -> str:
    """The device a sweep runs on: `requested`, or cuda when available for None / auto; DeviceError if absent."""
    if requested in (None, "auto"):
        return "cuda" if torch.cuda.is_available() else "cpu"
    if requested.startswith("cuda") and not torch.cuda.is_available():
        raise DeviceError(f"device {requested!r} asked for, but CUDA is not available here")
    return requested


def device_memory_bytes(device: str) -> int | None:
    """Total memory of the device a sweep runs on (host RAM for cpu); None when it cannot be told."""
    try:
        if device.startswith("cuda"):
            idx = int(device.split(":", 1)[1]) if ":" in device else 0
            return int(torch.cuda.get_device_properties(idx).total_memory)
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, RuntimeError, AssertionError):
        return None


def check_sizes(points: Sequence[Point], device: str) -> None:
    """ConfigError before any worker starts when a point's tensors (inputs, outputs and gradients, see
    core/flops.py, and a serving point's state pool) alone exceed the device's memory; `allow_oversized`
    (--allow-oversized) skips this."""
    from qlabench.core.flops import memory_bytes

    total = device_memory_bytes(device)
    if total is None:
        return
    big = [(p, memory_bytes(p)) for p in points]
    big = [(p, b) for p, b in big if b > total]
    if big:
        p, b = max(big, key=lambda x: x[1])
        raise ConfigError(f"{len(big)} point(s) need more memory for their tensors than {device} has "
                          f"({total / 2**30:.1f} GiB), e.g. {p.label()}: {b / 2**30:.1f} GiB; drop them from the "
                          "suite, or pass --allow-oversized")


__all__ = ["Selection", "SweepPlan", "check_backend_names", "check_sizes", "device_memory_bytes", "plan_sweep",
           "resolve_device"]
