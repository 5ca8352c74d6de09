"""Choosing part of a suite from the command line: `--backends`, `--modes`, `--heads` and `--seqlens` (run sweep,
warmup).

A name the suite does not have is an error that lists what it has: a typo must not run an empty
or partial sweep silently. `--heads` takes head configurations as `h_qk/h_v` ('2/8,8/32'): a study measured one
head configuration per run has every answer at those heads from one run, on one card, in one set of minutes.
`--seqlens` takes the sequences of a call as `advise --seqlens` does ('32768,4x8192,8192+24576'): the points that
answer exactly those cases, so one run can hold every backend's time for the cases an answer ranks.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from qlabench.core.errors import ConfigError
from qlabench.core.point import Point


def parse_names(value: str | None, flag: str) -> tuple[str, ...]:
    """'a,b, c' -> ('a', 'b', 'c'); None (the option not given) -> () (no filter). A value that names nothing ('',
    ',,', ' ') is a ConfigError naming `flag`: an unset shell variable (`--seqlens "$LENS"`) must not select the
    whole suite."""
    if value is None:
        return ()
    names = tuple(n.strip() for n in value.split(",") if n.strip())
    if not names:
        raise ConfigError(f"{flag} {value!r} names nothing (an empty value is no filter): give at least one, or "
                          f"leave {flag} out to keep them all")
    return names


def parse_heads(value: str | None, flag: str = "--heads") -> tuple[str, ...]:
    """'2/8, 8/32' -> ('2/8', '8/32'); None -> () (no filter); a value naming nothing is an error (parse_names). A
    name that is not h_qk/h_v of two positive integers is a ConfigError (normalised: ' 02 / 8' is '2/8')."""
    out = []
    for name in parse_names(value, flag):
        parts = [x.strip() for x in name.split("/")]
        if len(parts) != 2 or not all(x.isdigit() and int(x) > 0 for x in parts):
            raise ConfigError(f"--heads takes head configurations as h_qk/h_v (e.g. 2/8,8/32), got {name!r}")
        out.append(f"{int(parts[0])}/{int(parts[1])}")
    return tuple(out)


def parse_sequences(item: str, flag: str = "--seqlens") -> tuple[int, ...]:
    """One call's sequences: '32768' -> (32768,); '4x8192' -> (8192,)*4; '8192+24576' -> (8192, 24576). Anything
    else, or a length or count below 1, is a ConfigError naming `flag`."""
    text = item.strip().lower()
    try:
        if "x" in text:
            count, _, n = text.partition("x")
            lens = (int(n),) * int(count)
        else:
            lens = tuple(int(p) for p in text.split("+"))
    except ValueError:
        raise ConfigError(f"{flag} item {item!r}: expected N, AxN or N+M+... (e.g. 32768, 4x8192, 8192+24576)") from None
    if not lens or min(lens) < 1:
        raise ConfigError(f"{flag} item {item!r}: lengths and counts must be positive")
    return lens


def parse_layouts(value: str | None, flag: str = "--seqlens") -> tuple[tuple[int, ...], ...]:
    """'32768, 4x8192' -> ((32768,), (8192,)*4); None -> () (no filter); a value naming nothing is an error."""
    return tuple(dict.fromkeys(parse_sequences(n, flag) for n in parse_names(value, flag)))


def sequences_label(lens: Sequence[int]) -> str:
    """(8192,)*4 -> '4x8192', (8192, 24576) -> '8192+24576': how --seqlens names a call's sequences."""
    lens = tuple(lens)
    return f"{len(lens)}x{lens[0]}" if len(lens) > 1 and len(set(lens)) == 1 else "+".join(map(str, lens))


def heads_of(p: Point) -> str:
    """A point's head configuration as --heads names it ('2/8')."""
    return f"{p.h_qk}/{p.h_v}"


def _natural(name: str) -> tuple:
    """Sort key: names by their numbers ('2/8' before '16/64', '8x1024' before '32768'), text between as text."""
    return tuple((0, int(x)) if x.isdigit() else (1, x) for x in re.split(r"(\d+)", name) if x)


def selected_indices(points: Sequence[Point], backends: Sequence[str] = (), modes: Sequence[str] = (),
                     where: str = "suite", heads: Sequence[str] = (),
                     seqlens: Sequence[Sequence[int]] = ()) -> list[int]:
    """Indices of the points whose backend is in `backends`, mode in `modes`, head configuration ('h_qk/h_v')
    in `heads` and sequences in `seqlens` (tuples of lengths, a dense batch as its equal lengths; an empty filter
    keeps all)."""
    axes = {"backend": lambda p: p.backend, "mode": lambda p: p.mode, "head configuration": heads_of,
            "sequences": lambda p: sequences_label(p.seqlens)}
    wanted = {"backend": backends, "mode": modes, "head configuration": heads,
              "sequences": [sequences_label(s) for s in seqlens]}
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
