"""The `qlabench` command line: thin commands over the library; errors become a message and exit code 2."""

from __future__ import annotations

import functools
import sys
from pathlib import Path

import typer
from rich.console import Console
from rich.table import Table

from qlabench.core.errors import QlabenchError

app = typer.Typer(help="Benchmark and profile Gated DeltaNet kernels.", no_args_is_help=True,
                  pretty_exceptions_enable=False, add_completion=False)
run_app = typer.Typer(help="Run benchmarks.", no_args_is_help=True)
app.add_typer(run_app, name="run")
console = Console()
err_console = Console(stderr=True)


def exits_on_error(fn):
    """Turn project errors into one line on stderr and exit code 2 (usage / input errors)."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except QlabenchError as e:
            err_console.print(f"[red]error:[/red] {e}", highlight=False, soft_wrap=True)
            raise typer.Exit(2) from None

    return wrapper


@run_app.command("sweep")
@exits_on_error
def run_sweep_cmd(
    suite: str = typer.Option("quick-cpu", "--suite", "-s", help="Suite name (suites/NAME.toml) or a path"),
    out: Path = typer.Option(Path("results"), "--out", "-o", help="Results root: writes OUT/<suite>/<run_id>.parquet"),
    device: str = typer.Option(None, "--device", help="cpu, cuda or cuda:N (default: the suite's, else auto)"),
    timer: str = typer.Option(None, "--timer", help="wall, events or graph (default: the suite's)"),
    baseline: str = typer.Option(None, "--baseline", help="Backend the summary's speedups are against"),
    no_check: bool = typer.Option(False, "--no-check", help="Skip the correctness check (times are then unchecked)"),
    dry_run: bool = typer.Option(False, "--dry-run", help="Print the points and their count; run nothing"),
    resume: bool = typer.Option(False, "--resume", help="Skip points already recorded ok in OUT for this suite "
                                "and environment"),
    max_time: float = typer.Option(None, "--max-time", min=0, help="Start no new point after SECONDS; "
                                   "continue later with --resume"),
    no_isolate: bool = typer.Option(False, "--no-isolate", help="Run points in this process (no crash isolation, "
                                    "no timeouts; for debugging)"),
    executor: str = typer.Option("local", "--executor", help="local: one worker per visible GPU; ray: a Ray "
                                 "cluster, one GPU per worker (docs/SCALE-OUT.md)"),
    ray_address: str = typer.Option(None, "--ray-address", help="Ray cluster to join (default: RAY_ADDRESS, "
                                    "else a local Ray instance)"),
    shard: str = typer.Option(None, "--shard", help="Run only share I/N (0-based) of the points, e.g. "
                              "$SLURM_ARRAY_TASK_ID/$SLURM_ARRAY_TASK_COUNT; combine with `qlabench merge`"),
    gpus: int = typer.Option(None, "--gpus", min=1, help="Use at most this many GPUs (local: the first visible "
                             "ones; ray: workers)"),
    cache_dir: Path = typer.Option(None, "--cache-dir", help="Kernel compile caches (TileLang, Triton, Inductor); "
                                   "default $QLABENCH_CACHE_DIR, else ~/.cache/qlabench"),
    with_ncu: bool = typer.Option(False, "--ncu", help="Also profile every ok GPU point under Nsight Compute "
                                  "(--clock-control none) for sm_active_pct; slow"),
):
    """Run a sweep suite and write its results as parquet (rows are saved as they are measured)."""
    from qlabench.measure.caches import use_cache_dir
    from qlabench.core.spec import load_suite

    use_cache_dir(cache_dir)

    s = load_suite(suite)
    if with_ncu:
        import dataclasses

        s = dataclasses.replace(s, profile=dataclasses.replace(s.profile, ncu=True))
    if shard:
        import dataclasses

        from qlabench.run.executors.shard import parse_shard, shard_points

        s = dataclasses.replace(s, points=tuple(shard_points(s.points, parse_shard(shard))))
    make_executor = _executor_factory(executor, ray_address, gpus, no_isolate)
    if dry_run:
        from qlabench.cli.views import points_table

        console.print(points_table(s))
        console.print(f"{len(s.points)} points in suite {s.name!r} ({s.path})")
        return
    from qlabench.cli.progress import RichProgress
    from qlabench.analyze.report import pick_baseline, speedup_table
    from qlabench.run.sweep import run_sweep
    from qlabench.cli.views import speedup_rich_table

    try:
        with RichProgress(console) as prog:
            res = run_sweep(s, out, device=device, timer=timer, check=False if no_check else None, progress=prog,
                            resume=resume, max_time_s=max_time, isolate=False if no_isolate else None,
                            make_executor=make_executor)
    except ValueError as e:
        raise QlabenchError(str(e)) from None
    if res.resumed:
        console.print(f"{res.resumed} points already recorded ok in {out}: skipped")
    if not res.complete:
        console.print(f"[yellow]time budget reached:[/yellow] {res.not_run} points not run; "
                      "run again with --resume to continue")
    if not res.rows:
        console.print("no points run")
        return
    import pandas as pd

    df = pd.DataFrame([r.as_dict() for r in res.rows])
    base = pick_baseline(df, baseline or s.baseline)
    console.print(speedup_rich_table(speedup_table(df, base), base))
    counts = df["status"].value_counts().to_dict()
    console.print(f"{len(df)} rows ({', '.join(f'{v} {k}' for k, v in counts.items())}) on {res.device} "
                  f"in {res.wall_s:.1f}s -> {res.path}")


def _executor_factory(kind: str, ray_address: str | None, gpus: int | None, no_isolate: bool):
    """The runner's make_executor for `--executor`; None keeps the runner's default (local, all GPUs)."""
    import functools

    if kind == "local":
        if gpus is None:
            return None
        from qlabench.run.executors.local import local_executor

        return functools.partial(local_executor, gpus=gpus)
    if kind == "ray":
        if no_isolate:
            raise QlabenchError("--executor ray runs points in worker subprocesses; drop --no-isolate")
        from qlabench.run.executors.ray_executor import ray_executor

        return functools.partial(ray_executor, address=ray_address, max_workers=gpus)
    raise QlabenchError(f"--executor {kind!r}: expected local or ray")


@app.command("plot")
@exits_on_error
def plot_cmd(
    results: list[Path] = typer.Argument(..., help="Result files or folders"),
    out: Path = typer.Option(Path("plots"), "--out", "-o", help="Folder for the PNGs"),
    baseline: str = typer.Option(None, "--baseline", help="Backend to divide by (default: a naive backend)"),
    x: str = typer.Option("total_tokens", "--x", help="total_tokens or seqlen"),
    panel: str = typer.Option("heads", "--panel", help="One panel per: heads or tp"),
    all_runs: bool = typer.Option(False, "--all-runs", help="Keep every run's rows (default: newest per point)"),
):
    """Write speedup-curve PNGs from result files."""
    from qlabench.analyze.plot import plot_speedups
    from qlabench.analyze.report import pick_baseline
    from qlabench.store.files import latest_per_point, read_results

    df = read_results(results)
    if not all_runs:
        df = latest_per_point(df)
    base = pick_baseline(df, baseline)
    for p in plot_speedups(df, out, base, x=x, panel=panel):
        console.print(f"wrote {p}")


@app.command("backends")
def backends_cmd():
    """List every registered backend, available or not, with the reason."""
    from rich.markup import escape

    from qlabench.backends import REGISTRY

    short = {"float64": "fp64", "float32": "fp32", "bfloat16": "bf16", "float16": "fp16"}
    t = Table(title="qlabench backends")
    t.add_column("backend", no_wrap=True)
    t.add_column("available", no_wrap=True)
    t.add_column("modes")
    t.add_column("dtypes")
    t.add_column("devices")
    t.add_column("notes", overflow="fold")
    for b in REGISTRY.values():
        ok, why = b.available()
        note = why if not ok else b.description
        if b.testing:
            note = "(test backend) " + note
        t.add_row(b.name, "[green]yes[/green]" if ok else "[red]no[/red]", " ".join(sorted(b.modes)),
                  " ".join(short[d] for d in sorted(b.dtypes)), " ".join(sorted(b.devices)), escape(note))
    console.print(t)


@app.command("suites")
@exits_on_error
def suites_cmd():
    """List the suites in suites/ with their point counts."""
    from qlabench.core.spec import list_suites, load_suite

    t = Table(title="qlabench suites")
    for c in ("suite", "points", "description"):
        t.add_column(c)
    for path in list_suites():
        try:
            s = load_suite(str(path))
            t.add_row(path.stem, str(len(s.points)), s.description)
        except QlabenchError as e:
            t.add_row(path.stem, "[red]invalid[/red]", str(e))
    console.print(t)


def main() -> None:
    try:
        app()
    except KeyboardInterrupt:
        err_console.print("interrupted")
        sys.exit(130)


# Command groups that live in their own modules attach themselves to `app` when imported.
# Each module defines its commands with `@app.command(...)` on the `app` imported from here.
from qlabench.cli import warmup as cli_warmup  # noqa: E402,F401
from qlabench.cli import profile as cli_profile  # noqa: E402,F401
from qlabench.cli import compare as cli_compare  # noqa: E402,F401
from qlabench.cli import merge as cli_merge  # noqa: E402,F401
from qlabench.cli import selfbench as cli_selfbench  # noqa: E402,F401
from qlabench.cli import report as cli_report  # noqa: E402,F401
