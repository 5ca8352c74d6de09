"""What moved when FLA became fair: each shape's FLA time tuned by the process (the committed study rows,
made before per-point tuning) against its time tuned for itself (the autotune-regret table's diagonal), and
FlashQLA's speedup over FLA with each.

    python scripts/fla_fair_speedups.py            # prints a markdown table (docs/FLASHQLA-STUDY.md)

The fair FLA times come from the regret run (results/h200-current/autotune-regret/, one H200 session, the
graph timer); the older FLA and the FlashQLA times are the newest current rows of each point (advise's
rule), so each ratio names the runs it divides. A ratio of two runs also holds run-to-run variation (~1%).
"""

from __future__ import annotations

import sys

from qlabench.analyze.current import current_evidence
from qlabench.store.autotune_regret import read_regret
from qlabench.store.catalog import load_catalog

REGRET = "results/h200-current/autotune-regret/autotune-regret.csv"


def shape(seqlens) -> str:
    lens = list(seqlens)
    return f"{len(lens)}x{lens[0]}" if len(set(lens)) == 1 else "+".join(map(str, lens))


def main() -> int:
    own = {(c.heads.split()[0], c.timed): c.own_ms for c in read_regret(REGRET) if c.tuned_on == c.timed}
    rows = current_evidence(load_catalog()).rows
    rows = rows[(rows.status == "ok") & (rows["mode"] == "fwd") & (rows.layout == "varlen")
                & (rows.gate_zero_frac.isna() | (rows.gate_zero_frac == 0.25))
                & (rows.gate_scale.isna() | (rows.gate_scale == 16))]
    rows = rows.assign(heads=rows.h_qk.astype(str) + "/" + rows.h_v.astype(str), shape=rows.seqlens.map(shape))
    newest = rows.sort_values("timestamp").groupby(["backend", "heads", "shape"]).tail(1)
    t = newest.set_index(["backend", "heads", "shape"])
    print("| heads | shape | fla, tuned by the process (run) | fla, tuned for the point | change | "
          "flash_qla (run) | flash_qla vs fla: before | after |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    for (heads, sh), fair in own.items():
        try:
            old, fq = t.loc[("fla", heads, sh)], t.loc[("flash_qla", heads, sh)]
        except KeyError:
            print(f"| {heads} | {sh} | no row | {fair:.3f} | | | | |")
            continue
        print(f"| {heads} | {sh} | {old.median_ms:.3f} (`{old.run_id}`) | {fair:.3f} | "
              f"{fair / old.median_ms - 1:+.1%} | {fq.median_ms:.3f} (`{fq.run_id}`) | "
              f"{old.median_ms / fq.median_ms:.2f}x | {fair / fq.median_ms:.2f}x |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
