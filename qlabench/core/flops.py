"""FLOP and byte model of chunked Gated DeltaNet, forward and backward. Pure Python, no torch.

The model turns a median time into achieved TFLOP/s and GB/s and a fraction of the device's peaks.
It counts what the chunked (WY / UT-transform) algorithm does, not what the naive recurrence would:
the formulas are derived and listed term by term in docs/METRICS.md, and the functions below follow
that list one to one so the two can be checked against each other.

Conventions (see docs/METRICS.md for why):
- Only matrix products and the triangular inverse are counted (2 FLOPs per multiply-add); the
  elementwise gating, masking and decays are a few percent and vary by implementation.
- Tiles are counted dense: the causal mask does not halve K K^T, because the tensor cores compute the
  whole tile. A partial last chunk of a sequence costs a whole chunk, as the kernels pad it.
- Work is per value head: under GVA (h_v > h_qk) every value head has its own beta and gate, hence its
  own A, W and state, even though q and k are shared.
- Bytes are the compulsory traffic: each input read once and each output written once. Intermediates
  (g cumsum, A, the per-chunk states h) are left out unless `include_states=True`, which adds the
  chunk-boundary states the forward writes and the backward reads back.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from qlabench.core import bytes_model
from qlabench.core.dtypes import itemsize
from qlabench.core.errors import MeasureError
from qlabench.core.modes import mode_of
from qlabench.core.point import Point


@dataclass(frozen=True)
class Peaks:
    """Dense bf16 matmul TFLOP/s and device-copy GB/s (bytes read + bytes written per second)."""

    tflops: float | None
    gbps: float | None
    matmul_n: int | None = None
    copy_bytes: int | None = None
    # HBM read and write peaks, TB/s: the serving limit's (bytes_model.py). Each is the best of several kernels
    # (measure/probes/peaks.py): `read_kernel` / `write_kernel` name the one that reached it, `stream_bytes` is
    # the buffer they streamed, and `read_kernels` / `write_kernels` hold every candidate's (name, TB/s), a
    # candidate that could not run or did not do its work as (name, None) with why in `kernel_errors`.
    read_tbs: float | None = None
    write_tbs: float | None = None
    read_kernel: str | None = None
    write_kernel: str | None = None
    stream_bytes: int | None = None
    read_kernels: tuple[tuple[str, float | None], ...] = ()
    write_kernels: tuple[tuple[str, float | None], ...] = ()
    kernel_errors: tuple[tuple[str, str], ...] = ()

    def stream_record(self) -> dict:
        """What a row keeps of the HBM peaks besides the two numbers: which kernel reached each, over how
        many bytes, and every candidate's figure (None: it failed, with why)."""
        return {"read_kernel": self.read_kernel, "write_kernel": self.write_kernel, "bytes": self.stream_bytes,
                "read_tbs": dict(self.read_kernels), "write_tbs": dict(self.write_kernels),
                "failed": dict(self.kernel_errors)}


DEFAULT_CHUNK = 64

def num_chunks(point: Point, chunk_size: int = DEFAULT_CHUNK) -> int:
    """Chunks over all sequences; each sequence starts a fresh chunk and its tail is padded."""
    return sum(math.ceil(L / chunk_size) for L in point.seqlens)


def triangular_inverse_flops(C: int) -> int:
    """FLOPs to invert a unit lower-triangular C x C matrix by forward substitution.

    Entry (i, j), i > j, takes i - j - 1 multiply-adds; summed over the strictly lower triangle that
    is sum_d (C - d)(d - 1) = C(C-1)(C-2)/6 multiply-adds, i.e. C(C-1)(C-2)/3 FLOPs.
    """
    return C * (C - 1) * (C - 2) // 3


def forward_chunk_flops(C: int, K: int, V: int) -> int:
    """Forward FLOPs of one chunk of one value head (terms F1..F9 of docs/METRICS.md)."""
    return (
        2 * C * C * K  # F1  A = (beta K) K^T
        + triangular_inverse_flops(C)  # F2  T = (I + A)^-1
        + 2 * C * C * K  # F3  W = T (beta exp(G) K)
        + 2 * C * C * V  # F4  U' = T (beta V)
        + 2 * C * K * V  # F5  U = U' - W S
        + 2 * C * K * V  # F6  O_inter = Q S
        + 2 * C * C * K  # F7  P = Q K^T
        + 2 * C * C * V  # F8  O_intra = (P o M) U
        + 2 * C * K * V  # F9  S <- S + K^T U
    )


def backward_chunk_flops(C: int, K: int, V: int) -> int:
    """Backward FLOPs of one chunk of one value head, with recomputation (terms B1..B21).

    Follows FLA's chunk backward: recompute W, U and the states, the local dv, the reverse state
    recurrence dS, then dq/dk/dw and the WY-representation backward through T. The forward's
    A = T is assumed kept (FLA and FlashQLA keep it), so the inverse itself is not recomputed.
    """
    recompute = (
        2 * C * C * K  # B1  W = T (beta exp(G) K)
        + 2 * C * C * V  # B2  U' = T (beta V)
        + 2 * C * K * V  # B3  U = U' - W S
        + 2 * C * K * V  # B4  S <- S + K^T U
    )
    dv_and_states = (
        2 * C * C * K  # B5  P^T = K Q^T
        + 2 * C * C * V  # B6  dU = (P o M)^T dO
        + 2 * C * K * V  # B7  dU += K dS
        + 2 * C * K * V  # B8  dS_prev = Q^T dO
        + 2 * C * K * V  # B9  dS_prev -= W^T dU
    )
    dqkw = (
        2 * C * K * V  # B10 dQ = dO S^T
        + 2 * C * K * V  # B11 dK = U dS^T
        + 2 * C * K * V  # B12 dW = -dU S^T
        + 2 * C * C * V  # B13 dP = dO U^T
        + 2 * C * C * K  # B14 dQ += dP K
        + 2 * C * C * K  # B15 dK += dP^T Q
    )
    wy = (
        2 * C * C * K  # B16 d(beta exp(G) K) = T^T dW
        + 2 * C * C * V  # B17 d(beta V) = T^T dU'
        + 2 * C * C * K  # B18 dT = dW (beta exp(G) K)^T
        + 2 * C * C * V  # B19 dT += dU' (beta V)^T
        + 4 * C * C * C  # B20 dA = -T^T dT T^T (two C x C x C products)
        + 4 * C * C * K  # B21 dK += dA K + dA^T K
    )
    return recompute + dv_and_states + dqkw + wy


def flops(point: Point, chunk_size: int = DEFAULT_CHUNK) -> float:
    """FLOPs of one call of `point` in its mode: fwd, bwd / bwd_train (backward alone) or fwd_bwd (both).

    The model counts the math of a backward, not a library's recomputation: a FlashQLA `bwd` whose
    intra-card CP redoes the forward's CP pre-pass does more work than `bwd_train` for the same count.
    """
    per_head_chunk = 0
    mode = mode_of(point.mode)
    if mode.forward:
        per_head_chunk += forward_chunk_flops(chunk_size, point.K, point.V)
    if mode.backward:
        per_head_chunk += backward_chunk_flops(chunk_size, point.K, point.V)
    return float(per_head_chunk * point.h_v * num_chunks(point, chunk_size))


def _tensor_bytes(point: Point) -> dict[str, int]:
    """Bytes of every tensor the op reads or writes, by name (qlabench's input dtypes, inputs.py)."""
    T, N = point.total_tokens, point.num_seqs
    e = itemsize(point.dtype)  # q, k, v, o, do and the q/k/v gradients
    f = itemsize("float64" if point.dtype == "float64" else "float32")  # g, beta, states: fp32 (fp64 for fp64)
    qk = T * point.h_qk * point.K * e
    tv = T * point.h_v * point.V * e
    gate = T * point.h_v * f
    state = N * point.h_v * point.K * point.V * f
    h0 = state if point.initial_state else 0
    return {
        "q": qk, "k": qk, "v": tv, "g": gate, "beta": gate, "h0": h0,  # inputs
        "o": tv, "ht": state,  # forward outputs
        "do": tv, "dht": state,  # backward inputs
        "dq": qk, "dk": qk, "dv": tv, "dg": gate, "dbeta": gate, "dh0": h0,  # backward outputs
    }


def memory_bytes(point: Point) -> int:
    """What a point's tensors alone hold in memory: every input, output and gradient of `_tensor_bytes`, and a
    serving point's state pool twice (the drawn pool and the prepared call's working copy)."""
    pool = 0
    if point.is_serving:
        pool = 2 * point.pool * point.h_v * point.K * point.V * itemsize(point.state_dtype)
    return sum(_tensor_bytes(point).values()) + pool


_FWD_READ = ("q", "k", "v", "g", "beta", "h0")
_FWD_WRITE = ("o", "ht")
_BWD_READ = _FWD_READ + ("do", "dht")
_BWD_WRITE = ("dq", "dk", "dv", "dg", "dbeta", "dh0")


def state_bytes(point: Point, chunk_size: int = DEFAULT_CHUNK) -> int:
    """Bytes of the per-chunk states h (one K x V state per chunk per value head) in the input dtype."""
    return num_chunks(point, chunk_size) * point.h_v * point.K * point.V * itemsize(point.dtype)


def bytes_moved(point: Point, chunk_size: int = DEFAULT_CHUNK, include_states: bool = False) -> float:
    """Compulsory bytes of one call: each tensor the mode reads or writes, counted once.

    fwd reads q, k, v, g, beta, h0 and writes o, ht; bwd (and bwd_train) also reads do, dht and writes the gradients
    (o and ht are not rewritten); fwd_bwd is the union. With `include_states`, the chunk states h
    are added once per pass over them: fwd writes them, bwd reads them (FLA recomputes and writes
    them in the backward too, which this still leaves out), fwd_bwd writes and reads them.
    """
    b = _tensor_bytes(point)
    names: set[str] = set()
    passes = 0
    mode = mode_of(point.mode)
    if mode.forward:
        names.update(_FWD_READ + _FWD_WRITE)
        passes += 1
    if mode.backward:
        names.update(_BWD_READ + _BWD_WRITE)
        passes += 1
    total = sum(b[n] for n in names)
    if include_states:
        total += passes * state_bytes(point, chunk_size)
    return float(total)


def throughput(point: Point, median_ms: float | None, chunk_size: int = DEFAULT_CHUNK
               ) -> tuple[float | None, float | None]:
    """(TFLOP/s, GB/s) achieved by one call taking `median_ms`; (None, None) without a time."""
    if median_ms is None:
        return None, None
    if not math.isfinite(median_ms) or median_ms <= 0:
        raise MeasureError(f"median_ms must be a positive time, got {median_ms!r}")
    seconds = median_ms * 1e-3
    f, b = work(point, chunk_size)
    return f / seconds / 1e12, b / seconds / 1e9


def work(point: Point, chunk_size: int = DEFAULT_CHUNK) -> tuple[float, float]:
    """(FLOPs, compulsory bytes) of one call of `point` under its mode's work model: the chunked form's, or a
    serving step's of the token recurrence against a state pool (core/bytes_model.py)."""
    if mode_of(point.mode).work_model == "step":
        return bytes_model.recurrent_flops(point), float(bytes_model.step_bytes(point).moved)
    return flops(point, chunk_size), bytes_moved(point, chunk_size)


def peak_fractions(tflops: float | None, gbps: float | None, peaks: Peaks | None
                   ) -> tuple[float | None, float | None]:
    """Achieved over peak, each None when either side of the ratio is unknown."""

    def frac(x, peak):
        if x is None or peak is None or peak <= 0:
            return None
        return x / peak

    if peaks is None:
        return None, None
    return frac(tflops, peaks.tflops), frac(gbps, peaks.gbps)
