"""`qlabench cold-start --suite S --out DIR`: each point's first calls in a fresh process, kernel caches empty
and then as the first process left them (workflows/cold_start.py); prints and writes the table. With
`--report-only`, measures nothing and rebuilds the records and the table from the rows under DIR."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.markup import escape

from qlabench.cli import options as opt
from qlabench.cli.app import console


def cold_start_cmd(
    suite: str = opt.suite("cold-start"),
    out: Path = opt.out("results/cold-start", "Folder for the rows (cold/, warm/), the caches, cold-start.json "
                       "and cold-start.md"),
    backends: str = opt.BACKENDS,
    modes: str = opt.MODES,
    device: str = opt.DEVICE,
    report_only: bool = typer.Option(False, "--report-only", help="Measure nothing: rebuild cold-start.json and "
                                     "cold-start.md from the rows under --out/cold and --out/warm (give the suite, "
                                     "narrowed to at least the points the run had; their order does not matter)"),
):
    """First calls of every point in a fresh process, with empty kernel caches (cold) and with the caches
    the cold process left (warm): JIT compiles, autotuning and cache loads, per backend and point."""
    from qlabench.analyze.cold_start.table import cold_start_markdown
    from qlabench.core.spec import load_suite, resolve_suite_path
    from qlabench.run.options import RunOptions
    from qlabench.run.plan import Selection, plan_sweep
    from qlabench.workflows.cold_start import rebuild_cold_start, run_cold_start

    folder = opt.writable_folder(out)
    s = plan_sweep(load_suite(str(resolve_suite_path(suite))), RunOptions(device=device),
                   Selection(backends=backends, modes=modes), on_device=not report_only).suite
    if report_only:
        records = rebuild_cold_start(s, folder)
    else:
        def show(r: dict) -> None:
            t = "-" if r["first_calls_s"] is None else f"{r['first_calls_s']:.2f}s"
            console.print(f"{r['phase']:>4} {escape(r['backend'])} {escape(r['point'])}: {t} ({r['status']})")

        records = run_cold_start(s, folder, RunOptions(device=device), on_record=show)
    console.print(cold_start_markdown(records), markup=False)
