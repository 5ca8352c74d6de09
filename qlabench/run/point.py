"""Measuring one point: availability, support, correctness against the oracle, then timing.

`run_point` turns one (point, backend, mode) into exactly one ResultRow, whatever happens to it. It is
what a worker executes; orchestration (ordering, progress, writing) lives in sweep.py. A distributed
point (run/distributed/point.py) is measured through the same protocol: `refusal` says whether a point
can run at all, and `PointRow` is the one place a row's measured columns are filled, for both. The pieces
the ranks reuse are public: `reference_outputs`, `kernel_columns`, `error_line`.
"""

from __future__ import annotations

import contextlib
import os
import time
import traceback
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field

import torch

from qlabench.measure import caches as cache
from qlabench.backends import ORACLE, Backend
from qlabench.backends.decode import untouched_pool
from qlabench.backends.reference.fp64_full import fp64_errors, refusal as fp64_refusal
from qlabench.core.flops import memory_bytes
from qlabench.measure.correctness import compare
from qlabench.measure.inputs import make_inputs, reduced_seqlens
from qlabench.measure.oracle_cache import OracleCache, oracle_key
from qlabench.core.modes import mode_of
from qlabench.core.point import Point
from qlabench.measure.probes import clocks as gpustate
from qlabench.measure.probes import ncu
from qlabench.measure.probes.peaks import measure_peaks
from qlabench.measure.probes.autotune import autotune_choices, check_choices
from qlabench.measure.probes.kineto import capture_kernels
from qlabench.measure.probes.device_memory import OutsideMemory, extra_memory
from qlabench.measure import sm_budget
from qlabench.core.errors import SMBudgetError
from qlabench.core.sm_budget import context_problem
from qlabench.measure.tuning_store import point_key, point_tuning
from qlabench.core.result import CHECKED_TENSORS, ResultRow, Status
from qlabench.core.spec import Suite
from qlabench.measure.timing import TimerPlan, summarize
from qlabench.measure.timing.sensitivity import measure_calls_sensitivity
# PointRow and refusal are also imported from here by the distributed path and the tests
from qlabench.run.point_row import PointRow, kernel_columns, refusal, traced_columns
from qlabench.run.phases import Lap

# At full size the recurrence is too slow; the chunked torch form in float32 is the reference there.
FULL_SIZE_REFERENCE = "naive-chunk"
# `[check] reference = "fp64-full"`: the float64 chunked form at the point's real size instead of the oracle.
FP64_REFERENCE = "fp64-full"


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
    ref_mode = "fwd_bwd" if mode_of(mode).backward else "fwd"
    if point is None:
        return reference.prepare(ref_mode, inp)()
    dtype = "float32" if fp32 and point.dtype != "float64" else point.dtype
    ref_point = point.with_(backend=reference.name, mode=ref_mode, dtype=dtype)
    return reference.prepare_point(ref_point, inp)()


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


def _oracle_outputs(p: Point, seqlens: tuple[int, ...], ctx: MeasureContext, oracle: str = ORACLE) -> dict:
    """fp32 recurrence outputs (and, unless the point is forward only, gradients) for the reduced check
    problem; shared across backends, modes and full lengths that reduce to the same problem
    (oracle_cache.py). `oracle`: another reference backend (a layer backend's), keyed apart with the
    model and TP its problem also depends on."""
    cdt = "float64" if p.dtype == "float64" else "float32"
    grads = p.has_backward
    # a serving step's reference is the same step (its pool outside the batch too), not a forward
    ref_mode = p.mode if p.is_serving else "fwd_bwd" if grads else "fwd"

    def compute() -> dict:
        ref = p.with_(backend=oracle, dtype=cdt, mode=ref_mode)
        return ctx.registry[oracle].prepare_point(ref, make_inputs(ref, ctx.device, seqlens=seqlens))()

    key = oracle_key(p, seqlens, cdt)
    if oracle != ORACLE:
        key = (oracle, p.model, p.tp) + key
    return ctx.oracle_cache.get(key, compute, grads=grads)


def check_correctness(p: Point, backend: Backend, ctx: MeasureContext, row: PointRow,
                      trace_path: bool = False) -> tuple[str | None, float]:
    """Compare the backend with the fp32 oracle on a reduced problem (filling `row`'s error columns);
    returns the failure, if any, and that call's wall time.

    `trace_path` (CUDA only), for a backend whose path depends on the problem's size: trace the checked
    call's kernels too and record its `call_path` in the row's details (`check_path`), for
    `check_timed_path` to hold against the timed call's."""
    seqlens = reduced_seqlens(p, ctx.suite.check.oracle_max_tokens)
    # an autotuning library gets back what earlier checks of this worker tuned on the same keys, in the
    # preparation too (a backward is prepared with the library's own forward)
    with check_choices(backend.autotune_modules, ctx.suite.run.autotune, ctx.check_tunings) as reused:
        fn = backend.prepare_point(p, make_inputs(p, ctx.device, seqlens=seqlens))
        got, call_s = _timed_call(fn, _sync(ctx.device))
    row.details.update({"check_autotune": reused} if reused["installed"] or reused["tuned"] else {})
    if trace_path and backend.size_dependent_path:
        names = [e.name for e in capture_kernels(fn)]
        row.details["check_path"] = {"checked": backend.call_path(names)}
    oracle = backend.oracle or ORACLE
    ref = _oracle_outputs(p, seqlens, ctx, oracle)
    # outputs the prepared call says it must leave as they were (`untouched`: a pool-indexed prefill's slots
    # outside its batch, backends/flashinfer_pool.py), held beside the oracle's at their tolerance (0)
    ref = {**ref, **getattr(fn, "untouched", {})}
    errors, failure = compare(got, ref, p.tolerance_dtype)
    row.checked(errors, f"{oracle} {'float64' if p.dtype == 'float64' else 'float32'} @{sum(seqlens)} tokens",
                sum(seqlens))
    return failure, call_s


def check_full_size(p: Point, got: dict, inp, ctx: MeasureContext, fields: dict,
                    reference: str = FULL_SIZE_REFERENCE) -> str | None:
    """Compare full-size outputs with naive-chunk (or `reference`) in fp32 (where the recurrence would be
    too slow).

    Updates `fields` with the worse error per tensor and returns the failure reason, if any.
    """
    ref = reference_outputs(ctx.registry[reference], p.mode, inp, fp32=True,
                            point=None if reference == FULL_SIZE_REFERENCE else p)
    errors, failure = compare(got, ref, p.tolerance_dtype)
    for n, e in errors.items():
        if n not in CHECKED_TENSORS:  # checked (a failure says so) but with no err_ column, e.g. a layer's conv_state
            continue
        prev = fields.get(f"err_{n}")
        fields[f"err_{n}"] = e if prev is None or not (e <= prev) else prev
    fields["oracle"] = (fields.get("oracle") or "") + f"; {reference} float32 @{p.total_tokens} tokens"
    return f"full size vs {reference}: {failure}" if failure else None


def check_timed_path(p: Point, backend: Backend, ctx: MeasureContext, row: PointRow, got: dict, inp,
                     reference: str = FULL_SIZE_REFERENCE) -> str | None:
    """Whether the reduced check vouched for the code path that was timed; if not, check at full size.

    A backend whose path depends on the problem's size (an intra-card CP that splits only long sequences:
    FlashQLA's auto CP, FLA's, FlashInfer 0.7's) may run its unsplit kernels on the check's few hundred
    tokens and its CP kernels on the timed call. When the timed call's `call_path` (from the kernels
    traced for the row) is not the checked call's, its outputs `got` are compared with `reference` at
    full size in fp32, as `[check] full_size` does; the row's details record both paths and that check.
    Returns the failure, if any. Nothing to do for a row whose check recorded no path."""
    path = row.details.get("check_path")
    if path is None:
        return None
    path["timed"] = backend.call_path(list(row.fields.get("kernels") or ()))
    if path["timed"] == path["checked"]:
        return None
    path["full_size_check"] = f"{reference} float32 @{p.total_tokens} tokens"
    failure = check_full_size(p, got, inp, ctx, row.fields, reference)
    if failure:
        return (f"the timed call ran its {path['timed']} path, the reduced check its {path['checked']} one; "
                f"checked at full size: {failure}")
    return None


def check_fp64_full(p: Point, got: dict, inp, fields: dict, untouched: dict | None = None) -> str | None:
    """Compare full-size outputs with the float64 reference (`[check] reference = "fp64-full"`): fills
    `fields` with the errors, the reference's label and the tokens checked; returns the failure, if any.

    `untouched`: a serving point's pool outside the batch as drawn (`untouched_pool`, taken before the
    call): the float64 reference computes o and ht, and the pool is held bit for bit as the oracle's check
    holds it, so no reference lets a step that clobbers other sequences' states pass."""
    errors, failure = fp64_errors(got, inp, grads=p.has_backward, dtype=p.tolerance_dtype)
    if untouched is not None:
        pool_errors, pool_failure = compare(got, untouched, p.tolerance_dtype)
        errors.update(pool_errors)
        failure = "; ".join(f for f in (failure, pool_failure) if f) or None
    fields.update({f"err_{n}": errors.get(n) for n in CHECKED_TENSORS})
    fields["oracle"] = f"{FP64_REFERENCE} float64 @{p.total_tokens} tokens"
    fields["check_tokens"] = p.total_tokens
    return f"vs {FP64_REFERENCE}: {failure}" if failure else None


def untouched_failure(fn, got: dict, p: Point) -> str | None:
    """The failure, if any, of what a prepared call says it must leave as it was (`fn.untouched`), after its
    full-size call: the reduced check held the reduced call's, and a size-dependent path (a CP split) is
    another kernel."""
    held = getattr(fn, "untouched", None)
    return compare(got, held, p.tolerance_dtype)[1] if held else None


def _sync(device: str) -> Callable[[], None]:
    return torch.cuda.synchronize if torch.device(device).type == "cuda" else (lambda: None)


def _timed_call(fn, sync) -> tuple[object, float]:
    sync()
    t = time.perf_counter()
    out = fn()
    sync()
    return out, time.perf_counter() - t


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


def run_point(p: Point, ctx: MeasureContext) -> ResultRow:
    """Measure one point on the worker's device: exactly one row, whatever happens to it."""
    backend = ctx.registry.get(p.backend)
    row = PointRow(p, ctx)
    if refused := refusal(p, backend, ctx.device):
        return row.done(*refused)
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
        # a size-dependent path is traced in the check when nothing else will see the point at full size
        trace_path = on_cuda and not ctx.suite.check.full_size and not p.is_serving
        # the float64 reference's memory, estimated before anything runs: over its budget is a refusal, not
        # an allocation error after the backend's run
        if fp64_full and (why := fp64_refusal(p, torch.device(ctx.device), reserve=memory_bytes(p))):
            return row.done(Status.SKIPPED, why)
        if ctx.check and not fp64_full:
            failure, check_call_s = check_correctness(p, backend, ctx, row, trace_path=trace_path)
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
        full_ref = backend.full_size_reference or FULL_SIZE_REFERENCE
        # a serving point's oracle check was already at its full size (measure/inputs.reduced_seqlens)
        if ctx.check and ctx.suite.check.full_size and p.backend != full_ref and not p.is_serving:
            failure = check_full_size(p, got, inp, ctx, row.fields, full_ref)
            lap("full_size_check")
            if failure:
                return row.done(Status.INCORRECT, failure)
        row.first_call(first_call_s, check_call_s)
        if on_cuda:
            columns, budget_check, escaped = traced_columns(fn, ctx.num_sms, grant)
            row.kernels(columns, budget_check)
            row.fields["autotune"] = autotune_choices(fn)
            bad = escaped or backend.provenance_error(list(row.fields["kernels"]))
            lap("kernel_capture")
            if bad:
                return row.done(Status.ERROR, bad)
            failure = check_timed_path(p, backend, ctx, row, got, inp, full_ref)
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
        if on_cuda:
            row.gpu_state(before, gpustate.snapshot(ctx.device_index), ctx.peaks())
        lap("state_and_peaks")
        if ctx.suite.timing.sensitivity:  # after the clocks were read: they describe the row's own sampling
            t = ctx.suite.timing
            row.calls_sensitivity(*measure_calls_sensitivity(plan, ctx.device, fn, m, t.sensitivity_calls))
            lap("calls_sensitivity")
        if p.is_serving and (over := row.bandwidth(ctx.peaks() if on_cuda else None)):
            return row.done(Status.INCORRECT, over)
        row.details.update({**m.details, **timer_details})
        row.details.update(backend.point_details(
            fn, tuple(row.fields.get("kernels", ())), tuple(row.fields.get("kernel_dur_us", ())),
            row.fields["median_ms"], lambda g: summarize(plan.make(ctx.device).measure(g).samples_ms).median))
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
