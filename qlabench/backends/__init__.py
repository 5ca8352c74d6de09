"""The backend registry: every backend qlabench knows, in one visible place.

To add a backend, subclass `Backend` (see base.py) and add an instance to REGISTRY below.
"""

from __future__ import annotations

from qlabench.core.errors import BackendError
from qlabench.backends.base import Backend, Outputs
from qlabench.backends.fault import FaultBackend
from qlabench.backends.fla import FLAChunk, FLADispatchOn, FLARecurrent
from qlabench.backends.flash_qla import FlashQLA, FlashQLAForceCP, FlashQLANoCP
from qlabench.backends.flashinfer import FlashInfer
from qlabench.backends.naive import NaiveChunk, NaiveRecurrent
from qlabench.backends.synthetic import Synthetic

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
        FlashInfer(),
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
