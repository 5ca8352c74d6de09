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


def estimate_line(cost, model: str) -> str:
    """What the points should cost inside the sweep, priced from the evidence (analyze/evidence/costs.py's
    DeviceCost: `run sweep --dry-run`'s pricing), saying which GPU model's rows priced them."""
    from qlabench.analyze.evidence.costs import duration

    if cost is None:
        return "estimate: none (no recorded row of these backends and modes records its phases)"
    where = "" if cost.device == model else f", as they ran on {cost.device}"
    unknown = f"; {cost.unknown} of a backend and mode never measured, not priced" if cost.unknown else ""
    return (f"estimate: about {duration(cost.seconds)} inside the points ({cost.own} at their own row's seconds, "
            f"{cost.at_median} at the median of their backend and mode{where}){unknown}; before a warm-up's savings")
