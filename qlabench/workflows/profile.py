"""Profiling one point on demand (`qlabench profile`): Kineto's kernel breakdown and Nsight Compute.

The Kineto part runs in this process (launch shapes -> sm_coverage); the ncu part runs the point in a
child process under `ncu` (-> sm_active_pct). Either part may be unavailable (no CUDA device, no ncu):
it then carries a reason instead of numbers, and the other part still runs.
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass, field
from pathlib import Path

from qlabench.measure.probes.ncu import NcuProfile, point_to_json, profile_point
from qlabench.core.errors import ConfigError, PointError
from qlabench.core.point import Point
from qlabench.core.kernel_event import KernelEvent
from qlabench.core.sm_coverage import kernel_breakdown, sm_coverage, sm_coverage_waves
from qlabench.store.kernels import kernels_table


@dataclass
class PointProfile:
    point: Point
    device: str
    num_sms: int | None = None
    events: list[KernelEvent] = field(default_factory=list)
    sm_coverage: float | None = None
    sm_coverage_waves: float | None = None
    kineto_reason: str | None = None  # why there is no Kineto breakdown
    ncu: NcuProfile | None = None
    ncu_reason: str | None = None  # why there are no ncu metrics

    @property
    def sm_active_pct(self) -> float | None:
        return self.ncu.sm_active_pct if self.ncu else None

    def breakdown(self) -> list[dict]:
        return kernel_breakdown(self.events, self.num_sms) if self.num_sms else []

    def as_dict(self) -> dict:
        return {
            "point": json.loads(point_to_json(self.point)), "device": self.device, "num_sms": self.num_sms,
            "sm_coverage": self.sm_coverage, "sm_coverage_waves": self.sm_coverage_waves,
            "sm_active_pct": self.sm_active_pct, "kineto_reason": self.kineto_reason,
            "ncu_reason": self.ncu_reason, "kernels": self.breakdown(),
            "ncu": self.ncu.as_dict() if self.ncu else None,
        }


def parse_heads(text: str) -> tuple[int, int]:
    """'H_QK/H_V' (or one number for both) -> (h_qk, h_v)."""
    try:
        a, _, b = text.partition("/")
        return int(a), int(b or a)
    except ValueError:
        raise PointError(f"--heads takes H_QK/H_V, e.g. 2/8; got {text!r}") from None


def parse_seqlens(text: str) -> tuple[int, ...]:
    """'8192' or '1024,4096' -> the sequence lengths."""
    try:
        return tuple(int(s) for s in text.split(",") if s.strip())
    except ValueError:
        raise PointError(f"--seqlens takes comma-separated lengths, e.g. 8192 or 1024,4096; got {text!r}") from None


def point_to_profile(suite: str | None = None, index: int | None = None, *, backend: str | None = None,
                     mode: str = "fwd", heads: str = "2/8", seqlens: str = "8192", layout: str | None = None,
                     batch: int | None = None, dtype: str = "bfloat16", head_dim: int = 128) -> Point:
    """The point `qlabench profile` names: point `index` of `suite`, or one built from the options.

    Without a layout, differing lengths are varlen (batch 1) and equal ones dense; a dense point with one
    length and a larger batch repeats that length.
    """
    if suite is not None:
        from qlabench.core.spec import load_suite

        s = load_suite(suite)
        if index is None or not 0 <= index < len(s.points):
            raise ConfigError(f"--index must be in 0..{len(s.points) - 1} for suite {s.name!r} "
                              f"(see `qlabench run sweep --suite {suite} --dry-run`)")
        return s.points[index]
    if backend is None:
        raise ConfigError("give --suite and --index, or at least --backend")
    h_qk, h_v = parse_heads(heads)
    lens = parse_seqlens(seqlens)
    layout = layout or ("varlen" if len(set(lens)) > 1 else "dense")
    b = 1 if layout == "varlen" else (batch or len(lens))
    if layout == "dense" and len(lens) == 1 and b > 1:
        lens = lens * b
    return Point(backend=backend, mode=mode, layout=layout, batch=b, seqlens=lens, h_qk=h_qk, h_v=h_v,
                 K=head_dim, V=head_dim, dtype=dtype)


def kineto_events(point: Point, device: str) -> tuple[list[KernelEvent], int | None, str | None]:
    """(kernels of one warmed-up call, the device's SM count, None) or ([], None, why not)."""
    import torch

    from qlabench.backends import get_backend
    from qlabench.measure.inputs import make_inputs
    from qlabench.measure.probes.kineto import capture_kernels

    dev = torch.device(device)
    if dev.type != "cuda" or not torch.cuda.is_available():
        return [], None, f"no CUDA device ({device}): Kineto kernel capture needs one"
    backend = get_backend(point.backend)
    for ok, why in (backend.available(), backend.supports(point, device)):
        if not ok:
            return [], None, f"{point.backend}: {why}"
    fn = backend.prepare_point(point, make_inputs(point, device))
    fn()  # compile and autotune outside the trace
    events = capture_kernels(fn)
    num_sms = torch.cuda.get_device_properties(dev).multi_processor_count
    return events, num_sms, None


def check_profilable(point: Point, device: str) -> None:
    """BackendError (exit 2) when the point's backend cannot run here, with the backend's own reason: a
    profile of a backend that is not installed, or not for this device, would be an empty kernel list."""
    from qlabench.backends import runnable_backend

    runnable_backend(point, device)


def profile_one(point: Point, device: str = "cuda", kineto: bool = True, ncu: bool = True) -> PointProfile:
    prof = PointProfile(point=point, device=device)
    if kineto:
        prof.events, prof.num_sms, prof.kineto_reason = kineto_events(point, device)
        if prof.num_sms:
            prof.sm_coverage = sm_coverage(prof.events, prof.num_sms)
            prof.sm_coverage_waves = sm_coverage_waves(prof.events, prof.num_sms)
    else:
        prof.kineto_reason = "not requested"
    if ncu:
        prof.ncu, prof.ncu_reason = profile_point(point, device)
    else:
        prof.ncu_reason = "not requested"
    return prof


def write_profile(prof: PointProfile, out_dir: str | os.PathLike, run_id: str) -> list[Path]:
    """Write <out>/<run_id>.profile.json and, when there are kernels, <out>/<run_id>.kernels.parquet."""
    from qlabench.store.kernels import KERNELS_SUFFIX, write_kernels

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    js = out / f"{run_id}.profile.json"
    tmp = js.with_name("." + js.name + ".tmp")
    tmp.write_text(json.dumps({"run_id": run_id, **prof.as_dict()}, indent=1, default=_jsonable))
    os.replace(tmp, js)
    written = [js]
    if prof.events:
        written.append(write_kernels(out / f"{run_id}{KERNELS_SUFFIX}",
                                     [kernels_table(run_id, prof.point, prof.events)]))
    return written


def _jsonable(v):
    if isinstance(v, tuple):
        return list(v)
    return asdict(v) if hasattr(v, "__dataclass_fields__") else str(v)
