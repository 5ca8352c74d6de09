"""The backend registry: every backend qlabench knows, in one visible place.

To add a backend, subclass `Backend` (see base.py) and add an instance to REGISTRY below. Distributed
(context-parallel) points look their backend up here too, by the same name: a backend with `cp_modes`
runs them (backends/cp/).
"""

from __future__ import annotations

from qlabench.backends.base import Backend, Outputs
from qlabench.backends.engine_decode import engine_backends
from qlabench.backends.fault import FaultBackend
from qlabench.backends.fla import FLAChunk, FLADispatchOn, FLAIntraCP, FLARecurrent
from qlabench.backends.flash_qla import FlashQLA, FlashQLAForceCP, FlashQLANoCP
from qlabench.backends.flashinfer import FlashInfer, FlashInferForceCP, FlashInferNoCP
from qlabench.backends.flashinfer_decode import serving_backends as flashinfer_serving
from qlabench.backends.flashinfer_pool import FlashInferPool
from qlabench.backends.layer import layer_backends
from qlabench.backends.naive import NaiveChunk, NaiveRecurrent, NaiveStep
from qlabench.backends.synthetic import Synthetic
from qlabench.core.errors import BackendError

# Library backends import their packages lazily (in available()), so this module stays cheap and
# works on machines without CUDA; each then reports why it is unavailable.
REGISTRY: dict[str, Backend] = {
    b.name: b
    for b in (
        NaiveRecurrent(),
        NaiveChunk(),
        NaiveStep(),
        FlashQLA(),
        FlashQLANoCP(),
        FlashQLAForceCP(),
        FLAChunk(),
        FLAIntraCP(),
        FLARecurrent(),
        FLADispatchOn(),
        FlashInfer(),
        FlashInferNoCP(),
        FlashInferForceCP(),
        FlashInferPool(),  # prefill into a state pool through state_indices (0.7.2)
        *flashinfer_serving(),  # decode / mtp (flashinfer-python 0.7.2)
        *engine_backends(),  # the engines' own decode / verify kernels (vllm 0.33, sglang 0.5)
        FaultBackend(),
        Synthetic(),
    )
}
REGISTRY.update((b.name, b) for b in layer_backends(REGISTRY))  # `layer:<core>`: docs/LAYER.md

# The correctness oracle every other backend is checked against.
ORACLE = "naive-recurrent"


def get_backend(name: str) -> Backend:
    try:
        return REGISTRY[name]
    except KeyError:
        raise BackendError(f"unknown backend {name!r}; known: {', '.join(REGISTRY)}") from None


def runnable_backend(point, device: str) -> Backend:
    """The point's backend, or BackendError with the backend's own reason when it cannot run the point
    on `device` (not registered, not installed, or not for this point): for the commands that run one
    point directly (profile, the ncu child) instead of turning the reason into a `skipped` row."""
    backend = get_backend(point.backend)
    ok, why = backend.available()
    if not ok:
        raise BackendError(f"backend {point.backend!r} is unavailable: {why}")
    ok, why = backend.supports(point, device)
    if not ok:
        raise BackendError(f"backend {point.backend!r} cannot run this point on {device}: {why}")
    return backend


def cp_backend_names() -> list[str]:
    """The backends that run distributed (context-parallel) points, in registry order."""
    return [name for name, b in REGISTRY.items() if b.cp_modes]


__all__ = ["Backend", "Outputs", "REGISTRY", "ORACLE", "cp_backend_names", "get_backend", "runnable_backend"]
