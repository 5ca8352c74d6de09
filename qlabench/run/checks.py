"""A point's correctness checks: the oracle on a reduced problem, and the references at the point's own size.

Every timed row is checked at its own size (issue 51: a kernel right on the check's few hundred tokens and wrong
beyond must not be ranked): the fp32 recurrence where the point is small enough for it, and otherwise the
first call's outputs against the fp32 chunked form (`check_full_size`), or the float64 one where a suite asks
(`check_fp64_full`). `run_point` (point.py) calls them in order; the distributed ranks reuse
`reference_outputs`. `ctx` is the worker's MeasureContext (point.py), passed in: this module sits below it.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
import torch

from qlabench.backends import ORACLE, Backend
from qlabench.backends.reference.fp64_full import fp64_errors
from qlabench.core.modes import mode_of
from qlabench.core.point import Point
from qlabench.core.result import CHECKED_TENSORS
from qlabench.measure.correctness import compare
from qlabench.measure.inputs import make_inputs, reduced_seqlens
from qlabench.measure.oracle_cache import oracle_key
from qlabench.measure.probes.autotune import check_choices
from qlabench.measure.probes.kineto import capture_kernels
from qlabench.run.point_row import PointRow

# At full size the recurrence is too slow; the chunked torch form in float32 is the reference there.
FULL_SIZE_REFERENCE = "naive-chunk"
# `[check] reference = "fp64-full"`: the float64 chunked form at the point's real size instead of the oracle.
FP64_REFERENCE = "fp64-full"


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


def _oracle_outputs(p: Point, seqlens: tuple[int, ...], ctx, oracle: str = ORACLE) -> dict:
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


def check_correctness(p: Point, backend: Backend, ctx, row: PointRow,
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


def check_full_size(p: Point, got: dict, inp, ctx, fields: dict,
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
    fields["oracle"] = "; ".join(x for x in (fields.get("oracle"), f"{reference} float32 @{p.total_tokens} tokens") if x)
    fields["check_tokens"] = max(fields.get("check_tokens") or 0, p.total_tokens)
    return f"full size vs {reference}: {failure}" if failure else None


def check_timed_path(p: Point, backend: Backend, ctx, row: PointRow, got: dict, inp,
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
    row.fields["checked_at_size"] = True
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
