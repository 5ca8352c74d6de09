"""`qlabench backends` lists each backend from its declaration where that answers (backends/declared.py): what it
lists is what the loaded backend says, and only a backend whose packages are installed, or a plugin, is loaded."""

from __future__ import annotations

from qlabench.backends import REGISTRY
from qlabench.backends.base import Backend
from qlabench.backends.declared import Declared, listed
from qlabench.core.backend_decl import declarations
from qlabench.core.backend_needs import first_missing


def _facts(b) -> tuple:
    return (b.name, b.description, b.modes, b.dtypes, b.devices, b.cp_modes, b.testing, b.available(),
            b.first_use_note())


def test_each_listed_backend_says_what_its_loaded_backend_says():
    for b in listed():
        assert _facts(b) == _facts(REGISTRY[b.name]), b.name


def test_a_backend_needing_no_package_is_available_as_any_backend_is():
    # the declaration's promise the listing relies on: no `needs`, no availability check of its own
    for name, decl in declarations().items():
        if not decl.plugin and not decl.needs:
            b = REGISTRY[name]
            core = getattr(b, "core", b)  # a layer backend is as available as its core
            assert type(core).available is Backend.available, name


def test_a_backend_is_loaded_only_when_its_packages_are_installed():
    for b in listed():
        decl = declarations()[b.name]
        if isinstance(b, Declared):
            assert not decl.plugin and (not decl.needs or first_missing(decl.needs) is not None), b.name
        else:
            assert decl.plugin or first_missing(decl.needs) is None, b.name
