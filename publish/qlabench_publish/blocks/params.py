"""A block's KEY=VALUE parameters: the checks that turn their text into values, and the wording of a
parameter's error (a block's parameters are no command-line flags: an error speaks of `tp=x`, not `--tp`)."""

from __future__ import annotations

import re
from collections.abc import Iterable

from qlabench.core.errors import ConfigError


def int_param(name: str, value: str, least: int = 1) -> int:
    """`value` as an integer >= `least`; a ConfigError naming the parameter otherwise."""
    try:
        n = int(value)
    except ValueError:
        raise ConfigError(f"parameter {name}={value}: must be an integer") from None
    if n < least:
        raise ConfigError(f"parameter {name}={value}: must be at least {least}")
    return n


def heads_param(name: str, value: str) -> tuple[int, int]:
    """'2/8' -> (2, 8): H_QK/H_V, each a positive integer."""
    parts = value.split("/")
    if len(parts) != 2:
        raise ConfigError(f"parameter {name}={value}: must be H_QK/H_V, e.g. 2/8")
    try:
        return int_param(name, parts[0]), int_param(name, parts[1])
    except ConfigError:
        raise ConfigError(f"parameter {name}={value}: must be H_QK/H_V, two positive integers, e.g. 2/8") from None


def as_parameters(message: str, names: Iterable[str]) -> str:
    """`message` with a command-line flag that is one of the block's parameters (`--seqlens`) spoken of as that
    parameter: a function the block shares with a command words its errors for the command."""
    for name in names:
        message = re.sub(rf"--{re.escape(name)}\b", f"parameter {name}", message)
    return message
