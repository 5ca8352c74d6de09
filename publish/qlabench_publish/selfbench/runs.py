"""Repeated fresh-process runs of a suite, and the frame of their medians (input to precision and cost).

Runs live under OUT/runs/<profile>-<timer>-r<i>/ with a run.json written when a run completes, so
an interrupted selfbench continues where it stopped.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import shutil
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from qlabench.core.spec import Suite
from qlabench_publish.selfbench.common import SelfbenchError, point_label, with_timing

RUN_FILE = "run.json"


@dataclass(frozen=True)
class RunInfo:
    """One completed fresh-process run of the suite (its run.json)."""

    profile: str
    timer: str
    index: int
    run_id: str
    wall_s: float
    points: int
    workers_started: int
    device: str


def run_dir(out: Path, profile: str, timer: str, index: int) -> Path:
    return Path(out) / "runs" / f"{profile}-{timer}-r{index}"


def completed_run(d: Path) -> RunInfo | None:
    f = d / RUN_FILE
    if not f.is_file():
        return None
    return RunInfo(**json.loads(f.read_text()))


def all_completed_runs(out: Path) -> list[RunInfo]:
    """Every completed run under OUT/runs, ordered by profile, index and timer."""
    infos = [i for d in sorted((Path(out) / "runs").glob("*")) if (i := completed_run(d)) is not None]
    return sorted(infos, key=lambda i: (i.profile, i.index, i.timer))


def run_repeats(
    suite: Suite,
    out: Path,
    *,
    timers: Sequence[str],
    runs: int,
    profile: str = "suite",
    overrides: dict | None = None,
    device: str | None = None,
    check: bool | None = None,
    fresh: bool = False,
    max_time_s: float | None = None,
    on_run: Callable[[RunInfo, bool], None] | None = None,
    progress_factory: Callable[[str], object] | None = None,
) -> list[RunInfo]:
    """Run `suite` `runs` times per timer, each a new sweep in fresh worker processes.

    Runs are interleaved (r0 of every timer, then r1, ...) so slow drift of the machine (clocks,
    temperature) touches every timer alike. A run whose run.json exists is reused unless `fresh`;
    a run left incomplete is redone from scratch. No new run starts after `max_time_s`.
    on_run(info, reused) is called per run; progress_factory(label) gives a sweep Progress.
    """
    from qlabench.run.executors.local import local_executor
    from qlabench.run.options import RunOptions
    from qlabench.run.sweep import run_sweep

    s = with_timing(suite, profile, overrides)
    t0 = time.perf_counter()
    done: list[RunInfo] = []
    for i in range(runs):
        for timer in timers:
            d = run_dir(out, profile, timer, i)
            info = None if fresh else completed_run(d)
            if info is not None:
                done.append(info)
                if on_run:
                    on_run(info, True)
                continue
            if max_time_s is not None and time.perf_counter() - t0 >= max_time_s:
                return done
            if d.exists():
                shutil.rmtree(d)
            prog = progress_factory(f"{profile} {timer} r{i}") if progress_factory else None
            # One worker on one GPU: runs stay comparable on a host with several GPUs.
            run = RunOptions(device=device, timer=timer, check=check,
                             executor=functools.partial(local_executor, gpus=1))
            try:
                if prog is not None:
                    with prog:
                        res = run_sweep(s, d, run, progress=prog)
                else:
                    res = run_sweep(s, d, run)
            except ValueError as e:
                raise SelfbenchError(str(e)) from None
            if res.rows and not any(r.status == "ok" for r in res.rows):
                # Nothing was measured (a missing package, no GPU, every point skipped): more runs would
                # only repeat it, so stop and say why; no run.json, so a fixed retry redoes this run.
                first = next((r for r in res.rows if r.reason), res.rows[0])
                raise SelfbenchError(f"run {profile} {timer} r{i} measured no point ({len(res.rows)} rows, none ok; "
                                     f"first: {first.backend} {first.status}: {first.reason})")
            info = RunInfo(profile=profile, timer=timer, index=i, run_id=res.run_id, wall_s=res.wall_s,
                           points=len(res.rows), workers_started=res.workers_started, device=res.device)
            (d / RUN_FILE).write_text(json.dumps(dataclasses.asdict(info), indent=1))
            done.append(info)
            if on_run:
                on_run(info, False)
    return done


def _phases(phases_s) -> dict:
    """A row's per-phase seconds (its `phases_s` column, read back as (phase, seconds) pairs), {} for rows
    written before they were recorded."""
    return dict(phases_s) if phases_s is not None and len(phases_s) else {}


def medians_frame(out: Path, infos: Sequence[RunInfo]) -> pd.DataFrame:
    """One row per (run, point): the run's identity, the point, its status and median."""
    from qlabench.store.files import read_results

    frames = []
    for info in infos:
        df = read_results([run_dir(out, info.profile, info.timer, info.index)])
        frames.append(pd.DataFrame({
            "profile": info.profile, "timer_requested": info.timer, "run_index": info.index,
            "run_id": info.run_id, "run_wall_s": info.wall_s, "run_points": info.points,
            "point": [point_label(r) for _, r in df.iterrows()],
            "backend": df["backend"], "mode": df["mode"], "status": df["status"], "reason": df["reason"],
            "timer": df["timer"], "median_ms": df["median_ms"], "n_samples": df["n_samples"],
            "rel_noise": df["rel_noise"], "noise_target_met": df["noise_target_met"],
            "sampling_s": df["sampling_s"], "compile_s": df["compile_s"], "first_call_s": df["first_call_s"],
            "host": df["host"], "device": df["device"], "timestamp": df["timestamp"],
            # JSON text, not dicts: parquet cannot store an empty struct (rows from before phases existed)
            "phases_s": [json.dumps(_phases(x), sort_keys=True) for x in df["phases_s"]],
        }))
    cols = ["profile", "timer_requested", "run_index", "run_id", "run_wall_s", "run_points", "point", "backend",
            "mode", "status", "reason", "timer", "median_ms", "n_samples", "rel_noise", "noise_target_met",
            "sampling_s", "compile_s", "first_call_s", "host", "device", "timestamp", "phases_s"]
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=cols)
