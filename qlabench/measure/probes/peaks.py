"""The device's measured peaks, taken once per run: a large bf16 matmul, a large device-to-device copy, and
HBM's read and write bandwidth, which the serving limit uses (core/bytes_model.py).

Datasheet peaks are not what a kernel can reach on the card as found (clocks, power cap), so the
fractions of peak in result rows are against these measured numbers. Importable without torch or CUDA;
`measure_peaks` returns None on a machine without a GPU.

A bandwidth peak is the best the card does, and no single kernel shows it: on an H200 `x.sum()` over 1 GiB
read 4.27 TB/s while a sum over 4 GiB of a float32 view read 4.47. A peak that is too low makes every
fraction of it read high. So each of the read and write peaks is the best of several kernels over one
large buffer (READ_KERNELS, WRITE_KERNELS; a Triton kernel of each where Triton imports), and the row
records which kernel won and every candidate's figure. A candidate counts only when its result shows it
did all its work (a sum that adds up, an amax that finds the one larger element, a fill that reached the
end): a kernel that skipped bytes would otherwise set an impossible peak.
"""

from __future__ import annotations

from qlabench.core.flops import Peaks

MATMUL_N = 8192  # 8192^3 bf16: ~1.1 TFLOP per call, long enough to hide launch cost, and shape-friendly
COPY_BYTES = 1 << 30  # 1 GiB: far above the H200's 60 MB L2, so the copy streams from and to HBM
# The read and write peaks stream 4 GiB (far above any L2; longer passes hide each kernel's ramp and tail),
# or a quarter of the free memory where that is less.
STREAM_BYTES = 4 << 30
ROW = 16384  # the row length of the row-wise sum
READ_KERNELS = ("sum", "sum-f64-view", "amax", "row-sum", "triton-sum")
WRITE_KERNELS = ("fill", "zero", "fill-i64-view", "triton-store")


def matmul_tflops(n: int, ms: float) -> float:
    """TFLOP/s of an n x n x n matmul taking `ms` (2 n^3 FLOPs)."""
    return 2.0 * n**3 / (ms * 1e-3) / 1e12


def copy_gbps(nbytes: int, ms: float) -> float:
    """GB/s of a copy of `nbytes` taking `ms`: the bytes are read once and written once."""
    return 2.0 * nbytes / (ms * 1e-3) / 1e9


def stream_tbs(nbytes: int, ms: float) -> float:
    """TB/s of a pass that reads (or writes) `nbytes` once in `ms`."""
    return nbytes / (ms * 1e-3) / 1e12


def best_of(figures: dict[str, float | None]) -> tuple[str | None, float | None]:
    """The kernel with the highest figure and that figure; (None, None) when none ran."""
    ran = {k: v for k, v in figures.items() if v is not None}
    if not ran:
        return None, None
    name = max(ran, key=ran.__getitem__)
    return name, ran[name]


def stream_size(free_bytes: int, cap: int = STREAM_BYTES) -> int:
    """Bytes the read/write peaks stream: `cap`, or a quarter of the free memory where that is less, in whole
    rows of the row-wise sum (float32)."""
    unit = ROW * 4
    return max(unit, min(cap, free_bytes // 4) // unit * unit)


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


def _close(got: float, want: float, rel: float = 1e-3) -> str | None:
    """None when `got` is within `rel` of `want`; else why the kernel does not count."""
    if abs(got - want) <= rel * abs(want):
        return None
    return f"result {got!r}, expected {want!r}: the kernel did not read every byte"


def _read_candidates(buf):
    """name -> (call, check): `buf` (float32 ones, the last element 2.0) read once per call; check() runs one
    more call and says why the result shows missing work (None: complete)."""
    import torch

    x = buf.view(torch.float32)
    n = x.numel()
    total = float(n + 1)
    ones64 = torch.ones(2, dtype=torch.float32).view(torch.float64).item()
    last64 = torch.tensor([1.0, 2.0], dtype=torch.float32).view(torch.float64).item()
    x64 = buf.view(torch.float64)
    rows = x.view(-1, ROW)
    out = {
        "sum": (lambda: x.sum(), lambda: _close(x.sum().item(), total)),
        # the same bytes as float64: half the elements, twice the bytes per load
        "sum-f64-view": (lambda: x64.sum(), lambda: _close(x64.sum().item(), ones64 * (n // 2 - 1) + last64, 1e-6)),
        "amax": (lambda: torch.amax(x), lambda: _close(torch.amax(x).item(), 2.0, 0.0)),
        "row-sum": (lambda: rows.sum(dim=1), lambda: _close(rows.sum(dim=1).sum().item(), total)),
    }
    try:
        from qlabench.measure.probes import peak_kernels
    except ImportError as e:
        out["triton-sum"] = e
    else:
        partial = torch.empty(peak_kernels.programs(x.device), device=x.device, dtype=torch.float32)
        out["triton-sum"] = (lambda: peak_kernels.read_sum(x, partial),
                             lambda: _close(peak_kernels.read_sum(x, partial).sum().item(), total))
    return out


def _write_candidates(buf):
    """name -> (call, check): each call writes all of `buf`; check() runs one more call and reads a few
    elements back, the last among them."""
    import torch

    x, x64 = buf.view(torch.float32), buf.view(torch.int64)

    def reached(t, value) -> str | None:
        got = [t[i].item() for i in (0, t.numel() // 2, t.numel() - 1)]
        return None if all(g == value for g in got) else f"read back {got}, wrote {value!r}: not every byte written"

    out = {
        "fill": (lambda: x.fill_(3.0), lambda: reached(x.fill_(3.0), 3.0)),
        "zero": (lambda: buf.zero_(), lambda: reached(buf.zero_(), 0)),
        "fill-i64-view": (lambda: x64.fill_(7), lambda: reached(x64.fill_(7), 7)),
    }
    try:
        from qlabench.measure.probes import peak_kernels
    except ImportError as e:
        out["triton-store"] = e
    else:
        out["triton-store"] = (lambda: peak_kernels.write_value(x, 5.0),
                               lambda: reached(peak_kernels.write_value(x, 5.0), 5.0))
    return out


def _run_candidates(candidates, nbytes: int, reps: int, trials: int, errors: dict) -> dict[str, float | None]:
    """Each candidate's TB/s over `nbytes`, or None (its reason in `errors`): one that fails or does not do all
    its work sets no peak, and the others still run."""
    figures: dict[str, float | None] = {}
    for name, cand in candidates.items():
        figures[name] = None
        if isinstance(cand, Exception):
            errors[name] = f"unavailable: {type(cand).__name__}: {cand}"[:200]
            continue
        call, check = cand
        try:
            ms = _best_ms(call, reps, trials)
            why = check()
        except Exception as e:  # a kernel this torch/GPU cannot run: the others decide the peak
            errors[name] = f"{type(e).__name__}: {e}"[:200]
            continue
        if why:
            errors[name] = why
            continue
        figures[name] = stream_tbs(nbytes, ms)
    return figures


def stream_peaks(dev, nbytes: int, reps: int, trials: int) -> dict:
    """The read and write peaks over one buffer of `nbytes`: each the best of its candidates, with the
    winner's name, every candidate's TB/s and why any did not count."""
    import torch

    buf = torch.empty(nbytes, device=dev, dtype=torch.uint8)
    errors: dict[str, str] = {}
    writes = _run_candidates(_write_candidates(buf), nbytes, reps, trials, errors)
    x = buf.view(torch.float32)
    x.fill_(1.0)
    x[-1] = 2.0  # amax must find it; every sum must count it
    reads = _run_candidates(_read_candidates(buf), nbytes, reps, trials, errors)
    del buf, x
    read_kernel, read_tbs = best_of(reads)
    write_kernel, write_tbs = best_of(writes)
    return dict(read_tbs=read_tbs, write_tbs=write_tbs, read_kernel=read_kernel, write_kernel=write_kernel,
                stream_bytes=nbytes, read_kernels=tuple(reads.items()), write_kernels=tuple(writes.items()),
                kernel_errors=tuple(errors.items()))


def measure_peaks(device: str = "cuda", matmul_n: int = MATMUL_N, copy_bytes: int = COPY_BYTES,
                  reps: int = 10, trials: int = 5, stream_bytes: int = STREAM_BYTES) -> Peaks | None:
    """Measure the peaks on `device`; None when it is not a CUDA device or CUDA is unavailable."""
    import torch

    dev = torch.device(device)
    if dev.type != "cuda" or not torch.cuda.is_available():
        return None
    with torch.cuda.device(dev):
        mm_ms = _matmul_ms(dev, matmul_n, reps, trials)
        cp_ms = _copy_ms(dev, copy_bytes, reps, trials)
        torch.cuda.empty_cache()
        stream = stream_peaks(dev, stream_size(torch.cuda.mem_get_info(dev)[0], stream_bytes), reps, trials)
        torch.cuda.empty_cache()
    return Peaks(tflops=matmul_tflops(matmul_n, mm_ms), gbps=copy_gbps(copy_bytes, cp_ms),
                 matmul_n=matmul_n, copy_bytes=copy_bytes, **stream)
