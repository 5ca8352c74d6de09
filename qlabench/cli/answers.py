"""Renderings of `advise`'s answers for a terminal or a pipe (cli/advise.py prints them): the answer first, a few
lines per case that fit 80 columns, then each case's ranking, as a table where it fits the console and stacked,
an entry a block, where it does not (a backend's name is never folded), then the notes.

The ranking's columns are one list (`COLUMNS`): a column is a header, how a cell reads an entry, and whether it
stays on an entry's first line when the ranking stacks. A cell holds a value, never a sentence: what needs one
(a first call, a failed row's reason, a caveat) is a note under the rankings.
"""

from __future__ import annotations

import textwrap
from collections.abc import Callable
from dataclasses import dataclass

from rich import box
from rich.console import Console
from rich.measure import Measurement
from rich.table import Table
from rich.text import Text

from qlabench.core.regimes import RECOMMENDED_REGIME


@dataclass(frozen=True)
class Column:
    header: str
    cell: Callable  # (case, entry) -> the cell's text, plain (no markup)
    justify: str = "right"
    lead: bool = False  # on an entry's first line when the ranking stacks (its name and time)
    unit: str = ""  # after a lead cell when the ranking stacks, where its header is not shown ('0.239 ms')
    optional: bool = False  # left out of a case where no entry has a value in it (rows that did not record it)


def _ms(case, e) -> str:
    return f"{e.time_ms:.3f}" if e.ok else e.status


def _run(case, e) -> str:
    run = ", ".join(run_tag(case, r) for r in e.runs)  # each row says its run: a ranking may mix runs
    if e.regime and e.regime != RECOMMENDED_REGIME:  # and its regime, where it is not the one ranked on
        run += f" ({e.regime})"
    return run


def _check(case, e) -> str:
    if not e.ok:
        return "-"
    return " ".join(filter(None, ["ok", f"{e.max_err:.0e}" if e.max_err is not None else "", e.check or ""]))


def _time(value: float | None) -> str:  # a time of the entry's, or '-' where its rows recorded none
    return f"{value:.3f}" if value is not None else "-"

# The ranking's columns, in order. A time of another kind is one more entry here (header, cell, lead). `ms` is the
# time of the regime the case is ranked in (its header says which); device, eager and host are the three times.
COLUMNS: list[Column] = [
    Column("backend", lambda c, e: e.backend, "left", lead=True),
    Column("ms", _ms, lead=True, unit="ms"),
    Column("speedup", lambda c, e: f"{e.speedup:.2f}x" if e.ok and e.speedup else "-", lead=True),
    Column("device ms", lambda c, e: _time(e.device_ms), optional=True),
    Column("eager ms", lambda c, e: _time(e.eager_ms), optional=True),
    Column("host ms", lambda c, e: _time(e.host_ms), optional=True),
    # launch-bound: the eager time exceeds the device time beyond noise (core/launch.py)
    Column("launch", lambda c, e: {True: "launch-bound", False: "no"}.get(e.launch_bound, "-"), "left", optional=True),
    Column("noise", lambda c, e: f"{e.rel_noise:.1%}" if e.ok and e.rel_noise is not None else "-"),
    Column("extra MiB", lambda c, e: f"{e.extra_mem_mib:.0f}" if e.ok and e.extra_mem_mib is not None else "-"),
    Column("check", _check, "left"),
    Column("version", lambda c, e: e.version or "not recorded", "left"),
    Column("run", _run, "left"),
]


def case_runs(case) -> list[str]:
    return sorted({r for e in case.entries for r in e.runs})


def run_tag(case, run: str) -> str:
    """A short tag per run of this case (A, B, ...), spelled out under its table."""
    return chr(ord("A") + case_runs(case).index(run))


def leaders(case) -> list:
    """The winner alone, or the tie set the answer names (CaseAnswer.tie_set: the measured spread, the same-call
    floor, and another run's order)."""
    return list(case.tie_set)


def advise_table(case, columns: list[Column] = COLUMNS) -> Table:
    """One case's ranking as a table; its cells never wrap (`ranking` stacks it where it would not fit)."""
    t = Table(title=f"{case.title} ({case.case.total_tokens} tokens)", title_justify="left", box=box.SIMPLE_HEAD,
              pad_edge=False, show_edge=False)
    for c in columns:
        t.add_column(c.header, justify=c.justify, no_wrap=True)
    for e in case.entries:
        cells = [Text(col.cell(case, e)) for col in columns]
        if not e.ok:
            for cell in cells[1:]:
                cell.stylize("red")
        t.add_row(*cells)
    return t


def shown_columns(case, columns: list[Column] = COLUMNS) -> list[Column]:  # an optional one only with a value
    return [c for c in columns if not c.optional or any(c.cell(case, e) != "-" for e in case.entries)]


def ranking(console: Console, case, columns: list[Column] = COLUMNS):
    """The case's ranking: the table where its natural width fits the console, else stacked (`stacked`)."""
    columns = shown_columns(case, columns)
    table = advise_table(case, columns)
    natural = Measurement.get(console, console.options.update_width(100_000), table).maximum
    return table if natural <= console.width else stacked(case, console.width, columns)


def stacked(case, width: int, columns: list[Column] = COLUMNS) -> Text:
    """An entry a block: its rank, name and lead columns on one line, its other columns as 'header value' pairs
    after it, wrapped between pairs (a value is never cut)."""
    lead = [c for c in columns if c.lead]
    rest = [c for c in columns if not c.lead]
    cells = [[c.cell(case, e) + (f" {c.unit}" if c.unit and e.ok else "") for c in lead] for e in case.entries]
    widths = [max(len(row[i]) for row in cells) for i in range(len(lead))] if cells else []
    lines = [f"{case.title} ({case.case.total_tokens} tokens)"]
    for k, (e, row) in enumerate(zip(case.entries, cells), 1):
        head = "  ".join(v.ljust(w) if c.justify == "left" else v.rjust(w) for c, v, w in zip(lead, row, widths))
        lines.append(f"{k:>2}. {head.rstrip()}")
        pairs = [f"{c.header} {v}" for c in rest if (v := c.cell(case, e)) not in ("", "-")]
        lines += wrap_pairs(" · ".join(pairs), width, "      ", " · ")
    return Text("\n".join(lines))


def wrapped(text: str, width: int, indent: str = "") -> list[str]:
    """`text` in lines of at most `width`, broken at spaces only (a longer word keeps a line of its own, whole),
    its leading spaces kept on the first line, `indent` before the others."""
    return textwrap.wrap(text, max(width, len(indent) + 20), subsequent_indent=indent, break_long_words=False,
                         break_on_hyphens=False) or [""]


def wrap_pairs(text: str, width: int, indent: str, sep: str) -> list[str]:
    """`text` in lines of at most `width` after `indent`, broken only at `sep` (a longer piece keeps its own line,
    whole): a 'header value' pair is never cut."""
    out: list[str] = []
    line = ""
    for piece in text.split(sep):
        if line and len(indent) + len(line) + len(sep) + len(piece) > width:
            out.append(indent + line)
            line = piece
        else:
            line = f"{line}{sep}{piece}" if line else piece
    return out + ([indent + line] if line else [])
