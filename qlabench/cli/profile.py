"""CLI: `qlabench profile` (one point: kernel breakdown, sm_coverage, ncu sm_active_pct), `qlabench kernels`,
and the hidden `_ncu-child` that ncu launches."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import typer
from rich.markup import escape
from rich.table import Table

from qlabench.cli.app import console


def _breakdown_table(prof) -> Table:
    t = Table(title=f"kernels of one call ({prof.num_sms} SMs)")
    for c in ("#", "kernel", "us", "time %", "grid", "block", "blocks", "waves", "SM cov %"):
        t.add_column(c, justify="left" if c in ("kernel", "grid", "block") else "right")
    for r in prof.breakdown():
        cov = r["coverage"]
        cov_s = "-" if cov is None else (f"[red]{100 * cov:.0f}[/red]" if cov < 1 else f"{100 * cov:.0f}")
        t.add_row(str(r["index"]), r["name"][:70], f"{r['dur_us']:.1f}",
                  "-" if r["time_frac"] is None else f"{100 * r['time_frac']:.1f}",
                  str(r["grid"]), str(r["block"]), str(r["blocks"]),
                  "-" if r["waves"] is None else f"{r['waves']:.2f}", cov_s)
    return t


def _ncu_table(ncu) -> Table:
    from qlabench.measure.probes.ncu import per_kernel_rows

    t = Table(title="Nsight Compute (clock control none)")
    for c in ("id", "kernel", "grid", "SM active %", "SM thru %", "warps active %", "waves/SM", "ns"):
        t.add_column(c, justify="left" if c in ("kernel", "grid") else "right")

    def f(v, fmt="{:.1f}"):
        return "-" if v is None else fmt.format(v)

    for r in per_kernel_rows(ncu.kernels):
        t.add_row(str(r["id"]), (r["name"] or "?")[:70], str(r["grid"]), f(r["sm_active_pct"]),
                  f(r.get("sm__throughput.avg.pct_of_peak_sustained_elapsed")),
                  f(r.get("sm__warps_active.avg.pct_of_peak_sustained_active")),
                  f(r.get("launch__waves_per_multiprocessor"), "{:.2f}"), f(r.get("gpu__time_duration.sum"), "{:.0f}"))
    return t


def profile_cmd(
    suite: str = typer.Option(None, "--suite", "-s", help="Take the point from this suite (with --index)"),
    index: int = typer.Option(None, "--index", "-i", help="Point number in the suite (see run sweep --dry-run)"),
    backend: str = typer.Option(None, "--backend", "-b", help="Backend, when not taking a suite point"),
    mode: str = typer.Option("fwd", "--mode", help="fwd, bwd or fwd_bwd"),
    heads: str = typer.Option("2/8", "--heads", help="H_QK/H_V"),
    seqlens: str = typer.Option("8192", "--seqlens", help="Comma-separated sequence lengths"),
    layout: str = typer.Option(None, "--layout", help="dense or varlen (default: varlen if lengths differ)"),
    batch: int = typer.Option(None, "--batch", help="Dense batch size (a single length is repeated)"),
    dtype: str = typer.Option("bfloat16", "--dtype"),
    kv: int = typer.Option(128, "--head-dim", help="K = V head dim"),
    device: str = typer.Option("cuda", "--device"),
    out: Path = typer.Option(Path("results/profiles"), "--out", "-o", help="Folder for the JSON and kernels parquet"),
    no_ncu: bool = typer.Option(False, "--no-ncu", help="Skip Nsight Compute"),
    no_kineto: bool = typer.Option(False, "--no-kineto", help="Skip the torch.profiler kernel breakdown"),
):
    """Profile one point: per-kernel breakdown with sm_coverage (Kineto) and sm_active_pct (Nsight Compute)."""
    from qlabench.cli.options import writable_folder
    from qlabench.workflows.profile import check_profilable, point_to_profile, profile_one, write_profile

    writable_folder(out)
    p = point_to_profile(suite, index, backend=backend, mode=mode, heads=heads, seqlens=seqlens, layout=layout,
                         batch=batch, dtype=dtype, head_dim=kv)
    check_profilable(p, device)
    console.print(f"profiling {p.label()} on {device}")
    prof = profile_one(p, device, kineto=not no_kineto, ncu=not no_ncu)
    if prof.events:
        console.print(_breakdown_table(prof))
        console.print(f"sm_coverage {prof.sm_coverage:.3f}  (wave-aware {prof.sm_coverage_waves:.3f})")
    else:
        console.print(f"[yellow]no kernel breakdown:[/yellow] {prof.kineto_reason}")
    if prof.ncu:
        console.print(_ncu_table(prof.ncu))
        sa = prof.sm_active_pct
        console.print(f"sm_active_pct {'-' if sa is None else f'{sa:.1f}'}")
    else:
        console.print(f"[yellow]no ncu metrics:[/yellow] {prof.ncu_reason}")
    run_id = dt.datetime.now(dt.timezone.utc).strftime("%Y%m%dT%H%M%SZ") + f"-{p.backend}-{p.mode}"
    for path in write_profile(prof, out, run_id):
        console.print(f"wrote {path}")


def kernels_cmd(
    results: list[Path] = typer.Argument(..., help="Result files or folders"),
    out: Path = typer.Option(None, "--out", "-o", help="Also write the per-kernel table (one row per launch) "
                             "to this parquet file"),
    top: int = typer.Option(15, "--top", "-n", min=1, help="Kernels to list, by total time"),
):
    """The kernels that take the time in GPU rows: a top-N table by total time (`-o` writes every launch).

    Names longer than 70 characters are cut in the table; `-o`'s parquet keeps them whole.
    """
    import pyarrow as pa

    from qlabench.core.errors import StoreError
    from qlabench.store.files import read_results
    from qlabench.cli.options import writable_file
    from qlabench.store.kernels import kernels_from_results, write_kernels

    if out is not None:
        writable_file(out, "--out", inputs=results, writes="kernels")
    tables = kernels_from_results(read_results(results))
    if not tables:
        raise StoreError("no row in these results carries a kernel breakdown (GPU runs only)")
    launches = pa.concat_tables(tables).to_pandas()
    agg = (launches.groupby("name").agg(total_us=("dur_us", "sum"), launches=("dur_us", "size"),
                                        mean_us=("dur_us", "mean"), backends=("backend", lambda b: sorted(set(b))))
           .sort_values("total_us", ascending=False))
    total = agg["total_us"].sum()
    t = Table(title=f"top {min(top, len(agg))} of {len(agg)} kernels by total time, {len(tables)} rows")
    for c in ("kernel", "total us", "share %", "launches", "mean us", "backends"):
        t.add_column(c, justify="left" if c in ("kernel", "backends") else "right", overflow="fold")
    for name, r in agg.head(top).iterrows():
        short = str(name).removeprefix("void ")  # the full names are in -o's table
        t.add_row(escape(short if len(short) <= 70 else short[:69] + "…"), f"{r.total_us:.1f}", f"{100 * r.total_us / total:.1f}" if total else "-",
                  str(r.launches), f"{r.mean_us:.1f}", escape(" ".join(r.backends)))
    console.print(t)
    if out is not None:
        write_kernels(out, tables)
        console.print(f"wrote {len(launches)} kernel launches of {len(tables)} rows -> {out}")


def ncu_child_cmd(
    point_json: str = typer.Option(..., "--point-json"),
    device: str = typer.Option("cuda", "--device"),
):
    """Run one point's call between cudaProfilerStart/Stop (launched by ncu; not for direct use)."""
    from qlabench.measure.probes.ncu import point_from_json
    from qlabench.run.ncu_child import run_child

    run_child(point_from_json(point_json), device)
