"""CLI for regression gating: `qlabench compare`, `qlabench gate` (baselines: baseline.py; the gate's own study:
gate_study.py)."""

from __future__ import annotations

from pathlib import Path

import typer

from qlabench.cli import options as shared
from qlabench.cli.app import console, err_console

FORMATS = ("table", "markdown", "comment", "json")

from qlabench.cli.compare_options import (  # noqa: F401  (the options of both commands)
    _threshold,
    _alpha,
    _min_samples,
    _fail_on,
    _accept,
    _control,
    _host_shift,
    _allow_env,
    _format,
    _top,
    _output,
    _all,
    _drift,
    _method,
    _noise_factor,
    _host_floor,
    _history)


def _options(threshold: float | None, alpha: float, min_samples: int, drift: bool = False, method: str = "runs",
             noise_factor: float = 3.0, host_floor: float = 0.10, control: str | None = None,
             host_shift: str = "normalise"):
    from qlabench.analyze.compare import CompareOptions, parse_fail_on

    threshold = CompareOptions.threshold if threshold is None else threshold
    return CompareOptions(threshold=threshold, alpha=alpha, min_samples=min_samples, drift=drift, method=method,
                          noise_factor=noise_factor, host_floor=host_floor, control=control,
                          host_shift=host_shift), parse_fail_on


def _emit(comparison, fmt: str, top: int, output: Path | None, show_all: bool, command: str) -> None:
    from qlabench.analyze.compare import render
    from qlabench.cli.records import fitted
    from qlabench.core.errors import ConfigError
    from qlabench.core.text import visible

    if fmt not in FORMATS:
        raise ConfigError(f"--format must be one of {', '.join(FORMATS)}, got {fmt!r}")
    if top < 1:
        raise ConfigError(f"--top must be at least 1, got {top}")
    if fmt == "table":
        for line in render.env_lines(comparison):
            console.print(f"[yellow]env differs:[/yellow] {line}", highlight=False)
        for note in comparison.notes:
            console.print(f"note: {note}", highlight=False)
        console.print(fitted(console, render.rich_table(comparison, show_same=show_all), keys=2))
        console.print(render.summary_line(comparison), highlight=False)
        text = render.markdown(comparison, top, command) if output else None
    else:
        from qlabench.analyze.compare.comment import comment

        text = (render.markdown(comparison, top, command) if fmt == "markdown" else comment(comparison, command)
                if fmt == "comment" else render.to_json(comparison))
        console.file.write(visible(text))
    if output:
        output.parent.mkdir(parents=True, exist_ok=True)
        output.write_text(visible(text))


def compare_cmd(
    base: Path = typer.Argument(..., help="Baseline result file or folder"),
    head: Path = typer.Argument(..., help="Result file or folder to judge"),
    threshold: float = _threshold, alpha: float = _alpha, min_samples: int = _min_samples, fail_on: str = _fail_on,
    allow_env_mismatch: bool = _allow_env, fmt: str = _format, top: int = _top, output: Path = _output,
    show_all: bool = _all, drift: bool = _drift, method: str = _method, noise_factor: float = _noise_factor,
    host_floor: float = _host_floor, history: list[Path] = _history, backends: str = shared.BACKENDS,
    allow_other_suite: bool = typer.Option(False, "--allow-other-suite", help="Compare rows of two different "
                                           "suites (refused by default: another suite measures another way)"),
    accept_inconclusive: bool = _accept, control: str = _control, host_shift: str = _host_shift,
):
    """Compare HEAD with BASE point by point; exit 1 on a regression, 3 on inconclusive points (docs/GATING.md)."""
    from qlabench.analyze.compare import compare_paths

    if output:
        shared.writable_file(output, inputs=[base, head, *(history or ())])
    opt, parse = _options(threshold, alpha, min_samples, drift, method, noise_factor, host_floor, control, host_shift)
    c = compare_paths([base], [head], opt, history=history or (), fail_on=parse(fail_on),
                      allow_env_mismatch=allow_env_mismatch, allow_other_suite=allow_other_suite,
                      accept_inconclusive=accept_inconclusive, backends=backends)
    _emit(c, fmt, top, output, show_all, "qlabench compare")
    raise typer.Exit(c.exit_code)


def gate_cmd(
    suite: str = shared.suite(),
    baseline: Path = typer.Option(None, "--baseline", "-b",
                                  help="Baseline file or folder (default: results/baselines/<gpu>/<suite>.parquet)"),
    out: Path = shared.out("results", "Results root for the head run", short=False),
    device: str = shared.DEVICE,
    confirm: int = typer.Option(1, "--confirm", help="Re-measure slower points this many times in an interleaved "
                                "A/B of --base-ref and the current code; keep only reproduced"),
    replicates: int = shared.replicates(3, "Replicates of the head run (fresh worker processes each)"),
    base_ref: str = typer.Option(None, "--base-ref", help="The base code for confirmation: a git ref of --repo, or "
                                 "a Python environment (site folder or venv); without it nothing is re-measured"),
    repo: Path = typer.Option(Path("."), "--repo", help="Repository of --base-ref"),
    threshold: float = _threshold, alpha: float = _alpha, min_samples: int = _min_samples, fail_on: str = _fail_on,
    allow_env_mismatch: bool = _allow_env, fmt: str = _format, top: int = _top, output: Path = _output,
    show_all: bool = _all, drift: bool = _drift, method: str = _method, noise_factor: float = _noise_factor,
    host_floor: float = _host_floor, history: list[Path] = _history, accept_inconclusive: bool = _accept,
    control: str = typer.Option(None, "--control", help="A backend of the suite the change leaves alone (default: "
                                "the suite's `baseline` backend): a host shift beyond its noise between the baseline "
                                "and this run is normalised or refused (--host-shift)"),
    host_shift: str = _host_shift,
):
    """Run SUITE and compare it with its baseline in one step; exit 1 on a regression, 3 on inconclusive points."""
    from qlabench.cli.progress import RichProgress
    from qlabench.core.spec import load_suite
    from qlabench.measure.env import capture
    from qlabench.run.options import RunOptions
    from qlabench.run.plan import plan_sweep
    from qlabench.store.baselines import DEFAULT_ROOT, baseline_path
    from qlabench.workflows.gate import run_gate

    s = load_suite(suite)
    if output:
        shared.writable_file(output, inputs=[Path(s.path), baseline, *(history or ())])
    opt, parse = _options(threshold, alpha, min_samples, drift, method, noise_factor, host_floor, control, host_shift)
    policy = parse(fail_on)
    plan = plan_sweep(s, RunOptions(device=device))  # every check of the suite, before the baseline is read
    s, dev = plan.suite, plan.device
    base = baseline or baseline_path(DEFAULT_ROOT, capture(dev)["device"], s.name)
    if not base.exists():  # before anything runs: say how to make one
        from qlabench.core.errors import StoreError

        raise StoreError(f"no baseline at {base}. Make one: `qlabench run sweep --suite {suite}` (on this machine), "
                         f"then `qlabench baseline save results/{s.name} --suite {suite}`; or pass --baseline FILE")
    quiet = fmt != "table"  # keep stdout clean for markdown / json
    with RichProgress(err_console if quiet else console) as prog:
        res = run_gate(s, [base], out, opt, fail_on=policy, allow_env_mismatch=allow_env_mismatch,
                       confirm=confirm, run=RunOptions(device=dev), progress=prog, replicates=replicates,
                       base_ref=base_ref, repo=repo, history=history or (), accept_inconclusive=accept_inconclusive)
    _emit(res.comparison, fmt, top, output, show_all, "qlabench gate")
    if not quiet:
        console.print("results: " + ", ".join(map(str, res.run_paths)), highlight=False)
    raise typer.Exit(res.comparison.exit_code)
