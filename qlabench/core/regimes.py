"""Timing regimes: what the GPU did before a point's samples (docs/BENCHMARKS.md, "Timing regimes")."""

from __future__ import annotations

# What the GPU did before the samples (docs/BENCHMARKS.md, "Timing regimes"): `burst`, sampling starts
# right after the warm-up (short bursts from idle); `sustained`, the timed calls first run back to back for
# `sustained_ms`, so the samples see the clocks and power state of a GPU kept busy, as an engine under load.
REGIMES = ("burst", "sustained")
# The regime a ranking reads (docs/BENCHMARKS.md): an engine serving or training under load runs its steps
# back to back for seconds. A row from before `timing_regime` was recorded was a burst.
RECOMMENDED_REGIME = "sustained"
UNRECORDED_REGIME = "burst"


def lead_in_ms(regime: str, sustained_ms: float) -> float:
    """Milliseconds of back-to-back timed calls before a point's first sample: `sustained_ms` in the sustained
    regime, none in a burst."""
    return sustained_ms if regime == "sustained" else 0.0
