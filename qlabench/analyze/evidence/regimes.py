"""Which timing regime each row was timed in, and the rows a ranking reads: the recommended regime's.

The same call reads faster in short bursts from idle than on a GPU kept busy when it draws the card to its
power cap (FlashInfer 0.7's split prefill: up to 9% on the H200; docs/BENCHMARKS.md, "Timing regimes"). A
ranking reads the regime core/regimes.py recommends (`RECOMMENDED_REGIME`, what an engine under load sees):
where a backend has rows in it for a point, its rows in other regimes do not compete, however new; where it
has none, its other rows stay and the view names their regime per row (`regime_note`).
"""

from __future__ import annotations

import pandas as pd

from qlabench.core.regimes import RECOMMENDED_REGIME, UNRECORDED_REGIME


def regime_series(df: pd.DataFrame) -> pd.Series:
    """Each row's timing regime; a row from before the column was recorded was a burst."""
    if "timing_regime" not in df.columns:
        return pd.Series(UNRECORDED_REGIME, index=df.index, dtype=object)
    return df["timing_regime"].astype(object).where(df["timing_regime"].notna(), UNRECORDED_REGIME)


def prefer_recommended(df: pd.DataFrame, keys: pd.Series | list[str]) -> pd.DataFrame:
    """`df` without the rows a ranking must not read: per group of `keys` (a column name list, or one key per
    row), the rows outside the recommended regime where the group has an `ok` row in it."""
    if df.empty:
        return df
    by = [df[k] for k in keys] if isinstance(keys, list) else keys
    recommended = regime_series(df) == RECOMMENDED_REGIME
    has = (recommended & (df["status"] == "ok")).groupby(by, dropna=False).transform("any")
    return df[recommended | ~has]


def regime_note(regimes: dict[str, set[str]]) -> str | None:
    """A view's line for the times that were not read in the recommended regime (None: every one was);
    `regimes`: {backend: the regimes of its ranked rows}."""
    other = {b: sorted(r - {RECOMMENDED_REGIME}) for b, r in regimes.items() if r - {RECOMMENDED_REGIME}}
    if not other:
        return None
    named = ", ".join(f"{b} ({'/'.join(r)})" for b, r in sorted(other.items()))
    return (f"regime: {named} timed in short bursts from idle, not the {RECOMMENDED_REGIME} regime this ranking "
            "reads (docs/BENCHMARKS.md): a call that draws the card to its power cap reads up to 9% fast that way "
            "(FlashInfer 0.7's split prefill on the H200); unverified against the others until re-measured with "
            f'[timing] regime = "{RECOMMENDED_REGIME}"')
