"""Bytes per element of each dtype qlabench names, in one table: the FLOP/byte model, the serving byte
model, the memory check before a sweep and the serving page's pool size all read it; and the short name tables
print for each."""

from __future__ import annotations

DTYPE_BYTES: dict[str, int] = {"float64": 8, "float32": 4, "bfloat16": 2, "float16": 2}
SHORT_DTYPE: dict[str, str] = {"float64": "fp64", "float32": "fp32", "bfloat16": "bf16", "float16": "fp16"}


def itemsize(dtype: str) -> int:
    """Bytes of one element of `dtype` (KeyError for a dtype qlabench does not know)."""
    return DTYPE_BYTES[dtype]
