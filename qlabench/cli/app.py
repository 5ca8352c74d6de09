"""The Typer apps, the shared consoles, and the one error boundary of the command line.

Command modules (run.py, info.py, compare.py, ...) define plain functions; `qlabench/cli/__init__.py`
registers each of them through `command()`, which puts it behind `exits_on_error`. So every command has
the same boundary: a `QlabenchError` (bad input: suite, option, file, point) becomes one line on stderr,
`error: ...`, and exit code 2 (1 for the few that say so with an `exit_code`, e.g. a results write that
failed mid-run); any other exception is a bug and keeps its traceback (exit 1).
No module here imports the package's `__init__`.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

import typer
from rich.console import Console
from rich.markup import escape

from qlabench.core.errors import QlabenchError

app = typer.Typer(help="Benchmark and profile Gated DeltaNet kernels.", no_args_is_help=True,
                  pretty_exceptions_enable=False, add_completion=False)
run_app = typer.Typer(help="Run benchmarks.", no_args_is_help=True)
baseline_app = typer.Typer(help="Manage the baselines gates compare against.", no_args_is_help=True)
docs_app = typer.Typer(help="The docs' generated blocks: figures rendered from the current evidence.",
                       no_args_is_help=True)

console = Console()
err_console = Console(stderr=True)

EXIT_USAGE = 2  # a QlabenchError: the input, not qlabench, is at fault


def exits_on_error(fn: Callable) -> Callable:
    """Turn project errors into one line on stderr and exit code 2 (or the error's `exit_code`); let every
    other exception through."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except QlabenchError as e:
            err_console.print(f"[red]error:[/red] {escape(str(e))}", highlight=False, soft_wrap=True)
            raise typer.Exit(getattr(e, "exit_code", EXIT_USAGE)) from None

    return wrapper


def command(group: typer.Typer, name: str, fn: Callable, **kwargs) -> None:
    """Register `fn` as command `name` of `group`, behind the error boundary."""
    group.command(name, **kwargs)(exits_on_error(fn))
