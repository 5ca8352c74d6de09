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
from pathlib import Path

import torch

from qlabench.core.errors import BackendError, ConfigError, DeviceError
from qlabench.core.point import Point
from qlabench.core.regimes import lead_in_ms
from qlabench.core.spec import Suite, load_suite
from qlabench.measure.caches import check_cache_folder
from qlabench.measure.sm_budget import check_budgets
from qlabench.measure.timing import TimerPlan
from qlabench.run.options import RunOptions, narrow_suite
from qlabench.run.warmup import WarmupPlan, plan_warmup

NO_WARMUP = WarmupPlan(0, 0, 0, frozenset(), "")  # a plan whose command asked for no warm-up


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
class Warmup:
    """What a command asks of the warm-up ahead of its sweep (`plan_warmup`): `want` None lets the host decide,
    `jobs` sets the processes, `cores` the host's (None: this one's); `remote`: the points run on other machines."""

    want: bool | None = None
    jobs: int | None = None
    cores: int | None = None
    remote: bool = False


@dataclass(frozen=True)
class Estimate:
    """A bound on the time the points' sampling takes: each point's `max_time_s` with the sustained regime's
    lead-in (`per_point_s`, of it `lead_in_s`), and with the minimum between points, all of them (`sampling_s`);
    checks, compiles and tuning come on top (what they cost when last measured is the evidence's to say)."""

    per_point_s: float
    lead_in_s: float
    sampling_s: float


@dataclass(frozen=True)
class SweepPlan:
    """What a command executes: the suite narrowed to its points, checked, with how they run.

    device, timer: resolved once for the whole run (the timer plan travels to every worker); None in a plan
    made without the device (a dry run's). check: whether the points are checked; resume_threads: the CPU
    thread count a resumed row must have been measured with (`resume_threads`). source: the points of the suite
    file, in its order (the warm-up processes read that file and take its points by index). warmup: the warm-up
    ahead of the sweep (none unless asked); estimate: the bound on the sampling's time.
    """

    suite: Suite
    options: RunOptions
    device: str | None = None
    timer: TimerPlan | None = None
    check: bool = True
    resume_threads: int | None = None
    source: tuple[Point, ...] = ()
    warmup: WarmupPlan = NO_WARMUP
    estimate: Estimate | None = None  # None only in a plan made by hand

    @property
    def on_device(self) -> bool:
        return self.device is not None


def plan_sweep(suite: Suite | str, options: RunOptions | None = None, selection: Selection = Selection(), *,
               on_device: bool = True, names: bool = True, warmup: Warmup | None = None,
               out: str | Path | None = None) -> SweepPlan:
    """The plan of `suite` (or of the suite of that name or path) under `options`, cut to `selection`; a
    QlabenchError (BackendError, ConfigError, DeviceError, TimerError, SMBudgetError, StoreError) for anything it
    cannot honour, before any work.

    names: check the suite's backend names against this code's registry; False where other code measures
    (`ab`'s variants: a git ref may declare a backend this checkout does not know).
    warmup: plan the warm-up ahead of the sweep (a `resume` into `out` warms only what is still to measure)."""
    opts = options or RunOptions()
    loaded = isinstance(suite, (str, Path))
    whole = load_suite(str(suite), max_points=opts.max_points) if loaded else suite
    if names:
        check_backend_names(whole, opts)  # the whole suite's: a typo is an error, not a sweep of error rows
    narrowed = narrow_suite(whole, **{f.name: getattr(selection, f.name) for f in dataclasses.fields(selection)})
    opts.check_size(narrowed)
    if opts.replicates > 1 and narrowed.run.autotune == "point-cached":
        # each replicate pays its own tuning, as it pays its own compile (docs/GATING.md): replicates that
        # installed one stored tuning would hide the tuner's share of the variance between runs
        narrowed = dataclasses.replace(narrowed, run=dataclasses.replace(narrowed.run, autotune="point"))
    check = narrowed.check.enabled if opts.check is None else opts.check
    requested = opts.device or narrowed.device
    device = resolve_device(requested) if on_device else None
    timer = None
    if device is not None:
        # Once, here: a bad name or a CUDA timer on CPU fails before any worker starts; the plan travels.
        timer = TimerPlan.resolve(opts.timer or narrowed.timing.timer, device, narrowed.timing)
        check_budgets(narrowed.points, device)  # likewise: a budget the device cannot grant is one SMBudgetError
        check_cache_folder()  # every worker writes its compiled kernels there: unusable is one error, not a row each
        if not opts.allow_oversized:
            check_sizes(narrowed.points, device)
    threads = resume_threads(narrowed, device, torch.get_num_threads()) if device is not None else None
    source, warm = whole.points, NO_WARMUP
    if warmup is not None:
        # planned for the device asked for, present or not (a dry run on a host without it); the sweep refuses it
        where = device or (resolve_device(requested) if requested in (None, "auto") else requested)
        todo = still_to_run(narrowed, out, opts, where) if out is not None else narrowed.points
        # the warm-up processes read the suite's file: the points of this plan by their index there; a suite
        # given as it is may hold other points than its file's
        if not loaded and Path(str(narrowed.path)).is_file():
            source = load_suite(str(narrowed.path), max_points=opts.max_points).points
        warm = plan_warmup(todo, source, str(narrowed.path), where, warmup.want, warmup.jobs, warmup.cores,
                           elsewhere=opts.in_process or warmup.remote)
    estimate = _estimate(narrowed)
    return SweepPlan(narrowed, opts, device, timer, check, threads, source, warm, estimate)


def still_to_run(suite: Suite, out_root: str | Path, options: RunOptions, device: str | None = None) -> list[Point]:
    """The points a sweep of `suite` into `out_root` under `options` measures: all of them, or with `resume` those
    no row there holds ok in this environment yet (what a warm-up ahead of a resumed sweep needs compiled); all of
    them too where the device (`device`, else the options' or the suite's) is not here: what was done cannot be
    told."""
    from qlabench.measure import env
    from qlabench.store import resume

    if not options.resume:
        return list(suite.points)
    try:
        device = resolve_device(device or options.device or suite.device)
    except DeviceError:
        return list(suite.points)
    check = suite.check.enabled if options.check is None else options.check
    threads = resume_threads(suite, device, torch.get_num_threads())
    done = resume.done_keys(out_root, suite.name, env.capture(device), checked=check, cpu_threads=threads,
                            reference=suite.check.reference, regime=suite.timing.regime)
    return resume.remaining(suite.points, done)


def _estimate(suite: Suite) -> Estimate:
    """The bound on the sampling time of the suite's points (no compile, no check)."""
    lead_in = lead_in_ms(suite.timing.regime, suite.timing.sustained_ms) / 1e3
    per_point = suite.timing.max_time_s + lead_in
    return Estimate(per_point, lead_in, (per_point + suite.timing.min_time_s) * len(suite.points))


def resume_threads(suite: Suite, device: str, default_threads: int) -> int | None:
    """The CPU thread count a resumed row must have been measured with (rows record `cpu_threads`): on CPU
    a time at 1 thread is no answer for 4, so a resume with another --cpu-threads measures again. None on
    CUDA, where the kernels, not torch's CPU threads, are timed."""
    if torch.device(device).type != "cpu":
        return None
    return suite.run.cpu_threads or default_threads  # 0: torch's default in a fresh process, as here


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


__all__ = ["Estimate", "Selection", "SweepPlan", "Warmup", "check_backend_names", "check_sizes",
           "device_memory_bytes", "plan_sweep", "resolve_device", "resume_threads",
           "still_to_run"]
