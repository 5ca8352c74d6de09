"""The libraries a result row records, in one table: each one's version column, its Python distribution,
the backends that run it and the other columns that make up its stack; and the one rule that orders
versions. The environment probe, compare's environment guard, advise, the study's stacks, the serving
page and the evidence layer all read it. `AUTO_CHOICES`: the libraries that decide per call whether to split
it, and the backends that pin that decision.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from qlabench.core import kernel_event


@dataclass(frozen=True)
class Library:
    name: str  # as shown: 'flash-qla'
    column: str  # the row's version column: 'flash_qla_version'
    dist: str | None = None  # the Python distribution whose version is recorded (None: not a package)
    backend: str | None = None  # the backend family that runs it: 'flash_qla' covers 'flash_qla-nocp'
    stack: tuple[str, ...] = ()  # further version columns of its stack (the compiler under it)
    moves_timings: bool = True  # a change can move a time (compare's environment guard); False: informational


LIBRARIES: tuple[Library, ...] = (
    Library("torch", "torch_version", "torch"),
    Library("triton", "triton_version", "triton"),
    Library("tilelang", "tilelang_version", "tilelang"),
    Library("flash-qla", "flash_qla_version", "flash-qla", backend="flash_qla", stack=("tilelang_version",)),
    Library("fla", "fla_version", "fla-core", backend="fla", stack=("triton_version",)),
    Library("flashinfer", "flashinfer_version", "flashinfer-python", backend="flashinfer"),
    Library("cuda", "cuda_version"),
    Library("driver", "driver_version", moves_timings=False),
)
BY_COLUMN = {lib.column: lib for lib in LIBRARIES}


def version_columns(moves_timings_only: bool = False) -> tuple[str, ...]:
    """Every library's version column, in the table's order."""
    return tuple(lib.column for lib in LIBRARIES if lib.moves_timings or not moves_timings_only)


def package_name(column: str) -> str:
    """'flash_qla_version' -> 'flash-qla' (a column outside the table: its name without `_version`)."""
    lib = BY_COLUMN.get(column)
    return lib.name if lib else column.removesuffix("_version").replace("_", "-")


def library_of(backend: str) -> Library | None:
    """The library a backend runs: 'flash_qla-nocp' -> flash-qla, 'fla-intracp' -> fla; None for the
    naive references and the layer backends."""
    b = str(backend)
    for lib in LIBRARIES:
        if lib.backend and (b == lib.backend or b.startswith(lib.backend + "-")):
            return lib
    return None


def stack_columns(backend: str) -> tuple[str, ...]:
    """The version columns naming a backend's stack, its library's first; () for a backend of no library."""
    lib = library_of(backend)
    return (lib.column, *lib.stack) if lib else ()


def version_key(v) -> tuple:
    """The one order of versions: '0.1.13' after '0.1.3', '0.7.2' after '0.6.13', a local build after its
    release ('2.9.1+cu128' > '2.9.1'); a missing version sorts first (never the newest)."""
    if v is None or v == "" or (isinstance(v, float) and v != v):
        return ()
    parts = []
    for tok in re.findall(r"\d+|[a-z]+", str(v).lower()):
        parts.append((1, int(tok), "") if tok.isdigit() else (0, 0, tok))
    return (1, *parts)


@dataclass(frozen=True)
class AutoChoice:
    """A library that decides per call whether to split it (intra-card CP), the backend that leaves the
    decision to it and the backends that pin it. The study's regret table and advise's auto-CP caveat read
    this table; a library added here gets both."""

    library: str  # Library.name: 'flash-qla'
    auto: str  # the backend that leaves the decision to the library: 'flash_qla'
    pinned: tuple[tuple[str, str], ...]  # (setting, backend): ('nocp', 'flash_qla-nocp'), ...
    cp_mark: str  # a kernel launched only when the call split (core/kernel_event.py)

    @property
    def variants(self) -> dict[str, str]:
        """backend -> setting, the auto one first: {'flash_qla': 'auto', 'flash_qla-nocp': 'nocp', ...}."""
        return {self.auto: "auto", **{backend: setting for setting, backend in self.pinned}}

    @property
    def settings(self) -> tuple[str, ...]:
        return tuple(setting for setting, _ in self.pinned)


AUTO_CHOICES: tuple[AutoChoice, ...] = (
    AutoChoice("flash-qla", "flash_qla", (("nocp", "flash_qla-nocp"), ("forcecp", "flash_qla-forcecp")),
               kernel_event.FLASHQLA_CP_MARK),
    AutoChoice("flashinfer", "flashinfer", (("nocp", "flashinfer-nocp"), ("forcecp", "flashinfer-forcecp")),
               kernel_event.FLASHINFER_CP_MARK),
)
AUTO_CHOICE_OF = {c.auto: c for c in AUTO_CHOICES}  # the auto backend -> its library's AutoChoice
