"""A test backend with a slowdown knob, for measuring how well `qlabench compare` catches regressions.

`synthetic` computes the gated delta rule with the plain-PyTorch chunked form (so its outputs are the
naive-chunk outputs and pass the correctness check), and then, on every timed call, spins for
(factor - 1) times the time that call just took. The slowdown is therefore relative to each call's
own time: factor 1.05 makes every sample 5% slower, noise and all, which is what a real +5% kernel
regression looks like. Spinning (not sleeping) keeps the core busy, as a slower kernel would, and
is accurate to well under a microsecond where `time.sleep` rounds to the scheduler tick.

On CUDA the spin runs on the device instead: after the call, a `torch.cuda._sleep` kernel of
(factor - 1) times the call's device time, calibrated when the point is prepared (the call's time from
a CUDA-graph replay where it can be captured, as the graph timer sees it, else from CUDA events; the
sleep kernel's cycles per millisecond measured alongside). Being a kernel, the delay is captured into
CUDA graphs and shows up under every GPU timer, as a slower kernel would.

The factor is read when a point is prepared, from the environment variable
    QLABENCH_SYNTHETIC_SLOWDOWN   (default 1.0; e.g. 1.05 for +5%; must be >= 1)
so a whole suite (and its worker processes, which inherit the environment) can be slowed at once.

A second knob makes the time depend on how many calls one sample holds (for `[timing] sensitivity`):
    QLABENCH_SYNTHETIC_COLD_MS    (default 0; CPU only)
a call that starts after the host was idle for more than IDLE_GAP_S (the first of a sample: the timer
worked out its statistics in between) first spins this many milliseconds, as a GPU call pays for clocks
ramping up or a cold cache after idling. Calls back to back pay nothing, so the per-call time of a
sample of n calls falls as n grows. On CUDA the host does not see where a graph replay starts, so the
knob is refused there rather than silently ignored.
"""

from __future__ import annotations

import os
import statistics
import time
from collections.abc import Callable

import torch

from qlabench.core.errors import BackendError
from qlabench.measure.inputs import GDNInputs
from qlabench.backends.reference import chunk_gated_delta_rule
from qlabench.core.spec import TimingSpec
from qlabench.backends.base import Backend, Outputs

SLOWDOWN_ENV = "QLABENCH_SYNTHETIC_SLOWDOWN"
COLD_ENV = "QLABENCH_SYNTHETIC_COLD_MS"
# Back-to-back calls in a timer's loop are well under a microsecond apart; between two samples the timer
# computes its statistics (numpy percentiles, twice), tens of microseconds.
IDLE_GAP_S = 10e-6


def _env_number(var: str, default: str, low: float, what: str) -> float:
    """A number from environment variable `var` (`default` when unset), at least `low`; BackendError if not."""
    raw = os.environ.get(var, default)
    try:
        value = float(raw)
    except ValueError:
        raise BackendError(f"{var}={raw!r} is not a number") from None
    if not value >= low:
        raise BackendError(f"{var}={raw!r}: {what}")
    return value


def slowdown_factor() -> float:
    return _env_number(SLOWDOWN_ENV, "1", 1.0, "the factor must be >= 1 (1.05 = 5% slower)")


def cold_call_ms() -> float:
    return _env_number(COLD_ENV, "0", 0.0, "the extra milliseconds must be >= 0")


def cold_after_idle(run: Callable[[], Outputs], extra_s: float, gap_s: float = IDLE_GAP_S) -> Callable[[], Outputs]:
    """`run`, plus a spin of `extra_s` before every call that starts more than `gap_s` after the last one ended."""
    last_end = [float("-inf")]

    def call() -> Outputs:
        if time.perf_counter() - last_end[0] > gap_s:
            _spin(extra_s)
        out = run()
        last_end[0] = time.perf_counter()
        return out

    return call


def _spin(seconds: float) -> None:
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        pass


class Synthetic(Backend):
    chunk_size = 64

    def forward(self, inp: GDNInputs) -> tuple[torch.Tensor, torch.Tensor]:
        return chunk_gated_delta_rule(
            inp.q, inp.k, inp.v, inp.g, inp.beta, scale=inp.scale, initial_state=inp.h0,
            cu_seqlens=inp.cu_seqlens, chunk_size=self.chunk_size,
        )

    def prepare(self, mode: str, inp: GDNInputs) -> Callable[[], Outputs]:
        run = super().prepare(mode, inp)
        if cold_ms := cold_call_ms():
            if inp.q.is_cuda:
                raise BackendError(f"{COLD_ENV} works on CPU only: the host cannot see where a CUDA graph's "
                                   "sample starts")
            run = cold_after_idle(run, cold_ms / 1e3)
        factor = slowdown_factor()
        if factor == 1.0:
            return run
        if inp.q.is_cuda:
            cycles = gpu_delay_cycles(run, factor - 1.0)

            def slowed_on_gpu() -> Outputs:
                out = run()
                torch.cuda._sleep(cycles)
                return out

            return slowed_on_gpu

        def slowed() -> Outputs:
            t0 = time.perf_counter()
            out = run()
            _spin((factor - 1.0) * (time.perf_counter() - t0))
            return out

        return slowed


# A short measurement with the project's own GPU timer: per-call time from a CUDA-graph replay where
# the call can be captured (as the graph timer sees the point), else CUDA events around eager calls.
_CALIBRATION = TimingSpec(timer="graph", warmup=2, min_samples=5, max_samples=20, max_time_s=0.2)


def _device_ms(fn: Callable[[], object]) -> float:
    from qlabench.measure.timing import make_timer

    return statistics.median(make_timer("graph", "cuda", _CALIBRATION).measure(fn).samples_ms)


def sleep_cycles_per_ms(probe_cycles: int = 2_000_000) -> float:
    """How many `torch.cuda._sleep` cycles make a millisecond on this device at its current clock."""
    return probe_cycles / _device_ms(lambda: torch.cuda._sleep(probe_cycles))


def delay_cycles(extra: float, call_ms: float, cycles_per_ms: float) -> int:
    """Sleep cycles that add `extra` (0.05 = +5%) of a call taking `call_ms`."""
    return max(0, round(extra * call_ms * cycles_per_ms))


def gpu_delay_cycles(run: Callable[[], Outputs], extra: float) -> int:
    return delay_cycles(extra, _device_ms(run), sleep_cycles_per_ms())
