"""advise's "published by FlashQLA, not measured" section (analyze/advise/published.py): FlashQLA's figures for
the GPU a question is about where qlabench has no row, printed apart from the measured answer and never in
its tables, each line saying whose numbers they are."""

from __future__ import annotations

from rich.markup import escape

from qlabench.analyze.advise.published import MODE_MEANS, PublishedAnswer
from qlabench.cli.app import console

MARK = "published by FlashQLA, not measured"


def published_lines(pub: PublishedAnswer, where: str) -> list[str]:
    """The section as plain lines; `where`: what the answer read ('the current evidence', 'these results')."""
    cases = ", ".join(c.case.label for c in pub.cases)
    out = [f"{pub.gpu} (--gpu): qlabench measured nothing on this GPU model (no row of it in {where})"
           if pub.measured_nothing else f"{pub.gpu} (--gpu): qlabench has no row of {cases or 'these cases'} on this "
           f"GPU model in {where}"]
    t = pub.table
    if t is None:
        return out + [f"FlashQLA publishes no table for {pub.gpu} either (it publishes: {', '.join(pub.tables)})"]
    out += [f"{MARK}: FlashQLA's table for {t.gpu}, measured with {t.stack_text} (mean of CUDA-graph replays, "
            f"packed varlen, 25% zero-gate heads; source {t.source}); never ranked with qlabench's rows",
            "  its flashinfer column called FlashInfer with FlashQLA's conventions (log-space g, untransposed "
            "state): the kernel's time on other inputs than an engine passes (qlabench/analyze/data/README.md)"]
    for c in pub.cases:
        for r in c.rows:
            times = ", ".join(f"{name} {ms:.3f} ms" for name, ms in r.times_ms.items()) or "no time published"
            near = f" (the nearest published row: {' and '.join(r.nearest)} not in the table)" if r.nearest else ""
            out.append(f"  {c.case.label} [{MARK}]: {MODE_MEANS.get(r.mode, r.mode)} at h {r.heads[0]}/{r.heads[1]} "
                       f"({r.model_config}), {r.sequences}{near}: {times}")
    return out


def print_published(pub: PublishedAnswer, where: str) -> None:
    console.print()
    for line in published_lines(pub, where):
        console.print(escape(line), soft_wrap=True, highlight=False)
