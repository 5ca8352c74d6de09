"""How far apart two measurements of one call can be, measured, and what that does to a ranking.

A row's own noise (its samples' IQR over their median, ~0.3% on an H200 graph replay) says how precisely one
sampling read one call; it does not say how far two measurements of the same call land apart. Those differ
by more: on the H200, two points of one run where a library's own choice took the very path its pinned
setting forces (the same kernels, the same call) differed by a median 0.3-0.8% and up to 5.4%. Ranking on row
noise alone calls such pairs different.

So every answer reads a same-call floor off its own rows (`same_call_floor`): the pairs of rows of one run and
one point of a library's settings of one call (its auto setting and those that pin it: core/backend_decl.py
auto_choices) whose calls took the same traced path, the same kernels, and the 95th percentile of their
relative gaps. Other backends of the library (another call: vLLM's arguments, the fused gate) are no pair. Ties,
"slower" caveats and winners then use the larger of an entry's own noise (with its replicates' spread) and
that floor (`apply_floor`). A winner that another run of these rows orders the other way is a tie too
(`order_flips`).

The same call measured in fresh processes lands further apart still where it is launch-bound: FlashQLA's training
step at 2/8 read 1.19-1.68 ms eagerly in four processes on one H100, a standalone loop 1.15-1.64 ms in three
(docs/BENCHMARKS.md, 'Three times'), each process's own noise a few percent. So an entry measured in more than one
process at its point (the replicates of its run, and every other current run of the same setting and version)
takes the range of those measurements as its noise where it is wider (`between_processes`), and says so.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from qlabench.analyze.answer.ranking import Entry, row_path
from qlabench.core.backend_decl import auto_choices
from qlabench.core.identity import key_axes
from qlabench.analyze.evidence.records import detail
from qlabench.core.launch import TIME_COLUMN, unprimed_eager

MIN_PAIRS = 5  # fewer same-call pairs than this give no floor (the rows' own noise then stands alone)


@dataclass(frozen=True)
class SameCall:
    """The spread of same-call pairs in a set of rows: its 95th percentile is the floor."""

    floor: float | None
    pairs: int
    median: float | None = None
    largest: float | None = None

    def note(self) -> str | None:
        if self.floor is None:
            return None
        return (f"ties: two times within {self.floor:.1%} are a tie here (the 95th percentile of {self.pairs} pairs "
                f"of rows of one call measured twice in one run, device times: median {self.median:.2%}, largest "
                f"{self.largest:.1%})")


def _pair_gaps(rows: pd.DataFrame, column: str) -> list[float]:
    keys = [c for c in key_axes() if c in rows and c != "backend"]
    setting_of = {name: c.auto for c in auto_choices() for name in (c.auto, *(n for _, n in c.pinned))}
    # forward calls of a library's settings of one call: where the traced path (a forward kernel's CP mark) says
    # which kernels ran
    ok = rows[(rows["status"] == "ok") & rows[column].notna() & (rows["mode"] == "fwd")
              & rows["backend"].isin(list(setting_of))]
    if ok.empty:
        return []
    extras = ok["extra_json"] if "extra_json" in ok else [None] * len(ok)
    kernels = ok["kernels"] if "kernels" in ok else [None] * len(ok)
    path = pd.Series([row_path(b, x, k) for b, x, k in zip(ok["backend"], extras, kernels)], index=ok.index)
    ok = ok[path.notna()]
    if ok.empty:
        return []
    # one text key per (run, setting's call, path, point): the pairs are the backends measured under one key
    parts = [ok["run_id"].astype(str), ok["backend"].map(setting_of), path[ok.index]] + [
        ok[k].map(lambda v: str(tuple(v)) if hasattr(v, "__len__") and not isinstance(v, str) else str(v))
        for k in keys if k not in ("run_id", "mode")]
    key = parts[0].str.cat(parts[1:], sep="|")
    medians = ok.groupby([key, ok["backend"]])[column].median()
    gaps = []
    for _, times in medians.groupby(level=0):
        vals = sorted(float(v) for v in times)
        gaps += [vals[j] / vals[i] - 1 for i in range(len(vals)) for j in range(i + 1, len(vals))]
    return gaps


def same_call_floor(rows: pd.DataFrame, launch: str) -> SameCall:
    """The same-call spread of `rows` (no floor below MIN_PAIRS pairs), read off their device times whatever the
    regime ranked in: the same kernels are the same device work, but not the same host work (a pinned setting's
    own host code, FlashQLA's and FlashInfer's forced CP, launches them at another cost), so an eager gap between
    two settings on one path is a difference, not a re-measurement. In the eager regime each entry's own eager
    noise stands beside the floor (apply_floor takes the larger)."""
    column = TIME_COLUMN["graph"]
    if rows.empty or column not in rows:
        return SameCall(None, 0)
    gaps = _pair_gaps(rows, column)
    if len(gaps) < MIN_PAIRS:
        return SameCall(None, len(gaps))
    a = np.asarray(gaps)
    return SameCall(float(np.percentile(a, 95)), len(gaps), float(np.median(a)), float(a.max()))


def apply_floor(entries: list[Entry], floor: float | None) -> None:
    """Every ranked entry's noise becomes the larger of its own and the floor (its own kept as own_noise)."""
    if floor is None:
        return
    for e in entries:
        if e.ok:
            e.rel_noise = max(e.rel_noise or 0.0, floor)


def order_flips(a: Entry, b: Entry, rows: pd.DataFrame, launch: str) -> list[str]:
    """The runs of `rows` (one case's problem, every run) in which both `a` and `b` have ok times and `b` is
    faster: there, the order of the two is the other way."""
    column = TIME_COLUMN[launch]
    if column not in rows:
        return []
    ok = rows[(rows["status"] == "ok") & rows["backend"].isin([a.backend, b.backend]) & rows[column].notna()]
    flips = []
    for run, g in ok.groupby("run_id"):
        t = g.groupby("backend")[column].median()
        if a.backend in t and b.backend in t and t[b.backend] < t[a.backend]:
            flips.append(str(run))
    return sorted(flips)


def between_processes(entries: list[Entry], rows: pd.DataFrame, launch: str) -> list[str]:
    """Widen each ranked entry's noise to the range of its time over the processes that measured its call at this
    point (`rows`: one problem's rows of the ranked regime and version, every run; a run's replicates are fresh
    processes), the eager times of the probe before it primed its bursts left out (they read high for a reason
    of the method, launch_probe.py). One note names the entries it widened."""
    column = TIME_COLUMN[launch]
    if rows.empty or column not in rows:
        return []
    ok = rows[(rows["status"] == "ok") & rows[column].notna()]
    if launch == "eager" and "extra_json" in ok:
        ok = ok[pd.Series([not unprimed_eager(detail(raw, "eager_launch")) for raw in ok["extra_json"]],
                          index=ok.index, dtype=bool)]
    replicate = ok["replicate"].fillna(-1) if "replicate" in ok else pd.Series(-1, index=ok.index)
    per = ok.assign(_rep=replicate).groupby(["backend", "mode", "run_id", "_rep"])[column].median()
    widened = []
    for e in entries:
        if not e.ok or not e.modes or (e.backend, e.modes[0]) not in per.index:
            continue
        times = per.loc[(e.backend, e.modes[0])]
        if len(times) < 2:
            continue
        lo, hi, mid = float(times.min()), float(times.max()), float(times.median())
        e.processes, e.process_range = len(times), (lo, hi)
        spread = (hi - lo) / mid if mid > 0 else 0.0
        if spread > (e.rel_noise or 0.0):
            e.rel_noise = spread
            widened.append(f"{e.backend} {lo:.3f}-{hi:.3f} ms in {len(times)} ({spread:.1%})")
    if not widened:
        return []
    return [f"spread: measured in fresh processes here, {'; '.join(widened)}: wider than its rows' own noise, so "
            "its ties and caveats use that range"]
