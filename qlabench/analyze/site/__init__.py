"""`qlabench site`: a static HTML site of the evidence (no server; it reads from file://).

    source.py    what the site reads: every row of a results tree, its folder, current and history rows
    folders.py   the results catalog (results/README.md's table): what each folder holds
    rankings.py  the current ranking per model, TP degree and workload (advise's answer per case)
    history.py   each point's time across library versions and commits
    figures.py   the figures (matplotlib PNGs)
    html.py      escaping, the page shell, tables
    pages.py     the pages' HTML
    serving.py   the serving page, from the serving report's section the caller hands in (`build_site(serving=)`)
    build.py     all of it into one folder
"""

from qlabench.analyze.site.build import Site, build_site

__all__ = ["Site", "build_site"]
