"""A control: an unchanged reference backend timed on both sides of a comparison, to see whether the host moved.

A gate against a saved baseline compares two runs made at different times. When the box's load, clocks or
neighbours change between them, every point moves together and a per-point test cannot tell that from the code:
on a 2-core CPU whose load changed, an unchanged naive backend moved 80% and a 30% slower plugin passed as
"faster". A backend whose code the change does not touch (the suite's `baseline` backend, or `--control`) measures
that shift: its points' head/base log ratios, with a t interval whose spread is the larger of the replicates'
run-to-run noise and the spread between its points (a load change need not slow every shape alike). A shift
beyond that noise (p < alpha) is either divided out of every head time (`host_shift="normalise"`, the default)
or makes the comparison refuse to judge any time (`"refuse"`); the comparison says which, and by how much the
control moved. Whether divided out or not, the host may have moved by as much as the shift's interval allows
without the control seeing it, so every verdict needs its change beyond that too (`ControlShift.unseen`): a
control too noisy to see a shift of the threshold's size leaves every point inconclusive, never a pass.

An interleaved A/B (`qlabench ab`, gate confirmation) needs no control: its rounds are paired, so a slow shift
cancels.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from qlabench.analyze.compare.stats import between_run_sigma

HOST_SHIFT_ACTIONS = ("normalise", "refuse")


@dataclass(frozen=True)
class ControlShift:
    """How far the control backend moved from base to head, and what the comparison did about it."""

    backend: str
    points: int  # control points with an ok time on both sides
    ratio: float  # head / base: the geometric mean over the control's points (> 1: the head's host is slower)
    ci_low: float  # (1 - 2 alpha) interval of the ratio; 0 / inf when its noise is unknown
    ci_high: float
    p_value: float  # two-sided t test of "the host did not move"
    noise: float | None  # the control's run-to-run noise (relative SD of one replicate); None: unknown
    beyond_noise: bool  # p < alpha: the host moved
    action: str = "none"  # "none" (within noise, or unknown), "normalised" or "refused"

    @property
    def unseen(self) -> float:
        """How far (a relative change) the host may have moved beyond what is divided out, as far as the
        control's interval tells: around its ratio once normalised, around 1 otherwise; inf when unknown."""
        if not (self.ci_low > 0 and math.isfinite(self.ci_high)):
            return math.inf
        centre = self.ratio if self.action == "normalised" else 1.0
        return max(self.ci_high / centre, centre / self.ci_low) - 1.0

    def describe(self) -> str:
        moved = (f"control {self.backend} moved {self.ratio - 1:+.1%} [{self.ci_low - 1:+.1%}, "
                 f"{self.ci_high - 1:+.1%}] from base to head over {self.points} point(s)")
        noise = "its run-to-run noise unknown" if self.noise is None else f"run-to-run noise {self.noise:.1%}"
        if self.action == "normalised":
            return (f"host shift: {moved}, beyond its noise ({noise}, p={self.p_value:.2g}): every head time is "
                    f"divided by {self.ratio:.3f}, and a change must also exceed the shift's uncertainty "
                    f"{self.unseen:.1%}")
        if self.action == "refused":
            return (f"host shift: {moved}, beyond its noise ({noise}, p={self.p_value:.2g}): the host changed "
                    "between the baseline and this run, so no time is judged (not a pass, exit 2). Re-measure the "
                    "baseline on this host as it is now, use `qlabench ab`, or `--host-shift normalise`")
        if not math.isfinite(self.ci_high):
            return f"host shift not known: {moved}, {noise} (measure with --replicates K)"
        return (f"no host shift seen: {moved}, within its noise ({noise}, p={self.p_value:.2g}); a change must "
                f"exceed the {self.unseen:.1%} the host may have moved unseen")


def control_shift(backend: str, points: Sequence[tuple[Sequence[float], Sequence[float]]],
                  alpha: float) -> ControlShift | None:
    """The control's shift from each of its points' (base replicate medians, head replicate medians), in ms.

    Per point d = mean log head - mean log base; the shift is exp(mean d). Its standard error is the larger of
    the replicates' pooled run-to-run noise (as a point's test has it) and the spread of d between the points;
    the degrees of freedom are those of the one used. None when no point has a median on both sides."""
    from scipy import stats as st

    logs = [(np.log([x for x in b if x and x > 0]), np.log([x for x in h if x and x > 0])) for b, h in points]
    logs = [(b, h) for b, h in logs if b.size and h.size]
    if not logs:
        return None
    d = np.array([h.mean() - b.mean() for b, h in logs])
    shift = float(d.mean())
    n = d.size
    sigma, df_w = between_run_sigma([np.exp(x) for pair in logs for x in pair])
    options: list[tuple[float, int]] = []
    if sigma is not None:
        options.append((sigma * math.sqrt(sum(1 / b.size + 1 / h.size for b, h in logs)) / n, df_w))
    if n >= 2:
        options.append((float(d.std(ddof=1)) / math.sqrt(n), n - 1))
    noise = None if sigma is None else math.expm1(sigma)
    if not options:
        return ControlShift(backend, n, math.exp(shift), 0.0, math.inf, 1.0, None, False)
    se, df = max(options)
    if se > 0:
        tcrit = float(st.t.ppf(1.0 - alpha, df))
        p = float(2.0 * st.t.sf(abs(shift) / se, df))
    else:  # every replicate identical
        tcrit, p = 0.0, (1.0 if shift == 0 else 0.0)
    return ControlShift(backend, n, math.exp(shift), math.exp(shift - tcrit * se), math.exp(shift + tcrit * se), p,
                        noise, p < alpha)
