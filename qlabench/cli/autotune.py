"""`qlabench autotune-regret`: what sweep order costs an autotuning library (FLA's Triton kernels)."""

from __future__ import annotations

from pathlib import Path

import typer

from qlabench.cli import options as opt
from qlabench.cli.app import console


def autotune_regret_cmd(
    suite: str = opt.suite(help="Suite whose points of BACKEND (one mode) are the shapes, per head config"),
    backend: str = typer.Option("fla", "--backend", help="An autotuning backend (see `qlabench backends`)"),
    mode: str = typer.Option("fwd", "--mode", help="Which of the suite's modes to tune and time"),
    device: str = opt.DEVICE,
    out: Path = opt.out("results/autotune-regret", "Folder for autotune-regret.csv and .md"),
    cache_dir: Path = opt.CACHE_DIR,
):
    """Tune the library on every shape of each head configuration in turn, then time every shape under every
    shape's configs: the regret of a point is its time under another shape's tuning over its time under its
    own (what an engine, or a worker that ran another point first, gets)."""
    from qlabench.core.spec import load_suite, resolve_suite_path
    from qlabench.measure.caches import use_cache_dir
    from qlabench.workflows.autotune_regret import measure_regret, regret_markdown, write_regret

    opt.writable_folder(out)
    use_cache_dir(cache_dir)
    s = load_suite(str(resolve_suite_path(suite)))
    dev = device or (s.device if s.device != "auto" else "cuda")
    with console.status("tuning") as status:
        cells = measure_regret(s, backend, dev, mode, on_step=lambda msg: status.update(msg),
                               on_group=lambda so_far: write_regret(so_far, out))
    csv_path, md_path = write_regret(cells, out)
    console.print(regret_markdown(cells))
    console.print(f"wrote {csv_path} and {md_path}")
