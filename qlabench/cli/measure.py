"""`advise --measure`: the rows the answer is missing on this GPU, measured with a warm-up and a progress bar,
then the answer again with them (workflows/measure_missing.py plans it; cli/warming.py shows the run)."""

from __future__ import annotations

from pathlib import Path

from rich.console import Console


def measure_and_answer(console: Console, q, ans, results: list[Path], out: Path, device: str | None,
                       warmup: bool | None, warmup_jobs: int | None):
    """Measure what `ans` misses here and return the answer from the evidence and the new run; `ans` itself
    where nothing is missing (said on `console`)."""
    import signal

    from qlabench.analyze.advise import advise
    from qlabench.cli.options import writable_folder
    from qlabench.cli.run_time import estimate_line, time_line
    from qlabench.cli.warming import warm_and_sweep
    from qlabench.workflows.measure_missing import plan_measure

    writable_folder(out)
    plan = plan_measure(q, ans, results, out, device, True if warmup_jobs else warmup, warmup_jobs)
    if plan.sweep is None:
        on = plan.model if plan.device != "none" else ", ".join(ans.devices) or "no GPU"
        console.print(f"nothing to measure: every candidate has a row for every case on {on}", highlight=False)
        return ans
    cases = "; ".join(f"{c.label}: {', '.join(b)}" for c, b in plan.missing.items())
    console.print(f"measuring {plan.points} points missing on {plan.model} ({cases}); suite {plan.suite_path}",
                  highlight=False)
    console.print(estimate_line(plan.cost, plan.model), highlight=False)
    signal.signal(signal.SIGTERM, _terminated)  # as `run sweep`: rows compacted, temp folders removed
    res, warmed = warm_and_sweep(console, plan.sweep, out, plan.prices)
    counts = ", ".join(f"{n} {s}" for s, n in res.status_counts().items()) or "none"
    console.print(f"{len(res.rows)} rows ({counts}) on {res.device} -> {res.path}", highlight=False)
    console.print(time_line(res.time_breakdown(warmed.wall_s if warmed else 0.0)), highlight=False)
    console.print()
    return advise(q, results, also=[res.path]) if res.path else ans


def _terminated(signum, frame):
    raise KeyboardInterrupt("SIGTERM")
