"""The layer backends: one Qwen3.5 GDN layer around each core backend (docs/LAYER.md)."""

from qlabench.backends.layer.backend import LAYER_CORES, LayerBackend, LayerCall, layer_backends

__all__ = ["LAYER_CORES", "LayerBackend", "LayerCall", "layer_backends"]
