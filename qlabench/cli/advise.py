"""`qlabench advise`: the ranked answer for a model, TP degree and sequence mix (analyze/advise/)."""

from __future__ import annotations

import json
from pathlib import Path

import typer

from qlabench.cli import options as opt
from qlabench.cli.app import console
from qlabench.cli.answer_print import print_answer

FORMATS = ("table", "json")


def advise_cmd(
    results: list[Path] = typer.Argument(None, help="Result files or folders (default: the current evidence "
                                         "that results/catalog.toml names)"),
    model: str = typer.Option(..., "--model", help="Model from the catalogue, e.g. qwen3.5-397b"),
    tp: int = typer.Option(1, "--tp", min=1, max=1024, help="Tensor-parallel degree the heads are divided by"),
    workload: str = typer.Option("prefill", "--workload", help="prefill (forward) or train (forward + backward)"),
    seqlens: str = typer.Option(..., "--seqlens", help="Cases, comma-separated: N (one sequence), AxN (A packed "
                                "sequences of N), N+M (packed), e.g. 32768,4x8192"),
    gate: str = typer.Option("published", "--gate", help="published (25% zero-gate heads, /16), none (no "
                             "zero-gate heads), zero=F[,scale=S], or a TOML/JSON file with gate_zero_frac, gate_scale"),
    current: str = typer.Option("fla", "--current", help="Your current backend: speedups are against it"),
    launch: str = typer.Option(None, "--launch", help="graph (the call replayed in a CUDA graph) or eager (launched "
                               "from Python, as a training step or an engine's prefill launches it); default: how "
                               "the workload's users run it (train and prefill eager, decode graph; "
                               "docs/BENCHMARKS.md)"),
    sm_budget: int = typer.Option(None, "--sm-budget", min=1, help="Rank the rows held to this many SMs (a share "
                                  "of the GPU: docs/SM-BUDGET.md); default: the whole-GPU rows"),
    fmt: str = typer.Option("table", "--format", "-f", help="table or json"),
    suite_out: Path = typer.Option(None, "--suite-out", help="Write a suite measuring the missing points here"),
    force: bool = typer.Option(False, "--force", help="Let --suite-out replace an existing file (never a results "
                               "file)"),
    measure: bool = typer.Option(False, "--measure", help="Measure the rows the answer is missing on this GPU "
                                 "(the suite --suite-out writes), then answer with them"),
    out: Path = opt.out("results", "With --measure: results root (OUT/<suite>/<run_id>.parquet, the suite beside)",
                        short=False),
    device: str = opt.DEVICE,
    warmup: bool = opt.WARMUP,
    warmup_jobs: int = opt.WARMUP_JOBS,
    gpu: str = typer.Option(None, "--gpu", help="The GPU model the question is about (H200, GB200, \"RTX 5090\"): "
                            "its rows only, and where it has none, what FlashQLA published for that card, marked as "
                            "published, not measured (default: this machine's GPU where CUDA is present, else every "
                            "GPU of the evidence)"),
):
    """Which GDN kernel is fastest for this model, TP degree and sequence mix, with the caveats that
    change the answer; or which points are missing and a suite that measures them."""
    from qlabench.analyze.advise import advise
    from qlabench.analyze.answer import make_question
    from qlabench.core.errors import ConfigError

    if fmt not in FORMATS:
        raise ConfigError(f"--format must be one of {', '.join(FORMATS)}, got {fmt!r}")
    if suite_out is not None:  # before any work: never replace a file silently, never a results file or an input
        _check_suite_out(suite_out, force, [*(results or ()), Path(gate)])
    if measure and suite_out is not None:
        raise ConfigError("--measure runs the suite itself: drop --suite-out")
    if gpu is None:
        from qlabench.measure.env import local_gpu

        gpu = local_gpu()
    q = make_question(model, tp, workload, seqlens, gate, current, sm_budget, gpu, launch)
    ans = advise(q, results or ())  # the declarations (core): no torch, no backend imported
    if measure:  # progress on stderr where stdout is the JSON answer
        from qlabench.cli.app import err_console
        from qlabench.cli.measure import measure_and_answer

        ans = measure_and_answer(err_console if fmt == "json" else console, q, ans, list(results or ()), out,
                                 device, warmup, warmup_jobs)
    if suite_out is not None and ans.suite_toml:
        try:
            suite_out.write_text(ans.suite_toml)
        except OSError as e:
            raise ConfigError(f"--suite-out {suite_out}: cannot write it: {e.strerror or e}") from None
    if fmt == "json":
        print(json.dumps(ans.as_dict(), indent=2, allow_nan=False))  # NaN is no JSON: never emitted
        return
    print_answer(console, ans, suite_out)
    if ans.published is not None:
        from qlabench.cli.published_advice import print_published

        print_published(ans.published, "the current evidence" if ans.from_catalog else "these results")


def _check_suite_out(path: Path, force: bool, inputs: list[Path]) -> None:
    """Refuse a folder, a results file, the catalog and an input always (the shared rule of every output), and
    an existing file without --force (as `merge --into` does)."""
    from qlabench.cli.options import writable_file
    from qlabench.core.errors import ConfigError

    if path.is_dir():
        raise ConfigError(f"--suite-out {path} is a folder; give a file name ending in .toml")
    writable_file(path, "--suite-out", inputs=inputs)
    if path.exists() and not force:
        raise ConfigError(f"--suite-out {path} exists; pass --force to overwrite it, or choose another file")
