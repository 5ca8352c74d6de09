"""`python -m qlabench_publish selfbench`: benchmark the harness itself (precision, cost, agreement, regimes;
qlabench_publish/selfbench/)."""

from __future__ import annotations

from pathlib import Path

import typer

from qlabench.cli import options as opt
from qlabench.cli.app import console


def selfbench_cmd(
    what: str = typer.Argument(..., help="precision, cost, agreement, all, or regimes (each point under every "
                               "timer and timing regime, with clocks: issue 36)"),
    suite: str = opt.suite("cpu-precision"),
    out: Path = opt.out("results/selfbench", "Folder for runs, tables and report"),
    runs: int = typer.Option(5, "--runs", min=1, help="Fresh-process runs per timer (precision)"),
    cost_runs: int = typer.Option(2, "--cost-runs", min=1, help="Runs per timing profile (cost)"),
    timers: list[str] = typer.Option(None, "--timer", help="Timer to run (repeatable; default graph and events "
                                     "on CUDA, wall on CPU; cost uses the first)"),
    device: str = opt.DEVICE,
    no_check: bool = opt.NO_CHECK,
    timing: list[str] = typer.Option(None, "--timing", help="Override the suite's [timing], KEY=VALUE "
                                     "(repeatable), for every run"),
    rep_ms: float = typer.Option(None, "--rep-ms", help="do_bench_cudagraph rep in ms (agreement: default 100; "
                                 "regimes: 200)"),
    fresh: bool = typer.Option(False, "--fresh", help="Redo runs already completed under OUT"),
    max_time: float = opt.max_time("run"),
    report_only: bool = typer.Option(False, "--report-only", help="Make no runs and measure nothing: rebuild "
                                     "the report from the runs (and agreement.csv) already under OUT, e.g. "
                                     "fetched from a GPU host; host, device and date come from their rows"),
):
    """Measure the harness: spread of medians across fresh runs, seconds per point, agreement with Triton."""
    from qlabench.cli.progress import RichProgress
    from qlabench.core.spec import load_suite
    from qlabench_publish.selfbench import parse_timing_overrides
    from qlabench_publish.selfbench.session import SelfbenchRequest, run_selfbench

    if what == "regimes":
        if timing or timers:  # it times each point under every timer and regime, with its own settings
            from qlabench.core.errors import ConfigError

            raise ConfigError("selfbench regimes times each point under every timer and every timing regime with "
                              f"its own settings; {'--timing' if timing else '--timer'} does not apply to it")
        return _regimes(load_suite(suite), out, device, rep_ms, report_only, max_time)
    req = SelfbenchRequest(what=what, suite=load_suite(suite), out=out, runs=runs, cost_runs=cost_runs,
                           timers=tuple(timers or ()), device=device, check=False if no_check else None,
                           overrides=parse_timing_overrides(timing or []), rep_ms=rep_ms or 100.0, fresh=fresh,
                           max_time_s=max_time, report_only=report_only)
    if not report_only:
        opt.writable_folder(out)

    def on_run(info, reused):
        how = "reused" if reused else f"{info.workers_started} fresh worker process(es)"
        console.print(f"{info.profile} {info.timer} r{info.index}: {info.points} points, {info.wall_s:.1f}s ({how})")

    def on_point(r):
        console.print(f"{r['point']}: graph {r['graph_ms']:.4g} ms, triton {r['triton_ms']:.4g} ms"
                      + (f" ({r['reason']})" if r["reason"] else ""))

    res = run_selfbench(req, say=lambda what, detail: console.print(f"[yellow]{what}:[/yellow] {detail}"),
                        on_run=on_run, on_point=on_point, progress_factory=lambda label: RichProgress(console))
    console.print(res.report, markup=False, highlight=False)
    console.print(f"wrote {res.path}")


def _regimes(suite, out: Path, device: str | None, rep_ms: float | None, report_only: bool,
             max_time: float | None) -> None:
    """`selfbench regimes`: the long tables and regimes.md under OUT, then the short table, printed last."""
    from qlabench_publish.selfbench.regimes import RegimesRequest, run_regimes
    from qlabench_publish.selfbench.regimes_report import short_table
    from qlabench_publish.selfbench.report import markdown_table

    req = RegimesRequest(suite=suite, out=out, device=device, report_only=report_only,
                         **({"rep_ms": rep_ms} if rep_ms else {}))
    if not report_only:
        opt.writable_folder(out)
    res = run_regimes(req, on_point=lambda label, s: console.print(f"{label}: {s:.1f}s", highlight=False),
                      max_time_s=max_time)
    console.print(f"wrote {res.path} and its tables (regimes.csv, regime-facts.csv, regimes.json) in {out}")
    console.print("median ms per call (ratio to triton's do_bench_cudagraph; [calls per sample] of the sweep's graph "
                  "timer):", highlight=False, markup=False)
    print(markdown_table(short_table(res.rows)).rstrip("\n"), flush=True)  # never wrapped: it is pasted
