"""Summary statistics of timing samples."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from qlabench.core.errors import MeasureError


@dataclass(frozen=True)
class Summary:
    n: int
    median: float
    mean: float
    stdev: float  # sample standard deviation (ddof=1); 0 for a single sample
    min: float
    p20: float
    p80: float
    iqr: float  # q75 - q25
    rel_noise: float  # IQR / median: robust to the occasional outlier a shared machine produces
    q25: float = float("nan")
    q75: float = float("nan")
    rel_stdev: float = float("nan")  # stdev / median, nvbench's noise measure; more outlier-sensitive


def summarize(samples: Sequence[float]) -> Summary:
    """Order statistics use linear interpolation between samples (numpy's default percentile)."""
    if len(samples) == 0:
        raise MeasureError("no samples to summarize")
    a = np.asarray(samples, dtype=float)
    q20, q25, q50, q75, q80 = np.percentile(a, [20, 25, 50, 75, 80])
    stdev = float(a.std(ddof=1)) if a.size > 1 else 0.0
    iqr = float(q75 - q25)
    pos = q50 > 0
    return Summary(n=int(a.size), median=float(q50), mean=float(a.mean()), stdev=stdev, min=float(a.min()),
                   p20=float(q20), p80=float(q80), iqr=iqr, rel_noise=iqr / q50 if pos else float("inf"),
                   q25=float(q25), q75=float(q75), rel_stdev=stdev / q50 if pos else float("inf"))
