"""`qlabench site`: a static HTML site of the evidence (analyze/site/)."""

from __future__ import annotations

from pathlib import Path

import typer

from qlabench.cli.app import console


def site_cmd(
    results: Path = typer.Argument(Path("results"), help="The results folder (its README.md is the catalog)"),
    out: Path = typer.Option(Path("site"), "--out", "-o", help="Folder the site is written into"),
):
    """Write a static HTML site: the current ranking per model, TP degree and workload, each point's time
    across library versions and commits, and a page per results folder. Open OUT/index.html."""
    from qlabench.analyze.serving.section import serving_section
    from qlabench.analyze.site import build_site
    from qlabench.cli.options import writable_folder
    from qlabench.core.errors import ConfigError

    writable_folder(out)
    if out.exists() and not out.is_dir():
        raise ConfigError(f"--out {out}: is a file; give a folder for the site")
    site = build_site(results, out, serving=serving_section)
    console.print(f"wrote {len(site.pages)} pages and {len(site.figures)} figures; open {site.index}")
