"""Verdicts for one matched pair, and the policy that decides which verdicts fail a gate.

A timing verdict needs two independent pieces of evidence to call a change: the bootstrap interval
of the ratio of medians must lie entirely beyond the threshold, and the Mann-Whitney U test must
reject "same distribution" at `alpha`. Anything short of that is `same` (the whole interval lies
inside the threshold band) or `ambiguous` (it does not). See docs/GATING.md.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from qlabench.core.errors import QlabenchError
from qlabench.analyze.compare.stats import PairStats


class Verdict(str, enum.Enum):
    FASTER = "faster"
    SLOWER = "slower"
    SAME = "same"
    AMBIGUOUS = "ambiguous"  # not enough evidence either way: too few samples, or the CI straddles a threshold
    MISSING = "missing"  # in base, not in head
    NEW = "new"  # in head, not in base
    STATUS_CHANGED = "status changed"
    NOT_TIMED = "not timed"  # neither side has a time (both skipped / failed alike): nothing to compare


class Failure(str, enum.Enum):
    """What a pair counts as for `--fail-on`. A pair with no failure kind never fails a gate."""

    REGRESSION = "regression"  # slower beyond the threshold, significantly
    STATUS = "status"  # ok -> incorrect or ok -> error
    MISSING = "missing"  # a measured point is gone: not in head, or ok -> skipped
    AMBIGUOUS = "ambiguous"
    SHIFT = "shift"  # with drift correction: the whole head run is slower beyond the threshold


DEFAULT_FAIL_ON = frozenset({Failure.REGRESSION, Failure.STATUS})
FAILED_STATUSES = ("incorrect", "error")


@dataclass(frozen=True)
class CompareOptions:
    threshold: float = 0.05  # relative change below which a difference does not matter
    alpha: float = 0.01  # significance level of the test and of each one-sided CI bound
    min_samples: int = 5  # fewer samples on either side than this: ambiguous (MWU cannot reach alpha=0.01 below 5)
    drift: bool = False  # judge each point relative to the suite-wide shift (drift.py)

    def __post_init__(self) -> None:
        if not 0 < self.threshold < 1:
            raise QlabenchError(f"--threshold must be between 0 and 1 (a fraction, 0.05 = 5%), got {self.threshold}")
        if not 0 < self.alpha < 0.5:
            raise QlabenchError(f"--alpha must be between 0 and 0.5, got {self.alpha}")
        if self.min_samples < 2:
            raise QlabenchError(f"--min-samples must be at least 2, got {self.min_samples}")


def parse_fail_on(text: str) -> frozenset[Failure]:
    """'regression,status,missing' -> the failure kinds; an empty string means never fail."""
    kinds = set()
    for part in (p.strip() for p in text.split(",")):
        if not part:
            continue
        try:
            kinds.add(Failure(part))
        except ValueError:
            allowed = ", ".join(f.value for f in Failure)
            raise QlabenchError(f"--fail-on: unknown kind {part!r} (allowed: {allowed})") from None
    return frozenset(kinds)


def timing_verdict(s: PairStats, opt: CompareOptions) -> tuple[Verdict, str]:
    """(verdict, why) for two ok rows with samples."""
    up, down = 1.0 + opt.threshold, 1.0 / (1.0 + opt.threshold)
    ci = f"CI [{s.ci_low:.3f}, {s.ci_high:.3f}]"
    if min(s.n_base, s.n_head) < opt.min_samples:
        return Verdict.AMBIGUOUS, f"too few samples ({s.n_base} base, {s.n_head} head; need {opt.min_samples})"
    significant = s.p_value < opt.alpha
    if s.ci_low > up and significant:
        return Verdict.SLOWER, f"{ci} above {up:.3f}, p={s.p_value:.2g}"
    if s.ci_high < down and significant:
        return Verdict.FASTER, f"{ci} below {down:.3f}, p={s.p_value:.2g}"
    if s.ci_low >= down and s.ci_high <= up:
        return Verdict.SAME, f"{ci} within ±{opt.threshold:.0%}"
    if s.ci_low > up or s.ci_high < down:
        return Verdict.AMBIGUOUS, f"{ci} beyond the threshold but p={s.p_value:.2g} >= alpha={opt.alpha:g}"
    return Verdict.AMBIGUOUS, f"{ci} straddles ±{opt.threshold:.0%}"


def status_verdict(base_status: str, head_status: str) -> tuple[Verdict, str, Failure | None]:
    """Verdict for a pair where at least one side is not ok."""
    change = f"{base_status} -> {head_status}"
    if base_status == head_status:
        return Verdict.NOT_TIMED, f"{head_status} on both sides", None
    if base_status == "ok" and head_status in FAILED_STATUSES:
        return Verdict.STATUS_CHANGED, change, Failure.STATUS
    if base_status == "ok":  # ok -> skipped: the measurement is lost, not wrong
        return Verdict.STATUS_CHANGED, change, Failure.MISSING
    return Verdict.STATUS_CHANGED, change, None


def failure_of(verdict: Verdict) -> Failure | None:
    return {Verdict.SLOWER: Failure.REGRESSION, Verdict.MISSING: Failure.MISSING,
            Verdict.AMBIGUOUS: Failure.AMBIGUOUS}.get(verdict)
