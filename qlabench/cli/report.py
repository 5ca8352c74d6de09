"""CLI for the report pages: `qlabench report RESULTS... [--published FILE] [--out DIR]` (the FlashQLA study)
and `qlabench report --serving RESULTS... [--out DIR]` (decode and multi-token verify)."""

from __future__ import annotations

import shlex
from pathlib import Path

import typer

from qlabench.cli.app import console


def report_cmd(
    results: list[Path] = typer.Argument(..., help="Result files or folders (e.g. results/h200-study)"),
    published: Path = typer.Option(None, "--published", help="Published table CSV (default: the packaged "
                                   "FlashQLA H200 table)"),
    out: Path = typer.Option(Path("report"), "--out", "-o", help="Folder for the page (report.md, or serving.md "
                             "with --serving) and its PNGs"),
    tolerance: float = typer.Option(0.10, "--tolerance", min=0, help="Relative gap that still counts as "
                                    "reproducing a published value"),
    layer: list[Path] = typer.Option(None, "--layer", help="Layer-benchmark results (e.g. results/h200-layer): "
                                     "the advice gets the whole layer's speedup"),
    serving: bool = typer.Option(False, "--serving", help="The serving page instead (modes decode and mtp): "
                                 "time, TB/s and share of the HBM limit per backend against batch, the winners "
                                 "and where they change"),
):
    """The FlashQLA study in one page (our results against FlashQLA's published H200 table), or with
    --serving the decode / multi-token-verify page."""
    from qlabench.cli.options import writable_folder

    if serving and (published or layer):
        from qlabench.core.errors import ConfigError

        raise ConfigError("--published and --layer belong to the study page, not to --serving")
    writable_folder(out)
    if serving:
        return _serving(results, out)
    from qlabench.analyze.study import study_from_paths, write_report

    study = study_from_paths(results, published, tolerance)
    layer_rows = None
    if layer:
        from qlabench.store.files import read_results

        layer_rows = read_results(layer)
    files = write_report(study, out, layer_rows)
    console.print(study.summary.line, highlight=False, soft_wrap=True)
    console.print(f"wrote {files.page} and {len(files.figures)} figures", highlight=False)


def _serving(results: list[Path], out: Path) -> None:
    from qlabench.analyze.serving import serving_from_paths, write_serving
    from qlabench.cli.views import serving_rich_table

    s = serving_from_paths(results)
    command = shlex.join(["qlabench", "report", "--serving", *map(str, results), "--out", str(out)])
    files = write_serving(s, out, command)
    console.print(serving_rich_table(s.ranges))
    console.print(s.summary_line(), highlight=False, soft_wrap=True)
    console.print(f"wrote {files.page} and {len(files.figures)} figures", highlight=False)
