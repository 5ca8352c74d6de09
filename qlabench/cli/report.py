"""CLI for the FlashQLA study: `qlabench report RESULTS... [--published FILE] [--out DIR]`."""

from __future__ import annotations

from pathlib import Path

import typer

from qlabench.cli.app import console


def report_cmd(
    results: list[Path] = typer.Argument(..., help="Result files or folders (e.g. results/h200-study)"),
    published: Path = typer.Option(None, "--published", help="Published table CSV (default: the packaged "
                                   "FlashQLA H200 table)"),
    out: Path = typer.Option(Path("report"), "--out", "-o", help="Folder for the page (report.md) and its PNGs"),
    tolerance: float = typer.Option(0.10, "--tolerance", min=0, help="Relative gap that still counts as "
                                    "reproducing a published value"),
    layer: list[Path] = typer.Option(None, "--layer", help="Layer-benchmark results (e.g. results/h200-layer): "
                                     "the advice gets the whole layer's speedup"),
    numerics: list[Path] = typer.Option(None, "--numerics", help="Results checked against float64 at full size "
                                        "(e.g. results/h200-numerics): their errors count as evidence, and the "
                                        "page gets their numerics section"),
):
    """The FlashQLA study in one page: our results against FlashQLA's published H200 table."""
    from qlabench.analyze.study import study_from_paths, write_report
    from qlabench.cli.options import writable_folder

    writable_folder(out)
    study = study_from_paths(results, published, tolerance, numerics=numerics)
    layer_rows = None
    if layer:
        from qlabench.store.files import read_results

        layer_rows = read_results(layer)
    files = write_report(study, out, layer_rows)
    console.print(study.summary.line, highlight=False, soft_wrap=True)
    console.print(f"wrote {files.page} and {len(files.figures)} figures", highlight=False)
