"""`qlabench warmup`: compile a suite's kernels ahead of a sweep, compile groups in parallel."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.markup import escape
from rich.progress import Progress, TimeElapsedColumn

from qlabench.cli import options as opt
from qlabench.cli.app import console
from qlabench.core.spec import DEFAULT_SUITE


def warmup_cmd(
    suite: str = opt.suite(DEFAULT_SUITE),
    jobs: int = opt.JOBS,
    device: str = opt.DEVICE,
    backends: str = opt.BACKENDS,
    modes: str = opt.MODES,
    heads: str = opt.HEADS,
    seqlens: str = opt.SEQLENS,
    cache_dir: Path = opt.CACHE_DIR,
):
    """Run every point once, untimed, so JIT compiles land in the kernel cache before the sweep.

    Every compile group (a backend's mode at one head configuration, dims and dtype) is a process of its own,
    --jobs of them at once, the backward groups first; one bar counts the groups, one the points as each is
    warmed. A library that builds a whole module on first use (FlashInfer's GDN prefill: minutes of nvcc) is
    built first, with its own progress bar, beside the other compile groups. The tuning store is left to the
    sweep's own first calls: a tuning benchmarked beside other groups' compiles would be another load's choice."""
    from qlabench.measure.caches import use_cache_dir

    use_cache_dir(cache_dir)
    from qlabench.core.spec import resolve_suite_path
    from qlabench.run.plan import Selection, plan_sweep
    from qlabench.run.warmup import head_groups, warm_suite

    path = str(resolve_suite_path(suite))
    # the sweep's plan, without its device (warm-up runs each group where --device says): every check of the
    # suite and the flags; the groups' processes read the suite file, so the plan's points go as indices into it
    plan = plan_sweep(path, selection=Selection(backends=backends, modes=modes, heads=heads, seqlens=seqlens),
                      on_device=False)
    source = plan.source
    only = None
    if any(v is not None for v in (backends, modes, heads, seqlens)):  # an empty value is an error, not no filter
        planned = set(plan.suite.points)
        only = {i for i, p in enumerate(source) if p in planned}
    groups = head_groups(source, only)
    with Progress(*Progress.get_default_columns(), TimeElapsedColumn(), console=console) as prog:
        task = prog.add_task(f"warming {len(groups)} compile groups", total=len(groups))
        points = prog.add_task(f"{sum(map(len, groups))} points", total=sum(map(len, groups)))
        build_tasks: dict[str, int] = {}
        build_failed = []

        def build_step(label, k, n, what):
            # a library build (FlashInfer's module): one bar, advanced per ninja step
            if label not in build_tasks:
                build_tasks[label] = prog.add_task(f"building {escape(label)}", total=n)
            prog.update(build_tasks[label], completed=k, total=n)

        def build_done(b):
            style = "green" if b.ok else "red"
            prog.console.print(f"[{style}]{escape(b.label)}[/{style}]: "
                               + (f"built in {b.wall_s:.1f}s" if b.ok else f"build failed after {b.wall_s:.1f}s"))
            if not b.ok:
                build_failed.append(b)
                for ln in b.error.splitlines()[-8:]:
                    prog.console.print("  " + escape(ln))

        def point(i, status):
            prog.advance(points)
            if status.startswith("error"):
                prog.console.print(f"  [red]{escape(source[i].label())}[/red]: {escape(status)}")

        def done(r):
            style = "green" if r.returncode == 0 else "red"
            prog.console.print(f"[{style}]{r.label}[/{style}]: {r.points} points in {r.wall_s:.1f}s "
                               f"(exit {r.returncode})")
            if r.returncode:  # the process itself failed: what it said last (point errors were shown as they came)
                for ln in [ln for ln in r.log_tail.splitlines() if "error" in ln.lower()][-5:]:
                    prog.console.print("  " + escape(ln))
            prog.advance(task)

        results = warm_suite(path, source, jobs, device, only=only, on_done=done, on_build_step=build_step,
                             on_build_done=build_done, on_point=point)
    if build_failed or any(r.returncode for r in results):
        raise typer.Exit(1)


def warm_group_cmd(
    suite: str = typer.Option(..., "--suite"),
    indices: str = typer.Option(..., "--indices"),
    device: str = typer.Option(None, "--device"),
):
    """Internal: warm the given point indices of a suite in this process."""
    from qlabench.core.spec import load_suite
    from qlabench.run.sweep import resolve_device
    from qlabench.run.warmup import point_line, warm_points

    s = load_suite(suite)
    dev = resolve_device(device or s.device)
    warm_points(s, [int(x) for x in indices.split(",")], dev,
                on_point=lambda i, status: print(point_line(i, status), flush=True))
