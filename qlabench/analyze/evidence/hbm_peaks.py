"""One HBM peak per GPU model for every serving row: the limit a row's share of the memory is measured against.

A serving row records the read and write bandwidth its run measured at its start (`hbm_peak_read_tbs`,
`hbm_peak_write_tbs`), and its share of the limit divides by them (core/bytes_model.py). The probe changed:
runs now take the best of several streaming kernels, read and write apart, and record which won in the row's
details (`hbm_peaks`, measure/probes/peaks.py); older runs measured one sum and one fill, which read low
(4.27 TB/s against 4.64 on the same H200). Dividing by each row's own peak makes the same step a different
share on two pages (0.0202 ms: 75.1% against the older peak, 71.7% against the newer).

So every view divides by one definition: per GPU model (`device`), the best read and the best write peak
that any row measured the current way recorded, with the run each came from. `one_peak` puts those in every
serving row of that model, whatever its own run measured, and says so in `hbm_peak_source`; a model that no
run measured the current way keeps its rows' own peaks, marked as the older probe's. A view then recomputes
the shares from the peak columns as before (belief.hbm_fraction).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from qlabench.analyze.evidence.stored_time import number
from qlabench.core.errors import QlabenchError
from qlabench.core.modes import SERVING_MODES

# The columns the peaks are read from (a scan of the evidence root reads only these).
PEAK_COLUMNS = ("device", "mode", "run_id", "hbm_peak_read_tbs", "hbm_peak_write_tbs", "extra_json")
# Says where a row's peak came from when no run measured its model the current way.
OLDER_PROBE = "the row's own run (older probe: one sum and one fill)"


@dataclass(frozen=True)
class StreamPeak:
    """The best read and write bandwidth any run measured on one GPU model the current way, and where from."""
    device: str
    read_tbs: float
    read_kernel: str
    read_run: str
    write_tbs: float
    write_kernel: str
    write_run: str

    def source(self) -> str:
        """'read `triton-sum` (run R), write `fill` (run W)': where each side of the peak came from."""
        return (f"read `{self.read_kernel}` (run {self.read_run}), write `{self.write_kernel}` "
                f"(run {self.write_run})")


def probe_record(extra_json) -> dict | None:
    """The `hbm_peaks` record of a row measured the current way (the kernels that won, read and write); None
    for a row measured with the older probe, which recorded none."""
    try:
        rec = json.loads(extra_json).get("hbm_peaks") if isinstance(extra_json, str) and extra_json else None
    except (ValueError, AttributeError):
        return None
    if not isinstance(rec, dict) or not rec.get("read_kernel") or not rec.get("write_kernel"):
        return None
    return rec


def stream_peaks(rows: pd.DataFrame) -> dict[str, StreamPeak]:
    """Per GPU model, the best read and the best write peak among `rows` measured the current way (ties: the
    first run in name order, so the answer does not depend on the rows' order)."""
    if rows.empty or not {"device", "hbm_peak_read_tbs", "hbm_peak_write_tbs", "extra_json"} <= set(rows.columns):
        return {}
    best: dict[str, dict] = {}
    runs = rows["run_id"] if "run_id" in rows else pd.Series("?", index=rows.index)
    for device, r, w, extra, run in zip(rows["device"], rows["hbm_peak_read_tbs"], rows["hbm_peak_write_tbs"],
                                        rows["extra_json"], runs):
        rec = probe_record(extra)
        r, w = number(r), number(w)
        if rec is None or not isinstance(device, str) or not (r > 0 and w > 0):
            continue
        b = best.setdefault(device, {})
        for side, tbs in (("read", r), ("write", w)):
            cand = (tbs, str(run), str(rec[f"{side}_kernel"]))
            have = b.get(side)
            if have is None or cand[0] > have[0] or (cand[0] == have[0] and cand[1] < have[1]):
                b[side] = cand
    return {d: StreamPeak(d, b["read"][0], b["read"][2], b["read"][1], b["write"][0], b["write"][2], b["write"][1])
            for d, b in sorted(best.items())}


def one_peak(df: pd.DataFrame, peaks: dict[str, StreamPeak]) -> pd.DataFrame:
    """`df` with every serving row that recorded a peak re-expressed against its GPU model's one peak (the
    peak columns replaced, `hbm_peak_source` saying where it came from); a model with no current-way peak
    keeps its rows' own, marked OLDER_PROBE. Other rows are untouched; the input is left as it was."""
    need = {"mode", "device", "hbm_peak_read_tbs", "hbm_peak_write_tbs"}
    if df.empty or not need <= set(df.columns):
        return df
    out = df.copy()
    source = out["hbm_peak_source"].copy() if "hbm_peak_source" in out else pd.Series(None, index=out.index,
                                                                                      dtype=object)
    recorded = out["hbm_peak_read_tbs"].map(number).gt(0) & out["hbm_peak_write_tbs"].map(number).gt(0)
    serving = out["mode"].isin(SERVING_MODES) & recorded
    read, write = out["hbm_peak_read_tbs"].astype(float), out["hbm_peak_write_tbs"].astype(float)
    for idx, device in out.loc[serving, "device"].items():
        p = peaks.get(device)
        if p is None:
            source[idx] = OLDER_PROBE
            continue
        read[idx], write[idx], source[idx] = p.read_tbs, p.write_tbs, p.source()
    return out.assign(hbm_peak_read_tbs=read, hbm_peak_write_tbs=write, hbm_peak_source=source)


def peak_rows(paths: Iterable[str | os.PathLike]) -> pd.DataFrame:
    """The peak columns of the rows that recorded one, in the shown paths and in every results folder under
    their evidence root (newer.evidence_root): a peak measured by another run on the same GPU model counts."""
    from qlabench.analyze.evidence.newer import evidence_root
    from qlabench.store.files import read_table, result_files

    paths = [Path(p) for p in paths if Path(p).exists()]  # a missing path is the row reader's to report
    root = evidence_root(paths) if paths else None
    frames = []
    try:
        files = result_files(paths + ([root] if root is not None else []))
    except QlabenchError:
        files = []  # nothing beside the shown rows: their own peaks are all there is
    for f in files:
        try:
            t = read_table(f, PEAK_COLUMNS)
        except QlabenchError:
            continue  # a derived table or an unreadable file holds no peak the views could cite
        d = t.select([c for c in PEAK_COLUMNS if c in t.column_names]).to_pandas()
        if "hbm_peak_read_tbs" in d:
            frames.append(d[d["hbm_peak_read_tbs"].notna()])
    frames = [f for f in frames if not f.empty]
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=list(PEAK_COLUMNS))


def one_peak_from(rows: pd.DataFrame, paths: Iterable[str | os.PathLike]) -> pd.DataFrame:
    """`one_peak` over `rows` with the peaks of `rows` and of every results file beside `paths`."""
    paths = list(paths)
    found = peak_rows(paths)
    mine = rows[[c for c in PEAK_COLUMNS if c in rows.columns]] if not rows.empty else rows
    pool = pd.concat([f for f in (mine, found) if not f.empty], ignore_index=True) if not (
        mine.empty and found.empty) else pd.DataFrame()
    return one_peak(rows, stream_peaks(pool))
