"""Measuring one point: availability, support, correctness against the oracle, then timing.

`run_point` turns one (point, backend, mode) into exactly one ResultRow, whatever happens to it. It is
what a worker executes; orchestration (ordering, progress, writing) lives in sweep.py. A distributed
point (run/distributed/point.py) is measured through the same protocol: `refusal` says whether a point
can run at all, and `PointRow` is the one place a row's measured columns are filled, for both. The pieces
the ranks reuse are public: `reference_outputs`, `kernel_columns`, `error_line`.
"""

from __future__ import annotations

import contextlib
import time
import traceback
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field

import torch

from qlabench.measure import caches as cache
from qlabench.backends import ORACLE, Backend
from qlabench.backends.decode import untouched_pool
from qlabench.backends.reference.fp64_full import refusal as fp64_refusal
from qlabench.core.flops import memory_bytes
from qlabench.measure.inputs import make_inputs
from qlabench.measure.oracle_cache import OracleCache
from qlabench.core.point import Point
from qlabench.measure.probes import clocks as gpustate
from qlabench.measure.probes import ncu
from qlabench.measure.probes.peaks import measure_peaks
from qlabench.measure.probes.autotune import autotune_choices
from qlabench.measure.probes.device_memory import OutsideMemory, extra_memory
from qlabench.measure import sm_budget
from qlabench.core.errors import SMBudgetError
from qlabench.core.sm_budget import context_problem
from qlabench.measure.tuning_store import point_key, point_tuning
from qlabench.core.result import ResultRow, Status
from qlabench.core.spec import Suite
from qlabench.measure.timing import TimerPlan, summarize
from qlabench.measure.timing.launch import from_wall, measure_launch
from qlabench.measure.timing.sensitivity import measure_calls_sensitivity
# the checks live in checks.py; reference_outputs and check_* are re-exported for the ranks and the tests
from qlabench.run.checks import (FP64_REFERENCE, FULL_SIZE_REFERENCE, _sync, _timed_call,  # noqa: F401
                                 check_correctness, check_fp64_full, check_full_size, check_timed_path,
                                 reference_outputs, untouched_failure)
# PointRow and refusal are also imported from here by the distributed path and the tests
from qlabench.run.point_row import PointRow, kernel_columns, refusal, traced_columns  # noqa: F401
from qlabench.run.phases import Lap



def error_line(e: BaseException) -> str:
    """The exception's last line ("RuntimeError: ..."): what a row's reason records."""
    return traceback.format_exception_only(type(e), e)[-1].strip()


@dataclass
class MeasureContext:
    """What every point of one worker shares: the suite, device, environment, timer plan and caches.

    One of the two places a point is measured (the `PointSession`s); the other is a distributed rank
    (run/distributed/rank.py)."""

    suite: Suite
    device: str
    env: dict
    run_id: str
    timer: TimerPlan
    registry: Mapping[str, Backend]
    check: bool
    oracle_cache: OracleCache = field(default_factory=OracleCache)
    groups_seen: set = field(default_factory=set)
    check_tunings: dict = field(default_factory=dict)  # the correctness checks' autotune choices (check_choices)
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

    def budget(self, p: Point) -> sm_budget.Grant | None:
        """The green context `p` is held to (measure/sm_budget.py), or None for the whole GPU."""
        if p.sm_budget is None:
            return None
        if self.device_index is None:
            raise SMBudgetError(f"sm_budget {p.sm_budget} needs a CUDA device, not {self.device}")
        return sm_budget.grant(p.sm_budget, self.device_index)

    def peaks(self):
        """The device's measured matmul and copy peaks, measured once per process (~1 s), on the whole device
        whatever budget the point asking is held to."""
        if self._peaks is None:
            try:
                with sm_budget.whole_device():
                    self._peaks = measure_peaks(self.device) or False
            except Exception as e:  # a failed probe leaves the fractions null; it must not fail every point
                print(f"qlabench: measuring the device's peaks failed, fractions of peak left null: {error_line(e)}",
                      flush=True)
                self._peaks = False
        return self._peaks or None


def pin_cpu_threads(n: int) -> None:
    """Pin torch's intra-op threads to `n`; 0 leaves torch's default (one per core).

    On a small, shared CPU box torch's default makes threads spin against each other and against other
    jobs: samples then spread by several times their median (docs/BENCHMARKS.md). Only the intra-op
    count, which can be set back (run_sweep gives an in-process caller its count back afterwards).
    """
    if n > 0:
        torch.set_num_threads(n)


@contextmanager
def tune_for_point(backend: Backend, ctx: MeasureContext, row: PointRow) -> Iterator[None]:
    """Around the point's first call: make an autotuning backend tune for this point, or install the choices a
    run before tuned for it (`[run] autotune`, measure/tuning_store.py), and say in the row where its configs
    came from (`autotune_tuned_for`): "point", "point-cached" or "process" (the library's own choice, made on
    whatever shape of these heads the worker met first; the time then depends on the sweep's order)."""
    with point_tuning(backend.autotune_modules, ctx.suite.run.autotune,
                      lambda: point_key(row.p, ctx.env, ctx.device)) as tuning:
        row.details.update(tuning)
        yield
    row.details.update(tuning)


def at_size_plan(p: Point, backend: Backend, ctx: MeasureContext, fp64_full: bool) -> tuple[str | None, bool]:
    """How a point is checked at its own size: the full-size reference its first call's outputs are compared
    with (None: the oracle's own problem is the point's, float64 is asked for, or checks are off), and whether
    the reduced oracle check runs before it.

    The reduced check stays where the full-size reference cannot vouch for the backend: the backend is that
    reference itself (it is then compared with the oracle at full size), or a layer with its own oracle."""
    if not ctx.check or fp64_full:
        return None, ctx.check and not fp64_full
    small = p.is_serving or p.total_tokens <= ctx.suite.check.oracle_max_tokens
    if small or not ctx.suite.check.full_size:
        return None, True
    ref = backend.full_size_reference or FULL_SIZE_REFERENCE
    if p.backend == ref:  # the chunked reference checked against the recurrence (its own oracle) on the whole problem
        return backend.oracle or ORACLE, False
    return ref, bool(backend.oracle)


def run_point(p: Point, ctx: MeasureContext) -> ResultRow:
    """Measure one point on the worker's device: exactly one row, whatever happens to it."""
    backend = ctx.registry.get(p.backend)
    row = PointRow(p, ctx)
    if refused := refusal(p, backend, ctx.device):
        return row.done(*refused)
    row.backend(backend)
    on_cuda = torch.device(ctx.device).type == "cuda"
    check_call_s = 0.0
    # Wall seconds of each phase of this point, kept in the phases_s column: what a point costs
    # beyond its sampling (selfbench cost) and where to cut it.
    phases: dict[str, float] = {}
    lap = Lap(phases)
    fp64_full = ctx.check and ctx.suite.check.reference == FP64_REFERENCE
    held = contextlib.ExitStack()  # the point's SM budget: everything below runs on its green stream
    try:
        grant = ctx.budget(p)
        held.enter_context(sm_budget.held_to(grant))
        row.budget(grant)
        # where the full-size reference will see the timed call, the reduced oracle check (a compile at a shape
        # the timed call never uses) is left out: the check is at the timed shape (at_size_plan)
        full_ref, reduced_check = at_size_plan(p, backend, ctx, fp64_full)
        # a size-dependent path is traced in the check when nothing else will see the point at full size
        trace_path = on_cuda and full_ref is None and not p.is_serving
        # the float64 reference's memory, estimated before anything runs: over its budget is a refusal, not
        # an allocation error after the backend's run
        if fp64_full and (why := fp64_refusal(p, torch.device(ctx.device), reserve=memory_bytes(p))):
            return row.done(Status.SKIPPED, why)
        if reduced_check:
            failure, check_call_s = check_correctness(p, backend, ctx, row, trace_path=trace_path)
            row.fields["checked_at_size"] = row.fields["check_tokens"] >= p.total_tokens
            lap("check")
            if failure:
                return row.done(Status.INCORRECT, failure)
        inp = make_inputs(p, ctx.device)
        # taken before the call: a step may write the pool it was handed
        untouched = untouched_pool(inp) if fp64_full and p.is_serving else None
        fn = backend.prepare_point(p, inp)
        if fp64_full and untouched is None:  # a prefill into a pool carries its own (flashinfer_pool.py)
            untouched = getattr(fn, "untouched", None)
        sync = _sync(ctx.device)
        lap("inputs")
        outside = OutsideMemory(ctx.device_index) if on_cuda else None
        context_before = sm_budget.current_context() if grant else None
        with tune_for_point(backend, ctx, row):  # an autotuning library tunes here, for this point
            got, first_call_s = _timed_call(fn, sync)
        outside_mib = outside.mib() if outside else None
        lap("first_call")
        if grant and (escaped := context_problem(context_before, sm_budget.current_context(), grant.budget)):
            return row.done(Status.ERROR, escaped)
        if ctx.check and not fp64_full and (failure := untouched_failure(fn, got, p)):
            return row.done(Status.INCORRECT, f"full size: {failure}")
        if fp64_full:
            failure = check_fp64_full(p, got, inp, row.fields, untouched)
            del untouched
            lap("fp64_check")
            if failure:  # with the check's cost: what the float64 reference takes at this size
                row.fields["phases_s"] = {k: round(v, 4) for k, v in phases.items()}
                return row.done(Status.INCORRECT, failure)
            row.fields["checked_at_size"] = True
        if full_ref is not None:
            failure = check_full_size(p, got, inp, ctx, row.fields, full_ref)
            lap("full_size_check")
            if failure:
                return row.done(Status.INCORRECT, failure)
            row.fields["checked_at_size"] = True
        row.first_call(first_call_s, check_call_s)
        if on_cuda:
            columns, budget_check, escaped = traced_columns(fn, ctx.num_sms, grant)
            row.kernels(columns, budget_check)
            row.fields["autotune"] = autotune_choices(fn)
            bad = escaped or backend.provenance_error(list(row.fields["kernels"]))
            lap("kernel_capture")
            if bad:
                return row.done(Status.ERROR, bad)
            row.details["call_path"] = backend.call_path(list(row.fields["kernels"]))
            failure = check_timed_path(p, backend, ctx, row, got, inp,
                                       backend.full_size_reference or FULL_SIZE_REFERENCE)
            lap("timed_path_check")
            if failure:
                return row.done(Status.INCORRECT, failure)
        del got
        if on_cuda:  # after the checks, which hold the first call's outputs against its inputs
            row.memory(extra_memory(fn, inp, ctx.device_index), outside_mib)
            lap("device_memory")
            before = gpustate.snapshot(ctx.device_index)
        lap.restart()  # sampling_s is timed on its own (and is its own column)
        t_sampling = time.perf_counter()
        plan, timer_details = ctx.timer.for_backend(backend.name, backend.graph_capturable)
        m = plan.make(ctx.device).measure(fn)
        row.sampled(m.timer, m.samples_ms, time.perf_counter() - t_sampling, m.noise_target_met, plan.regime)
        lap.restart()
        # the time a caller launching each call pays, beside the timer's (core/launch.py)
        row.launched(measure_launch(fn) if on_cuda else from_wall(m.samples_ms))
        lap("eager_launch")
        if on_cuda:
            row.gpu_state(before, gpustate.snapshot(ctx.device_index), ctx.peaks())
        lap("state_and_peaks")
        if ctx.suite.timing.sensitivity:  # after the clocks were read: they describe the row's own sampling
            t = ctx.suite.timing
            row.calls_sensitivity(*measure_calls_sensitivity(plan, ctx.device, fn, m, t.sensitivity_calls))
            lap("calls_sensitivity")
        row.details.update({**m.details, **timer_details})
        row.details.update(backend.point_details(
            fn, tuple(row.fields.get("kernels", ())), tuple(row.fields.get("kernel_dur_us", ())),
            row.fields["median_ms"], lambda g: summarize(plan.make(ctx.device).measure(g).samples_ms).median))
        # after point_details: whether the step's states fit in L2 decides what a time above HBM's limit means
        if p.is_serving and (over := row.bandwidth(ctx.peaks() if on_cuda else None, row.details.get("l2_resident"))):
            return row.done(Status.INCORRECT, over)
        if on_cuda and ctx.suite.profile.ncu and grant:
            row.details["ncu"] = {"skipped": "Nsight Compute runs the point in its own process, on the whole GPU"}
        elif on_cuda and ctx.suite.profile.ncu:
            prof, why = ncu.profile_point(p, device=ctx.device, env=backend.env,
                                          timeout_s=ctx.suite.profile.ncu_timeout_s)
            row.fields["sm_active_pct"] = prof.sm_active_pct if prof else None
            row.details["ncu"] = prof.as_dict() if prof else {"skipped": why}
            lap("ncu")
        row.fields["phases_s"] = {k: round(v, 4) for k, v in phases.items()}
        return row.done(Status.OK)
    except Exception as e:  # one bad point must not end the sweep
        return row.done(Status.ERROR, error_line(e))
    finally:
        held.close()
        if on_cuda:
            torch.cuda.empty_cache()
