"""Measuring one point: availability, support, correctness against the oracle, then timing.

`run_point` turns one (point, backend, mode) into exactly one ResultRow, whatever happens to it. It is
what a worker executes; orchestration (ordering, progress, writing) lives in sweep.py. The pieces a
distributed point's row is made of as well (run/distributed/) are public here: `reference_outputs`,
`error_columns`, `kernel_columns`, `state_columns`, `summary_columns`, `error_line`.
"""

from __future__ import annotations

import json
import os
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field

import torch

from qlabench.measure import caches as cache
from qlabench.backends import ORACLE, Backend
from qlabench.backends.reference.fp64_full import fp64_errors
from qlabench.measure.correctness import compare
from qlabench.measure.inputs import make_inputs, reduced_seqlens
from qlabench.measure.oracle_cache import OracleCache, oracle_key
from qlabench.core.point import Point
from qlabench.measure.probes import clocks as gpustate
from qlabench.measure.probes import ncu
from qlabench.core import sm_coverage as smutil
from qlabench.core.flops import peak_fractions, throughput
from qlabench.measure.probes.peaks import measure_peaks
from qlabench.core.kernel_event import kernel_fields
from qlabench.measure.probes.kineto import capture_kernels
from qlabench.measure.probes.autotune import autotune_choices
from qlabench.core.result import CHECKED_TENSORS, ResultRow, Status, make_row
from qlabench.core.spec import Suite
from qlabench.measure.timing import StopRule, Summary, make_timer, summarize

# At full size the recurrence is too slow; the chunked torch form in float32 is the reference there.
FULL_SIZE_REFERENCE = "naive-chunk"
# `[check] reference = "fp64-full"`: the float64 chunked form at the point's real size instead of the oracle.
FP64_REFERENCE = "fp64-full"


STATE_COLUMNS = ("sm_clock_mhz", "mem_clock_mhz", "temperature_c", "power_w")


def state_columns(before: dict | None, after: dict | None) -> dict:
    """NVML readings around the sampling, in the row's columns (all None without NVML)."""
    out = {f"{k}_{tag}": (snap or {}).get(k) for k in STATE_COLUMNS
           for tag, snap in (("before", before), ("after", after))}
    out["throttle_reasons_after"] = tuple((after or {}).get("throttle_reasons") or ())
    out["clock_drop"] = gpustate.clock_drop(before, after)
    out["clock_drop_reason"] = gpustate.drop_reason(before, after)
    return out


def kernel_columns(fn: Callable[[], object], num_sms: int) -> dict:
    """One call of `fn` under the profiler: its kernels and their SM coverage, in the row's columns."""
    events = capture_kernels(fn)
    out = kernel_fields(events)
    out.update(num_sms=num_sms, sm_coverage=smutil.sm_coverage(events, num_sms),
               sm_coverage_waves=smutil.sm_coverage_waves(events, num_sms))
    return out


def summary_columns(s: Summary) -> dict:
    """The sample statistics of a row (samples_ms itself and the timer are the caller's)."""
    return dict(n_samples=s.n, median_ms=s.median, mean_ms=s.mean, stdev_ms=s.stdev, min_ms=s.min, p20_ms=s.p20,
                p80_ms=s.p80, iqr_ms=s.iqr, rel_noise=s.rel_noise)


def error_columns(errors: dict[str, float]) -> dict:
    """Relative errors per checked tensor, in the row's err_* columns (None where not compared)."""
    return {f"err_{n}": errors.get(n) for n in CHECKED_TENSORS}


def error_line(e: BaseException) -> str:
    """The exception's last line ("RuntimeError: ..."): what a row's reason records."""
    return traceback.format_exception_only(type(e), e)[-1].strip()


def reference_outputs(reference: Backend, mode: str, inp, *, fp32: bool, point: Point | None = None) -> dict:
    """A full-size reference's outputs for a point of `mode` (fwd; otherwise fwd_bwd, the gradients too).

    `fp32`: on float32 copies of the inputs. The reference's environment is set first (it may be a
    library backend with dispatch switches); restoring the checked backend's is the caller's. With
    `point`, the reference is prepared for that point's problem (`Backend.prepare_point`).
    """
    if fp32:
        inp = inp.to(torch.float32)
    os.environ.update(reference.env)
    ref_mode = "fwd" if mode == "fwd" else "fwd_bwd"
    if point is None:
        return reference.prepare(ref_mode, inp)()
    dtype = "float32" if fp32 and point.dtype != "float64" else point.dtype
    ref_point = point.with_(backend=reference.name, mode=ref_mode, dtype=dtype)
    return reference.prepare_point(ref_point, inp)()


@dataclass
class MeasureContext:
    """What every point of one run shares: the suite, device, environment and caches."""

    suite: Suite
    device: str
    env: dict
    run_id: str
    timer_name: str
    registry: dict[str, Backend]
    check: bool
    oracle_cache: OracleCache = field(default_factory=OracleCache)
    groups_seen: set = field(default_factory=set)
    num_sms: int | None = None  # filled on CUDA
    device_index: int | None = None  # filled on CUDA
    _peaks: object = None

    def __post_init__(self) -> None:
        # Before any backend imports its library: some read their cache location at import.
        cache.configure()
        dev = torch.device(self.device)
        if dev.type == "cpu":
            pin_cpu_threads(self.suite.run.cpu_threads)
        if dev.type == "cuda":
            self.device_index = dev.index if dev.index is not None else torch.cuda.current_device()
            if self.num_sms is None:
                self.num_sms = torch.cuda.get_device_properties(self.device_index).multi_processor_count

    def peaks(self):
        """The device's measured matmul and copy peaks, measured once per process (~1 s)."""
        if self._peaks is None:
            self._peaks = measure_peaks(self.device) or False
        return self._peaks or None


def pin_cpu_threads(n: int) -> None:
    """Pin torch's intra-op threads to `n`; 0 leaves torch's default (one per core).

    On a small, shared CPU box torch's default makes threads spin against each other and against other
    jobs: samples then spread by several times their median (docs/BENCHMARKS.md). Only the intra-op
    count, which can be set back (run_sweep gives an in-process caller its count back afterwards).
    """
    if n > 0:
        torch.set_num_threads(n)


def _row(p: Point, ctx: MeasureContext, status: Status, reason: str | None = None, **fields) -> ResultRow:
    fields.setdefault("cpu_threads", torch.get_num_threads())
    return make_row(p, run_id=ctx.run_id, suite=ctx.suite.name, env=ctx.env, status=status, reason=reason, **fields)


def _oracle_outputs(p: Point, seqlens: tuple[int, ...], ctx: MeasureContext, oracle: str = ORACLE) -> dict:
    """fp32 recurrence outputs (and, unless the point is forward only, gradients) for the reduced check
    problem; shared across backends, modes and full lengths that reduce to the same problem
    (oracle_cache.py). `oracle`: another reference backend (a layer backend's), keyed apart with the
    model and TP its problem also depends on."""
    cdt = "float64" if p.dtype == "float64" else "float32"
    grads = p.mode != "fwd"

    def compute() -> dict:
        ref = p.with_(backend=oracle, dtype=cdt, mode="fwd_bwd" if grads else "fwd")
        return ctx.registry[oracle].prepare_point(ref, make_inputs(ref, ctx.device, seqlens=seqlens))()

    key = oracle_key(p, seqlens, cdt)
    if oracle != ORACLE:
        key = (oracle, p.model, p.tp) + key
    return ctx.oracle_cache.get(key, compute, grads=grads)


def check_correctness(p: Point, backend: Backend, ctx: MeasureContext) -> tuple[Status, str | None, dict, float]:
    """Compare the backend with the fp32 oracle on a reduced problem; also returns that call's wall time."""
    seqlens = reduced_seqlens(p, ctx.suite.check.oracle_max_tokens)
    fn = backend.prepare_point(p, make_inputs(p, ctx.device, seqlens=seqlens))
    sync = _sync(ctx.device)
    sync()
    t = time.perf_counter()
    got = fn()
    sync()
    call_s = time.perf_counter() - t
    oracle = backend.oracle or ORACLE
    ref = _oracle_outputs(p, seqlens, ctx, oracle)
    errors, failure = compare(got, ref, p.dtype)
    fields = error_columns(errors)
    fields["oracle"] = f"{oracle} {'float64' if p.dtype == 'float64' else 'float32'} @{sum(seqlens)} tokens"
    fields["check_tokens"] = sum(seqlens)
    if failure:
        return Status.INCORRECT, failure, fields, call_s
    return Status.OK, None, fields, call_s


def check_full_size(p: Point, got: dict, inp, ctx: MeasureContext, fields: dict,
                    reference: str = FULL_SIZE_REFERENCE) -> str | None:
    """Compare full-size outputs with naive-chunk (or `reference`) in fp32 (where the recurrence would be
    too slow).

    Updates `fields` with the worse error per tensor and returns the failure reason, if any.
    """
    ref = reference_outputs(ctx.registry[reference], p.mode, inp, fp32=True,
                            point=None if reference == FULL_SIZE_REFERENCE else p)
    errors, failure = compare(got, ref, p.dtype)
    for n, e in errors.items():
        if n not in CHECKED_TENSORS:  # checked (a failure says so) but with no err_ column, e.g. a layer's conv_state
            continue
        prev = fields.get(f"err_{n}")
        fields[f"err_{n}"] = e if prev is None or not (e <= prev) else prev
    fields["oracle"] = (fields.get("oracle") or "") + f"; {reference} float32 @{p.total_tokens} tokens"
    return f"full size vs {reference}: {failure}" if failure else None


def check_fp64_full(p: Point, got: dict, inp, fields: dict) -> str | None:
    """Compare full-size outputs with the float64 reference (`[check] reference = "fp64-full"`).

    Fills `fields` with the errors, the reference's label and the tokens checked; returns the failure
    reason, if any."""
    errors, failure = fp64_errors(got, inp, grads=p.mode != "fwd", dtype=p.dtype)
    fields.update(error_columns(errors))
    fields["oracle"] = f"{FP64_REFERENCE} float64 @{p.total_tokens} tokens"
    fields["check_tokens"] = p.total_tokens
    return f"vs {FP64_REFERENCE}: {failure}" if failure else None


def _sync(device: str) -> Callable[[], None]:
    return torch.cuda.synchronize if torch.device(device).type == "cuda" else (lambda: None)


def _timed_call(fn, sync) -> tuple[object, float]:
    sync()
    t = time.perf_counter()
    out = fn()
    sync()
    return out, time.perf_counter() - t


class _Lap:
    """Adds the wall time since the last lap (or restart) to `phases[name]`."""

    def __init__(self, phases: dict[str, float]):
        self.phases = phases
        self.t = time.perf_counter()

    def restart(self) -> None:
        self.t = time.perf_counter()

    def __call__(self, name: str) -> None:
        now = time.perf_counter()
        self.phases[name] = self.phases.get(name, 0.0) + now - self.t
        self.t = now


def run_point(p: Point, ctx: MeasureContext) -> ResultRow:
    if p.distributed:  # never measured as a single-device point: sweep.py hands these to distributed/launch.py
        return _row(p, ctx, Status.SKIPPED, f"distributed point ({p.cp_label}): runs only through "
                    "`qlabench run sweep` (torchrun launch), not in a single-device worker")
    backend = ctx.registry.get(p.backend)
    if backend is None:
        return _row(p, ctx, Status.ERROR, f"unknown backend {p.backend!r}")
    ok, why = backend.available()
    if not ok:
        return _row(p, ctx, Status.SKIPPED, f"backend unavailable: {why}")
    ok, why = backend.supports(p, ctx.device)
    if not ok:
        return _row(p, ctx, Status.SKIPPED, f"unsupported: {why}")
    on_cuda = torch.device(ctx.device).type == "cuda"
    fields: dict = {}
    check_call_s = 0.0
    # Wall seconds of each phase of this point, kept in the phases_s column: what a point costs
    # beyond its sampling (selfbench cost) and where to cut it.
    phases: dict[str, float] = {}
    lap = _Lap(phases)
    fp64_full = ctx.check and ctx.suite.check.reference == FP64_REFERENCE
    try:
        if ctx.check and not fp64_full:
            status, reason, fields, check_call_s = check_correctness(p, backend, ctx)
            lap("check")
            if status is not Status.OK:
                return _row(p, ctx, status, reason, **fields)
        inp = make_inputs(p, ctx.device)
        fn = backend.prepare_point(p, inp)
        sync = _sync(ctx.device)
        lap("inputs")
        got, first_call_s = _timed_call(fn, sync)
        lap("first_call")
        if fp64_full:
            failure = check_fp64_full(p, got, inp, fields)
            lap("fp64_check")
            if failure:  # with the check's cost: what the float64 reference takes at this size
                return _row(p, ctx, Status.INCORRECT, failure, **fields,
                            phases_s={k: round(v, 4) for k, v in phases.items()})
        full_ref = backend.full_size_reference or FULL_SIZE_REFERENCE
        if ctx.check and ctx.suite.check.full_size and p.backend != full_ref:
            failure = check_full_size(p, got, inp, ctx, fields, full_ref)
            lap("full_size_check")
            if failure:
                return _row(p, ctx, Status.INCORRECT, failure, **fields)
        del got
        group = p.compile_group
        # The group's first calls carry the JIT compile and autotuning (check call + first full call).
        compile_s = check_call_s + first_call_s if group not in ctx.groups_seen else None
        ctx.groups_seen.add(group)
        if on_cuda:
            fields.update(kernel_columns(fn, ctx.num_sms), autotune=autotune_choices(fn))
            bad = backend.provenance_error(list(fields["kernels"]))
            lap("kernel_capture")
            if bad:
                return _row(p, ctx, Status.ERROR, bad, first_call_s=first_call_s, compile_s=compile_s, **fields)
            before = gpustate.snapshot(ctx.device_index)
        lap.restart()  # sampling_s is timed on its own (and is its own column)
        t_sampling = time.perf_counter()
        m = make_timer(ctx.timer_name, ctx.device, ctx.suite.timing).measure(fn)
        fields["sampling_s"] = time.perf_counter() - t_sampling
        rule = StopRule.from_spec(ctx.suite.timing)
        fields["stopped_by"] = rule.stopped_by(len(m.samples_ms), m.noise_target_met)
        fields["below_min_samples"] = len(m.samples_ms) < rule.min_samples
        lap.restart()
        s = summarize(m.samples_ms)
        fields["tflops"], fields["gbps"] = throughput(p, s.median)
        if on_cuda:
            fields.update(state_columns(before, gpustate.snapshot(ctx.device_index)))
            peaks = ctx.peaks()
            if peaks is not None:
                fields.update(peak_tflops=peaks.tflops, peak_gbps=peaks.gbps)
                fields["frac_peak_flops"], fields["frac_peak_bw"] = peak_fractions(fields["tflops"], fields["gbps"],
                                                                                   peaks)
        lap("state_and_peaks")
        details = dict(m.details)
        details.update(backend.point_details(
            fn, tuple(fields.get("kernels", ())), tuple(fields.get("kernel_dur_us", ())), s.median,
            lambda g: summarize(make_timer(ctx.timer_name, ctx.device, ctx.suite.timing).measure(g).samples_ms).median))
        if on_cuda and ctx.suite.profile.ncu:
            prof, why = ncu.profile_point(p, device=ctx.device, env=backend.env,
                                          timeout_s=ctx.suite.profile.ncu_timeout_s)
            fields["sm_active_pct"] = prof.sm_active_pct if prof else None
            details["ncu"] = prof.as_dict() if prof else {"skipped": why}
            lap("ncu")
        fields["phases_s"] = {k: round(v, 4) for k, v in phases.items()}
        return _row(
            p, ctx, Status.OK, None, **fields, timer=m.timer, samples_ms=m.samples_ms, **summary_columns(s),
            noise_target_met=m.noise_target_met, first_call_s=first_call_s, compile_s=compile_s,
            extra_json=json.dumps(details, sort_keys=True),
        )
    except Exception as e:  # one bad point must not end the sweep
        return _row(p, ctx, Status.ERROR, error_line(e)[:500], **fields)
    finally:
        if on_cuda:
            torch.cuda.empty_cache()
