"""Suite-wide shift: how much a whole head run moved against its base, and judging points relative to it.

On shared machines two runs of the same code drift together by 10-20% (clocks, neighbours, thermal
state; see docs/GATING.md), which per-point statistics cannot see: each run's samples are tight, the
runs just sit at different levels. The shift is the median of the per-point log ratios, robust to a
minority of points that really changed, with a bootstrap interval over points. With drift correction
each point's head samples are divided by the shift before its verdict, so a point is called slower
only if it moved beyond the threshold *relative to the rest of the suite*; the shift itself is
reported, and a shift beyond the threshold is its own failure kind (`shift`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from qlabench.analyze.compare.stats import BOOTSTRAP_RESAMPLES, BOOTSTRAP_SEED

MIN_POINTS = 3  # fewer timed points than this: no shift is estimated (nothing to be relative to)


@dataclass(frozen=True)
class Shift:
    ratio: float  # suite-wide head/base factor (> 1: the head run is slower overall)
    ci_low: float
    ci_high: float
    n: int  # timed points it was estimated from


def suite_shift(ratios: Sequence[float], alpha: float, resamples: int = BOOTSTRAP_RESAMPLES,
                seed: int = BOOTSTRAP_SEED) -> Shift | None:
    """Median of the log ratios, with a (1 - 2 alpha) bootstrap interval over points; None if too few."""
    logs = np.log(np.asarray([r for r in ratios if r > 0 and np.isfinite(r)], dtype=float))
    if logs.size < MIN_POINTS:
        return None
    rng = np.random.default_rng(seed)
    boot = np.median(rng.choice(logs, size=(resamples, logs.size), replace=True), axis=1)
    lo, hi = np.quantile(boot, [alpha, 1.0 - alpha])
    return Shift(ratio=float(np.exp(np.median(logs))), ci_low=float(np.exp(lo)), ci_high=float(np.exp(hi)),
                 n=int(logs.size))


def shift_verdict(shift: Shift | None, threshold: float) -> tuple[bool, str]:
    """(is it a suite-wide slowdown beyond the threshold?, a one-line description)."""
    if shift is None:
        return False, f"no suite-wide shift estimated (fewer than {MIN_POINTS} timed points)"
    text = (f"suite-wide shift {shift.ratio - 1:+.1%} [{shift.ci_low - 1:+.1%}, {shift.ci_high - 1:+.1%}] "
            f"over {shift.n} points")
    slower = shift.ci_low > 1.0 + threshold
    return slower, text + (" : the whole head run is slower" if slower else "")
