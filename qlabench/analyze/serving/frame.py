"""Serving rows (modes decode and mtp) made ready for the serving page: one row per point and backend
variant, the newest of each, with the labels and derived numbers the tables and figures read.

A row's time is `median_ms`; its achieved bandwidth is `bytes_moved` over that time; its fraction of the
bandwidth limit is recomputed from its bytes, its time and the peaks it recorded (analyze/evidence/belief.py:
hbm_fraction), never taken from the stored `hbm_frac` where those are recorded: an edited time cannot win
at a share the bytes deny. A row above 1.0 of the limit is a bug (its check failed it); it is listed, never
drawn and never a winner, even where an older file left it `ok`.
"""

from __future__ import annotations

import json
import math

import pandas as pd

from qlabench.analyze.evidence.belief import hbm_fraction
from qlabench.analyze.evidence.replicates import newest_per_point
from qlabench.core import identity
from qlabench.core.dtypes import DTYPE_BYTES
from qlabench.core.modes import SERVING_MODES
from qlabench.store.keys import key_value

# The serving axes of a row's identity (core/identity.py), and the beta regime, which serving rows may vary.
SERVING_KEYS = identity.SERVING_AXES + ("beta_regime",)
# Columns the page reads that rows written before the serving schema lack: they read as null.
SERVING_COLUMNS = SERVING_KEYS + ("bytes_read", "bytes_written", "bytes_moved", "hbm_peak_read_tbs",
                                  "hbm_peak_write_tbs", "hbm_frac")
# Axes that usually hold one value in a serving run; where they vary, figures and groups split on them.
CONTEXT = ("device", "dtype", "K", "V", "gate_label", "pool_factor", "beta_regime", "seed")


def variant_label(backend, state_layout) -> str:
    """'fla-recurrent [kv]': the backend with the pool layout it ran on (a layout is a choice of the engine)."""
    layout = key_value(state_layout)
    return f"{backend} [{layout}]" if layout else str(backend)


def l2_hint(extra_json) -> bool | None:
    """The run's `l2_resident` hint from a row's extra details (top level, or one level down), if any."""
    if not isinstance(extra_json, str) or not extra_json:
        return None
    try:
        extra = json.loads(extra_json)
    except ValueError:
        return None
    if not isinstance(extra, dict):
        return None
    found = [extra] + [v for v in extra.values() if isinstance(v, dict)]
    for d in found:
        if "l2_resident" in d and d["l2_resident"] is not None:
            return bool(d["l2_resident"])
    return None


L2_RESIDENT = "L2-resident"


def hbm_text(pct, l2_resident, fmt: str = ".1f") -> str:
    """A row's share of the HBM limit as every view shows it: `L2-resident` where the run said the states
    stayed in L2 (its time is no measure of HBM), '-' where there is no fraction."""
    if l2_resident is True:
        return L2_RESIDENT
    pct = _num(pct)
    return "-" if math.isnan(pct) else format(pct, fmt)


def _num(v) -> float:
    v = key_value(v)
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else math.nan


def _pool_factor(pool, batch):
    p, b = key_value(pool), key_value(batch)
    if not p or not b:
        return None
    f = p / b
    return int(f) if float(f).is_integer() else round(f, 3)


def _pool_mib(r) -> float:
    """Bytes the whole state pool holds, MiB: pool x value heads x K x V x the state dtype's size."""
    size = DTYPE_BYTES.get(key_value(r["state_dtype"]))
    pool = key_value(r["pool"])
    if not size or not pool:
        return math.nan
    return pool * int(r["h_v"]) * int(r["K"]) * int(r["V"]) * size / 2**20


def _fraction(row) -> float:
    """The row's share of the limit from its bytes, time and peaks; its stored one where those are missing."""
    f = hbm_fraction(row)
    return f if f is not None else _num(row.get("hbm_frac"))


def serving_frame(df: pd.DataFrame) -> pd.DataFrame:
    """The decode/mtp rows of `df`, newest per point, with the page's columns added:
    variant, panel (model and TP), T, pool_factor, pool_mib, time_ms (ok rows' median), tbs (achieved TB/s),
    pct_hbm (hbm_frac in percent; null where the run said the states stayed in L2), over_peak (from hbm_frac),
    l2_resident (None: the run gave no hint), usable (ok, timed and
    not over the limit), context (the varying CONTEXT axes as text) and group (the curve family's label)."""
    if df.empty or "mode" not in df.columns:
        return pd.DataFrame()
    d = df[df["mode"].isin(SERVING_MODES)].copy()
    if "sm_budget" in d.columns:  # the whole GPU's steps: a step held to a share of the SMs is the SM-budget page's
        d = d[d["sm_budget"].isna()]
    if d.empty:
        return pd.DataFrame()
    for c in SERVING_COLUMNS + ("model", "tp", "extra_json", "gate_zero_frac", "gate_scale", "reason",
                                "rel_noise"):
        if c not in d.columns:
            d[c] = None
    d = newest_per_point(d)
    d["variant"] = [variant_label(b, s) for b, s in zip(d["backend"], d["state_layout"])]
    d["panel"] = [identity.heads_label(int(q), int(v), key_value(m), key_value(t))
                  for q, v, m, t in zip(d["h_qk"], d["h_v"], d["model"], d["tp"])]
    d["T"] = d["seqlens"].map(lambda s: int(list(s)[0]))
    d["batch"] = d["batch"].astype(int)
    d["state_dtype"] = d["state_dtype"].map(lambda v: key_value(v) or "-")
    d["gate_label"] = [identity.gate_label(g, key_value(z), key_value(s))
                       for g, z, s in zip(d["gate"], d["gate_zero_frac"], d["gate_scale"])]
    d["beta_regime"] = d["beta_regime"].map(lambda v: key_value(v) or "sigmoid")
    d["pool_factor"] = [_pool_factor(p, b) for p, b in zip(d["pool"], d["batch"])]
    d["pool_mib"] = d.apply(_pool_mib, axis=1)
    frac = pd.Series([_fraction(r) for r in d.to_dict("records")], index=d.index, dtype=float)
    d["hbm_frac"] = frac
    d["l2_resident"] = d["extra_json"].map(l2_hint)
    # A working set the run found to fit in L2 is not read from HBM at all: a share of the HBM limit would
    # read as a fact about the memory (88% at batch 4) that the step never touched. Shown as L2-resident.
    d["pct_hbm"] = (frac * 100).where(d["l2_resident"] != True)  # noqa: E712 (None: no hint)
    d["over_peak"] = frac > 1.0
    ms = d["median_ms"].map(_num)
    d["usable"] = (d["status"] == "ok") & ms.map(math.isfinite) & ~d["over_peak"]
    d["time_ms"] = ms.where(d["usable"])
    d["tbs"] = d["bytes_moved"].map(_num) / (ms * 1e-3) / 1e12
    d["context"] = _context(d)
    d["group"] = [_group_label(r) for r in d.itertuples()]
    order = ["panel", "T", "state_dtype", "batch", "variant"]
    return d.sort_values(order, kind="stable", key=_sort_key).reset_index(drop=True)


def _sort_key(col: pd.Series) -> pd.Series:
    """Panels in catalogue-name then TP order (TP8 before TP16 would sort wrong as text)."""
    if col.name == "panel":
        return col.map(_panel_order)
    return col


def _panel_order(label: str) -> tuple:
    # 'qwen3.5-397b TP8 (h2/8)' -> ('qwen3.5-397b', 8, ...); explicit heads 'h2/8' sort after the models.
    name, _, rest = label.partition(" TP")
    if not rest:
        return ("~", 0, label)
    tp = rest.split(" ", 1)[0]
    return (name, int(tp) if tp.isdigit() else 0, label)


def _context(d: pd.DataFrame) -> pd.Series:
    """'dtype=float16 beta=high': the CONTEXT axes that vary across these rows, per row ('' when none does)."""
    varying = [c for c in CONTEXT if d[c].map(key_value).nunique(dropna=False) > 1]
    short = {"gate_label": "gate", "pool_factor": "pool/batch", "beta_regime": "beta"}
    return pd.Series([" ".join(f"{short.get(c, c)}={key_value(r[c])}" for c in varying)
                      for _, r in d.iterrows()], index=d.index, dtype=object)


def _group_label(r) -> str:
    """One curve family: 'qwen3.5-397b TP8 (h2/8) · T=1 · state bfloat16' (+ the varying context)."""
    out = f"{r.panel} · T={r.T} · state {r.state_dtype}"
    return f"{out} · {r.context}" if r.context else out


def panel_order(labels) -> list[str]:
    return sorted(set(labels), key=_panel_order)


def peak_kernels(extra_json) -> tuple[str | None, str | None]:
    """(read kernel, write kernel) that set the row's HBM peaks (measure/probes/peaks.py records them in the
    row's details as `hbm_peaks`); (None, None) for rows measured before qlabench took the best of several."""
    try:
        rec = json.loads(extra_json).get("hbm_peaks") if isinstance(extra_json, str) and extra_json else None
    except (ValueError, AttributeError):
        rec = None
    if not isinstance(rec, dict):
        return None, None
    return rec.get("read_kernel"), rec.get("write_kernel")


def peaks(d: pd.DataFrame) -> pd.DataFrame:
    """Per device, the measured HBM peaks the fractions divide by: median and range over its rows, the
    kernels that reached them in the rows' own runs ('' where no row recorded one) and, where the rows were
    re-expressed against one peak per GPU model (evidence/hbm_peaks.py), where that peak came from."""
    have = d[d["hbm_peak_read_tbs"].map(_num).map(math.isfinite)]
    recs = []
    for device, g in have.groupby("device", sort=True):
        r, w = g["hbm_peak_read_tbs"].astype(float), g["hbm_peak_write_tbs"].astype(float)
        kernels = [peak_kernels(x) for x in g["extra_json"]] if "extra_json" in g.columns else []
        # where the one peak came from (evidence/hbm_peaks.py): '' for rows that were never re-expressed
        sources = g["hbm_peak_source"].dropna() if "hbm_peak_source" in g.columns else pd.Series(dtype=object)
        recs.append({"device": device, "rows": len(g), "read_tbs": r.median(), "read_min": r.min(),
                     "read_max": r.max(), "write_tbs": w.median(), "write_min": w.min(), "write_max": w.max(),
                     "read_kernel": ", ".join(sorted({k[0] for k in kernels if k[0]})),
                     "write_kernel": ", ".join(sorted({k[1] for k in kernels if k[1]})),
                     "source": "; ".join(sorted(set(sources)))})
    return pd.DataFrame(recs)
