"""Everything qlabench knows about a backend, declared once: the `BackendDecl`, and the functions every layer
reads backend facts through. Pure Python (no torch): a view asks these without importing any backend.

Where declarations come from, in their order (`order`, the place of a backend in every view):
- the built-in backends (core/builtin_backends.py: one line each; the implementation is a `Backend`
  subclass in qlabench/backends/, named by `impl` and imported only by the backends layer);
- plugins: packages that declare backends through the entry-point group `qlabench.backends` (the entry
  point's name is the backend's name). They are read from the installed distributions' metadata without
  importing the plugin; the backends layer imports one when it is asked to run it (`resolve`: an object that
  is a full `BackendDecl` replaces the placeholder read from the metadata; a function is wrapped);
- backends named at run time as `pkg.module:function` (`declare_callable`), a function of FLA's
  `chunk_gated_delta_rule` calling convention (docs/PLUGINS.md);
- and last, a `layer:<core>` backend for every declaration with `layer_core` (docs/LAYER.md).
"""

from __future__ import annotations

import sys
from types import MappingProxyType
from collections.abc import Collection, Mapping
from dataclasses import replace
from importlib import metadata

from qlabench.core.builtin_backends import BUILTINS
from qlabench.core.decl_types import CALLABLE_NAME, ROLES, TRAINING_MODES, WORKLOAD_ROLES, BackendDecl, Provider
from qlabench.core.errors import BackendError
from qlabench.core.libraries import BY_NAME, AutoChoice, Library
from qlabench.core.layer_shapes import LAYER_PREFIX, core_backend_name, layer_backend_name
from qlabench.core.text import is_hidden, visible

ENTRY_POINT_GROUP = "qlabench.backends"
# -- the registry of declarations ----------------------------------------------------------------------------
_RUNTIME: dict[str, BackendDecl] = {}  # registered in this process: `module:function` names, resolved plugins
_EP_CACHE: dict[tuple, tuple[dict[str, BackendDecl], dict[str, str]]] = {}


def _builtins() -> tuple[BackendDecl, ...]:
    return BUILTINS


def _entry_points() -> tuple[dict[str, BackendDecl], dict[str, str]]:
    """The plugins' placeholder declarations from the installed distributions' metadata (nothing imported),
    and {name: why it is not taken} for entry points that cannot be (a clash with another backend's name).
    Cached per sys.path: a path added later (a test's dist-info) is read then."""
    key = tuple(sys.path)
    if key in _EP_CACHE:
        return _EP_CACHE[key]
    builtin = {d.name for d in _builtins()}
    found: dict[str, BackendDecl] = {}
    problems: dict[str, str] = {}
    for ep in metadata.entry_points(group=ENTRY_POINT_GROUP):
        dist = getattr(ep, "dist", None)
        who = f"{dist.name} {dist.version}" if dist is not None else "an unknown distribution"
        if why := entry_point_name_problem(ep.name, builtin):
            problems[ep.name] = f"entry point of {who} is not taken: {why}"
        elif ep.name in found:
            problems[ep.name] = f"declared twice (again by {who}); the first is used"
        else:
            found[ep.name] = plugin_decl(ep.name, ep.value, Provider(dist.name, dist.version) if dist else None)
    _EP_CACHE.clear()
    _EP_CACHE[key] = (found, problems)
    return found, problems


def entry_point_name_problem(name: str, builtin: set[str] | frozenset[str]) -> str | None:
    """Why an entry point's name cannot name a backend, said of that name, or None. Metadata read at run time
    holds what setuptools would refuse, so nothing about the name is assumed."""
    shown = repr(visible(name))
    if not name.strip():
        return "its name is empty"
    if any(is_hidden(c) for c in name):
        return f"its name {shown} holds a control or format character"
    if name in builtin:
        return f"{shown} is the name of a built-in backend"
    if name.startswith(LAYER_PREFIX):
        return f"{shown} begins with {LAYER_PREFIX!r}, which names the layer backends qlabench makes (docs/LAYER.md)"
    if ":" in name:
        return f"{shown} holds ':', which marks a `module:function` name given on the command line"
    return None


def plugin_decl(name: str, impl: str, provider: Provider | None) -> BackendDecl:
    """What is known of a plugin before its module is imported: a forward backend that may answer prefill
    questions (a function of the FLA convention is exactly that; a full declaration replaces it on import)."""
    who = provider.dist if provider and provider.dist else impl.split(":")[0]
    return BackendDecl(name=name, label=f"{name} ({who})", impl=impl, modes=frozenset({"fwd"}),
                       description=f"{impl}: FLA chunk_gated_delta_rule convention, forward", roles=frozenset({"prefill"}), provider=provider)


_DECLS_CACHE: dict[tuple, Mapping[str, BackendDecl]] = {}


def declarations() -> Mapping[str, BackendDecl]:
    """Every backend, in view order: built-ins, plugins, names registered at run time, then the layer ones.
    Built once per state of what it reads (sys.path for the entry points, the run-time registrations): a view
    asks it for every row it labels, and building it costs a dataclass copy per backend."""
    key = (tuple(sys.path), tuple(_RUNTIME.items()))
    if key not in _DECLS_CACHE:
        _DECLS_CACHE.clear()
        _DECLS_CACHE[key] = MappingProxyType(_build_declarations())
    return _DECLS_CACHE[key]


def _build_declarations() -> dict[str, BackendDecl]:
    base: dict[str, BackendDecl] = {d.name: d for d in _builtins()}
    plugins, _ = _entry_points()
    for name, d in {**plugins, **_RUNTIME}.items():
        if name not in base or name in _RUNTIME:
            base[name] = d
    out: dict[str, BackendDecl] = {}
    for d in base.values():
        out[d.name] = replace(d, order=len(out))
    for d in list(out.values()):
        if d.layer_core:
            ld = layer_decl(d)
            out[ld.name] = replace(ld, order=len(out))
    return out


def layer_decl(core: BackendDecl) -> BackendDecl:
    """`layer:<core>`: the layer autotunes where its core does; it is no library call of its own, and the layer
    around a size-dependent core is checked as the layer (its own path is not traced apart)."""
    return BackendDecl(name=layer_backend_name(core.name), label=f"{core.label}, in a Qwen3.5 GDN layer",
                       impl="qlabench.backends.layer:LayerBackend",
                       description=f"one Qwen3.5 GDN layer (projections, conv, gating, norms) around {core.name}",
                       modes=frozenset({"fwd"}), autotune_modules=core.autotune_modules,
                       roles=frozenset({"oracle"}) if "oracle" in core.roles else frozenset(),
                       compiles=core.compiles, provider=core.provider, dtypes=core.dtypes, devices=core.devices,
                       needs=core.needs, first_use=core.first_use)


def plugin_problems() -> dict[str, str]:
    """Entry points that declare no usable backend, with the reason (`qlabench backends` lists them)."""
    return dict(_entry_points()[1])


def register(decl: BackendDecl) -> BackendDecl:
    """Add (or replace) a declaration in this process: a resolved plugin, a `module:function` name, a test's
    stand-in. Worker processes see it only if they register it too (an entry point or a `module:function`
    name is found there by itself)."""
    if decl.name.startswith(LAYER_PREFIX):
        raise BackendError(f"{decl.name!r}: `layer:` names are made from their core's declaration")
    _RUNTIME[decl.name] = decl
    return decl


def unregister(name: str) -> None:
    _RUNTIME.pop(name, None)


def is_callable_name(name: str) -> bool:
    """`pkg.module:function` (a `layer:<core>` name is not one)."""
    return not str(name).startswith(LAYER_PREFIX) and bool(CALLABLE_NAME.match(str(name)))


def declare_callable(spec: str) -> BackendDecl:
    """Declare `pkg.module:function` (FLA's calling convention, docs/PLUGINS.md) as a forward backend of that
    name, without importing it; BackendError when the name is not of that form."""
    if not is_callable_name(spec):
        raise BackendError(f"{spec!r} is not a `module:function` name (as `my_kernels.gdn:chunk_fwd`)")
    known = _RUNTIME.get(spec)
    return known if known is not None else register(plugin_decl(spec, spec, None))


def decl_of(name: str) -> BackendDecl:
    """A backend's declaration; BackendError naming the known ones for an unknown name. A `module:function`
    name is declared on first use (a worker process meets it in a point, not on a command line)."""
    decls = declarations()
    d = decls.get(name)
    if d is not None:
        return d
    if is_callable_name(name):
        declare_callable(name)
        return declarations()[name]
    why = plugin_problems().get(name)
    if why:
        raise BackendError(f"backend {name!r}: {why}")
    core = core_backend_name(str(name))
    if core is not None and core in decls:
        raise BackendError(f"no layer backend is made around {core!r} (its declaration has no layer_core)")
    raise BackendError(f"unknown backend {name!r}; known: {', '.join(decls)}; or a function of FLA's calling "
                       "convention as `module:function` (docs/PLUGINS.md)")


def find(name: str) -> BackendDecl | None:
    """decl_of, or None for a name nothing declares (a test's stand-in backend)."""
    try:
        return decl_of(name)
    except BackendError:
        return None


# -- what the views ask ---------------------------------------------------------------------------------------
def candidates(workload: str, *, measured: Collection[str] | None = None,
               named: Collection[str] = ()) -> tuple[str, ...]:
    """The backends that may answer a workload's question ('prefill', 'train', ...), in view order.

    For an answer drawn from evidence, `measured` is the backends that evidence holds rows of and `named` those
    the question names (the user's current choice): a declared backend is a candidate only where it is one or the
    other, so installing a package (a plugin's entry point) or declaring a backend changes no answer drawn from
    evidence that predates it. `measured` None: every declared one (what could be measured)."""
    return tuple(n for n, d in declarations().items() if workload in d.roles and not d.testing
                 and (measured is None or n in measured or n in named))


def label_of(name: str) -> str:
    """The setting as views say it; a name nothing declares is its own label."""
    d = find(name)
    return d.label if d is not None else str(name)


def view_order() -> tuple[str, ...]:
    """Every declared backend in its place: tables, legends and colours follow it."""
    return tuple(declarations())


def library_of(name: str) -> Library | None:
    """The core.libraries Library a backend runs, as its declaration says; None for qlabench's own kernels, the
    layer backends, plugins and names nothing declares."""
    d = find(name)
    return BY_NAME.get(d.library) if d is not None and d.library else None


def auto_choices() -> tuple[AutoChoice, ...]:
    """Per library that decides per call whether to split it, its AutoChoice (core/libraries.py): the backend
    declared `cp_setting='auto'` and those that pin the setting, in view order."""
    decls = declarations().values()
    out = []
    for auto in (d for d in decls if d.cp_setting == "auto"):
        pinned = tuple((d.cp_setting, d.name) for d in decls
                       if d.library == auto.library and d.cp_setting not in (None, "auto"))
        out.append(AutoChoice(auto.library, auto.name, pinned, auto.cp_mark))
    return tuple(out)


def stack_columns(name: str) -> tuple[str, ...]:
    """The version columns naming a backend's stack, its library's first; () for a backend of no library."""
    lib = library_of(name)
    return (lib.column, *lib.stack) if lib else ()


def pool_access_of(name: str) -> tuple[str, str] | None:
    """(how a serving step reaches the pool, note), where declared (core/pool_access.py)."""
    d = find(name)
    return d.pool_access if d is not None else None


def pool_access() -> dict[str, tuple[str, str]]:
    """{backend: pool access} for every backend that declares it."""
    return {n: d.pool_access for n, d in declarations().items() if d.pool_access is not None}


def layer_cores() -> tuple[str, ...]:
    """The backends a `layer:<core>` backend is made around, in view order."""
    return tuple(n for n, d in declarations().items() if d.layer_core)


def is_testing(name: str) -> bool:
    """A test-only backend: never ranked or recommended (fault, synthetic, fla-dispatch-on)."""
    d = find(name)
    return d is not None and d.testing


def calls() -> dict[str, str]:
    """{backend: the library call a user makes}, "" where none (advise's calls)."""
    return {n: d.call for n, d in declarations().items()}


def autotuning() -> frozenset[str]:
    return frozenset(n for n, d in declarations().items() if d.autotune_modules)


def size_dependent() -> frozenset[str]:
    return frozenset(n for n, d in declarations().items() if d.size_dependent_path)


def __getattr__(name: str):
    """The tables views first read as constants, derived from the declarations each time they are read:
    AUTO_CHOICES (auto_choices()), AUTO_CHOICE_OF (the auto backend -> its AutoChoice), POOL_ACCESS, LAYER_CORES."""
    if name == "AUTO_CHOICES":
        return auto_choices()
    if name == "AUTO_CHOICE_OF":
        return {c.auto: c for c in auto_choices()}
    if name == "POOL_ACCESS":
        return pool_access()
    if name == "LAYER_CORES":
        return layer_cores()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["BackendDecl", "Provider", "ENTRY_POINT_GROUP", "ROLES", "TRAINING_MODES", "WORKLOAD_ROLES",
           "auto_choices", "autotuning", "calls", "candidates", "core_backend_name", "decl_of", "declarations",
           "declare_callable", "find", "is_callable_name", "is_testing", "label_of", "layer_cores", "layer_decl",
           "library_of", "plugin_decl", "plugin_problems", "pool_access", "pool_access_of", "register",
           "size_dependent", "stack_columns", "unregister", "view_order"]
