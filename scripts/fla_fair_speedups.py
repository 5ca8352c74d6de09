"""What moved when FLA became fair: FlashQLA's speedup over FLA on every forward point two study runs share,
each speedup divided within one run.

    python scripts/fla_fair_speedups.py                          # the defaults below; prints markdown
    python scripts/fla_fair_speedups.py --before RUN --after RUN --heads 2/8,4/16

`--before`: a study run made before per-point tuning (FLA tuned by whatever shape its worker met first);
`--after`: one made with `[run] autotune = "point"`. Both runs hold flash_qla and fla on the same points, so
each "flash_qla vs fla" ratio is one run's; the FLA change between the runs also holds run-to-run variation
(about 1%) and, when the runs were timed in different regimes, the regime's effect on FLA (within 1.6% for FLA
and FlashQLA in results/h200-timing-regimes). Reads the current evidence (results/catalog.toml).
"""

from __future__ import annotations

import argparse
import statistics
import sys

from qlabench.analyze.evidence.current import current_evidence
from qlabench.analyze.evidence.regimes import regime_series
from qlabench.store.catalog import load_catalog

BEFORE = "20261130T161245Z-5affc1"  # results/h200-study/flashqla-study: fla tuned by the process, a burst
AFTER = "20261201T180105Z-1397cf"  # results/h200-current/flashqla-study: fla tuned per point, sustained


def shape(seqlens) -> str:
    lens = list(seqlens)
    return f"{len(lens)}x{lens[0]}" if len(set(lens)) == 1 else "+".join(map(str, lens))


def times(rows, run: str):
    mine = rows[rows.run_id == run]
    regimes = sorted(set(regime_series(mine)))
    return mine.set_index(["backend", "heads", "shape"])["median_ms"].to_dict(), "/".join(regimes)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--before", default=BEFORE)
    ap.add_argument("--after", default=AFTER)
    ap.add_argument("--heads", default="", help="only these head configs, e.g. 2/8,4/16 (default: every shared one)")
    args = ap.parse_args()
    rows = current_evidence(load_catalog()).rows
    rows = rows[(rows.status == "ok") & (rows["mode"] == "fwd") & (rows.layout == "varlen")
                & (rows.gate_zero_frac.isna() | (rows.gate_zero_frac == 0.25))
                & (rows.gate_scale.isna() | (rows.gate_scale == 16))]
    rows = rows.assign(heads=rows.h_qk.astype(str) + "/" + rows.h_v.astype(str), shape=rows.seqlens.map(shape))
    before, regime_b = times(rows, args.before)
    after, regime_a = times(rows, args.after)
    wanted = set(filter(None, args.heads.split(",")))
    shared = sorted({(h, s) for b, h, s in after if b == "fla" and ("fla", h, s) in before
                     and ("flash_qla", h, s) in before and ("flash_qla", h, s) in after
                     and (not wanted or h in wanted)}, key=lambda k: (int(k[0].split("/")[0]), k[1]))
    if not shared:
        print(f"no forward point has fla and flash_qla in both {args.before} and {args.after}")
        return 1
    print(f"before: run `{args.before}` ({regime_b}); after: run `{args.after}` ({regime_a}); ms per call\n")
    print("| heads | shape | fla before | fla after | fla change | flash_qla before | flash_qla after | "
          "flash_qla vs fla: before | after |")
    print("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    moves = []
    for h, s in shared:
        fb, fa = before[("fla", h, s)], after[("fla", h, s)]
        qb, qa = before[("flash_qla", h, s)], after[("flash_qla", h, s)]
        moves.append(fa / fb - 1)
        print(f"| {h} | {s} | {fb:.3f} | {fa:.3f} | {fa / fb - 1:+.1%} | {qb:.3f} | {qa:.3f} | "
              f"{fb / qb:.2f}x | {fa / qa:.2f}x |")
    print(f"\n{len(shared)} points; FLA's change: median {statistics.median(moves):+.1%}, "
          f"from {min(moves):+.1%} to {max(moves):+.1%}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
