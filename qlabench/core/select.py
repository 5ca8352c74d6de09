"""Choosing part of a suite from the command line: `--backends`, `--modes` and `--heads` (run sweep, warmup).

A name the suite does not have is an error that lists what it has: a typo must not run an empty
or partial sweep silently. `--heads` takes head configurations as `h_qk/h_v` ('2/8,8/32'): a study measured one
head configuration per run has every answer at those heads from one run, on one card, in one set of minutes.
"""

from __future__ import annotations

from collections.abc import Sequence

from qlabench.core.errors import ConfigError
from qlabench.core.point import Point


def parse_names(value: str | None) -> tuple[str, ...]:
    """'a,b, c' -> ('a', 'b', 'c'); None or '' -> () (no filter)."""
    return tuple(n.strip() for n in (value or "").split(",") if n.strip())


def parse_heads(value: str | None) -> tuple[str, ...]:
    """'2/8, 8/32' -> ('2/8', '8/32'); None or '' -> () (no filter). A name that is not h_qk/h_v of two positive
    integers is a ConfigError (normalised: ' 02 / 8' is '2/8')."""
    out = []
    for name in parse_names(value):
        parts = [x.strip() for x in name.split("/")]
        if len(parts) != 2 or not all(x.isdigit() and int(x) > 0 for x in parts):
            raise ConfigError(f"--heads takes head configurations as h_qk/h_v (e.g. 2/8,8/32), got {name!r}")
        out.append(f"{int(parts[0])}/{int(parts[1])}")
    return tuple(out)


def heads_of(p: Point) -> str:
    """A point's head configuration as --heads names it ('2/8')."""
    return f"{p.h_qk}/{p.h_v}"


def _natural(name: str) -> tuple:
    """Sort key: head configurations by their numbers ('2/8' before '16/64'), other names as text."""
    return tuple(int(x) if x.isdigit() else x for x in name.split("/"))


def selected_indices(points: Sequence[Point], backends: Sequence[str] = (), modes: Sequence[str] = (),
                     where: str = "suite", heads: Sequence[str] = ()) -> list[int]:
    """Indices of the points whose backend is in `backends`, mode in `modes` and head configuration ('h_qk/h_v')
    in `heads` (an empty filter keeps all)."""
    axes = {"backend": lambda p: p.backend, "mode": lambda p: p.mode, "head configuration": heads_of}
    wanted = {"backend": backends, "mode": modes, "head configuration": heads}
    for axis, want in wanted.items():
        have = sorted({axes[axis](p) for p in points}, key=_natural)
        unknown = [w for w in want if w not in have]
        if unknown:
            raise ConfigError(f"{where} has no {axis} {unknown[0]!r} (it has: {', '.join(have)})")
    keep = [i for i, p in enumerate(points) if all(not want or axes[axis](p) in want for axis, want in wanted.items())]
    if not keep:
        asked = ", ".join(f"{axis} in {list(want)}" for axis, want in wanted.items() if want)
        raise ConfigError(f"{where}: no point has {asked}")
    return keep
