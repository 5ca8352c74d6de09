"""A rich progress bar for sweeps (the runner's Progress protocol)."""

from __future__ import annotations

from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

_STYLE = {"ok": "green", "incorrect": "red", "error": "red", "skipped": "yellow"}


class RichProgress:
    def __init__(self, console: Console):
        self.console = console
        self._bar = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                             TimeElapsedColumn(), TimeRemainingColumn(), console=console, transient=False)
        self._task = None

    def __enter__(self):
        self._bar.__enter__()
        return self

    def __exit__(self, *exc):
        return self._bar.__exit__(*exc)

    def start(self, total: int) -> None:
        self._task = self._bar.add_task("sweep", total=total)

    def point_started(self, point) -> None:
        self._bar.update(self._task, description=point.label()[:70])

    def point_done(self, row) -> None:
        if row.status != "ok":
            style = _STYLE.get(row.status, "white")
            self._bar.console.print(f"[{style}]{row.status}[/{style}] {row.backend} {row.mode} "
                                    f"h{row.h_qk}/{row.h_v} {row.total_tokens} tok: {escape(row.reason or '')}",
                                    highlight=False)  # escaped: reasons hold brackets ("qlabench[gpu]")
        self._bar.advance(self._task)
