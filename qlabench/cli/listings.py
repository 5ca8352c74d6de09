"""Rich listings of what exists: the points of a suite (and `run sweep --dry-run`), the backends, the suites."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from qlabench.core.dtypes import SHORT_DTYPE as _SHORT_DTYPE

if TYPE_CHECKING:  # a suite's parser is not imported by the listings that hold none (backends, models)
    from qlabench.core.spec import Suite

SHOWN_POINTS = 200  # rows of the --dry-run table; the count covers the rest


def points_table(suite: Suite, limit: int | None = None, width: int | None = None):
    """The suite's first `limit` points: a table, or below 120 columns (`width`) one line per point, never cut."""
    cp = any(p.distributed for p in suite.points)
    if width is not None and width < 120:
        from rich.console import Group
        from rich.text import Text

        w = len(str(len(suite.points) - 1))
        lines = [Text(f"{i:>{w}}  {p.label()} K/V {p.K}/{p.V} tok {p.total_tokens}"
                      + (" h0" if p.initial_state else "")) for i, p in enumerate(suite.points[:limit])]
        return Group(Text(f"{suite.name}: {len(suite.points)} points", style="italic"), *lines)
    t = Table(title=f"{suite.name}: {len(suite.points)} points")
    for c in ("#", "backend", "mode", "heads", "sequences", "tokens", "K/V", "dtype", "gate", "h0") + (
            ("cp",) if cp else ()):
        t.add_column(c, overflow="fold")  # never '…': cut labels made different points look identical
    for i, p in enumerate(suite.points[:limit]):
        t.add_row(str(i), p.backend, p.mode, p.heads_label, p.layout_label, str(p.total_tokens), f"{p.K}/{p.V}",
                  p.dtype, p.gate_label, "yes" if p.initial_state else "no", *((p.cp_label or "-",) if cp else ()))
    return t


def print_dry_run(console: Console, plan, costs_from: Sequence[str | Path] = ()) -> None:
    """`run sweep --dry-run` of a plan made without the device (run/plan.py): its warm-up, the points (the first
    SHOWN_POINTS), the bound on their sampling time (the plan's estimate), what they cost when they were last
    measured (`costs_from`, else the current evidence), the count."""
    from qlabench.analyze.evidence.costs import duration  # pandas: only when a dry run asks
    from qlabench.cli.costs import print_recorded_costs
    from qlabench.cli.warming import warm_line

    s, cost = plan.suite, plan.estimate
    console.print(warm_line(plan.warmup), highlight=False)
    console.print(points_table(s, limit=SHOWN_POINTS, width=console.width))
    if len(s.points) > SHOWN_POINTS:
        console.print(f"... and {len(s.points) - SHOWN_POINTS} more")
    console.print(f"sampling takes at most {cost.per_point_s:g} s per point"
                  + (f" ({cost.lead_in_s:g} s of it the sustained regime's lead-in)" if cost.lead_in_s else "")
                  + f": up to {duration(cost.sampling_s)}, plus checks, compiles and an autotuning library's tuning")
    print_recorded_costs(console, s.points, costs_from)
    console.print(f"{len(s.points)} points in suite {s.name!r} ({s.path})")


def backends_table(backends: Iterable, width: int | None = None, problems: dict[str, str] | None = None):
    """Every backend, available or not, with the reason (or its description); a plugin says which distribution
    (and version) provided it, and `problems` ({entry-point name: why}) lists plugins that were not taken.

    Below 120 columns (`width`) the notes leave the table for a list under it, one line per backend at
    the full width, instead of a column squeezed to a word per line.
    """
    from rich.console import Group
    from rich.text import Text

    notes: list[Text] = []
    wide = width is None or width >= 120
    t = Table(title="qlabench backends")
    t.add_column("backend", no_wrap=True)
    t.add_column("available", no_wrap=True)
    for c in ("modes", "dtypes", "devices", "cp"):  # folded, never cut to 'bwd_tra…'
        t.add_column(c, overflow="fold")
    if wide:
        t.add_column("notes", overflow="fold")
    for b in backends:
        ok, why = b.available()
        note = why if not ok else b.description
        if b.first_use_note():
            note += "; " + b.first_use_note()
        if b.testing:
            note = "(test backend) " + note
        pv = b.decl.provider
        if pv is not None and pv.dist:
            note = f"(plugin: {pv.dist} {pv.version or ''}".rstrip() + ") " + note
        # A family's `family:member` name (the layer backends) breaks after its colon: the column stays
        # as narrow as the longest member.
        cells = [b.name.replace(":", ":\n", 1), "[green]yes[/green]" if ok else "[red]no[/red]", " ".join(sorted(b.modes)),
                 " ".join(_SHORT_DTYPE[d] for d in sorted(b.dtypes)), " ".join(sorted(b.devices)),
                 " ".join(b.cp_modes)]
        if wide:
            t.add_row(*cells, escape(note))
        else:
            t.add_row(*cells)
            notes.append(Text.assemble((b.name, "bold"), ": ", note))
    for name, why in (problems or {}).items():
        cells = [name, "[red]no[/red]", "", "", "", ""]
        if wide:
            t.add_row(*cells, escape(f"(plugin) {why}"))
        else:
            t.add_row(*cells)
            notes.append(Text.assemble((name, "bold"), ": ", why))
    return t if wide else Group(t, *notes)


def models_table(models: Iterable, width: int | None = None):
    """Each model (name, aliases, heads, head dim) and its heads on one GPU at each TP degree (h_qk/h_v; '-' where
    the degree does not divide both). Below 120 columns (`width`) one line per model, never cut."""
    from rich.console import Group
    from rich.text import Text

    models = list(models)
    degrees = sorted({tp for m in models for tp in m.tp_degrees()})
    if width is not None and width < 120:
        lines = [Text.assemble((m.name, "bold"), f" ({', '.join(m.aliases) or 'no alias'}): K=V={m.head_dim}; ",
                               "; ".join(f"TP{tp} {a}/{b}" for tp, (a, b) in m.heads_by_tp().items()))
                 for m in models]
        return Group(Text("qlabench models: GDN heads h_qk/h_v on one GPU at each TP degree", style="italic"),
                     *lines)
    t = Table(title="qlabench models: GDN heads h_qk/h_v on one GPU at each TP degree")
    for c in ("model", "aliases", "K=V"):
        t.add_column(c, overflow="fold")
    for tp in degrees:
        t.add_column(f"TP{tp}", justify="right", no_wrap=True)
    for m in models:
        by_tp = m.heads_by_tp()
        t.add_row(escape(m.name), escape(", ".join(m.aliases)), str(m.head_dim),
                  *(f"{by_tp[tp][0]}/{by_tp[tp][1]}" if tp in by_tp else "-" for tp in degrees))
    return t


def suites_table(entries: Iterable[tuple[str, int | None, str]]) -> Table:
    """(name, point count or None when invalid, description or the reason it is invalid) per suite."""
    t = Table(title="qlabench suites")
    for c in ("suite", "points", "description"):
        t.add_column(c)
    for name, count, text in entries:
        t.add_row(name, "[red]invalid[/red]" if count is None else str(count), text)
    return t
