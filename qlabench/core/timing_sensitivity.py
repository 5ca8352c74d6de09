"""Whether a point's time depends on how many calls one sample times together (pure; issue 36).

A timer that replays n calls per sample reports replay time / n. If something costs once per sample (a
clock that ramps up after the host's sync, a cache that is cold after the L2 flush, a workspace set up
on the first call of a burst), the per-call time moves with n, and the row's median is a property of
the timer as much as of the kernel. `[timing] sensitivity = true` times each point again at 1 call and at
`sensitivity_calls` calls per sample; `calls_sensitivity` below says whether the medians differ by more
than the samplings' own noise, and the row records the medians and that verdict
(`calls_sensitivity_ms`, `calls_sensitive`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from qlabench.core.errors import MeasureError

# A spread below this is never called a dependence, however quiet the samples were: two samplings of the
# same call under one timer differ by up to ~1% across fresh processes on the H200 (docs/BENCHMARKS.md).
FLOOR_REL = 0.01
# ... and above the floor, a spread counts only beyond this many times the noisier sampling's IQR / median.
NOISE_FACTOR = 2.0


@dataclass(frozen=True)
class CallsSensitivity:
    """The medians of one point at several calls per sample, and whether they differ beyond the noise."""

    medians_ms: dict[int, float]  # calls per sample -> median ms per call
    rel_noise: dict[int, float]  # calls per sample -> IQR / median of that sampling
    spread: float  # (slowest - fastest median) / fastest
    threshold: float  # the spread above which the time depends on the calls per sample
    sensitive: bool

    def as_details(self) -> dict:
        """What the row's extra_json keeps beside the two columns: the rule's inputs."""
        return {"rel_noise": {str(k): v for k, v in sorted(self.rel_noise.items())}, "spread": self.spread,
                "threshold": self.threshold}

    def note(self) -> str:
        """'0.716 ms at 2, 0.781 at 64 calls per sample (+9.1%, noise limit 1.0%)'."""
        items = sorted(self.medians_ms.items())
        parts = [f"{ms:.4g} ms at {n}" if i == 0 else f"{ms:.4g} at {n}" for i, (n, ms) in enumerate(items)]
        return f"{', '.join(parts)} calls per sample (+{self.spread:.1%}, noise limit {self.threshold:.1%})"


def calls_sensitivity(medians_ms: Mapping[int, float], rel_noise: Mapping[int, float],
                      floor: float = FLOOR_REL, factor: float = NOISE_FACTOR) -> CallsSensitivity:
    """The verdict for medians taken at several calls per sample (at least two counts, positive medians).

    Sensitive when (max - min) / min exceeds max(floor, factor x the largest relative noise)."""
    if len(medians_ms) < 2:
        raise MeasureError(f"a sensitivity needs medians at two or more calls per sample, got {dict(medians_ms)}")
    if any(not (ms > 0) for ms in medians_ms.values()):
        raise MeasureError(f"medians must be positive, got {dict(medians_ms)}")
    lo, hi = min(medians_ms.values()), max(medians_ms.values())
    spread = (hi - lo) / lo
    noise = max((float(x) for x in rel_noise.values() if x == x), default=0.0)  # NaN: no spread known
    threshold = max(floor, factor * noise)
    return CallsSensitivity(medians_ms={int(k): float(v) for k, v in medians_ms.items()},
                            rel_noise={int(k): float(v) for k, v in rel_noise.items()}, spread=spread,
                            threshold=threshold, sensitive=spread > threshold)


def sensitivity_counts(chosen: int, compare_with: int) -> tuple[int, ...]:
    """The calls per sample a sensitivity measures beside the row's own `chosen` count: 1 and
    `compare_with`, without repeating the chosen one."""
    return tuple(n for n in sorted({1, int(compare_with)}) if n != chosen)
