"""`qlabench run sweep`: run a suite and write its rows as parquet, then print the speedup summary."""

from __future__ import annotations

from pathlib import Path

import typer

from qlabench.cli.app import console
from qlabench.core.spec import DEFAULT_SUITE


def sweep_cmd(
    suite: str = typer.Option(DEFAULT_SUITE, "--suite", "-s", help="Suite name (suites/NAME.toml) or a path"),
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
    backends: str = typer.Option(None, "--backends", help="Run only these of the suite's backends (comma list)"),
    modes: str = typer.Option(None, "--modes", help="Run only these of the suite's modes (comma list, e.g. fwd)"),
    shard: str = typer.Option(None, "--shard", help="Run only share I/N (0-based) of the points, e.g. "
                              "$SLURM_ARRAY_TASK_ID/$SLURM_ARRAY_TASK_COUNT; combine with `qlabench merge`"),
    multi_node: bool = typer.Option(False, "--multi-node", help="Allow --ray-address (or RAY_ADDRESS) on another "
                                    "machine: Ray's ports are then reachable from the network (docs/SCALE-OUT.md)"),
    gpus: int = typer.Option(None, "--gpus", min=1, help="Use at most this many GPUs (local: the first visible "
                             "ones; ray: workers)"),
    cache_dir: Path = typer.Option(None, "--cache-dir", help="Kernel compile caches (TileLang, Triton, Inductor); "
                                   "default $QLABENCH_CACHE_DIR, else ~/.cache/qlabench"),
    max_points: int = typer.Option(None, "--max-points", min=1, help="Allow a suite of up to N points (default "
                                   "limit: 20000, counted before the suite is expanded)"),
    allow_oversized: bool = typer.Option(False, "--allow-oversized", help="Run points whose tensors exceed the "
                                         "device's memory (refused by default, before any worker starts)"),
    cpu_threads: int = typer.Option(None, "--cpu-threads", min=0, help="torch threads per CPU worker (default: "
                                    "the suite's run.cpu_threads, 1; 0: torch's default, one per core)"),
    replicates: int = typer.Option(1, "--replicates", min=1, help="Measure every point K times, each in fresh "
                                   "worker processes, in rounds over the points (rows carry `replicate`); "
                                   "what the gate's between-run statistics need (docs/GATING.md)"),
    with_ncu: bool = typer.Option(False, "--ncu", help="Also profile every ok GPU point under Nsight Compute "
                                  "(--clock-control none) for sm_active_pct; slow"),
):
    """Run a sweep suite and write its results as parquet (rows are saved as they are measured)."""
    import dataclasses

    from qlabench.cli.views import points_table, print_sweep_summary
    from qlabench.core.spec import load_suite
    from qlabench.measure.caches import use_cache_dir
    from qlabench.run.executors import executor_factory, parse_shard, shard_points

    use_cache_dir(cache_dir)
    from qlabench.core.spec_limits import MAX_POINTS

    s = load_suite(suite, max_points=max_points or MAX_POINTS)
    _check_backend_names(s)  # before --dry-run too: a typo is an error, not a sweep of error rows
    if with_ncu:
        s = dataclasses.replace(s, profile=dataclasses.replace(s.profile, ncu=True))
    if cpu_threads is not None:
        s = dataclasses.replace(s, run=dataclasses.replace(s.run, cpu_threads=cpu_threads))
    if backends or modes:
        from qlabench.core.select import parse_names, selected_indices

        keep = selected_indices(s.points, parse_names(backends), parse_names(modes), where=str(s.path))
        s = dataclasses.replace(s, points=tuple(s.points[i] for i in keep))
    if shard:
        s = dataclasses.replace(s, points=tuple(shard_points(s.points, parse_shard(shard))))
    make_executor = executor_factory(executor, ray_address=ray_address, gpus=gpus, isolate=not no_isolate,
                                     multi_node=multi_node)
    if dry_run:
        console.print(points_table(s, limit=_SHOWN_POINTS, width=console.width))
        if len(s.points) > _SHOWN_POINTS:
            console.print(f"... and {len(s.points) - _SHOWN_POINTS} more")
        console.print(_eta(s))
        console.print(f"{len(s.points)} points in suite {s.name!r} ({s.path})")
        return
    import signal

    from qlabench.cli.progress import RichProgress
    from qlabench.run.sweep import run_sweep

    signal.signal(signal.SIGTERM, _terminated)  # handled like Ctrl-C: rows compacted, temp folders removed
    with RichProgress(console) as prog:
        res = run_sweep(s, out, device=device, timer=timer, check=False if no_check else None, progress=prog,
                        allow_oversized=allow_oversized,
                        resume=resume, max_time_s=max_time, isolate=False if no_isolate else None,
                        make_executor=make_executor, replicates=replicates)
    try:
        print_sweep_summary(console, res, baseline or s.baseline, out)
    except BrokenPipeError:  # stdout's reader has gone; the rows are written, so this is no failure
        from qlabench.cli.progress import stdout_gone

        stdout_gone()


def _check_backend_names(s) -> None:
    from qlabench.backends import REGISTRY
    from qlabench.core.errors import BackendError

    unknown = sorted({p.backend for p in s.points} - set(REGISTRY))
    if unknown:
        raise BackendError(f"{s.path}: unknown backend {unknown[0]!r} (known: {', '.join(REGISTRY)})")


def _terminated(signum, frame):
    raise KeyboardInterrupt("SIGTERM")


_SHOWN_POINTS = 200  # rows of the --dry-run table; the count covers the rest


def _eta(s) -> str:
    """A rough bound on the sweep's length from its timing settings (sampling only, no compile)."""
    per = s.timing.max_time_s + s.timing.min_time_s
    total = per * len(s.points)
    return f"sampling takes at most {s.timing.max_time_s:g} s per point: up to {total / 3600:.1f} h, plus compiles"
