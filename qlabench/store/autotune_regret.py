"""The autotune-regret table on disk: each shape's time under the configs another shape tuned first.

Made by `qlabench autotune-regret` (workflows/autotune_regret.py); read by the study page. A CSV with a row
per (head configuration, tuning shape, timed shape), and a markdown summary per timed shape beside it.
"""

from __future__ import annotations

import csv
import statistics
from dataclasses import asdict, dataclass
from pathlib import Path

CSV_NAME = "autotune-regret.csv"
MD_NAME = "autotune-regret.md"


@dataclass(frozen=True)
class RegretCell:
    heads: str  # the head configuration: "2/8 K128 V128 bfloat16"
    tuned_on: str  # the shape whose tuning the configs came from
    timed: str  # the shape timed under them
    median_ms: float
    own_ms: float  # the timed shape under its own tuning
    regret: float  # median_ms / own_ms
    backend: str
    configs_differ: bool  # whether any autotuned kernel ran another config than under its own tuning


def write_regret(cells: list[RegretCell], out: str | Path) -> tuple[Path, Path]:
    """Write the cells as CSV and the per-shape summary as markdown into folder `out`."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    csv_path, md_path = out / CSV_NAME, out / MD_NAME
    with open(csv_path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(asdict(cells[0])))
        w.writeheader()
        w.writerows(asdict(c) for c in cells)
    md_path.write_text(regret_markdown(cells))
    return csv_path, md_path


def regret_summary(cells: list[RegretCell]) -> list[dict]:
    """Per (heads, timed shape): its own time, the median and worst regret over the other tuning shapes,
    and the shape that caused the worst."""
    rows = []
    keys = dict.fromkeys((c.heads, c.timed) for c in cells)
    for heads, timed in keys:
        others = [c for c in cells if c.heads == heads and c.timed == timed and c.tuned_on != timed]
        if not others:
            continue
        worst = max(others, key=lambda c: c.regret)
        rows.append({"heads": heads, "timed": timed, "own_ms": others[0].own_ms,
                     "median_regret": round(statistics.median(c.regret for c in others), 3),
                     "worst_regret": worst.regret, "worst_after": worst.tuned_on,
                     "configs_differ": sum(c.configs_differ for c in others), "others": len(others)})
    return rows


def regret_markdown(cells: list[RegretCell]) -> str:
    """The summary table: what each shape costs when another shape of its heads tuned the library first."""
    lines = ["| heads | shape | own tuning ms | median regret | worst regret | worst after | configs differ |",
             "| --- | --- | --- | --- | --- | --- | --- |"]
    for r in regret_summary(cells):
        lines.append(f"| {r['heads']} | {r['timed']} | {r['own_ms']:.3f} | {r['median_regret']:.2f}x | "
                     f"{r['worst_regret']:.2f}x | {r['worst_after']} | {r['configs_differ']} of {r['others']} |")
    backend = cells[0].backend if cells else "?"
    return (f"Autotune regret of `{backend}`: each shape timed under the configs every other shape of its heads "
            "tuned first (regret = that time / the time under its own tuning; 1.00x = order does not matter).\n\n"
            + "\n".join(lines) + "\n")


def find_regret_files(paths) -> list[Path]:
    """Every autotune-regret.csv in the given folders (or files), at most two folders down."""
    out: list[Path] = []
    for p in map(Path, paths):
        if p.is_file() and p.name == CSV_NAME:
            out.append(p)
        elif p.is_dir():
            out += sorted(p.glob(CSV_NAME)) + sorted(p.glob(f"*/{CSV_NAME}")) + sorted(p.glob(f"*/*/{CSV_NAME}"))
    return list(dict.fromkeys(out))


def read_regret(path: str | Path) -> list[RegretCell]:
    """Cells back from an `autotune-regret.csv`."""
    out = []
    with open(path, newline="") as f:
        for r in csv.DictReader(f):
            out.append(RegretCell(heads=r["heads"], tuned_on=r["tuned_on"], timed=r["timed"],
                                  median_ms=float(r["median_ms"]), own_ms=float(r["own_ms"]),
                                  regret=float(r["regret"]), backend=r["backend"],
                                  configs_differ=r["configs_differ"] == "True"))
    return out
