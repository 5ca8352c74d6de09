"""The eager launch probe on a real GPU: a call of many tiny kernels is launch-bound, one large matmul is not."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")
pytestmark = [pytest.mark.gpu, pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")]


def test_many_tiny_kernels_are_launch_bound_and_one_large_matmul_is_not():
    from qlabench.core.launch import launch_bound
    from qlabench.measure.timing.launch import measure_launch

    x = torch.ones(64, device="cuda")

    def tiny():
        y = x
        for _ in range(50):
            y = y + 1
        return y

    a = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)

    def large():
        return a @ a

    g = torch.cuda.CUDAGraph()
    tiny()
    torch.cuda.synchronize()
    with torch.cuda.graph(g):
        tiny()
    s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    s.record()
    for _ in range(20):
        g.replay()
    e.record()
    torch.cuda.synchronize()
    device_ms = s.elapsed_time(e) / 20
    m = measure_launch(tiny)
    assert m.host_ms > 0 and m.eager_ms >= m.host_ms * 0.5
    assert launch_bound(device_ms, m.eager_ms, 0.01, m.eager_rel_noise) is True
    big = measure_launch(large)
    assert big.eager_ms > 10 * big.host_ms  # the device, not the launching thread, sets the pace


def test_a_long_call_with_host_work_before_its_kernel_reads_its_steady_state_not_one_cold_launch():
    # A loop of such calls keeps the device busy (the host's 0.2 ms hides under the previous call's kernel):
    # its time per call is the kernel's. An unprimed burst of one call would add the 0.2 ms every time.
    import time

    from qlabench.measure.timing.launch import measure_launch

    a = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)

    def call():
        t = time.perf_counter()
        while time.perf_counter() - t < 2e-4:
            pass
        return a @ a @ a

    call()
    torch.cuda.synchronize()
    s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    s.record()
    for _ in range(10):
        a @ a @ a
    e.record()
    torch.cuda.synchronize()
    kernel_ms = s.elapsed_time(e) / 10
    m = measure_launch(call)
    assert m.calls >= 4
    assert m.eager_ms < kernel_ms * 1.05 + 0.02
