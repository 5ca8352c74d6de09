"""What changed inside a point between two runs: its per-kernel breakdown (torch.profiler's list).

A time change says *that* a point moved; the kernels say *where*. Each row keeps the kernels one call
launched (`kernels`, `kernel_dur_us`, `kernel_grid`, `kernel_block`), so two rows of the same point
can be lined up kernel by kernel: the kernel whose duration moved most, a kernel whose launch shape
changed (an autotuner picking another `num_warps` shows as a new block size), and kernels that
appear on one side only (a different dispatch path). Pure Python: no torch.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import dataclass

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


def short_name(name: str) -> str:
    """'void at::native::vectorized_elementwise_kernel<8, ...>(int, ...)' -> 'vectorized_elementwise_kernel'."""
    s = re.sub(r"^void\s+", "", str(name).strip())
    s = s.split("<", 1)[0].split("(", 1)[0]
    return s.rsplit("::", 1)[-1] or str(name)


def _seq(row: dict, col: str) -> list:
    v = row.get(col)
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return []
    return list(v)


def kernels_of(row: dict) -> list[Kernel]:
    names = _seq(row, "kernels")
    durs, grids, blocks = _seq(row, "kernel_dur_us"), _seq(row, "kernel_grid"), _seq(row, "kernel_block")
    seen: Counter = Counter()
    out = []
    for i, name in enumerate(names):
        seen[name] += 1
        dur = float(durs[i]) if i < len(durs) and durs[i] is not None else math.nan
        out.append(Kernel(str(name), seen[name], dur, str(grids[i]) if i < len(grids) else "",
                          str(blocks[i]) if i < len(blocks) else ""))
    return out


def _label(k: Kernel, counts: Counter) -> str:
    s = short_name(k.name)
    return f"{s}#{k.occurrence}" if counts[k.name] > 1 else s


def _shape(b: Kernel, h: Kernel) -> str:
    parts = []
    if b.block != h.block:
        parts.append(f"block {b.block}->{h.block}")
    if b.grid != h.grid:
        parts.append(f"grid {b.grid}->{h.grid}")
    return ", ".join(parts)


def kernel_change(base: dict, head: dict) -> str | None:
    """One line on how the kernel breakdown differs between two rows of a point, or None.

    None when either side has no breakdown (CPU rows, old files) or when no kernel moved by at
    least MIN_SHARE of the base's total kernel time, none changed its launch shape and none was
    added or dropped.
    """
    bk, hk = kernels_of(base), kernels_of(head)
    if not bk or not hk:
        return None
    counts = Counter(k.name for k in bk) | Counter(k.name for k in hk)
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
            notes.append(f"{_label(b, counts)} {b.dur_us:.4g}->{h.dur_us:.4g} us" + (f" ({shape})" if shape else ""))
            named = key
    # launch shapes that changed elsewhere, even where the time barely moved (an autotuner's choice)
    reshaped = [f"{_label(b_by[k], counts)} {_shape(b_by[k], h_by[k])}" for k in common
                if k != named and _shape(b_by[k], h_by[k])]
    if reshaped:
        notes.append(_first(reshaped, "; "))
    added = [_label(h_by[k], counts) for k in h_by if k not in b_by]
    dropped = [_label(b_by[k], counts) for k in b_by if k not in h_by]
    if added:
        notes.append("new kernels: " + _first(added))
    if dropped:
        notes.append("gone: " + _first(dropped))
    return "; ".join(notes) or None


def _first(items: list[str], sep: str = ", ", n: int = 3) -> str:
    """The first n items, and how many more there are: one line stays one line."""
    return sep.join(items[:n]) + (f" +{len(items) - n} more" if len(items) > n else "")
