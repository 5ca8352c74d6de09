"""How a caller launches a call, and the time a row records for each way (docs/BENCHMARKS.md, "Three times").

A row records up to three times per call (core/result.py):
- `device_ms`: the call replayed in a CUDA graph, n calls per replay; what the GPU spends with the launch gaps
  gone. What an engine pays where it captures the call in its graphs (decode steps).
- `eager_ms`: the call launched back to back from Python, CUDA events around a burst of calls; launch gaps and
  the launching thread's own cost included. What a training step through autograd, or an engine's prefill
  outside its graphs, pays.
- `host_ms`: the launching thread's wall time per call in those bursts (before the device is waited for).
  Where it is near `eager_ms`, the host, not the GPU, sets the pace: a property of the host's CPU as much as
  of the kernel, so every row records the host's CPU model (`host_cpu`).

Pure Python (no torch): views and the store read it.
"""

from __future__ import annotations

import math

from qlabench.core.errors import ConfigError

LAUNCHES = ("graph", "eager")
# The column each launch regime ranks on.
TIME_COLUMN = {"graph": "device_ms", "eager": "eager_ms"}

# Each workload's default launch regime, read from how its users run the GDN call (docs/BENCHMARKS.md cites the
# source lines at the pinned engine versions):
# - train: a training step runs forward and backward through autograd, launched eagerly from Python;
# - prefill: vLLM's GDN attention is a splitting op of its piecewise CUDA graphs (it runs between the graph
#   pieces, launched eagerly), and a batch above the largest captured size runs with no graph at all; SGLang
#   captures decode batches only. A prefill call is therefore launched eagerly in both engines;
# - decode: both engines replay decode steps in their CUDA graphs.
DEFAULT_LAUNCH = {"train": "eager", "prefill": "eager", "decode": "graph"}

# A row is launch-bound when its eager time exceeds its device time by more than the larger of the two
# samplings' noise and this floor: two measurements of one call on the H200 differed by up to 5.4% within a run
# (docs/BENCHMARKS.md), so a smaller gap says nothing about the launch.
LAUNCH_BOUND_MIN = 0.05

# The eager probe primes each burst (one call launched before its start event) and holds at least this many calls
# a burst (measure/timing/launch.py). Before it did (qlabench before 2995594, 2026-12-05) a long call got one to
# three calls a burst, each burst starting on an idle device, so the first call's launch latency sat in the
# figure: FLA at 1x32768 read 1.797 ms against 1.1626 standalone in one process (docs/BENCHMARKS.md, "The cause: a
# burst that starts on an idle device"). A row's `eager_launch` details say which probe measured it.
PRIMED_MIN_CALLS = 4


def unprimed_eager(details: dict | None) -> bool:
    """Whether a row's eager time came from the probe before it primed its bursts: events-timed bursts of fewer
    than PRIMED_MIN_CALLS calls and no `primed` mark (`details`: the row's extra_json `eager_launch`)."""
    if not isinstance(details, dict) or details.get("timer") != "events" or details.get("primed"):
        return False
    calls = _finite(details.get("calls_per_burst"))
    return calls is not None and calls < PRIMED_MIN_CALLS


def _finite(x) -> float | None:
    try:
        v = float(x)
    except (TypeError, ValueError):
        return None
    return v if math.isfinite(v) else None


def launch_bound(device_ms, eager_ms, *rel_noises) -> bool | None:
    """Whether a call launched eagerly costs more than its device time beyond noise; None where either time is
    missing (a call that was not graph-captured has no device time to compare with)."""
    d, e = _finite(device_ms), _finite(eager_ms)
    if d is None or e is None or d <= 0:
        return None
    noise = max([LAUNCH_BOUND_MIN] + [v for v in map(_finite, rel_noises) if v is not None and v >= 0])
    return e > d * (1 + noise)


def check_launch(launch: str) -> str:
    """`launch` if it names a regime; ConfigError naming the choices otherwise."""
    if launch not in LAUNCHES:
        raise ConfigError(f"--launch must be one of {', '.join(LAUNCHES)}, got {launch!r}")
    return launch


def default_launch(workload: str) -> str:
    """The launch regime a workload's users run its call in (DEFAULT_LAUNCH)."""
    return DEFAULT_LAUNCH[workload]
