"""`qlabench merge`: combine the outputs of sharded sweeps into one file, checking for gaps and duplicates."""

from __future__ import annotations

from pathlib import Path

import typer

from qlabench.cli.app import console, err_console

_SHOWN = 10  # points listed per problem; the counts say how many more


def merge_cmd(
    results: list[Path] = typer.Argument(..., help="Result files or folders of the shards"),
    into: Path = typer.Option(..., "--into", help="The merged parquet file to write"),
    suite: str = typer.Option(None, "--suite", "-s", help="Suite the shards ran (name or path): also check "
                              "that none of its points is missing"),
    force: bool = typer.Option(False, "--force", help="Overwrite --into if it exists"),
):
    """Merge shard outputs into one file: one row per point; fails (exit 1) on missing or duplicated points."""
    from qlabench.analyze.evidence import believed
    from qlabench.core.spec import load_suite
    from qlabench.core.errors import StoreError
    from qlabench.store.merge import merge_results, write_merged

    if into.exists() and not force:  # before reading anything: never replace a file silently
        raise StoreError(f"--into {into} exists; pass --force to overwrite it, or choose another file")
    if into.is_dir():
        raise StoreError(f"--into {into} is a folder; give the merged parquet file's path")
    # show's rule for a believed row; a --no-check sweep's unchecked rows merge as they are (views refuse them)
    report = merge_results(results, load_suite(suite) if suite else None,
                           row_rule=lambda df: believed(df, require_check=False))
    counts = ", ".join(f"{v} {k}" for k, v in sorted(report.status_counts.items()))
    console.print(f"{report.rows_read} rows in {len(report.files)} file(s) -> {report.points} points"
                  + (f", {len(report.rows)} rows with their replicates" if len(report.rows) != report.points else "")
                  + f" ({counts})")
    if report.fingerprints > 1:
        console.print(f"[yellow]note:[/yellow] {report.fingerprints} environment fingerprints (GPU model or "
                      "library versions differ between shards)")
    if suite is None:
        console.print("no --suite given: duplicates checked, missing points not")
    if not report.ok:
        for problem in report.problems():
            err_console.print(f"[red]merge problem:[/red] {problem}", highlight=False)
        for title, pts in (("missing", report.missing), ("duplicated", list(report.duplicated)),
                           ("unexpected", report.unexpected)):
            for p in pts[:_SHOWN]:
                err_console.print(f"  {title}: {p.label()} seed={p.seed}", highlight=False)
            if len(pts) > _SHOWN:
                err_console.print(f"  ... and {len(pts) - _SHOWN} more {title}", highlight=False)
        for line in report.not_believed[:_SHOWN]:
            err_console.print(f"  not believed: {line}", highlight=False, soft_wrap=True)
        err_console.print(f"nothing written to {into}")
        raise typer.Exit(1)
    try:
        path = write_merged(report, into, force=force)
    except OSError as e:
        raise StoreError(f"cannot write {into}: {e.strerror or e}") from None
    console.print(f"wrote {path}")
