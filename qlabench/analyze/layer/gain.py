"""What a faster core is worth in a layer: Amdahl's law over the core's measured share of a layer row.

A `layer:<core>` row (backends/layer/) records in extra_json["layer"] the share s of the layer's time
spent in its GDN core, and how it was measured (kernel trace on CUDA, timer elsewhere). A k-times
faster core then makes the layer x = 1 / ((1 - s) + s / k) times faster, at most 1 / (1 - s), if
nothing else in the layer changes. docs/LAYER.md.
"""

from __future__ import annotations

import dataclasses
import json
import math

import pandas as pd

from qlabench.analyze.evidence.belief import believed
from qlabench.core.errors import MeasureError
from qlabench.core.layer_shapes import core_backend_name
from qlabench.core.point import Point
from qlabench.store.keys import key_value

CORE_SPEEDUPS = (2.0, 4.0)  # the k a report line shows


def amdahl(share: float, k: float) -> float:
    """The layer's speedup when its core (`share` of its time, in [0, 1]) gets `k` times faster (k > 0)."""
    if not 0.0 <= share <= 1.0:
        raise MeasureError(f"a core's share must be in [0, 1], got {share!r}")
    if not k > 0:
        raise MeasureError(f"a core speedup must be positive, got {k!r}")
    return 1.0 / ((1.0 - share) + share / k)


def amdahl_limit(share: float) -> float:
    """The layer's speedup with an infinitely fast core: 1 / (1 - share) (inf when the core is all of it)."""
    return amdahl(share, math.inf) if share < 1.0 else math.inf


def layer_details(extra_json: str | None) -> dict | None:
    """The row's extra_json["layer"], or None for a row without one (a DataFrame's missing value is NaN)."""
    if not isinstance(extra_json, str) or not extra_json:
        return None
    try:
        d = json.loads(extra_json).get("layer")
    except (ValueError, AttributeError):
        return None
    return d if isinstance(d, dict) else None


def layer_share_table(df: pd.DataFrame, ks: tuple[float, ...] = CORE_SPEEDUPS) -> pd.DataFrame:
    """One line per ok layer row with a recorded share: the point, the layer's median, the core's share,
    how it was measured, and the layer speedup for each core speedup in `ks` (columns `layer_x_at_<k>`)
    and at the limit."""
    out = []
    if df.empty or "backend" not in df:
        return pd.DataFrame()
    df = df[df["backend"].map(lambda b: core_backend_name(str(b)) is not None)]
    df = believed(df)  # an impossible or unchecked layer time is no basis for a gain
    layer_rows = df[df["status"] == "ok"]
    for _, row in layer_rows.iterrows():
        d = layer_details(row.get("extra_json"))
        share = None if d is None else d.get("core_share")
        if share is None:
            continue
        point = Point(**{f.name: key_value(row[f.name]) for f in dataclasses.fields(Point)})
        line = {"point": point.label(), "backend": point.backend, "core": core_backend_name(point.backend),
                "median_ms": row["median_ms"], "core_share": float(share),
                "core_share_from": d.get("core_share_from", "")}
        line.update({f"layer_x_at_{k:g}": amdahl(float(share), k) for k in ks})
        line["layer_x_limit"] = amdahl_limit(float(share))
        out.append(line)
    return pd.DataFrame(out)


def layer_lines(df: pd.DataFrame, ks: tuple[float, ...] = CORE_SPEEDUPS) -> list[str]:
    """'a k-times faster core is an x-times faster layer', one line per layer row of `df`."""
    lines = []
    for _, r in layer_share_table(df, ks).iterrows():
        gains = ", ".join(f"{k:g}x core -> {r[f'layer_x_at_{k:g}']:.2f}x layer" for k in ks)
        limit = "no limit" if math.isinf(r["layer_x_limit"]) else f"at most {r['layer_x_limit']:.2f}x"
        lines.append(f"{r['point']}: core {r['core_share']:.0%} of the layer ({r['core_share_from']}); "
                     f"{gains}; {limit}")
    return lines
