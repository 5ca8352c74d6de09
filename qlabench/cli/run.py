"""`qlabench run sweep`: run a suite and write its rows as parquet, then print the speedup summary."""

from __future__ import annotations

from pathlib import Path

import typer

from qlabench.cli import options as opt
from qlabench.cli.app import console
from qlabench.core.spec import DEFAULT_SUITE


def sweep_cmd(
    suite: str = opt.suite(DEFAULT_SUITE),
    out: Path = opt.out("results", "Results root: writes OUT/<suite>/<run_id>.parquet"),
    device: str = opt.DEVICE,
    timer: str = opt.TIMER,
    baseline: str = typer.Option(None, "--baseline", help="Backend the summary's speedups are against"),
    no_check: bool = opt.NO_CHECK,
    dry_run: bool = typer.Option(False, "--dry-run", help="Print the points, their count and what they cost when "
                                 "last measured; run nothing"),
    costs_from: list[Path] = typer.Option(None, "--costs-from", help="With --dry-run: price the points from these "
                                          "result files or folders (default: the current evidence)"),
    resume: bool = typer.Option(False, "--resume", help="Skip points already recorded ok in OUT for this suite, "
                                "environment and CPU thread count"),
    max_time: float = opt.max_time("point"),
    no_isolate: bool = typer.Option(False, "--no-isolate", help="Run points in this process (no crash isolation, "
                                    "no timeouts; for debugging)"),
    executor: str = typer.Option("local", "--executor", help="local: one worker per visible GPU; ray: a Ray "
                                 "cluster, one GPU per worker (docs/SCALE-OUT.md)"),
    ray_address: str = typer.Option(None, "--ray-address", help="Ray cluster to join (default: RAY_ADDRESS, "
                                    "else a local Ray instance)"),
    backends: str = opt.BACKENDS,
    modes: str = opt.MODES,
    heads: str = opt.HEADS,
    seqlens: str = opt.SEQLENS,
    shard: str = typer.Option(None, "--shard", help="Run only share I/N (0-based) of the points, e.g. "
                              "$SLURM_ARRAY_TASK_ID/$SLURM_ARRAY_TASK_COUNT; combine with `qlabench merge`"),
    multi_node: bool = typer.Option(False, "--multi-node", help="Allow --ray-address (or RAY_ADDRESS) on another "
                                    "machine: Ray's ports are then reachable from the network (docs/SCALE-OUT.md)"),
    gpus: int = typer.Option(None, "--gpus", min=1, help="Use at most this many GPUs (local: the first visible "
                             "ones; ray: workers)"),
    cache_dir: Path = opt.CACHE_DIR,
    max_points: int = typer.Option(None, "--max-points", min=1, help="Allow a suite of up to N measurements "
                                   "(points x replicates; default limit: 20000, counted before the suite is expanded)"),
    allow_oversized: bool = typer.Option(False, "--allow-oversized", help="Run points whose tensors exceed the "
                                         "device's memory (refused by default, before any worker starts)"),
    cpu_threads: int = opt.CPU_THREADS,
    replicates: int = opt.replicates(1, "Measure every point K times, each in fresh worker processes, in rounds "
                                      "over the points (rows carry `replicate`); what the gate's between-run "
                                      "statistics need (docs/GATING.md)"),
    with_ncu: bool = typer.Option(False, "--ncu", help="Also profile every ok GPU point under Nsight Compute "
                                  "(--clock-control none) for sm_active_pct; slow"),
    warmup: bool = opt.WARMUP,
    warmup_jobs: int = opt.WARMUP_JOBS,
    autotune: str = typer.Option(None, "--autotune", help="How an autotuning library (FLA) is tuned, in place "
                                 "of the suite's [run] autotune: point-cached (each point's stored tuning reused), "
                                 "point (every point tuned again, replacing its stored tuning) or process"),
):
    """Run a sweep suite and write its results as parquet (rows are saved as they are measured)."""
    from qlabench.cli.listings import print_dry_run
    from qlabench.cli.views import print_sweep_summary
    from qlabench.core.errors import ConfigError
    from qlabench.core.spec_limits import MAX_POINTS
    from qlabench.measure.caches import use_cache_dir
    from qlabench.run.executors import executor_factory
    from qlabench.run.options import InProcess, RunOptions
    from qlabench.run.plan import Selection, Warmup, plan_sweep

    use_cache_dir(cache_dir)
    factory = executor_factory(executor, ray_address=ray_address, gpus=gpus, isolate=not no_isolate,
                               multi_node=multi_node)
    if costs_from and not dry_run:
        raise ConfigError("--costs-from prices a dry run's points: add --dry-run")
    if no_isolate and factory is not None:
        raise ConfigError("--no-isolate measures in this process, on one device: drop --gpus")
    where = InProcess() if no_isolate else factory
    options = RunOptions(device=device, timer=timer, check=False if no_check else None, executor=where,
                         resume=resume, max_time_s=max_time, replicates=replicates,
                         max_points=max_points or MAX_POINTS, allow_oversized=allow_oversized)
    selection = Selection(backends=backends, modes=modes, heads=heads, seqlens=seqlens, shard=shard,
                          cpu_threads=cpu_threads, ncu=with_ncu, autotune=autotune)
    ask = Warmup(True if warmup_jobs else warmup, warmup_jobs, remote=executor == "ray")
    # every check of the suite and these options, before any work (a dry run's without the device)
    plan = plan_sweep(suite, options, selection, on_device=not dry_run, warmup=ask, out=out)
    if dry_run:  # the warm-up first: a dry run's last line counts its points
        print_dry_run(console, plan, costs_from or ())
        return
    opt.writable_folder(out)
    import signal

    from qlabench.cli.warming import warm_and_sweep

    signal.signal(signal.SIGTERM, _terminated)  # handled like Ctrl-C: rows compacted, temp folders removed
    res, warmed = warm_and_sweep(console, plan, out)
    try:
        print_sweep_summary(console, res, baseline or plan.suite.baseline, out, warmed.wall_s if warmed else 0.0)
    except BrokenPipeError:  # stdout's reader has gone; the rows are written, so this is no failure
        from qlabench.cli.progress import stdout_gone

        stdout_gone()


def _terminated(signum, frame):
    raise KeyboardInterrupt("SIGTERM")
