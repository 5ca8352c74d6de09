"""One run's three times per head configuration and call, as a docs block: the fastest call on the device and
launched eagerly, FlashQLA's and FLA's, and how many rows are launch-bound.

    <!-- qlabench:block three-times run=RUN -->             (mode=fwd: the forward rows, the default)

Each line is one (heads, call) of the run: the fastest backend by `device_ms` (the call replayed in a CUDA graph),
the fastest by `eager_ms` (launched back to back from Python) with that row's `host_ms`, FlashQLA's best setting
(flash_qla, -nocp, -forcecp) by each time, FLA's two times, and the launch-bound rows (the rows' own
`launch_bound` mark) of those with a device time. A backend measured more than once in the run (replicates) reads
its median. Only ok rows count.

A generated block rather than a hand-written summary: `docs check` holds every figure to the run exactly, where
the prose check could only say each decimal was somewhere in the run's 90 rows, and most such figures (48% of the
ones it checked) would have passed with their last digit one off.
"""

from __future__ import annotations

import pandas as pd

from qlabench.core.errors import ConfigError
from qlabench.core.select import sequences_label
from qlabench.core.text import md_code
from qlabench_publish.blocks.context import BlockContext
from qlabench_publish.blocks.fla_fair import run_rows

FLASH_QLA = ("flash_qla", "flash_qla-nocp", "flash_qla-forcecp")
RIGHT = {"its host ms"}  # the one column of plain numbers: right-aligned


def md_cells(table: pd.DataFrame) -> str:
    """The table in markdown with its cells as built (code spans kept: md_table would print them literally)."""
    head = "| " + " | ".join(table.columns) + " |"
    rule = "|" + "|".join("---:" if c in RIGHT else "---" for c in table.columns) + "|"
    return "\n".join([head, rule, *("| " + " | ".join(map(str, r)) + " |" for r in table.itertuples(index=False))])


def _fastest(times: pd.DataFrame, col: str, backends=None) -> pd.Series | None:
    t = times if backends is None else times[times["backend"].isin(backends)]
    t = t.dropna(subset=[col])
    return None if t.empty else t.loc[t[col].idxmin()]


def three_times_table(rows: pd.DataFrame, mode: str = "fwd") -> pd.DataFrame:
    """One line per (heads, call) of `rows` (one run's): see the module's docstring. Empty if no ok row."""
    ok = rows[(rows["status"] == "ok") & (rows["mode"] == mode)]
    out = []
    if ok.empty:
        return pd.DataFrame(out)
    lens = ok["seqlens"].map(lambda s: [int(x) for x in s])
    ok = ok.assign(call=lens.map(sequences_label), tokens=lens.map(sum))
    groups = ok.groupby(["h_qk", "h_v", "call"])
    # by heads, then the larger call first, then its name (32768 before 4x8192)
    order = sorted(groups.groups, key=lambda k: (k[0], -groups.get_group(k)["tokens"].iloc[0], k[2]))
    for hq, hv, call in order:
        g = groups.get_group((hq, hv, call))
        times = g.groupby("backend", as_index=False)[["device_ms", "eager_ms", "host_ms"]].median()
        dev, eag = _fastest(times, "device_ms"), _fastest(times, "eager_ms")
        fq_dev, fq_eag = _fastest(times, "device_ms", FLASH_QLA), _fastest(times, "eager_ms", FLASH_QLA)
        fla = times[times["backend"] == "fla"]
        marked = g["launch_bound"].dropna() if "launch_bound" in g else pd.Series([], dtype=object)
        tp = g["tp"].dropna().iloc[0] if "tp" in g and g["tp"].notna().any() else None

        def named(r, col):
            return "-" if r is None else f"{md_code(r['backend'])} {r[col]:.3f}"

        def fq(r, col):
            return "-" if r is None else f"{r[col]:.3f} ({md_code(r['backend'])})"

        out.append({
            "TP (heads)": (f"TP{int(tp)} " if tp is not None else "") + f"({hq}/{hv})", "call": call,
            "fastest, device ms": named(dev, "device_ms"), "fastest, eager ms": named(eag, "eager_ms"),
            "its host ms": "-" if eag is None or pd.isna(eag["host_ms"]) else f"{eag['host_ms']:.3f}",
            "FlashQLA's best, device / eager ms": f"{fq(fq_dev, 'device_ms')} / {fq(fq_eag, 'eager_ms')}",
            "fla, device / eager ms": ("-" if fla.empty
                                       else f"{fla['device_ms'].iloc[0]:.3f} / {fla['eager_ms'].iloc[0]:.3f}"),
            "launch-bound": f"{int(marked.astype(bool).sum())} of {len(marked)}",
        })
    return pd.DataFrame(out)


def three_times_block(ctx: BlockContext, run: str, mode: str = "fwd") -> str:
    """The table of `three_times_table` on `run`, read from the one results file that holds it; a ConfigError
    when the run has no ok row of `mode`."""
    rows, label = run_rows(ctx, run, "three-times")
    table = three_times_table(rows, mode)
    if table.empty:
        raise ConfigError(f"three-times: run {run!r} has no ok {mode} row")
    return "\n".join([
        f"Run {label}, {mode}: per head configuration and call, the rows' `device_ms`, `eager_ms` and `host_ms`",
        "(a backend's median where the run measured it more than once); launch-bound: the rows so marked, of those",
        "with a device time.", "",
        md_cells(table)])


__all__ = ["three_times_block", "three_times_table"]
