"""Timing regimes (issue 36): each point of a suite timed by every timer and regime, in one process.

qlabench's graph timer read FlashInfer 0.7's split call 3-9% faster than triton's do_bench_cudagraph on the
H200. The candidates are measured here, not assumed: per point, the same prepared call under
- qlabench's graph timer at its own calls per sample and forced to each of `calls` (1, 2, 8, 64), with the
  L2 flush before each replay, and at the largest count without it; its events timer;
- a graph with an L2 flush captured between its calls (every call cold, back to back);
- triton's do_bench_cudagraph (median; the FlashQLA study's comparison) and, where FlashInfer is installed,
  flashinfer.testing.bench_gpu_time as FlashInfer's two GDN prefill benchmarks call it;
- a lone cold call (eager, and as a one-call graph), a ~burst_ms burst from idle and a ~sustained_ms
  back-to-back replay, each with the clocks NVML read while it ran (measure/probes/clock_trace.py);
plus what one call allocates eagerly and inside a capture, and which code path it took.
Rows are long (point x regime); regimes_report.py renders them. Points are not checked for correctness
here (the same calls are checked in every sweep); the path each call took is recorded.
"""

from __future__ import annotations

import dataclasses
import json
import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from qlabench.core.libraries import version_columns
from qlabench.core.spec import Suite
from qlabench.core.timing_sensitivity import calls_sensitivity
from qlabench_publish.selfbench.common import SelfbenchError, point_label

REGIME_CALLS = (1, 2, 8, 64)
# Four files (CSV, not parquet beside it): what comes back from a GPU host is often limited in count.
ROWS_FILE, FACTS_FILE, META_FILE, REPORT_FILE = "regimes.csv", "regime-facts.csv", "regimes.json", "regimes.md"


@dataclass(frozen=True)
class RegimesRequest:
    suite: Suite
    out: Path
    device: str | None = None
    calls: tuple[int, ...] = REGIME_CALLS  # forced calls per sample of the graph timer
    rep_ms: float = 200.0  # triton's rep: ~250 calls per graph at 0.78 ms, as in the comparison
    burst_ms: float = 2.0
    sustained_ms: float = 200.0
    isolated_samples: int = 20  # lone calls and bursts, each after an idle gap
    idle_gap_ms: float = 20.0
    # Idle before each regime: a power-capped clock recovers over a window of its own, and a regime that
    # starts right after a heavy one would inherit its state (the regimes run one after another).
    cooldown_ms: float = 500.0
    report_only: bool = False  # measure nothing: render what is under out
    command: str = ""


@dataclass(frozen=True)
class RegimesOutcome:
    path: Path  # the markdown report
    rows: pd.DataFrame  # point x regime
    facts: pd.DataFrame  # one row per point


def _reason(e: BaseException) -> str:
    return f"{type(e).__name__}: {str(e).splitlines()[0][:200] if str(e) else ''}"


def regime_row(point: str, backend: str, regime: str, samples, calls, l2: str, details: dict | None = None,
               clocks: dict | None = None, reported_ms: float | None = None, reason: str | None = None) -> dict:
    """One (point, regime) row: the samples' statistics, the figure that method reports, and the clocks."""
    s = pd.Series(list(samples or []), dtype=float)
    med = float(s.median()) if len(s) else math.nan
    iqr = float(s.quantile(0.75) - s.quantile(0.25)) if len(s) else math.nan
    c = clocks or {}
    return {"point": point, "backend": backend, "regime": regime, "calls_per_sample": calls, "l2": l2,
            "n_samples": len(s), "median_ms": med, "mean_ms": float(s.mean()) if len(s) else math.nan,
            "min_ms": float(s.min()) if len(s) else math.nan, "rel_noise": iqr / med if med > 0 else math.nan,
            "reported_ms": med if reported_ms is None else reported_ms,
            "sm_clock_median_mhz": c.get("sm_clock_median_mhz"), "sm_clock_min_mhz": c.get("sm_clock_min_mhz"),
            "sm_clock_max_mhz": c.get("sm_clock_max_mhz"), "mem_clock_median_mhz": c.get("mem_clock_median_mhz"),
            "power_max_w": c.get("power_max_w"), "clock_readings": c.get("readings", 0),
            "clock_reasons": ",".join(c.get("clock_reasons") or []),
            "details": json.dumps(details or {}, sort_keys=True, default=str), "reason": reason}


def point_sensitivity(rows: pd.DataFrame) -> dict:
    """The calls-per-sample verdict of one point from its forced-count graph rows (core/timing_sensitivity.py)."""
    forced = rows[rows["regime"].str.match(r"^graph n=\d+$") & rows["median_ms"].notna()]
    # a graph that could not be captured fell back to eager events, one call per sample: not a count it ran at
    forced = forced[forced["details"].map(lambda d: json.loads(d or "{}").get("timer") == "graph").astype(bool)]
    if forced["calls_per_sample"].nunique() < 2:
        return {"calls_sensitive": None, "calls_spread": math.nan}
    v = calls_sensitivity(dict(zip(forced["calls_per_sample"].astype(int), forced["median_ms"])),
                          dict(zip(forced["calls_per_sample"].astype(int), forced["rel_noise"])))
    return {"calls_sensitive": v.sensitive, "calls_spread": v.spread}


def _measure_point(p, backend, req: RegimesRequest, device: str, trace) -> tuple[list[dict], dict]:
    """Every regime of one point (rows) and its facts; a regime that fails is a row with a reason."""
    import torch

    from qlabench.measure.inputs import make_inputs
    from qlabench.measure.probes.capture_alloc import capture_allocations, eager_allocations
    from qlabench.measure.probes.kineto import capture_kernels
    from qlabench.measure.timing import StopRule
    from qlabench.measure.timing import external as ext
    from qlabench.measure.timing import regimes as rg

    label = point_label(dataclasses.asdict(p))
    rule, t = StopRule.from_spec(req.suite.timing), req.suite.timing
    fn = backend.prepare_point(p, make_inputs(p, device))
    t0 = time.perf_counter()
    fn()  # compile and autotune outside every regime
    torch.cuda.synchronize()
    facts: dict = {"point": label, "backend": p.backend, "first_call_s": time.perf_counter() - t0}
    try:
        names = [e.name for e in capture_kernels(fn)]
        facts.update(call_path=backend.call_path(names), kernels=len(names))
    except Exception as e:  # the profiler refused (another CUPTI client): the path stays unknown, not wrong
        facts["kernels_reason"] = _reason(e)
    try:
        burst_n, call_ms = rg.calls_for(fn, req.burst_ms)
        facts.update(one_call_graph_ms=call_ms, burst_calls=burst_n)
    except Exception as e:  # a call that cannot be captured: its graph regimes fail one by one, with this reason
        burst_n, call_ms, not_capturable = None, None, _reason(e)
        facts["graph_reason"] = not_capturable

    def graphed(f):
        if burst_n is None:
            def refuse():
                raise RuntimeError(f"not capturable in a CUDA graph: {not_capturable}")
            return refuse
        return f
    for probe in (lambda: eager_allocations(fn), lambda: capture_allocations(fn, 2)):
        try:
            facts.update(probe())
        except Exception as e:  # a call that cannot be captured still gets its other regimes
            facts["alloc_reason"] = _reason(e)
    rows: list[dict] = []
    gap = req.idle_gap_ms / 1e3

    def run(regime: str, timing: Callable[[], object]) -> None:
        time.sleep(req.cooldown_ms / 1e3)
        rows.append(_timed_row(label, p.backend, regime, timing, trace))

    def traced(f):
        return _traced(f, trace)

    run("graph auto", lambda: rg.graph_timer(fn, rule, trace, None, t.l2_flush, t.warmup))
    for n in req.calls:
        run(f"graph n={n}", lambda n=n: rg.graph_timer(fn, rule, trace, n, t.l2_flush, t.warmup))
    run(f"graph n={max(req.calls)} warm", lambda: rg.graph_timer(fn, rule, trace, max(req.calls), False, t.warmup))
    run("graph n=8 flush between", graphed(lambda: rg.flush_between(fn, rule, trace, 8)))
    run("events", lambda: rg.events_timer(fn, rule, trace, t.l2_flush, t.warmup))
    run("triton cudagraph", traced(lambda: ext.triton_cudagraph(fn, req.rep_ms)))
    run("lone call", graphed(lambda: rg.isolated(fn, trace, 1, req.isolated_samples, gap)))
    run("cold eager", lambda: rg.cold_eager(fn, trace, req.isolated_samples, gap))
    run(f"burst ~{req.burst_ms:g}ms", graphed(lambda: rg.isolated(fn, trace, burst_n, req.isolated_samples, gap)))
    run(f"sustained ~{req.sustained_ms:g}ms",
        graphed(lambda: rg.sustained(fn, trace, burst_n, req.sustained_ms, call_ms)))
    del fn
    torch.cuda.empty_cache()
    return rows, facts


def _traced(f: Callable[[], object], trace) -> Callable[[], object]:
    """`f` with the clock trace's window open while it runs (another project's timer, which has no window)."""
    def go():
        trace.active(True)
        try:
            return f()
        finally:
            trace.active(False)
    return go


def _timed_row(label: str, backend: str, regime: str, timing: Callable[[], object], trace) -> dict:
    """The row of one regime: `timing()` gives a RegimeTiming or another timer's (samples, details); a regime
    that raises is a row with the reason."""
    from qlabench.measure.timing.regimes import RegimeTiming

    trace.reset()
    try:
        r = timing()
    except Exception as e:
        return regime_row(label, backend, regime, (), None, "-", reason=_reason(e))
    if isinstance(r, RegimeTiming):
        return regime_row(label, backend, regime, r.samples_ms, r.calls_per_sample, r.l2, r.details, trace.summary())
    samples, d = r
    return regime_row(label, backend, regime, samples, None, d.get("l2", "-"), d, trace.summary(), d.get("reported_ms"))


def _flashinfer_rows(points, req: RegimesRequest, device: str, trace) -> list[dict]:
    """FlashInfer's own timer on every point, in a pass after all the others: with CUPTI installed it ends its
    CUPTI session (cupti.finalize), and the profiler that reads each point's kernels must not come after it."""
    import torch

    from qlabench.measure.inputs import make_inputs
    from qlabench.measure.timing import external as ext

    rows: list[dict] = []
    for p, backend in points:
        label = point_label(dataclasses.asdict(p))
        try:
            fn = backend.prepare_point(p, make_inputs(p, device))
            fn()
            torch.cuda.synchronize()
        except Exception as e:
            rows += [regime_row(label, p.backend, f"fi {c}", (), None, "-", reason=_reason(e))
                     for c in ext.FLASHINFER_CONFIGS]
            continue
        for config in ext.FLASHINFER_CONFIGS:
            time.sleep(req.cooldown_ms / 1e3)
            rows.append(_timed_row(label, p.backend, f"fi {config}",
                                   _traced(lambda c=config: ext.flashinfer_bench(fn, c), trace), trace))
        del fn
        torch.cuda.empty_cache()
    return rows


def _importable(module: str) -> bool:
    import importlib

    try:
        importlib.import_module(module)
        return True
    except Exception:  # absent, or broken (a missing optional dependency): its timer is not run
        return False


def frames(rows: list[dict], facts: list[dict]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The rows and facts as tables, each point's calls-per-sample verdict added to its facts."""
    rows_df, facts_df = pd.DataFrame(rows), pd.DataFrame(facts)
    if not rows_df.empty and not facts_df.empty:
        verdicts = {pt: point_sensitivity(g) for pt, g in rows_df.groupby("point", sort=False)}
        for key in ("calls_sensitive", "calls_spread"):
            facts_df[key] = [verdicts.get(pt, {}).get(key) for pt in facts_df["point"]]
    return rows_df, facts_df


Save = Callable[[pd.DataFrame, pd.DataFrame], None]


def measure_regimes(req: RegimesRequest, device: str, on_point: Callable[[str, float], None] | None = None,
                    save: Save | None = None, max_time_s: float | None = None) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(rows, facts) for every point of the suite, on `device` (CUDA only), in this process. `save(rows, facts)`
    after each point, so a run stopped from outside keeps what it measured; after `max_time_s` no new point
    starts (its facts say so)."""
    if not device.startswith("cuda"):
        raise SelfbenchError(f"the timing regimes need CUDA (graphs, NVML, events); device is {device}")
    from qlabench.measure import caches as cache

    cache.configure()  # before any backend imports its library
    import torch

    from qlabench.backends import REGISTRY
    from qlabench.measure.env import physical_index
    from qlabench.measure.probes.clock_trace import ClockTrace

    if torch.device(device).index is not None:
        torch.cuda.set_device(torch.device(device))
    rows: list[dict] = []
    facts: list[dict] = []
    measured = []  # (point, backend) of the points whose regimes ran, for FlashInfer's pass
    start = time.perf_counter()

    def over_budget() -> bool:
        return max_time_s is not None and time.perf_counter() - start > max_time_s

    with ClockTrace(physical_index(torch.cuda.current_device())) as trace:
        for p in req.suite.points:
            label = point_label(dataclasses.asdict(p))
            b = REGISTRY.get(p.backend)
            ok, why = (False, f"unknown backend {p.backend!r}") if b is None else b.available()
            if ok:
                ok, why = b.supports(p, device)
            if ok and over_budget():
                ok, why = False, f"not measured: --max-time {max_time_s:g} s ran out"
            t0 = time.perf_counter()
            if not ok:
                facts.append({"point": label, "backend": p.backend, "reason": why})
            else:
                try:
                    r, f = _measure_point(p, b, req, device, trace)
                    rows += r
                    facts.append(f)
                    measured.append((p, b))
                except Exception as e:  # the point's set-up failed: the others still run
                    facts.append({"point": label, "backend": p.backend, "reason": _reason(e)})
            if on_point:
                on_point(label, time.perf_counter() - t0)
            if save:
                save(*frames(rows, facts))
        if measured and _importable("flashinfer.testing"):  # seconds for all points: not cut by max_time_s
            t0 = time.perf_counter()
            rows += _flashinfer_rows(measured, req, device, trace)
            if on_point:
                on_point("flashinfer.testing.bench_gpu_time on every point", time.perf_counter() - t0)
    result = frames(rows, facts)
    if save:
        save(*result)
    return result


def run_regimes(req: RegimesRequest, on_point=None, max_time_s: float | None = None) -> RegimesOutcome:
    """Measure (unless report_only) and write regimes.csv (point x regime), regime-facts.csv (per point), regimes.json
    (host, versions, command, settings) and regimes.md under req.out, rewritten after every point."""
    import shlex
    import sys

    from qlabench_publish.selfbench.regimes_report import render_regimes

    out = Path(req.out)
    path = out / REPORT_FILE
    if req.report_only:
        if not (out / ROWS_FILE).is_file():
            raise SelfbenchError(f"--report-only: no {out / ROWS_FILE} to report on")
        rows = pd.read_csv(out / ROWS_FILE, dtype={"details": str, "reason": object, "clock_reasons": object})
        facts = pd.read_csv(out / FACTS_FILE) if (out / FACTS_FILE).is_file() else pd.DataFrame()
        rows["details"] = rows["details"].fillna("{}")
        rows["reason"] = rows["reason"].where(rows["reason"].notna(), None)
        meta = json.loads((out / META_FILE).read_text()) if (out / META_FILE).is_file() else {}
        path.write_text(render_regimes(rows, facts, meta))
        return RegimesOutcome(path, rows, facts)
    from qlabench.measure.env import capture
    from qlabench.run.sweep import resolve_device

    dev = resolve_device(req.device or req.suite.device)
    out.mkdir(parents=True, exist_ok=True)
    env = capture(dev)
    meta = {k: env.get(k) for k in ("host", "device", *version_columns(), "git_sha")}
    meta.update(date=time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), suite=req.suite.name,
                command=req.command or shlex.join(["python", "-m", "qlabench_publish", *sys.argv[1:]]),
                settings={k: getattr(req, k) for k in ("calls", "rep_ms", "burst_ms", "sustained_ms",
                                                       "isolated_samples", "idle_gap_ms", "cooldown_ms")})
    (out / META_FILE).write_text(json.dumps(meta, indent=1, default=str))

    def save(rows: pd.DataFrame, facts: pd.DataFrame) -> None:
        rows.to_csv(out / ROWS_FILE, index=False)
        facts.to_csv(out / FACTS_FILE, index=False)
        path.write_text(render_regimes(rows, facts, meta))

    rows, facts = measure_regimes(req, dev, on_point, save, max_time_s)
    return RegimesOutcome(path, rows, facts)
