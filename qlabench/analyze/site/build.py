"""`build_site`: a static HTML site from a results tree, written into one folder.

    index.html                            the rankings and the results folders
    rank-<model>-tp<N>-<workload>.html    the current ranking per case, and its points' history
    folder-<name>.html                    one results folder: what the catalog says of it, its files and runs
    serving.html                          the current serving evidence: winners by batch, the figures
    img/*.png                             the figures
    .qlabench-site                        the files this build wrote, one a line

File names are slugs of what they show (core/names.slug); the pages show every name as it is. The site is
built in a folder beside `out` and moved in when complete: a build that fails leaves the previous site as it
was, and a page of an earlier build that this one does not write (a folder since removed) is deleted, so
nothing unlinked stays published. Only files an earlier build listed are ever deleted. `out` may not lie
inside the results folder: the site would become a folder of the evidence it reads.
"""

from __future__ import annotations

import os
import tempfile
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from qlabench.analyze.answer.question import WORKLOAD_MODES
from qlabench.analyze.site import pages
from qlabench.analyze.site.figures import history_figure, ranking_figure
from qlabench.analyze.site.history import PointHistory, histories
from qlabench.analyze.site.rankings import Ranking, rankings
from qlabench.analyze.site.serving import HREF as SERVING_HREF
from qlabench.analyze.site.serving import SectionOf, serving_page
from qlabench.analyze.site.source import read_site_rows
from qlabench.core.errors import ConfigError, QlabenchError
from qlabench.store.files import under_root
from qlabench.core.text import visible


@dataclass
class Site:
    out: Path
    pages: list[Path]
    figures: list[Path]

    @property
    def index(self) -> Path:
        return self.out / "index.html"


def page_points(r: Ranking, changed: list[PointHistory]) -> list[PointHistory]:
    """The points of a ranking page with a history: its heads, head dims and dtype, one device, the
    workload's modes (a training step's fwd_bwd rows too)."""
    q = r.question
    modes = set(WORKLOAD_MODES[r.workload]) | ({"fwd_bwd"} if r.workload == "train" else set())
    return [h for h in changed if h.heads == q.heads and h.dims == (q.head_dim, q.head_dim) and h.dtype == q.dtype
            and h.mode in modes and not h.distributed]


def _write(path: Path, text: str) -> Path:
    path.write_text(visible(text), encoding="utf-8")  # no control character reaches a page (core/text.py)
    return path


MANIFEST = ".qlabench-site"


def check_out(results: Path, out: Path) -> None:
    """ConfigError for an `out` that is (or lies inside) the results folder the site reads."""
    top, dest = results.resolve(), out.resolve()
    if dest == top or dest.is_relative_to(top):
        raise ConfigError(f"--out {out} is inside the results folder {results}: the site would become a folder of "
                          "the evidence it reads; write it elsewhere (e.g. --out site)")


def build_site(results: str | os.PathLike, out: str | os.PathLike, *, serving: SectionOf | None) -> Site:
    """Read every result under `results` and write the site into `out` (created; an earlier build's pages
    replaced, and those this build does not write removed); each case ranks and warns exactly as `qlabench
    advise` does (rankings.py).

    `serving` makes the serving page's section of the current serving rows: the serving view's
    `qlabench.analyze.serving.section.serving_section`, which `qlabench site` passes (the site imports no other
    view), or None for a site without a serving page."""
    results, out = Path(results), Path(out)
    check_out(results, out)
    ev = read_site_rows(results)
    out.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=out.parent, prefix=f".{out.name}.building-") as tmp:
        built = _build(ev, Path(tmp), str(results), serving)
        return _publish(built, out)


def _publish(built: Site, out: Path) -> Site:
    """Move a complete build into `out`, deleting the files of the previous build (its manifest) it left out."""
    new = sorted(p.relative_to(built.out).as_posix() for p in built.out.rglob("*") if p.is_file())
    out.mkdir(parents=True, exist_ok=True)
    old = (out / MANIFEST).read_text(encoding="utf-8").splitlines() if (out / MANIFEST).is_file() else []
    for rel in new:
        dest = under_root(out, *rel.split("/"))
        dest.parent.mkdir(parents=True, exist_ok=True)
        os.replace(built.out / rel, dest)
    for rel in sorted(set(old) - set(new)):
        try:
            stale = under_root(out, *rel.split("/"))
        except QlabenchError:  # a manifest line that names no file of the site (edited): never followed
            continue
        stale.unlink(missing_ok=True)
    (out / MANIFEST).write_text("".join(f"{rel}\n" for rel in new), encoding="utf-8")
    return Site(out, [out / p.relative_to(built.out) for p in built.pages],
                [out / p.relative_to(built.out) for p in built.figures])


def _build(ev, out: Path, results: str, section_of: SectionOf | None) -> Site:
    img = out / "img"
    img.mkdir(parents=True, exist_ok=True)
    if section_of is None:
        written, figs, ranked = _ranking_pages(ev, out, img)
        serving = None
    else:
        # The serving page (its analysis and figures, a third of the build) in a second process while this one
        # ranks: on two cores the site takes the time of the longer half, not the sum.
        with ProcessPoolExecutor(max_workers=1) as pool:
            serving_job = pool.submit(serving_page, section_of, ev.serving(), img, pages.HOME)
            written, figs, ranked = _ranking_pages(ev, out, img)
            serving = serving_job.result()
    for f in ev.folders:
        reads = ranked if f.name in ev.current_folders else []
        written.append(_write(under_root(out, pages.folder_href(f.name)), pages.folder_page(f, ev.rows, reads)))
    if serving:
        written.append(_write(out / SERVING_HREF, serving[0]))
        figs += serving[1]
    written.append(_write(out / "index.html", pages.index_page(ranked, ev.folders, ev.rows, results,
                                                                ev.current_folders, bool(serving))))
    return Site(out, written, figs)


def _ranking_pages(ev, out: Path, img: Path) -> tuple[list[Path], list[Path], list[Ranking]]:
    """A page per ranking, with its figure and its points' history."""
    ranked = rankings(ev.current())
    changed = [h for h in histories(ev.history()) if h.changed]
    written, figs = [], []
    for r in ranked:
        png = ranking_figure(r, under_root(img, f"rank-{r.slug}.png"))
        mine = page_points(r, changed)
        hist_png = None
        if mine:
            hist_png = history_figure(mine, f"{r.title}: each point's time across library versions and commits",
                                      under_root(img, f"history-{r.slug}.png"))
            figs.append(hist_png)
        figs.append(png)
        html = pages.ranking_page(r, f"img/{png.name}", mine, f"img/{hist_png.name}" if hist_png else None)
        written.append(_write(under_root(out, pages.ranking_href(r)), html))
    return written, figs, ranked
