"""Benchmarks of the harness itself (issue 4): precision, cost and agreement of its timers.

- Precision: the same suite run N times, each run a fresh `run_sweep` whose points execute in a new
  worker interpreter (workers.py), so nothing (CUDA context, allocator state, warm caches in memory)
  carries from one run to the next; the spread of a point's medians across runs is the precision.
  Correctness checking stays on (it is what a real sweep does, and it never runs inside the timed
  region); a suite can make it cheaper with a small `check.oracle_max_tokens` and `full_size = false`.
- Cost: seconds per point with compile excluded, at the suite's timing settings against a timing
  profile that models FlashQLA's own benchmark (tilelang `do_bench(warmup=10, rep=100,
  backend="cudagraph")`: one graph of ~rep ms of calls replayed 10 times, i.e. ~1 s of sampling).
- Agreement (CUDA only): per point in one process, qlabench's GraphTimer median against
  `triton.testing.do_bench_cudagraph(..., return_mode="median")` (and, where tilelang is importable,
  FlashQLA's exact call, whose wall time is the direct cost of FlashQLA's settings).

Runs live under OUT/runs/<profile>-<timer>-r<i>/ with a run.json written when a run completes, so
an interrupted selfbench continues where it stopped (the device tool's calls are time-limited).
Computing (this module) and rendering (`render_*`, markdown) are separate from the CLI.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
import math
import shutil
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from qlabench.core.errors import QlabenchError
from qlabench.core.spec import Suite, TimingSpec

GOAL_SPREAD = 0.01  # issue 4: medians of 5 fresh runs within 1% ...
STRETCH_SPREAD = 0.005  # ... stretch 0.5%
AGREEMENT_TOL = 0.02  # graph timer vs do_bench_cudagraph within 2%
FLASHQLA_WARMUP_MS, FLASHQLA_REP_MS, FLASHQLA_REPLAYS = 10.0, 100.0, 10

# Timing profiles: overrides of the suite's TimingSpec. "flashqla" models tilelang's cudagraph
# do_bench as FlashQLA calls it: its 10 replays of a ~rep-ms graph sample for ~1 s whatever the
# noise, so the sampling time is fixed (min_time_s == max_time_s makes the noise target moot) and
# the sample count is left to time. Its warmup is time-based (10 ms); ours counts calls, so the
# suite's warmup count is kept.
TIMING_PROFILES: dict[str, dict] = {
    "suite": {},
    "flashqla": {"min_time_s": FLASHQLA_REPLAYS * FLASHQLA_REP_MS / 1e3,
                 "max_time_s": FLASHQLA_REPLAYS * FLASHQLA_REP_MS / 1e3,
                 "min_samples": 1, "max_samples": 1_000_000},
}
RUN_FILE = "run.json"


class SelfbenchError(QlabenchError):
    """A selfbench request that cannot be carried out (bad override, unknown profile, ...)."""


# -- timing overrides -------------------------------------------------------------------------

def parse_timing_overrides(items: Sequence[str]) -> dict:
    """["min_time_s=0.1", "l2_flush=false"] -> typed TimingSpec overrides."""
    defaults = TimingSpec()
    out: dict = {}
    for item in items:
        key, sep, raw = item.partition("=")
        key, raw = key.strip(), raw.strip()
        if not sep or not hasattr(defaults, key):
            known = ", ".join(f.name for f in dataclasses.fields(TimingSpec))
            raise SelfbenchError(f"--timing {item!r}: expected KEY=VALUE with KEY one of {known}")
        want = type(getattr(defaults, key))
        try:
            if want is bool:
                if raw.lower() not in ("true", "false", "1", "0", "yes", "no"):
                    raise ValueError(raw)
                out[key] = raw.lower() in ("true", "1", "yes")
            else:
                out[key] = want(raw)
        except ValueError:
            raise SelfbenchError(f"--timing {item!r}: {raw!r} is not a {want.__name__}") from None
    return out


def with_timing(suite: Suite, profile: str = "suite", overrides: dict | None = None) -> Suite:
    """The suite with a timing profile and then explicit overrides applied to its TimingSpec."""
    if profile not in TIMING_PROFILES:
        raise SelfbenchError(f"unknown timing profile {profile!r} (known: {', '.join(TIMING_PROFILES)})")
    changes = {**TIMING_PROFILES[profile], **(overrides or {})}
    return dataclasses.replace(suite, timing=dataclasses.replace(suite.timing, **changes)) if changes else suite


def default_timers(device: str) -> tuple[str, ...]:
    """Issue 4 compares the graph and events timers on CUDA; a CPU has only the wall clock."""
    return ("graph", "events") if device.startswith("cuda") else ("wall",)


# -- repeated runs ----------------------------------------------------------------------------

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
    on_run(info, reused) is called per run; progress_factory(label) gives a runner Progress.
    """
    from qlabench.run.executors.local import local_executor
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
            make = (lambda job, dev, env: local_executor(job, dev, env, gpus=1))
            try:
                if prog is not None:
                    with prog:
                        res = run_sweep(s, d, device=device, timer=timer, check=check, progress=prog,
                                        make_executor=make)
                else:
                    res = run_sweep(s, d, device=device, timer=timer, check=check, make_executor=make)
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


def point_label(row) -> str:
    from qlabench.analyze.report import heads_label, layout_label

    return f"{row['backend']} {row['mode']} {heads_label(row)} {layout_label(row)}"


def _phases(extra_json) -> dict:
    """A row's per-phase seconds (measure.run_point), {} for rows written before they were recorded."""
    if not isinstance(extra_json, str) or not extra_json:
        return {}
    return dict(json.loads(extra_json).get("phases_s") or {})


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
            "phases_s": [json.dumps(_phases(x), sort_keys=True) for x in df["extra_json"]],
        }))
    cols = ["profile", "timer_requested", "run_index", "run_id", "run_wall_s", "run_points", "point", "backend",
            "mode", "status", "reason", "timer", "median_ms", "n_samples", "rel_noise", "noise_target_met",
            "sampling_s", "compile_s", "first_call_s", "host", "device", "timestamp", "phases_s"]
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=cols)


# -- aggregation ------------------------------------------------------------------------------

def spread_of_medians(medians: Sequence[float]) -> dict:
    """Range and coefficient of variation of one point's medians across runs (NaN below 2 runs)."""
    m = [float(x) for x in medians if x is not None and not math.isnan(float(x))]
    n = len(m)
    if n < 2:
        return {"runs_ok": n, "median_of_medians_ms": m[0] if m else math.nan, "min_ms": m[0] if m else math.nan,
                "max_ms": m[0] if m else math.nan, "range_rel": math.nan, "cv": math.nan}
    s = pd.Series(m)
    mid = float(s.median())
    return {"runs_ok": n, "median_of_medians_ms": mid, "min_ms": float(s.min()), "max_ms": float(s.max()),
            "range_rel": (float(s.max()) - float(s.min())) / mid, "cv": float(s.std(ddof=1)) / float(s.mean())}


def verdict(range_rel: float) -> str:
    """Judged on the range (max - min) / median, the stricter of the two spreads."""
    if math.isnan(range_rel):
        return "n/a"
    if range_rel <= STRETCH_SPREAD:
        return "stretch"
    return "goal" if range_rel <= GOAL_SPREAD else "MISSED"


def precision_table(medians: pd.DataFrame, profile: str = "suite") -> pd.DataFrame:
    """Per (timer, point): how far its medians across fresh runs spread, and the verdict."""
    df = medians[medians["profile"] == profile]
    out = []
    for (timer, point), g in df.groupby(["timer_requested", "point"], sort=False):
        ok = g[g["status"] == "ok"]
        row = {"timer": timer, "point": point, "runs": len(g), **spread_of_medians(ok["median_ms"].tolist())}
        used = sorted(set(ok["timer"].dropna()))
        row["timer_used"] = ",".join(used) if used else ""
        row["verdict"] = verdict(row["range_rel"])
        out.append(row)
    return pd.DataFrame(out)


def run_cost_table(medians: pd.DataFrame) -> pd.DataFrame:
    """Per run: wall time, compile time, and seconds per point with compile excluded.

    A point's compile_s is set only for the first point of its compile group in a process (JIT,
    autotune and the first calls); everything else in the sweep (start-up, checks, sampling,
    writing) counts as cost.
    """
    out = []
    for (profile, timer, i), g in medians.groupby(["profile", "timer_requested", "run_index"], sort=False):
        wall = float(g["run_wall_s"].iloc[0])
        comp = float(g["compile_s"].fillna(0).sum())
        n = len(g)
        out.append({"profile": profile, "timer": timer, "run": int(i), "points": n, "wall_s": wall,
                    "compile_s": comp, "s_per_point": (wall - comp) / n if n else math.nan,
                    "sampling_s_per_point": float(g["sampling_s"].mean())})
    return pd.DataFrame(out)


def cost_table(medians: pd.DataFrame) -> pd.DataFrame:
    """Per (profile, timer): mean over runs of seconds per point (compile excluded) and of sampling."""
    runs = run_cost_table(medians)
    if runs.empty:
        return runs
    g = runs.groupby(["profile", "timer"], sort=False)
    return g.agg(runs=("run", "count"), points=("points", "max"), s_per_point=("s_per_point", "mean"),
                 sampling_s_per_point=("sampling_s_per_point", "mean")).reset_index()


def point_cost_table(medians: pd.DataFrame) -> pd.DataFrame:
    """Per point: median sampling seconds under each (profile, timer), side by side."""
    if medians.empty:
        return pd.DataFrame()
    df = medians.assign(setting=medians["profile"] + " " + medians["timer_requested"])
    t = df.pivot_table(index="point", columns="setting", values="sampling_s", aggfunc="median", sort=False)
    return t.reset_index()


# -- agreement (CUDA) -------------------------------------------------------------------------

def agreement_unavailable(device: str) -> str | None:
    """Why the agreement benchmark cannot run here, or None."""
    if not device.startswith("cuda"):
        return f"agreement needs CUDA (CUDA graphs, triton.testing.do_bench_cudagraph); device is {device}"
    try:
        import triton.testing  # noqa: F401
    except Exception as e:  # triton missing or broken: a reason, not a crash
        return f"triton.testing is not importable: {type(e).__name__}: {e}"
    return None


def _reason(e: Exception) -> str:
    return f"{type(e).__name__}: {str(e).splitlines()[0][:200] if str(e) else ''}"


def run_agreement(suite: Suite, device: str, rep_ms: float = FLASHQLA_REP_MS,
                  on_point: Callable[[dict], None] | None = None) -> pd.DataFrame:
    """Per point, in this process: GraphTimer median vs do_bench_cudagraph median (and tilelang's)."""
    why = agreement_unavailable(device)
    if why:
        raise SelfbenchError(why)
    from qlabench.measure import caches as cache

    cache.configure()  # before any backend imports its library
    import torch
    import triton.testing

    from qlabench.backends import REGISTRY
    from qlabench.measure.inputs import make_inputs
    from qlabench.measure.timing import StopRule
    from qlabench.measure.timing.cuda import GraphTimer

    rows = []
    for p in suite.points:
        row: dict = {"point": point_label(dataclasses.asdict(p)), "backend": p.backend,
                     "mode": p.mode, "graph_ms": math.nan, "triton_ms": math.nan, "ratio": math.nan,
                     "agrees": None, "graph_s": math.nan, "triton_s": math.nan, "tilelang_ms": math.nan,
                     "tilelang_s": math.nan, "timer_used": None, "reason": None}
        b = REGISTRY.get(p.backend)
        ok, why = (False, f"unknown backend {p.backend!r}") if b is None else b.available()
        if ok:
            ok, why = b.supports(p, device)
        if not ok:
            row["reason"] = why
            rows.append(row)
            if on_point:
                on_point(row)
            continue
        fn = None
        try:
            fn = b.prepare(p.mode, make_inputs(p, device))
            fn()  # compile and autotune outside every timer
            torch.cuda.synchronize()
            t = time.perf_counter()
            m = GraphTimer(StopRule.from_spec(suite.timing), warmup=suite.timing.warmup,
                           l2_flush=suite.timing.l2_flush).measure(fn)
            row["graph_s"] = time.perf_counter() - t
            row["timer_used"] = m.timer
            row["graph_ms"] = float(pd.Series(m.samples_ms).median())
            t = time.perf_counter()
            row["triton_ms"] = float(triton.testing.do_bench_cudagraph(fn, rep=rep_ms, return_mode="median"))
            row["triton_s"] = time.perf_counter() - t
            row["ratio"] = row["graph_ms"] / row["triton_ms"]
            row["agrees"] = abs(row["ratio"] - 1) <= AGREEMENT_TOL
        except Exception as e:  # one point's failure is recorded, the rest still run
            row["reason"] = _reason(e)
        try:
            if fn is None:
                raise RuntimeError("no callable (prepare failed)")
            from tilelang.profiler import do_bench as tl_do_bench

            t = time.perf_counter()
            row["tilelang_ms"] = float(tl_do_bench(fn, warmup=FLASHQLA_WARMUP_MS, rep=FLASHQLA_REP_MS,
                                                   backend="cudagraph"))
            row["tilelang_s"] = time.perf_counter() - t
        except Exception as e:  # tilelang absent or older than its cudagraph backend
            row["reason"] = "; ".join(x for x in (row["reason"], f"tilelang do_bench: {_reason(e)}") if x)
        torch.cuda.empty_cache()
        rows.append(row)
        if on_point:
            on_point(row)
    return pd.DataFrame(rows)


def load_average() -> str | None:
    """The host's 1/5/15-minute load: a busy shared host explains a wide spread."""
    try:
        import os

        return " / ".join(f"{x:.2f}" for x in os.getloadavg())
    except (AttributeError, OSError):
        return None


# -- rendering --------------------------------------------------------------------------------

def _fmt(v, digits: int = 4) -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "-"
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, float):
        return f"{v:.{digits}g}"
    return str(v).replace("|", "\\|")


def markdown_table(df: pd.DataFrame, formats: dict[str, Callable] | None = None) -> str:
    """A GitHub markdown table (no tabulate dependency); `formats` maps a column to a formatter."""
    if df.empty:
        return "_(no rows)_\n"
    formats = formats or {}
    cols = list(df.columns)
    lines = ["| " + " | ".join(cols) + " |", "|" + "|".join("---" for _ in cols) + "|"]
    for _, r in df.iterrows():
        lines.append("| " + " | ".join(formats.get(c, _fmt)(r[c]) for c in cols) + " |")
    return "\n".join(lines) + "\n"


def pct(v) -> str:
    return "-" if v is None or (isinstance(v, float) and math.isnan(v)) else f"{100 * v:.2f}%"


def render_precision(table: pd.DataFrame, runs_wanted: int) -> str:
    t = table.rename(columns={"median_of_medians_ms": "median ms", "range_rel": "(max-min)/median",
                              "cv": "stdev/mean"})
    t = t[["timer", "point", "runs_ok", "median ms", "min_ms", "max_ms", "(max-min)/median", "stdev/mean",
           "verdict", "timer_used"]]
    counts = table["verdict"].value_counts().to_dict() if not table.empty else {}
    return (f"Spread of each point's median across {runs_wanted} fresh-process runs. Goal "
            f"(max-min)/median <= {pct(GOAL_SPREAD)}, stretch <= {pct(STRETCH_SPREAD)}; verdicts: "
            f"{', '.join(f'{v} {k}' for k, v in counts.items()) or 'none'}.\n\n"
            + markdown_table(t, {"(max-min)/median": pct, "stdev/mean": pct}))


def phase_cost_table(medians: pd.DataFrame) -> pd.DataFrame:
    """Per (profile, timer): mean seconds per point in each phase of measure.run_point, sampling included.

    The phases add up to the time spent inside the point; what the run's wall time adds beyond them is
    worker start-up and writing rows.
    """
    if medians.empty or "phases_s" not in medians:
        return pd.DataFrame()
    rows = []
    for (profile, timer), g in medians.groupby(["profile", "timer_requested"], sort=False):
        ph = pd.DataFrame([json.loads(x) if isinstance(x, str) else {} for x in g["phases_s"]]).fillna(0.0)
        if ph.empty:
            continue
        ph["sampling"] = g["sampling_s"].fillna(0.0).to_numpy()
        wall = g.groupby("run_index")["run_wall_s"].first().sum()
        mean = ph.mean()
        rows.append({"profile": profile, "timer": timer, **{k: float(v) for k, v in mean.items()},
                     "in points": float(mean.sum()), "run wall / point": float(wall / len(g))})
    return pd.DataFrame(rows)


def render_cost(medians: pd.DataFrame) -> str:
    return ("Seconds per point, compile excluded: (sweep wall time - sum of compile_s) / points, and the "
            "sampling phase alone (`sampling_s`). Profile `suite` is the suite's [timing]; `flashqla` "
            f"samples for a fixed {TIMING_PROFILES['flashqla']['max_time_s']:g} s per point, as tilelang's "
            f"cudagraph do_bench does with FlashQLA's warmup={FLASHQLA_WARMUP_MS:g} ms, rep={FLASHQLA_REP_MS:g} ms "
            f"({FLASHQLA_REPLAYS} replays of a ~rep-ms graph).\n\n"
            + markdown_table(cost_table(medians)) + "\nPer run:\n\n" + markdown_table(run_cost_table(medians))
            + "\nMedian sampling seconds per point:\n\n" + markdown_table(point_cost_table(medians))
            + _phase_section(medians))


def _phase_section(medians: pd.DataFrame) -> str:
    t = phase_cost_table(medians)
    if t.empty:
        return ""
    return ("\nMean seconds per point in each phase (`extra_json.phases_s`; the rest of `run wall / point` is "
            "worker start-up and writing):\n\n" + markdown_table(t))


def render_agreement(table: pd.DataFrame | None, skipped: str | None) -> str:
    if skipped:
        return f"Not run: {skipped}.\n"
    n_ok = int(table["agrees"].fillna(False).astype(bool).sum())
    n = int(table["agrees"].notna().sum())
    return (f"GraphTimer median vs `triton.testing.do_bench_cudagraph(rep=..., return_mode=\"median\")`; goal "
            f"|ratio - 1| <= {pct(AGREEMENT_TOL)}: {n_ok} of {n} measured points agree. `tilelang_ms`/`tilelang_s` "
            "are FlashQLA's own call (tilelang do_bench, cudagraph backend, mean) and its wall time.\n\n"
            + markdown_table(table))


def measured_where(medians: pd.DataFrame) -> tuple[str, str, dt.datetime | None]:
    """Host, device and time of the first measurement in the runs, from their rows: a report rebuilt
    elsewhere (`--report-only`, on results fetched from a GPU host) must name where they were measured."""
    if medians.empty:
        return "-", "-", None
    first = medians.sort_values("timestamp").iloc[0]
    return str(first["host"]), str(first["device"]), dt.datetime.fromisoformat(str(first["timestamp"]))


def render_report(sections: dict[str, str], *, host: str, device: str, suite: Suite, command: str,
                  when: dt.datetime | None = None, load: str | None = None) -> str:
    when = when or dt.datetime.now(dt.timezone.utc)
    head = (f"# qlabench selfbench: {suite.name}\n\n"
            f"- host: {host}\n- device: {device}\n- date (UTC): {when.strftime('%Y-%m-%d %H:%M')}\n"
            f"- suite: `{suite.path}` ({len(suite.points)} points)\n- command: `{command}`\n"
            + (f"- host load average (1/5/15 min): {load}\n" if load else ""))
    return head + "".join(f"\n## {title}\n\n{body}" for title, body in sections.items())
