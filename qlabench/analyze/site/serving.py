"""The site's serving page: the current serving evidence as the serving report reads it: per model, TP degree,
mode, tokens per step and state dtype, the fastest correct variant by batch, its share of the HBM limit, and the
report's time figures (a line per variant: backend and state layout).

The site imports no other view: what the serving report makes of the rows comes from `section_of`, which the
caller hands in (`qlabench site`: analyze/serving/section.py's `serving_section`). build.py calls this page in a
worker process, so `section_of` is a module-level function (it is pickled there).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Protocol

import pandas as pd
from matplotlib.figure import Figure

from qlabench.analyze.site.html import esc, figure, page, table
from qlabench.analyze.kit.figures import png_path

HREF = "serving.html"
_HEAD = ["model · TP · tokens per step · state", "fastest correct variant, by batch", "largest batch",
         "ms there", "% of the HBM limit there"]


class ServingSection(Protocol):
    """What the page shows of the serving report (analyze/serving/section.py's ServingSection is one)."""
    summary: str
    sources: tuple[str, ...]
    ranges: pd.DataFrame  # mode, group, winners, largest_batch, ms_at_largest, pct_hbm_at_largest
    time_figures: list[tuple[str, Figure]]


# (the current serving rows, their folders) -> the section
SectionOf = Callable[[pd.DataFrame, Iterable[str]], ServingSection]


def serving_page(section_of: SectionOf, rows: pd.DataFrame, img: Path,
                 home: tuple[str, str]) -> tuple[str, list[Path]] | None:
    """The page's HTML and its figures (written into `img`); None when there is no current serving row."""
    if rows.empty:
        return None
    s = section_of(rows, sorted(set(rows["folder"])))
    figs = []
    for stem, fig in s.time_figures:
        path = png_path(img, stem)  # file-safe: a stem holds the context as the rows spell it ('NVIDIA H100 ...')
        fig.savefig(path, dpi=90)
        figs.append(path)
    body = [f"<p>{esc(s.summary)}. From {esc(', '.join(s.sources))}; the same answer as "
            "<code>qlabench report --serving</code> on those rows.</p>"]
    for mode, grp in s.ranges.groupby("mode", sort=True):
        recs = []
        for r in grp.itertuples(index=False):
            ms = "-" if pd.isna(r.ms_at_largest) else f"{r.ms_at_largest:.4f}"
            pct = "-" if pd.isna(r.pct_hbm_at_largest) else f"{r.pct_hbm_at_largest:.1f}"
            recs.append(([esc(r.group), esc(r.winners).replace("; ", "<br>"), esc(r.largest_batch), ms, pct], ""))
        body.append(f"<h2>{esc(mode)}</h2>" + table(_HEAD, recs, numeric=[2, 3, 4]))
    body.append("<h2>Figures</h2>" + "".join(figure(f"img/{p.name}", p.stem) for p in figs))
    return page("Serving: decode and multi-token verify steps", "\n".join(body), nav=[home]), figs
