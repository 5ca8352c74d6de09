"""The answer: at equal tokens, what a larger batch of shorter sequences does to FlashQLA's split and to a fully
fused kernel.

FlashQLA says its split "at large batch sizes incurs extra memory I/O overhead vs a fully fused approach". If
it did, at a fixed number of tokens the split's extra passes would take more time (and a larger share of the
call) as the same tokens come in more sequences, and FlashQLA's time would grow faster with the batch than the
fully fused kernel's. Both are computed here, per GPU model, heads and token count, between the fewest and the
most sequences measured; and where one batch size was measured at two token counts, how the passes scale with
the tokens instead.

Totals are tied by the rows' measured noise (kit/ties.py). Kernel times are one traced call each, whose spread
nothing measured: their comparisons fall back to the tie rule's assumed noise (UNKNOWN_NOISE), and say so.
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from qlabench.analyze.kit.ties import UNKNOWN_NOISE, is_tie, tie_noise


def _pct(a: float, b: float) -> str:
    return f"{(b / a - 1) * 100:+.1f}%"


@dataclass(frozen=True)
class BatchCase:
    """One GPU model, heads and token count, between its fewest and most sequences."""

    device: str
    family: str
    tokens: int
    small: dict  # the breakdown's record at the fewest sequences
    large: dict  # ... at the most
    split: str  # the split backend's name
    fused: str  # the fused backend's name

    @property
    def timed(self) -> bool:
        """Both ends of the split backend have a time."""
        return _has(self.small, "split_ms") and _has(self.large, "split_ms")

    @property
    def fused_timed(self) -> bool:
        return _has(self.small, "fused_ms") and _has(self.large, "fused_ms")

    @property
    def traced(self) -> bool:
        return self.timed and _has(self.small, "split us") and _has(self.large, "split us")

    @property
    def passes_grow(self) -> bool | None:
        """Whether the split's extra passes take longer at the most sequences, beyond the assumed noise of a
        traced call; None where not traced."""
        if not self.traced:
            return None
        a, b = self.small["split us"], self.large["split us"]
        return b > a and not is_tie(a, b)

    @property
    def share_grows(self) -> bool | None:
        """Whether the passes grow in share of the call's kernel time with the batch: they grow, and their share
        is larger at the most sequences."""
        grow = self.passes_grow
        if grow is None:
            return None
        return grow and self.large["split share"] > self.small["split share"]

    def growth_text(self) -> str:
        """How each library's time changes from the fewest to the most sequences."""
        s, l_ = self.small, self.large
        head = f"{self.family}, {self.tokens} tokens, {s['sequences']} -> {l_['sequences']}"
        if not self.timed:
            return (f"{head}: {self.split} not measured at both ({s['split ms']}, {l_['split ms']}); "
                    "no comparison")
        parts = [f"{self.split} {s['split_ms']:.3f} -> {l_['split_ms']:.3f} ms "
                 f"({_pct(s['split_ms'], l_['split_ms'])})"]
        if self.fused_timed:
            parts.append(f"{self.fused} {s['fused_ms']:.3f} -> {l_['fused_ms']:.3f} ms "
                         f"({_pct(s['fused_ms'], l_['fused_ms'])})")
            gq, gf = l_["split_ms"] / s["split_ms"], l_["fused_ms"] / s["fused_ms"]
            noise = tie_noise(s["split_noise"], l_["split_noise"], s["fused_noise"], l_["fused_noise"])
            if is_tie(gq, gf, noise):
                verdict = f"both grow alike (within their noise, {noise:.1%})"
            else:
                verdict = f"{self.split} grows {'more' if gq > gf else 'less'} than {self.fused} beyond their noise"
            ratios = (f"{self.split} / {self.fused} {s['split_ms'] / s['fused_ms']:.2f}x -> "
                      f"{l_['split_ms'] / l_['fused_ms']:.2f}x")
            across = " (a ratio across runs)" if s["across runs"] or l_["across runs"] else " (one run)"
            parts.append(f"{verdict}; {ratios}{across}")
        else:
            parts.append(f"{self.fused} not measured at both ({s['fused ms']}, {l_['fused ms']})")
        return f"{head}: " + "; ".join(parts)

    def passes_text(self) -> str:
        """How the split's extra passes change with the batch, against its fused forward and the fused kernel."""
        s, l_ = self.small, self.large
        if not self.traced:
            return f"{self.split}'s kernels were not traced at both ends: not measured"
        grow = self.passes_grow
        verdict = ("grow beyond a traced call's assumed noise" if grow else
                   f"do not grow (within {UNKNOWN_NOISE:.0%}, the noise assumed for one traced call)"
                   if is_tie(s["split us"], l_["split us"]) else "shrink")
        text = (f"its extra passes ({s['split passes']}) {s['split us']:.0f} -> {l_['split us']:.0f} us: they "
                f"{verdict}; their share of its kernel time {s['split share']:.1%} -> {l_['split share']:.1%}; "
                f"its fused forward {s['fused fwd us']:.0f} -> {l_['fused fwd us']:.0f} us "
                f"({_pct(s['fused fwd us'], l_['fused fwd us'])})")
        if _has(s, "fused kernel us") and _has(l_, "fused kernel us"):
            text += (f", {self.fused}'s kernels {s['fused kernel us']:.0f} -> {l_['fused kernel us']:.0f} us "
                     f"({_pct(s['fused kernel us'], l_['fused kernel us'])})")
        return text


def _has(rec: dict, col: str) -> bool:
    """A number in the record (a frame's record holds NaN where a time or kernel is missing)."""
    v = rec.get(col)
    return v is not None and not pd.isna(v)


def batch_cases(table: pd.DataFrame, split: str, fused: str) -> list[BatchCase]:
    """Per GPU model, family and token count measured at two batch sizes or more: the fewest and most sequences
    (breakdown rows, whatever their status: a case whose ends are not both ok says so)."""
    out = []
    if table.empty:
        return out
    for (device, family, tokens), g in table.groupby(["device", "family", "tokens"], sort=False):
        if g["num_seqs"].nunique() < 2:
            continue
        g = g.sort_values("num_seqs", kind="stable")
        out.append(BatchCase(str(device), str(family), int(tokens), g.iloc[0].to_dict(), g.iloc[-1].to_dict(),
                             split, fused))
    return out


def equal_token_table(table: pd.DataFrame) -> pd.DataFrame:
    """The breakdown at every token count measured at two batch sizes or more, per batch: both libraries' times
    and their growth over the fewest sequences, their ratio (and whether it crosses runs), the split's passes,
    their share and its fused forward beside the fused kernel."""
    recs = []
    if table.empty:
        return pd.DataFrame()
    for (_, _, _), g in table.groupby(["device", "family", "tokens"], sort=False):
        if g["num_seqs"].nunique() < 2:
            continue
        g = g.sort_values("num_seqs", kind="stable")
        base = g.iloc[0]
        for r in g.to_dict("records"):
            recs.append({
                "heads": r["family"], "tokens": r["tokens"], "sequences": r["sequences"],
                "split ms": r["split ms"], "split vs fewest": _ratio(r["split_ms"], base["split_ms"]),
                "fused ms": r["fused ms"], "fused vs fewest": _ratio(r["fused_ms"], base["fused_ms"]),
                "split / fused": _ratio(r["split_ms"], r["fused_ms"]), "runs": r["runs"],
                "split us": r.get("split us"), "split share": r.get("split share"),
                "fused fwd us": r.get("fused fwd us"), "fused kernel us": r.get("fused kernel us")})
    return pd.DataFrame(recs)


def _ratio(a, b) -> float | None:
    if a is None or b is None or pd.isna(a) or pd.isna(b) or not b:
        return None
    return float(a) / float(b)


def token_cases(table: pd.DataFrame) -> list[tuple[dict, dict]]:
    """(fewer tokens, more tokens) records of one GPU model, family and number of sequences measured at two token
    counts, both traced: how the split's passes scale with the tokens at a fixed batch."""
    out = []
    if table.empty:
        return out
    traced = table[table["split us"].notna()] if "split us" in table else table.iloc[0:0]
    for _, g in traced.groupby(["device", "family", "num_seqs"], sort=False):
        if g["tokens"].nunique() < 2:
            continue
        g = g.sort_values("tokens", kind="stable")
        out.append((g.iloc[0].to_dict(), g.iloc[-1].to_dict()))
    return out


def token_text(pair: tuple[dict, dict]) -> str:
    a, b = pair
    k = b["tokens"] / a["tokens"]
    return (f"{a['family']}, {a['num_seqs']} sequences, {a['tokens']} -> {b['tokens']} tokens ({k:g}x): the extra "
            f"passes {a['split us']:.0f} -> {b['split us']:.0f} us ({b['split us'] / a['split us']:.2f}x), the fused "
            f"forward {a['fused fwd us']:.0f} -> {b['fused fwd us']:.0f} us "
            f"({b['fused fwd us'] / a['fused fwd us']:.2f}x)")


def deficit_shares(table: pd.DataFrame) -> pd.Series:
    """Per traced problem where the split backend's kernels take longer than the fused backend's: the share of
    that excess that is the split's extra passes (above 1: without them it would be the faster)."""
    need = ("split us", "kernel sum us", "fused kernel us")
    if table.empty or any(c not in table for c in need):
        return pd.Series(dtype=float)
    t = table.dropna(subset=list(need))
    excess = t["kernel sum us"] - t["fused kernel us"]
    t, excess = t[excess > 0], excess[excess > 0]
    return (t["split us"] / excess).rename("deficit share")
