"""Which stored rows a view may believe: the one rule for show, advise, report, the site, compare and the gate.

A row says `ok`, but its file may have been edited, copied or written by an older qlabench. Before any
view ranks a row, prints its speedup or passes it in a gate, what can be recomputed from the row is
recomputed, and what cannot be true is refused:
- its verdict: an `ok` row carries no reason (qlabench never writes one); one that does (a CUDA error
  pasted beside `ok`) contradicts itself. Status `error`, with the reason it carried.
- its time: `median_ms` must be a positive number, the median of its own `samples_ms` (qlabench writes
  exactly that; every committed row holds it), and possible on its device: no faster than the work
  models allow at the device's peaks and no slower than an hour a call (core/device_limits.py).
  Otherwise: status `error`, with the reason.
- a serving row's share of the HBM limit: recomputed from its bytes, its time and the device peaks it
  recorded (core/bytes_model.py), never read from the stored `hbm_frac`. Above the limit: `error`.
- its correctness: its own check's worst error against the tolerance of the dtype the check applies
  (accuracy.py: the rule behind show's marks). Over it: status `incorrect`, with the error and tolerance.
  No check recorded at all (no oracle, or no finite error): status `error`, "unverified".
A row that was not `ok` keeps its status and reason.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from qlabench.analyze.evidence.accuracy import row_check
from qlabench.analyze.evidence.records import records
from qlabench.analyze.evidence.stored_time import number, time_problem
from qlabench.core.bytes_model import StepBytes, bandwidth_fraction
from qlabench.core.device_limits import fastest_ms, impossible_time
from qlabench.core.errors import QlabenchError
from qlabench.core.modes import SERVING_MODES
from qlabench.core.point import Point
from qlabench.core.result import CHECKED_TENSORS
from qlabench.store.keys import KEY_COLUMNS, key_value

# The columns the rules read (records of ~110 columns would cost more than the rules).
READS = tuple(dict.fromkeys(("status", "reason", "device", "mode", "dtype", "state_dtype", "median_ms", "samples_ms",
                             "bytes_read", "bytes_written", "hbm_peak_read_tbs", "hbm_peak_write_tbs", "hbm_frac",
                             "oracle", "total_tokens", "check_tokens") + KEY_COLUMNS))
# What a call's work (core/flops.py: work) and its device's floor depend on, besides the sequence lengths.
WORK_AXES = ("mode", "layout", "batch", "h_qk", "h_v", "K", "V", "dtype", "state_dtype", "initial_state",
             "cp_world_size", "pool")
def physics_problem(row, floors: dict) -> str | None:
    """Why a row's time is impossible on its device (core/device_limits.py); None when it is possible or the
    frame lacks the point's axes. `floors` caches each point's floor: a table repeats its points."""
    if any(a not in row for a in KEY_COLUMNS):
        return None
    # the axes the work depends on, cheaply (a varlen row's lengths as bytes): a point is built once per key
    key = (row.get("device"), np.asarray(row["seqlens"]).tobytes()) + tuple(
        None if isinstance(v, float) and math.isnan(v) else v for v in (row[a] for a in WORK_AXES))
    if key not in floors:
        try:
            point = Point.from_row(row, key_value)
            floors[key] = (point, fastest_ms(point, row.get("device")))
        except (QlabenchError, TypeError, ValueError) as e:
            floors[key] = (None, str(e))
    point, floor = floors[key]
    if point is None:
        return f"its point cannot be read ({floor}): not believed"
    why = impossible_time(point, row.get("device"), number(row.get("median_ms")), floor)
    return f"stored median_ms {why}: not believed" if why else None


def contradiction(row) -> str | None:
    """Why an ok row contradicts itself: it carries a reason, which only a failed row has."""
    reason = key_value(row.get("reason"))
    if reason is None or not str(reason).strip():
        return None
    return f"the row says ok but carries a reason ({reason}): not believed"


def hbm_fraction(row) -> float | None:
    """A serving row's fraction of the bandwidth limit, from its bytes, time and recorded peaks (None when a
    side was not recorded)."""
    read, written = number(row.get("bytes_read")), number(row.get("bytes_written"))
    peak_r, peak_w = number(row.get("hbm_peak_read_tbs")), number(row.get("hbm_peak_write_tbs"))
    ms = number(row.get("median_ms"))
    if not all(math.isfinite(x) for x in (read, written, peak_r, peak_w, ms)) or ms <= 0:
        return None
    if not (peak_r > 0 and peak_w > 0):
        return None
    return bandwidth_fraction(StepBytes(int(read), int(written)), ms, peak_r, peak_w)


def believed(df: pd.DataFrame, require_check: bool = True) -> pd.DataFrame:
    """`df` with every `ok` row a view cannot believe turned into `error` or `incorrect` with its reason, and
    serving rows' `hbm_frac` recomputed (see the module docstring). The input is left untouched.
    `require_check=False` leaves an unchecked row ok (`qlabench merge` of a `--no-check` sweep: the rows are
    stored as measured, and a view that reads them back still refuses them)."""
    if df.empty or "status" not in df:
        return df
    require_check = require_check and "oracle" in df  # a frame read without the check's columns cannot say
    # Positions, not index labels: a frame concatenated from several files repeats its labels.
    ok = (df["status"] == "ok").to_numpy()
    serving = df["mode"].isin(SERVING_MODES).to_numpy() if "mode" in df else np.zeros(len(df), bool)
    status = df["status"].to_numpy(dtype=object, copy=True)
    reason = df["reason"].to_numpy(dtype=object, copy=True) if "reason" in df else np.full(len(df), None, object)
    frac = df["hbm_frac"].to_numpy(dtype=float, copy=True) if "hbm_frac" in df else None
    cols = [c for c in READS + tuple(f"err_{t}" for t in CHECKED_TENSORS) if c in df]
    floors: dict = {}
    judged = df[cols] if ok.all() else df.loc[ok, cols]  # (a selection of every row copies each column)
    for i, row in zip(np.flatnonzero(ok), records(judged)):
        why = contradiction(row) or time_problem(row) or physics_problem(row, floors)
        if why is None and serving[i]:
            f = hbm_fraction(row)
            if frac is not None:
                frac[i] = f if f is not None else math.nan
            if f is not None and f > 1.0:
                why = (f"{number(row['bytes_read']) + number(row['bytes_written']):.3g} bytes in {number(row['median_ms']):g} ms "
                       f"is {f:.0%} of the HBM limit at its recorded peaks: faster than the memory allows; not believed")
        if why is not None:
            status[i], reason[i] = "error", why
            continue
        check = row_check(row)
        if check is None and require_check:
            status[i] = "error"
            reason[i] = ("unverified: the row records no correctness check (no oracle, or no finite error), "
                         "though it says ok; not believed")
        elif check is not None and check.over:
            err = row.get(f"err_{check.tensor}")
            status[i] = "incorrect"
            reason[i] = (f"stored err_{check.tensor} {number(err):.3g} is "
                         + ("not finite" if math.isinf(check.ratio) else f"{check.ratio:.3g}x its tolerance")
                         + f" ({check.label}), though the row says ok")
    like = {c: (df[c].dtype if c in df else object) for c in ("status", "reason")}
    out = df.assign(status=pd.Series(status, index=df.index, dtype=like["status"]),
                    reason=pd.Series(reason, index=df.index, dtype=like["reason"]))
    return out.assign(hbm_frac=frac) if frac is not None else out
