"""`qlabench baseline save`: keep a run's rows as the baseline `gate` compares against."""

from __future__ import annotations

from pathlib import Path

import typer

from qlabench.cli.app import console


def baseline_save_cmd(
    results: list[Path] = typer.Argument(..., help="Result files or folders of the run to keep"),
    suite: str = typer.Option(..., "--suite", "-s", help="Suite whose rows to save: a name or qlabench/suites/NAME.toml "
                              "path, as `run sweep` and `gate` take"),
    root: Path = typer.Option(Path("results/baselines"), "--root", help="Baselines root"),
    force: bool = typer.Option(False, "--force", help="Replace a point's ok baseline rows even by rows none of "
                               "which is ok (refused without it)"),
    lock_wait: float = typer.Option(60.0, "--lock-wait", help="Seconds to wait for another save of the same "
                                    "baseline to finish before giving up (exit 2, naming it)"),
):
    """Merge a run's rows into results/baselines/<gpu>/<suite>.parquet (newer rows replace older)."""
    from qlabench.cli.app import err_console
    from qlabench.store.baselines import save_baseline

    path, n, replaced = save_baseline(results, _suite_name(suite), root, force=force, lock_wait_s=lock_wait,
                                      on_wait=lambda note: err_console.print(note, highlight=False, soft_wrap=True))
    console.print(f"{path}: {n} rows ({replaced} replaced)", highlight=False)


def _suite_name(suite: str) -> str:
    """The name rows carry for `--suite`: a path (or a name with a suite file) reads the suite's `name`."""
    from qlabench.core.errors import QlabenchError
    from qlabench.core.spec import load_suite

    looks_like_path = suite.endswith(".toml") or "/" in suite
    try:
        return load_suite(suite).name
    except QlabenchError:
        if looks_like_path:
            raise
        return suite  # a suite whose file is gone: its rows still carry the name
