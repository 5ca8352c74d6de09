"""The extra device memory of a call, defined once (core/device_memory.py)."""

from __future__ import annotations

from qlabench.core.device_memory import MIB, extra_mem_mib, outside_mem_mib


def test_extra_memory_is_the_peak_beyond_what_was_there_and_the_new_outputs():
    # 100 MiB allocated before; the call peaks at 164 MiB, 16 MiB of it its new outputs: 48 MiB of scratch
    assert extra_mem_mib(int(164 * MIB), int(100 * MIB), int(16 * MIB)) == 48.0
    assert extra_mem_mib(int(100 * MIB), int(100 * MIB), 0) == 0.0
    assert extra_mem_mib(10, 20, 0) == 0.0  # never negative


def test_outside_memory_is_the_free_drop_that_torch_did_not_reserve():
    # free fell by 300 MiB, torch reserved 200 MiB more: 100 MiB went to someone else's allocator
    assert outside_mem_mib(int(1000 * MIB), int(700 * MIB), int(50 * MIB), int(250 * MIB)) == 100.0
    assert outside_mem_mib(int(700 * MIB), int(1000 * MIB), 0, 0) == 0.0  # memory freed is no negative cost
