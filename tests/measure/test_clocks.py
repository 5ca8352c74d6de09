"""NVML GPU state: a fake NVML for the readings, NVML absent (mocked and real) gives nulls, and the drop rule."""

from __future__ import annotations

import sys
import types

import pytest

from qlabench.measure.probes import clocks as gpustate
from qlabench.measure.probes.clocks import (
    SNAPSHOT_FIELDS,
    clock_drop,
    decode_throttle,
    drop_reason,
    nvml_status,
    snapshot,
    state_fields,
)


@pytest.fixture(autouse=True)
def fresh_nvml():
    gpustate._reset_for_tests()
    yield
    gpustate._reset_for_tests()


class NVMLError(Exception):
    pass


def fake_pynvml(init_error=None, sm=1980, mem=3201, reasons=0x0, power_error=False, calls=None):
    """A stand-in for pynvml with the calls gpustate makes; records every call's name."""
    calls = calls if calls is not None else []
    m = types.ModuleType("pynvml")
    m.NVML_CLOCK_SM, m.NVML_CLOCK_MEM, m.NVML_TEMPERATURE_GPU = 1, 2, 0

    def rec(name, result):
        def f(*args):
            calls.append(name)
            if isinstance(result, Exception):
                raise result
            return result(*args) if callable(result) else result
        return f

    m.nvmlInit = rec("nvmlInit", init_error if init_error else None)
    m.nvmlDeviceGetHandleByIndex = rec("handle", lambda i: ("dev", i))
    m.nvmlDeviceGetHandleByPciBusId = rec("handle_pci", lambda b: ("pci", b))
    m.nvmlDeviceGetClockInfo = rec("clock", lambda h, c: sm if c == 1 else mem)
    m.nvmlDeviceGetMaxClockInfo = rec("max_clock", lambda h, c: 1980 if c == 1 else 3201)
    m.nvmlDeviceGetTemperature = rec("temp", 41)
    m.nvmlDeviceGetPowerUsage = rec("power", NVMLError("not supported") if power_error else 123456)
    m.nvmlDeviceGetCurrentClocksEventReasons = rec("reasons", reasons)
    m.calls = calls
    return m


def test_snapshot_reads_every_field(monkeypatch):
    fake = fake_pynvml(reasons=0x4 | 0x1)
    monkeypatch.setitem(sys.modules, "pynvml", fake)
    s = snapshot(0)
    assert s == {"sm_clock_mhz": 1980, "mem_clock_mhz": 3201, "max_sm_clock_mhz": 1980, "max_mem_clock_mhz": 3201,
                 "temperature_c": 41, "power_w": pytest.approx(123.456), "throttle_mask": 5,
                 "throttle_reasons": ["gpu_idle", "sw_power_cap"]}
    assert set(s) == set(SNAPSHOT_FIELDS)
    snapshot(0)
    assert fake.calls.count("nvmlInit") == 1  # initialised once per process


def test_gpustate_never_calls_an_nvml_setter():
    # Never change GPU settings: no NVML setter, reset or clear call may appear in the module.
    import inspect
    import re

    src = inspect.getsource(gpustate)
    assert re.findall(r"nvml\w*(?:Set|Reset|Clear)\w*", src) == []
    assert "nvmlDeviceGetClockInfo" in src  # the scan does see the calls that are made


def test_pci_bus_id_picks_the_handle(monkeypatch):
    fake = fake_pynvml()
    monkeypatch.setitem(sys.modules, "pynvml", fake)
    snapshot(0, pci_bus_id="00000000:19:00.0")
    assert "handle_pci" in fake.calls and "handle" not in fake.calls


def test_one_failing_query_leaves_only_its_field_null(monkeypatch):
    monkeypatch.setitem(sys.modules, "pynvml", fake_pynvml(power_error=True))
    s = snapshot(0)
    assert s["power_w"] is None and s["sm_clock_mhz"] == 1980


def test_nvml_init_failure_gives_none_and_a_reason(monkeypatch):
    monkeypatch.setitem(sys.modules, "pynvml", fake_pynvml(init_error=NVMLError("Driver Not Loaded")))
    assert snapshot(0) is None
    ok, why = nvml_status()
    assert not ok and "Driver Not Loaded" in why
    fields = state_fields(snapshot(0), snapshot(0))
    assert fields["sm_clock_mhz_before"] is None and fields["throttle_reasons_after"] is None
    assert fields["clock_drop"] is None and fields["clock_drop_reason"] is None


def test_nvml_not_installed(monkeypatch):
    monkeypatch.setitem(sys.modules, "pynvml", None)  # makes `import pynvml` raise ImportError
    assert snapshot(0) is None
    assert not nvml_status()[0]


def test_real_nvml_on_this_machine_does_not_crash():
    # On a machine without a driver this is None; on a GPU host a full snapshot. Either way no exception.
    s = snapshot(0)
    assert s is None or set(s) == set(SNAPSHOT_FIELDS)
    f = state_fields(s, snapshot(0))
    assert set(f) == {f"{k}_{t}" for k in SNAPSHOT_FIELDS for t in ("before", "after")} | {"clock_drop",
                                                                                            "clock_drop_reason"}


def test_decode_throttle():
    assert decode_throttle(0) == []
    assert decode_throttle(0x40 | 0x8) == ["hw_slowdown", "hw_thermal_slowdown"]
    assert decode_throttle(0x1000 | 0x1) == ["gpu_idle", "unknown_0x1000"]


def _snap(sm=1980, mem=3201, reasons=()):
    return {"sm_clock_mhz": sm, "mem_clock_mhz": mem, "throttle_reasons": list(reasons)}


def test_clock_drop_rule():
    assert clock_drop(_snap(), _snap()) is False
    assert clock_drop(_snap(sm=1980), _snap(sm=1900)) is False  # within 5%
    assert clock_drop(_snap(sm=1980), _snap(sm=1700)) is True
    assert "sm_clock 1980 -> 1700 MHz" in drop_reason(_snap(sm=1980), _snap(sm=1700))
    assert clock_drop(_snap(sm=1980), _snap(sm=1700), tolerance=0.2) is False
    assert clock_drop(_snap(mem=3201), _snap(mem=1593)) is True
    # an idle card before the point clocks up: not a drop
    assert clock_drop(_snap(sm=345, reasons=["gpu_idle"]), _snap(sm=1980)) is False
    # a slowdown reason after the point is a drop even at an unchanged clock
    assert clock_drop(_snap(), _snap(reasons=["sw_power_cap"])) is True
    assert drop_reason(_snap(), _snap(reasons=["sw_power_cap", "gpu_idle"])) == "slowdown: sw_power_cap"
    # without readings there is no verdict
    assert clock_drop(None, None) is None
    assert clock_drop(None, _snap(reasons=["hw_thermal_slowdown"])) is True
