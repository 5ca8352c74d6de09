"""One `selfbench` call: the runs asked for, their tables (parquet, CSV) and the markdown report.

`run_selfbench(request, ...)` does the work the command maps its flags onto; what it has to say on the way
(a run made or reused, a point of the agreement, a budget reached) goes through callbacks, so the
command line decides how it looks. Measuring (runs.py, agreement.py), tables (precision.py, cost.py)
and rendering (report.py) stay where they are.
"""

from __future__ import annotations

import shlex
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from qlabench.core.spec import Suite
from qlabench_publish.selfbench.agreement import agreement_unavailable, run_agreement
from qlabench_publish.selfbench.common import (FLASHQLA_REPLAYS, SelfbenchError, default_timers, load_average,
                                                 with_timing)
from qlabench_publish.selfbench.cost import cost_table
from qlabench_publish.selfbench.precision import precision_table
from qlabench_publish.selfbench.report import (measured_where, render_agreement, render_cost, render_precision,
                                                 render_report)
from qlabench_publish.selfbench.runs import all_completed_runs, medians_frame, run_repeats

WHATS = ("precision", "cost", "agreement", "all")
KINDS = (*WHATS, "regimes")  # every `selfbench` kind: regimes is its own request (regimes.py)


# do_bench_cudagraph's rep: 10 s makes 100 s of sampling per point (FLASHQLA_REPLAYS graphs of it); FlashQLA uses 100 ms.
MAX_REP_MS = 10_000.0


@dataclass(frozen=True)
class SelfbenchRequest:
    """What to measure and where: one `selfbench` call's flags."""

    what: str  # precision, cost, agreement or all
    suite: Suite
    out: Path
    runs: int = 5  # fresh-process runs per timer (precision)
    cost_runs: int = 2  # runs per timing profile (cost)
    timers: tuple[str, ...] = ()  # () : graph and events on CUDA, wall on CPU; cost uses the first
    device: str | None = None
    check: bool | None = None
    overrides: dict = field(default_factory=dict)  # of the suite's [timing], for every run
    rep_ms: float = 100.0  # do_bench_cudagraph rep (agreement)
    fresh: bool = False  # redo runs already completed under out
    max_time_s: float | None = None
    report_only: bool = False  # measure nothing: rebuild the report from what is under out
    command: str = ""  # the command line, for the report (default: this process's)

    def __post_init__(self) -> None:
        if self.what not in WHATS:
            raise SelfbenchError(f"unknown selfbench {self.what!r}: expected one of {', '.join(KINDS)}")
        for profile in ("suite", "flashqla") if self.what in ("cost", "all") else ("suite",):
            with_timing(self.suite, profile, self.overrides)  # before any run: each run applies them so
        if isinstance(self.rep_ms, bool) or not 0 < self.rep_ms <= MAX_REP_MS:  # NaN fails both comparisons
            raise SelfbenchError(f"--rep-ms must be a number of milliseconds in (0, {MAX_REP_MS:g}] (do_bench "
                                 f"replays a graph of that length {FLASHQLA_REPLAYS} times per point), got {self.rep_ms}")


@dataclass(frozen=True)
class SelfbenchOutcome:
    path: Path  # the markdown report
    report: str


Say = Callable[[str, str], None]  # (what, detail): a note for the user, e.g. ("time budget reached", "...")


def run_selfbench(req: SelfbenchRequest, *, say: Say = lambda what, detail: None, on_run=None, on_point=None,
                  progress_factory=None) -> SelfbenchOutcome:
    """Make the runs `req` asks for (reusing completed ones), write medians.parquet/.csv and each part's CSV
    under `req.out`, and the report selfbench[-WHAT].md; on_run(info, reused) per run, on_point(row) per
    agreement point, progress_factory(label) a sweep Progress per run."""
    from qlabench.run.sweep import resolve_device

    s, out = req.suite, Path(req.out)
    # a report rebuilt from fetched runs needs no device here
    dev = (req.device or s.device) if req.report_only else resolve_device(req.device or s.device)
    timers = tuple(req.timers or default_timers(dev))
    if not req.report_only:  # a report is rebuilt only from a folder that exists: a typo must not make one
        out.mkdir(parents=True, exist_ok=True)
    load_before = load_average()
    common = dict(overrides=req.overrides, device=dev, check=req.check, fresh=req.fresh, max_time_s=req.max_time_s,
                  on_run=on_run, progress_factory=progress_factory)
    wanted = {"precision", "cost", "agreement"} if req.what == "all" else {req.what}
    missing = 0  # runs not made because --max-time ran out
    if req.report_only:  # count the runs asked for that are not there
        have = all_completed_runs(out) if out.is_dir() else []
        if not have and wanted & {"precision", "cost"}:
            if req.what == "all" and (out / "agreement.csv").is_file():
                say("no runs under " + str(out / "runs"), "reporting agreement only")
                wanted = {"agreement"}
            else:
                raise SelfbenchError(f"--report-only: no completed runs under {out / 'runs'} to report on (each "
                                     "run is a folder <profile>-<timer>-r<i>/ with its run.json, as a measuring "
                                     "call leaves them)")
        if "precision" in wanted:
            missing += req.runs * len(timers) - sum(
                1 for i in have if i.profile == "suite" and i.timer in timers and i.index < req.runs)
        if "cost" in wanted:
            missing += 2 * req.cost_runs - sum(1 for i in have if i.timer == timers[0] and i.index < req.cost_runs)
    elif "precision" in wanted:
        missing += req.runs * len(timers) - len(run_repeats(s, out, timers=timers, runs=req.runs, **common))
    if "cost" in wanted and not req.report_only:
        for profile in ("suite", "flashqla"):
            missing += req.cost_runs - len(run_repeats(s, out, timers=timers[:1], runs=req.cost_runs,
                                                       profile=profile, **common))
    if missing and req.report_only:
        say("incomplete", f"{missing} of the runs asked for are not under {out}; the report covers those that are")
    elif missing:
        say("time budget reached", f"{missing} runs not made; run the same command again to continue (completed "
            "runs are kept)")

    medians = medians_frame(out, all_completed_runs(out))
    sections = _sections(req, out, medians, dev, timers, wanted, missing, say, on_point)
    if req.report_only:
        host, device_name, when = measured_where(medians)
        load = None  # the load of the host that measured is in the runs' own report, not here
    else:
        from qlabench.measure.env import capture

        env = capture(dev)
        host, device_name, when = env["host"], env["device"], None
        load = f"{load_before} at start, {load_average()} at end" if load_before else None
    command = req.command or shlex.join(["python", "-m", "qlabench_publish", *sys.argv[1:]])
    report = render_report(sections, host=host, device=device_name, suite=s, command=command, when=when, load=load)
    path = out / ("selfbench.md" if req.what == "all" else f"selfbench-{req.what}.md")
    path.write_text(report)
    return SelfbenchOutcome(path, report)


def _sections(req: SelfbenchRequest, out: Path, medians, dev: str, timers: tuple[str, ...], wanted: set[str],
              missing: int, say: Say, on_point) -> dict[str, str]:
    """The report's sections, writing each part's tables under `out` on the way."""
    import pandas as pd

    sections: dict[str, str] = {}
    if not medians.empty:
        medians.to_parquet(out / "medians.parquet", index=False)
        medians.drop(columns=["reason"]).to_csv(out / "medians.csv", index=False)
    if "precision" in wanted:
        table = precision_table(medians[medians["timer_requested"].isin(timers)])
        table.to_csv(out / "precision.csv", index=False)
        sections["Precision"] = render_precision(table, req.runs)
    if "cost" in wanted:
        m = medians[(medians["timer_requested"] == timers[0]) & (medians["run_index"] < req.cost_runs)]
        cost_table(m).to_csv(out / "cost.csv", index=False)
        sections["Cost"] = render_cost(m)
    if "agreement" in wanted:
        table, skipped = None, None
        saved = out / "agreement.csv"
        if req.report_only:
            if saved.is_file():
                table = pd.read_csv(saved)
            else:
                skipped = f"no {saved} to report on"
        else:
            skipped = agreement_unavailable(dev)
            if not skipped and missing and req.what == "all":
                skipped = f"postponed: {missing} runs still to make (--max-time); the next call measures it"
            if not skipped:
                table = run_agreement(req.suite, dev, rep_ms=req.rep_ms, on_point=on_point)
                table.to_csv(saved, index=False)
        if skipped:
            say("agreement skipped", skipped)
        sections["Agreement"] = render_agreement(table, skipped)
    return sections
