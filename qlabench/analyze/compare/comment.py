"""A comparison as the pull-request comment kernel repositories post (`--format comment`): one row per point
with backend, mode, heads, layout, base ms, head ms, change and verdict, each change beside its noise floor,
in the shape FLA's benchmark bot comments have. The first line is a marker, so a CI job finds its own earlier
comment and updates it in place instead of adding one per push (docs/PLUGINS.md).
"""

from __future__ import annotations

import math

from qlabench.analyze.compare.comparison import Comparison, PairResult
from qlabench.analyze.compare.render import HEADLINE_ICON, _settings, env_lines, summary_line
from qlabench.analyze.compare.verdict import Verdict
from qlabench.core.text import md_code, md_text

MARKER = "<!-- qlabench:comment -->"
_ICON = {Verdict.FASTER: ":rocket:", Verdict.SLOWER: ":warning:", Verdict.SAME: "", Verdict.AMBIGUOUS: ":grey_question:",
         Verdict.STATUS_CHANGED: ":x:", Verdict.MISSING: ":x:", Verdict.INCONCLUSIVE: ":grey_question:"}


def _cells(p: PairResult) -> tuple[str, str]:
    """(heads, layout) out of the point's label: 'backend mode heads layout ...'."""
    rest = p.label.removeprefix(f"{p.backend} {p.mode} ").split()
    return (rest[0] if rest else "-"), (rest[1] if len(rest) > 1 else "-")


def _floor(p: PairResult) -> str:
    """The noise floor the change is judged against: the run-to-run spread of one replicate (+-%)."""
    s = p.stats
    if s is None or s.sigma_between is None:
        return "-"
    return f"±{math.expm1(s.sigma_between):.1%}"


def _change(p: PairResult) -> str:
    if p.stats is None:
        return "-"
    return f"{p.stats.ratio - 1:+.1%}"


def _ms(p: PairResult, side: str) -> str:
    if p.stats is None:
        return (p.base_status if side == "base" else p.head_status) or "-"
    return f"{p.stats.base_median_ms if side == 'base' else p.stats.head_median_ms:.4g}"


def comment(c: Comparison, command: str = "qlabench ab") -> str:
    """The markdown of the comment, its marker first."""
    out = [MARKER, f"### {HEADLINE_ICON[c.exit_code]} {command}: {md_text(summary_line(c))}", "",
           f"{md_code(c.head_label)} (head) vs {md_code(c.base_label)} (base); {md_text(_settings(c))}.", "",
           "| backend | mode | heads | layout | base ms | head ms | change | noise floor | verdict |",
           "|---|---|---|---|---:|---:|---:|---:|---|"]
    for p in c.worst(None):
        heads, layout = _cells(p)
        verdict = f"{_ICON.get(p.verdict, '')} {md_text(p.verdict.value)}".strip()
        if c.fails(p):
            verdict = f"**{verdict} (fails)**"
        cells = [p.backend, p.mode, heads, layout, _ms(p, "base"), _ms(p, "head"), _change(p), _floor(p)]
        out.append("| " + " | ".join([*map(md_text, cells), verdict]) + " |")
    if not c.pairs:
        out.append("| - | - | - | - | - | - | - | - | no points |")
    why = [f"- {md_text(p.label)}: {md_text(p.reason)}" for p in c.worst(None)
           if p.verdict not in (Verdict.SAME, Verdict.NOT_TIMED) and p.reason]
    if why or c.env or c.notes:
        out += ["", "<details><summary>why, and what differs between the sides</summary>", ""]
        out += why + [f"- {md_text(line)}" for line in env_lines(c)] + [f"- {md_text(n)}" for n in c.notes]
        out += ["", "</details>"]
    return "\n".join(out) + "\n"
