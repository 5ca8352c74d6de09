"""The SM-budget study as tables: each problem's rows per backend and budget, the winner per budget, each
library's auto-CP regret against its pinned settings, and where each kernel stops scaling with SMs.

A row's SMs are those its green context was granted (`sm_granted`); a row of the whole GPU (no budget, or a
budget of the whole device) counts the device's SMs. Only problems with at least one budget row are studied.
The libraries plan their CP for the device's SMs whatever the budget (they read `multi_processor_count`),
so the regret at a budget is what that plan costs there. Nothing here measures: rows in, tables out.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

import pandas as pd

from qlabench.analyze.kit.labels import heads_label, sequences_label
from qlabench.analyze.kit.ties import is_tie
from qlabench.core import identity
from qlabench.core.errors import QlabenchError
from qlabench.core.backend_decl import AUTO_CHOICES
from qlabench.store.keys import key_series, key_value

# A kernel "uses" its SMs down to the smallest budget whose time is within this of its whole-GPU time:
# below it, taking SMs away costs time (a kernel that fills few SMs stops scaling early).
SCALING_SLACK = 0.10


@dataclass(frozen=True)
class BudgetStudy:
    rows: pd.DataFrame  # one row per (problem, backend, sms): the newest believed row
    winners: pd.DataFrame  # per (problem, sms)
    regret: pd.DataFrame  # per (library, problem, sms): auto time / best pinned time
    scaling: pd.DataFrame  # per (problem, backend): ms at each SM count, the SMs it can use, its extra memory
    sources: tuple[str, ...] = field(default=())

    @property
    def budgets(self) -> list[int]:
        return sorted(int(s) for s in self.rows["sms"].unique())

    def summary_line(self) -> str:
        counts = self.rows["status"].value_counts().to_dict()
        status = ", ".join(f"{n} {s}" for s, n in counts.items())
        return (f"{len(self.rows)} rows ({status}) of {_n(self.rows['problem'].nunique(), 'problem')} at "
                f"{len(self.budgets)} SM counts ({', '.join(map(str, self.budgets))})")


def _n(n: int, noun: str) -> str:
    return f"{n} {noun}{'s' * (n != 1)}"


def _sms(r: dict) -> int | None:
    granted, budget, device = (key_value(r.get(c)) for c in ("sm_granted", "sm_budget", "num_sms"))
    for v in (granted, budget, device):
        if v is not None and v == v:
            return int(v)
    return None


def problem_label(r: dict) -> str:
    """'fwd qwen3.5-397b TP8 (h2/8) 32x1024 packed': the problem without its budget."""
    return f"{r['mode']} {heads_label(r)} {sequences_label({**r, 'sm_budget': None})}"


def budget_frame(df: pd.DataFrame) -> pd.DataFrame:
    """The rows of the problems that have a budget row, with their problem label and SM count."""
    if df.empty or "sm_budget" not in df or not df["sm_budget"].notna().any():
        raise QlabenchError("no row here was held to an SM budget (sm_budget); measure qlabench/suites/sm-budget.toml")
    axes = [a for a in identity.problem_axes() if a not in ("backend", "sm_budget")]
    d = df.assign(problem_key=key_series(df, axes))
    d = d[d["problem_key"].isin(set(d.loc[d["sm_budget"].notna(), "problem_key"]))]
    recs = d.to_dict("records")
    d = d.assign(sms=[_sms(r) for r in recs],
                 problem=[problem_label(r) for r in recs],
                 budgeted=d["sm_budget"].notna())
    d = d[d["sms"].notna()]
    # a budget of the whole device and a whole-GPU row are one SM count: the budget row is the study's
    d = d.sort_values(["budgeted", "timestamp"]).drop_duplicates(["problem_key", "backend", "sms"], keep="last")
    cols = ["problem", "problem_key", "mode", "backend", "sms", "sm_budget", "status", "reason", "median_ms",
            "rel_noise", "extra_mem_mib", "outside_mem_mib", "run_id"]
    return d[[c for c in cols if c in d]].sort_values(["problem", "backend", "sms"]).reset_index(drop=True)


def winners(d: pd.DataFrame) -> pd.DataFrame:
    """Per (problem, SM count): the fastest ok backend, its time and extra memory, the runner-up and margin;
    `winner` reads 'tie: A, B' where the runner-up is within the rows' measured noise (kit/ties.py)."""
    out = []
    for (problem, sms), g in d[d["status"] == "ok"].groupby(["problem", "sms"], sort=True):
        g = g.sort_values("median_ms")
        best = g.iloc[0]
        second = g.iloc[1] if len(g) > 1 else None
        tied = [b for b, ms, n in zip(g["backend"], g["median_ms"], g.get("rel_noise", [None] * len(g)))
                if is_tie(best["median_ms"], ms, best.get("rel_noise"), n)]
        out.append({"problem": problem, "SMs": int(sms),
                    "winner": best["backend"] if len(tied) < 2 else "tie: " + ", ".join(tied),
                    "ms": best["median_ms"], "extra MiB": best.get("extra_mem_mib"),
                    "runner-up": second["backend"] if second is not None else "-",
                    "margin": second["median_ms"] / best["median_ms"] if second is not None else None})
    return pd.DataFrame(out)


def regret(d: pd.DataFrame) -> pd.DataFrame:
    """Per library that decides its own CP (core's AUTO_CHOICES), problem and SM count: its auto time, each
    pinned setting's, and regret = auto / the best pinned (above 1: its plan, made for the whole GPU, loses)."""
    ok = d[d["status"] == "ok"]
    out = []
    for choice in AUTO_CHOICES:
        names = [choice.auto] + [b for _, b in choice.pinned]
        for (problem, sms), g in ok[ok["backend"].isin(names)].groupby(["problem", "sms"], sort=True):
            ms = dict(zip(g["backend"], g["median_ms"]))
            pinned = {s: ms.get(b) for s, b in choice.pinned}
            timed = {s: v for s, v in pinned.items() if v is not None}
            if choice.auto not in ms or not timed:
                continue
            best = min(timed, key=timed.get)
            out.append({"library": choice.library, "problem": problem, "SMs": int(sms), "auto ms": ms[choice.auto],
                        **{f"{s} ms": v for s, v in pinned.items()}, "best pinned": best,
                        "regret": ms[choice.auto] / timed[best]})
    return pd.DataFrame(out)


def scaling(d: pd.DataFrame) -> pd.DataFrame:
    """Per (problem, backend): ms at each SM count; `saturates at`, the fewest SMs at which it is still within
    SCALING_SLACK of its time on the most SMs measured (more SMs than that do not help it: about what the
    kernel can use); and the most extra device memory its calls took (inside and outside torch's allocator)."""
    ok = d[d["status"] == "ok"]
    out = []
    for (problem, backend), g in ok.groupby(["problem", "backend"], sort=True):
        by = dict(zip(g["sms"].astype(int), g["median_ms"]))
        most = max(by)
        within = [s for s, ms in by.items() if ms <= by[most] * (1 + SCALING_SLACK)]
        rec = {"problem": problem, "backend": backend, **{f"{s} SMs": by.get(s) for s in sorted(by, reverse=True)},
               "saturates at": f"{min(within)} SMs" if len(by) > 1 else "-",
               "extra MiB": g["extra_mem_mib"].max() if "extra_mem_mib" in g else None,
               "outside MiB": g["outside_mem_mib"].max() if "outside_mem_mib" in g else None}
        out.append(rec)
    return pd.DataFrame(out)


def build_budget_study(df: pd.DataFrame, sources: Iterable[str] = ()) -> BudgetStudy:
    """The study of believed rows (QlabenchError when none was held to a budget)."""
    d = budget_frame(df)
    return BudgetStudy(rows=d, winners=winners(d), regret=regret(d), scaling=scaling(d),
                       sources=tuple(str(s) for s in sources))


def budget_from_paths(paths: Iterable) -> BudgetStudy:
    """build_budget_study over result files or folders (the newest row per point, believed)."""
    from qlabench.analyze.evidence import believed, read_evidence

    paths = list(paths)
    return build_budget_study(believed(read_evidence(paths).rows), sources=paths)
