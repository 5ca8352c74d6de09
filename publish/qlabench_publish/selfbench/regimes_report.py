"""Rendering of the timing-regimes study (regimes.py): point x regime tables in markdown, and the short table."""

from __future__ import annotations

import json
import math

import pandas as pd

from qlabench_publish.selfbench.report import markdown_table

TRITON = "triton cudagraph"
# The short table's columns: the sweep's figure, the two ends of the calls-per-sample range, the other
# projects' timers and the three regimes a program sees (a lone call, a burst from idle, a busy loop).
SHORT = ("graph auto", "graph n=1", "graph n=64", TRITON, "fi flashinfer_benchmark", "fi bench_gdn_prefill",
         "lone call", "burst", "sustained")

REGIME_NOTES = {
    "graph auto": "qlabench's graph timer as a sweep runs it: calls per replay from one eager call (~2 ms), "
                  "L2 flushed before each replay",
    "graph n=N": "the same, N calls per replay (forced)",
    "graph n=N warm": "the largest N without the L2 flush (as triton)",
    "graph n=8 flush between": "8 calls per replay with an L2 flush captured before each call; the flushes' "
                               "own time (a graph of them alone) subtracted",
    "events": "qlabench's events timer: eager calls back to back, launches included, L2 flushed before each",
    TRITON: "triton.testing.do_bench_cudagraph(fn, rep): one graph of ~rep ms of calls, 10 replays, no flush",
    "fi bench_gdn_prefill": "flashinfer.testing.bench_gpu_time as benchmarks/bench_gdn_prefill.py calls it "
                            "(events, cold L2, 5+20 iterations); that script prints the mean (`reported_ms`)",
    "fi flashinfer_benchmark": "bench_gpu_time as flashinfer_benchmark.py's GDN prefill routine calls it (CUPTI "
                               "and a CUDA graph, 5+30); the path it really took is in the details",
    "lone call": "a one-call graph replayed after an L2 flush and an idle gap: a single cold call",
    "cold eager": "one eager call after an L2 flush and an idle gap (launches included)",
    "burst ~Xms": "a ~X ms graph of calls replayed from idle, after an L2 flush",
    "sustained ~Yms": "the burst's graph replayed back to back for ~Y ms: the GPU kept busy",
}


def _ms(v) -> str:
    return "-" if v is None or (isinstance(v, float) and math.isnan(v)) else f"{v:.4f}"


def _mhz(v) -> str:
    return "-" if v is None or (isinstance(v, float) and math.isnan(v)) else f"{v:.0f}"


def _short_name(regime: str) -> str:
    return regime.split(" ~")[0]  # "burst ~2ms" -> "burst"


def wide(rows: pd.DataFrame, value: str, regimes: list[str] | None = None) -> pd.DataFrame:
    """point x regime of one column (median_ms, sm_clock_median_mhz, ...), regimes in measuring order."""
    if rows.empty:
        return pd.DataFrame()
    order = list(dict.fromkeys(rows["regime"]))
    t = rows.pivot_table(index="point", columns="regime", values=value, aggfunc="first", sort=False)
    cols = [r for r in order if r in t.columns and (regimes is None or r in regimes or _short_name(r) in regimes)]
    return t.reindex(columns=cols).reindex(list(dict.fromkeys(rows["point"])))


def ms_with_ratio(rows: pd.DataFrame, regimes: list[str] | None = None) -> pd.DataFrame:
    """Cells 'median (ratio to triton)'; the auto column also says its calls per sample."""
    ms = wide(rows, "median_ms", regimes)
    if ms.empty:
        return ms
    tri = ms[TRITON] if TRITON in ms.columns else pd.Series(math.nan, index=ms.index)
    n = wide(rows, "calls_per_sample")
    timer = wide(rows.assign(timer=rows["details"].map(lambda d: json.loads(d or "{}").get("timer"))), "timer")
    out = pd.DataFrame(index=ms.index)
    for c in ms.columns:
        cells = []
        for pt in ms.index:
            v, t = ms.at[pt, c], tri.get(pt)
            cell = _ms(v)
            used = timer.at[pt, c] if c in timer.columns else None
            if c.startswith("graph") and used == "events":  # the capture failed: eager events, one call each
                cell += " [events]"
            elif c == "graph auto" and "graph auto" in n.columns and not pd.isna(n.at[pt, c]):
                cell += f" [{int(n.at[pt, c])}]"
            if c != TRITON and not pd.isna(v) and t and not pd.isna(t):
                cell += f" ({v / t:.3f})"
            cells.append(cell)
        out[_short_name(c)] = cells
    return out.reset_index()


# NVML's clock-event reasons (probes/clocks.py), short enough for a table cell.
SHORT_REASONS = {"sw_power_cap": "power cap", "hw_slowdown": "hw slowdown", "sw_thermal_slowdown": "thermal",
                 "hw_thermal_slowdown": "hw thermal", "hw_power_brake_slowdown": "power brake"}


def _reasons(text) -> str:
    names = [n for n in str(text).split(",") if n] if isinstance(text, str) else []
    kept = [SHORT_REASONS[n] for n in names if n in SHORT_REASONS]  # idle and sync boost say nothing here
    return f", {'+'.join(kept)}" if kept else ""


def clocks_table(rows: pd.DataFrame) -> pd.DataFrame:
    """SM clock (MHz), max power (W) and slowdown reasons NVML read during each regime, 'median/min MHz, W'."""
    med, lo, pw = (wide(rows, k) for k in ("sm_clock_median_mhz", "sm_clock_min_mhz", "power_max_w"))
    if med.empty:
        return med
    why = wide(rows.assign(clock_reasons=rows["clock_reasons"].fillna("")), "clock_reasons")
    out = pd.DataFrame(index=med.index)
    for c in med.columns:
        out[_short_name(c)] = [f"{_mhz(med.at[p, c])}/{_mhz(lo.at[p, c])}, {_mhz(pw.at[p, c])} W"
                               + _reasons(why.at[p, c] if c in why.columns else None)
                               if not pd.isna(med.at[p, c]) else "-" for p in med.index]
    return out.reset_index()


def facts_table(facts: pd.DataFrame) -> pd.DataFrame:
    cols = {"point": "point", "call_path": "path", "one_call_graph_ms": "1-call graph ms", "burst_calls": "burst calls",
            "calls_sensitive": "depends on calls/sample", "calls_spread": "spread n=1..64",
            "eager_allocs": "eager allocs", "eager_alloc_bytes": "eager MiB", "capture_allocs": "allocs in capture (2 calls)",
            "capture_pool_bytes": "graph pool MiB", "capture_output_addresses": "output addresses (2 calls)",
            "reason": "reason"}
    t = facts[[c for c in cols if c in facts.columns]].copy()
    for c in ("eager_alloc_bytes", "capture_pool_bytes"):
        if c in t:
            t[c] = t[c].map(lambda v: "-" if pd.isna(v) else f"{v / 2**20:.1f}")
    if "calls_spread" in t:
        t["calls_spread"] = t["calls_spread"].map(lambda v: "-" if pd.isna(v) else f"{v:.1%}")
    return t.rename(columns=cols)


def short_table(rows: pd.DataFrame) -> pd.DataFrame:
    """The table printed last: the sweep's figure, calls 1 and 64, other projects' timers and the regimes."""
    return ms_with_ratio(rows, list(SHORT))


def _fi_paths(rows: pd.DataFrame) -> list[str]:
    out = []
    for _, r in rows[rows["regime"].str.startswith("fi ")].drop_duplicates("regime").iterrows():
        d = json.loads(r["details"]) if isinstance(r["details"], str) and r["details"] else {}
        out.append(f"- `{r['regime']}`: {d.get('path', '?')}, L2 {d.get('l2', '?')}, arguments {d.get('args')}, "
                   f"reports the {d.get('reports', '?')}" + (f"; warned: {d['warnings'][0]}" if d.get("warnings") else ""))
    return out


def render_regimes(rows: pd.DataFrame, facts: pd.DataFrame, meta: dict) -> str:
    """The markdown page: settings, the four tables, what each regime is, and failed regimes."""
    head = ["# Timing regimes", "",
            f"Host {meta.get('host', '?')}, {meta.get('device', '?')}, {meta.get('date', '?')}; suite "
            f"`{meta.get('suite', '?')}`; torch {meta.get('torch_version')}, triton {meta.get('triton_version')}, "
            f"flashinfer {meta.get('flashinfer_version')}, flash-qla {meta.get('flash_qla_version')}; qlabench "
            f"{meta.get('git_sha')}.", "", f"Command: `{meta.get('command', '?')}`", "",
            f"Settings: {json.dumps(meta.get('settings', {}))}", ""]
    if rows.empty:
        return "\n".join(head + ["_(no regime was measured)_", ""] + [markdown_table(facts_table(facts))])
    body = [
        "## Median ms per call (ratio to triton's do_bench_cudagraph; [calls per sample] the sweep's graph timer chose; "
        "[events]: the call could not be captured, and the graph timer fell back to eager events)",
        "", markdown_table(ms_with_ratio(rows)),
        "## SM clock during each regime (NVML: median/min MHz, max power, slowdown reasons seen)", "",
        "Read every ~0.5 ms while the regime's timed work ran (for the graph and events timers, their whole "
        "sampling, capture included). NVML's power reading is an average over its own window (up to a second): "
        "short regimes show the power of what ran before them. Regimes run in the order of the columns, "
        + (f"each after {cool:g} ms idle: one may still start" if (cool := meta.get("settings", {}).get("cooldown_ms"))
           else "with no idle between them: one may start") + " under the power state the one before left.", "",
        markdown_table(clocks_table(rows)),
        "## Per point: code path, calls-per-sample dependence, allocations", "",
        "`depends on calls/sample`: the forced-count graph medians differ by more than 1% and twice their noise "
        "(core/timing_sensitivity.py). Allocations are torch's caching allocator events of one call "
        "(measure/probes/capture_alloc.py).", "", markdown_table(facts_table(facts)),
        "## What each regime is", ""]
    body += [f"- `{k}`: {v}" for k, v in REGIME_NOTES.items()]
    body += ["", "FlashInfer's timer, as it ran here:", ""] + (_fi_paths(rows) or ["- not run (flashinfer not importable)"])
    failed = rows[rows["reason"].notna()]
    if not failed.empty:
        body += ["", "## Regimes that failed", "", markdown_table(failed[["point", "regime", "reason"]])]
    return "\n".join(head + body) + "\n"
