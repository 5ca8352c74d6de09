"""The GPU's clocks while something runs: NVML read in a background thread, kept only while marked active.

`clocks.py` reads the card once before and once after a point's sampling; a 2 ms burst falls between two
such readings. A `ClockTrace` polls NVML (SM and memory clock, power, clock-event reasons) every
`interval_s` and keeps the readings taken while the caller has marked the window active (a burst from its
launch to its synchronisation, a sustained replay from first to last), so the clocks of a timing regime
are those the regime ran at. Read-only, as clocks.py: nothing is ever set. Without NVML the trace holds
no reading and its summary is None.
"""

from __future__ import annotations

import statistics
import threading
import time

from qlabench.measure.probes import clocks

READ_FIELDS = ("sm_clock_mhz", "mem_clock_mhz", "power_w", "throttle_mask")


def summarize_readings(readings: list[dict]) -> dict | None:
    """Min / median / max SM clock, median memory clock, median and max power and every clock-event reason
    seen, over `readings` (dicts of READ_FIELDS; None where a query failed); None for no reading."""
    if not readings:
        return None

    def vals(key):
        return [r[key] for r in readings if r.get(key) is not None]

    sm, mem, power = vals("sm_clock_mhz"), vals("mem_clock_mhz"), vals("power_w")
    reasons = sorted({name for m in vals("throttle_mask") for name in clocks.decode_throttle(int(m))})
    return {
        "readings": len(readings),
        "sm_clock_min_mhz": min(sm) if sm else None,
        "sm_clock_median_mhz": statistics.median(sm) if sm else None,
        "sm_clock_max_mhz": max(sm) if sm else None,
        "mem_clock_median_mhz": statistics.median(mem) if mem else None,
        "power_median_w": statistics.median(power) if power else None,
        "power_max_w": max(power) if power else None,
        "clock_reasons": reasons,
    }


class ClockTrace:
    """`with ClockTrace(device_index) as t:` ... `t.active(True)` ... `t.active(False)`; then `t.summary()`."""

    def __init__(self, device_index: int, interval_s: float = 5e-4, pci_bus_id: str | None = None):
        self.device_index, self.interval_s, self.pci_bus_id = device_index, interval_s, pci_bus_id
        self.readings: list[dict] = []
        self._active = threading.Event()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._handle = None
        self._nv = None

    def __enter__(self) -> ClockTrace:
        nv = clocks._nvml()
        if nv is not None:
            self._nv, self._handle = nv, clocks._handle(nv, self.device_index, self.pci_bus_id)
        if self._handle is not None:
            self._thread = threading.Thread(target=self._poll, name="qlabench-clock-trace", daemon=True)
            self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._active.set()  # wake a thread waiting for a window
        if self._thread is not None:
            self._thread.join(timeout=5.0)

    def active(self, on: bool) -> None:
        """Mark the window of interest open (readings are kept) or closed (the thread waits)."""
        if on:
            self._active.set()
        else:
            self._active.clear()

    def reset(self) -> None:
        """Forget the readings so far (the next regime starts its own)."""
        self.readings = []

    def summary(self) -> dict | None:
        return summarize_readings(list(self.readings))

    def _read(self) -> dict:
        nv, h = self._nv, self._handle
        get_reasons = getattr(nv, "nvmlDeviceGetCurrentClocksEventReasons", None) or \
            nv.nvmlDeviceGetCurrentClocksThrottleReasons
        power_mw = clocks._read(nv.nvmlDeviceGetPowerUsage, h)
        return {"sm_clock_mhz": clocks._read(nv.nvmlDeviceGetClockInfo, h, nv.NVML_CLOCK_SM),
                "mem_clock_mhz": clocks._read(nv.nvmlDeviceGetClockInfo, h, nv.NVML_CLOCK_MEM),
                "power_w": power_mw / 1000.0 if power_mw is not None else None,
                "throttle_mask": clocks._read(get_reasons, h)}

    def _poll(self) -> None:
        while not self._stop.is_set():
            self._active.wait()
            if self._stop.is_set():
                return
            reading = self._read()
            if self._active.is_set():  # the window may have closed while NVML answered
                self.readings.append(reading)
            time.sleep(self.interval_s)
