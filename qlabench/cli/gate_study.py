"""`qlabench compare-study`: the gate's A/A false-alarm rate and injected-slowdown detection (docs/GATING.md)."""

from __future__ import annotations

from pathlib import Path

import typer

from qlabench.cli import options as shared
from qlabench.cli.app import console, err_console
from qlabench.cli.compare import _alpha, _method, _min_samples, _noise_factor, _options, _threshold


def compare_study_cmd(
    suite: str = typer.Option("gate-study-cpu", "--suite", "-s", help="Suite of synthetic-backend points"),
    out: Path = shared.out("results/gate-study", "Where the study's runs go", short=False),
    slowdowns: str = typer.Option("1.03,1.05,1.10", "--slowdowns", help="Injected factors, comma-separated"),
    confirm: int = typer.Option(1, "--confirm", help="Confirmation A/Bs, as in `qlabench gate`"),
    replicates: int = shared.replicates(3, "Replicates of the baseline and of every arm"),
    device: str = shared.DEVICE,
    threshold: float = _threshold, alpha: float = _alpha, min_samples: int = _min_samples, method: str = _method,
    noise_factor: float = _noise_factor,
):
    """A/A false-alarm rate and injected-slowdown detection rate of the gate (docs/GATING.md)."""
    from qlabench.cli.progress import RichProgress
    from qlabench.core.spec import load_suite
    from qlabench.run.options import RunOptions
    from qlabench.workflows.gate_study import markdown, parse_slowdowns, run_study

    shared.writable_folder(out)
    factors = parse_slowdowns(slowdowns)
    opt, _ = _options(threshold, alpha, min_samples, method=method, noise_factor=noise_factor)
    # progress on stderr: stdout carries the study's markdown, which may be redirected to a file
    with RichProgress(err_console) as prog:
        result = run_study(load_suite(suite), out, factors, opt, confirm=confirm, progress=prog,
                           replicates=replicates, run=RunOptions(device=device))
    console.file.write(markdown(result))
