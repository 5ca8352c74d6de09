"""Which rows are one problem, and which are one point: keys built from core/identity.py's axes.

A problem is what a kernel computes: the axes flagged `problem` (the backend, mode, heads, head dims,
dtypes, gate, initial state, CP split, the serving state pool and the token lengths), whatever the layout,
seed or model label. One dense sequence of 32768 tokens and the same sequence packed as varlen are one
problem; so are a dense batch of 4 x 8192 and its varlen twin (dense `seqlens` hold one length per
sequence already). An fp32 pool and a bf16 pool are two problems. A new axis is a problem axis until it
says otherwise (core/identity.py: Axis.problem), and reaches every key here by itself.

A time also belongs to the GPU model it ran on (`device`): rows of an H100 and of an H200 are never one
measurement, so the newest row is kept per point *and* device, and `split_problems` never puts two models
in one group. Two cards of one model are told apart by `gpu_uuid` where a row recorded it (`cards`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import pandas as pd

from qlabench.core.identity import problem_axes
from qlabench.store.keys import KEY_COLUMNS, key_series, key_value, newest_rows

DEVICE = "device"  # the GPU model a row ran on (torch's device name), or 'cpu'
UNKNOWN_DEVICE = "device not recorded"


def problem_keys(df: pd.DataFrame) -> pd.Series:
    """The problem each row measured (its backend included): one key string per row."""
    return key_series(df, problem_axes())


def point_keys(df: pd.DataFrame) -> pd.Series:
    """The point each row measured: the backend and every workload axis (the store's key)."""
    return key_series(df, KEY_COLUMNS)


def device_series(df: pd.DataFrame) -> pd.Series:
    """Each row's GPU model ('NVIDIA H200'); UNKNOWN_DEVICE where the row has none."""
    if DEVICE not in df.columns:
        return pd.Series(UNKNOWN_DEVICE, index=df.index, dtype=object)
    return df[DEVICE].astype(object).where(df[DEVICE].notna() & (df[DEVICE].astype(str) != ""), UNKNOWN_DEVICE)


def whole_device(df: pd.DataFrame) -> pd.DataFrame:
    """The rows measured on the whole device: a row held to an SM budget (`sm_budget`, a green context of N SMs)
    measured another problem, and a whole-GPU view (the study's comparison with a published table, a whole-GPU
    ranking) never takes it for one of its own."""
    if "sm_budget" not in df.columns:
        return df
    return df[df["sm_budget"].isna()]


def newest_per_problem(df: pd.DataFrame, keys: pd.Series | None = None) -> pd.DataFrame:
    """The newest row of each problem (any layout, seed or model label); `keys`: problem_keys(df), if built."""
    return newest_rows(df, problem_axes(), keys)


@dataclass(frozen=True)
class Problem:
    """The rows of one problem on one GPU model, as `split_problems` found them."""

    device: str
    differs: tuple[tuple[str, object], ...]  # (axis, value) where this problem differs from the others read
    rows: pd.DataFrame

    @property
    def label(self) -> str:
        """'beta_regime=high' ('beta_regime=default' for a null): what sets this problem apart; '' if nothing."""
        return ", ".join(f"{a}={'default' if v is None else v}" for a, v in self.differs)


def split_problems(df: pd.DataFrame, across: Sequence[str] = ("backend", "mode")) -> list[Problem]:
    """`df` split into problems, each on one GPU model: rows equal on every problem axis not in `across` (the
    axes a view ranks or compares across, e.g. the backend) and on the device. A view that ranks rows ranks
    within one of these and never across two; the largest group comes first, then the one whose differing
    axes are at their defaults (null)."""
    if df.empty:
        return []
    axes = [a for a in problem_axes() if a not in set(across)]
    present = [a for a in axes if a in df.columns]
    keys = key_series(df, present) if present else pd.Series("", index=df.index, dtype=object)
    devices = device_series(df)
    varying = [a for a in present if df[a].astype(object).map(key_value).map(repr).nunique() > 1]
    out = []
    for (dev, _), idx in df.groupby([devices, keys], sort=False).groups.items():
        rows = df.loc[idx]
        first = rows.iloc[0]
        out.append(Problem(str(dev), tuple((a, key_value(first[a])) for a in varying), rows))
    return sorted(out, key=lambda p: (-len(p.rows), any(v is not None for _, v in p.differs), p.device, p.label))


def devices_of(df: pd.DataFrame) -> list[str]:
    """The GPU models the rows ran on, most rows first."""
    return list(device_series(df).value_counts(sort=True).index) if not df.empty else []


def cards(df: pd.DataFrame) -> list[str]:
    """The physical cards the rows ran on where they recorded one (`gpu_uuid`), sorted; [] where none did."""
    if "gpu_uuid" not in df.columns:
        return []
    return sorted({str(u) for u in df["gpu_uuid"].dropna() if str(u)})
