"""The suite file's vocabulary (its axes, their defaults, what [[exclude]] matches on) and the tables that
expand to more than one axis value: `cp = [...]` and `split = [...]`.

Part of the suite parser (spec.py), kept apart to keep each module small. Pure Python, no torch.
"""

from __future__ import annotations

from typing import Any

from qlabench.core.errors import SpecError
from qlabench.core import models
from qlabench.core.point import (BETA_REGIMES, CP_MODES, DTYPES, GATES, LAYOUTS, MODES, STATE_DTYPES,
                                 STATE_LAYOUTS, gate_params_effective)
from qlabench.core.splits import MAX_PERMUTATION, random_split


# Axis name -> (element type(s), allowed values or None). Scalars are taken as one-element lists.
AXES: dict[str, tuple[tuple[type, ...], tuple | None]] = {
    "backends": ((str,), None),
    "modes": ((str,), MODES),
    "batch": ((int,), None),
    "seqlen": ((int,), None),
    "varlen": ((list,), None),
    "split": ((dict,), None),
    "heads": ((dict,), None),
    "K": ((int,), None),
    "V": ((int,), None),
    "dtype": ((str,), DTYPES),
    "gate": ((str,), GATES),
    "gate_zero_frac": ((float,), None),
    "gate_scale": ((float,), None),
    "seed": ((int,), None),
    "initial_state": ((bool,), None),
    "cp": ((dict,), None),
    # serving modes only (decode, mtp): the state pool's dtype and layout, and its slots as a multiple of batch
    "state_dtype": ((str,), STATE_DTYPES),
    "state_layout": ((str,), STATE_LAYOUTS),
    "pool_factor": ((int,), None),
    "beta_regime": ((str,), ("sigmoid",) + BETA_REGIMES),  # sigmoid: sigmoid(randn), stored as null
    # SMs a point may use (a green context; docs/SM-BUDGET.md): positive counts, or "all" (the whole GPU, stored
    # as null; TOML has no null)
    "sm_budget": ((int, str), None),
}
# What a serving point gets when its sweep does not say: an fp32 pool in FLA's layout, twice the batch.
SERVING_DEFAULTS = {"state_dtype": "float32", "state_layout": "kv", "pool_factor": 2}
AXIS_DEFAULTS: dict[str, list] = {
    "batch": [1], "K": [128], "V": [128], "dtype": ["bfloat16"], "gate": ["flashqla"],
    "seed": [0], "initial_state": [True], "modes": ["fwd"], "seqlen": [], "varlen": [], "split": [],
    "cp": [{}], "gate_zero_frac": [None], "gate_scale": [None],
    "state_dtype": [None], "state_layout": [None], "pool_factor": [None], "beta_regime": ["sigmoid"],
    "sm_budget": ["all"],
}
# Keys an [[exclude]] rule may match on: the point's fields, plus `seqlen` (dense T), each with the value
# type(s) and allowed values its sweep axis has (a value no point can have would exclude nothing).
_AS_AXIS = {"backend": "backends", "mode": "modes", "pool": "pool_factor"}  # pool: slots, an integer as the factor
MATCH_KEYS: dict[str, tuple[tuple[type, ...], tuple | None]] = {
    **{k: AXES[_AS_AXIS.get(k, k)] for k in (
        "backend", "mode", "batch", "seqlen", "K", "V", "dtype", "gate", "gate_zero_frac", "gate_scale", "seed",
        "initial_state", "state_dtype", "state_layout", "pool", "beta_regime")},
    "sm_budget": ((int,), None),  # a count; the whole GPU ("all") is matched by leaving the key out
    **{k: ((int,), None) for k in ("h_qk", "h_v", "tp", "total_tokens", "cp_world_size")},
    "model": ((str,), None), "layout": ((str,), LAYOUTS), "cp_mode": ((str,), CP_MODES),
    "seqlens": ((list,), None),  # one packed layout: a list of lengths
}
_TYPE_WORDS = {str: "a string", int: "an integer", bool: "a boolean", float: "a number", list: "a list of integers"}


def exclude_value_problem(key: str, value: Any) -> str | None:
    """Why an [[exclude]] value can never match (a wrong type, or a value its axis does not allow), or None.
    A list means any of its values (except for `seqlens`, whose value is itself a list of lengths)."""
    types, allowed = MATCH_KEYS[key]
    values = value if isinstance(value, list) and key != "seqlens" else [value]
    for v in values:
        if not is_of(v, types) or (key == "seqlens" and not all(is_of(x, (int,)) for x in v)):
            return (f"must be {_TYPE_WORDS[types[0]]} (or a list of them), got {type(v).__name__} {v!r}: "
                    "it would exclude nothing")
        if allowed is not None and v not in allowed:
            return f"{v!r} is not one of {', '.join(map(str, allowed))}: it would exclude nothing"
    return None


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


WHOLE_GPU = "all"  # the sm_budget value for no budget


def budget_values(values: list, where: str, path: str) -> list[int | None]:
    """The `sm_budget` axis as Point values: positive SM counts, and "all" (the whole GPU) as None. Whether the
    device can grant a count is the run's to check (measure/sm_budget.py), not the suite's."""
    out = []
    for i, v in enumerate(values):
        if isinstance(v, str) and v != WHOLE_GPU:
            raise SpecError(path, f"{where}.sm_budget[{i}]", f"must be a positive number of SMs or {WHOLE_GPU!r} (the "
                            f"whole GPU), got {v!r}")
        out.append(None if v == WHOLE_GPU else v)
    return out


def matches_exclude(f: dict, rule: dict) -> bool:
    """Whether a combination's fields (as `_expand` gives them) match every key of an [[exclude]] rule."""
    for k, want in rule.items():
        if k == "seqlen":
            have = f["seqlens"][0] if f["layout"] == "dense" else None
        elif k == "seqlens":
            have = list(f["seqlens"])
        elif k == "total_tokens":
            have = sum(f["seqlens"])
        elif k == "beta_regime":
            have = f["beta_regime"] or "sigmoid"
        elif k in ("gate_zero_frac", "gate_scale"):  # 0.25 matches the default, stored as null
            have = gate_params_effective(f["gate"], f["gate_zero_frac"], f["gate_scale"])[k]
        else:
            have = f[k]
        options = want if isinstance(want, list) and k != "seqlens" else [want]
        if k == "model":
            options = [models.lookup(o).name if isinstance(o, str) else o for o in options]
        if have not in options:
            return False
    return True
