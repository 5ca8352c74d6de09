"""What every figure of every view shares: where its PNG goes and how its title, legend and panels are laid out;
and how a report page is written beside its figures."""

from __future__ import annotations

import hashlib
import math
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from qlabench.analyze.kit.labels import file_safe
from qlabench.core.names import MAX_NAME_LEN
from qlabench.core.text import visible
from qlabench.store.files import under_root


def png_path(out_dir: Path, *parts: object) -> Path:
    """`out_dir/<parts joined by _>.png`, every part made file-safe: a mode or dtype read from a row can
    hold `../` or `/`, and no row may place a file outside `out_dir` (store.files.under_root checks the
    safe-name rule and where the path resolves). A name over the limit keeps its start and a hash."""
    stem = "_".join(file_safe(p) for p in parts)
    if len(stem) + 4 > MAX_NAME_LEN:
        digest = hashlib.sha1(stem.encode()).hexdigest()[:10]
        stem = f"{stem[:MAX_NAME_LEN - 4 - 11]}-{digest}"
    return under_root(out_dir, stem + ".png")


def finish_figure(fig, axes, title: str, ylabel: str | None = None, extra: dict | None = None) -> None:
    """Title on top, one legend at the bottom (every distinct label of the panels, then `extra`'s handles),
    an optional shared y label, and the panels laid out between."""
    seen = {}
    for ax in axes:
        for h, label in zip(*ax.get_legend_handles_labels()):
            seen.setdefault(label, h)
    seen.update(extra or {})
    bottom_in = 0.0
    if seen:
        # As many columns as the figure's width holds (about 2.2 in a label at 7 pt): wider is clipped;
        # the figure grows by the legend's rows, so the panels keep their size.
        ncol = max(1, min(4, len(seen), int(fig.get_figwidth() / 2.2)))
        fig.legend(list(seen.values()), list(seen), loc="lower center", fontsize=7, ncol=ncol,
                   bbox_to_anchor=(0.5, 0.0), frameon=False)
        bottom_in = 0.25 + 0.2 * math.ceil(len(seen) / ncol)
    title_in = 0.3 + 0.18 * title.count("\n")
    fig.set_figheight(fig.get_figheight() + bottom_in)
    height = fig.get_figheight()
    bottom = bottom_in / height
    left = 0.0
    if ylabel:
        fig.supylabel(ylabel, fontsize=9)
        left = 0.3 / fig.get_figwidth()  # tight_layout leaves no room for the figure's y label: keep it clear
    fig.suptitle(title, fontsize=10)
    fig.tight_layout(rect=(left, bottom, 1, 1 - title_in / height))


def save_figures(figures, out_dir: Path, stale: str) -> dict[str, str]:
    """Save each (stem, figure) as a PNG in `out_dir` ({stem: file name}), and delete the PNGs matching the glob
    `stale` that this call did not write: a figure an earlier page drew there (a state dtype or budget no
    longer in the rows) would otherwise sit beside the page as if it were its evidence."""
    written = {}
    for stem, fig in figures:
        path = png_path(out_dir, stem)
        fig.savefig(path, dpi=110)
        written[stem] = path.name
    for old in out_dir.glob(stale):
        if old.name not in written.values():
            old.unlink()
    return written


@dataclass(frozen=True)
class PageFiles:
    """What a page writer wrote: the markdown page and its figures."""
    page: Path
    figures: tuple[Path, ...]


def write_page(out_dir: str | os.PathLike, page_name: str, figures, stale: str,
               render: Callable[[dict[str, str]], str]) -> PageFiles:
    """Save `figures` as PNGs in out_dir (deleting stale ones, as save_figures), then the page `render` makes from
    {stem: file name}: the one way every report page (serving, SM budget, large batch) is written."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    written = save_figures(figures, out_dir, stale)
    page = out_dir / page_name
    page.write_text(visible(render(written)))  # no control character reaches a page (core/text.py)
    return PageFiles(page=page, figures=tuple(out_dir / n for n in written.values()))


def panel_grid(n: int, max_cols: int, col_width: float):
    """A figure of `n` panels, at most `max_cols` a row (`col_width` inches each), and its axes in reading
    order; axes beyond the `n`th are hidden."""
    from matplotlib.figure import Figure

    ncols = min(max_cols, n)
    nrows = math.ceil(n / ncols)
    fig = Figure(figsize=(max(7.0, col_width * ncols), 3.4 * nrows + 0.9))
    axes = list(fig.subplots(nrows, ncols, squeeze=False).flat)
    for ax in axes[n:]:
        ax.set_visible(False)
    return fig, axes[:n]
