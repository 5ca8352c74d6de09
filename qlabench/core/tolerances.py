"""The correctness tolerances: one relative L2 error bound per (dtype, tensor).

Kept in the core (no torch) because both sides read it: measure/correctness.py holds a kernel's outputs
to it when a point is checked, and analyze/ reads stored errors against it (a speedup is only reported
for a kernel inside it, analyze/evidence/accuracy.py). Where the numbers come from and what they mean at long T:
measure/correctness.py and docs/NUMERICS.md.
"""

from __future__ import annotations

import math

# dtype -> tensor -> max relative L2 error. "*" is the default for tensors not listed.
# "pool" (a serving step's slots outside its batch) is 0 everywhere: a step must not touch another
# sequence's state at all.
TOLERANCES: dict[str, dict[str, float]] = {
    "float64": {"*": 1e-9, "pool": 0.0},
    "float32": {"*": 1e-4, "dg": 1e-3, "dbeta": 1e-3, "pool": 0.0},
    "bfloat16": {"*": 0.02, "dg": 0.035, "dbeta": 0.035, "pool": 0.0},
    "float16": {"*": 0.01, "dg": 0.02, "dbeta": 0.02, "pool": 0.0},
}


def tolerance(dtype: str, tensor: str) -> float:
    table = TOLERANCES[dtype]
    return table.get(tensor, table["*"])


_PRECISION = {"float64": 53, "float32": 24, "float16": 11, "bfloat16": 8}  # significand bits


def tolerance_dtype(dtype: str, state_dtype: str | None = None) -> str:
    """The dtype whose tolerances a check applies: the input dtype, or a serving point's state dtype where
    that is the less precise (a bfloat16 pool rounds every step's state)."""
    if state_dtype in _PRECISION and dtype in _PRECISION and _PRECISION[state_dtype] < _PRECISION[dtype]:
        return state_dtype
    return dtype


def error_ratio(error: float, dtype: str, tensor: str) -> float:
    """error / tolerance; a tensor held to 0 (a serving pool's untouched slots) is 0 when exact, else inf."""
    tol = tolerance(dtype, tensor)
    if not math.isfinite(error):
        return math.inf
    if tol == 0:
        return 0.0 if error == 0 else math.inf
    return error / tol
