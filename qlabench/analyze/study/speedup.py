"""flash_qla's speedup against FLA and against FlashInfer per point, ours beside the published one.

speedup = baseline time / flash_qla time, from ok rows of the same point (same stack choice as the
comparison: the newest library version of each backend). Points are the published method's problem
(K = V = 128, bf16, flashqla gate at its defaults, initial state); a dense and a packed varlen row of the
same lengths are one point, the varlen row preferred. A speedup whose faster side is over tolerance in
its evidence (the rows' `err_over`, analyze/evidence/accuracy.py) is not a speedup: it is left out (NaN) and
`withheld` holds the faster side's error mark instead.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from qlabench.analyze.evidence.accuracy import flagged, speedup_allowed
from qlabench.core.identity import heads_label
from qlabench.analyze.study.published import BACKEND_COLUMNS, PUBLISHED_METHOD, match_key, method_differences

BASELINES = ("fla", "flashinfer")
COLUMNS = ["mode", "heads", "h_qk", "h_v", "model_config", "match_key", "x_label", "total_tokens", "num_seqs",
           "first_len", "baseline", "speedup", "published_speedup", "withheld"]


def x_label(seqkey: str, total: int, n: int, by_totals: bool) -> str:
    """'8K/2seq' for a point matched on totals, '4x8192' for equal lengths, else '28672+4096'."""
    if by_totals:
        return f"{total // 1024}K/{n}seq" if total % 1024 == 0 else f"{total}/{n}seq"
    lens = seqkey.split("+")
    return f"{len(lens)}x{lens[0]}" if len(lens) > 1 and len(set(lens)) == 1 else seqkey


def _first_len(match_key: str) -> int:
    """Length of the first packed sequence (0 for a point matched on totals), to order layouts of one
    total numerically ('4096+28672' before '28672+4096')."""
    last = match_key.rsplit("|", 1)[-1]
    return int(last.split("+", 1)[0]) if last[:1].isdigit() else 0


def speedup_curves(rows: pd.DataFrame, pub: pd.DataFrame) -> pd.DataFrame:
    """Long frame, one row per (point, baseline): our speedup (NaN if either side is not ok or not run)
    and the published one (NaN where the table has no such point), sorted for plotting."""
    total_modes = set(pub.loc[pub["by_totals"], "mode"])
    d = rows[(rows["status"] == "ok") & rows["backend"].isin(list(BACKEND_COLUMNS))]
    for axis, value in PUBLISHED_METHOD.items():
        d = d[d[axis] == value]
    if "cp_world_size" in d.columns:
        d = d[d["cp_world_size"].isna()]
    recs = []
    for r in d.to_dict("records"):
        diffs = [x for x in method_differences(r) if "layout" not in x]
        if diffs:
            continue
        by_totals = r["mode"] in total_modes
        recs.append({**r, "match_key": match_key(r["mode"], r["h_qk"], r["h_v"], r["seqkey"], r["total_tokens"],
                                                 r["num_seqs"], by_totals),
                     "by_totals": by_totals, "_varlen": r["layout"] == "varlen"})
    ours = pd.DataFrame(recs)
    points: dict[str, dict] = {}
    if not ours.empty:
        ours = ours.sort_values(["_varlen", "timestamp"], kind="stable").drop_duplicates(["match_key", "backend"],
                                                                                          keep="last")
        for key, grp in ours.groupby("match_key", sort=False):
            first = grp.iloc[0]
            points[key] = {"mode": first["mode"], "heads": heads_label(first["h_qk"], first["h_v"]),
                           "h_qk": int(first["h_qk"]), "h_v": int(first["h_v"]), "model_config": None,
                           "x_label": x_label(first["seqkey"], int(first["total_tokens"]), int(first["num_seqs"]),
                                               bool(first["by_totals"])),
                           "total_tokens": int(first["total_tokens"]), "num_seqs": int(first["num_seqs"]),
                           "ms": dict(zip(grp["backend"], grp["median_ms"].astype(float))), "pub": {},
                           "over": dict(zip(grp["backend"], grp.get("err_over", pd.Series(False, grp.index)))),
                           "mark": dict(zip(grp["backend"], grp.get("err_mark", pd.Series("", grp.index))))}
    for p in pub.to_dict("records"):
        pt = points.setdefault(p["match_key"], {
            "mode": p["mode"], "heads": p["heads"], "h_qk": int(p["h_qk"]), "h_v": int(p["h_v"]),
            "x_label": x_label(p["seqlens"], int(p["total_tokens"]), int(p["num_seqs"]), bool(p["by_totals"])),
            "total_tokens": int(p["total_tokens"]), "num_seqs": int(p["num_seqs"]), "ms": {}})
        pt["model_config"] = p["model_config"]
        pt["pub"] = {b: p[c] for b, c in BACKEND_COLUMNS.items() if not pd.isna(p[c])}
    out = []
    for key, pt in points.items():
        for base in BASELINES:
            fq, b = pt["ms"].get("flash_qla"), pt["ms"].get(base)
            pfq, pb = pt.get("pub", {}).get("flash_qla"), pt.get("pub", {}).get(base)
            ours_x = b / fq if fq and b else np.nan
            over, mark, withheld = pt.get("over", {}), pt.get("mark", {}), None
            if not np.isnan(ours_x) and not speedup_allowed(ours_x, flagged(over.get("flash_qla")),
                                                                  flagged(over.get(base))):
                withheld = mark.get("flash_qla" if ours_x >= 1 else base)
                ours_x = np.nan
            pub_x = pb / pfq if pfq and pb else np.nan
            if np.isnan(ours_x) and np.isnan(pub_x) and withheld is None:
                continue
            out.append({"mode": pt["mode"], "heads": pt["heads"], "h_qk": pt["h_qk"], "h_v": pt["h_v"],
                        "model_config": pt.get("model_config"), "match_key": key, "x_label": pt["x_label"],
                        "total_tokens": pt["total_tokens"], "num_seqs": pt["num_seqs"],
                        "first_len": _first_len(key), "baseline": base,
                        "speedup": ours_x, "published_speedup": pub_x, "withheld": withheld})
    if not out:
        return pd.DataFrame(columns=COLUMNS)
    return (pd.DataFrame(out, columns=COLUMNS)
            .sort_values(["mode", "h_v", "h_qk", "total_tokens", "num_seqs", "first_len", "baseline"],
                         kind="stable")
            .reset_index(drop=True))
