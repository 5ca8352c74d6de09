"""Who wins a serving step, and where that changes: from the rows of serving_frame (frame.py).

Only usable rows compete (ok, timed, at most 100% of the bandwidth limit); a variant that is skipped,
incorrect or errored at a point is named beside the winner, never ranked.
"""

from __future__ import annotations

import math

import pandas as pd

GROUP_KEYS = ("group", "panel", "mode", "T", "state_dtype", "context")


def _groups(d: pd.DataFrame):
    return d.groupby(list(GROUP_KEYS), sort=False, dropna=False)


def winners(d: pd.DataFrame) -> pd.DataFrame:
    """One row per (group, batch): the fastest usable variant, its time, %HBM, TB/s and L2 hint, the
    runner-up and margin (runner-up time / winner time), `tie` where the margin is within the two rows'
    noise (rel_noise), and the variants that did not compete with their status."""
    recs = []
    # The variants that ran at each (mode, T, state dtype), in any group: one missing from a group's batch
    # was not measured there (a run cut short). The naive references are sanity points at a few batches by
    # design (qlabench/suites/serving.toml), so their absence is no gap.
    ran_at = (d[(d["status"] != "skipped") & ~d["variant"].str.startswith("naive-")]
              .groupby(["mode", "T", "state_dtype"], dropna=False)["variant"].agg(set))
    for key, g in _groups(d):
        k = dict(zip(GROUP_KEYS, key))
        ran = ran_at.get((k["mode"], k["T"], k["state_dtype"]), set())
        for batch, b in g.groupby("batch", sort=True):
            ok = b[b["usable"]].sort_values("time_ms", kind="stable")
            out = b[~b["usable"]]
            # a variant the group has at other batches but not here (a run cut short): not measured
            missing = sorted(ran - set(b["variant"]))
            rec = dict(zip(GROUP_KEYS, key), batch=int(batch), winner=None, ms=math.nan, pct_hbm=math.nan,
                       tbs=math.nan, l2_resident=None, runner_up=None, margin=math.nan, tie=None,
                       competed=len(ok),
                       not_competing=", ".join(f"{v} ({_why(r)})" for v, r in zip(out["variant"], out.itertuples())),
                       # variants that ran here and failed (a skip is a variant that does not apply): the
                       # winner won without them, which the ranges say
                       failed=", ".join([f"{v} {_why(r)}" for v, r in zip(out["variant"], out.itertuples())
                                         if r.status != "skipped"] + [f"{v} not measured" for v in missing]),
                       failed_variants=tuple(v for v, st in zip(out["variant"], out["status"]) if st != "skipped")
                       + tuple(missing))
            if len(ok):
                w = ok.iloc[0]
                rec.update(winner=w["variant"], ms=w["time_ms"], pct_hbm=w["pct_hbm"], tbs=w["tbs"],
                           l2_resident=w["l2_resident"])
                if len(ok) > 1:
                    r = ok.iloc[1]
                    rec.update(runner_up=r["variant"], margin=r["time_ms"] / w["time_ms"])
                    noise = [x for x in (w["rel_noise"], r["rel_noise"]) if _finite(x)]
                    rec["tie"] = bool(rec["margin"] - 1 <= max(noise)) if noise else None
            recs.append(rec)
    return pd.DataFrame(recs)


def _why(r) -> str:
    return "above 100% of the limit" if r.over_peak and r.status == "ok" else str(r.status)


def _finite(x) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)


def crossings(d: pd.DataFrame, w: pd.DataFrame | None = None) -> pd.DataFrame:
    """Per group, every place the winner changes between two measured batches: the batches either side, the
    winners before and after, and `at_about`: the batch where the two curves cross, interpolated on log-log
    axes from both variants' times at the two batches (null when either lacks a usable time there). Batches
    whose winner ties with its runner-up are passed over: a tie is no winner to change from; so is a change
    where one of the two variants failed (errored, incorrect) or was not measured at the other's batch."""
    w = winners(d) if w is None else w
    recs = []
    if w.empty:
        return pd.DataFrame()
    # A batch whose winner is within noise of its runner-up (`tie`) has no winner to change from or to.
    decided = w[w["winner"].notna() & (w["tie"] != True)]  # noqa: E712 (None: no runner-up, still decided)
    for key, g in decided.groupby(list(GROUP_KEYS), sort=False, dropna=False):
        g = g.sort_values("batch")
        rows = list(g.itertuples())
        times = d[(d["group"] == key[0]) & d["usable"]].set_index(["variant", "batch"])["time_ms"]
        for a, b in zip(rows, rows[1:]):
            if a.winner == b.winner:
                continue
            # One of the two failed at the other's batch: the winner changed because a row is missing
            # there, not because the curves crossed (the ranges name the failure).
            if b.winner in (a.failed_variants or ()) or a.winner in (b.failed_variants or ()):
                continue
            recs.append(dict(zip(GROUP_KEYS, key), from_batch=a.batch, to_batch=b.batch, before=a.winner,
                             after=b.winner, at_about=_cross(times, a.winner, b.winner, a.batch, b.batch)))
    return pd.DataFrame(recs, columns=[*GROUP_KEYS, "from_batch", "to_batch", "before", "after", "at_about"])


def _cross(times: pd.Series, before: str, after: str, b1: int, b2: int) -> float:
    """Batch where log(t_after / t_before) reaches 0, linear in log(batch) between b1 and b2."""
    try:
        r1 = math.log(times[(after, b1)] / times[(before, b1)])
        r2 = math.log(times[(after, b2)] / times[(before, b2)])
    except (KeyError, TypeError, ValueError, ZeroDivisionError):
        return math.nan
    if r1 == r2 or r1 < 0 or r2 > 0:
        return math.nan
    f = r1 / (r1 - r2)
    return math.exp(math.log(b1) + f * (math.log(b2) - math.log(b1)))


def winner_ranges(w: pd.DataFrame) -> pd.DataFrame:
    """One row per group: the winners as batch ranges ('1-16 fla-recurrent [kv]; 64-1024 ...') and the best
    %HBM at the largest batch any variant won: the at-a-glance line of the console and the page. A batch where
    a variant errored, failed its check or was not measured (it was at other batches of the group) says so
    beside its winner ('(unranked: X error)'): the winner is the fastest of the rest, not of all."""
    recs = []
    if w.empty:
        return pd.DataFrame()
    for key, g in w.groupby(list(GROUP_KEYS), sort=False, dropna=False):
        g = g.sort_values("batch")
        spans, cur = [], None
        for r in g.itertuples():
            name = ("no usable row" if pd.isna(r.winner)
                    else f"{r.winner} ~ {r.runner_up} (tie)" if r.tie is True else r.winner)
            if getattr(r, "failed", ""):
                name += f" (unranked: {r.failed})"
            if cur and cur[0] == name:
                cur[2] = r.batch
            else:
                cur = [name, r.batch, r.batch]
                spans.append(cur)
        won = g[g["winner"].notna()]
        last = won.iloc[-1] if len(won) else None
        recs.append(dict(zip(GROUP_KEYS, key),
                         winners="; ".join(f"{lo if lo == hi else f'{lo}-{hi}'}: {n}" for n, lo, hi in spans),
                         largest_batch=None if last is None else int(last["batch"]),
                         pct_hbm_at_largest=math.nan if last is None else last["pct_hbm"],
                         l2_at_largest=None if last is None else last["l2_resident"],
                         ms_at_largest=math.nan if last is None else last["ms"]))
    return pd.DataFrame(recs)


def not_ok(d: pd.DataFrame) -> pd.DataFrame:
    """Rows that never win: skipped, incorrect or errored, with their reason."""
    cols = ["group", "batch", "variant", "status", "reason"]
    return d[d["status"] != "ok"][cols].reset_index(drop=True)


def over_peak(d: pd.DataFrame) -> pd.DataFrame:
    """Rows above 100% of the bandwidth limit: bugs (a byte model that undercounts, a kernel that skipped
    work, states served from L2); their check fails them, so they are listed here with the reason."""
    cols = ["group", "batch", "variant", "status", "pct_hbm", "median_ms", "bytes_moved", "l2_resident", "reason"]
    return d[d["over_peak"]][cols].reset_index(drop=True)
