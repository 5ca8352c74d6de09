"""Bounds of a suite's numeric settings (used by spec.py).

Kept apart from spec.py so the parser stays short: each check returns the problem in words, or None.
"""

from __future__ import annotations

import math
import re

AUTOTUNE_MODES = ("point-cached", "point", "process")  # [run] autotune (core/spec.py RunSpec)
# A row's `autotune_tuned_for` values whose configs were tuned for the row's own point (in its run, or in an
# earlier run of the same point, stack and GPU model: measure/tuning_store.py)
TUNED_FOR_POINT = frozenset({"point", "point-cached"})

MAX_POINTS = 20_000  # a suite expanding to more is refused before it is expanded (run sweep --max-points N)
MAX_BATCH = 65_536  # a dense point holds one length per sequence: batch = 10^8 would pickle 400 MB per worker
MAX_LIMIT_S = 7 * 24 * 3600.0  # a week: beyond it a timeout is no limit, and select()/poll() overflow
# Calls before sampling: not bounded by any time limit, so 2**63 would spin until the compile timeout.
MAX_WARMUP = 10_000
# Sampled calls: a distributed point takes min_samples whatever its time (run/distributed/timing.py).
MAX_SAMPLES = 1_000_000
# Calls in one sample (a CUDA graph holds them all; each keeps its outputs' memory in the graph's pool).
MAX_CALLS_PER_SAMPLE = 4096
# torch intra-op threads per CPU worker: torch segfaults on 100000 threads; no CPU host has this many cores.
MAX_CPU_THREADS = 1024

# table.key -> (lowest allowed, whether the lowest is allowed itself, highest or None)
BOUNDS: dict[str, tuple[float, bool, float | None]] = {
    "timing.warmup": (0, True, MAX_WARMUP),
    "timing.min_samples": (1, True, MAX_SAMPLES),
    "timing.max_samples": (1, True, MAX_SAMPLES),
    "timing.min_time_s": (0, True, MAX_LIMIT_S),
    "timing.max_time_s": (0, False, MAX_LIMIT_S),
    "timing.target_rel_noise": (0, True, None),
    "timing.calls_per_sample": (0, True, MAX_CALLS_PER_SAMPLE),  # 0: the timer's own choice
    "timing.sensitivity_calls": (2, True, MAX_CALLS_PER_SAMPLE),  # compared with 1 call per sample
    "timing.sustained_ms": (0, False, 60_000.0),  # a minute of busy GPU per point is already a soak test
    "check.oracle_max_tokens": (1, True, None),
    "run.point_timeout_s": (0, False, MAX_LIMIT_S),
    "run.compile_timeout_s": (0, False, MAX_LIMIT_S),
    "profile.ncu_timeout_s": (0, False, MAX_LIMIT_S),
    "run.cpu_threads": (0, True, MAX_CPU_THREADS),  # 0: torch's default, one per core
}


def bound_problem(key: str, value) -> str | None:
    """Why `value` is out of range for `key` (e.g. 'run.point_timeout_s'), or None."""
    if key not in BOUNDS or isinstance(value, bool):
        return None
    low, inclusive, high = BOUNDS[key]
    if isinstance(value, float) and not math.isfinite(value):
        return f"must be a finite number, got {value}"
    if value < low or (value == low and not inclusive):
        return f"must be {'>=' if inclusive else '>'} {low:g}, got {value}"
    if high is not None and value > high:
        return f"must be at most {high:g}{' (seconds)' if key.endswith('_s') else ''}, got {value}"
    return None


def table_problems(table: str, obj) -> list[tuple[str, str]]:
    """(key, problem) for every bounded field of a parsed table (TimingSpec, CheckSpec, RunSpec, ...)."""
    out = []
    for key in BOUNDS:
        t, _, field = key.partition(".")
        if t == table and (p := bound_problem(key, getattr(obj, field))):
            out.append((key, p))
    if table == "run" and obj.autotune not in AUTOTUNE_MODES:
        out.append(("run.autotune", f"must be one of {', '.join(AUTOTUNE_MODES)}, got {obj.autotune!r}"))
    if table == "timing" and obj.max_samples < obj.min_samples:
        out.append(("timing.max_samples", f"must be >= min_samples ({obj.min_samples}), got {obj.max_samples}"))
    return out


DEVICE_RE = re.compile(r"auto|cpu|cuda(:\d+)?")
