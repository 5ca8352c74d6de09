"""`qlabench plot` (speedup curves) and `qlabench plot-sm` (SM utilisation) from result files."""

from __future__ import annotations

from pathlib import Path

import typer

from qlabench.cli.app import console


def plot_cmd(
    results: list[Path] = typer.Argument(..., help="Result files or folders"),
    out: Path = typer.Option(Path("plots"), "--out", "-o", help="Folder for the PNGs"),
    baseline: str = typer.Option(None, "--baseline", help="Backend to divide by (default: the suite's "
                                "baseline, as `run sweep` and `show` use)"),
    x: str = typer.Option("total_tokens", "--x", help="total_tokens or seqlen"),
    panel: str = typer.Option("heads", "--panel", help="One panel per: heads or tp"),
    all_runs: bool = typer.Option(False, "--all-runs", help="Keep every run's rows (default: newest per point)"),
):
    """Write speedup-curve PNGs from result files."""
    from qlabench.analyze.plot.speedups import plot_speedups
    from qlabench.analyze.kit.speedups import pick_baseline, suite_baselines

    _check_out_folder(out)
    df = _rows(results, all_runs)
    base = pick_baseline(df, baseline, suite_baselines(results))
    for p in plot_speedups(df, out, base, x=x, panel=panel):
        console.print(f"wrote {p}")


def plot_sm_cmd(
    results: list[Path] = typer.Argument(..., help="Result files or folders"),
    out: Path = typer.Option(Path("plots"), "--out", "-o", help="Folder for the PNGs"),
    x: str = typer.Option("heads", "--x", help="heads or tp"),
    all_runs: bool = typer.Option(False, "--all-runs", help="Keep every run's rows (default: newest per point)"),
):
    """Write SM-utilisation PNGs: sm_coverage and sm_active_pct per backend, against heads or TP."""
    from qlabench.analyze.plot.sm import plot_sm

    _check_out_folder(out)
    df = _rows(results, all_runs)
    for p in plot_sm(df, out, x=x):
        console.print(f"wrote {p}")


def _rows(results: list[Path], all_runs: bool):
    """The rows a plot draws, through the evidence layer and its rule for a believed row (an impossible or
    unchecked time is drawn as no time): every run's with --all-runs, else the newest per point; a run's
    replicates of a point are one point either way (analyze/evidence/replicates.py)."""
    from qlabench.analyze.evidence import believed, fold_replicates, newest_per_point, read_evidence

    df = believed(read_evidence(results, all_runs=True).rows)
    return fold_replicates(df) if all_runs else newest_per_point(df)


def _check_out_folder(out: Path) -> None:
    """-o names a folder the PNGs go into: a file there (or a file name such as plot.png) is exit 2."""
    from qlabench.cli.options import writable_folder
    from qlabench.core.errors import ConfigError, StoreError

    if out.exists() and not out.is_dir():
        raise ConfigError(f"--out {out}: is a file; give a folder for the PNGs (one per mode and dtype)")
    writable_folder(out)
    if not out.exists() and out.suffix.lower() in (".png", ".pdf", ".svg", ".jpg"):
        raise ConfigError(f"--out {out}: looks like a file name; give a folder for the PNGs (one per mode and dtype)")
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise StoreError(f"--out {out}: cannot create the folder: {e.strerror or e}") from None
