"""Print our forward medians beside FlashQLA's published H200 table, as markdown.

    python scripts/published_compare.py results/h200/RUN.parquet [--reference CSV] [--mode fwd|fwd_bwd]

The reference is FlashQLA's published H200 table as a CSV (columns mode, h_qk, h_v, seqlens,
model_config, flash_qla_ms, fla_ms); by default the one qlabench ships
(qlabench/analyze/data/flashqla_h200_published.csv). Needs nothing beyond qlabench's own dependencies.

Rows are matched on the head config and the packed sequence layout (the published table is always
batch 1 with cu_seqlens; a dense 1xT point matches its single-sequence row). For fwd_bwd there is no
published column (their backward rows time the backward kernels alone), so only our figures print.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import pandas as pd

from qlabench.store.files import latest_per_point, read_results

PUBLISHED = Path(__file__).resolve().parents[1] / "qlabench" / "analyze" / "data" / "flashqla_h200_published.csv"


def table(results: list[str], reference: Path | None, mode: str) -> pd.DataFrame:
    df = latest_per_point(read_results(results))
    df = df[(df["status"] == "ok") & (df["mode"] == mode) & df["backend"].isin(["flash_qla", "fla"])]
    df = df.assign(layout_key=df["seqlens"].map(lambda s: "+".join(str(int(x)) for x in s)))
    wide = df.pivot_table(index=["h_qk", "h_v", "layout_key"], columns="backend",
                          values=["median_ms", "sm_coverage"], aggfunc="first")
    wide.columns = [f"{b} {'ms' if v == 'median_ms' else 'sm_coverage'}" for v, b in wide.columns]
    wide = wide.reset_index()
    wide["speedup"] = wide["fla ms"] / wide["flash_qla ms"]
    if mode == "fwd" and reference is not None and reference.is_file():
        ref = pd.read_csv(reference)
        ref = ref[ref["mode"] == "fwd"].assign(layout_key=lambda r: r["seqlens"].astype(str))
        ref = ref.rename(columns={"flash_qla_ms": "pub flash_qla ms", "fla_ms": "pub fla ms",
                                  "model_config": "published config"})
        wide = wide.merge(ref[["h_qk", "h_v", "layout_key", "published config", "pub flash_qla ms", "pub fla ms"]],
                          on=["h_qk", "h_v", "layout_key"], how="left")
        wide["pub speedup"] = wide["pub fla ms"] / wide["pub flash_qla ms"]
        wide["flash_qla vs pub"] = wide["flash_qla ms"] / wide["pub flash_qla ms"]
        wide["fla vs pub"] = wide["fla ms"] / wide["pub fla ms"]
    wide.insert(0, "h_qk/h_v", wide.pop("h_qk").astype(str) + "/" + wide.pop("h_v").astype(str))
    return wide.rename(columns={"layout_key": "seqlens"}).sort_values(["h_qk/h_v", "seqlens"], key=lambda s: s)


def markdown(df: pd.DataFrame) -> str:
    """A GitHub markdown table, numbers to 3 decimals (plain Python: pandas' to_markdown needs tabulate)."""
    def cell(v) -> str:
        if isinstance(v, float):
            return "" if pd.isna(v) else f"{v:.3f}"
        return str(v).replace("|", "\\|")

    lines = ["| " + " | ".join(map(str, df.columns)) + " |", "|" + "|".join("---" for _ in df.columns) + "|"]
    lines += ["| " + " | ".join(cell(v) for v in row) + " |" for row in df.itertuples(index=False)]
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("results", nargs="+")
    ap.add_argument("--reference", type=Path, default=PUBLISHED, help="FlashQLA's published table (CSV; default: "
                    "the packaged one)")
    ap.add_argument("--mode", default="fwd", choices=["fwd", "fwd_bwd"])
    a = ap.parse_args()
    print(markdown(table(a.results, a.reference, a.mode)))


if __name__ == "__main__":
    main()
