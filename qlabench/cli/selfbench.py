"""`qlabench selfbench`: benchmark the harness itself (precision, cost, agreement; see selfbench.py)."""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

import typer

from qlabench.cli.app import console

WHATS = ("precision", "cost", "agreement", "all")


def selfbench_cmd(
    what: str = typer.Argument(..., help="precision, cost, agreement or all"),
    suite: str = typer.Option("cpu-precision", "--suite", "-s", help="Suite name or path"),
    out: Path = typer.Option(Path("results/selfbench"), "--out", "-o", help="Folder for runs, tables and report"),
    runs: int = typer.Option(5, "--runs", min=1, help="Fresh-process runs per timer (precision)"),
    cost_runs: int = typer.Option(2, "--cost-runs", min=1, help="Runs per timing profile (cost)"),
    timers: list[str] = typer.Option(None, "--timer", help="Timer to run (repeatable; default graph and events "
                                     "on CUDA, wall on CPU; cost uses the first)"),
    device: str = typer.Option(None, "--device", help="cpu, cuda or cuda:N (default: the suite's, else auto)"),
    no_check: bool = typer.Option(False, "--no-check", help="Skip the correctness check in the runs"),
    timing: list[str] = typer.Option(None, "--timing", help="Override the suite's [timing], KEY=VALUE "
                                     "(repeatable), for every run"),
    rep_ms: float = typer.Option(100.0, "--rep-ms", help="do_bench_cudagraph rep in ms (agreement)"),
    fresh: bool = typer.Option(False, "--fresh", help="Redo runs already completed under OUT"),
    max_time: float = typer.Option(None, "--max-time", min=0, help="Start no new run after SECONDS; run the "
                                   "same command again to continue"),
    report_only: bool = typer.Option(False, "--report-only", help="Make no runs and measure nothing: rebuild "
                                     "the report from the runs (and agreement.csv) already under OUT, e.g. "
                                     "fetched from a GPU host; host, device and date come from their rows"),
):
    """Measure the harness: spread of medians across fresh runs, seconds per point, agreement with Triton."""
    import pandas as pd

    from qlabench.workflows import selfbench as sb
    from qlabench.measure.env import capture
    from qlabench.cli.progress import RichProgress
    from qlabench.run.sweep import resolve_device
    from qlabench.core.spec import load_suite

    if what not in WHATS:
        raise sb.SelfbenchError(f"unknown selfbench {what!r}: expected one of {', '.join(WHATS)}")
    s = load_suite(suite)
    overrides = sb.parse_timing_overrides(timing or [])
    # a report rebuilt from fetched runs needs no device here
    dev = (device or s.device) if report_only else resolve_device(device or s.device)
    timers = tuple(timers or sb.default_timers(dev))
    if not report_only:  # a report is rebuilt only from a folder that exists: a typo must not make one
        out.mkdir(parents=True, exist_ok=True)
    load_before = sb.load_average()

    def on_run(info, reused):
        how = "reused" if reused else f"{info.workers_started} fresh worker process(es)"
        console.print(f"{info.profile} {info.timer} r{info.index}: {info.points} points, {info.wall_s:.1f}s ({how})")

    common = dict(overrides=overrides, device=dev, check=False if no_check else None, fresh=fresh,
                  max_time_s=max_time, on_run=on_run, progress_factory=lambda label: RichProgress(console))
    wanted = {"precision", "cost", "agreement"} if what == "all" else {what}
    missing = 0  # runs not made because --max-time ran out
    if report_only:  # count the runs asked for that are not there
        have = sb.all_completed_runs(out) if out.is_dir() else []
        if not have and wanted & {"precision", "cost"}:
            if what == "all" and (out / "agreement.csv").is_file():
                console.print(f"[yellow]no runs under {out / 'runs'}:[/yellow] reporting agreement only")
                wanted = {"agreement"}
            else:
                raise sb.SelfbenchError(f"--report-only: no completed runs under {out / 'runs'} to report on (each "
                                        "run is a folder <profile>-<timer>-r<i>/ with its run.json, as a measuring "
                                        "call leaves them)")
        if "precision" in wanted:
            missing += runs * len(timers) - sum(
                1 for i in have if i.profile == "suite" and i.timer in timers and i.index < runs)
        if "cost" in wanted:
            missing += 2 * cost_runs - sum(1 for i in have if i.timer == timers[0] and i.index < cost_runs)
    elif "precision" in wanted:
        missing += runs * len(timers) - len(sb.run_repeats(s, out, timers=timers, runs=runs, **common))
    if "cost" in wanted and not report_only:
        for profile in ("suite", "flashqla"):
            missing += cost_runs - len(sb.run_repeats(s, out, timers=timers[:1], runs=cost_runs, profile=profile,
                                                      **common))
    if missing and report_only:
        console.print(f"[yellow]incomplete:[/yellow] {missing} of the runs asked for are not under {out}; the "
                      "report covers those that are")
    elif missing:
        console.print(f"[yellow]time budget reached:[/yellow] {missing} runs not made; run the same command "
                      "again to continue (completed runs are kept)")

    sections: dict[str, str] = {}
    infos = sb.all_completed_runs(out)
    medians = sb.medians_frame(out, infos)
    if not medians.empty:
        medians.to_parquet(out / "medians.parquet", index=False)
        medians.drop(columns=["reason"]).to_csv(out / "medians.csv", index=False)
    if "precision" in wanted:
        table = sb.precision_table(medians[medians["timer_requested"].isin(timers)])
        table.to_csv(out / "precision.csv", index=False)
        sections["Precision"] = sb.render_precision(table, runs)
    if "cost" in wanted:
        m = medians[(medians["timer_requested"] == timers[0]) & (medians["run_index"] < cost_runs)]
        sb.cost_table(m).to_csv(out / "cost.csv", index=False)
        sections["Cost"] = sb.render_cost(m)
    if "agreement" in wanted:
        table, skipped = None, None
        saved = out / "agreement.csv"
        if report_only:
            if saved.is_file():
                table = pd.read_csv(saved)
            else:
                skipped = f"no {saved} to report on"
        else:
            skipped = sb.agreement_unavailable(dev)
            if not skipped and missing and what == "all":
                skipped = f"postponed: {missing} runs still to make (--max-time); the next call measures it"
            if not skipped:
                table = sb.run_agreement(s, dev, rep_ms=rep_ms, on_point=lambda r: console.print(
                    f"{r['point']}: graph {r['graph_ms']:.4g} ms, triton {r['triton_ms']:.4g} ms"
                    + (f" ({r['reason']})" if r["reason"] else "")))
                table.to_csv(saved, index=False)
        if skipped:
            console.print(f"[yellow]agreement skipped:[/yellow] {skipped}")
        sections["Agreement"] = sb.render_agreement(table, skipped)

    if report_only:
        host, device_name, when = sb.measured_where(medians)
        load = None  # the load of the host that measured is in the runs' own report, not here
    else:
        env = capture(dev)
        host, device_name, when = env["host"], env["device"], None
        load = f"{load_before} at start, {sb.load_average()} at end" if load_before else None
    report = sb.render_report(sections, host=host, device=device_name, suite=s,
                              command=shlex.join(["qlabench", *sys.argv[1:]]), when=when, load=load)
    path = out / ("selfbench.md" if what == "all" else f"selfbench-{what}.md")
    path.write_text(report)
    console.print(report, markup=False, highlight=False)
    console.print(f"wrote {path}")
