"""When to stop sampling: nvbench's rule of a noise target after a minimum count and time, with a cap."""

from __future__ import annotations

from dataclasses import dataclass

from .stats import summarize


@dataclass(frozen=True)
class StopRule:
    min_samples: int = 5
    max_samples: int = 200
    min_time_s: float = 0.0
    max_time_s: float = 10.0
    target_rel_noise: float = 0.005

    @classmethod
    def from_spec(cls, spec) -> StopRule:
        return cls(min_samples=spec.min_samples, max_samples=spec.max_samples, min_time_s=spec.min_time_s,
                   max_time_s=spec.max_time_s, target_rel_noise=spec.target_rel_noise)

    def noise_met(self, samples) -> bool:
        return len(samples) >= max(2, self.min_samples) and summarize(samples).rel_noise <= self.target_rel_noise

    def done(self, samples, elapsed_s: float) -> tuple[bool, bool]:
        """(stop now, noise target met). Caps win: max_samples or max_time_s stop regardless."""
        met = self.noise_met(samples)
        if len(samples) >= self.max_samples or elapsed_s >= self.max_time_s:
            return True, met
        if len(samples) >= self.min_samples and elapsed_s >= self.min_time_s and met:
            return True, True
        return False, met
