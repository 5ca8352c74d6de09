"""The device's measured peaks, taken once per run: a large bf16 matmul, a large device-to-device copy, and
HBM's read (a reduction) and write (a fill) bandwidth, which the serving limit uses (core/bytes_model.py).

Datasheet peaks are not what a kernel can reach on the card as found (clocks, power cap), so the
fractions of peak in result rows are against these measured numbers. Importable without torch or CUDA;
`measure_peaks` returns None on a machine without a GPU.
"""

from __future__ import annotations

from qlabench.core.flops import Peaks

MATMUL_N = 8192  # 8192^3 bf16: ~1.1 TFLOP per call, long enough to hide launch cost, and shape-friendly
COPY_BYTES = 1 << 30  # 1 GiB: far above the H200's 60 MB L2, so the copy streams from and to HBM


def matmul_tflops(n: int, ms: float) -> float:
    """TFLOP/s of an n x n x n matmul taking `ms` (2 n^3 FLOPs)."""
    return 2.0 * n**3 / (ms * 1e-3) / 1e12


def copy_gbps(nbytes: int, ms: float) -> float:
    """GB/s of a copy of `nbytes` taking `ms`: the bytes are read once and written once."""
    return 2.0 * nbytes / (ms * 1e-3) / 1e9


def stream_tbs(nbytes: int, ms: float) -> float:
    """TB/s of a pass that reads (or writes) `nbytes` once in `ms`."""
    return nbytes / (ms * 1e-3) / 1e12


def _best_ms(fn, reps: int, trials: int) -> float:
    """Fastest mean per-call time over `trials` batches of `reps` back-to-back calls (CUDA events).

    A peak is the best the card does, so the fastest batch is kept; batching hides launch gaps.
    """
    import torch

    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    best = float("inf")
    for _ in range(trials):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(reps):
            fn()
        end.record()
        end.synchronize()
        best = min(best, start.elapsed_time(end) / reps)
    return best


def _matmul_ms(dev, n: int, reps: int, trials: int) -> float:
    import torch

    a = torch.randn(n, n, device=dev, dtype=torch.bfloat16)
    b = torch.randn(n, n, device=dev, dtype=torch.bfloat16)
    c = torch.empty(n, n, device=dev, dtype=torch.bfloat16)
    return _best_ms(lambda: torch.matmul(a, b, out=c), reps, trials)


def _copy_ms(dev, nbytes: int, reps: int, trials: int) -> float:
    import torch

    src = torch.empty(nbytes, device=dev, dtype=torch.uint8)
    dst = torch.empty_like(src)
    return _best_ms(lambda: dst.copy_(src), reps, trials)


def _read_ms(dev, nbytes: int, reps: int, trials: int) -> float:
    import torch

    x = torch.ones(nbytes // 4, device=dev, dtype=torch.float32)
    return _best_ms(lambda: x.sum(), reps, trials)


def _write_ms(dev, nbytes: int, reps: int, trials: int) -> float:
    import torch

    x = torch.empty(nbytes // 4, device=dev, dtype=torch.float32)
    return _best_ms(lambda: x.fill_(1.0), reps, trials)


def measure_peaks(device: str = "cuda", matmul_n: int = MATMUL_N, copy_bytes: int = COPY_BYTES,
                  reps: int = 10, trials: int = 5) -> Peaks | None:
    """Measure the peaks on `device`; None when it is not a CUDA device or CUDA is unavailable."""
    import torch

    dev = torch.device(device)
    if dev.type != "cuda" or not torch.cuda.is_available():
        return None
    with torch.cuda.device(dev):
        mm_ms = _matmul_ms(dev, matmul_n, reps, trials)
        cp_ms = _copy_ms(dev, copy_bytes, reps, trials)
        rd_ms = _read_ms(dev, copy_bytes, reps, trials)
        wr_ms = _write_ms(dev, copy_bytes, reps, trials)
        torch.cuda.empty_cache()
    return Peaks(tflops=matmul_tflops(matmul_n, mm_ms), gbps=copy_gbps(copy_bytes, cp_ms),
                 matmul_n=matmul_n, copy_bytes=copy_bytes, read_tbs=stream_tbs(copy_bytes, rd_ms),
                 write_tbs=stream_tbs(copy_bytes, wr_ms))
