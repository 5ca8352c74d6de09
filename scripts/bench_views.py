#!/usr/bin/env python
"""Time qlabench's views as whole processes over a results tree, at 1x, 4x and 16x its rows.

For each scale, a copy of the tree is generated in a temporary folder: every result file gets k - 1
re-runs of itself beside it (`<stem>-rerun<i>.parquet`: the same points, their own run id, timestamps i
days later), which is how a results tree grows. Each command is then run `--runs` times from that
folder as a user would run it, and the median wall and CPU (user + system of the process) seconds are
printed as a markdown table, with Python's and the imports' start-up measured the same way, so a view's
own work is its time less the start-up's.

    python scripts/bench_views.py [--results results] [--scales 1,4,16] [--runs 3]
    python scripts/bench_views.py --readers [--results results] [--runs 3]

`--readers` instead times the two ways to read the tree that the evidence layer could use, in one
process: pyarrow (what it uses, with the schema upgrade) and DuckDB's `read_parquet` over every file, for
the columns a scan of the tree needs and for all columns.

docs/BENCHMARKS.md records its output (section "Views over the results tree").
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

# Python and the imports every view needs (the data frame, parquet, the evidence layer, the table renderer).
STARTUP = ("import qlabench.cli, pandas, pyarrow.parquet, qlabench.analyze.kit.speedups, qlabench.analyze.evidence, "
           "qlabench.cli.views, rich.table")
# (label, argv after `qlabench`): run from the generated tree's parent, paths relative to it.
COMMANDS = (
    ("show FILE", ["show", "results/h200/20261129T173649Z-6de996.parquet"]),
    ("show FOLDER", ["show", "results/h200-study"]),
    ("advise", ["advise", "--model", "qwen3.5-397b", "--tp", "8", "--seqlens", "32768,4x8192,8x1024"]),
    ("report results/h200-study", ["report", "results/h200-study", "--out", "{tmp}/report"]),
)


def rerun(src: Path, dst: Path, i: int) -> None:
    """`src` as the i-th re-run of its run: its own run id, every timestamp i days later."""
    t = pq.read_table(src)
    names = t.column_names
    if "run_id" not in names or "timestamp" not in names:
        shutil.copy2(src, dst)
        return
    runs = [f"{r}-rerun{i}" for r in t.column("run_id").to_pylist()]
    stamps = [(dt.datetime.fromisoformat(s) + dt.timedelta(days=i)).isoformat() if s else s
              for s in t.column("timestamp").to_pylist()]
    t = t.set_column(names.index("run_id"), "run_id", pa.array(runs, pa.string()))
    t = t.set_column(names.index("timestamp"), "timestamp", pa.array(stamps, pa.string()))
    pq.write_table(t, dst)


def make_tree(results: Path, root: Path, scale: int) -> int:
    """results/ copied under root/, each result file with scale - 1 re-runs beside it; returns the rows."""
    from qlabench.store.files import result_files

    shutil.copytree(results, root / "results")
    rows = 0
    for f in result_files([root / "results"]):
        rows += pq.ParquetFile(f).metadata.num_rows * scale
        for i in range(1, scale):
            rerun(f, f.with_name(f"{f.stem}-rerun{i}.parquet"), i)
    return rows


def timed(argv: list[str], cwd: Path, runs: int) -> tuple[float, float, int]:
    """(median wall s, median CPU s, exit code of the last run) of `argv` as a whole process."""
    walls, cpus, rc = [], [], 0
    for _ in range(runs):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.perf_counter()
        proc = subprocess.run(argv, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        walls.append(time.perf_counter() - t0)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpus.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
        rc = proc.returncode
        if rc:
            print(f"  {' '.join(argv[1:])}: exit {rc}: {proc.stderr.strip()[-300:]}", file=sys.stderr)
    return statistics.median(walls), statistics.median(cpus), rc


def reader_comparison(results: Path, runs: int) -> None:
    """Median process CPU and wall seconds of reading every result file under `results`, per reader."""
    import duckdb

    from qlabench.core.identity import key_axes
    from qlabench.store.files import read_table, result_files

    files = result_files([results])
    scan = list(dict.fromkeys(key_axes() + ("status", "timestamp", "run_id", "median_ms")))
    quoted = ", ".join(f'"{c}"' for c in scan)
    con = duckdb.connect()
    readers = {
        "pyarrow, scan columns (+ upgrade)": lambda: [read_table(f, scan) for f in files],
        "duckdb, scan columns": lambda: con.sql(f"select {quoted} from read_parquet({[str(f) for f in files]}, "
                                                "union_by_name=true)").to_arrow_table(),
        "pyarrow, all columns (+ upgrade)": lambda: [read_table(f) for f in files],
        "duckdb, all columns": lambda: con.sql(f"select * from read_parquet({[str(f) for f in files]}, "
                                               "union_by_name=true)").to_arrow_table(),
    }
    print(f"reading {len(files)} files under {results}; median of {runs} runs\n")
    print("| reader | wall s | CPU s |\n| --- | --- | --- |")
    for name, read in readers.items():
        walls, cpus = [], []
        for _ in range(runs):
            t0, c0 = time.perf_counter(), time.process_time()
            read()
            walls.append(time.perf_counter() - t0)
            cpus.append(time.process_time() - c0)
        print(f"| {name} | {statistics.median(walls):.2f} | {statistics.median(cpus):.2f} |", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--results", type=Path, default=Path("results"))
    ap.add_argument("--scales", default="1,4,16")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--readers", action="store_true", help="compare pyarrow and DuckDB reading the tree")
    args = ap.parse_args()
    if args.readers:
        reader_comparison(args.results, args.runs)
        return
    qlabench = [sys.executable, "-m", "qlabench"]
    env_note = f"{os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f} at the start"
    print(f"views over {args.results} ({env_note}); median of {args.runs} runs; wall / CPU seconds\n")
    print("| scale | rows | command | wall s | CPU s | own wall s | own CPU s |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for scale in (int(s) for s in args.scales.split(",")):
        with tempfile.TemporaryDirectory(prefix="bench-views-") as tmp:
            tmp = Path(tmp)
            rows = make_tree(args.results.resolve(), tmp, scale)
            s_wall, s_cpu, _ = timed([sys.executable, "-c", STARTUP], tmp, args.runs)
            print(f"| {scale}x | {rows} | start-up (imports) | {s_wall:.2f} | {s_cpu:.2f} | | |", flush=True)
            for label, argv in COMMANDS:
                wall, cpu, rc = timed(qlabench + [a.format(tmp=tmp) for a in argv], tmp, args.runs)
                mark = "" if rc == 0 else f" (exit {rc})"
                print(f"| {scale}x | {rows} | {label}{mark} | {wall:.2f} | {cpu:.2f} | {wall - s_wall:.2f} | "
                      f"{cpu - s_cpu:.2f} |", flush=True)


if __name__ == "__main__":
    main()
