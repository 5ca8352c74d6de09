"""`qlabench gate`: run a suite, compare it with a baseline, and re-run what looks slower to confirm it.

A noisy machine (a shared GPU, a throttling CPU, a neighbour's job) can slow one point for the few
hundred milliseconds it is sampled, and no per-point statistic can tell that from a regression: the
samples are honestly slower. What tells them apart is repetition. So, as PyTorch's HUD asks for two
consecutive violations, the gate re-measures every point judged `slower` (`confirm` times, fresh
samples each time) and keeps it a regression only if every re-run is judged `slower` too; a point
that does not reproduce becomes `ambiguous`, which is shown but does not fail by default.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from qlabench.core.errors import QlabenchError, RunIncompleteError
from qlabench.core.point import Point
from qlabench.core.spec import Suite
from qlabench.store.files import read_results
from qlabench.analyze.compare.comparison import Comparison, PairResult, compare_frames
from qlabench.store.keys import key_value
from qlabench.analyze.compare.match import POINT_KEY, normalized_rows, point_key, rows_by_key
from qlabench.analyze.compare.verdict import DEFAULT_FAIL_ON, CompareOptions, Failure, Verdict


@dataclass
class GateResult:
    comparison: Comparison
    run_paths: list[Path]  # the head run, then any confirmation re-runs
    confirmed: int = 0  # slower points that reproduced on every re-run
    dismissed: int = 0  # slower points that did not


def suite_point_keys(suite: Suite) -> set[str]:
    return {point_key(p.key()) for p in suite.points}


def point_of(row: dict) -> Point:
    return Point(**{f.name: key_value(row[f.name]) for f in dataclasses.fields(Point)})


def _run(suite: Suite, out_root, run_sweep_kwargs: dict) -> Path:
    from qlabench.run.sweep import run_sweep  # torch is imported only when a gate actually runs

    res = run_sweep(suite, out_root, **run_sweep_kwargs)
    if res.path is None:
        raise QlabenchError(f"suite {suite.name!r}: the run measured no points, so there is nothing to gate")
    if res.not_run:  # a gate judges every point: points it did not measure fail it, never pass as missing
        raise RunIncompleteError(f"suite {suite.name!r}: {res.not_run} point(s) were not measured (rows so far: "
                                 f"{res.path}); a gate needs all of them")
    return Path(res.path)


def _reconcile(first: PairResult, reruns: list[PairResult | None]) -> PairResult:
    changes = ", ".join(f"{r.change:+.1%}" if r is not None and r.change is not None else "n/a" for r in reruns)
    if all(r is not None and r.verdict is Verdict.SLOWER for r in reruns):
        return dataclasses.replace(first, reason=f"{first.reason}; reproduced on re-run ({changes})")
    return dataclasses.replace(first, verdict=Verdict.AMBIGUOUS, failure=Failure.AMBIGUOUS,
                               reason=f"slower at first ({first.change:+.1%}) but not on re-run ({changes}): "
                                      "noise, or a regression near the threshold")


def run_gate(suite: Suite, baseline: Iterable[str | os.PathLike], out_root: str | os.PathLike,
             options: CompareOptions | None = None, *, fail_on=DEFAULT_FAIL_ON, allow_env_mismatch: bool = False,
             confirm: int = 1, **run_sweep_kwargs) -> GateResult:
    """Run `suite`, compare with the baseline rows of its points, confirm slow points by re-running them.

    `run_sweep_kwargs` go to runner.run_sweep (device, timer, progress, ...).
    """
    if confirm < 0:
        raise QlabenchError(f"--confirm must be >= 0, got {confirm}")
    baseline = list(baseline)
    base = read_results(baseline)
    keys = suite_point_keys(suite)
    base = base[[point_key(r[c] for c in POINT_KEY) in keys for r in normalized_rows(base)]]
    if base.empty:
        raise QlabenchError(f"baseline {', '.join(map(str, baseline))} has no rows for the points of suite "
                            f"{suite.name!r}")
    paths = [_run(suite, out_root, run_sweep_kwargs)]
    kw = dict(fail_on=fail_on, allow_env_mismatch=allow_env_mismatch,
              base_label=", ".join(map(str, baseline)), head_label=str(paths[0]))
    head = read_results(paths)
    cmp = compare_frames(base, head, options, **kw)
    suspects = {p.key: p for p in cmp.pairs if p.verdict is Verdict.SLOWER}
    reruns: dict[str, list[PairResult | None]] = {k: [] for k in suspects}
    rows = rows_by_key(head)
    for _ in range(confirm if suspects else 0):
        sub = dataclasses.replace(suite, points=tuple(point_of(rows[k]) for k in suspects))
        paths.append(_run(sub, out_root, run_sweep_kwargs))
        again = compare_frames(base, read_results(paths[-1:]), options, shift=cmp.shift, **kw)
        by_key = {p.key: p for p in again.pairs if p.base_status is not None}
        for k in suspects:
            reruns[k].append(by_key.get(k))
    if not confirm or not suspects:
        return GateResult(cmp, paths)
    pairs = [_reconcile(p, reruns[p.key]) if p.key in suspects else p for p in cmp.pairs]
    confirmed = sum(1 for p in pairs if p.key in suspects and p.verdict is Verdict.SLOWER)
    note = (f"{len(suspects)} slower point(s) re-measured {confirm} time(s): {confirmed} reproduced, "
            f"{len(suspects) - confirmed} did not (now ambiguous)")
    cmp = dataclasses.replace(cmp, pairs=pairs, notes=cmp.notes + (note,))
    return GateResult(cmp, paths, confirmed, len(suspects) - confirmed)
