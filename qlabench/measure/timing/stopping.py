"""When to stop sampling: nvbench's rule of a noise target after a minimum count and time, with a cap."""

from __future__ import annotations

from dataclasses import dataclass

from qlabench.core.spec import TimingSpec
from qlabench.measure.timing.stats import summarize

NOISE_METRICS = ("iqr", "stdev")  # relative spread as IQR / median, or stdev / median


@dataclass(frozen=True)
class StopRule:
    """The stopping part of a TimingSpec; its defaults are TimingSpec's (core/spec.py), not repeated here."""

    min_samples: int = TimingSpec.min_samples
    max_samples: int = TimingSpec.max_samples
    min_time_s: float = TimingSpec.min_time_s
    max_time_s: float = TimingSpec.max_time_s
    target_rel_noise: float = TimingSpec.target_rel_noise
    noise_metric: str = NOISE_METRICS[0]

    def __post_init__(self) -> None:
        if self.noise_metric not in NOISE_METRICS:
            raise ValueError(f"noise_metric must be one of {NOISE_METRICS}, got {self.noise_metric!r}")

    @classmethod
    def from_spec(cls, spec) -> StopRule:
        return cls(min_samples=spec.min_samples, max_samples=spec.max_samples, min_time_s=spec.min_time_s,
                   max_time_s=spec.max_time_s, target_rel_noise=spec.target_rel_noise,
                   noise_metric=getattr(spec, "noise_metric", cls.noise_metric))

    def noise(self, samples) -> float:
        s = summarize(samples)
        return s.rel_noise if self.noise_metric == "iqr" else s.rel_stdev

    def noise_met(self, samples) -> bool:
        # A spread needs at least two samples, whatever min_samples says.
        return len(samples) >= max(2, self.min_samples) and self.noise(samples) <= self.target_rel_noise

    def done(self, samples, elapsed_s: float) -> tuple[bool, bool]:
        """(stop now, noise target met). Caps win: max_samples or max_time_s stop regardless."""
        met = self.noise_met(samples)
        if len(samples) >= self.max_samples or elapsed_s >= self.max_time_s:
            return True, met
        if len(samples) >= self.min_samples and elapsed_s >= self.min_time_s and met:
            return True, True
        return False, met

    def stopped_by(self, n_samples: int, noise_target_met: bool) -> str:
        """What ended a sampling of `n_samples` (as `done` decided): noise_target, max_samples or max_time."""
        if noise_target_met:
            return "noise_target"
        return "max_samples" if n_samples >= self.max_samples else "max_time"
