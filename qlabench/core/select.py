"""Choosing part of a suite from the command line: `--backends` and `--modes` (run sweep, warmup).

A name the suite does not have is an error that lists what it has: a typo must not run an empty
or partial sweep silently.
"""

from __future__ import annotations

from collections.abc import Sequence

from qlabench.core.errors import ConfigError
from qlabench.core.point import Point


def parse_names(value: str | None) -> tuple[str, ...]:
    """'a,b, c' -> ('a', 'b', 'c'); None or '' -> () (no filter)."""
    return tuple(n.strip() for n in (value or "").split(",") if n.strip())


def selected_indices(points: Sequence[Point], backends: Sequence[str] = (), modes: Sequence[str] = (),
                     where: str = "suite") -> list[int]:
    """Indices of the points whose backend is in `backends` and mode in `modes` (an empty filter keeps all)."""
    for axis, wanted in (("backend", backends), ("mode", modes)):
        have = sorted({getattr(p, axis) for p in points})
        unknown = [w for w in wanted if w not in have]
        if unknown:
            raise ConfigError(f"{where} has no {axis} {unknown[0]!r} (it has: {', '.join(have)})")
    keep = [i for i, p in enumerate(points)
            if (not backends or p.backend in backends) and (not modes or p.mode in modes)]
    if not keep:
        raise ConfigError(f"{where}: no point has backend in {list(backends)} and mode in {list(modes)}")
    return keep
