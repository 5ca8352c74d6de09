"""The byte model of a serving step (decode, mtp) and its bandwidth limit. Pure Python, no torch.

A decode step is memory-bound: each sequence's K x V state per value head is read and written once per
step, and at batch 256 with 32 value heads of 128 x 128 fp32 that is 512 MiB each way, against a few MiB
of q, k, v and o. So the time a step cannot beat is the compulsory traffic over the device's measured
bandwidth, and a kernel's fraction of that limit says how close to the hardware it runs.

Compulsory bytes of one step of B sequences of T tokens (counted once each; the gather and scatter an
engine may add around a kernel without a slot-indexed pool are real traffic but not compulsory, so they
show as a lower fraction):
    read:    the B states (state dtype), q and k (B T h_qk K), v (B T h_v V) in the input dtype,
             g and beta (B T h_v, float32), the B int32 slot indices
    written: the B states, o (B T h_v V) in the input dtype
The limit is `bytes_read / read_peak + bytes_written / write_peak` seconds, with the peaks measured on
the device (measure/probes/peaks.py: each the best of several streaming kernels, reads and writes). A
copy's figure is not used: on the H200 `y.copy_(x)` moves 2.7 TB/s (read + write) while a decode kernel that reads and writes
its states reaches 3.0 TB/s, so a fraction of the copy figure would pass 100% for a correct kernel.
A fraction above 1 is impossible for a correct measurement (a kernel that skipped work, or a state left
in L2 across steps); run/point.py fails such a row's check.
"""

from __future__ import annotations

from dataclasses import dataclass

from qlabench.core.dtypes import itemsize
from qlabench.core.errors import MeasureError
from qlabench.core.point import Point

GATE_BYTES = 4  # g and beta are float32 (measure/inputs.py)
SLOT_BYTES = 4  # int32 slot indices


@dataclass(frozen=True)
class StepBytes:
    read: int
    written: int

    @property
    def moved(self) -> int:
        return self.read + self.written


def state_bytes(point: Point) -> int:
    """Bytes of the batch's states in the pool's dtype (read once, and written once, per step)."""
    return point.batch * point.h_v * point.K * point.V * itemsize(point.state_dtype)


def step_bytes(point: Point) -> StepBytes:
    """The compulsory bytes of one serving step of `point` (a decode or mtp point)."""
    if not point.is_serving:
        raise MeasureError(f"the serving byte model is for decode/mtp points, not {point.mode}")
    B, T, e = point.batch, point.tokens_per_seq, itemsize(point.dtype)
    qk = B * T * point.h_qk * point.K * e
    tv = B * T * point.h_v * point.V * e
    gates = 2 * B * T * point.h_v * GATE_BYTES
    states = state_bytes(point)
    return StepBytes(read=states + 2 * qk + tv + gates + B * SLOT_BYTES, written=states + tv)


def limit_seconds(b: StepBytes, read_tbs: float, write_tbs: float) -> float:
    """The fastest a step moving `b` can be on a device with these peaks (TB/s)."""
    if not (read_tbs > 0 and write_tbs > 0):
        raise MeasureError(f"peaks must be positive TB/s, got read {read_tbs!r}, write {write_tbs!r}")
    return b.read / (read_tbs * 1e12) + b.written / (write_tbs * 1e12)


def bandwidth_fraction(b: StepBytes, median_ms: float | None, read_tbs: float | None,
                       write_tbs: float | None) -> float | None:
    """The limit's time over the measured one (1.0: at the limit); None when a side is unknown."""
    if median_ms is None or read_tbs is None or write_tbs is None:
        return None
    if not median_ms > 0:
        raise MeasureError(f"median_ms must be a positive time, got {median_ms!r}")
    return limit_seconds(b, read_tbs, write_tbs) / (median_ms * 1e-3)


def recurrent_flops(point: Point) -> float:
    """FLOPs of a serving step in the token recurrence (2 per multiply-add, per token and value head):
    decay the state (K V), k^T S (2 K V), the rank-1 update (2 K V), q^T S (2 K V): 7 K V."""
    return float(7 * point.K * point.V * point.h_v * point.batch * point.tokens_per_seq)
