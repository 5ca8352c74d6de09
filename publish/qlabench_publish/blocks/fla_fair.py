"""What moved when FLA became fair, as a docs block: FlashQLA's speedup over FLA on every forward point that two
study runs share, each speedup divided within one run.

    <!-- qlabench:block fla-fair before=RUN after=RUN -->              (heads=2/8,4/16: only those)

`before`: a study run made before per-point tuning (FLA tuned by whatever shape its worker met first); `after`:
one made with `[run] autotune = "point"`. Both runs hold flash_qla and fla on the same points, so each speedup is
one run's; FLA's change between the runs also holds run-to-run variation and, where the runs were timed in
different regimes, the regime's effect (the block names each run's regime). The rows are the study's published
inputs: forward, varlen, the published gate (a quarter of the value heads at g = 0, scale 1/16).

Each run is read from the one committed results file that holds it, current or history (the run before is
history by design). A generated block rather than a table pasted from a script's output: `docs check` holds every
one of its numbers to the two runs exactly, where the prose check could only say each was held somewhere in the
runs cited; and the table cannot outlive the command that made it (the script it replaces read the current
evidence only, and printed nothing once its "before" run became history).
"""

from __future__ import annotations

import pandas as pd

from qlabench.analyze.evidence.regimes import regime_series
from qlabench.analyze.kit.tables import md_table
from qlabench.core.errors import ConfigError
from qlabench.core.text import md_code
from qlabench.store.files import read_results, result_files, run_ids
from qlabench_publish.blocks.context import BlockContext

COLUMNS = {"fla before": ".3f", "fla after": ".3f", "fla change": "+.1%", "flash_qla before": ".3f",
           "flash_qla after": ".3f", "speedup before": ".2f", "speedup after": ".2f"}


def _shape(seqlens) -> str:
    lens = list(seqlens)
    return f"{len(lens)}x{lens[0]}" if len(set(lens)) == 1 else "+".join(map(str, lens))


def _published_forward(rows: pd.DataFrame) -> pd.DataFrame:
    """The ok forward varlen rows at the published gate, with `heads` ('h_qk/h_v') and `shape` ('8x1024')."""
    keep = ((rows["status"] == "ok") & (rows["mode"] == "fwd") & (rows["layout"] == "varlen")
            & (rows["gate_zero_frac"].isna() | (rows["gate_zero_frac"] == 0.25))
            & (rows["gate_scale"].isna() | (rows["gate_scale"] == 16)))
    rows = rows[keep]
    return rows.assign(heads=rows["h_qk"].astype(str) + "/" + rows["h_v"].astype(str),
                       shape=rows["seqlens"].map(_shape))


def fair_table(rows: pd.DataFrame, before: str, after: str, heads: set[str] | None = None) -> pd.DataFrame:
    """One line per (heads, shape) where both runs hold fla and flash_qla: their times (median ms) in each run,
    FLA's change from `before` to `after`, and the speedup fla / flash_qla within each run. Empty if none."""
    rows = _published_forward(rows)
    times = {run: rows[rows["run_id"] == run].set_index(["backend", "heads", "shape"])["median_ms"].to_dict()
             for run in (before, after)}
    b, a = times[before], times[after]
    shared = sorted({(h, s) for lib, h, s in a if lib == "fla" and (not heads or h in heads)
                     and all(k in t for t in (a, b) for k in (("fla", h, s), ("flash_qla", h, s)))},
                    key=lambda k: (int(k[0].split("/")[0]), k[1]))
    out = [{"heads": h, "shape": s, "fla before": b[("fla", h, s)], "fla after": a[("fla", h, s)],
            "fla change": a[("fla", h, s)] / b[("fla", h, s)] - 1, "flash_qla before": b[("flash_qla", h, s)],
            "flash_qla after": a[("flash_qla", h, s)], "speedup before": b[("fla", h, s)] / b[("flash_qla", h, s)],
            "speedup after": a[("fla", h, s)] / a[("flash_qla", h, s)]} for h, s in shared]
    return pd.DataFrame(out, columns=["heads", "shape", *COLUMNS])


def run_rows(ctx: BlockContext, run: str, block: str = "fla-fair") -> tuple[pd.DataFrame, str]:
    """The rows of `run` and its citation (the id and the folder of its file), from the one results file under
    the catalog's root that holds it; a ConfigError when none or several do."""
    root = ctx.catalog.root
    holders = [f for f in result_files([root]) if run in run_ids(f)]
    if len(holders) != 1:
        where = "no results file holds it" if not holders else f"{len(holders)} results files hold it"
        raise ConfigError(f"{block}: run {run!r}: {where} under {root}")
    rows = read_results(holders)
    rel = holders[0].relative_to(root.parent) if holders[0].is_relative_to(root.parent) else holders[0]
    return rows[rows["run_id"] == run], f"{md_code(run)} ({md_code(rel.parent)})"


def fla_fair_block(ctx: BlockContext, before: str, after: str, heads: str | None = None) -> str:
    """The table of `fair_table` on the two runs, with each run's regime and a line on FLA's change; a
    ConfigError when the two runs share no point."""
    wanted = {h for h in (heads or "").split(",") if h}
    (b, b_label), (a, a_label) = run_rows(ctx, before), run_rows(ctx, after)
    table = fair_table(pd.concat([b, a], ignore_index=True), before, after, wanted)
    if table.empty:
        raise ConfigError(f"fla-fair: no forward point has fla and flash_qla in both {before} and {after}")
    regime = {run: "/".join(sorted(set(regime_series(rows)))) for run, rows in ((before, b), (after, a))}
    change = table["fla change"]
    return "\n".join([
        f"before: run {b_label} ({regime[before]}); after: run {a_label} ({regime[after]}); ms per call (median); "
        "speedup = fla / flash_qla within one run", "",
        md_table(table, COLUMNS).rstrip(), "",
        f"{len(table)} points; FLA's change: median {change.median():+.1%}, from {change.min():+.1%} to "
        f"{change.max():+.1%}"])


__all__ = ["fair_table", "fla_fair_block", "run_rows"]
