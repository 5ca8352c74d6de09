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


def warm_and_sweep(console: Console, plan, out, prices: dict | None = None):
    """`warm_then_sweep` of a plan (run/plan.py) with a bar for each: the warm-up's points, then the sweep's
    (counting `prices` down, each point's priced seconds, where given)."""
    from qlabench.cli.progress import RichProgress
    from qlabench.workflows.warm_sweep import warm_then_sweep

    warm = plan.warmup
    if warm.jobs or warm.groups:  # a CPU sweep of the naive backends says nothing of a warm-up it never needed
        console.print(warm_line(warm), highlight=False)
    bar = _WarmBar(console, warm.points) if warm.jobs else None
    try:
        with RichProgress(console, prices) if bar is None else bar.then(prices) as prog:
            return warm_then_sweep(plan, out, progress=prog, on_warm_point=bar and bar.point,
                                   on_warm_group=bar and bar.group)
    finally:
        if bar is not None:
            bar.stop()


class _WarmBar:
    """The warm-up's bar: each point warmed advances it, a failure is a line under it; the sweep's bar takes its
    place when the sweep starts (`then`)."""

    def __init__(self, console: Console, points: int):
        bar = (TextColumn("warming"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
        count = (MofNCompleteColumn(), TextColumn("points warmed,"), TimeElapsedColumn())
        columns = bar if console.is_terminal else count
        self.console = console
        self.bar = Progress(*columns, console=console, transient=console.is_terminal)
        self.task = self.bar.add_task("warm", total=points)
        self.bar.start()
        self.shown = True

    def point(self, i, status):
        self.bar.advance(self.task)
        if status.startswith("error"):
            self.bar.console.print(f"  [red]warm-up[/red] point {i}: {escape(status)}", highlight=False)

    def group(self, r):
        if r.returncode:
            self.bar.console.print(f"  [red]warm-up[/red] {escape(r.label)}: exit {r.returncode}", highlight=False)

    def stop(self) -> bool:
        """Take the bar away (once); whether it was still shown."""
        shown, self.shown = self.shown, False
        if shown:
            self.bar.stop()
        return shown

    def then(self, prices: dict | None):
        """The sweep's progress, which first takes the warm-up's bar away: the warm-up is over when the sweep starts."""
        from qlabench.cli.progress import RichProgress

        warm = self

        class _Then(RichProgress):
            def start(self, total):
                if warm.stop():
                    warm.console.print(f"warmed in {warm.bar.tasks[0].elapsed or 0:.1f}s", highlight=False)
                super().start(total)

        return _Then(self.console, prices)
