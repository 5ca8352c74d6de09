"""Why our value differs from the published one, derived from what each row recorded.

For every published value: `explanation`, a short label that groups values (e.g. "slower: flash-qla 0.1.3
(published 0.1.2) · intra-CP on"), and `factors`, the facts behind it. The facts come from the row
itself and its neighbours in the results: the library version against the published stack, and whether
another stack measured the same point closer; for FlashQLA whether its intra-card CP warm-up kernel
launched and what the nocp / forcecp variants took on the same point; SM coverage and the dominant
kernel; the gate profile, layout and timer against the published method; clock drops; and for a row
that is not ok, its status and reason.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import pandas as pd

from qlabench.analyze.study.prepare import FLASH_QLA, FLASH_QLA_VARIANTS, package_name, version_columns
from qlabench.analyze.study.published import PUBLISHED_STACK, PUBLISHED_TIMER

WITHIN = "within"
NOT_MEASURED = "not measured"
LOW_SM_COVERAGE = 0.5  # below this time-weighted share of SMs given blocks, the launch leaves the GPU idle


def within(ratio, tolerance: float) -> bool:
    return ratio is not None and not pd.isna(ratio) and abs(ratio - 1.0) <= tolerance + 1e-12


def _num(v) -> float | None:
    return None if v is None or pd.isna(v) else float(v)


@dataclass(frozen=True)
class Explanation:
    label: str  # groups values: the same causes give the same label
    factors: tuple[str, ...]  # the facts, most telling first


def explain_value(v: dict, tolerance: float, variants: dict[str, float] | None = None,
                  others: list[dict] | None = None) -> Explanation:
    """Explain one published value against our row `v` (a `comparison` record).

    variants: ok times of the other FlashQLA CP variants on the same point and stack ('nocp' -> ms);
    others: ok records of the same published value measured on other stacks.
    """
    variants, others = variants or {}, others or []
    status = v.get("status")
    if status is None or pd.isna(status):
        return Explanation(NOT_MEASURED, (f"no {v['backend']} row for this point",))
    if status != "ok":
        reason = str(v.get("reason") or "")
        return Explanation(f"{status}: {_reason_class(reason)}", (f"{status}: {reason}", f"on {v['stack']}"))
    ratio = _num(v.get("ratio"))
    facts = [f"{_num(v['ours_ms']):.3f} ms vs published {v['published_ms']:.3f} ms ({ratio:.2f}x)",
             f"on {v['stack']}"]
    tags: list[str] = []
    tags += list(v.get("method_diffs") or ())

    # Library version against the published stack, confirmed or refuted by another stack's run.
    lib = str(v["library"])
    main_col = version_columns(lib)[0]
    pub_v, ours_v = PUBLISHED_STACK.get(main_col), v.get("lib_version")
    pkg = package_name(main_col)
    at_pub = [o for o in others if o.get("lib_version") == pub_v]
    for o in others:
        facts.append(f"{o['stack']}: {o['ours_ms']:.3f} ms ({o['ratio']:.2f}x published)")
    if not ours_v:
        facts.append(f"{pkg} version not recorded")
    elif pub_v and ours_v != pub_v:
        if any(within(o["ratio"], tolerance) for o in at_pub):
            tags.append(f"{pkg} {ours_v} (published {pub_v}; {pub_v} re-run within {tolerance:.0%})")
        elif at_pub:
            facts.append(f"not the version alone: {pkg} {pub_v} is also {at_pub[0]['ratio']:.2f}x published")
        else:
            tags.append(f"{pkg} {ours_v} (published {pub_v})")

    if lib == FLASH_QLA:
        cp = v.get("cp_launched")
        if cp is None or pd.isna(cp):
            facts.append("kernels not recorded: intra-CP unknown")
        else:
            tags.append("intra-CP on" if cp else "intra-CP off")
            facts.append("intra-CP warm-up kernel launched" if cp else "no intra-CP warm-up kernel")
        for name, ms in sorted(variants.items()):
            r = ms / v["published_ms"]
            facts.append(f"{name} {ms:.3f} ms ({r:.2f}x published)")
        matching = [name for name, ms in sorted(variants.items()) if within(ms / v["published_ms"], tolerance)]
        if matching:
            tags.append(f"{' / '.join(matching)} within {tolerance:.0%}")

    timer = v.get("timer")
    if timer and not pd.isna(timer) and timer != PUBLISHED_TIMER:
        tags.append(f"timer {timer} (published: CUDA graph)")
    cov = _num(v.get("sm_coverage"))
    if cov is not None:
        facts.append(f"SM coverage {cov:.0%}")
        if cov < LOW_SM_COVERAGE:
            tags.append("low SM coverage")
    dom, share = v.get("dominant_kernel"), _num(v.get("dominant_share"))
    if dom and not pd.isna(dom):
        facts.append(f"dominant kernel {dom} ({share:.0%})")
    facts.append(f"gate {v['gate_label']}")
    drop = v.get("clock_drop")
    if drop is not None and not pd.isna(drop) and bool(drop):
        tags.append("clocks dropped")
        facts.append(f"clocks dropped: {v.get('clock_drop_reason') or '?'}")

    if within(ratio, tolerance):
        return Explanation(f"{WITHIN} {tolerance:.0%}", tuple(facts))
    direction = "slower" if ratio > 1 else "faster"
    return Explanation(f"{direction}: " + (" · ".join(tags) if tags else "unexplained"), tuple(facts))


def _reason_class(reason: str) -> str:
    """A reason with its numbers blanked, so rows failing the same way group together."""
    first = reason.strip().splitlines()[0] if reason.strip() else ""
    s = re.sub(r"(?<![A-Za-z_\d.])\d+(\.\d+)?(e[-+]?\d+)?", "#", first)
    return s[:90] + ("…" if len(s) > 90 else "")


def explain_all(comparison: pd.DataFrame, all_stacks: pd.DataFrame, rows: pd.DataFrame,
                tolerance: float) -> pd.DataFrame:
    """`comparison` with `explanation` and `factors` (facts joined by '; ') for every published value."""
    ok = rows[rows["status"] == "ok"]
    variant_ms: dict[tuple, dict[str, float]] = {}
    for r in ok[ok["backend"].isin(list(FLASH_QLA_VARIANTS))].to_dict("records"):
        name = FLASH_QLA_VARIANTS[r["backend"]]
        if name != "auto":
            variant_ms.setdefault((r["study_key"], r["stack"]), {})[name] = float(r["median_ms"])
    ok_alts = all_stacks[all_stacks["status"] == "ok"] if not all_stacks.empty else all_stacks
    by_value: dict[tuple, list[dict]] = {}
    for r in ok_alts.to_dict("records"):
        by_value.setdefault((r["pub_id"], r["backend"]), []).append(r)
    labels, factors = [], []
    for v in comparison.to_dict("records"):
        stack = v.get("stack")
        variants = variant_ms.get((v.get("study_key"), stack), {}) if v["backend"] == FLASH_QLA else {}
        others = [o for o in by_value.get((v["pub_id"], v["backend"]), []) if o["stack"] != stack]
        e = explain_value(v, tolerance, variants, others)
        labels.append(e.label)
        factors.append("; ".join(e.factors))
    return comparison.assign(explanation=labels, factors=factors)
