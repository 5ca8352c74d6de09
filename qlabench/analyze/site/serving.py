"""The site's serving page: the current serving evidence as the serving report reads it (analyze/serving/):
per model, TP degree, mode, tokens per step and state dtype, the fastest correct variant by batch, its share
of the HBM limit, and the report's time figures (a line per variant: backend and state layout).
"""

from __future__ import annotations

from pathlib import Path

import matplotlib.pyplot as plt
import pandas as pd

from qlabench.analyze.serving import build_serving
from qlabench.analyze.serving.figures import serving_figures
from qlabench.analyze.site.html import esc, figure, page, table
from qlabench.store.files import under_root

HREF = "serving.html"
_COLUMNS = ("group", "winners", "largest_batch", "ms_at_largest", "pct_hbm_at_largest")
_HEAD = ["model · TP · tokens per step · state", "fastest correct variant, by batch", "largest batch",
         "ms there", "% of the HBM limit there"]


def serving_page(rows: pd.DataFrame, img: Path, home: tuple[str, str]) -> tuple[str, list[Path]] | None:
    """The page's HTML and its figures (written into `img`); None when there is no current serving row."""
    if rows.empty:
        return None
    s = build_serving(rows, sources=sorted(set(rows["folder"])))
    figs = []
    for stem, fig in serving_figures(s):
        if not stem.startswith("serving_time_"):  # the share of the HBM limit is in the table: time only
            plt.close(fig)
            continue
        path = under_root(img, f"{stem}.png")
        fig.savefig(path, dpi=90)
        plt.close(fig)
        figs.append(path)
    body = [f"<p>{esc(s.summary_line())}. From {esc(', '.join(s.sources))}; the same answer as "
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
