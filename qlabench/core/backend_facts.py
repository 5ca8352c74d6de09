"""The backends' library facts in the shape the views were first handed them: a thin derivation of the
declarations (core/backend_decl.py), kept while callers move to `backend_decl`'s functions.

`view_facts()` is what `advise`, `site` and the docs' blocks are told ({backend: its library call}, the
backends that autotune, those whose path depends on the size); `facts_of(name)` one backend's.
"""

from __future__ import annotations

from dataclasses import dataclass

from qlabench.core import backend_decl


@dataclass(frozen=True)
class BackendFacts:
    call_signature: str = ""
    autotune_modules: tuple[str, ...] = ()
    size_dependent_path: bool = False


def facts_of(name: str) -> BackendFacts:
    """A backend's declared facts; a backend nothing declares (a test's stand-in) declares none."""
    d = backend_decl.find(name)
    return BackendFacts(d.call, d.autotune_modules, d.size_dependent_path) if d is not None else BackendFacts()


def __getattr__(name: str):
    if name == "FACTS":  # {backend: BackendFacts} for every declared backend
        return {n: facts_of(n) for n in backend_decl.declarations()}
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def view_facts() -> dict:
    """The keyword arguments of `analyze.advise.advise`: calls, autotuning, size_dependent."""
    return dict(calls=backend_decl.calls(), autotuning=backend_decl.autotuning(),
                size_dependent=backend_decl.size_dependent())
