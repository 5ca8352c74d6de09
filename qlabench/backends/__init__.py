"""The backend registry: every backend qlabench knows, in one visible place.

To add a backend, subclass `Backend` (see base.py) and add an instance to REGISTRY below.
"""

from __future__ import annotations

from ..errors import BackendError
from .base import Backend, Outputs
from .fault import FaultBackend
from .fla import FLAChunk, FLADispatchOn, FLARecurrent
from .flash_qla import FlashQLA, FlashQLAForceCP, FlashQLANoCP
from .naive import NaiveChunk, NaiveRecurrent
from .synthetic import Synthetic

# Library backends import their packages lazily (in available()), so this module stays cheap and
# works on machines without CUDA; each then reports why it is unavailable.
REGISTRY: dict[str, Backend] = {
    b.name: b
    for b in (
        NaiveRecurrent(),
        NaiveChunk(),
        FlashQLA(),
        FlashQLANoCP(),
        FlashQLAForceCP(),
        FLAChunk(),
        FLARecurrent(),
        FLADispatchOn(),
        FaultBackend(),
        Synthetic(),
    )
}

# The correctness oracle every other backend is checked against.
ORACLE = "naive-recurrent"


def get_backend(name: str) -> Backend:
    try:
        return REGISTRY[name]
    except KeyError:
        raise BackendError(f"unknown backend {name!r}; known: {', '.join(REGISTRY)}") from None


__all__ = ["Backend", "Outputs", "REGISTRY", "ORACLE", "get_backend"]
