"""A sweep's warm-up as the command line shows it (workflows/warm_sweep.py): what it will do, a bar counting the
points warmed, a line per failure, then the sweep's own progress (cli/progress.py)."""

from __future__ import annotations

from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn


def warm_line(plan) -> str:
    """'warm-up: 12 compile groups (40 points) in 8 processes', or why there is none."""
    if not plan.jobs:
        return f"warm-up: none ({plan.why})" if plan.why else "warm-up: none"
    return (f"warm-up: {plan.groups} compile groups ({plan.points} points) in {plan.jobs} "
            f"process{'es' if plan.jobs > 1 else ''} before the sweep")


def warm_and_sweep(console: Console, suite, out, options, plan, prices: dict | None = None, sweep_plan=None):
    """`warm_then_sweep` with a bar for each: the warm-up's points, then the sweep's (counting `prices` down,
    each point's priced seconds, where given). `sweep_plan`: the run's checked plan (run/plan.py), run as it is."""
    from qlabench.cli.progress import RichProgress
    from qlabench.workflows.warm_sweep import warm_then_sweep

    if plan.jobs or plan.groups:  # a CPU sweep of the naive backends says nothing of a warm-up it never needed
        console.print(warm_line(plan), highlight=False)
    if not plan.jobs:
        with RichProgress(console, prices) as prog:
            return warm_then_sweep(suite, out, options, plan, progress=prog, sweep_plan=sweep_plan)
    columns = ((TextColumn("warming"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn()) if console.is_terminal
               else (MofNCompleteColumn(), TextColumn("points warmed,"), TimeElapsedColumn()))
    bar = Progress(*columns, console=console, transient=console.is_terminal)
    task = bar.add_task("warm", total=plan.points)

    def point(i, status):
        bar.advance(task)
        if status.startswith("error"):
            bar.console.print(f"  [red]warm-up[/red] point {i}: {escape(status)}", highlight=False)

    def group(r):
        if r.returncode:
            bar.console.print(f"  [red]warm-up[/red] {escape(r.label)}: exit {r.returncode}", highlight=False)

    state = {"bar": True}

    class _Then(RichProgress):
        def start(self, total):  # the warm-up is over when the sweep starts: its bar makes way
            if state["bar"]:
                state["bar"] = False
                bar.stop()
                console.print(f"warmed in {bar.tasks[0].elapsed or 0:.1f}s", highlight=False)
            super().start(total)

    bar.start()
    try:
        with _Then(console, prices) as prog:
            return warm_then_sweep(suite, out, options, plan, progress=prog, on_warm_point=point,
                                   on_warm_group=group, sweep_plan=sweep_plan)
    finally:
        if state["bar"]:
            bar.stop()
