"""The GPU's state around a point, read through NVML (nvidia-ml-py): clocks, temperature, power, throttling.

Read-only by design: qlabench measures the card as found and never sets clocks, power limits or any
other setting. Without NVML (no library, no driver, a CPU machine) every reading is None and nothing
raises: `snapshot` returns None, and `state_fields` turns that into null columns.
"""

from __future__ import annotations

import threading

# NVML clock-event ("throttle") reason bits, by the names NVML documents (nvml.h,
# nvmlClocksEventReason*). Kept here rather than read from pynvml so decoding works without it.
THROTTLE_REASONS = {
    0x1: "gpu_idle",
    0x2: "applications_clocks_setting",
    0x4: "sw_power_cap",
    0x8: "hw_slowdown",
    0x10: "sync_boost",
    0x20: "sw_thermal_slowdown",
    0x40: "hw_thermal_slowdown",
    0x80: "hw_power_brake_slowdown",
    0x100: "display_clock_setting",
}
# Reasons that mean the card slowed itself down under load (not idling, not a user setting).
SLOWDOWN_REASONS = frozenset({"sw_power_cap", "hw_slowdown", "sw_thermal_slowdown", "hw_thermal_slowdown",
                              "hw_power_brake_slowdown"})
SNAPSHOT_FIELDS = ("sm_clock_mhz", "mem_clock_mhz", "max_sm_clock_mhz", "max_mem_clock_mhz", "temperature_c",
                   "power_w", "throttle_mask", "throttle_reasons")

_lock = threading.Lock()
_nvml_state: dict = {}  # "ok": bool, "reason": str | None; NVML is initialised once per process


def decode_throttle(mask: int) -> list[str]:
    """Names of the set reason bits, lowest bit first; unknown bits as hex."""
    names = [name for bit, name in THROTTLE_REASONS.items() if mask & bit]
    unknown = mask & ~sum(THROTTLE_REASONS)
    if unknown:
        names.append(f"unknown_0x{unknown:x}")
    return names


def _nvml():
    """The initialised pynvml module, or None (with the reason kept for `nvml_status`)."""
    with _lock:
        if not _nvml_state:
            try:
                import pynvml

                pynvml.nvmlInit()
                _nvml_state.update(ok=True, reason=None, module=pynvml)
            except Exception as e:  # ImportError, NVMLError (no driver / library): NVML is simply absent
                _nvml_state.update(ok=False, reason=f"NVML unavailable: {type(e).__name__}: {e}", module=None)
        return _nvml_state["module"]


def nvml_status() -> tuple[bool, str | None]:
    """(True, None) when NVML answers here, else (False, why)."""
    _nvml()
    return _nvml_state["ok"], _nvml_state["reason"]


def _reset_for_tests() -> None:
    with _lock:
        _nvml_state.clear()


def _read(fn, *args):
    try:
        return fn(*args)
    except Exception:  # one unsupported query (e.g. power on some boards) must not hide the others
        return None


def _handle(nv, device_index: int, pci_bus_id: str | None):
    # CUDA and NVML may number devices differently (CUDA_VISIBLE_DEVICES); the PCI bus id is unambiguous.
    if pci_bus_id:
        h = _read(nv.nvmlDeviceGetHandleByPciBusId, pci_bus_id)
        if h is not None:
            return h
    return _read(nv.nvmlDeviceGetHandleByIndex, device_index)


def snapshot(device_index: int, pci_bus_id: str | None = None) -> dict | None:
    """Clocks (MHz), temperature (C), power (W) and clock-event reasons of one GPU, or None without NVML.

    Keys: SNAPSHOT_FIELDS; a single unsupported query leaves its key None.
    """
    nv = _nvml()
    if nv is None:
        return None
    h = _handle(nv, device_index, pci_bus_id)
    if h is None:
        return None
    get_reasons = getattr(nv, "nvmlDeviceGetCurrentClocksEventReasons", None) or \
        nv.nvmlDeviceGetCurrentClocksThrottleReasons
    mask = _read(get_reasons, h)
    power_mw = _read(nv.nvmlDeviceGetPowerUsage, h)
    return {
        "sm_clock_mhz": _read(nv.nvmlDeviceGetClockInfo, h, nv.NVML_CLOCK_SM),
        "mem_clock_mhz": _read(nv.nvmlDeviceGetClockInfo, h, nv.NVML_CLOCK_MEM),
        "max_sm_clock_mhz": _read(nv.nvmlDeviceGetMaxClockInfo, h, nv.NVML_CLOCK_SM),
        "max_mem_clock_mhz": _read(nv.nvmlDeviceGetMaxClockInfo, h, nv.NVML_CLOCK_MEM),
        "temperature_c": _read(nv.nvmlDeviceGetTemperature, h, nv.NVML_TEMPERATURE_GPU),
        "power_w": power_mw / 1000.0 if power_mw is not None else None,
        "throttle_mask": int(mask) if mask is not None else None,
        "throttle_reasons": decode_throttle(int(mask)) if mask is not None else None,
    }


def drop_reason(before: dict | None, after: dict | None, tolerance: float = 0.05) -> str | None:
    """Why the clocks look dropped over a point, or None if they do not (or cannot be told).

    Dropped means: the SM or memory clock after is more than `tolerance` below the clock before, or
    the card reports a slowdown reason (power cap, thermal, HW slowdown) after the point. A clock that
    rose (an idle card before the point) is not a drop.
    """
    if not after:
        return None
    why = []
    if before:
        for k in ("sm_clock_mhz", "mem_clock_mhz"):
            b, a = before.get(k), after.get(k)
            if b and a is not None and a < b * (1 - tolerance):
                why.append(f"{k.removesuffix('_mhz')} {b} -> {a} MHz")
    slow = sorted(SLOWDOWN_REASONS.intersection(after.get("throttle_reasons") or ()))
    if slow:
        why.append("slowdown: " + ", ".join(slow))
    return "; ".join(why) or None


def clock_drop(before: dict | None, after: dict | None, tolerance: float = 0.05) -> bool | None:
    """True if the clocks dropped over the point (see `drop_reason`), None when NVML gave nothing."""
    if not after:
        return None
    return drop_reason(before, after, tolerance) is not None


def state_fields(before: dict | None, after: dict | None, tolerance: float = 0.05) -> dict:
    """Flat `<field>_before` / `<field>_after` values plus clock_drop and clock_drop_reason; all None without NVML."""
    out = {}
    for tag, snap in (("before", before), ("after", after)):
        for k in SNAPSHOT_FIELDS:
            out[f"{k}_{tag}"] = (snap or {}).get(k)
    out["clock_drop"] = clock_drop(before, after, tolerance)
    out["clock_drop_reason"] = drop_reason(before, after, tolerance)
    return out
