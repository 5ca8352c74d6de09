"""The Typer apps, the shared consoles, and the one error boundary of the command line.

Command modules (run.py, info.py, compare.py, ...) define plain functions; `qlabench/cli/__init__.py`
registers each of them by name through `command()`, and the one that runs is imported then and put behind
`exits_on_error` (cli/lazy.py). So every command has
the same boundary: a `QlabenchError` (bad input: suite, option, file, point) becomes one line on stderr,
`error: ...`, and exit code 2 (1 for the few that say so with an `exit_code`, e.g. a results write that
failed mid-run); any other exception is a bug and keeps its traceback (exit 1).
Both consoles show control characters as escapes (core/text.py: `visible`): a kernel package's exception message,
name or version, or a crafted results file, is printed as text and never drives the terminal.
No module here imports the package's `__init__`.
"""

from __future__ import annotations

import sys

import functools
from collections.abc import Callable

import typer
from rich.console import Console
from rich.markup import escape
from rich.segment import Segment

from qlabench.cli.lazy import lazy_group, register
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


def serve(typer_app: typer.Typer) -> None:
    """Run `typer_app` as a console script: Ctrl-C ends it with "interrupted" and exit 130, as a shell expects."""
    try:
        typer_app()
    except KeyboardInterrupt:
        err_console.print("interrupted")
        sys.exit(130)


def command(group: typer.Typer, name: str, target: str, **kwargs) -> None:
    """Register command `name` of `group`: the function `target` names (`module:function` of qlabench.cli),
    imported when the command runs and put behind the error boundary then (cli/lazy.py)."""
    register(group, name, target, **kwargs)


def _group(help: str, **kwargs) -> typer.Typer:
    return typer.Typer(cls=lazy_group(exits_on_error), help=help, no_args_is_help=True, **kwargs)


app = _group("Benchmark and profile Gated DeltaNet kernels.", pretty_exceptions_enable=False, add_completion=False)
run_app = _group("Run benchmarks.")
baseline_app = _group("Manage the baselines gates compare against.")
