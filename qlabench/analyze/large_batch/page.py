"""The large-batch page (large-batch.md) and its PNGs. Nothing here computes a number: the tables come from the
LargeBatch (study.py), the answer's sentences from finding.py and batches.py, the figures from figures.py."""

from __future__ import annotations

import os

import pandas as pd

from qlabench.analyze.kit.backends import label_of
from qlabench.analyze.kit.figures import PageFiles, write_page
from qlabench.analyze.kit.tables import md_table
from qlabench.analyze.large_batch.figures import large_batch_figures
from qlabench.analyze.large_batch.finding import finding_lines, same_kernels, token_lines
from qlabench.analyze.large_batch.kernels import FUSED_WORDS, kernel_columns
from qlabench.analyze.large_batch.study import SPLIT_LIBRARY, LargeBatch
from qlabench.analyze.large_batch.times import missing, not_ok
from qlabench.core.backend_decl import auto_choices
from qlabench.core.text import md_code, md_text

PAGE = "large-batch.md"
FORMATS = {"split vs fewest": ".2f", "fused vs fewest": ".2f", "split / fused": ".2f", "split share %": ".1f",
           "split MiB": ".0f", "fused MiB": ".0f", "fused kernels": ".0f"}


def _table(df: pd.DataFrame, columns: list[str], names: dict[str, str]) -> str:
    """md_table of `columns`, renamed by `names`; times in us with no decimals, the rest by FORMATS."""
    cols = [c for c in columns if c in df.columns]
    shown = df[cols].copy()
    if "split share" in shown:
        shown["split share"] = shown["split share"].astype(float) * 100
        shown = shown.rename(columns={"split share": "split share %"})
    us = [c for c in shown.columns if str(c).endswith(" us")]
    shown[us] = shown[us].astype(float).round(0) + 0.0  # never '-0'
    formats = {c: ".0f" for c in us} | FORMATS
    shown = shown.rename(columns=names)
    return md_table(shown, {names.get(c, c): f for c, f in formats.items()})


def _names(s: LargeBatch) -> dict[str, str]:
    """The generic column names, with the two compared backends' names in them."""
    return {"split ms": f"{s.split} ms", "split vs fewest": f"{s.split} vs fewest", "fused ms": f"{s.fused} ms",
            "fused vs fewest": f"{s.fused} vs fewest", "split / fused": f"{s.split} / {s.fused}",
            "split MiB": f"{s.split} extra MiB", "fused MiB": f"{s.fused} extra MiB",
            "fused kernel us": f"{s.fused} kernels us", "fused kernels": f"{s.fused} kernels",
            "fused gap us": f"{s.fused} gap us", "split us": "split passes us", "split share %": "split share %",
            "fused fwd us": "fused fwd us"}


def render(s: LargeBatch, figures: dict[str, str], command: str | None = None) -> str:
    names = _names(s)
    lines = ["# Large packed batches: does FlashQLA's split cost it?", ""]
    if command:
        lines += [f"Written by `{command}` from {', '.join(f'`{x}`' for x in s.sources) or 'the rows given'}.", ""]
    lines += [
        s.summary_line() + ".", "",
        "FlashQLA says its two-kernel split \"at large batch sizes incurs extra memory I/O overhead vs a fully fused "
        f"approach\". Here the same tokens come in more, shorter sequences. `{s.split}` is FlashQLA with its CP "
        f"off: its passes, then its fused forward kernel. `{s.fused}` is FlashInfer's unsplit call, one fused "
        "kernel over every sequence: the fully fused approach.", "",
        "The runs (a letter in the tables names one; rows of two runs are two measurements, and a ratio between "
        "them is a ratio across runs):", ""]
    lines += [f"- {line}" for line in s.run_notes]
    lines += ["", "## The answer", "", *(p + "\n" for p in finding_lines(s)),
              "Per head configuration and token count, from the fewest to the most sequences:", ""]
    for c in s.cases:
        lines += [f"- {c.growth_text()}.", f"  {c.passes_text()[0].upper()}{c.passes_text()[1:]}."]
    lines += ["", "The same batch at more tokens:", "", *token_lines(s), ""]
    lines += _times_section(s) + _kernel_section(s, names) + _equal_section(s, names, figures)
    bad = not_ok(s.rows)
    lines += ["## Rows that are not ok", "",
              "A row whose check failed (`incorrect`) or whose time cannot be believed (`error`) shows its status in "
              "every table, never a time.", "", md_table(bad) if not bad.empty else "_(none)_\n"]
    return "\n".join(lines)


def _times_section(s: LargeBatch) -> list[str]:
    gone = missing(s.rows)
    legend = "; ".join(f"{md_code(b)}: {md_text(label_of(b))}" for b in s.times.columns
                       if b in set(s.rows["backend"]))
    out = ["## Every backend's time", "",
           "Median ms per call (the run's regime and timer, above). **Bold**: the fastest and every backend within "
           "the measured noise of it (`rel_noise`; the tie rule: neither is called faster); `fastest` names them. "
           "A row that is not ok shows its status; `missing`: no row for that backend there.", "",
           legend + ".", "", md_table(s.times)]
    if not gone.empty:
        out += ["Backends missing from some problems (not measured there):", "", md_table(gone)]
    return out


def _kernel_section(s: LargeBatch, names: dict[str, str]) -> list[str]:
    k = s.kernels
    kcols = kernel_columns(k)
    rules = set(k["fused rule"].dropna()) if "fused rule" in k else set()
    rule = ("the kernel whose name holds " + " and ".join(f"`{w}`" for w in FUSED_WORDS)
            if rules <= {"named"} else
            "named where a kernel's name holds " + " and ".join(f"`{w}`" for w in FUSED_WORDS) +
            ", else the kernel the call spent longest in (`fused rule`)")
    auto = next((c.auto for c in auto_choices() if c.library == SPLIT_LIBRARY), None)
    note = same_kernels(s, auto)
    cols = ["heads", "sequences", "tokens", "split ms", *kcols, "split passes", "split us", "split share",
            "kernel sum us", "gap us", "fused ms", "fused kernel us", "fused kernels", "fused gap us", "split MiB",
            "fused MiB", "runs"]
    if rules - {"named"}:
        cols.insert(cols.index("split passes"), "fused rule")
    return [
        "## FlashQLA's kernels beside its total", "",
        f"Each kernel's own time (us, `kernel_dur_us`) in one traced call of `{s.split}`, in launch order. The fused "
        f"forward is {rule}; every other kernel is one of the split's extra passes (`split passes`), and `split "
        "share %` is their share of the call's kernel time. `gap us` = the timed median - the traced kernels' "
        "sum: the launch gaps and whatever else the timed call spent off its kernels. The kernels are traced in "
        "one eager call after timing, the median comes from graph replays with L2 flushed, so a gap near zero or "
        "below it says the call is its kernels, not a precise overhead. "
        f"`{s.fused}` beside it: its time, its kernels' time (one kernel for a fully fused call), its gap. `extra "
        "MiB`: device memory the call takes beyond its inputs and outputs.", "",
        *([note, ""] if note else []), _table(k, cols, names)]


def _equal_section(s: LargeBatch, names: dict[str, str], figures: dict[str, str]) -> list[str]:
    out = ["## Equal tokens, more sequences", "",
           f"Each token count measured at several batch sizes, the fewest sequences first: each library's time and "
           f"its growth over the fewest (`vs fewest`), the ratio of the two (`{s.split} / {s.fused}`, across the "
           "runs `runs` names), the split's passes and their share, its fused forward beside the fused kernel "
           "(us, one traced call each).", ""]
    for stem, name in figures.items():
        out += [f"![{stem}]({name})", ""]
    cols = ["heads", "tokens", "sequences", "split ms", "split vs fewest", "fused ms", "fused vs fewest",
            "split / fused", "runs", "split us", "split share", "fused fwd us", "fused kernel us"]
    return out + [_table(s.equal_tokens, cols, names) if not s.equal_tokens.empty else
                  "No token count was measured at two batch sizes: not measured.\n"]


def write_large_batch_page(s: LargeBatch, out_dir: str | os.PathLike, command: str | None = None) -> PageFiles:
    """Write the figures as PNG and the page (large-batch.md) into out_dir."""
    return write_page(out_dir, PAGE, large_batch_figures(s), "large_batch_*.png",
                      lambda written: render(s, written, command))
