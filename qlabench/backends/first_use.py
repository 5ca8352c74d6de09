"""What a backend's first call costs on a new host, when that is more than a per-point compile: the torch-free
function its declaration's `first_use` names (FlashInfer's kernel build, backends/flashinfer_build.py), read by
the loaded backend and by the listing alike (backends/declared.py)."""

from __future__ import annotations

import importlib

from qlabench.core.backend_decl import BackendDecl


def first_use_note(decl: BackendDecl) -> str:
    """Its declaration's `first_use` note; "" for none."""
    if not decl.first_use:
        return ""
    module, _, attr = decl.first_use.partition(":")
    return getattr(importlib.import_module(module), attr)()


__all__ = ["first_use_note"]
