"""The libraries a result row records, in one table: each one's version column, its Python distribution,
and the other columns that make up its stack; and the one rule that orders versions. The environment
probe, compare's environment guard, advise, the study's stacks, the serving page and the evidence layer all
read it. Which backend runs which library is each backend's declaration (core/backend_decl.py: `library`,
`library_of`, `stack_columns`); so are the libraries that decide per call whether to split it and the
backends that pin that decision (`AutoChoice` here, derived there: `auto_choices`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass



@dataclass(frozen=True)
class Library:
    name: str  # as shown: 'flash-qla'
    column: str  # the row's version column: 'flash_qla_version'
    dist: str | None = None  # the Python distribution whose version is recorded (None: not a package)
    stack: tuple[str, ...] = ()  # further version columns of its stack (the compiler under it)
    moves_timings: bool = True  # a change can move a time (compare's environment guard); False: informational


LIBRARIES: tuple[Library, ...] = (
    Library("torch", "torch_version", "torch"),
    Library("triton", "triton_version", "triton"),
    Library("tilelang", "tilelang_version", "tilelang"),
    Library("flash-qla", "flash_qla_version", "flash-qla", stack=("tilelang_version",)),
    Library("fla", "fla_version", "fla-core", stack=("triton_version",)),
    Library("flashinfer", "flashinfer_version", "flashinfer-python"),
    Library("cuda", "cuda_version"),
    Library("driver", "driver_version", moves_timings=False),
)
BY_COLUMN = {lib.column: lib for lib in LIBRARIES}
BY_NAME = {lib.name: lib for lib in LIBRARIES}


def version_columns(moves_timings_only: bool = False) -> tuple[str, ...]:
    """Every library's version column, in the table's order."""
    return tuple(lib.column for lib in LIBRARIES if lib.moves_timings or not moves_timings_only)


def package_name(column: str) -> str:
    """'flash_qla_version' -> 'flash-qla' (a column outside the table: its name without `_version`)."""
    lib = BY_COLUMN.get(column)
    return lib.name if lib else column.removesuffix("_version").replace("_", "-")


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
    decision to it and the backends that pin it, derived from the backends' declared `cp_setting`
    (core/backend_decl.py: auto_choices). The study's regret table and advise's auto-CP caveat read it."""

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

    @staticmethod
    def splits(setting: str) -> bool | None:
        """Whether a pinned setting splits the call ('forcecp': True, 'nocp': False; None for another). FlashQLA's
        `force_intra_cp` and FlashInfer's `use_cp=True` only overrule a decision not to split, with the split the
        library's own decision would make: where the auto call split, it made the 'forcecp' call."""
        return {"nocp": False, "forcecp": True}.get(setting)
