"""What changed inside a point between two runs: its per-kernel breakdown (torch.profiler's list).

A time change says *that* a point moved; the kernels say *where*. Each row keeps the kernels one call
launched (`kernels`, `kernel_dur_us`, `kernel_grid`, `kernel_block`), so two rows of the same point
can be lined up kernel by kernel: the kernel whose duration moved most, a kernel whose launch shape
changed (an autotuner picking another `num_warps` shows as a new block size), and kernels that
appear on one side only (a different dispatch path). Where rows record each Triton kernel's autotune
choice (`autotune`), a changed choice is named first: "fla kernel chunk_fwd_kernel_o: config
num_warps 4->8". Pure Python: no torch.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass

from qlabench.analyze.evidence.kernels import short_name
from qlabench.core.result import autotune_choice

# A kernel's share of the point's total kernel time below which its change is not worth naming.
MIN_SHARE = 0.05


@dataclass(frozen=True)
class Kernel:
    name: str
    occurrence: int  # the n-th launch of this name within one call (a call may launch a kernel twice)
    dur_us: float
    grid: str
    block: str

    @property
    def key(self) -> tuple[str, int]:
        return self.name, self.occurrence


def _seq(row: dict, col: str) -> list:
    v = row.get(col)
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return []
    return list(v)


def _parallel(row: dict, col: str, n: int) -> list:
    """A per-kernel column, or n Nones where it is absent or does not line up with `kernels` (rows
    written before the column existed read it back empty)."""
    v = _seq(row, col)
    return v if len(v) == n else [None] * n


def kernels_of(row: dict, dur_scale: float = 1.0) -> list[Kernel]:
    names = _seq(row, "kernels")
    durs = _parallel(row, "kernel_dur_us", len(names))
    grids, blocks = _parallel(row, "kernel_grid", len(names)), _parallel(row, "kernel_block", len(names))
    seen: Counter = Counter()
    out = []
    for name, dur, grid, block in zip(names, durs, grids, blocks):
        seen[name] += 1
        out.append(Kernel(str(name), seen[name], float(dur) / dur_scale if dur is not None else math.nan,
                          str(grid or ""), str(block or "")))
    return out


def _labels(*sides: list[Kernel]) -> dict[tuple[str, int], str]:
    """Short names, numbered (#1, #2, ...) where several launches or templates share one."""
    order: dict[tuple[str, int], None] = {}
    for side in sides:
        order.update(dict.fromkeys(k.key for k in side))
    by_short: dict[str, list] = {}
    for key in order:
        by_short.setdefault(short_name(key[0]), []).append(key)
    return {key: (f"{s}#{i}" if len(keys) > 1 else s) for s, keys in by_short.items()
            for i, key in enumerate(keys, 1)}


def _shape(b: Kernel, h: Kernel) -> str:
    """How the launch shape changed; a side that did not record it (older rows) changes nothing."""
    parts = []
    if b.block and h.block and b.block != h.block:
        parts.append(f"block {b.block}->{h.block}")
    if b.grid and h.grid and b.grid != h.grid:
        parts.append(f"grid {b.grid}->{h.grid}")
    return ", ".join(parts)


def kernel_change(base: dict, head: dict, head_scale: float = 1.0) -> str | None:
    """One line on how the kernels differ between two rows of a point (autotune choices, then the
    breakdown), or None when neither differs. `head_scale`: the suite-wide shift the head's times are
    judged against (drift correction); the head's kernel durations are divided by it, like its samples."""
    notes = [n for n in (autotune_change(base, head), _breakdown_change(base, head, head_scale)) if n]
    return "; ".join(notes) or None


def _choices(row: dict) -> dict[str, list[dict]]:
    """A row's autotune choices by kernel name (a kernel met with two shapes in one call has two)."""
    out: dict[str, list[dict]] = {}
    for c in _seq(row, "autotune"):
        c = autotune_choice(c)
        out.setdefault(c["kernel"], []).append(c)
    return out


def _config_diff(b: dict, h: dict) -> str:
    parts = [f"{k} {b[k]}->{h[k]}" for k in ("num_warps", "num_stages", "num_ctas") if b[k] != h[k]]
    for k in sorted(set(b["kwargs"]) | set(h["kwargs"])):
        if b["kwargs"].get(k) != h["kwargs"].get(k):
            parts.append(f"{k} {b['kwargs'].get(k, '-')}->{h['kwargs'].get(k, '-')}")
    return ", ".join(parts)


def autotune_change(base: dict, head: dict) -> str | None:
    """Which autotuned kernel ran with another config in the head, or None. A side that did not record
    its choices (older rows, no Triton) changes nothing."""
    bc, hc = _choices(base), _choices(head)
    if not bc or not hc:
        return None
    backend = head.get("backend") or base.get("backend") or "?"
    moved = []
    for name in bc:
        if name not in hc or bc[name] == hc[name]:
            continue
        if len(bc[name]) == len(hc[name]) == 1:
            diff = _config_diff(bc[name][0], hc[name][0])
        else:
            diff = f"{len(bc[name])} configs -> {len(hc[name])}, not the same"
        moved.append(f"{backend} kernel {name}: config {diff}")
    return _first(moved, "; ") if moved else None


def _breakdown_change(base: dict, head: dict, head_scale: float = 1.0) -> str | None:
    """How the per-kernel breakdown differs, or None: when either side has no breakdown (CPU rows, old
    files) or when no kernel moved by at least MIN_SHARE of the base's total kernel time, none changed
    its launch shape and none was added or dropped."""
    bk, hk = kernels_of(base), kernels_of(head, head_scale)
    if not bk or not hk:
        return None
    labels = _labels(bk, hk)
    b_by, h_by = {k.key: k for k in bk}, {k.key: k for k in hk}
    total = sum(k.dur_us for k in bk if math.isfinite(k.dur_us)) or math.nan
    notes = []
    common = [key for key in b_by if key in h_by]
    moves = [(h_by[key].dur_us - b_by[key].dur_us, key) for key in common
             if math.isfinite(b_by[key].dur_us) and math.isfinite(h_by[key].dur_us)]
    named = None  # the kernel already named with its time (its shape change, if any, is said there)
    if moves:
        delta, key = max(moves, key=lambda m: abs(m[0]))
        b, h = b_by[key], h_by[key]
        if math.isfinite(total) and abs(delta) >= MIN_SHARE * total:
            shape = _shape(b, h)
            notes.append(f"{labels[b.key]} {b.dur_us:.4g}->{h.dur_us:.4g} us" + (f" ({shape})" if shape else ""))
            named = key
    # launch shapes that changed elsewhere, even where the time barely moved (an autotuner's choice)
    reshaped = [f"{labels[k]} {_shape(b_by[k], h_by[k])}" for k in common
                if k != named and _shape(b_by[k], h_by[k])]
    if reshaped:
        notes.append(_first(reshaped, "; "))
    added = [labels[k] for k in h_by if k not in b_by]
    dropped = [labels[k] for k in b_by if k not in h_by]
    if added:
        notes.append("new kernels: " + _first(added))
    if dropped:
        notes.append("gone: " + _first(dropped))
    return "; ".join(notes) or None


def _first(items: list[str], sep: str = ", ", n: int = 3) -> str:
    """The first n items, and how many more there are: one line stays one line."""
    return sep.join(items[:n]) + (f" +{len(items) - n} more" if len(items) > n else "")
