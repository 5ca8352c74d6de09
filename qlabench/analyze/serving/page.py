"""The serving page: decode and multi-token verify as one markdown page with its PNGs. Nothing here
computes a number; the tables come from the Serving object (serving.py), the figures from figures.py."""

from __future__ import annotations

import math
import os

import pandas as pd

from qlabench.analyze.evidence.hbm_peaks import OLDER_PROBE
from qlabench.analyze.kit.figures import PageFiles, write_page
from qlabench.analyze.serving.figures import serving_figures
from qlabench.analyze.serving.frame import L2_RESIDENT, hbm_text
from qlabench.analyze.serving.kernels import kernel_breakdown
from qlabench.analyze.serving.serving import Serving
from qlabench.analyze.kit.tables import md_table
from qlabench.core.backend_decl import POOL_ACCESS

PAGE = "serving.md"
MAX_ROWS = 40  # longer tables go into a collapsed <details> block
# Column -> (heading on the page, number format).
COLUMNS = {"ms": ("ms", ".4f"), "median_ms": ("median ms", ".4f"), "ms_at_largest": ("ms at largest", ".4f"),
           "pct_hbm": ("% HBM", ".1f"), "pct_hbm_at_largest": ("% HBM at largest", ".1f"), "tbs": ("TB/s", ".2f"),
           "margin": ("margin", ".2f"), "at_about": ("crosses at about", ".0f"), "pool MiB": ("pool MiB", ".1f"),
           "largest_batch": ("largest batch", None), "runner_up": ("runner-up", None),
           "not_competing": ("not competing", None), "from_batch": ("from batch", None),
           "to_batch": ("to batch", None)}


def table(df: pd.DataFrame, columns: list[str] | None = None) -> str:
    """md_table of `columns` under their page headings and formats."""
    cols = [c for c in (columns or list(df.columns)) if c in df.columns]
    shown = df[cols].rename(columns={c: COLUMNS[c][0] for c in cols if c in COLUMNS})
    return md_table(shown, {COLUMNS[c][0]: COLUMNS[c][1] for c in cols if c in COLUMNS and COLUMNS[c][1]})


def _collapsible(summary: str, body: str, n_rows: int) -> str:
    if n_rows <= MAX_ROWS:
        return body
    return f"<details><summary>{summary} ({n_rows} rows)</summary>\n\n{body}\n</details>\n"


def _l2_cell(v) -> str:
    return "-" if v is None or (isinstance(v, float) and math.isnan(v)) else ("L2" if v else "HBM")


def _with_hbm_text(df: pd.DataFrame, pct: str, l2: str) -> pd.DataFrame:
    """`pct` as text: the share with one decimal, or `L2-resident` for a row whose states stayed in L2."""
    if df.empty:
        return df
    return df.assign(**{pct: [hbm_text(p, h) for p, h in zip(df[pct], df[l2])]})


def peak_text(s: Serving) -> str:
    """Which peaks the fractions divide by, in the rows' own numbers."""
    if s.peaks.empty:
        return ("No row carries a measured HBM peak (rows measured on CPU, or before the probe existed): the "
                "page shows times and TB/s (`bytes_moved` / time), no fraction of a limit.")
    parts = []
    for r in s.peaks.itertuples():
        rng = lambda lo, hi: "" if math.isclose(lo, hi) else f" (rows range {lo:.2f}-{hi:.2f})"  # noqa: E731
        by = lambda k: f" by `{k}`" if k else " (kernel not recorded)"  # noqa: E731
        source = getattr(r, "source", "")
        if source and source != OLDER_PROBE:
            # one peak per GPU model: the kernels and runs are the peak's, not each row's own
            parts.append(f"{r.device}: read {r.read_tbs:.2f} TB/s, write {r.write_tbs:.2f} TB/s, the best any run "
                         f"measured on this GPU model ({source}), for all {r.rows} rows")
            continue
        parts.append(f"{r.device}: read {r.read_tbs:.2f} TB/s{rng(r.read_min, r.read_max)}{by(r.read_kernel)}, "
                     f"write {r.write_tbs:.2f} TB/s{rng(r.write_min, r.write_max)}{by(r.write_kernel)}, over "
                     f"{r.rows} rows" + (" (no run measured this GPU model the current way: the older probe's "
                                         "peaks)" if source == OLDER_PROBE else ""))
    return ("The limit is the device's own HBM bandwidth as qlabench measured it at a run's start, not the "
            "data-sheet figure: `hbm_peak_read_tbs` and `hbm_peak_write_tbs` are each the best of several streaming kernels "
            "(sums, an amax, fills, a Triton kernel of each; the row's `hbm_peaks` details name the winner and hold "
            "every candidate's figure; rows from before that record it measured one sum and one fill over 1 GiB, "
            "which read low). One definition for every row: per GPU model, the best read and write peak any run "
            "measured that way, wherever the row's own run measured it (a row is re-expressed, never mixed): "
            + "; ".join(parts) + ". `% HBM` = 100 x `hbm_frac` = 100 x (bytes_read / "
            "read peak + bytes_written / write peak) / median time: the time the step's minimum bytes "
            "(docs/SERVING.md) take at the measured peaks, over the time it took. `TB/s` = bytes_moved / median "
            "time.")


def l2_text(s: Serving) -> str:
    c = s.l2_counts
    return ("Each timed call advances the B sequences of one rotation of the state pool (pool = pool/batch x B "
            "slots; the calls take the pool // B rotations in turn), so a call reads states the previous call did "
            "not touch. With a small pool, states of a rotation may still be in L2 when their turn comes: such a "
            "time is below what HBM allows and its fraction reads high. `pool MiB` is the pool's size, to hold "
            "against the device's L2. "
            + (f"The runs marked {c['resident']} rows as L2-resident (hollow markers, `L2` in the tables, "
               "`L2-resident` in place of their % HBM: their time says nothing of HBM) and "
               f"{c['not resident']} as not; {c['no hint']} rows carry no hint."
               if c["resident"] + c["not resident"] else
               "No row carries an `l2_resident` hint: read small pools with that in mind."))


def pool_access_table(s: Serving) -> str:
    """Per backend on the page: whether its kernel indexes the pool or is wrapped in a gather and a scatter
    (core/pool_access.py), so no one reads a wrapped library's row as the library in an engine."""
    recs = [{"backend": b, "pool access": POOL_ACCESS.get(b, ("not recorded", ""))[0],
             "note": POOL_ACCESS.get(b, ("", ""))[1]} for b in sorted(s.rows["backend"].unique())]
    return md_table(pd.DataFrame(recs))


def _wide(s: Serving) -> pd.DataFrame:
    """Per (group, batch), each variant's time and %HBM ('0.0123 ms 54%'), or its status."""
    d = s.rows
    variants = sorted(d["variant"].unique())
    recs = []
    for (group, batch), g in d.groupby(["group", "batch"], sort=False):
        rec = {"group": group, "batch": int(batch), "pool MiB": g["pool_mib"].iloc[0]}
        for r in g.itertuples():
            if r.usable:
                pct = hbm_text(r.pct_hbm, r.l2_resident, ".0f")
                parts = [f"{r.time_ms:.4f}"] + ([] if pct == "-" else [pct if pct == L2_RESIDENT else f"{pct}%"])
                parts += [] if math.isnan(r.tbs) else [f"{r.tbs:.2f} TB/s"]
                rec[r.variant] = " · ".join(parts)
            else:
                rec[r.variant] = "over 100%" if r.over_peak else r.status
        recs.append(rec)
    out = pd.DataFrame(recs)
    return out[["group", "batch", "pool MiB"] + [v for v in variants if v in out.columns]]


def render(s: Serving, figures: dict[str, str], command: str | None = None) -> str:
    """The page's markdown; `figures` maps a figure stem to its file name beside the page."""
    out = ["# Serving: decode and multi-token verify", "",
           f"Results: {', '.join(f'`{x}`' for x in s.sources) or '(a DataFrame)'}. **{s.summary_line()}.**", ""]
    if command:
        out += [f"Command: `{command}`", ""]
    out += ["A serving step advances B sequences by T tokens each (decode: T = 1; mtp, multi-token verify: T = "
            "2..16) against their recurrent states, which live in a pool of slots as serving engines keep them. "
            "A variant is a backend on one pool layout: `[kv]` holds each state as [HV, K, V] (FLA's), `[vk]` as "
            "[HV, V, K] (FlashInfer's). Only ok rows compete; a row that is skipped, incorrect or errored is "
            "listed with its reason below and is never a time.", "",
            "## How each variant reaches the pool", "", pool_access_table(s), "",
            "## The limit", "", peak_text(s), "", l2_text(s), "",
            "## At a glance: the winner by batch", "",
            "Per model, TP degree, T and state dtype: the fastest correct variant over each run of batches, and the "
            "share of the limit the winner reached at the largest batch.", "",
            table(_with_hbm_text(s.ranges, "pct_hbm_at_largest", "l2_at_largest"),
                  ["group", "winners", "largest_batch", "ms_at_largest", "pct_hbm_at_largest"]),
            "## Where the curves cross", "",
            "Each place the winner changes between two measured batches; `crosses at about` is the batch where the two "
            "curves cross, interpolated on log-log axes from both variants' times at those batches.", ""]
    cr = s.crossings
    out += [table(cr, ["group", "from_batch", "to_batch", "before", "after", "at_about"])
            if not cr.empty else "_The winner is the same at every batch of every group._\n"]
    out += ["## Figures", ""]
    if not figures:
        out += ["_No usable row to draw._", ""]
    for stem, name in figures.items():
        out += [f"![{stem.replace('_', ' ')}]({name})", ""]
    w = _with_hbm_text(s.winners.assign(l2=s.winners["l2_resident"].map(_l2_cell)), "pct_hbm", "l2_resident")
    tbl = table(w, ["group", "batch", "winner", "ms", "pct_hbm", "tbs", "l2", "runner_up", "margin",
                                  "tie", "not_competing"])
    out += ["## Winners per batch", "",
            "`margin` = runner-up time / winner time; `tie`: the margin is within the two rows' noise (`rel_noise`).",
            "", _collapsible("winner per group and batch", tbl, len(w))]
    wide = _wide(s)
    out += ["## Every variant against batch", "",
            "Median ms per step · % of the limit · achieved TB/s; `L2-resident` in place of the %: the run said "
            "the states stayed in L2, so the time says nothing of HBM.", "",
            _collapsible("time and % of the limit per variant", table(wide), len(wide))]
    kb = kernel_breakdown(s.rows)
    out += ["## Where the time goes", "",
            "Each variant's largest step (most bytes), as its traced call ran it: every kernel's time, its share of "
            "the call and its grid. A step far below the limit shows here why: gathers and scatters around a "
            "kernel that takes no pool, or a grid that leaves SMs idle.", "",
            _collapsible("kernels of each variant's largest step", table(kb), len(kb)) if not kb.empty
            else "_No traced kernels in these rows._\n"]
    out += ["## Rows that are not ok", ""]
    out += [_collapsible("not-ok rows", table(s.not_ok), len(s.not_ok)) if not s.not_ok.empty
            else "_Every row is ok._\n"]
    op = _with_hbm_text(s.over_peak.assign(l2=s.over_peak["l2_resident"].map(_l2_cell)), "pct_hbm", "l2_resident")
    out += ["## Rows above 100% of the limit", "",
            "A step cannot move its bytes faster than the measured peaks: a row above 100% is a bug (a byte model "
            "that undercounts, a kernel that skips work, states read from L2), and its check fails it. Never a "
            "winner, never drawn.", "",
            table(op, ["group", "batch", "variant", "status", "pct_hbm", "median_ms", "l2", "reason"])
            if not op.empty else "_None._\n"]
    v = s.versions()
    out += ["## Library versions", "", table(v) if len(v.columns) > 1 else "_No library version recorded._\n"]
    return "\n".join(out)


def write_serving(s: Serving, out_dir: str | os.PathLike, command: str | None = None) -> PageFiles:
    """Write every figure as PNG and the page (serving.md) into out_dir."""
    return write_page(out_dir, PAGE, serving_figures(s), "serving_*.png",
                      lambda written: render(s, written, command))
