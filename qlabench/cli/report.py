"""CLI for the reports: `qlabench report RESULTS... [--published FILE] [--numerics DIR] [--out DIR]`: the
FlashQLA study page, or the numerics page of results checked against float64 at full size."""

from __future__ import annotations

from pathlib import Path

import typer

from qlabench.cli.app import console


def report_cmd(
    results: list[Path] = typer.Argument(None, help="Result files or folders (e.g. results/h200-study); a "
                                         "numerics folder (every row checked against fp64-full, e.g. "
                                         "results/h200-numerics) gets the numerics page"),
    published: Path = typer.Option(None, "--published", help="Published table CSV (default: the packaged "
                                   "FlashQLA H200 table)"),
    out: Path = typer.Option(Path("report"), "--out", "-o", help="Folder for the page (report.md or "
                             "numerics.md) and its PNGs"),
    tolerance: float = typer.Option(0.10, "--tolerance", min=0, help="Relative gap that still counts as "
                                    "reproducing a published value"),
    layer: list[Path] = typer.Option(None, "--layer", help="Layer-benchmark results (e.g. results/h200-layer): "
                                     "the advice gets the whole layer's speedup"),
    numerics: list[Path] = typer.Option(None, "--numerics", help="Results checked against float64 at full size "
                                        "(e.g. results/h200-numerics): their errors count as evidence for the "
                                        "study's speedups, and numerics.md is written beside the page"),
):
    """The FlashQLA study in one page: our results against FlashQLA's published H200 table; or, for a
    numerics folder (or --numerics alone), error against T and gate regime, worst cases and every point
    outside tolerance."""
    from qlabench.analyze.numerics_page import is_numerics, write_numerics
    from qlabench.cli.options import writable_folder
    from qlabench.core.errors import ConfigError
    from qlabench.store.files import read_results

    if not results and not numerics:
        raise ConfigError("give result folders to report on, or --numerics DIR")
    writable_folder(out)
    if not results or is_numerics(read_results(results)):
        sources = list(results or numerics)
        files = write_numerics(read_results(sources), out, [str(s) for s in sources])
        console.print(f"wrote {files.page} and {len(files.figures)} figures", highlight=False)
        return
    from qlabench.analyze.study import study_from_paths, write_report

    study = study_from_paths(results, published, tolerance, numerics=numerics)
    layer_rows = read_results(layer) if layer else None
    files = write_report(study, out, layer_rows)
    console.print(study.summary.line, highlight=False, soft_wrap=True)
    console.print(f"wrote {files.page} and {len(files.figures)} figures", highlight=False)
    if numerics:
        nfiles = write_numerics(study.numerics, out, [str(s) for s in numerics])
        console.print(f"wrote {nfiles.page} and {len(nfiles.figures)} figures", highlight=False)
