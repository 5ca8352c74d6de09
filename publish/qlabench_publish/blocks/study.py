"""The study's docs blocks: its headline, as the top of `qlabench report`'s page has it (the summary line and the
table per backend of our values against FlashQLA's published ones), and one library's auto-CP regret table, on
the current evidence (the machinery that finds and renders blocks is qlabench_publish/blocks/).

    <!-- qlabench:block study-summary -->
    <!-- qlabench:block auto-cp-regret library=flashinfer -->   (a library of core's AUTO_CHOICES)
"""

from __future__ import annotations

from qlabench_publish.blocks.context import BlockContext
from qlabench.analyze.evidence.current import history_notes
from qlabench.analyze.kit.tables import md_table
from qlabench.analyze.study.page import backend_summary
from qlabench.analyze.study.study import Study, build_study


def current_study(ctx: BlockContext) -> Study:
    """The study page's Study on the current evidence, as `qlabench report` builds it (one per context:
    `ctx.derived(current_study)`)."""
    root = ctx.catalog.root.parent
    sources = [str(p.relative_to(root)) if p.is_relative_to(root) else str(p) for p in ctx.evidence.paths]
    return build_study(ctx.rows, sources=sources, history=history_notes(ctx.catalog))


def study_summary_block(ctx: BlockContext) -> str:
    s = ctx.derived(current_study)
    return "\n".join([f"On {', '.join(f'`{x}`' for x in s.sources)} (`qlabench report`, the current evidence):", "",
                      md_table(backend_summary(s), {"median ratio (ok)": ".2f"}).rstrip(), "",
                      f"{s.summary.n_rows_within} of {s.summary.n_rows} published rows within {s.tolerance:.0%} in "
                      "every column; a value outside it names a cause only where a recorded comparison supports "
                      f"one ({s.summary.n_verified} values), else it is `unverified` ({s.summary.n_unverified})."])


def auto_cp_regret_block(ctx: BlockContext, library: str, above: str | None = None) -> str:
    """One library's auto-CP regret table, as the study page's "Auto-CP regret" section has it; `above`: list
    only the points whose regret exceeds it (the sentence still counts every point).

    <!-- qlabench:block auto-cp-regret library=flashinfer above=1.02 -->
    """
    from qlabench.analyze.study.page import regret_markdown
    from qlabench.analyze.study.regret import library_regret, regret_sentence
    from qlabench.core.errors import ConfigError
    from qlabench.core.backend_decl import AUTO_CHOICES

    known = [c.library for c in AUTO_CHOICES]
    if library not in known:
        raise ConfigError(f"auto-cp-regret: library must be one of {', '.join(known)}, got {library!r}")
    r = library_regret(ctx.derived(current_study).regret, library)
    if r.empty:
        raise ConfigError(f"auto-cp-regret: no point of the current evidence has {library}'s auto backend and a "
                          "pinned one both ok")
    runs = sorted({run for ids in r["run_id"] for run in str(ids).split(" + ")})
    shown, which = r, "every point"
    if above is not None:
        try:
            floor = float(above)
        except ValueError:
            raise ConfigError(f"auto-cp-regret: above must be a number, got {above!r}") from None
        shown, which = r[r["regret"] > floor], f"the points whose regret is above {floor:g}"
    return "\n".join([f"From runs {', '.join(ctx.run_label(x) for x in runs)} (`qlabench report`, the current "
                      "evidence): regret = auto / the fastest pinned setting on the same point; `run_id` names each "
                      "row's run (two joined by `+`: a ratio across runs, `mixes` says which time is whose).", "",
                      regret_sentence(r), "", f"Listed: {which}.", "", regret_markdown(shown).rstrip()])
