"""Loading a declared backend's implementation: the `impl` of its declaration (core/backend_decl.py), imported
only here. A built-in names a `Backend` subclass; a plugin's entry point names a full `BackendDecl` (which
replaces the placeholder read from its metadata) or a function of FLA's calling convention, wrapped as a
forward backend (backends/function.py). One that cannot be loaded becomes an `Unloadable` backend: listed
by `qlabench backends` and unavailable with the reason, so its points are `skipped` rows that say why.
"""

from __future__ import annotations

import importlib
import os
import sys
from dataclasses import replace

from qlabench.backends.base import Backend
from qlabench.core import backend_decl
from qlabench.core.backend_decl import BackendDecl, Provider
from qlabench.measure.env import dist_of_module, source_of


class Unloadable(Backend):
    """A declared backend whose implementation could not be imported (or is not a backend)."""

    def __init__(self, decl: BackendDecl, why: str):
        super().__init__(decl)
        self.why = why

    def available(self) -> tuple[bool, str]:
        return False, self.why


def import_target(impl: str):
    """The object `module:attr` names (attr may be dotted). A module not found on sys.path is looked for in
    the working directory too: `--backends my_kernel:fn` next to my_kernel.py needs no packaging (a worker
    process starts in the same directory)."""
    module, _, attr = impl.partition(":")
    try:
        obj = importlib.import_module(module)
    except ModuleNotFoundError as e:
        here = os.getcwd()
        if e.name != module.split(".")[0] or here in sys.path:
            raise
        sys.path.append(here)
        obj = importlib.import_module(module)
    for part in attr.split("."):
        obj = getattr(obj, part)
    return obj


def load(decl: BackendDecl) -> Backend:
    """The Backend of a declaration; never raises (an Unloadable one carries the reason)."""
    try:
        target = import_target(decl.impl)
    except BaseException as e:  # a plugin's import may fail in any way, SystemExit included: one row's reason
        if isinstance(e, KeyboardInterrupt):
            raise
        return Unloadable(decl, f"{decl.impl} failed to import: {type(e).__name__}: {e}")
    if decl.plugin:
        decl = backend_decl.register(replace(decl, provider=provenance(decl)))
    if isinstance(target, type) and issubclass(target, Backend):
        return target(decl)
    if isinstance(target, BackendDecl):
        return _load_full_declaration(decl, target)
    if callable(target):
        from qlabench.backends.function import FunctionBackend

        return FunctionBackend(decl, target)
    return Unloadable(decl, f"{decl.impl} is {type(target).__name__}, neither a Backend subclass, a BackendDecl "
                      "nor a function of FLA's chunk_gated_delta_rule convention (docs/PLUGINS.md)")


def _load_full_declaration(placeholder: BackendDecl, full: BackendDecl) -> Backend:
    """A plugin whose entry point names a BackendDecl: it takes the entry point's name and distribution, and
    replaces the placeholder in this process's declarations."""
    if full.name != placeholder.name:
        return Unloadable(placeholder, f"its entry point is named {placeholder.name!r} but {placeholder.impl} "
                          f"declares {full.name!r}: the entry point's name is the backend's name")
    if full.impl == placeholder.impl:
        return Unloadable(placeholder, f"{placeholder.impl} declares itself as its impl: name the Backend "
                          "subclass or function that runs it")
    decl = backend_decl.register(replace(full, provider=full.provider or placeholder.provider))
    backend = load(decl)
    return backend


def provenance(decl: BackendDecl) -> Provider:
    """A plugin's Provider once its module is imported: the distribution (from its entry point, else the one
    that provides the module's package) and, where its code came from a git checkout (the folder it was
    pip-installed from, or for a bare module the folder it is in), that checkout's commit and whether it had
    uncommitted changes."""
    module = decl.impl.partition(":")[0]
    known = decl.provider or Provider()
    dist, version = (known.dist, known.version) if known.dist else dist_of_module(module)
    mod = sys.modules.get(module)
    path = getattr(mod, "__file__", None)
    sha, dirty = source_of(dist, path)
    return Provider(dist, version, sha, dirty)
