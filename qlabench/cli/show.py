"""`qlabench show RESULTS...`: the speedup table `run sweep` prints, from stored result files."""

from __future__ import annotations

from pathlib import Path

import typer

from qlabench.cli.app import console

FORMATS = ("table", "markdown", "csv")


def show_cmd(
    results: list[Path] = typer.Argument(None, help="Result files or folders, e.g. results/quick-cpu (default: the "
                                         "current evidence that results/catalog.toml names)"),
    baseline: str = typer.Option(None, "--baseline", help="Backend the speedups are against (default: the "
                                 "suite's baseline, as `run sweep` and `plot` use)"),
    fmt: str = typer.Option("table", "--format", "-f", help="table (terminal), markdown or csv"),
    mode: str = typer.Option(None, "--mode", help="Only rows of this mode (fwd, bwd, bwd_train, fwd_bwd)"),
    time: str = typer.Option("timer", "--time", help="Which time each row prints: timer (its timer's median), device "
                             "(the call replayed in a CUDA graph), eager (launched back to back from Python) or host "
                             "(the launching thread's own time per call); docs/BENCHMARKS.md, 'Three times'"),
    all_runs: bool = typer.Option(False, "--all-runs", help="Keep every run's rows (default: newest per point)"),
    other_evidence: bool = typer.Option(True, "--other-evidence/--no-other-evidence",
                                        help="Say where a results folder beside these holds newer rows of the same "
                                        "points, and why they differ (not with --format csv)"),
    model: str = typer.Option(None, "--model", help="Only rows with this model's heads at --tp (any model name)"),
    tp: int = typer.Option(None, "--tp", min=1, max=1024, help="TP degree for --model (default 1)"),
    heads: str = typer.Option(None, "--heads", help="Only rows with these heads, H_QK/H_V, e.g. 8/32"),
    seqlen: int = typer.Option(None, "--seqlen", min=1, help="Only rows with a sequence of this length"),
    tokens: int = typer.Option(None, "--tokens", min=1, help="Only rows with this many tokens in one call"),
    gate: str = typer.Option(None, "--gate", help="Only rows of this gate, as the table prints it (fq, 'fq z0/64') "
                             "or in full ('flashqla(zero=0,/64)')"),
    backend: list[str] = typer.Option(None, "--backend", help="Only these backends (repeat the option); the "
                                      "baseline is kept for the speedups"),
    sm_budget: int = typer.Option(None, "--sm-budget", min=1, help="Only rows held to this many SMs (a green "
                                  "context; docs/SM-BUDGET.md)"),
    numerics: list[Path] = typer.Option(None, "--numerics", help="Result folders whose checks count as error "
                                        "evidence for the same backend and point (e.g. results/h200-numerics, "
                                        "checked against float64 at full size); repeat the option"),
):
    """Print the speedup table of stored results: median ms per call and speedup against a baseline.

    A `~` after a time: the point missed its noise target; `!`: fewer samples than min_samples; `≈`: its time
    depends on the calls per sample beyond its noise (`[timing] sensitivity`; calls_sensitivity_ms has each).
    Under each time, its error mark: the worst error / tolerance and the reference it was checked against
    (`fp64@full`: float64 at the point's size; `oracle@256 †`: the fp32 recurrence on 256 tokens only);
    `✗`: over tolerance in its own check or a --numerics row, and no speedup where it is the faster side.
    `+48 MiB`: the extra device memory of the call beyond its inputs and outputs (`+12 outside`: taken outside
    torch's allocator); `sm32` after the sequences: a row held to 32 SMs (--sm-budget N shows only those).
    Under the table: newer evidence for these points in sibling folders (e.g. results/h200-study beside
    results/h200), where it disagrees, with what the rows recorded differently.
    """
    import sys

    from rich.markup import escape

    from qlabench.analyze.kit.labels import GATE_LEGEND
    from qlabench.analyze.show.row_filter import RowFilter
    from qlabench.analyze.show import show_rows
    from qlabench.cli.records import fitted
    from qlabench.cli.views import check_lines, print_marks, speedup_markdown, speedup_rich_table
    from qlabench.core.errors import ConfigError
    from qlabench.core.text import md_text, visible, visible_frame

    if fmt not in FORMATS:
        raise ConfigError(f"--format must be one of {', '.join(FORMATS)}, got {fmt!r}")
    where = RowFilter(model=model, tp=tp, heads=heads, seqlen=seqlen, tokens=tokens, gate=gate,
                      backends=tuple(backend or ()), sm_budget=sm_budget)
    shown = show_rows(results or (), baseline=baseline, mode=mode, all_runs=all_runs, where=where,
                      numerics=numerics or (), time=time)
    if fmt == "csv":  # the table alone (its device and runs columns say what each row stands on)
        visible_frame(shown.table).to_csv(sys.stdout, index=False)
        return
    # every line below quotes what the files hold (run ids, hosts, versions, reasons): made visible, or literal
    # markdown (core/text.py)
    say = (lambda line: print(md_text(line))) if fmt == "markdown" else (lambda line: print(visible(line)))
    if fmt == "markdown":
        print(speedup_markdown(shown.table, shown.baseline))
        for line in check_lines(shown.rows, shown.numerics, shown.checks):
            print(f"\n_{md_text(line)}_")
        print()
    else:
        console.print(fitted(console, speedup_rich_table(shown.table, shown.baseline), keys=5))
        print_marks(console, shown.rows, shown.numerics, shown.checks)
        console.print(GATE_LEGEND)
    for line in _provenance(shown):  # wrapped to the terminal in the table format
        if fmt == "markdown":
            say(line)
        else:
            console.print(escape(line), highlight=False)
    for line in ([f"times: each row's {time} time (--time)"] if time != "timer" else []) + \
            ([shown.launch_line] if shown.launch_line else []) + shown.notes:
        say(line)
    if other_evidence:
        from qlabench.analyze.evidence.newer import newer_evidence

        for line in newer_evidence(shown.rows, shown.sources).lines:
            say(line)
    from qlabench.analyze.layer.gain import layer_lines

    for line in layer_lines(shown.rows):  # layer rows: what a faster core is worth in the layer (docs/LAYER.md)
        say(line)


def _provenance(shown) -> list[str]:
    """Where the baseline came from, the GPU models, and per run what its numbers stand on."""
    return [shown.baseline_note, *filter(None, [shown.device_note]), *shown.runs]
