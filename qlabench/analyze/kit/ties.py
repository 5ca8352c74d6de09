"""The tie rule every view uses: two times are told apart only beyond their measured noise.

A row's `rel_noise` is its samples' spread over its median (the replicates' spread where a point was
measured several times: advise's Entry.rel_noise). Two times whose gap is within the larger of their two
noises are a tie: neither is called faster, counted as a win, or bolded. Where neither side recorded its
noise the rule falls back to UNKNOWN_NOISE, never to zero: an unmeasured spread is not a precise time.
"""

from __future__ import annotations

import math

UNKNOWN_NOISE = 0.02  # the spread assumed where no row recorded one (an H200 graph replay's is ~0.1-1%)


def _known(x) -> float | None:
    try:
        v = float(x)
    except (TypeError, ValueError):
        return None
    return v if math.isfinite(v) and v >= 0 else None


def tie_noise(*rel_noises) -> float:
    """The relative gap below which these times are a tie: the largest recorded noise, UNKNOWN_NOISE if none."""
    known = [v for v in map(_known, rel_noises) if v is not None]
    return max(known) if known else UNKNOWN_NOISE


def is_tie(a_ms: float, b_ms: float, *rel_noises) -> bool:
    """Whether two times are within their noise of each other (see tie_noise)."""
    lo, hi = sorted((float(a_ms), float(b_ms)))
    return hi / lo - 1 <= tie_noise(*rel_noises)


def faster_beyond_noise(a_ms: float, b_ms: float, *rel_noises) -> bool:
    """Whether `a_ms` is faster than `b_ms` beyond their noise."""
    return float(a_ms) * (1 + tie_noise(*rel_noises)) < float(b_ms)
