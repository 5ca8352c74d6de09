"""The backend registry: every backend qlabench knows, in one visible place.

To add a backend, subclass `Backend` (see base.py) and add an instance to REGISTRY below.
"""

from __future__ import annotations

from ..errors import BackendError
from .base import Backend, Outputs
from .naive import NaiveChunk, NaiveRecurrent

REGISTRY: dict[str, Backend] = {
    b.name: b
    for b in (
        NaiveRecurrent(),
        NaiveChunk(),
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
