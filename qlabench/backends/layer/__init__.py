"""The layer backends: one Qwen3.5 GDN layer around each core backend (docs/LAYER.md)."""

from qlabench.backends.layer.backend import LayerBackend, LayerCall, layer_backends
from qlabench.core.backend_decl import LAYER_CORES  # derived from the declarations

__all__ = ["LAYER_CORES", "LayerBackend", "LayerCall", "layer_backends"]
