"""FLA's intra-card CP against FlashQLA's: `fla-intracp` beside `flash_qla` (auto CP) and plain `fla`.

One row per forward point where fla-intracp ran ok, with the other two backends' times on the same point
(missing where they did not run ok), both ratios, whether each library actually split the call (from the
kernels its row launched: prepare.cp_launched), the timer of each row and how many runs the times come
from. fla-intracp's call cannot be captured in a CUDA graph, so its rows are timed with CUDA events while
the study times the others with graphs: events include launch gaps and FLA's host-side planning, so where
the timers differ a ratio leans against fla-intracp, and `timers` says so per row. The `kernel` columns
compare what no timer changes: the summed GPU time of each row's traced call (`kernel_dur_us`), so the
kernel ratio says what the split costs or saves on the GPU itself.
"""

from __future__ import annotations

import pandas as pd

from qlabench.analyze.evidence.records import grouped_records
from qlabench.store.keys import plain_value

INTRACP = "fla-intracp"
OTHERS = ("fla", "flash_qla")
_POINT = ["heads", "sequences", "h_qk", "h_v", "total_tokens", "num_seqs", "gate_label"]
COLUMNS = _POINT + ["fla-intracp ms", "fla ms", "flash_qla ms", "vs fla", "vs flash_qla", "kernel ms",
                    "kernel vs fla", "kernel vs flash_qla", "fla split", "flash_qla split", "timers", "runs"]


def kernel_ms(row) -> float | None:
    """The GPU time of a row's traced call: its kernels' durations summed (None when not traced)."""
    durs = row.get("kernel_dur_us")
    if durs is None or len(durs) == 0:
        return None
    return float(sum(durs)) / 1000


def _flag(v) -> bool | None:
    v = plain_value(v)
    return None if v is None else bool(v)


def intracp_table(rows: pd.DataFrame) -> pd.DataFrame:
    """The comparison on `rows` as the study prepares them (`Study.primary_rows`: one row per backend and
    point). `vs X` = fla-intracp time / X time (below 1: fla-intracp faster); `fla split` = whether FLA's
    intra-card CP split the fla-intracp call, `flash_qla split` = whether FlashQLA's auto CP did;
    `timers` = the timer of each present row, fla-intracp first."""
    if rows.empty:
        return pd.DataFrame(columns=COLUMNS)
    d = rows[(rows["status"] == "ok") & (rows["mode"] == "fwd") & rows["backend"].isin([INTRACP, *OTHERS])]
    out = []
    for _, grp in grouped_records(d, "study_key"):
        by = {r["backend"]: r for r in sorted(grp, key=lambda r: str(r["timestamp"]))}
        mine = by.get(INTRACP)
        if mine is None:
            continue
        rec = {c: mine[c] for c in _POINT}
        ms = {b: float(by[b]["median_ms"]) if b in by else None for b in (INTRACP, *OTHERS)}
        rec.update({f"{b} ms": v for b, v in ms.items()})
        rec.update({f"vs {b}": ms[INTRACP] / ms[b] if ms[b] else None for b in OTHERS})
        kms = {b: kernel_ms(by[b]) if b in by else None for b in (INTRACP, *OTHERS)}
        rec["kernel ms"] = kms[INTRACP]
        rec.update({f"kernel vs {b}": kms[INTRACP] / kms[b] if kms[INTRACP] and kms[b] else None for b in OTHERS})
        rec["fla split"] = _flag(mine.get("cp_launched"))
        rec["flash_qla split"] = _flag(by["flash_qla"].get("cp_launched")) if "flash_qla" in by else None
        present = [b for b in (INTRACP, *OTHERS) if b in by]
        rec["timers"] = ", ".join(f"{b} {by[b].get('timer')}" for b in present)
        rec["runs"] = len({str(by[b]["run_id"]) for b in present})
        out.append(rec)
    if not out:
        return pd.DataFrame(columns=COLUMNS)
    t = pd.DataFrame(out, columns=COLUMNS)
    for c in ("fla split", "flash_qla split"):  # True / False / None (kernels not recorded, or no row)
        t[c] = pd.Series([r[c] for r in out], dtype=object, index=t.index)
    return t.sort_values(["h_v", "h_qk", "total_tokens", "num_seqs", "sequences"], kind="stable").reset_index(drop=True)


def _n(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"


def intracp_sentence(t: pd.DataFrame) -> str:
    """How often FLA split the call, and the median ratios where it did."""
    split = t[t["fla split"] == True]  # noqa: E712 (None: unknown)
    unsplit = int((t["fla split"] == False).sum())  # noqa: E712
    unknown = len(t) - len(split) - unsplit
    parts = [f"fla-intracp ok on {_n(len(t), 'forward point')}; FLA split the call on {len(split)}, ran it unsplit "
             f"on {unsplit}" + (f", unknown on {unknown}" if unknown else "")]
    for b in OTHERS:
        r = split[f"vs {b}"].dropna()
        if len(r):
            parts.append(f"where it split, its time / {b}'s: median {r.median():.2f} over {_n(len(r), 'point')} "
                         f"(range {r.min():.2f}-{r.max():.2f})")
        k = split[f"kernel vs {b}"].dropna()
        if len(k):
            parts.append(f"its GPU kernel time / {b}'s: median {k.median():.2f} (range {k.min():.2f}-{k.max():.2f})")
    return "; ".join(parts) + "."
