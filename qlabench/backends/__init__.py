"""Backends: what each kernel library supports and how it runs a point (base.py), all in one registry.

The registry itself is registry.py; its names are re-exported here, imported when first read (PEP 562), so
`qlabench.backends:REGISTRY` names it for worker processes while a torch-free module of this package
(declared.py, flashinfer_build.py, _gpu.py) imports without the registry and torch.
"""

from __future__ import annotations

__all__ = ["Backend", "Outputs", "REGISTRY", "ORACLE", "cp_backend_names", "get_backend", "runnable_backend"]


def __getattr__(name: str):
    if name in __all__:
        from qlabench.backends import registry

        return getattr(registry, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
