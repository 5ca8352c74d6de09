"""A rich progress bar for sweeps (run/sweep.py's Progress protocol).

On a terminal the bar shows the point in flight and only non-ok rows get a line. Where output goes to
a file or a pipe (CI, a batch job's log) rich draws the bar once, at the end, so a run killed midway
would leave nothing: there every finished point gets its own line, ok ones with their median, and the
bar's one line at the end is short ('32/32 points, 0:00:21 elapsed'): no point label or remaining
time that an 80-column log would cut to '0:00:…'.
"""

from __future__ import annotations

import contextlib
import os
import sys

from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

from qlabench.analyze.kit.labels import backend_label
from qlabench.core.identity import heads_label, layout_label
from qlabench.core.text import one_line

_STYLE = {"ok": "green", "incorrect": "red", "error": "red", "skipped": "yellow"}


class RichProgress:
    """`prices`: each point's seconds as the evidence prices it (analyze/evidence/costs.py point_prices; None:
    never measured there): on a terminal the bar counts them down ('~1.6 min left, priced')."""

    def __init__(self, console: Console, prices: dict | None = None):
        self.console = console
        self._prices, self._left, self._current = prices or {}, None, 0.0
        if prices:
            self._left = sum(v for v in prices.values() if v)
        # rich's default answer to a closed stdout is SystemExit(1), mid-sweep: go quiet instead
        console.on_broken_pipe = lambda: _go_quiet(console)
        if console.is_terminal:
            columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                       TimeRemainingColumn()) + ((TextColumn("{task.fields[priced]}"),) if prices else ())
        else:
            columns = (MofNCompleteColumn(), TextColumn("points,"), TimeElapsedColumn(), TextColumn("elapsed"))
        self._bar = Progress(*columns, console=console, transient=False)
        self._task = None
        self._live = False

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        if self._live:
            self._live = False
            return self._bar.__exit__(*exc)
        return None

    def start(self, total: int) -> None:
        with _survives_closed_stdout():
            self._start(total)

    def point_started(self, point) -> None:
        with _survives_closed_stdout():
            self._point_started(point)

    def point_done(self, row) -> None:
        with _survives_closed_stdout():
            self._point_done(row)

    def _start(self, total: int) -> None:
        # The bar appears with the first sweep, not before: a sweep refused up front (a bad timer or
        # device) leaves stdout empty, so its one `error:` line on stderr is all there is.
        if not self._live:
            self._bar.__enter__()
            self._live = True
        self._task = self._bar.add_task("sweep", total=total, priced=self._priced())

    def _priced(self) -> str:
        from qlabench.analyze.evidence.costs import duration

        return f"~{duration(max(self._left, 0.0))} left, priced" if self._left is not None else ""

    def _point_started(self, point) -> None:
        self._current = self._prices.get(point) or 0.0
        self._bar.update(self._task, description=escape(one_line(point.label())[:70]))

    def _point_done(self, row) -> None:
        if row.status != "ok" or not self.console.is_terminal:
            style = _STYLE.get(row.status, "white")
            what = (row.reason or "") if row.status != "ok" else f"{row.median_ms:.4g} ms"
            # escaped: reasons hold brackets ("qlabench[gpu]"), and so do CP labels ("[cp2 inter]"); a reason is
            # often a kernel package's own exception message, its control characters shown, never obeyed
            backend = backend_label({k: getattr(row, k, None) for k in ("backend", "cp_world_size", "cp_mode")})
            # the case as a suite names it: a token count cannot tell 32768 from 4x8192 packed
            case = layout_label(row.layout, row.batch, row.seqlens)
            self._bar.console.print(f"[{style}]{row.status}[/{style}] {escape(one_line(backend))} {row.mode} "
                                    f"{heads_label(row.h_qk, row.h_v)} {case}: {escape(one_line(what))}",
                                    highlight=False)
        if self._left is not None:
            self._left -= self._current
            self._bar.update(self._task, priced=self._priced())
        self._bar.advance(self._task)



@contextlib.contextmanager
def _survives_closed_stdout():
    """Progress output must never stop a measurement: when the reader of stdout has gone (`| head -1`),
    stdout is pointed at /dev/null and the sweep goes on; its rows are written as usual."""
    try:
        yield
    except BrokenPipeError:
        stdout_gone()


def _go_quiet(console: Console) -> None:
    if not console.quiet:
        print("note: stdout was closed; progress output is dropped, the sweep goes on", file=sys.stderr, flush=True)
    console.quiet = True
    stdout_gone()


def stdout_gone() -> None:
    """Point stdout at /dev/null (its reader closed the pipe), so later output is dropped, not fatal."""
    if sys.stdout is None or sys.stdout.closed:
        return
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except OSError:
        pass
