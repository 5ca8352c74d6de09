"""Renderings of a Comparison: a rich table for the terminal, markdown for a PR comment, JSON for tools.

Nothing here computes a verdict; everything read comes from the Comparison object.
"""

from __future__ import annotations

import json

from rich.markup import escape
from rich.table import Table

from qlabench.analyze.compare.comparison import Comparison, PairResult
from qlabench.analyze.compare.drift import shift_verdict
from qlabench.analyze.compare.verdict import EXIT_FAIL, EXIT_INCONCLUSIVE, EXIT_NOT_COMPARED, EXIT_PASS, Verdict
from qlabench.core.text import md_code, md_text

_STYLE = {Verdict.FASTER: "green", Verdict.SLOWER: "red", Verdict.SAME: "dim", Verdict.AMBIGUOUS: "yellow",
          Verdict.MISSING: "magenta", Verdict.NEW: "cyan", Verdict.STATUS_CHANGED: "red", Verdict.NOT_TIMED: "dim",
          Verdict.INCONCLUSIVE: "yellow"}
# A headline's icon follows the exit code: only a pass is green (an inconclusive gate is not a pass).
HEADLINE_ICON = {EXIT_PASS: ":white_check_mark:", EXIT_FAIL: ":x:", EXIT_NOT_COMPARED: ":warning:",
                 EXIT_INCONCLUSIVE: ":grey_question:"}


def _pct(x: float | None) -> str:
    return "-" if x is None else f"{x:+.1%}"


# Degrees of freedom below which a between-run interval is no interval: two rounds of an A/B give one, and a t
# interval at alpha 0.01 on one is +-31.8 standard errors ([-100.0%, +29719231179.5%] was printed).
MIN_INTERVAL_DF = 2


def _change(p: PairResult) -> str:
    if p.stats is None:
        return "-"
    s = p.stats
    few = s.method == "runs" and s.sigma_between is not None and s.df < MIN_INTERVAL_DF
    if few or not (0 < s.ci_low and s.ci_high < float("inf")):
        return f"{_pct(s.ratio - 1)} (too few {'rounds' if s.paired else 'runs'} for an interval)"
    return f"{_pct(s.ratio - 1)} [{_pct(s.ci_low - 1)}, {_pct(s.ci_high - 1)}]"


def _ms(p: PairResult, side: str) -> str:
    if p.stats is None:
        st = p.base_status if side == "base" else p.head_status
        return st or "-"
    s = p.stats
    n = (f"{s.runs_base} runs" if side == "base" else f"{s.runs_head} runs") if s.method == "runs" else \
        (f"n={s.n_base}" if side == "base" else f"n={s.n_head}")
    return f"{s.base_median_ms:.4g} ({n})" if side == "base" else f"{s.head_median_ms:.4g} ({n})"


def _why(p: PairResult) -> str:
    """The verdict's reason, and for a time that moved, where it moved inside the point."""
    moved = p.verdict in (Verdict.SLOWER, Verdict.FASTER, Verdict.AMBIGUOUS, Verdict.INCONCLUSIVE)
    return p.reason + (f"; kernels: {p.kernels}" if moved and p.kernels else "")


def summary_line(c: Comparison) -> str:
    counts = ", ".join(f"{n} {v}" for v, n in c.counts.items() if n)
    g = c.geomean_ratio
    geo = f"geometric-mean time change {_pct(g - 1 if g else None)} over {len(c.timed)} timed points"
    n_fail = len(c.failures) + (1 if c.shift_fails else 0)
    n_inc = len(c.inconclusive)
    # one outcome, one exit code, and the line says the code the command exits with
    verdict = (f"FAIL ({n_fail} failing; exit {c.exit_code})" if n_fail else f"NOT A PASS (exit {EXIT_NOT_COMPARED})"
               if c.exit_code == EXIT_NOT_COMPARED else f"INCONCLUSIVE (exit {EXIT_INCONCLUSIVE})"
               if c.exit_code == EXIT_INCONCLUSIVE else f"PASS, {n_inc} inconclusive accepted (exit {EXIT_PASS})"
               if n_inc else f"PASS (exit {EXIT_PASS})")
    line = f"{verdict}: {counts or 'no points'}; {geo}"
    if c.exit_code == EXIT_INCONCLUSIVE:
        line += (f" ({n_inc} point(s) could not be judged at {c.options.threshold:.0%}: their run-to-run noise is "
                 "above it or unknown, so nothing says they did not regress; --accept-inconclusive passes them)")
    if not n_fail and c.exit_code == EXIT_PASS:
        line += _why_pass(c)
    if c.control is not None and c.control.action != "none":
        line += (f"; host shift {c.control.ratio - 1:+.1%} measured by control {c.control.backend}: "
                 f"{c.control.action}")
    if c.options.drift:
        line += "; " + shift_verdict(c.shift, c.options.threshold)[1] + " (points judged relative to it)"
    return line


def _why_pass(c: Comparison) -> str:
    """A PASS beside a large time change says why it passes: no point counted as a failure."""
    g = c.geomean_ratio
    if not g or abs(g - 1) <= c.options.threshold:
        return ""
    n = c.counts
    amb = n.get(Verdict.AMBIGUOUS.value, 0)
    if amb and amb == sum(v for k, v in n.items() if k not in (Verdict.SAME.value, Verdict.NOT_TIMED.value)):
        return (f" (PASS because all {amb} moved points are ambiguous: too few samples or too much noise "
                "to call; `--fail-on ambiguous` fails on them)")
    kinds = ",".join(sorted(f.value for f in c.fail_on)) or "nothing"
    return f" (PASS: no point counts as a failure under --fail-on {kinds})"


def _settings(c: Comparison) -> str:
    o = c.options
    method = (f"between-run statistics, noise floor {o.noise_factor:g} x run-to-run SD" if o.method == "runs"
              else "per-sample statistics (one run per side; leaves out run-to-run noise)")
    return (f"{method}; threshold {o.threshold:.0%}, alpha {o.alpha:g}, min samples {o.min_samples}, "
            f"fail on {','.join(sorted(f.value for f in c.fail_on)) or 'nothing'}")


def rich_table(c: Comparison, top: int | None = None, show_same: bool = True) -> Table:
    rows = [p for p in c.worst(None) if show_same or p.verdict not in (Verdict.SAME, Verdict.NOT_TIMED)]
    rows = rows if top is None else rows[:top]
    t = Table(title=f"{escape(c.head_label)} vs {escape(c.base_label)}", caption=_settings(c))
    for col, just in (("verdict", "left"), ("point", "left"), ("base ms", "right"), ("head ms", "right"),
                      ("time change [CI]", "right"), ("p", "right"), ("why", "left")):
        t.add_column(col, justify=just, overflow="fold")
    for p in rows:
        style = _STYLE[p.verdict]
        failing = c.fails(p)
        mark = "FAIL " if failing else ""
        t.add_row(f"[{style}]{mark}{p.verdict.value}[/{style}]", escape(p.label), _ms(p, "base"), _ms(p, "head"),
                  _change(p), f"{p.stats.p_value:.2g}" if p.stats else "-", escape(_why(p)))
    return t


def env_lines(c: Comparison) -> list[str]:
    return [f"{f.name}: {', '.join(f.base) or '-'} -> {', '.join(f.head) or '-'}"
            + (f" (blocking: {f.why}; allowed)" if f.blocking else "") for f in c.env]


def markdown(c: Comparison, top: int = 20, command: str = "qlabench gate") -> str:
    out = [f"### {HEADLINE_ICON[c.exit_code]} {command}: {md_text(summary_line(c))}", "",
           f"{md_code(c.head_label)} vs {md_code(c.base_label)}; {md_text(_settings(c))}.", ""]
    shown = [p for p in c.worst(None) if p.verdict not in (Verdict.SAME, Verdict.NOT_TIMED)][:top]
    if shown:
        out += ["| verdict | point | base ms | head ms | time change [CI] | p | why |",
                "|---|---|---:|---:|---:|---:|---|"]
        for p in shown:
            v = f"**{md_text(p.verdict.value)}**" if c.fails(p) else md_text(p.verdict.value)
            cells = [p.label, _ms(p, "base"), _ms(p, "head"), _change(p),
                     f"{p.stats.p_value:.2g}" if p.stats else "-", _why(p)]
            out.append("| " + " | ".join([v, *map(md_text, cells)]) + " |")
        rest = len([p for p in c.pairs if p.verdict not in (Verdict.SAME, Verdict.NOT_TIMED)]) - len(shown)
        if rest > 0:
            out.append(f"\n{rest} more rows not shown (`--top` to change).")
    else:
        out.append("Every point is the same within the threshold.")
    if c.env or c.notes:
        out += ["", "<details><summary>environment differences and notes</summary>", ""]
        out += [f"- {md_text(line)}" for line in env_lines(c)]
        out += [f"- {md_text(n)}" for n in c.notes]
        out += ["", "</details>"]
    return "\n".join(out) + "\n"


def to_json(c: Comparison) -> str:
    def pair(p: PairResult) -> dict:
        d = {"key": p.key, "point": p.label, "backend": p.backend, "mode": p.mode, "timer": p.timer,
             "base_status": p.base_status, "head_status": p.head_status, "verdict": p.verdict.value,
             "reason": p.reason, "failure": p.failure.value if p.failure else None, "fails": c.fails(p),
             "kernel_change": p.kernels}
        if p.stats:
            d.update({"base_median_ms": p.stats.base_median_ms, "head_median_ms": p.stats.head_median_ms,
                      "n_base": p.stats.n_base, "n_head": p.stats.n_head, "ratio": p.stats.ratio,
                      "ci_low": p.stats.ci_low, "ci_high": p.stats.ci_high, "p_value": p.stats.p_value,
                      "method": p.stats.method, "runs_base": p.stats.runs_base, "runs_head": p.stats.runs_head,
                      "sigma_between": p.stats.sigma_between, "df": p.stats.df, "paired": p.stats.paired})
        return d

    o = c.options
    cs = c.control
    doc = {
        "base": c.base_label, "head": c.head_label, "passed": c.exit_code == 0, "exit_code": c.exit_code,
        "inconclusive": len(c.inconclusive), "accept_inconclusive": c.accept_inconclusive,
        "control": None if cs is None else {"backend": cs.backend, "points": cs.points, "ratio": cs.ratio,
                                            "ci_low": cs.ci_low, "ci_high": cs.ci_high, "p_value": cs.p_value,
                                            "noise": cs.noise, "beyond_noise": cs.beyond_noise,
                                            "action": cs.action},
        "options": {"threshold": o.threshold, "alpha": o.alpha, "min_samples": o.min_samples, "drift": o.drift,
                    "method": o.method, "noise_factor": o.noise_factor, "host_floor": o.host_floor,
                    "control": o.control, "host_shift": o.host_shift,
                    "fail_on": sorted(f.value for f in c.fail_on)},
        "shift": None if c.shift is None else {"ratio": c.shift.ratio, "ci_low": c.shift.ci_low,
                                               "ci_high": c.shift.ci_high, "n": c.shift.n,
                                               "fails": c.shift_fails},
        "counts": c.counts, "geomean_ratio": c.geomean_ratio,
        "env_diff": [{"field": f.name, "base": list(f.base), "head": list(f.head), "blocking": f.blocking}
                     for f in c.env],
        "notes": list(c.notes),
        "pairs": [pair(p) for p in c.worst(None)],
    }
    return json.dumps(doc, indent=2)
