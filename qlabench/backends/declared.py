"""What `qlabench backends` lists of each backend, read from its declaration where that is enough: torch-free.

A backend is listed from its declaration (name, description, modes, dtypes, devices, CP modes) and whether it can
run here: a package it needs that is not installed is its reason, found without importing anything
(core/backend_needs.py), and one that needs no package runs wherever torch does. Only a backend whose packages
are all installed, or a plugin, is loaded from the registry and asked (CUDA, the SM, the library's API): that
answer needs the library, and torch, imported.
"""

from __future__ import annotations

from dataclasses import dataclass

from qlabench.backends.first_use import first_use_note
from qlabench.core.backend_decl import BackendDecl, declarations
from qlabench.core.backend_needs import first_missing


@dataclass(frozen=True)
class Declared:
    """A backend as its declaration says it, with its availability: what a listing reads of a `Backend`."""

    decl: BackendDecl
    why: str | None  # why it cannot run here; None: it can

    name = property(lambda self: self.decl.name)
    description = property(lambda self: self.decl.description)
    modes = property(lambda self: self.decl.modes)
    dtypes = property(lambda self: self.decl.dtypes)
    devices = property(lambda self: self.decl.devices)
    cp_modes = property(lambda self: self.decl.cp_modes)
    testing = property(lambda self: self.decl.testing)

    def available(self) -> tuple[bool, str]:
        return (False, self.why) if self.why is not None else (True, "")

    def first_use_note(self) -> str:
        return first_use_note(self.decl)


def listed():
    """Every declared backend in view order: a `Declared` where its declaration answers, else the registry's
    `Backend` (a plugin, whose declaration is read by importing it; a library backend whose packages are all
    installed)."""
    out = []
    for name, decl in declarations().items():
        missing = None if decl.plugin else first_missing(decl.needs)
        if decl.plugin or (decl.needs and missing is None):
            from qlabench.backends.registry import REGISTRY

            out.append(REGISTRY[name])
        else:
            out.append(Declared(decl, missing))
    return out


__all__ = ["Declared", "listed"]
