"""Suite-file tables that expand to more than one axis value: `cp = [...]` and `split = [...]`.

Part of the suite parser (spec.py), kept apart to keep each module small. Pure Python, no torch.
"""

from __future__ import annotations

from typing import Any

from qlabench.core.errors import SpecError
from qlabench.core.point import CP_MODES
from qlabench.core.splits import MAX_PERMUTATION, random_split


def is_of(value: Any, types: tuple[type, ...]) -> bool:
    # bool is an int in Python; keep them apart so `batch = true` is a type error.
    if isinstance(value, bool) and bool not in types:
        return False
    if float in types and isinstance(value, int) and not isinstance(value, bool):
        return True
    return isinstance(value, types)


def cp_entries(entries: list[dict], where: str, path: str) -> list[tuple[int | None, str | None]]:
    """`cp = [{ world_size = 2, mode = "inter" }, {}]`: ({} is one device, no context parallelism)."""
    out = []
    for i, c in enumerate(entries):
        key = f"{where}.cp[{i}]"
        extra = set(c) - {"world_size", "mode"}
        if extra:
            raise SpecError(path, f"{key}.{sorted(extra)[0]}", "unknown key (allowed: world_size, mode)")
        if not c:
            out.append((None, None))
            continue
        for k in ("world_size", "mode"):
            if k not in c:
                raise SpecError(path, f"{key}.{k}", "missing (give world_size and mode, or {} for one device)")
        ws, mode = c["world_size"], c["mode"]
        if not is_of(ws, (int,)) or ws < 2:
            raise SpecError(path, f"{key}.world_size", f"must be an integer >= 2, got {ws!r}")
        if mode not in CP_MODES:
            raise SpecError(path, f"{key}.mode", f"{mode!r} is not one of {', '.join(CP_MODES)}")
        out.append((ws, mode))
    return out


def split_entries(entries: list[dict], where: str, path: str) -> list[tuple[int, ...]]:
    """`split = [{ tokens = [8192, 32768], n = [1, 2, 4, 8], seed = 42 }]`: FlashQLA's random splits
    (qlabench/core/splits.py), one packed layout per (tokens, n), tokens outer."""
    out = []
    for i, e in enumerate(entries):
        key = f"{where}.split[{i}]"
        extra = set(e) - {"tokens", "n", "seed"}
        if extra:
            raise SpecError(path, f"{key}.{sorted(extra)[0]}", "unknown key (allowed: tokens, n, seed)")
        lists = {}
        for k in ("tokens", "n"):
            if k not in e:
                raise SpecError(path, f"{key}.{k}", "missing (give tokens, n and optionally seed)")
            vals = e[k] if isinstance(e[k], list) else [e[k]]
            for v in vals:
                if not is_of(v, (int,)) or v < 1:
                    raise SpecError(path, f"{key}.{k}", f"must be a positive integer or a list of them, got {v!r}")
            lists[k] = vals
        seed = e.get("seed", 42)
        if not is_of(seed, (int,)) or seed < 0:
            raise SpecError(path, f"{key}.seed", f"must be a non-negative integer, got {seed!r}")
        for tokens in lists["tokens"]:
            if tokens >= MAX_PERMUTATION:
                raise SpecError(path, f"{key}.tokens", f"{tokens} tokens: splits of more than {MAX_PERMUTATION - 1} "
                                "tokens are not supported")
            for n in lists["n"]:
                if n > tokens:
                    raise SpecError(path, f"{key}.n", f"cannot split {tokens} tokens into {n} non-empty sequences")
                out.append(random_split(tokens, n, seed))
    return out
