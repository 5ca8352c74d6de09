"""The kernels one call launched, as data: names, durations, launch shapes. Pure Python, no torch.

Captured by `qlabench.measure.probes.kineto` (torch.profiler); stored in result rows and kernel tables.

Used for provenance (did FLA really run Triton, did FlashQLA run TileLang?) and for SM utilisation.
Kineto's `est. achieved occupancy %` reads 0 for several TileLang kernels with large shared memory,
so it is not used; grid size against the SM count is reliable.
"""

from __future__ import annotations

from dataclasses import dataclass


# Kernels a library launches only when it splits a call (its intra-card CP), so a row's kernels say
# whether it split. FlashQLA warms each split up from chunks counted at run time
# (`tilelang_get_warmup_chunks_kernel`, `..._bidi_kernel` in the backward); FLA runs its pre-scan
# (backends/fla.py INTRACARD_KERNELS); FlashInfer 0.7 runs four CuTe DSL kernels whose class names end in
# `CPDeltaRulePrefillSm90` (backends/flashinfer.py).
FLASHQLA_CP_MARK = "get_warmup_chunks"
FLA_CP_MARK = "chunk_cp_fwd_kernel_h"
FLASHINFER_CP_MARK = "CPDeltaRule"


@dataclass(frozen=True)
class KernelEvent:
    name: str
    dur_us: float
    grid: tuple[int, int, int] | None
    block: tuple[int, int, int] | None
    blocks_per_sm: float | None  # grid blocks / number of SMs, as Kineto reports it
    stream: int | None = None  # the profiler's id of the stream it ran on (not a CUDA stream handle)

    @property
    def blocks(self) -> int | None:
        if self.grid is None:
            return None
        x, y, z = self.grid
        return x * y * z


def _triple(v) -> tuple[int, int, int] | None:
    if v is None:
        return None
    try:
        t = tuple(int(x) for x in v)
    except (TypeError, ValueError):
        return None
    return t if len(t) == 3 else None


def kernels_from_trace(trace: dict) -> list[KernelEvent]:
    """Kernel events of a chrome trace dict (as torch.profiler exports it), sorted by start time."""
    evs = [e for e in trace.get("traceEvents", []) if e.get("cat") == "kernel" and e.get("ph") == "X"]
    evs.sort(key=lambda e: e.get("ts", 0))
    out = []
    for e in evs:
        args = e.get("args", {})
        out.append(KernelEvent(
            name=e.get("name", "?"), dur_us=float(e.get("dur", 0.0)),
            grid=_triple(args.get("grid")), block=_triple(args.get("block")),
            blocks_per_sm=_float(args.get("blocks per SM")), stream=_int(args.get("stream", e.get("tid"))),
        ))
    return out


def _int(v) -> int | None:
    try:
        return int(v)
    except (TypeError, ValueError):
        return None


def _float(v) -> float | None:
    try:
        return float(v)
    except (TypeError, ValueError):
        return None


# The CuTe DSL (nvidia-cutlass-dsl) names a kernel "kernel_cutlass_<function>_<specialisation>": FlashInfer 0.7.
DSL_PREFIX = "kernel_cutlass_"


def provenance_error(kernel_names: list[str], expect: tuple[str, ...], forbid: tuple[str, ...],
                     expect_inside: bool = False) -> str | None:
    """Why these kernels do not match the backend's declared identity (None when they do). `expect` are name
    prefixes, or with `expect_inside` names to find anywhere in a kernel's name (a compiler that decorates a
    function name on both sides, e.g. the CuTe DSL); `forbid` are always prefixes."""
    bad = sorted({n for n in kernel_names if n.startswith(forbid)}) if forbid else []
    if bad:
        return f"backend provenance mismatch: launched {', '.join(bad[:3])}"
    if expect_inside:
        if expect and not any(k in n for n in kernel_names for k in expect):
            return f"backend provenance mismatch: launched no {'/'.join('*' + k + '*' for k in expect)} kernel"
    elif expect and not any(n.startswith(expect) for n in kernel_names):
        return f"backend provenance mismatch: launched no {'/'.join(p + '*' for p in expect)} kernel"
    return None


def _xyz(t: tuple[int, int, int] | None) -> str:
    return ",".join(map(str, t)) if t else ""


def _parse_xyz(s: str) -> tuple[int, int, int] | None:
    return _triple(s.split(",")) if s else None


def kernel_fields(events: list[KernelEvent]) -> dict:
    """The per-kernel breakdown as a result row's parallel list columns (kernels, kernel_*)."""
    return {
        "kernels": tuple(e.name for e in events),
        "kernel_dur_us": tuple(e.dur_us for e in events),
        "kernel_grid": tuple(_xyz(e.grid) for e in events),
        "kernel_block": tuple(_xyz(e.block) for e in events),
        "kernel_blocks_per_sm": tuple(float("nan") if e.blocks_per_sm is None else e.blocks_per_sm for e in events),
    }


def events_from_row(row) -> list[KernelEvent]:
    """Kernel events back from a result row (a ResultRow or a mapping such as a DataFrame row)."""
    get = row.get if hasattr(row, "get") else (lambda k, d=None: getattr(row, k, d))
    names = list(get("kernels") if get("kernels") is not None else ())
    cols = [list(get(c) if get(c) is not None else ()) for c in
            ("kernel_dur_us", "kernel_grid", "kernel_block", "kernel_blocks_per_sm")]
    if not names or any(len(c) != len(names) for c in cols):
        return []
    out = []
    for name, dur, grid, block, bps in zip(names, *cols):
        bps = _float(bps)
        out.append(KernelEvent(name=name, dur_us=float(dur), grid=_parse_xyz(grid), block=_parse_xyz(block),
                               blocks_per_sm=None if bps is None or bps != bps else bps))
    return out
