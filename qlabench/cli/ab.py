"""CLI for `qlabench ab`: two variants measured alternately, A B A B ..., and compared by round."""

from __future__ import annotations

from pathlib import Path

import typer

from qlabench.cli import options as shared
from qlabench.cli.app import console, err_console
from qlabench.cli.compare import (_accept, _alpha, _emit, _fail_on, _format, _min_samples, _noise_factor, _options,
                                  _output, _threshold, _top, _all)


def ab_cmd(
    a: str = typer.Argument(..., help="Variant A (base): 'current', a Python environment (site folder or venv), "
                            "or a git ref of --repo"),
    b: str = typer.Argument(..., help="Variant B (head), likewise"),
    suite: str = shared.suite(),
    rounds: int = typer.Option(5, "--rounds", "-k", min=2, help="Rounds of A then B, each in fresh worker processes"),
    out: Path = shared.out("results/ab", "Where the rounds' runs go (OUT/a, OUT/b)", short=False),
    repo: Path = typer.Option(Path("."), "--repo", help="Repository of git-ref variants"),
    subdir: str = typer.Option("", "--subdir", help="Folder of a git-ref checkout to put on PYTHONPATH"),
    device: str = shared.DEVICE,
    warmup: bool = typer.Option(True, "--warmup/--no-warmup", help="Compile both variants' kernels first, "
                                "compile groups in parallel (untimed; each variant has its own kernel caches)"),
    jobs: int = shared.JOBS,
    threshold: float = _threshold, alpha: float = _alpha, min_samples: int = _min_samples, fail_on: str = _fail_on,
    noise_factor: float = _noise_factor, fmt: str = _format, top: int = _top, output: Path = _output,
    show_all: bool = _all, accept_inconclusive: bool = _accept,
):
    """Measure A and B alternately in one job and say whether B is slower, how sure, and which kernels moved."""
    from qlabench.cli.progress import RichProgress
    from qlabench.core.spec import load_suite
    from qlabench.run.options import RunOptions
    from rich.markup import escape

    from qlabench.workflows.ab import dirty_tree_note, run_ab, variant, warmup_line

    s = load_suite(suite)
    if output:
        shared.writable_file(output, inputs=[Path(s.path)])
    shared.writable_folder(out)
    opt, parse = _options(threshold, alpha, min_samples, noise_factor=noise_factor)
    policy = parse(fail_on)
    quiet = fmt != "table"
    for note in filter(None, (dirty_tree_note(x, repo) for x in (a, b))):
        err_console.print(f"note: {escape(note)}", highlight=False, soft_wrap=True)
    with variant(a, repo, subdir) as va, variant(b, repo, subdir) as vb, \
            RichProgress(err_console if quiet else console) as prog:
        def warmed(label, w):
            prog.console.print(escape(warmup_line(label, w)), highlight=False, soft_wrap=True)

        res = run_ab(s, va, vb, out, rounds, opt, fail_on=policy, progress=prog, run=RunOptions(device=device),
                     warmup_jobs=jobs if warmup else 0, on_warm=warmed, accept_inconclusive=accept_inconclusive)
    _emit(res.comparison, fmt, top, output, show_all, "qlabench ab")
    if not quiet:
        console.print(f"rows: A {res.a_path}, B {res.b_path}", highlight=False)
    raise typer.Exit(res.comparison.exit_code)
