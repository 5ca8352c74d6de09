"""The answer in a few plain sentences, computed from the study: whether FlashQLA's split passes grow (in time and
in share) as the same tokens come in more sequences, how both libraries' times change, where the split costs
FlashQLA against the fully fused kernel, and each call's extra device memory. What was not measured says so.
"""

from __future__ import annotations

from qlabench.analyze.kit.ties import UNKNOWN_NOISE, is_tie
from qlabench.analyze.large_batch.study import LargeBatch
from qlabench.store.keys import plain_value


def _range(values, fmt: str, unit: str = "") -> str:
    v = [float(x) for x in values if x is not None and x == x]
    if not v:
        return "not measured"
    lo, hi = min(v), max(v)
    return f"{lo:{fmt}}{unit}" if format(lo, fmt) == format(hi, fmt) else f"{lo:{fmt}}-{hi:{fmt}}{unit}"


def _pct_range(values) -> str:
    return _range([100 * float(x) for x in values if x is not None and x == x], ".1f", "%")


def _runs_text(s: LargeBatch, backends) -> str:
    """The runs the rows of `backends` come from, by letter and id."""
    ids = s.rows.loc[s.rows["backend"].isin(list(backends)), "run_id"].astype(str).unique()
    return ", ".join(f"{s.runs[r]} `{r}`" for r in sorted(ids, key=lambda r: s.runs[r])) or "no run"


def finding_lines(s: LargeBatch) -> list[str]:
    """The answer's paragraphs, in markdown."""
    if s.split is None or not (s.rows["backend"] == s.split).any():
        return [f"FlashQLA's split backend ({s.split or 'none declared'}) has no row here: not measured."]
    cases = [c for c in s.cases if c.traced]
    if not cases:
        return [f"No token count here was measured at two batch sizes with {s.split}'s kernels traced at both: "
                "the question is not measured."]
    grow = [c for c in cases if c.passes_grow]
    share = [c for c in cases if c.share_grows]
    small, large = [c.small for c in cases], [c.large for c in cases]
    out = []
    fwd_grows = [c for c in cases if c.large["fused fwd us"] > c.small["fused fwd us"]
                 and not is_tie(c.small["fused fwd us"], c.large["fused fwd us"])]
    if not grow:
        where = f"In all {len(cases)} cases" if len(cases) > 1 else "In the one case"
        text = (f"**The split's passes do not grow with the batch.** {where} (heads x token count) they take the "
                f"same time at the most sequences as at the fewest, within {UNKNOWN_NOISE:.0%} (one traced call "
                f"each), and their share of {s.split}'s kernel time falls from "
                f"{_pct_range(r['split share'] for r in small)} to {_pct_range(r['split share'] for r in large)}")
        if len(fwd_grows) == len(cases):
            text += (f": what grows with the batch is the fused forward (by "
                     f"{_pct_range(c.large['fused fwd us'] / c.small['fused fwd us'] - 1 for c in cases)}), "
                     "not the split")
        text += "."
        scale = [b["split us"] / a["split us"] for a, b in s.token_pairs]
        tokens = [b["tokens"] / a["tokens"] for a, b in s.token_pairs]
        if scale:
            text += (f" With the batch fixed, {_range(tokens, 'g', 'x')} the tokens take {_range(scale, '.2f', 'x')} "
                     "the time in the passes: their cost follows the tokens, not the sequences.")
        out.append(text)
    else:
        out.append(
            f"**The split's passes grow with the batch in {len(grow)} of {len(cases)} cases** (beyond "
            f"{UNKNOWN_NOISE:.0%}, one traced call each), and grow in share of {s.split}'s kernel time in "
            f"{len(share)}: " + "; ".join(f"{c.family}, {c.tokens} tokens" for c in grow) + ".")
    timed = [c for c in s.cases if c.timed and c.fused_timed]
    if timed:
        qla = [c.large["split_ms"] / c.small["split_ms"] for c in timed]
        fi = [c.large["fused_ms"] / c.small["fused_ms"] for c in timed]
        ratio_small = [c.small["split_ms"] / c.small["fused_ms"] for c in timed]
        ratio_large = [c.large["split_ms"] / c.large["fused_ms"] for c in timed]
        out.append(
            f"From the fewest to the most sequences at equal tokens, {s.split}'s time grows by "
            f"{_pct_range(q - 1 for q in qla)} and {s.fused}'s by {_pct_range(f - 1 for f in fi)}; "
            f"{s.split} / {s.fused} goes from {_range(ratio_small, '.2f', 'x')} to {_range(ratio_large, '.2f', 'x')}. "
            f"Those ratios are across runs: {s.split} from {_runs_text(s, [s.split])}, {s.fused} from "
            f"{_runs_text(s, [s.fused])}.")
    else:
        out.append(f"{s.fused} has no time at both ends of any case: the fully fused comparison is not measured.")
    deficit = s.deficit()
    if not deficit.empty:
        out.append(
            f"**Where the split costs it:** at every batch. On the {len(deficit)} problems both calls were traced, "
            f"{s.split}'s kernels take longer than {s.fused}'s single kernel, and its split passes are "
            f"{_pct_range(deficit)} of that excess (above 100%: its fused forward alone is no slower than "
            f"{s.fused}'s kernel). They are {_pct_range(s.kernels['split share'])} of {s.split}'s kernel time at "
            "any batch.")
    mem = s.kernels
    if "split MiB" in mem and mem["split MiB"].notna().any():
        out.append(f"Extra device memory per call (beyond inputs and outputs): {s.split} "
                   f"{_range(mem['split MiB'], '.0f', ' MiB')}, {s.fused} {_range(mem['fused MiB'], '.0f', ' MiB')}.")
    return out


def token_lines(s: LargeBatch) -> list[str]:
    from qlabench.analyze.large_batch.batches import token_text

    return [f"- {token_text(p)}" for p in s.token_pairs] or ["- no batch size was traced at two token counts"]


def same_kernels(s: LargeBatch, auto: str | None) -> str | None:
    """Whether the library's auto backend ran the split backend's kernels (its CP did not split the call)."""
    if not auto or auto == s.split:
        return None
    d = s.rows[s.rows["status"] == "ok"]
    a = d[d["backend"] == auto].set_index(["device", "problem"])["kernels"]
    b = d[d["backend"] == s.split].set_index(["device", "problem"])["kernels"]
    both = a.index.intersection(b.index)
    if both.empty:
        return None
    same = sum(plain_value(a[p]) == plain_value(b[p]) for p in both)
    return (f"`{auto}` (the library's own CP decision) launched the same kernels as `{s.split}` on {same} of "
            f"{len(both)} problems" + (": its CP never split these calls, and the breakdown is its too."
                                       if same == len(both) else "; the others split (its times above)."))
