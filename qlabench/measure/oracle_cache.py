"""The fp32 oracle's outputs for the reduced correctness check, kept across the points of one process.

The oracle (a Python-loop recurrence with autograd) is the slowest part of checking a point: on the
H200 about 0.3 s at 256 tokens, against a few milliseconds for the library's own call. Its inputs
depend only on the reduced problem, not on the backend, the mode or the full length being timed:
every backend and mode of a head configuration, and its 8k and 32k points alike (both reduce to the
same 256 tokens), check against the same outputs. So they are computed once per reduced problem and
kept, least recently used first out, within a byte budget.

A forward point needs only the forward outputs, and the recurrence's autograd backward costs about
twice its forward: an entry computed for a forward point holds no gradients and serves forward points
only; the first point that needs gradients replaces it with the full set, which serves both.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable

import torch

from qlabench.core import identity
from qlabench.core.point import Point

DEFAULT_BUDGET_BYTES = 512 * 2**20
GRADIENT_KEY = "dq"  # present in every backward's outputs (backends/base.py: backward_outputs)


def oracle_key(p: Point, seqlens: tuple[int, ...], compute_dtype: str) -> tuple:
    """What the reduced check's inputs are made from (inputs.make_inputs): the identity's input axes
    (core/identity.py), with the check's reduced lengths and compute dtype in place of the point's."""
    return identity.values(p, identity.input_axes(), seqlens=tuple(seqlens), dtype=compute_dtype)


def _nbytes(outputs: dict) -> int:
    return sum(t.numel() * t.element_size() for t in outputs.values() if isinstance(t, torch.Tensor))


class OracleCache:
    def __init__(self, budget_bytes: int = DEFAULT_BUDGET_BYTES):
        self.budget_bytes = budget_bytes
        self._entries: OrderedDict[tuple, dict] = OrderedDict()
        self.hits = 0
        self.misses = 0

    def __len__(self) -> int:
        return len(self._entries)

    @property
    def nbytes(self) -> int:
        return sum(_nbytes(v) for v in self._entries.values())

    def get(self, key: tuple, compute: Callable[[], dict], grads: bool = False) -> dict:
        """The entry for `key`, computing it when missing (or, with `grads`, when it has no gradients)."""
        if key in self._entries and (not grads or GRADIENT_KEY in self._entries[key]):
            self.hits += 1
            self._entries.move_to_end(key)
            return self._entries[key]
        self.misses += 1
        self._entries.pop(key, None)
        value = compute()
        self._entries[key] = value
        # Evict the oldest until within budget; the newest entry stays even if it alone exceeds it.
        while len(self._entries) > 1 and self.nbytes > self.budget_bytes:
            self._entries.popitem(last=False)
        return value

    def clear(self) -> None:
        self._entries.clear()
