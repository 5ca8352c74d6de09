"""The statistics of one matched pair: ratio of medians, its bootstrap CI, and a Mann-Whitney U test.

Pure numpy/scipy, no torch. The bootstrap draws from a generator seeded with a fixed value per call,
so the same two sample sets always give the same interval, whatever else is compared alongside them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from qlabench.core.errors import MeasureError

BOOTSTRAP_SEED = 20240607
BOOTSTRAP_RESAMPLES = 4000


@dataclass(frozen=True)
class PairStats:
    """head / base timing evidence for one point. `ratio` > 1 means head is slower."""

    n_base: int
    n_head: int
    base_median_ms: float
    head_median_ms: float
    ratio: float  # median(head) / median(base)
    ci_low: float  # bootstrap percentile bounds of the ratio of medians; each is a one-sided bound at alpha
    ci_high: float
    p_value: float  # two-sided Mann-Whitney U: do the two sample sets come from the same distribution?


def bootstrap_ratio_ci(base: np.ndarray, head: np.ndarray, confidence: float,
                       resamples: int = BOOTSTRAP_RESAMPLES, seed: int = BOOTSTRAP_SEED) -> tuple[float, float]:
    """Percentile interval of median(head*)/median(base*) over independent resamples of each side."""
    rng = np.random.default_rng(seed)
    b = np.median(rng.choice(base, size=(resamples, base.size), replace=True), axis=1)
    h = np.median(rng.choice(head, size=(resamples, head.size), replace=True), axis=1)
    tail = (1.0 - confidence) / 2.0
    lo, hi = np.quantile(h / b, [tail, 1.0 - tail])
    return float(lo), float(hi)


def mann_whitney_p(base: np.ndarray, head: np.ndarray) -> float:
    """Two-sided Mann-Whitney U p-value (exact for small samples without ties, asymptotic otherwise)."""
    from scipy.stats import mannwhitneyu

    if np.all(base == base[0]) and np.all(head == head[0]) and base[0] == head[0]:
        return 1.0  # identical constants: scipy would warn and return nan
    return float(mannwhitneyu(head, base, alternative="two-sided").pvalue)


def pair_stats(base_ms: Sequence[float], head_ms: Sequence[float], alpha: float) -> PairStats:
    """Everything the verdict needs from two sample sets (each must hold at least one positive sample)."""
    base = np.asarray(base_ms, dtype=float)
    head = np.asarray(head_ms, dtype=float)
    if base.size == 0 or head.size == 0:
        raise MeasureError("pair_stats needs samples on both sides")
    bm, hm = float(np.median(base)), float(np.median(head))
    # Each bound is used as a one-sided test at alpha (is it above 1+t? below 1/(1+t)?), as in the
    # two one-sided tests of equivalence testing: the interval is therefore the (1 - 2 alpha) one.
    lo, hi = bootstrap_ratio_ci(base, head, confidence=1.0 - 2.0 * alpha)
    p = mann_whitney_p(base, head) if base.size > 1 and head.size > 1 else 1.0
    return PairStats(n_base=int(base.size), n_head=int(head.size), base_median_ms=bm, head_median_ms=hm,
                     ratio=hm / bm, ci_low=lo, ci_high=hi, p_value=p)


def geometric_mean(ratios: Sequence[float]) -> float | None:
    """Geometric mean of positive ratios (None for none): the suite-wide speed change."""
    r = np.asarray([x for x in ratios if x > 0 and np.isfinite(x)], dtype=float)
    return float(np.exp(np.log(r).mean())) if r.size else None
