"""A run's time as the command line says it: where it went, once it is over (`time_line`), and what it should
cost before it starts (`estimate_line`, priced from the evidence as `run sweep --dry-run` prices points)."""

from __future__ import annotations


def _secs(s: float) -> str:
    return f"{s:.1f}" if s < 10 else f"{s:.0f}"


def time_line(b) -> str:
    """Where a run's time went, in one line (run/phases.py's TimeBreakdown): 'time 321 s: first calls 159,
    checks 130, sampling 2.9, other 12, idle 17'; the warm-up first where one ran, the workers where several."""
    parts = [("warm-up", b.warmup_s)] if b.warmup_s else []
    parts += [("first calls", b.first_calls_s), ("checks", b.checks_s), ("sampling", b.sampling_s),
              ("other", b.other_s), ("idle", b.outside_s)]
    workers = f" ({b.workers} workers' seconds)" if b.workers > 1 else ""
    return f"time {_secs(b.total_s)} s{workers}: " + ", ".join(f"{k} {_secs(v)}" for k, v in parts)
