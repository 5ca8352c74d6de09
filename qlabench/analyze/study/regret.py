"""Auto-CP regret: how much FlashQLA's automatic intra-card CP decision cost against the better fixed one.

regret = auto time / min(nocp time, forcecp time) on the same point and stack, from ok rows only, and
only where all three ran ok. Above 1 the automatic decision lost (by that factor); 1 means it picked the
faster of the two fixed choices.

The three times of one ratio come from one run on one GPU where the results hold such a set, since the
same point moves by a few percent between runs and GPUs (enough to move a regret across 1.10). Where
they do not, the ratio takes one run on several GPUs, else several runs, and `mixes` says which.
"""

from __future__ import annotations

import pandas as pd

from qlabench.analyze.evidence.records import grouped_records
from qlabench.analyze.study.prepare import FLASH_QLA_VARIANTS
from qlabench.store.keys import plain_value

_POINT = ["stack", "study_key", "mode", "heads", "h_qk", "h_v", "sequences", "seqkey", "total_tokens", "num_seqs",
          "gate_label", "gate_zero_frac_eff", "gate_scale_eff"]
# run_id: the run of the three times ('A + B' when mixed); mixes: None when one run on one GPU, else which
# run and GPU each time comes from.
COLUMNS = _POINT + ["auto_ms", "nocp_ms", "forcecp_ms", "auto_cp", "best", "regret", "run_id", "mixes"]
VARIANTS = ("auto", "nocp", "forcecp")


def _device(r) -> str:
    d = plain_value(r.get("device_index"))
    return "?" if d is None else str(int(d))


def _newest(rows: list[dict]) -> dict[str, dict]:
    """variant -> its newest row among `rows`."""
    out: dict[str, dict] = {}
    for r in sorted(rows, key=lambda r: str(r["timestamp"])):
        out[FLASH_QLA_VARIANTS[r["backend"]]] = r
    return out


def consistent_set(recs: list[dict]) -> tuple[dict[str, dict], str | None] | None:
    """The auto / nocp / forcecp rows of one point that one ratio may take, and what they mix.

    Preference: one run on one GPU, then one run on several GPUs, then several runs; within each, the
    newest run. None when some variant has no row.
    """
    by_run: dict[str, list[dict]] = {}
    for r in recs:
        by_run.setdefault(str(r["run_id"]), []).append(r)
    runs = sorted(by_run, key=lambda run: max(str(r["timestamp"]) for r in by_run[run]), reverse=True)
    for run in runs:
        by_dev: dict[str, list[dict]] = {}
        for r in by_run[run]:
            by_dev.setdefault(_device(r), []).append(r)
        for dev_rows in by_dev.values():
            chosen = _newest(dev_rows)
            if len(chosen) == len(VARIANTS) and _device(chosen["auto"]) != "?":
                return chosen, None
    for run in runs:
        chosen = _newest(by_run[run])
        if len(chosen) == len(VARIANTS):
            return chosen, "GPUs of one run: " + ", ".join(f"{v} GPU {_device(chosen[v])}" for v in VARIANTS)
    chosen = _newest(recs)
    if len(chosen) < len(VARIANTS):
        return None
    return chosen, "runs: " + ", ".join(f"{v} {chosen[v]['run_id']} GPU {_device(chosen[v])}" for v in VARIANTS)


def regret_table(rows: pd.DataFrame) -> pd.DataFrame:
    """One row per point where auto, nocp and forcecp are all ok.

    rows: prepared rows, every run kept (not only the newest per point), so that the three times can
    come from one run. Columns: the point's labels, auto_ms / nocp_ms / forcecp_ms, auto_cp (did auto
    launch the intra-CP warm-up kernel; None if kernels were not recorded), best (the faster fixed
    choice), regret, run_id and mixes. Sorted by regret, worst first.
    """
    ok = rows[(rows["status"] == "ok") & rows["backend"].isin(list(FLASH_QLA_VARIANTS))]
    if ok.empty:
        return pd.DataFrame(columns=COLUMNS)
    out = []
    for _, grp in grouped_records(ok, ["stack", "study_key"]):
        found = consistent_set(grp)
        if found is None:
            continue
        by, mixes = found
        auto = by["auto"]
        fixed = {k: float(by[k]["median_ms"]) for k in ("nocp", "forcecp")}
        best = min(fixed, key=fixed.get)
        rec = {c: auto[c] for c in _POINT}
        runs = list(dict.fromkeys(str(by[v]["run_id"]) for v in VARIANTS))
        rec.update(auto_ms=float(auto["median_ms"]), nocp_ms=fixed["nocp"], forcecp_ms=fixed["forcecp"],
                   auto_cp=auto["cp_launched"], best=best, regret=float(auto["median_ms"]) / fixed[best],
                   run_id=" + ".join(runs), mixes=mixes)
        out.append(rec)
    if not out:
        return pd.DataFrame(columns=COLUMNS)
    t = pd.DataFrame(out, columns=COLUMNS)
    t["auto_cp"] = pd.Series([r["auto_cp"] for r in out], dtype=object, index=t.index)  # True / False / None
    t["mixes"] = pd.Series([r["mixes"] for r in out], dtype=object, index=t.index)
    return t.sort_values("regret", ascending=False, kind="stable").reset_index(drop=True)
