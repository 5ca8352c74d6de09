"""The statistics of one matched pair. Pure numpy/scipy, no torch.

Two methods (docs/GATING.md says why the first is the default):

- `run_stats` (method "runs"): the run is the unit of replication. Each replicate of a point (a fresh
  set of worker processes; `run sweep --replicates K`) gives one number, the log of its median; the
  change is the difference of the two sides' mean log medians, and its uncertainty comes from how much
  those numbers vary between runs: a Student t interval and test on the per-replicate log medians
  (pooled over base, head and any stored A/A history; paired by round for an interleaved A/B). The
  same spread, `sigma_between`, is the point's noise floor.
- `pair_stats` (method "samples", the old one): ratio of medians of the per-call samples of one run
  each, a bootstrap interval and a Mann-Whitney U test. It treats the samples of one run as
  independent observations, which leaves out the variance between runs.

The bootstrap draws from a generator seeded with a fixed value per call, so the same two sample sets
always give the same interval, whatever else is compared alongside them.
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
    # -- between-run statistics (run_stats); defaults describe the per-sample method -------------
    method: str = "samples"  # "samples" (pair_stats) or "runs" (run_stats)
    runs_base: int = 1  # replicates (runs) on each side
    runs_head: int = 1
    sigma_between: float | None = None  # SD of one replicate's log median: the run-to-run noise; None: unknown
    df: int = 0  # degrees of freedom of sigma_between
    paired: bool = False  # differences taken round by round (an interleaved A/B)
    suite_sigma: bool = False  # sigma_between was raised to the suite's median run-to-run noise


def _resampled_medians(x: np.ndarray, rng: np.random.Generator, resamples: int) -> np.ndarray:
    """The median of each of `resamples` resamples (with replacement) of x: the draws of
    `rng.choice(x, size=(resamples, n))` and the medians np.median gives them, bit for bit, without
    partitioning every resample. x sorted, a resample's median is the value at its middle rank, and the
    middle rank is read off the cumulative counts of the ranks drawn (linear, where a partition per
    row cost compare two thirds of its time over thousands of points)."""
    n = x.size
    drawn = rng.integers(0, n, size=(resamples, n))  # what rng.choice(x, size=(resamples, n)) draws
    order = np.argsort(x, kind="stable")
    ranks = np.empty(n, dtype=np.int64)
    ranks[order] = np.arange(n)
    rows = np.arange(resamples, dtype=np.int64)[:, None] * n
    counts = np.bincount((ranks[drawn] + rows).ravel(), minlength=resamples * n).reshape(resamples, n)
    below = np.cumsum(counts, axis=1)
    s = x[order]
    upper = s[(below <= n // 2).sum(axis=1)]  # the (n // 2)-th smallest draw, counting from 0
    if n % 2:
        return upper
    lower = s[(below <= n // 2 - 1).sum(axis=1)]
    return np.mean(np.stack([lower, upper], axis=1), axis=1)  # np.median's mean of the two middle values


def bootstrap_ratio_ci(base: np.ndarray, head: np.ndarray, confidence: float,
                       resamples: int = BOOTSTRAP_RESAMPLES, seed: int = BOOTSTRAP_SEED) -> tuple[float, float]:
    """Percentile interval of median(head*)/median(base*) over independent resamples of each side."""
    rng = np.random.default_rng(seed)
    b = _resampled_medians(base, rng, resamples)
    h = _resampled_medians(head, rng, resamples)
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


def _log_medians(units: Sequence[float]) -> np.ndarray:
    x = np.asarray([u for u in units if u is not None and u > 0 and np.isfinite(u)], dtype=float)
    return np.log(x)


def between_run_sigma(groups: Sequence[Sequence[float]]) -> tuple[float | None, int]:
    """Pooled SD of log medians within each group (each group: replicates of one unchanged thing), and
    its degrees of freedom; (None, 0) when no group has two replicates."""
    ss, df = 0.0, 0
    for g in groups:
        x = _log_medians(g)
        if x.size >= 2:
            ss += float(((x - x.mean()) ** 2).sum())
            df += int(x.size) - 1
    return (float(np.sqrt(ss / df)), df) if df else (None, 0)


def run_stats(base_units: Sequence[float], head_units: Sequence[float], alpha: float, *,
              history: Sequence[Sequence[float]] = (), paired: bool = False, min_sigma: float = 0.0,
              samples: tuple[Sequence[float], Sequence[float]] | None = None) -> PairStats:
    """Between-run statistics from per-replicate medians (ms) of each side.

    history: earlier A/A replicates of the same point on the same runner pool (each a group of
        per-replicate medians); they add degrees of freedom to the run-to-run spread (and, holding runs
        from other sessions, the between-session part of it).
    paired: the i-th base and i-th head replicate were measured back to back (an interleaved A/B): the
        test is on the per-round differences, so drift between rounds cancels.
    min_sigma: a lower bound on sigma_between (the suite's median run-to-run noise, comparison.py): with
        3 + 3 replicates one point's spread has 4 degrees of freedom and can come out small by chance
        (e.g. when process speeds are bimodal and each side happened to land in one mode).
    samples: the per-call samples of both sides (only their counts are kept, and, when neither side
        has two replicates, the per-sample statistics are returned instead, marked sigma_between=None).
    With one replicate on both sides and no history the run-to-run noise is unknown: the result
    carries sigma_between=None and the verdict cannot call the point slower or faster.
    """
    from scipy import stats as st

    b, h = _log_medians(base_units), _log_medians(head_units)
    if b.size == 0 or h.size == 0:
        raise MeasureError("run_stats needs a median on both sides")
    n_b, n_h = (len(samples[0]), len(samples[1])) if samples else (b.size, h.size)
    d = float(h.mean() - b.mean())
    if paired and b.size == h.size and b.size >= 2:
        diffs = h - b
        df = int(diffs.size) - 1
        sd = float(diffs.std(ddof=1))
        se, sigma = sd / np.sqrt(diffs.size), sd / np.sqrt(2.0)
    else:
        paired = False
        sigma, df = between_run_sigma([base_units, head_units, *history])
        se = None if sigma is None else sigma * np.sqrt(1.0 / b.size + 1.0 / h.size)
    raised = sigma is not None and sigma < min_sigma
    if raised:
        sigma = min_sigma
        se = sigma * (np.sqrt(2.0 / b.size) if paired else np.sqrt(1.0 / b.size + 1.0 / h.size))
    common = dict(method="runs", runs_base=int(b.size), runs_head=int(h.size), df=df, paired=paired,
                  suite_sigma=bool(raised))
    if se is None:
        if samples and len(samples[0]) and len(samples[1]):
            s = pair_stats(samples[0], samples[1], alpha)
            return PairStats(**{**s.__dict__, **common, "sigma_between": None})
        r = float(np.exp(d))
        return PairStats(n_base=n_b, n_head=n_h, base_median_ms=float(np.exp(b.mean())),
                         head_median_ms=float(np.exp(h.mean())), ratio=r, ci_low=0.0, ci_high=float("inf"),
                         p_value=1.0, sigma_between=None, **common)
    if se > 0:
        tcrit = float(st.t.ppf(1.0 - alpha, df))
        p = float(2.0 * st.t.sf(abs(d) / se, df))
    else:  # every replicate identical: no spread at all
        tcrit, p = 0.0, (1.0 if d == 0 else 0.0)
    return PairStats(n_base=n_b, n_head=n_h, base_median_ms=float(np.exp(b.mean())),
                     head_median_ms=float(np.exp(h.mean())), ratio=float(np.exp(d)),
                     ci_low=float(np.exp(d - tcrit * se)), ci_high=float(np.exp(d + tcrit * se)), p_value=p,
                     sigma_between=sigma, **common)
