"""Commands registered by name and imported when run: `qlabench --help`, `qlabench backends` and the other
listings load the module of the command that runs, never all 26 (and typer builds the options of that one only).

A group made with `lazy_group()` holds {name: "module:function"} (modules of `qlabench.cli`). Running a command
imports its module and builds its options; a group's help lists its commands from their docstrings, read from
the source without importing it (what Typer would print: the function's docstring, `inspect.getdoc`'s cleaning).
"""

from __future__ import annotations

import ast
import functools
import importlib
import importlib.util
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import typer
from typer.core import TyperCommand, TyperGroup

if TYPE_CHECKING:
    from typer import _click

PACKAGE = "qlabench.cli"


@dataclass(frozen=True)
class Lazy:
    """One command: where its function is (`module:function` of qlabench.cli) and its Typer settings."""

    name: str
    target: str
    settings: dict = field(default_factory=dict)

    def function(self) -> Callable:
        module, _, attr = self.target.partition(":")
        return getattr(importlib.import_module(f"{PACKAGE}.{module}"), attr)

    def doc(self) -> str | None:
        """The function's docstring, from its module's source: the help line a group's listing shows."""
        module, _, attr = self.target.partition(":")
        return _docstrings(module).get(attr)


@functools.lru_cache(maxsize=None)
def _docstrings(module: str) -> dict[str, str | None]:
    """{function: docstring} of a module of qlabench.cli, read from its source (parsed once: several commands
    share a module)."""
    spec = importlib.util.find_spec(f"{PACKAGE}.{module}")
    with open(spec.origin, encoding="utf-8") as f:
        tree = ast.parse(f.read(), spec.origin)
    return {node.name: ast.get_docstring(node) for node in tree.body
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))}


class LazyGroup(TyperGroup):
    """A Typer group whose commands are imported when one is run (or its own help is asked for)."""

    table: dict[str, Lazy] = {}  # each group's own, set by lazy_group()
    wrap: Callable[[Callable], Callable] = staticmethod(lambda fn: fn)  # the error boundary, set by lazy_group()

    def list_commands(self, ctx: _click.Context) -> list[str]:
        # the order Typer gives: commands as registered, then the sub-groups
        return [*self.table, *(n for n in super().list_commands(ctx) if n not in self.table)]

    def get_command(self, ctx: _click.Context, cmd_name: str) -> _click.Command | None:
        if cmd_name in self.commands or cmd_name not in self.table:
            return self.commands.get(cmd_name)
        entry = self.table[cmd_name]
        if getattr(self, "_listing", False):  # this group's help: a line per command, nothing imported
            return TyperCommand(cmd_name, help=entry.doc(), hidden=entry.settings.get("hidden", False))
        self.commands[cmd_name] = built = load(entry, self.wrap)
        return built

    def format_help(self, ctx: _click.Context, formatter: _click.HelpFormatter) -> None:
        self._listing = True
        try:
            super().format_help(ctx, formatter)
        finally:
            self._listing = False


def lazy_group(wrap: Callable[[Callable], Callable]) -> type[LazyGroup]:
    """A LazyGroup class with a table of its own; `wrap` puts each command's function behind the error boundary."""
    return type("LazyGroup", (LazyGroup,), {"table": {}, "wrap": staticmethod(wrap)})


def register(group: typer.Typer, name: str, target: str, **settings) -> None:
    """Add command `name` (`module:function` of qlabench.cli) to a group made with `cls=lazy_group(...)`."""
    table = group.info.cls.table
    if name in table:
        from qlabench.core.errors import ConfigError

        raise ConfigError(f"command {name!r} is registered twice")
    table[name] = Lazy(name, target, settings)


def registered(group: typer.Typer) -> dict[str, Lazy]:
    """The commands of a lazy group, by name (not imported)."""
    return dict(group.info.cls.table)


def one_command(entry: Lazy, wrap: Callable[[Callable], Callable]) -> typer.Typer:
    """A Typer app of one entry's command: its module imported, its function wrapped."""
    one = typer.Typer(add_completion=False)
    one.command(entry.name, **entry.settings)(wrap(entry.function()))
    return one


def load(entry: Lazy, wrap: Callable[[Callable], Callable]) -> _click.Command:
    """The click command of one entry, its options built by Typer."""
    return typer.main.get_command(one_command(entry, wrap))


__all__ = ["Lazy", "LazyGroup", "lazy_group", "load", "one_command", "register", "registered"]
