"""The backend registry: a `Backend` for every declared backend (core/backend_decl.py), by name.

Built from the declarations: a built-in backend is its module in this package and one line in
core/builtin_backends.py, nothing else. Plugins (the entry-point group `qlabench.backends`) and
`pkg.module:function` names are loaded here too (backends/plugin.py); one that cannot be loaded stays
listed, unavailable with its reason, so its points become `skipped` rows that say why. Distributed
(context-parallel) points look their backend up here too, by the same name: a backend with `cp_modes`
runs them (backends/cp/).
"""

from __future__ import annotations

from qlabench.backends.base import Backend, Outputs
from qlabench.backends.layer import LayerBackend
from qlabench.backends.plugin import load
from qlabench.core import backend_decl
from qlabench.core.errors import BackendError


class Registry(dict):
    """{name: Backend}. A `pkg.module:function` name not met before is declared and loaded on first lookup:
    a worker process meets it in a point, not on the command line that named it."""

    def _resolve(self, name) -> Backend | None:
        if not isinstance(name, str):
            return None
        if backend_decl.is_callable_name(name):
            backend_decl.declare_callable(name)
        decl = backend_decl.find(name)  # declared since the registry was built (a test's register())
        if decl is None:
            return None
        core = backend_decl.core_backend_name(name)
        b = LayerBackend(self[core], decl) if core is not None else load(decl)
        dict.__setitem__(self, name, b)
        return b

    def refresh(self) -> Registry:
        """Add every backend declared since the registry was built; returns itself."""
        for name in backend_decl.declarations():
            if not dict.__contains__(self, name):
                self._resolve(name)
        return self

    def __missing__(self, name):
        b = self._resolve(name)
        if b is None:
            raise KeyError(name)
        return b

    def get(self, name, default=None):
        return self[name] if name in self else default

    def __contains__(self, name) -> bool:
        return dict.__contains__(self, name) or self._resolve(name) is not None


def build() -> Registry:
    """Every declared backend, in view order; a `layer:<core>` one around its core's backend. Library backends
    import their packages lazily (in available()), so building stays cheap and works without CUDA."""
    out = Registry()
    for name, decl in backend_decl.declarations().items():
        core = backend_decl.core_backend_name(name)
        out[name] = LayerBackend(out[core], decl) if core is not None else load(decl)
    return out


REGISTRY: Registry = build()

# The correctness oracle every other backend is checked against.
ORACLE = "naive-recurrent"


def get_backend(name: str) -> Backend:
    b = REGISTRY.get(name)
    if b is None:
        backend_decl.decl_of(name)  # raises BackendError naming the known ones
        raise BackendError(f"unknown backend {name!r}; known: {', '.join(REGISTRY)}")
    return b


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


__all__ = ["Backend", "Outputs", "REGISTRY", "ORACLE", "Registry", "build", "cp_backend_names", "get_backend",
           "runnable_backend"]
