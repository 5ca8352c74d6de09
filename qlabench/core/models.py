"""Model catalogue: the GDN head configurations of the Qwen3.5 family, as served at a TP degree.

Head counts come from FlashQLA's benchmark table (qlabench/analyze/data/README.md); head dim is 128.
Tensor parallelism splits both head counts, so a TP degree must divide both (`tp_degrees`; `qlabench models`
lists each model's heads at each of them).
"""

from __future__ import annotations

from dataclasses import dataclass

from qlabench.core.errors import PointError


@dataclass(frozen=True)
class ModelHeads:
    name: str
    h_qk: int
    h_v: int
    head_dim: int = 128
    aliases: tuple[str, ...] = ()

    def at_tp(self, tp: int) -> tuple[int, int]:
        """(h_qk, h_v) on one GPU at this TP degree; PointError (a ValueError) if tp does not divide both."""
        if tp < 1:
            raise PointError(f"tp must be >= 1, got {tp}")
        if self.h_qk % tp or self.h_v % tp:
            raise PointError(
                f"tp={tp} does not divide the heads of {self.name} (h_qk={self.h_qk}, h_v={self.h_v})"
            )
        return self.h_qk // tp, self.h_v // tp

    def tp_degrees(self) -> tuple[int, ...]:
        """Every TP degree this model's heads can be divided by: the divisors of both head counts, in order."""
        return tuple(tp for tp in range(1, min(self.h_qk, self.h_v) + 1) if not self.h_qk % tp and not self.h_v % tp)

    def heads_by_tp(self) -> dict[int, tuple[int, int]]:
        """{tp: (h_qk, h_v) on one GPU} for every TP degree of `tp_degrees`."""
        return {tp: self.at_tp(tp) for tp in self.tp_degrees()}


CATALOGUE: tuple[ModelHeads, ...] = (
    ModelHeads("qwen3.5-397b", 16, 64, aliases=("397b",)),
    ModelHeads("qwen3.5-122b", 16, 64, aliases=("122b",)),
    ModelHeads("qwen3.5-35b", 16, 32, aliases=("35b",)),
    ModelHeads("qwen3.5-27b", 16, 48, aliases=("27b",)),
    ModelHeads("qwen3.5-9b", 16, 32, aliases=("9b",)),
    ModelHeads("qwen3.5-4b", 16, 32, aliases=("4b",)),
    ModelHeads("qwen3.5-2b", 16, 16, aliases=("2b",)),
    ModelHeads("qwen3.5-0.8b", 16, 16, aliases=("0.8b",)),
    # Synthetic symmetric configuration from FlashQLA's table ("Sym h32").
    ModelHeads("sym-h32", 32, 32, aliases=("sym32",)),
)

_BY_NAME = {m.name: m for m in CATALOGUE} | {a: m for m in CATALOGUE for a in m.aliases}


def lookup(name: str) -> ModelHeads:
    """Find a model by canonical name or alias (case-insensitive); KeyError lists the known names."""
    key = name.strip().lower()
    if key not in _BY_NAME:
        known = ", ".join(m.name for m in CATALOGUE)
        raise KeyError(f"unknown model {name!r}; known: {known} (`qlabench models` lists their heads at each TP "
                       "degree)")
    return _BY_NAME[key]
