"""Whether a stored time is a time: a positive number, the median of the row's own samples (qlabench writes exactly
that). belief.py holds every row to it before a view believes the row; replicates.py holds each replicate to it
before folding them into one row, which keeps no samples of its own to check."""

from __future__ import annotations

import math

import numpy as np


# Relative slack between a stored median and the median of the stored samples (float round trips only).
MEDIAN_SLACK = 1e-9


def number(v) -> float:
    """A stored value as a float; NaN where it is none (null, text, a missing column)."""
    try:
        x = float(v)
    except (TypeError, ValueError):
        return math.nan
    return x


def time_problem(row) -> str | None:
    """Why a row's stored time cannot be believed; None when it can."""
    ms = number(row.get("median_ms"))
    if not math.isfinite(ms) or ms <= 0:
        return f"stored median_ms {row.get('median_ms')!r} is not a time (must be a positive number): not believed"
    samples = row.get("samples_ms")
    if samples is not None and len(samples):
        # a few hundred at most: faster in Python than numpy's median (a float array's floats read at once)
        arr = sorted(samples.tolist() if isinstance(samples, np.ndarray) and samples.dtype.kind == "f"
                     else (number(x) for x in samples))
        if all(math.isfinite(x) for x in arr):
            n = len(arr)
            med = arr[n // 2] if n % 2 else (arr[n // 2 - 1] + arr[n // 2]) / 2
            if abs(med - ms) > MEDIAN_SLACK * max(abs(med), abs(ms)):
                return (f"stored median_ms {ms:g} is not the median of its own {len(arr)} samples ({med:g} ms): "
                        "the row was edited or mis-written; not believed")
        else:
            return "its samples hold a non-finite time: not believed"
    return None
