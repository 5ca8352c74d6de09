"""The Typer apps, the shared consoles, and the one error boundary of the command line.

Command modules (run.py, info.py, compare.py, ...) define plain functions; `qlabench/cli/__init__.py`
registers each of them through `command()`, which puts it behind `exits_on_error`. So every command has
the same boundary: a `QlabenchError` (bad input: suite, option, file, point) becomes one line on stderr,
`error: ...`, and exit code 2 (1 for the few that say so with an `exit_code`, e.g. a results write that
failed mid-run); any other exception is a bug and keeps its traceback (exit 1).
Both consoles show control characters as escapes (core/text.py: `visible`): a kernel package's exception message,
name or version, or a crafted results file, is printed as text and never drives the terminal.
No module here imports the package's `__init__`.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

import typer
from rich.console import Console
from rich.markup import escape
from rich.segment import Segment

from qlabench.core.errors import QlabenchError
from qlabench.core.text import visible


class SafeConsole(Console):
    """A rich console that prints every text's control characters as escapes. Strings are made visible before
    they are laid out (`render_str`: print, table cells), and every segment of text once more as it is rendered,
    which covers what reaches rich as a `Text` (a progress bar's description). rich's own escape sequences
    (colours, cursor moves) are styles and control segments, and are left alone."""

    def render_str(self, text: str, **kwargs):
        return super().render_str(visible(text), **kwargs)

    def render(self, renderable, options=None):
        for seg in super().render(renderable, options):
            if seg.control is None and seg.text and not seg.text.isprintable():
                shown = visible(seg.text)
                if shown != seg.text:
                    seg = Segment(shown, seg.style)
            yield seg


app = typer.Typer(help="Benchmark and profile Gated DeltaNet kernels.", no_args_is_help=True,
                  pretty_exceptions_enable=False, add_completion=False)
run_app = typer.Typer(help="Run benchmarks.", no_args_is_help=True)
baseline_app = typer.Typer(help="Manage the baselines gates compare against.", no_args_is_help=True)
docs_app = typer.Typer(help="The docs' generated blocks: figures rendered from the current evidence.",
                       no_args_is_help=True)

console = SafeConsole()
err_console = SafeConsole(stderr=True)

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
