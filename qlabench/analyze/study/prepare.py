"""Result rows made ready for the study: labels, gate values, library stack, CP launch, dominant kernel.

Everything here is read from what each row recorded. A row's *stack* is the version of the library its
backend runs (flash_qla rows: flash-qla and tilelang; fla rows: fla and triton), so rows of two library
versions on the same point stay apart, while a re-run on the same versions supersedes the older run.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from qlabench.analyze.evidence.records import grouped_records
from qlabench.analyze.evidence.stacks import main_version, stack_label
from qlabench.analyze.evidence.kernels import short_name
from qlabench.analyze.kit.labels import heads_label, layout_label
from qlabench.core import kernel_event
from qlabench.core.identity import GATE_PARAMS, workload_axes
from qlabench.core.backend_decl import AUTO_CHOICE_OF, stack_columns
from qlabench.core.libraries import version_key
from qlabench.core.point import FLASHQLA_GATE_SCALE, FLASHQLA_GATE_ZERO_FRAC
from qlabench.analyze.evidence.regimes import prefer_recommended
from qlabench.store.keys import key_series, newest_rows, plain_value

# Gate axes the study varies (nullable columns; a file written before them reads them as null).
GATE_AXES = GATE_PARAMS

# What a null gate axis means, per gate profile: core's defaults, in core's meaning (only the flashqla
# profile zeroes heads and divides g: g = logsigmoid(randn) / gate_scale; the published g/16 is 16).
PROFILE_GATE_DEFAULTS = {"flashqla": {"gate_zero_frac": FLASHQLA_GATE_ZERO_FRAC, "gate_scale": FLASHQLA_GATE_SCALE}}

# The kernels that launch only when FlashQLA's / FLA's intra-card CP splits a call (core/kernel_event.py).
CP_KERNEL_MARK = kernel_event.FLASHQLA_CP_MARK
FLA_INTRACP = "fla-intracp"
FLA_CP_KERNEL_MARK = kernel_event.FLA_CP_MARK
FLASH_QLA = "flash_qla"
FLASH_QLA_VARIANTS = AUTO_CHOICE_OF[FLASH_QLA].variants  # backend -> auto / nocp / forcecp (core/libraries.py)



def library_of(backend: str) -> str:
    """'flash_qla-nocp' -> 'flash_qla': variants of one library share its stack."""
    return str(backend).split("-", 1)[0]


def version_columns(library: str) -> tuple[str, ...]:
    """The version columns of a library's stack, its own first (core/libraries.py)."""
    return stack_columns(library) or (f"{library}_version",)


def _seq(v) -> list:
    v = plain_value(v)
    return list(v) if isinstance(v, tuple) else []


def cp_launched(row) -> bool | None:
    """For a FlashQLA or fla-intracp row with recorded kernels: whether its intra-card CP split ran
    (FlashQLA's warm-up kernel, FLA's pre-scan)."""
    if library_of(row["backend"]) == FLASH_QLA:
        mark = CP_KERNEL_MARK
    elif row["backend"] == FLA_INTRACP:
        mark = FLA_CP_KERNEL_MARK
    else:
        return None
    names = _seq(row.get("kernels"))
    if not names:
        return None
    return any(mark in str(n) for n in names)


def dominant_kernel(row) -> tuple[str | None, float | None]:
    """The kernel (short name) with the largest share of the call's kernel time, and that share."""
    names, durs = _seq(row.get("kernels")), _seq(row.get("kernel_dur_us"))
    if not names or len(durs) != len(names):
        return None, None
    total: dict[str, float] = {}
    for n, d in zip(names, durs):
        if d is not None and not (isinstance(d, float) and math.isnan(d)):
            total[short_name(n)] = total.get(short_name(n), 0.0) + float(d)
    s = sum(total.values())
    if not total or s <= 0:
        return None, None
    name = max(total, key=total.get)
    return name, total[name] / s


def effective_gate(row, axis: str) -> float | None:
    """The gate axis value a row ran with: its own, else its profile's default (None if unknown)."""
    v = plain_value(row.get(axis))
    if v is not None:
        return float(v)
    return PROFILE_GATE_DEFAULTS.get(row.get("gate"), {}).get(axis)


def gate_label(row) -> str:
    frac, scale = row.get("gate_zero_frac_eff"), row.get("gate_scale_eff")
    parts = [str(row.get("gate"))]
    if frac is not None and not pd.isna(frac):
        parts.append(f"{frac:.0%} zero-gate heads")
    if scale is not None and not pd.isna(scale):
        parts.append(f"g/{scale:g}")
    return ", ".join(parts)


def sequences_short(seqlens) -> str:
    """'4x8192' for equal lengths, '28672+4096' otherwise."""
    lens = [int(s) for s in _seq(seqlens)]
    if len(lens) > 1 and len(set(lens)) == 1:
        return f"{len(lens)}x{lens[0]}"
    return "+".join(map(str, lens))


def prepare(df: pd.DataFrame) -> pd.DataFrame:
    """Every row with the study's derived columns; nothing dropped, nothing deduplicated."""
    d = df.copy().reset_index(drop=True)
    for a in GATE_AXES:
        if a not in d.columns:
            d[a] = np.nan
    if d.empty:
        for c in ("heads", "sequences", "seqkey", "library", "stack", "lib_version", "gate_zero_frac_eff",
                  "gate_scale_eff", "gate_label", "cp_launched", "dominant_kernel", "dominant_share",
                  "study_key", "point_key"):
            d[c] = pd.Series(dtype=object)
        return d
    recs = d.to_dict("records")
    d["heads"] = [heads_label(r) for r in recs]
    d["sequences"] = [layout_label(r) for r in recs]
    d["seqkey"] = ["+".join(str(int(s)) for s in _seq(r["seqlens"])) for r in recs]
    d["library"] = [library_of(r["backend"]) for r in recs]
    d["stack"] = [stack_label(r) for r in recs]
    d["lib_version"] = [main_version(r) for r in recs]
    for a in GATE_AXES:
        d[f"{a}_eff"] = [effective_gate(r, a) for r in recs]
    recs = d.to_dict("records")
    d["gate_label"] = [gate_label(r) for r in recs]
    d["cp_launched"] = pd.Series([cp_launched(r) for r in recs], dtype=object)
    dom = [dominant_kernel(r) for r in recs]
    d["dominant_kernel"] = [n for n, _ in dom]
    d["dominant_share"] = [s for _, s in dom]
    # The point without its backend (core/identity.py's workload axes), gate axes as run (null -> the
    # profile default).
    eff = d.assign(**{a: d[f"{a}_eff"] for a in GATE_AXES})
    d["study_key"] = key_series(eff, workload_axes())
    d["point_key"] = d["backend"].astype(str) + " " + d["study_key"]
    return d


def newest_per_stack(d: pd.DataFrame) -> pd.DataFrame:
    """The newest row per (backend, point, stack, GPU model): a re-run supersedes, another library version or
    GPU model does not; a row in the recommended timing regime supersedes one in another, however new
    (evidence/regimes.py)."""
    by = ("point_key", "stack", "device") if "device" in d.columns else ("point_key", "stack")
    if d.empty:
        return newest_rows(d, by)
    return newest_rows(prefer_recommended(d, list(by)), by)


def primary_stacks(d: pd.DataFrame) -> dict[str, str]:
    """Per backend, the stack whose rows are 'ours': the newest version of the backend's library."""
    out = {}
    for backend, grp in grouped_records(d, "backend", sort=True, columns=("lib_version", "timestamp", "stack")):
        best = max(grp, key=lambda r: (version_key(r["lib_version"]), str(r["timestamp"])))
        out[str(backend)] = best["stack"]
    return out


def is_primary(d: pd.DataFrame, stacks: dict[str, str]) -> pd.Series:
    return pd.Series([stacks.get(b) == s for b, s in zip(d["backend"], d["stack"])], index=d.index, dtype=bool)
