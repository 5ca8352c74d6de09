"""Verdicts for one matched pair, and the policy that decides which verdicts fail a gate.

A timing verdict needs two pieces of evidence to call a change: the interval of the ratio must lie
entirely beyond the threshold, and the test must reject "no change" at `alpha`. Anything short of
that is `same` (the whole interval lies inside the threshold band) or `ambiguous` (it does not).

With the between-run method (the default, stats.run_stats) the threshold is the point's *effective*
threshold max(t, c * sigma_between, host floor): a point whose run-to-run noise puts its floor above
t is `inconclusive` at t unless it moved beyond the floor itself, and is never called `slower` by
noise. With one run per side the run-to-run noise is unknown: a change is never called, and one beyond
the threshold is `inconclusive` too. An inconclusive point is not a pass: the comparison exits with its
own code (EXIT_INCONCLUSIVE) unless the user accepts it. See docs/GATING.md.
"""

from __future__ import annotations

import enum
import math
from dataclasses import dataclass

from qlabench.core.errors import QlabenchError
from qlabench.analyze.compare.control import HOST_SHIFT_ACTIONS
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
    # the gate cannot see its threshold here: the point's run-to-run noise floor is above it, or unknown (one run
    # per side) while the change is beyond it, or the host moved under it (a refused host shift, control.py)
    INCONCLUSIVE = "inconclusive"


class Failure(str, enum.Enum):
    """What a pair counts as for `--fail-on`. A pair with no failure kind never fails a gate."""

    REGRESSION = "regression"  # slower beyond the threshold, significantly
    STATUS = "status"  # ok -> incorrect or ok -> error
    MISSING = "missing"  # a measured point is gone: not in head, or ok -> skipped
    AMBIGUOUS = "ambiguous"
    SHIFT = "shift"  # with drift correction: the whole head run is slower beyond the threshold
    NOISE = "noise"  # an inconclusive point (its run-to-run noise is above the threshold): exit 1, not 3


# A kernel that vanishes is a failure: ok -> skipped ("backend not available") or a point not in head at all
# fails by default, as ok -> incorrect / error does; a gate that passed it would pass a deleted kernel.
DEFAULT_FAIL_ON = frozenset({Failure.REGRESSION, Failure.STATUS, Failure.MISSING})
MAX_NOISE_FACTOR = 10.0  # a floor of 10 SDs already hides any change the data could show
MAX_MIN_SAMPLES = 1_000_000  # no run keeps more samples than this (timing.max_samples is far below)
FAILED_STATUSES = ("incorrect", "error")

# What `compare`, `gate` and `ab` exit with (docs/GATING.md, "Exit codes"), most severe first.
EXIT_PASS = 0
EXIT_FAIL = 1  # a failure under --fail-on
EXIT_NOT_COMPARED = 2  # nothing compared (no point timed on both sides), a refused host shift, or a usage error
EXIT_INCONCLUSIVE = 3  # every judged point passed but some are inconclusive, and --accept-inconclusive was not given


@dataclass(frozen=True)
class CompareOptions:
    # Relative change below which a difference does not matter. 3%, from the H200 power study (docs/GATING.md,
    # "H200, 2026-11-30"): at 3% every true +5% point was `slower` on the first pass (40 of 40) while the A/A
    # arms stayed clean (0 false `slower` of 40 synthetic and of 114 real points); at 5% a true +5% sat on the
    # threshold and was confirmed on 2 of 40. A noisy point is still protected by its own floor (noise_factor).
    threshold: float = 0.03
    alpha: float = 0.01  # significance level of the test and of each one-sided CI bound
    min_samples: int = 5  # fewer samples on either side than this: ambiguous (MWU cannot reach alpha=0.01 below 5)
    drift: bool = False  # judge each point relative to the suite-wide shift (drift.py)
    method: str = "runs"  # "runs": between-run statistics (stats.run_stats); "samples": the old per-call method
    noise_factor: float = 3.0  # c: the noise floor is c * sigma_between (the run-to-run SD of a log median)
    host_floor: float = 0.10  # the floor when base and head come from different hosts (and no interleaving)
    control: str | None = None  # an unchanged backend timed on both sides: a host shift beyond its noise (control.py)
    host_shift: str = "normalise"  # what a host shift beyond the control's noise does: normalise or refuse

    def __post_init__(self) -> None:
        # Every bound is finite: `--noise-factor inf` made every floor infinite (a 10x slowdown passed as
        # "not gateable") and 1e300 overflowed exp(); NaN fails every comparison below, so it is refused too.
        if not 0 < self.threshold < 1:
            raise QlabenchError(f"--threshold must be between 0 and 1 (a fraction, 0.05 = 5%), got {self.threshold}")
        if not 0 < self.alpha < 0.5:
            raise QlabenchError(f"--alpha must be between 0 and 0.5, got {self.alpha}")
        if not 2 <= self.min_samples <= MAX_MIN_SAMPLES:
            raise QlabenchError(f"--min-samples must be between 2 and {MAX_MIN_SAMPLES}, got {self.min_samples}")
        if self.method not in ("runs", "samples"):
            raise QlabenchError(f"--method must be runs or samples, got {self.method!r}")
        if not 0 < self.noise_factor <= MAX_NOISE_FACTOR:
            raise QlabenchError(f"--noise-factor must be in (0, {MAX_NOISE_FACTOR:g}] (a multiple of the run-to-run "
                                f"SD; 3 is the default), got {self.noise_factor}")
        if not 0 <= self.host_floor < 1:
            raise QlabenchError(f"--host-floor must be between 0 and 1 (a fraction), got {self.host_floor}")
        if self.host_shift not in HOST_SHIFT_ACTIONS:
            raise QlabenchError(f"--host-shift must be one of {', '.join(HOST_SHIFT_ACTIONS)}, got {self.host_shift!r}")
        if self.control and self.drift:  # both would divide the head's times by a shift
            raise QlabenchError("--drift-correct and a control (--control) both divide the head's times by a shift: "
                                "choose one")


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


def _ladder(s: PairStats, opt: CompareOptions, t: float, *, note: str = "", above: str = "",
            inconclusive: str = "") -> tuple[Verdict, str]:
    """The one decision ladder: a change needs the interval beyond 1 +- t AND p < alpha; then, unless the
    point is `inconclusive` (its floor above the threshold), same or ambiguous. `note` ends every reason;
    `above` replaces "above <bound>" in a slower one."""
    up, down = 1.0 + t, 1.0 / (1.0 + t)
    ci = f"CI [{s.ci_low:.3f}, {s.ci_high:.3f}]"
    significant = s.p_value < opt.alpha
    if s.ci_low > up and significant:
        return Verdict.SLOWER, f"{ci} {above or f'above {up:.3f}'}, p={s.p_value:.2g}{note}"
    if s.ci_high < down and significant:
        return Verdict.FASTER, f"{ci} below {down:.3f}, p={s.p_value:.2g}{note}"
    if inconclusive:
        return Verdict.INCONCLUSIVE, inconclusive
    if s.ci_low >= down and s.ci_high <= up:
        return Verdict.SAME, f"{ci} within ±{opt.threshold:.0%}{note}"
    if s.ci_low > up or s.ci_high < down:
        return Verdict.AMBIGUOUS, f"{ci} beyond the threshold but p={s.p_value:.2g} >= alpha={opt.alpha:g}{note}"
    return Verdict.AMBIGUOUS, f"{ci} straddles ±{opt.threshold:.0%}{note}"


def timing_verdict(s: PairStats, opt: CompareOptions) -> tuple[Verdict, str]:
    """(verdict, why) for two ok rows with samples (the per-sample method, or one run per side)."""
    if min(s.n_base, s.n_head) < opt.min_samples:
        return Verdict.AMBIGUOUS, f"too few samples ({s.n_base} base, {s.n_head} head; need {opt.min_samples})"
    return _ladder(s, opt, opt.threshold)


def noise_floor(s: PairStats, opt: CompareOptions) -> float | None:
    """The point's noise floor as a relative change (exp(c * sigma) - 1), None when sigma is unknown."""
    return None if s.sigma_between is None else math.expm1(opt.noise_factor * s.sigma_between)


def run_verdict(s: PairStats, opt: CompareOptions, min_floor: float = 0.0,
                floor_why: str = "baseline from another host") -> tuple[Verdict, str]:
    """(verdict, why) from between-run statistics (s.method == "runs"); `min_floor` raises the threshold
    (opt.host_floor for a baseline from another host; the uncertainty of a control's shift that the head was
    divided by), and `floor_why` says what raised it."""
    runs = (f"{s.runs_base}+{s.runs_head} runs" + (", paired by round" if s.paired else "")
            + (", raised to the suite's median" if s.suite_sigma else ""))
    if s.sigma_between is None:
        v, why = timing_verdict(s, opt)
        if v in (Verdict.SLOWER, Verdict.FASTER):  # a change the gate cannot size against its noise
            return Verdict.INCONCLUSIVE, (f"{s.ratio - 1:+.1%} within the runs, but one run per side: the "
                                          "run-to-run noise is unknown (measure with --replicates K)")
        return v, why + "; one run per side"
    floor = noise_floor(s, opt)
    t_eff = max(opt.threshold, floor, min_floor)
    noise = f"run-to-run noise {math.expm1(s.sigma_between):.1%} ({runs})"
    inconclusive = ""
    if t_eff > opt.threshold:
        why = noise if floor >= min_floor else f"{floor_why}, floor {min_floor:.1%}; {noise}"
        inconclusive = f"inconclusive at {opt.threshold:.0%} here: {why}"
    return _ladder(s, opt, t_eff, note=f"; {noise}", inconclusive=inconclusive,
                   above=f"beyond this point's noise floor {t_eff:.1%}" if t_eff > opt.threshold else "")


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
            Verdict.AMBIGUOUS: Failure.AMBIGUOUS, Verdict.INCONCLUSIVE: Failure.NOISE}.get(verdict)
