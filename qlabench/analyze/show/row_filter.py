"""Narrowing stored rows to the ones a user asks about: model and TP degree, heads, lengths, gate, backend,
mode. `show` uses it; so can any library caller.

A model at a TP degree selects rows by the heads it has there (a kernel sees heads, not a model name),
so `--model qwen3.5-122b --tp 8` finds the h 2/8 rows a run recorded under qwen3.5-397b.
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from qlabench.analyze.kit.labels import gate_label_of, gate_short
from qlabench.core.errors import ConfigError
from qlabench.core.models import lookup


@dataclass(frozen=True)
class RowFilter:
    model: str | None = None
    tp: int | None = None
    heads: str | None = None  # "h_qk/h_v", e.g. "8/32"
    seqlen: int | None = None  # rows with a sequence of exactly this length
    tokens: int | None = None  # rows with this many tokens in one call
    gate: str | None = None  # a gate label as tables print it ('flashqla', 'flashqla(zero=0,/64)') or short
    backends: tuple[str, ...] = ()
    mode: str | None = None
    sm_budget: int | None = None  # rows held to this many SMs (docs/SM-BUDGET.md)
    keep: tuple[str, ...] = ()  # backends kept beside `backends` (the baseline of the speedups), not asked for

    def heads_wanted(self) -> tuple[int, int] | None:
        if self.model is not None:
            try:
                return lookup(self.model).at_tp(self.tp or 1)
            except KeyError as e:
                raise ConfigError(str(e.args[0])) from None
            except ValueError as e:
                raise ConfigError(str(e)) from None
        if self.tp is not None:
            raise ConfigError("--tp needs --model (a TP degree divides a model's heads)")
        if self.heads is None:
            return None
        qk, sep, v = self.heads.partition("/")
        try:
            return int(qk.lstrip("h")), int(v)
        except ValueError:
            raise ConfigError(f"--heads must be H_QK/H_V, e.g. 8/32; got {self.heads!r}") from None

    def with_keep(self, keep: tuple[str, ...]) -> "RowFilter":
        """This filter keeping `keep`'s backends beside the asked ones (the baseline of the speedups)."""
        from dataclasses import replace

        return replace(self, keep=tuple(dict.fromkeys(self.keep + keep)))

    def describe(self) -> str:
        parts = [f"{k}={v}" for k, v in self.__dict__.items() if v not in (None, ()) and k != "keep"]
        return ", ".join(parts) or "no filter"

    def _by_backend(self, d: pd.DataFrame) -> pd.DataFrame:
        """Rows of the asked backends (and the kept ones); none of the asked ones is an error, as for every
        other filter: the baseline kept for the speedups would otherwise fill the table alone (a typo, or a
        glob, which is not expanded)."""
        asked = d["backend"].isin(self.backends)
        if not asked.any():
            raise ConfigError(f"no rows left after the backend filter ({self.describe()}); backends here: "
                              + ", ".join(sorted(set(map(str, d["backend"])))))
        return d[asked | d["backend"].isin(self.keep)]

    def apply(self, df: pd.DataFrame) -> pd.DataFrame:
        """The rows that pass every given criterion; ConfigError naming the criterion that left none."""
        if self.model is not None and self.heads is not None:
            raise ConfigError("give --model/--tp or --heads, not both")
        steps = []
        heads = self.heads_wanted()
        if heads is not None:
            steps.append(("heads", lambda d: d[(d["h_qk"] == heads[0]) & (d["h_v"] == heads[1])]))
        if self.seqlen is not None:
            steps.append(("seqlen", lambda d: d[d["seqlens"].map(lambda s: self.seqlen in [int(x) for x in s])]))
        if self.tokens is not None:
            steps.append(("tokens", lambda d: d[d["total_tokens"] == self.tokens]))
        if self.gate is not None:
            steps.append(("gate", lambda d: d[d.apply(lambda r: self.gate in (gate_label_of(r), gate_short(r)),
                                                       axis=1)] if not d.empty else d))
        if self.backends:
            steps.append(("backend", self._by_backend))
        if self.mode is not None:
            steps.append(("mode", lambda d: d[d["mode"] == self.mode]))
        if self.sm_budget is not None:
            steps.append(("sm_budget", lambda d: d[d["sm_budget"] == self.sm_budget] if "sm_budget" in d else d.iloc[:0]))
        for name, step in steps:
            df = step(df)
            if df.empty:
                raise ConfigError(f"no rows left after the {name} filter ({self.describe()})")
        return df
