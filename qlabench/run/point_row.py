"""What a measured point's row is filled from, for single-device and distributed points alike: `refusal`
(whether a point can run here at all) and `PointRow` (the one place a row's measured columns are set), with
the column groups they fill (GPU state, kernels, sample statistics). run/point.py measures a point on one
device through them; run/distributed/point.py over the ranks of a launch.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Protocol

import torch

from qlabench.backends import Backend, cp_backend_names
from qlabench.core import bytes_model
from qlabench.core import sm_coverage as smutil
from qlabench.core.flops import peak_fractions, throughput
from qlabench.core.kernel_event import kernel_fields
from qlabench.core.launch import launch_bound
from qlabench.core.point import Point
from qlabench.core.result import CHECKED_TENSORS, UNAVAILABLE, ResultRow, Status, make_row
from qlabench.core.spec import Suite
from qlabench.measure.probes import clocks as gpustate
from qlabench.core.sm_budget import escape_problem
from qlabench.measure.probes.kineto import capture_call
from qlabench.measure.sm_budget import Grant
from qlabench.measure.timing import Summary, TimerPlan, summarize

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
    return traced_columns(fn, num_sms)[0]


def traced_columns(fn: Callable[[], object], num_sms: int,
                   grant: Grant | None = None) -> tuple[dict, str | None, str | None]:
    """`kernel_columns`, then under an SM budget what its escape check found (None: no partition) and why the
    call escaped the budget (None: it did not).

    Under a budget the coverage is of the SMs granted (the partition is what the kernels may fill), and the
    call is traced with a marker on the budget's stream: every kernel must have run on that stream."""
    partitioned = grant is not None and grant.partitioned
    trace = capture_call(fn, mark_stream=partitioned)
    sms = grant.granted if grant is not None else num_sms
    out = kernel_fields(trace.events)
    out.update(num_sms=num_sms, sm_coverage=smutil.sm_coverage(trace.events, sms),
               sm_coverage_waves=smutil.sm_coverage_waves(trace.events, sms))
    if not partitioned:
        return out, None, None
    if trace.stream is None and not trace.events:  # no kernel at all, not even the marker: nothing can be read
        return out, "unverified", (f"under the SM budget of {grant.budget} the profiler traced no kernel of the call, "
                                   "not even its marker: its kernels, provenance and escape cannot be checked "
                                   "(a CUPTI that does not trace green contexts?)")
    if trace.stream is None:
        return out, "unverified: the trace named no stream for the budget's marker kernel", None
    escaped = escape_problem(trace.events, trace.stream, grant.budget)
    return out, "escaped" if escaped else f"all {len(trace.events)} kernels on the budget's stream", escaped


def summary_columns(s: Summary) -> dict:
    """The sample statistics of a row (samples_ms itself and the timer are the caller's)."""
    return dict(n_samples=s.n, median_ms=s.median, mean_ms=s.mean, stdev_ms=s.stdev, min_ms=s.min, p20_ms=s.p20,
                p80_ms=s.p80, iqr_ms=s.iqr, rel_noise=s.rel_noise)


# -- the protocol both measuring paths share ------------------------------------------------------------

class PointSession(Protocol):
    """Where a point is measured: a worker's device (MeasureContext) or the ranks of a distributed launch
    (distributed/rank.Rank). Both decide whether a point can run with `refusal`, and fill its row through
    `PointRow`, so a column is set in one place for either."""

    suite: Suite
    run_id: str
    env: dict
    timer: TimerPlan
    groups_seen: set


def refusal(p: Point, backend: Backend | None, device: str, world: int | None = None) -> tuple[Status, str] | None:
    """Why `p` cannot be measured here, as (status, reason), or None when it can.

    world: the ranks of the distributed launch measuring `p`; None in a single-device worker."""
    if p.distributed and world is None:  # sweep.py hands these to distributed/launch.py
        return Status.SKIPPED, (f"distributed point ({p.cp_label}): runs only through `qlabench run sweep` "
                                "(torchrun launch), not in a single-device worker")
    if p.distributed:
        if p.cp_world_size != world:
            return Status.ERROR, f"point wants {p.cp_world_size} ranks, this launch has {world}"
        if backend is None or not backend.cp_modes:
            return Status.SKIPPED, (f"no context-parallel backend {p.backend!r} "
                                    f"(have: {', '.join(cp_backend_names())})")
        ok, why = backend.cp_available()
    elif backend is None:
        return Status.ERROR, f"unknown backend {p.backend!r}"
    else:
        ok, why = backend.available()
    if not ok:
        return Status.SKIPPED, f"{UNAVAILABLE}: {why}"
    ok, why = backend.supports(p, device)
    if not ok:
        return Status.SKIPPED, f"unsupported: {why}"
    return None


class PointRow:
    """The row of one point, filled as it is measured: the one place a row's measured columns are set, for
    single-device and distributed points alike. A new metric is a line here (or a `fields` entry)."""

    def __init__(self, p: Point, session: PointSession):
        self.p, self.session = p, session
        # the threads this process measures with (pinned on CPU: the suite's run.cpu_threads; resume matches it)
        self.fields: dict = {"cpu_threads": torch.get_num_threads()}
        self.details: dict = {}  # kept as the row's extra_json
        self.found_versions: dict = {}  # what the backend read of its call's library versions (Backend.found_versions)

    def backend(self, backend: Backend) -> None:
        """The versions its backend read of the libraries its call uses, for the row's record (core/versions.py)."""
        self.found_versions = backend.found_versions()

    def first_call(self, first_call_s: float, check_call_s: float = 0.0) -> None:
        """The first full call's wall time; the first point of a compile group in this process (or launch)
        also gets compile_s: its first calls carry the JIT compile and autotuning."""
        group = self.p.compile_group
        compile_s = check_call_s + first_call_s if group not in self.session.groups_seen else None
        self.session.groups_seen.add(group)
        self.fields.update(first_call_s=first_call_s, compile_s=compile_s)

    def checked(self, errors: dict[str, float], oracle: str, check_tokens: int) -> None:
        """Relative errors per checked tensor (err_*, None where not compared) and what they are against."""
        self.fields.update({f"err_{n}": errors.get(n) for n in CHECKED_TENSORS}, oracle=oracle,
                           check_tokens=check_tokens)

    def kernels(self, kernel_fields: dict, budget_check: str | None = None) -> None:
        """The traced call's kernel columns, and what the SM budget's escape check found (traced_columns)."""
        self.fields.update(kernel_fields)
        if budget_check is not None:
            self.details.setdefault("sm_budget", {})["escape_check"] = budget_check

    def budget(self, grant: Grant | None) -> None:
        """The SMs the point's green context was granted (null without a budget) and how it was made."""
        if grant is not None:
            self.fields["sm_granted"] = grant.granted
            self.details.update(grant.details())

    def memory(self, extra_mib: float | None, outside_mib: float | None) -> None:
        """The device memory a call takes beyond its inputs and outputs (core/device_memory.py)."""
        self.fields.update(extra_mem_mib=extra_mib, outside_mem_mib=outside_mib)

    def sampled(self, timer: str, samples_ms, sampling_s: float | None, noise_target_met: bool,
                regime: str = "burst") -> None:
        """The samples, their statistics, what ended the sampling, the regime they were taken in (the
        sustained one only where the timer ran its lead-in) and the throughput at the median."""
        rule = self.session.timer.rule
        s = summarize(samples_ms)
        self.fields.update(timer=timer, timing_regime=regime, samples_ms=tuple(samples_ms), sampling_s=sampling_s,
                           noise_target_met=noise_target_met, **summary_columns(s),
                           stopped_by=rule.stopped_by(len(samples_ms), noise_target_met),
                           below_min_samples=len(samples_ms) < rule.min_samples)
        self.fields["tflops"], self.fields["gbps"] = throughput(self.p, s.median)

    def launched(self, launch) -> None:
        """The eager and host time per call (measure/timing/launch.py) beside the timer's; the device time is the
        timer's median where it replayed a CUDA graph; launch-bound where the eager time exceeds it beyond noise."""
        device_ms = self.fields.get("median_ms") if self.fields.get("timer") == "graph" else None
        self.fields.update(device_ms=device_ms, eager_ms=launch.eager_ms, eager_rel_noise=launch.eager_rel_noise,
                           host_ms=launch.host_ms,
                           launch_bound=launch_bound(device_ms, launch.eager_ms, self.fields.get("rel_noise"),
                                                     launch.eager_rel_noise))
        self.details["eager_launch"] = launch.details()

    def calls_sensitivity(self, verdict, why_not: str | None = None) -> None:
        """`[timing] sensitivity`: the medians at each calls-per-sample count and whether they differ beyond the
        noise (core/timing_sensitivity.py), or, when none was measured, why not (extra_json)."""
        if verdict is None:
            self.details["calls_sensitivity"] = {"not_measured": why_not}
            return
        self.fields.update(calls_sensitivity_ms={str(n): ms for n, ms in sorted(verdict.medians_ms.items())},
                           calls_sensitive=verdict.sensitive)
        self.details["calls_sensitivity"] = verdict.as_details()

    def gpu_state(self, before: dict | None, after: dict | None, peaks=None) -> None:
        """NVML readings around the sampling and, when measured, the device's peaks and the fractions of them."""
        self.fields.update(state_columns(before, after))
        if peaks is not None:
            self.fields.update(peak_tflops=peaks.tflops, peak_gbps=peaks.gbps)
            self.fields["frac_peak_flops"], self.fields["frac_peak_bw"] = peak_fractions(
                self.fields["tflops"], self.fields["gbps"], peaks)

    def bandwidth(self, peaks, l2_resident: bool | None = None) -> str | None:
        """A serving step's compulsory bytes and, with the device's HBM peaks, the fraction of the bandwidth
        limit its median reaches (core/bytes_model.py). Returns why the row fails when that fraction is above
        1: no correct step moves its bytes faster than the memory can. Where the states one cycle of the timed
        loop touches fit in L2 (`l2_resident`, the backend's point_details), the step may read them from L2:
        a time above HBM's limit is then L2's, not a wrong kernel (its outputs were checked), and the row stays
        ok, marked so (the views show `L2-resident` in place of its share of HBM)."""
        b = bytes_model.step_bytes(self.p)
        self.fields.update(bytes_read=b.read, bytes_written=b.written, bytes_moved=b.moved)
        read, write = (peaks.read_tbs, peaks.write_tbs) if peaks is not None else (None, None)
        frac = bytes_model.bandwidth_fraction(b, self.fields.get("median_ms"), read, write)
        self.fields.update(hbm_peak_read_tbs=read, hbm_peak_write_tbs=write, hbm_frac=frac)
        if peaks is not None and (peaks.read_kernel or peaks.write_kernel):
            self.details["hbm_peaks"] = peaks.stream_record()  # which kernel set each peak, and the others' figures
        if frac is not None and frac > 1.0 and l2_resident:
            self.details["above_hbm_limit"] = (f"{frac:.0%} of the HBM limit with its states in L2: an L2 time, "
                                               "not HBM's (size the pool above L2 for an HBM figure)")
            return None
        if frac is not None and frac > 1.0:
            return (f"moves its {b.moved / 1e6:.1f} MB faster than the measured HBM peaks allow ({frac:.0%} of "
                    f"the limit at read {read:.2f} / write {write:.2f} TB/s): a skipped write, or states served "
                    "from L2 across steps (size the pool above L2)")
        return None

    def done(self, status: Status, reason: str | None = None, **fields) -> ResultRow:
        """The row with what has been filled so far (an `ok` row also carries its details as extra_json)."""
        s = self.session
        extra = {"extra_json": json.dumps(self.details, sort_keys=True)} if status is Status.OK else {}
        return make_row(self.p, run_id=s.run_id, suite=s.suite.name, env=s.env, status=status,
                        reason=reason[:500] if reason else None, found_versions=self.found_versions,
                        **{**self.fields, **extra, **fields})

