"""Which stored rows a view may believe: one rule for show, advise and the report pages.

A row says `ok`, but its file may have been edited, copied or written by an older qlabench. Before any
view ranks a row or prints its speedup, what can be recomputed from the row is recomputed, and what cannot
be true is refused:
- its time: `median_ms` must be a positive number and the median of its own `samples_ms` (qlabench
  writes exactly that; every committed row holds it). Otherwise: status `error`, with the reason.
- its correctness: its own check's worst error against the tolerance of the dtype the check applies
  (accuracy.py: the rule behind show's marks). Over it: status `incorrect`, with the error and tolerance.
- a serving row's share of the HBM limit: recomputed from its bytes, its time and the device peaks it
  recorded (core/bytes_model.py), never read from the stored `hbm_frac`. Above the limit: `error`.
A row that was not `ok` keeps its status and reason.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from qlabench.analyze.evidence.accuracy import row_check
from qlabench.core.bytes_model import StepBytes, bandwidth_fraction
from qlabench.core.modes import SERVING_MODES
from qlabench.core.result import CHECKED_TENSORS

# The columns the rules read (records of ~110 columns would cost more than the rules).
READS = ("status", "mode", "dtype", "state_dtype", "median_ms", "samples_ms", "bytes_read", "bytes_written",
         "hbm_peak_read_tbs", "hbm_peak_write_tbs", "hbm_frac", "oracle", "total_tokens", "check_tokens")
# Relative slack between a stored median and the median of the stored samples (float round trips only).
MEDIAN_SLACK = 1e-9


def _num(v) -> float:
    try:
        x = float(v)
    except (TypeError, ValueError):
        return math.nan
    return x


def time_problem(row) -> str | None:
    """Why a row's stored time cannot be believed; None when it can."""
    ms = _num(row.get("median_ms"))
    if not math.isfinite(ms) or ms <= 0:
        return f"stored median_ms {row.get('median_ms')!r} is not a time (must be a positive number): not believed"
    samples = row.get("samples_ms")
    if samples is not None and len(samples):
        arr = np.asarray(samples, dtype=float)
        if np.isfinite(arr).all():
            med = float(np.median(arr))
            if abs(med - ms) > MEDIAN_SLACK * max(abs(med), abs(ms)):
                return (f"stored median_ms {ms:g} is not the median of its own {len(arr)} samples ({med:g} ms): "
                        "the row was edited or mis-written; not believed")
        else:
            return "its samples hold a non-finite time: not believed"
    return None


def hbm_fraction(row) -> float | None:
    """A serving row's fraction of the bandwidth limit, from its bytes, time and recorded peaks (None when a
    side was not recorded)."""
    read, written = _num(row.get("bytes_read")), _num(row.get("bytes_written"))
    peak_r, peak_w = _num(row.get("hbm_peak_read_tbs")), _num(row.get("hbm_peak_write_tbs"))
    ms = _num(row.get("median_ms"))
    if not all(math.isfinite(x) for x in (read, written, peak_r, peak_w, ms)) or ms <= 0:
        return None
    if not (peak_r > 0 and peak_w > 0):
        return None
    return bandwidth_fraction(StepBytes(int(read), int(written)), ms, peak_r, peak_w)


def believed(df: pd.DataFrame) -> pd.DataFrame:
    """`df` with every `ok` row a view cannot believe turned into `error` or `incorrect` with its reason, and
    serving rows' `hbm_frac` recomputed (see the module docstring). The input is left untouched."""
    if df.empty or "status" not in df:
        return df
    ok = df["status"] == "ok"
    serving = df["mode"].isin(SERVING_MODES) if "mode" in df else pd.Series(False, index=df.index)
    status, reason = df["status"].copy(), (df["reason"].copy() if "reason" in df
                                           else pd.Series(None, index=df.index, dtype=object))
    frac = df["hbm_frac"].copy() if "hbm_frac" in df else None
    cols = [c for c in READS + tuple(f"err_{t}" for t in CHECKED_TENSORS) if c in df]
    for idx, row in zip(df.index[ok], df.loc[ok, cols].to_dict("records")):
        why = time_problem(row)
        if why is None and serving[idx]:
            f = hbm_fraction(row)
            if frac is not None:
                frac[idx] = f if f is not None else math.nan
            if f is not None and f > 1.0:
                why = (f"{_num(row['bytes_read']) + _num(row['bytes_written']):.3g} bytes in {_num(row['median_ms']):g} ms "
                       f"is {f:.0%} of the HBM limit at its recorded peaks: faster than the memory allows; not believed")
        if why is not None:
            status[idx], reason[idx] = "error", why
            continue
        check = row_check(row)
        if check is not None and check.over:
            err = row.get(f"err_{check.tensor}")
            status[idx] = "incorrect"
            reason[idx] = (f"stored err_{check.tensor} {_num(err):.3g} is "
                           + ("not finite" if math.isinf(check.ratio) else f"{check.ratio:.3g}x its tolerance")
                           + f" ({check.label}), though the row says ok")
    out = df.assign(status=status, reason=reason)
    return out.assign(hbm_frac=frac) if frac is not None else out
