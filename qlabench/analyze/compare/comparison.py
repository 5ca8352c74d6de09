"""Comparing two result sets: pair the rows, judge each pair, and summarise. No rendering here.

`compare_frames` is the whole computation; `compare_paths` reads files or folders first. The result
is a `Comparison`, which the renderers (render.py) turn into a terminal table, markdown or JSON, and
whose `exit_code` the CLI returns.
"""

from __future__ import annotations

import dataclasses
import math
import os
import statistics
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field

import pandas as pd

from qlabench.analyze.evidence.belief import believed
from qlabench.analyze.evidence.tree import read_evidence
from qlabench.analyze.kit.labels import gate_label_of, heads_label, layout_label
from qlabench.core.errors import StoreError
from qlabench.analyze.compare.control import ControlShift, control_shift
from qlabench.analyze.compare.drift import Shift, shift_verdict, suite_shift
from qlabench.analyze.compare.envguard import EnvField, check_env, env_diff
from qlabench.analyze.compare.kernels import kernel_change
from qlabench.analyze.compare.match import Pair, match_rows, normalized_rows, only_backends, row_key
from qlabench.analyze.compare.stats import PairStats, geometric_mean, pair_stats, run_stats
from qlabench.analyze.compare.verdict import (
    DEFAULT_FAIL_ON,
    EXIT_FAIL,
    EXIT_INCONCLUSIVE,
    EXIT_NOT_COMPARED,
    EXIT_PASS,
    CompareOptions,
    Failure,
    Verdict,
    failure_of,
    run_verdict,
    status_verdict,
    timing_verdict,
)


@dataclass(frozen=True)
class PairResult:
    """The judgement of one point."""

    key: str
    label: str  # short human name of the point
    backend: str
    mode: str
    timer: str | None
    base_status: str | None
    head_status: str | None
    verdict: Verdict
    reason: str
    failure: Failure | None  # what this pair counts as for --fail-on (None: never fails)
    stats: PairStats | None = None
    kernels: str | None = None  # how the per-kernel breakdown differs (kernels.py), both sides ok

    @property
    def change(self) -> float | None:
        """Relative change of the median time (+0.07 = 7% slower), if both sides were timed."""
        return self.stats.ratio - 1.0 if self.stats else None


@dataclass(frozen=True)
class Comparison:
    pairs: list[PairResult]
    env: list[EnvField]
    options: CompareOptions
    fail_on: frozenset[Failure] = DEFAULT_FAIL_ON
    base_label: str = "base"
    head_label: str = "head"
    notes: tuple[str, ...] = field(default=())  # e.g. what a gate's confirmation re-run changed
    shift: Shift | None = None  # suite-wide head/base shift (estimated when options.drift is on)
    control: ControlShift | None = None  # how far options.control moved, and whether it normalised or refused
    accept_inconclusive: bool = False  # inconclusive points pass (exit 0) instead of exit 3

    @property
    def shift_fails(self) -> bool:
        return (self.options.drift and Failure.SHIFT in self.fail_on
                and shift_verdict(self.shift, self.options.threshold)[0])

    @property
    def counts(self) -> dict[str, int]:
        c = Counter(p.verdict.value for p in self.pairs)
        return {v.value: c.get(v.value, 0) for v in Verdict}

    @property
    def timed(self) -> list[PairResult]:
        return [p for p in self.pairs if p.stats is not None]

    @property
    def geomean_ratio(self) -> float | None:
        """Geometric mean of head/base median ratios over every timed pair (> 1: slower overall)."""
        return geometric_mean([p.stats.ratio for p in self.timed])

    def fails(self, p: PairResult) -> bool:
        return p.failure is not None and p.failure in self.fail_on

    @property
    def failures(self) -> list[PairResult]:
        return [p for p in self.pairs if self.fails(p)]

    @property
    def inconclusive(self) -> list[PairResult]:
        """Points the gate could not judge at its threshold (not counted as failures)."""
        return [p for p in self.pairs if p.verdict is Verdict.INCONCLUSIVE and not self.fails(p)]

    @property
    def refused(self) -> bool:
        """A host shift beyond the control's noise made the comparison judge no time."""
        return self.control is not None and self.control.action == "refused"

    @property
    def exit_code(self) -> int:
        """1 on a failure; else 2 when no point was timed on both sides (nothing compared is not a pass,
        e.g. against a baseline whose rows are all `error`) or a host shift was refused; else 3 when some
        point is inconclusive and that was not accepted; else 0 (docs/GATING.md, "Exit codes")."""
        if self.failures or self.shift_fails:
            return EXIT_FAIL
        if not self.timed or self.refused:
            return EXIT_NOT_COMPARED
        if self.inconclusive and not self.accept_inconclusive:
            return EXIT_INCONCLUSIVE
        return EXIT_PASS

    def worst(self, n: int | None = None) -> list[PairResult]:
        """Failures first, then status changes, then the largest slowdowns; `n` rows at most."""
        def rank(p: PairResult):
            return (not self.fails(p), p.verdict is not Verdict.STATUS_CHANGED, -(p.change if p.change is not None else -1e9))
        ranked = sorted(self.pairs, key=rank)
        return ranked if n is None else ranked[:n]


def point_label(row: dict) -> str:
    parts = [row["backend"], row["mode"], heads_label(row), layout_label(row), f"K{row['K']}V{row['V']}",
             row["dtype"], f"gate={gate_label_of(row)}"]
    if row.get("seed"):
        parts.append(f"seed={row['seed']}")
    if row.get("initial_state") is False:
        parts.append("no-h0")
    return " ".join(str(p) for p in parts)


def _samples(row: dict) -> tuple[float, ...]:
    return tuple(row.get("samples_ms") or ((row["median_ms"],) if row.get("median_ms") is not None else ()))


def _unit_median(row: dict) -> float | None:
    """One replicate's number: the median of its samples (its stored median when it kept none)."""
    s = row.get("samples_ms")
    return float(statistics.median(s)) if s else row.get("median_ms")


NOT_BELIEVED = "_not_believed"  # a row the evidence layer's rule turned from ok into error or incorrect


def with_belief(df: pd.DataFrame) -> pd.DataFrame:
    """`df` under the evidence layer's one rule for a believed row (evidence/belief.py: a time that is a number,
    the median of its samples and possible on its device, a check recorded and within tolerance, no reason on
    an ok row): a row that fails it becomes what it is, `error` or `incorrect` with the reason, and is marked."""
    judged = believed(df)
    if judged is df:
        return df
    return judged.assign(**{NOT_BELIEVED: (df["status"] == "ok") & (judged["status"] != "ok")})


def _shown_rep(row: dict | None, reps: tuple[dict, ...]) -> dict | None:
    """The row a side is judged by: a replicate the rule did not believe, where there is one (one impossible
    replicate is not outvoted by the others: the side is not believed), else its newest row."""
    return next((r for r in reps if r.get(NOT_BELIEVED)), row)


def _units(reps: tuple[dict, ...], like: dict) -> list[dict]:
    """The ok replicates comparable with `like` (same timer), by replicate index."""
    ok = [r for r in reps if r["status"] == "ok" and r.get("timer") == like.get("timer")]
    return sorted(ok, key=lambda r: (r.get("replicate") is None, r.get("replicate") or 0)) or [like]


@dataclass(frozen=True)
class Context:
    """What a pair's verdict needs beyond its own rows."""

    history: dict[str, list[float]] = field(default_factory=dict)  # point key -> A/A replicate medians
    min_floor: float = 0.0  # raised threshold (a baseline from another host)
    paired: bool = False  # replicates of both sides measured round by round (an interleaved A/B)
    min_sigma: float = 0.0  # the suite's median run-to-run noise: no point's is taken as smaller
    floor_why: str = "baseline from another host"  # what raised min_floor, as a reason says it
    scale_why: str = "the suite-wide shift"  # what the head was divided by, where it was


def judge(pair: Pair, opt: CompareOptions, scale: float = 1.0, ctx: Context | None = None) -> PairResult:
    """The verdict of one pair; with `scale` != 1 the head samples are divided by it (drift correction)."""
    ctx = ctx or Context()
    row = pair.any_row
    b, h = _shown_rep(pair.base, pair.base_reps), _shown_rep(pair.head, pair.head_reps)
    common = dict(key=pair.key, label=point_label(row), backend=row["backend"], mode=row["mode"],
                  timer=row.get("timer"), base_status=b["status"] if b else None, head_status=h["status"] if h else None)
    if h is None:
        return PairResult(**common, verdict=Verdict.MISSING, reason="not in head", failure=Failure.MISSING)
    if b is None:
        return PairResult(**common, verdict=Verdict.NEW, reason="not in base", failure=None)
    if b["status"] != "ok" or h["status"] != "ok":
        verdict, reason, failure = status_verdict(b["status"], h["status"])
        if h["status"] != "ok" and h.get("reason"):
            reason += f": {h['reason']}"
        elif b["status"] != "ok" and b.get(NOT_BELIEVED):
            reason += f": base {b['reason']}"
        return PairResult(**common, verdict=verdict, reason=reason, failure=failure)
    if opt.method == "samples":
        bs, hs = _samples(b), [x / scale for x in _samples(h)]
        s = pair_stats(bs, hs, opt.alpha)
        verdict, reason = timing_verdict(s, opt)
    else:
        bu, hu = _units(pair.base_reps or (b,), b), _units(pair.head_reps or (h,), h)
        bs = [x for r in bu for x in _samples(r)]
        hs = [x / scale for r in hu for x in _samples(r)]
        paired = ctx.paired and [r.get("replicate") for r in bu] == [r.get("replicate") for r in hu]
        s = run_stats([_unit_median(r) for r in bu], [_unit_median(r) / scale for r in hu], opt.alpha,
                      history=[ctx.history[pair.key]] if pair.key in ctx.history else (), paired=paired,
                      min_sigma=ctx.min_sigma, samples=(bs, hs))
        verdict, reason = run_verdict(s, opt, 0.0 if paired else ctx.min_floor, ctx.floor_why)
    if scale != 1.0:
        reason = f"relative to {ctx.scale_why} {scale - 1:+.1%}: {reason}"
    return PairResult(**common, verdict=verdict, reason=reason, failure=failure_of(verdict), stats=s,
                      kernels=kernel_change(b, h, scale))


def history_medians(history: pd.DataFrame | None) -> dict[str, list[float]]:
    """Per point, the replicate medians of stored A/A history (every ok row of every run: the spread
    between them includes the differences between sessions)."""
    if history is None or history.empty:
        return {}
    out: dict[str, list[float]] = {}
    for r in normalized_rows(with_belief(history)):
        if r["status"] == "ok" and (m := _unit_median(r)) is not None:
            out.setdefault(row_key(r), []).append(m)
    return out


# No exit code here: a comparison that compared nothing may still fail (exit 1, a point's status changed); the
# summary line says the one code the command exits with (render.summary_line).
NO_TIMED_NOTE = ("no point has an ok time on both sides: nothing was compared, which is never a pass; "
                 "is the baseline (or the head) a run whose rows all failed?")
MIN_SUITE_POINTS = 5  # fewer points with a run-to-run estimate than this: no suite-wide floor


def _suite_sigma(pairs: list[PairResult]) -> float:
    """The median run-to-run noise over the points that have one (0 when fewer than MIN_SUITE_POINTS).

    Run-to-run noise is mostly a property of the machine and the session, shared by the points of a
    suite; one point's estimate from 3 + 3 replicates has 4 degrees of freedom and comes out small by
    chance often enough to matter over hundreds of points. So no point's noise is taken as smaller than
    the suite's median (partial pooling): on a quiet GPU that median is ~0.2% and changes nothing; on a
    loaded CPU whose worker processes run in two speed modes 20-40x apart it keeps a point whose six
    replicates happened to split 3 fast / 3 slow from being called `slower`.
    """
    sig = sorted(p.stats.sigma_between for p in pairs
                 if p.stats is not None and p.stats.method == "runs" and p.stats.sigma_between is not None)
    return float(statistics.median(sig)) if len(sig) >= MIN_SUITE_POINTS else 0.0


def check_same_suite(base: pd.DataFrame, head: pd.DataFrame, base_label: str = "base",
                     head_label: str = "head") -> None:
    """StoreError where the two sides' rows name suites and no suite is on both sides: a baseline of another
    suite holds other points, or the same points measured another way (timer, regime, check), so its pairs
    would judge the method, not the code."""
    suites = [set(map(str, df["suite"].dropna())) if "suite" in df.columns else set() for df in (base, head)]
    if all(suites) and not (suites[0] & suites[1]):
        raise StoreError(f"base {base_label} holds suite {', '.join(sorted(suites[0]))} and head {head_label} suite "
                         f"{', '.join(sorted(suites[1]))}: a baseline of another suite is not compared (pass "
                         "--allow-other-suite to compare them anyway)")


def compare_frames(base: pd.DataFrame, head: pd.DataFrame, options: CompareOptions | None = None, *,
                   fail_on: Iterable[Failure] = DEFAULT_FAIL_ON, allow_env_mismatch: bool = False,
                   base_label: str = "base", head_label: str = "head", shift: Shift | None = None,
                   history: pd.DataFrame | None = None, paired: bool = False,
                   allow_other_suite: bool = False, accept_inconclusive: bool = False) -> Comparison:
    """Judge every point of `head` against `base`. Raises EnvMismatchError (see envguard.py).

    With `options.drift`, points are judged relative to the suite-wide shift: `shift` if given (a
    gate's confirmation re-run of a few points reuses the full run's), else estimated from these pairs.
    history: stored A/A runs of the same points on the same runner pool; they add to each point's
    run-to-run noise estimate (between-run method only).
    paired: base and head replicates were measured alternately, round by round (`qlabench ab`).
    options.control: a backend whose code the change leaves alone, timed on both sides: a host shift beyond its
    noise is divided out or refused (`options.host_shift`; control.py); StoreError where it has no point timed on
    both sides. accept_inconclusive: inconclusive points pass (exit 0 rather than 3).
    A base from another host than the head is judged with the floor `options.host_floor` (unless
    paired), and a note says so. A base of another suite is refused (check_same_suite) unless
    `allow_other_suite`.
    """
    opt = options or CompareOptions()
    for side, df, label in (("base", base, base_label), ("head", head, head_label)):
        if df.empty:  # checked before the environments: an empty side is "no rows", not "another environment"
            raise StoreError(f"{side} {label}: no rows, nothing to compare")
    if not allow_other_suite:
        check_same_suite(base, head, base_label, head_label)
    diff = env_diff(base, head)
    check_env(diff, allow_env_mismatch)
    notes: tuple[str, ...] = ()
    # Another machine: another host name, or, where both sides recorded it, another physical GPU (two cloud
    # instances of one model are often both called `vm`, and differ by 7-8%: docs/GATING.md).
    hosts = next((f for f in diff if f.name == "host" and f.base and f.head), None)
    hosts = hosts or next((f for f in diff if f.name == "gpu_uuid" and f.base and f.head), None)
    min_floor = 0.0
    if hosts is not None and not paired and opt.method == "runs":
        min_floor = opt.host_floor
        notes += (f"baseline from another {'GPU' if hosts.name == 'gpu_uuid' else 'host'} ({', '.join(hosts.base)} -> "
                  f"{', '.join(hosts.head)}): not trusted at "
                  f"face value; timing verdicts use a floor of {min_floor:.0%}. To gate tighter, re-measure both "
                  "sides interleaved on one machine (`qlabench ab`, or `gate --base-ref`).",)
    ctx = Context(history=history_medians(history), min_floor=min_floor, paired=paired)
    matched = match_rows(with_belief(base), with_belief(head))
    if not any(m.base is not None and m.head is not None for m in matched):
        raise StoreError(f"base {base_label} and head {head_label} have no point in common ({len(base)} and "
                         f"{len(head)} rows): nothing was compared, which is not a pass")
    pairs = [judge(p, opt, ctx=ctx) for p in matched]
    suite_sigma = _suite_sigma(pairs)
    if suite_sigma:
        ctx = dataclasses.replace(ctx, min_sigma=suite_sigma)
        pairs = [judge(m, opt, ctx=ctx) if p.stats is not None else p for m, p in zip(matched, pairs)]
    control = None
    if opt.control:
        pairs, control = _apply_control(matched, pairs, opt, ctx)
        notes += (control.describe(),)
    if opt.drift:
        shift = shift or suite_shift([p.stats.ratio for p in pairs if p.stats is not None], opt.alpha)
        if shift is not None:
            pairs = [judge(m, opt, shift.ratio, ctx) if p.stats is not None else p for m, p in zip(matched, pairs)]
    if not any(p.stats is not None for p in pairs):
        notes += (NO_TIMED_NOTE,)
    return Comparison(pairs=pairs, env=diff, options=opt, fail_on=frozenset(fail_on), notes=notes,
                      base_label=base_label, head_label=head_label, shift=shift if opt.drift else None,
                      control=control, accept_inconclusive=accept_inconclusive)


def _apply_control(matched: list[Pair], pairs: list[PairResult], opt: CompareOptions,
                   ctx: Context) -> tuple[list[PairResult], ControlShift]:
    """The control's shift (control.py) and the pairs as it leaves them. Paired by round (an A/B): unchanged. A
    shift beyond the control's noise is divided out of every head time, or, with host_shift "refuse", no time
    is judged. Every verdict then needs its change beyond what the host may have moved unseen (cs.unseen)."""
    points = []
    for m, p in zip(matched, pairs):
        if p.backend == opt.control and p.stats is not None:
            b, h = _shown_rep(m.base, m.base_reps), _shown_rep(m.head, m.head_reps)
            points.append(([_unit_median(r) for r in _units(m.base_reps or (b,), b)],
                           [_unit_median(r) for r in _units(m.head_reps or (h,), h)]))
    cs = control_shift(opt.control, points, opt.alpha)
    if cs is None:
        raise StoreError(f"control {opt.control}: no point of it has an ok time on both sides, so a change of the "
                         "host between them cannot be seen; time it on both sides (add it to the suite and the "
                         "baseline) or name another with --control")
    if ctx.paired:
        return pairs, cs
    if cs.beyond_noise and opt.host_shift == "refuse":
        cs = dataclasses.replace(cs, action="refused")
        why = (f"not judged: the host moved between base and head (control {cs.backend} "
               f"{cs.ratio - 1:+.1%}, beyond its noise)")
        return [dataclasses.replace(p, verdict=Verdict.INCONCLUSIVE, failure=None, reason=f"{why}; {p.reason}")
                if p.stats is not None else p for p in pairs], cs
    scale = 1.0
    if cs.beyond_noise:
        cs, scale = dataclasses.replace(cs, action="normalised"), cs.ratio
        ctx = dataclasses.replace(ctx, scale_why=f"the host shift its control {cs.backend} measured")
    if cs.unseen > ctx.min_floor:
        ctx = dataclasses.replace(ctx, min_floor=cs.unseen,
                                  floor_why=f"a host shift control {cs.backend} cannot rule out")
    return [judge(m, opt, scale, ctx) if p.stats is not None else p for m, p in zip(matched, pairs)], cs


def read_results(paths: list) -> pd.DataFrame:
    """Every run's rows of `paths` through the evidence layer (a run read from two files that disagree is
    refused; a copy counts once); matching keeps each side's newest run per point itself (match.py)."""
    return read_evidence(paths, all_runs=True).rows


def compare_paths(base: Iterable[str | os.PathLike], head: Iterable[str | os.PathLike], options=None,
                  history: Iterable[str | os.PathLike] = (), backends: str | Iterable[str] | None = None,
                  **kwargs) -> Comparison:
    """`compare_frames` of the rows read from `base` and `head` (and `history`); `backends` (a comma list or names):
    only these backends' rows on both sides (a version A/B of one library beside other libraries' rows)."""
    base, head, history = list(base), list(head), list(history)
    if history:
        kwargs["history"] = read_results(history)
    kwargs.setdefault("base_label", ", ".join(map(str, base)))
    kwargs.setdefault("head_label", ", ".join(map(str, head)))
    return compare_frames(only_backends(read_results(base), backends, "base"),
                          only_backends(read_results(head), backends, "head"), options, **kwargs)
