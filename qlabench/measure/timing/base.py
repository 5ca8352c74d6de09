"""The timer interface."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol


@dataclass(frozen=True)
class Measurement:
    timer: str
    samples_ms: tuple[float, ...]
    noise_target_met: bool
    details: dict = field(default_factory=dict)  # timer-specific facts (calls per sample, l2 flush, ...)


class Timer(Protocol):
    name: str

    def measure(self, fn: Callable[[], object]) -> Measurement:
        """Warm up, then sample per-call times of `fn` until the stop rule says enough."""
        ...
