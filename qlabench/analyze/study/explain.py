"""Why our value differs from the published one, derived from what each row recorded.

For every published value: `explanation`, a short label that groups values (e.g. "slower: flash-qla 0.1.3
(published 0.1.2; 0.1.2 re-run within 10%)"), `factors`, the facts behind it, and `verified`.

A label names a cause only when a recorded comparison supports it:
- the library version, when a run on the published version of the same point is within the tolerance and
  no other run of our version of that point is (two runs of one version that disagree say the gap is the
  run: its point order, its autotune, its machine; not the version);
- FlashQLA's intra-card CP decision, when the published version's run of the point decided otherwise, or
  when a fixed choice (nocp / forcecp) on our stack meets the published value;
- a clock drop, when the time scaled back to the clock before the drop is within the tolerance.
Everything else a row recorded (the version with no run on the published one, the CP state, SM coverage,
layout, timer, a small clock drop, another GPU than the table's, named first) is a condition, not a cause:
with no supported cause the label says "unverified: ..." and lists them; beside a supported cause they go
into the facts.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import pandas as pd

from qlabench.analyze.data.published_tables import PublishedTable, published_table
from qlabench.analyze.study.prepare import FLASH_QLA, FLASH_QLA_VARIANTS, version_columns
from qlabench.core.gpu_names import short_gpu_name
from qlabench.core.libraries import package_name

WITHIN = "within"
NOT_MEASURED = "not measured"
UNVERIFIED = "unverified"
LOW_SM_COVERAGE = 0.5  # below this time-weighted share of SMs given blocks, the launch leaves the GPU idle


def within(ratio, tolerance: float) -> bool:
    return ratio is not None and not pd.isna(ratio) and abs(ratio - 1.0) <= tolerance + 1e-12


def _num(v) -> float | None:
    return None if v is None or pd.isna(v) else float(v)


def _flag(v) -> bool | None:
    return None if v is None or pd.isna(v) else bool(v)


def _on(cp: bool) -> str:
    return "on" if cp else "off"


@dataclass(frozen=True)
class Explanation:
    label: str  # groups values: the same causes give the same label
    factors: tuple[str, ...]  # the facts, most telling first
    verified: bool | None = None  # outside the tolerance: whether a recorded comparison supports the label


def explain_value(v: dict, tolerance: float, variants: dict[str, float] | None = None,
                  others: list[dict] | None = None, reruns: dict[str, float] | None = None,
                  table: PublishedTable | None = None) -> Explanation:
    """Explain one published value against our row `v` (a `comparison` record) of `table` (None: the H200's).

    variants: ok times of the other FlashQLA CP variants on the same point and stack ('nocp' -> ms);
    others: ok records of the same published value measured on other stacks;
    reruns: ok times of the same backend, point and stack in other runs (run_id -> ms).
    """
    variants, others, reruns, table = variants or {}, others or [], reruns or {}, table or published_table()
    status = v.get("status")
    if status is None or pd.isna(status):
        return Explanation(NOT_MEASURED, (f"no {v['backend']} row for this point",))
    if status != "ok":
        reason = str(v.get("reason") or "")
        return Explanation(f"{status}: {_reason_class(reason)}", (f"{status}: {reason}", f"on {v['stack']}"))
    ratio = _num(v.get("ratio"))
    facts = [f"{_num(v['ours_ms']):.3f} ms vs published {v['published_ms']:.3f} ms ({ratio:.2f}x)",
             f"on {v['stack']}"]
    causes: list[str] = []  # supported by a recorded comparison
    conditions: list[str] = list(v.get("method_diffs") or ())  # recorded, but not shown to matter
    device = v.get("device")
    cross_gpu = table.gpu is not None and isinstance(device, str) and bool(device) and not table.measured_on(device)
    if cross_gpu:
        conditions.insert(0, f"another GPU ({short_gpu_name(device)}; published on {table.name})")

    # Library version against the published stack, confirmed or refuted by another stack's run.
    lib = str(v["library"])
    main_col = version_columns(lib)[0]
    pub_v, ours_v = table.versions.get(main_col), v.get("lib_version")
    pkg = package_name(main_col)
    at_pub = [o for o in others if o.get("lib_version") == pub_v] if pub_v and ours_v != pub_v else []
    for o in others:
        facts.append(f"{o['stack']}: {o['ours_ms']:.3f} ms ({o['ratio']:.2f}x published)")
    # Another run of our own version that meets the published value: the gap is this run's, not the version's.
    agree = {run: ms for run, ms in sorted(reruns.items()) if within(ms / v["published_ms"], tolerance)}
    for run, ms in sorted(reruns.items()):
        facts.append(f"run {run} on the same stack: {ms:.3f} ms ({ms / v['published_ms']:.2f}x published)")
    if not ours_v:
        facts.append(f"{pkg} version not recorded")
    elif pub_v and ours_v != pub_v:
        if agree:
            conditions.append(f"runs of {pkg} {ours_v} disagree (run {next(iter(agree))} within {tolerance:.0%})")
        elif any(within(o["ratio"], tolerance) for o in at_pub):
            causes.append(f"{pkg} {ours_v} (published {pub_v}; {pub_v} re-run within {tolerance:.0%})")
        elif at_pub:
            facts.append(f"not the version alone: {pkg} {pub_v} is also {at_pub[0]['ratio']:.2f}x published")
        else:
            conditions.append(f"{pkg} {ours_v} (published {pub_v}; no {pub_v} run)")

    if lib == FLASH_QLA:
        _explain_cp(v, tolerance, variants, at_pub, pub_v, facts, causes, conditions)

    timer = v.get("timer")
    if timer and not pd.isna(timer) and table.timer and timer != table.timer:
        conditions.append(f"timer {timer} (published: CUDA graph)")
    cov = _num(v.get("sm_coverage"))
    if cov is not None:
        facts.append(f"SM coverage {cov:.0%}")
        if cov < LOW_SM_COVERAGE:
            conditions.append("low SM coverage")
    dom, share = v.get("dominant_kernel"), _num(v.get("dominant_share"))
    if dom and not pd.isna(dom):
        facts.append(f"dominant kernel {dom} ({share:.0%})")
    facts.append(f"gate {v['gate_label']}")
    if _flag(v.get("clock_drop")):
        facts.append(f"clocks dropped: {v.get('clock_drop_reason') or '?'}")
        before, after = _num(v.get("sm_clock_mhz_before")), _num(v.get("sm_clock_mhz_after"))
        # A lower clock stretches the time by before/after at most: it explains the gap only when the
        # time at the clock before the drop would be within the tolerance.
        if ratio > 1 and before and after and after < before and within(ratio * after / before, tolerance):
            causes.append("clocks dropped by the size of the gap")
        else:
            conditions.append("clocks dropped")

    if within(ratio, tolerance):
        return Explanation(f"{WITHIN} {tolerance:.0%}", tuple(facts))
    direction = "slower" if ratio > 1 else "faster"
    if cross_gpu:  # a comparison on one GPU supports no cause of a gap between two: each is a condition
        conditions[1:1], causes = causes, []
    if causes:
        if conditions:
            facts.append("also recorded, not shown to matter: " + "; ".join(conditions))
        return Explanation(f"{direction}: " + " · ".join(causes), tuple(facts), verified=True)
    return Explanation(f"{direction}: {UNVERIFIED}: " + (" · ".join(conditions) or "no recorded cause"),
                       tuple(facts), verified=False)


def _explain_cp(v: dict, tolerance: float, variants: dict[str, float], at_pub: list[dict], pub_v: str | None,
                facts: list[str], causes: list[str], conditions: list[str]) -> None:
    """FlashQLA's intra-card CP: a cause where the published version decided otherwise on the same point,
    or where a fixed choice on our stack meets the published value; else the state is a condition."""
    cp = _flag(v.get("cp_launched"))
    if cp is None:
        facts.append("kernels not recorded: intra-CP unknown")
    else:
        facts.append("intra-CP warm-up kernel launched" if cp else "no intra-CP warm-up kernel")
        theirs = {_flag(o.get("cp_launched")) for o in at_pub} - {None}
        if theirs and cp not in theirs:
            causes.append(f"intra-CP {_on(cp)} ({_on(not cp)} in {pub_v})")
        else:
            conditions.append(f"intra-CP {_on(cp)}")
    for name, ms in sorted(variants.items()):
        facts.append(f"{name} {ms:.3f} ms ({ms / v['published_ms']:.2f}x published)")
    matching = [name for name, ms in sorted(variants.items()) if within(ms / v["published_ms"], tolerance)]
    if matching:
        causes.append(f"{' / '.join(matching)} within {tolerance:.0%}")


def _reason_class(reason: str) -> str:
    """A reason with its numbers blanked, so rows failing the same way group together."""
    first = reason.strip().splitlines()[0] if reason.strip() else ""
    s = re.sub(r"(?<![A-Za-z_\d.])\d+(\.\d+)?(e[-+]?\d+)?", "#", first)
    return s[:90] + ("…" if len(s) > 90 else "")


def explain_all(comparison: pd.DataFrame, all_stacks: pd.DataFrame, rows: pd.DataFrame,
                tolerance: float, runs: pd.DataFrame | None = None,
                table: PublishedTable | None = None) -> pd.DataFrame:
    """`comparison` with `explanation`, `factors` (facts joined by '; ') and `verified` (None within the
    tolerance or for a row that is not ok) for every published value. `runs`: every run's prepared rows
    (not only the newest per point), whose other runs of a value's point and stack weigh on its cause."""
    ok = rows[rows["status"] == "ok"]
    rerun_ms: dict[tuple, dict[str, float]] = {}
    if runs is not None and not runs.empty:
        ok_runs = runs[runs["status"] == "ok"]
        for r in ok_runs[["study_key", "backend", "stack", "run_id", "median_ms"]].to_dict("records"):
            rerun_ms.setdefault((r["study_key"], r["backend"], r["stack"]), {})[str(r["run_id"])] = float(r["median_ms"])
    variant_ms: dict[tuple, dict[str, float]] = {}
    for r in ok[ok["backend"].isin(list(FLASH_QLA_VARIANTS))].to_dict("records"):
        name = FLASH_QLA_VARIANTS[r["backend"]]
        if name != "auto":
            variant_ms.setdefault((r["study_key"], r["stack"]), {})[name] = float(r["median_ms"])
    ok_alts = all_stacks[all_stacks["status"] == "ok"] if not all_stacks.empty else all_stacks
    by_value: dict[tuple, list[dict]] = {}
    for r in ok_alts.to_dict("records"):
        by_value.setdefault((r["pub_id"], r["backend"]), []).append(r)
    labels, factors, verified = [], [], []
    for v in comparison.to_dict("records"):
        stack = v.get("stack")
        variants = variant_ms.get((v.get("study_key"), stack), {}) if v["backend"] == FLASH_QLA else {}
        others = [o for o in by_value.get((v["pub_id"], v["backend"]), []) if o["stack"] != stack]
        reruns = {run: ms for run, ms in rerun_ms.get((v.get("study_key"), v["backend"], stack), {}).items()
                   if run != str(v.get("run_id"))}
        e = explain_value(v, tolerance, variants, others, reruns, table)
        labels.append(e.label)
        factors.append("; ".join(e.factors))
        verified.append(e.verified)
    return comparison.assign(explanation=labels, factors=factors,
                             verified=pd.Series(verified, dtype=object, index=comparison.index))
