"""CLI for the report pages: `qlabench report RESULTS... [--published GPU|FILE] [--numerics DIR] [--out DIR]`
(the FlashQLA study page against the published table of a GPU, or the numerics page of results checked
against float64 at full size) and `qlabench report --serving RESULTS... [--out DIR]` (decode and multi-token
verify), `qlabench report --sm-budget RESULTS...` (the kernels on shares of one GPU's SMs) and `qlabench report
--large-batch RESULTS...` (packed batches of many sequences: does FlashQLA's split cost it against a fully
fused kernel?)."""

from __future__ import annotations

import shlex
from pathlib import Path

import typer

from qlabench.cli.app import console


def report_cmd(
    results: list[Path] = typer.Argument(None, help="Result files or folders (default: the current evidence "
                                         "results/catalog.toml names); a numerics folder (every row checked against "
                                         "fp64-full, e.g. results/h200-numerics) gets the numerics page"),
    published: str = typer.Option(None, "--published", help="FlashQLA's published table to compare with: a GPU "
                                  "(H200, GB200, RTX 5090, RTX PRO 6000; shipped with qlabench) or a CSV file "
                                  "(default: H200). Rows of another GPU make a cross-GPU table, and it says so"),
    out: Path = typer.Option(Path("report"), "--out", "-o", help="Folder for the page (report.md, numerics.md, "
                             "serving.md with --serving, sm-budget.md with --sm-budget, large-batch.md with "
                             "--large-batch) and its PNGs"),
    tolerance: float = typer.Option(0.10, "--tolerance", min=0, help="Relative gap that still counts as "
                                    "reproducing a published value"),
    layer: list[Path] = typer.Option(None, "--layer", help="Layer-benchmark results (e.g. results/h200-layer): "
                                     "the advice gets the whole layer's speedup"),
    numerics: list[Path] = typer.Option(None, "--numerics", help="Results checked against float64 at full size "
                                        "(e.g. results/h200-numerics): their errors count as evidence for the "
                                        "study's speedups, and numerics.md is written beside the page"),
    serving: bool = typer.Option(False, "--serving", help="The serving page instead (modes decode and mtp): "
                                 "time, TB/s and share of the HBM limit per backend against batch, the winners "
                                 "and where they change"),
    sm_budget: bool = typer.Option(False, "--sm-budget", help="The SM-budget page instead (rows held to a share "
                                   "of the GPU's SMs): the winner per budget, each library's auto-CP regret, time "
                                   "against SMs, extra device memory per call"),
    gpu: str = typer.Option(None, "--gpu", help="The study page on this GPU model's rows only (H200, \"H100\"), as "
                            "`advise --gpu` (default: every GPU of the results)"),
    large_batch: bool = typer.Option(False, "--large-batch", help="The large-batch page instead (packed batches "
                                     "of many sequences, e.g. results/h200-large-batch/large-batch): every "
                                     "backend's time, FlashQLA's kernels beside its total and FlashInfer's fused "
                                     "kernel, the answer at equal tokens"),
):
    """The FlashQLA study in one page (our results, by default the current evidence, against FlashQLA's
    published table of a GPU, by default the H200's; numerics.md beside it with --numerics); for a numerics folder given as results,
    error against T and gate regime, worst cases and every point outside tolerance; with --serving the
    decode / multi-token-verify page; with --sm-budget the page of kernels held to shares of the GPU; with
    --large-batch the page of packed batches of many sequences."""
    from qlabench.analyze.numerics.page import is_numerics, write_numerics
    from qlabench.analyze.study.study import check_tolerance
    from qlabench.cli.options import writable_folder
    from qlabench.core.errors import ConfigError
    from qlabench.analyze.evidence import read_evidence

    def read_results(paths):  # every run: the numerics and layer pages pick their rows themselves
        return read_evidence(paths, all_runs=True).rows

    if (serving or sm_budget or large_batch) and gpu:
        raise ConfigError("--gpu belongs to the study page, not to --serving, --sm-budget or --large-batch")
    if serving and (published or layer or numerics):
        raise ConfigError("--published, --layer and --numerics belong to the study page, not to --serving")
    if serving and not results:
        raise ConfigError("give the serving result folders to report on (e.g. results/h200-serving)")
    if sm_budget and (serving or published or layer or numerics):
        raise ConfigError("--sm-budget is a page of its own: no --serving, --published, --layer or --numerics")
    if sm_budget and not results:
        raise ConfigError("give the SM-budget result folders to report on (e.g. results/sm-budget)")
    if large_batch and (serving or sm_budget or published or layer or numerics):
        raise ConfigError("--large-batch is a page of its own: no --serving, --sm-budget, --published, --layer or "
                          "--numerics")
    if large_batch and not results:
        raise ConfigError("give the large-batch result folders to report on (e.g. "
                          "results/h200-large-batch/large-batch)")
    check_tolerance(tolerance)  # before anything is read
    writable_folder(out)
    if serving:
        return _serving(results, out)
    if sm_budget:
        return _sm_budget(results, out)
    if large_batch:
        return _large_batch(results, out)
    if results and is_numerics(read_results(results)):
        sources = list(results)
        files = write_numerics(read_results(sources), out, [str(s) for s in sources])
        console.print(f"wrote {files.page} and {len(files.figures)} figures", highlight=False)
        return
    from qlabench.analyze.study import study_from_paths, write_report

    args = [*map(str, results or ()), *(("--published", published) if published else ()),
            *(("--gpu", gpu) if gpu else ()),
            *(a for p in layer or () for a in ("--layer", str(p))),
            *(a for p in numerics or () for a in ("--numerics", str(p))), "--out", str(out)]
    study = study_from_paths(results or (), published, tolerance, numerics=numerics,
                             command=shlex.join(["qlabench", "report", *args]), gpu=gpu)
    layer_rows = read_results(layer) if layer else None
    files = write_report(study, out, layer_rows)
    console.print(study.summary.line, highlight=False, soft_wrap=True)
    console.print(f"wrote {files.page} and {len(files.figures)} figures", highlight=False)
    if numerics:
        nfiles = write_numerics(study.numerics, out, [str(s) for s in numerics])
        console.print(f"wrote {nfiles.page} and {len(nfiles.figures)} figures", highlight=False)


def _page(flag: str, results: list[Path], out: Path, build, write, table=None) -> None:
    """A report page of its own (`report --sm-budget`, `--large-batch`, `--serving`): build it from the results,
    write it with the command that made it, print its terminal table (if any), its summary line and what was
    written."""
    study = build(results)
    command = shlex.join(["qlabench", "report", flag, *map(str, results), "--out", str(out)])
    files = write(study, out, command)
    if table is not None:
        console.print(table(study))
    console.print(study.summary_line(), highlight=False, soft_wrap=True)
    console.print(f"wrote {files.page} and {len(files.figures)} figures", highlight=False)


def _sm_budget(results: list[Path], out: Path) -> None:
    from qlabench.analyze.sm_budget import budget_from_paths, write_budget_page

    _page("--sm-budget", results, out, budget_from_paths, write_budget_page)


def _large_batch(results: list[Path], out: Path) -> None:
    from qlabench.analyze.large_batch import large_batch_from_paths, write_large_batch_page

    _page("--large-batch", results, out, large_batch_from_paths, write_large_batch_page)


def _serving(results: list[Path], out: Path) -> None:
    from qlabench.analyze.serving import serving_from_paths, write_serving
    from qlabench.cli.views import serving_rich_table

    _page("--serving", results, out, serving_from_paths, write_serving, lambda s: serving_rich_table(s.ranges))
