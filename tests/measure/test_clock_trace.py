"""The clocks during a timing regime (measure/probes/clock_trace.py): summaries of NVML readings; without NVML
the trace holds nothing."""

from __future__ import annotations

from qlabench.measure.probes import clocks
from qlabench.measure.probes.clock_trace import ClockTrace, summarize_readings


def test_readings_summarize_to_the_clock_range_power_and_reasons():
    s = summarize_readings([
        {"sm_clock_mhz": 1980, "mem_clock_mhz": 3201, "power_w": 500.0, "throttle_mask": 0},
        {"sm_clock_mhz": 1755, "mem_clock_mhz": 3201, "power_w": 690.0, "throttle_mask": 0x4},
        {"sm_clock_mhz": 1800, "mem_clock_mhz": None, "power_w": None, "throttle_mask": None},
    ])
    assert s["readings"] == 3 and s["sm_clock_min_mhz"] == 1755 and s["sm_clock_median_mhz"] == 1800
    assert s["sm_clock_max_mhz"] == 1980 and s["mem_clock_median_mhz"] == 3201
    assert s["power_max_w"] == 690.0 and s["power_median_w"] == 595.0 and s["clock_reasons"] == ["sw_power_cap"]
    assert summarize_readings([]) is None


def test_without_nvml_a_trace_keeps_no_reading(monkeypatch):
    clocks._reset_for_tests()
    monkeypatch.setattr(clocks, "_nvml", lambda: None)
    with ClockTrace(0) as t:
        t.active(True)
        t.active(False)
    assert t.readings == [] and t.summary() is None


def test_only_readings_inside_the_marked_window_are_kept(monkeypatch):
    import threading

    class FakeNvml:
        NVML_CLOCK_SM, NVML_CLOCK_MEM = 0, 1
        polled = threading.Event()

        def nvmlDeviceGetHandleByIndex(self, i):
            return "h"

        def nvmlDeviceGetClockInfo(self, h, kind):
            FakeNvml.polled.set()
            return 1980 if kind == 0 else 3201

        def nvmlDeviceGetPowerUsage(self, h):
            return 600_000

        def nvmlDeviceGetCurrentClocksEventReasons(self, h):
            return 0

    monkeypatch.setattr(clocks, "_nvml", lambda: FakeNvml())
    with ClockTrace(0, interval_s=1e-4) as t:
        assert not FakeNvml.polled.wait(0.05)  # not polled before a window opens
        t.active(True)
        assert FakeNvml.polled.wait(2.0)
        while not t.readings:
            pass
        t.active(False)
    assert t.summary()["sm_clock_median_mhz"] == 1980 and t.summary()["power_max_w"] == 600.0
    t.reset()
    assert t.summary() is None
