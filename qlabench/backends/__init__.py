"""Backends: what each kernel library supports and how it runs a point (base.py), all in one registry.

The registry itself is registry.py; its names are re-exported here so `qlabench.backends:REGISTRY`
names it for worker processes.
"""

from qlabench.backends.registry import (
    ORACLE,
    REGISTRY,
    Backend,
    Outputs,
    cp_backend_names,
    get_backend,
    runnable_backend,
)

__all__ = ["Backend", "Outputs", "REGISTRY", "ORACLE", "cp_backend_names", "get_backend", "runnable_backend"]
