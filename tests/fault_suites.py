"""A suite of `fault` backend points (qlabench/backends/fault.py: V picks the fault), for the tests of
worker isolation and of the sweep around it."""

from __future__ import annotations

TIMEOUT_S = 4.0


def fault_suite(vs, seqlens=(8,), name="faults", **run) -> dict:
    return {
        "name": name, "device": "cpu",
        "sweep": {"backends": ["fault"], "modes": ["fwd"], "seqlen": list(seqlens), "heads": [{"h_qk": 1, "h_v": 1}],
                  "K": 8, "V": list(vs), "dtype": "float32"},
        "timing": {"timer": "wall", "warmup": 0, "min_samples": 2, "max_samples": 2, "max_time_s": 0.1,
                   "target_rel_noise": 0.5},
        "check": {"oracle_max_tokens": 32},
        "run": run or {"point_timeout_s": TIMEOUT_S, "compile_timeout_s": TIMEOUT_S},
    }
