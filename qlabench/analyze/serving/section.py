"""The serving report as a section of another page: its summary line, sources, the winners as batch ranges and
the time figures (the share of the HBM limit is in the ranges). The site's serving page is drawn from one; the
site imports no view, so `qlabench site` hands it `serving_section` (analyze/site/serving.py)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import pandas as pd
from matplotlib.figure import Figure

from qlabench.analyze.serving.figures import serving_figures
from qlabench.analyze.serving.serving import build_serving


@dataclass(frozen=True)
class ServingSection:
    summary: str  # Serving.summary_line()
    sources: tuple[str, ...]
    ranges: pd.DataFrame  # Serving.ranges: per mode and group, the fastest correct variant by batch
    time_figures: list[tuple[str, Figure]]  # (stem, figure) of time against batch, as the report draws them


def serving_section(rows: pd.DataFrame, sources: Iterable[str]) -> ServingSection:
    """The section of serving rows (decode and mtp steps; QlabenchError when there is none), as `qlabench report
    --serving` reads them."""
    s = build_serving(rows, sources=sources)
    return ServingSection(s.summary_line(), s.sources, s.ranges, serving_figures(s, kinds=("time",)))
