"""Auto-CP regret: how much FlashQLA's automatic intra-card CP decision cost against the better fixed one.

regret = auto time / min(nocp time, forcecp time) on the same point and stack, from ok rows only, and
only where all three ran ok. Above 1 the automatic decision lost (by that factor); 1 means it picked the
faster of the two fixed choices.
"""

from __future__ import annotations

import pandas as pd

from qlabench.analyze.study.prepare import FLASH_QLA_VARIANTS

_POINT = ["stack", "study_key", "mode", "heads", "h_qk", "h_v", "sequences", "seqkey", "total_tokens", "num_seqs",
          "gate_label", "gate_zero_frac_eff", "gate_scale_eff"]
COLUMNS = _POINT + ["auto_ms", "nocp_ms", "forcecp_ms", "auto_cp", "best", "regret"]


def regret_table(rows: pd.DataFrame) -> pd.DataFrame:
    """One row per point where auto, nocp and forcecp are all ok.

    Columns: the point's labels, auto_ms / nocp_ms / forcecp_ms, auto_cp (did
    auto launch the intra-CP warm-up kernel; None if kernels were not recorded), best (the faster fixed
    choice) and regret. Sorted by regret, worst first.
    """
    ok = rows[(rows["status"] == "ok") & rows["backend"].isin(list(FLASH_QLA_VARIANTS))]
    if ok.empty:
        return pd.DataFrame(columns=COLUMNS)
    out = []
    for _, grp in ok.groupby(["stack", "study_key"], sort=False):
        by = {FLASH_QLA_VARIANTS[b]: r for b, r in zip(grp["backend"], grp.to_dict("records"))}
        auto = by.get("auto")
        fixed = {k: float(by[k]["median_ms"]) for k in ("nocp", "forcecp") if k in by}
        if auto is None or len(fixed) < 2:
            continue
        best = min(fixed, key=fixed.get)
        rec = {c: auto[c] for c in _POINT}
        rec.update(auto_ms=float(auto["median_ms"]), nocp_ms=fixed["nocp"], forcecp_ms=fixed["forcecp"],
                   auto_cp=auto["cp_launched"], best=best,
                   regret=float(auto["median_ms"]) / fixed[best])
        out.append(rec)
    if not out:
        return pd.DataFrame(columns=COLUMNS)
    t = pd.DataFrame(out, columns=COLUMNS)
    t["auto_cp"] = pd.Series([r["auto_cp"] for r in out], dtype=object, index=t.index)  # True / False / None
    return t.sort_values("regret", ascending=False, kind="stable").reset_index(drop=True)
