"""`qlabench gate`: run a suite, compare it with a baseline, and confirm what looks slower.

The head run measures every point in `replicates` fresh-process replicates (run sweep --replicates),
so the comparison's statistics rest on the variation between runs, not within one (docs/GATING.md).

A saved baseline was measured at another time: the host may have moved since (load, clocks). A control, a
backend of the suite the change leaves alone (`--control`, by default the suite's `baseline` backend), is timed
on both sides, and a shift of it beyond its noise is divided out or refused (analyze/compare/control.py).

Confirmation re-measures base AND head: a suspect (a point judged `slower`) is re-measured in an
interleaved A/B (workflows/ab.py) of the base code (`base_ref`: a git ref or a Python environment)
against the current one, `confirm` times, and stays a regression only if every A/B calls it `slower`
too; otherwise it becomes `ambiguous`. Re-measuring the head alone against the same stale baseline
"confirms" whatever made the baseline run fast or slow, so without a `base_ref` nothing is re-measured
and a note says the verdicts are unconfirmed.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from qlabench.core.errors import ConfigError, QlabenchError, RunIncompleteError
from qlabench.core.point import Point
from qlabench.core.spec import Suite
from qlabench.run.options import IN_PROCESS_REPLICATES, RunOptions
from qlabench.store.files import read_results
from qlabench.analyze.compare.comparison import Comparison, PairResult, compare_frames
from qlabench.analyze.compare.match import normalized_rows, row_key, rows_by_key
from qlabench.store.keys import key_value, point_key
from qlabench.analyze.compare.verdict import DEFAULT_FAIL_ON, CompareOptions, Failure, Verdict

DEFAULT_REPLICATES = 3
MAX_CONFIRM = 20  # confirmation A/Bs: each re-measures base and head `replicates` rounds
MAX_REPLICATES = 100  # a gate's head run: beyond this the gate is a study, not a CI step


@dataclass
class GateResult:
    comparison: Comparison
    run_paths: list[Path]  # the head run, then any confirmation A/B runs
    confirmed: int = 0  # slower points that reproduced in every confirmation A/B
    dismissed: int = 0  # slower points that did not
    # each re-measured point's verdicts in the confirmation A/Bs (None: the A/B had no time for it)
    reruns: dict[str, list[PairResult | None]] = dataclasses.field(default_factory=dict)


def suite_point_keys(suite: Suite) -> set[str]:
    return {point_key(p.key()) for p in suite.points}


def _run(suite: Suite, out_root, run: RunOptions, progress) -> Path:
    from qlabench.run.sweep import run_sweep  # torch is imported only when a gate actually runs

    res = run_sweep(suite, out_root, run, progress=progress)
    if res.path is None:
        raise QlabenchError(f"suite {suite.name!r}: the run measured no points, so there is nothing to gate")
    if res.not_run:  # a gate judges every point: points it did not measure fail it, never pass as missing
        raise RunIncompleteError(f"suite {suite.name!r}: {res.not_run} point(s) were not measured (rows so far: "
                                 f"{res.path}); a gate needs all of them")
    return Path(res.path)


def check_baseline_env(base, suite: Suite, run: RunOptions, allow_env_mismatch: bool) -> None:
    """Before anything is measured: EnvMismatchError when this machine (its GPU model, its libraries' major
    versions) cannot be compared with the baseline's rows, as the comparison after the run would say."""
    import pandas as pd

    from qlabench.analyze.compare.envguard import check_env, env_diff
    from qlabench.measure.env import capture
    from qlabench.run.sweep import resolve_device

    here = capture(resolve_device(run.device or suite.device))
    check_env(env_diff(base, pd.DataFrame([here])), allow_env_mismatch)


def _reconcile(first: PairResult, reruns: list[PairResult | None]) -> PairResult:
    # each A/B's change and verdict: a big change the A/B could not call (inconclusive on a noisy box) reads
    # differently from one it measured as the same
    changes = ", ".join(f"{r.change:+.1%} {r.verdict.value}" if r is not None and r.change is not None else "n/a"
                        for r in reruns)
    if all(r is not None and r.verdict is Verdict.SLOWER for r in reruns):
        return dataclasses.replace(first, reason=f"{first.reason}; reproduced in an interleaved A/B of base and "
                                                 f"head ({changes})")
    return dataclasses.replace(first, verdict=Verdict.AMBIGUOUS, failure=Failure.AMBIGUOUS,
                               reason=f"slower at first ({first.change:+.1%}) but not in an interleaved A/B of "
                                      f"base and head ({changes}): noise, or a regression near the threshold")


def with_control(suite: Suite, base, options: CompareOptions) -> tuple[CompareOptions, str | None]:
    """The options with the gate's control, and a note where it has none. A named control must be a backend of
    the suite (ConfigError before anything runs); by default the suite's `baseline` backend is, where the suite
    measures it and the baseline holds an ok row of it, and no control is taken with --drift-correct."""
    backends = {p.backend for p in suite.points}
    if options.control:
        if options.control not in backends:
            raise ConfigError(f"--control {options.control}: not a backend of suite {suite.name!r} "
                              f"({', '.join(sorted(backends))}); a control is timed on both sides, so the suite and "
                              "its baseline must measure it")
        return options, None
    if options.drift:
        return options, None
    name = suite.baseline
    if name and name in backends and ((base["backend"] == name) & (base["status"] == "ok")).any():
        return dataclasses.replace(options, control=name), None
    return options, ("no control: a change of the host between the baseline and this run (load, clocks) cannot be "
                     "told from a change of the code; measure the suite's `baseline` backend in it and its baseline, "
                     "or name a backend the change leaves alone with --control")


def check_gate_options(confirm: int, replicates: int) -> None:
    """QlabenchError for a confirmation count or replicate count out of range: checked before any sweep."""
    if not 0 <= confirm <= MAX_CONFIRM:
        raise QlabenchError(f"--confirm must be between 0 and {MAX_CONFIRM}, got {confirm}")
    if not 1 <= replicates <= MAX_REPLICATES:
        raise QlabenchError(f"--replicates must be between 1 and {MAX_REPLICATES}, got {replicates}")


def run_gate(suite: Suite, baseline: Iterable[str | os.PathLike], out_root: str | os.PathLike,
             options: CompareOptions | None = None, *, fail_on=DEFAULT_FAIL_ON, allow_env_mismatch: bool = False,
             confirm: int = 1, replicates: int = DEFAULT_REPLICATES, base_ref: str | None = None,
             repo: str | os.PathLike = ".", history: Iterable[str | os.PathLike] = (), run: RunOptions | None = None,
             progress=None, accept_inconclusive: bool = False) -> GateResult:
    """Run `suite` (`replicates` replicates), compare with the baseline rows of its points, and confirm
    slow points by an interleaved A/B of `base_ref` against the current code.

    history: stored A/A runs of the suite on this runner pool (they add to each point's noise floor).
    run: how the head run (and any confirmation) measures (device, timer, ...); its replicates are
    `replicates`. A baseline from another GPU model is refused before anything runs.
    options.control (default: the suite's `baseline` backend, with_control): timed on both sides, a host shift
    beyond its noise is normalised or refused. accept_inconclusive: inconclusive points pass (exit 0, not 3).
    """
    check_gate_options(confirm, replicates)
    if run is not None and run.in_process:
        raise ConfigError("refusing to gate an in-process run: " + IN_PROCESS_REPLICATES)
    run = dataclasses.replace(run or RunOptions(), replicates=replicates)
    baseline = list(baseline)
    base = read_results(baseline)
    keys = suite_point_keys(suite)
    base = base[[row_key(r) in keys for r in normalized_rows(base)]]
    if base.empty:
        raise QlabenchError(f"baseline {', '.join(map(str, baseline))} has no rows for the points of suite "
                            f"{suite.name!r}")
    others = sorted(set(map(str, base["suite"].dropna())) - {suite.name}) if "suite" in base.columns else []
    if others and suite.name not in set(base["suite"].dropna()):
        raise QlabenchError(f"baseline {', '.join(map(str, baseline))} is of suite {', '.join(others)}, not "
                            f"{suite.name!r}: a baseline of another suite measures its points another way")
    check_baseline_env(base, suite, run, allow_env_mismatch)
    options, no_control = with_control(suite, base, options or CompareOptions())
    history = list(history)
    paths = [_run(suite, out_root, run, progress)]
    kw = dict(fail_on=fail_on, allow_env_mismatch=allow_env_mismatch, accept_inconclusive=accept_inconclusive,
              base_label=", ".join(map(str, baseline)), head_label=str(paths[0]))
    head = read_results(paths)
    cmp = compare_frames(base, head, options, history=read_results(history) if history else None, **kw)
    if no_control:
        cmp = dataclasses.replace(cmp, notes=cmp.notes + (no_control,))
    suspects = {p.key: p for p in cmp.pairs if p.verdict is Verdict.SLOWER}
    if not confirm or not suspects:
        return GateResult(cmp, paths)
    if base_ref is None:
        note = (f"{len(suspects)} slower point(s) not re-measured: confirmation re-measures base and head "
                "together, which needs the base code (--base-ref REF or a Python environment)")
        return GateResult(dataclasses.replace(cmp, notes=cmp.notes + (note,)), paths)
    from qlabench.workflows.ab import CURRENT, run_ab, variant

    rows = rows_by_key(head)
    sub = dataclasses.replace(suite, points=tuple(Point.from_row(rows[k], key_value) for k in suspects))
    reruns: dict[str, list[PairResult | None]] = {k: [] for k in suspects}
    with variant(base_ref, repo) as a, variant(CURRENT) as b:
        for i in range(confirm):
            # paired by round, so no control (the suspects rarely include it)
            ab = run_ab(sub, a, b, Path(out_root) / f"confirm-{paths[0].stem}-{i}", max(replicates, 2),
                        dataclasses.replace(options, control=None), fail_on=fail_on, progress=progress,
                        run=dataclasses.replace(run, replicates=1))
            paths += ab.run_paths
            by_key = {p.key: p for p in ab.comparison.pairs if p.base_status is not None}
            for k in suspects:
                reruns[k].append(by_key.get(k))
    pairs = [_reconcile(p, reruns[p.key]) if p.key in suspects else p for p in cmp.pairs]
    confirmed = sum(1 for p in pairs if p.key in suspects and p.verdict is Verdict.SLOWER)
    note = (f"{len(suspects)} slower point(s) re-measured in {confirm} interleaved A/B(s) of {base_ref} (base) "
            f"and the current code (head): {confirmed} reproduced, {len(suspects) - confirmed} did not (now ambiguous)")
    cmp = dataclasses.replace(cmp, pairs=pairs, notes=cmp.notes + (note,))
    return GateResult(cmp, paths, confirmed, len(suspects) - confirmed, reruns)
