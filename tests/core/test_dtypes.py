"""Bytes per element (core/dtypes.py): the one table the byte models and the memory checks read."""

from __future__ import annotations

import pytest

from qlabench.core.dtypes import DTYPE_BYTES, itemsize
from qlabench.core.point import DTYPES, STATE_DTYPES


def test_every_dtype_a_point_can_name_has_a_size():
    assert set(DTYPES) | set(STATE_DTYPES) <= set(DTYPE_BYTES)
    assert (itemsize("float64"), itemsize("float32"), itemsize("bfloat16"), itemsize("float16")) == (8, 4, 2, 2)
    with pytest.raises(KeyError):
        itemsize("int4")
