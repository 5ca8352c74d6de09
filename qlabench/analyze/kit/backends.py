"""How every view draws a backend: its label, its place, its colour and marker, its library's name.

All of it comes from the backend declarations (core/backend_decl.py): the order is the registry's
(`view_order`), so a backend has one colour and one marker on every figure of every page, and a new backend
gets its own without a table here. A name nothing declares (a test's stand-in, a backend of an older run)
comes after the declared ones, by name.
"""

from __future__ import annotations

from collections.abc import Iterable

from qlabench.core.backend_decl import decl_of, find, label_of, library_of, view_order

# Matplotlib's default cycle, then ten more: one colour for each declared backend before any repeats.
PALETTE = tuple(f"C{i}" for i in range(10)) + ("#393b79", "#637939", "#8c6d31", "#843c39", "#7b4173", "#3182bd",
                                              "#e6550d", "#31a354", "#756bb1", "#636363")
MARKERS = "osD^vP<>Xhp*d"
OTHER = "#999999"  # a name nothing declares

__all__ = ["MARKERS", "PALETTE", "backend_style", "decl_of", "in_view_order", "label_of", "library_name", "place"]


def place(name: str) -> int:
    """The backend's place in every table and legend: the registry's order; an undeclared name after them."""
    order = view_order()
    base = name.removeprefix("layer:")
    return order.index(base) if base in order else len(order)


def in_view_order(names: Iterable[str]) -> list[str]:
    """`names` in view order (undeclared ones last, by name), each once."""
    return sorted(dict.fromkeys(names), key=lambda n: (place(n), n))


def backend_style(name: str) -> dict:
    """{'color', 'marker'}: the one colour and marker the backend has on every figure."""
    i = place(name)
    if i >= len(view_order()):
        return {"color": OTHER, "marker": MARKERS[sum(map(ord, name)) % len(MARKERS)]}
    return {"color": PALETTE[i % len(PALETTE)], "marker": MARKERS[i % len(MARKERS)]}


def library_name(name: str) -> str:
    """The name of the library the backend runs ('flash-qla'), or the backend's own name where it runs none."""
    lib = library_of(name)
    return lib.name if lib else name


def declared(name: str) -> bool:
    return find(name) is not None
