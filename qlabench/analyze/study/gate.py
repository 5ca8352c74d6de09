"""Time against the gate values: FlashQLA auto / nocp / forcecp and FLA, per head config and length.

FlashQLA's intra-card CP warms each split up from a number of chunks it computes from g at run time;
heads with g = 0 (no decay) need long warm-ups. The published method zeroes 25% of the value heads at
gate_scale 16 (g = logsigmoid(randn) / 16). These frames hold one axis swept while the other stays at the
published default.
"""

from __future__ import annotations

import pandas as pd

from qlabench.core.backend_decl import AUTO_CHOICES
from qlabench.core.errors import ConfigError
from qlabench.analyze.study.prepare import GATE_AXES, PROFILE_GATE_DEFAULTS

STUDIED_LIBRARY = "flash-qla"  # the page is about FlashQLA (core/libraries.py's name)
STUDY_BASELINE = "fla"  # its speedups are against FLA, as FlashQLA's published table's are



def gate_backends() -> tuple[str, ...]:
    """The backends this page sweeps the gate for: FlashQLA's own choice and its pinned settings (the
    declarations' AutoChoice of the library the study is about), and the study's baseline, FLA."""
    fq = next((c for c in AUTO_CHOICES if c.library == STUDIED_LIBRARY), None)
    return ((fq.auto, *(b for _, b in fq.pinned)) if fq else ()) + (STUDY_BASELINE,)
COLUMNS = ["mode", "heads", "h_qk", "h_v", "sequences", "seqkey", "total_tokens", "num_seqs", "backend", "stack",
           "value", "median_ms", "cp_launched"]


def gate_sweep(rows: pd.DataFrame, axis: str) -> pd.DataFrame:
    """ok rows of the flashqla gate profile along `axis` (gate_zero_frac or gate_scale), the other gate axis
    at its default, kept only for (mode, heads, sequences) panels measured at two or more values.

    `value` is the axis value as run (null in a row read as the profile default).
    """
    if axis not in GATE_AXES:
        raise ConfigError(f"axis must be one of {GATE_AXES}, got {axis!r}")
    other = next(a for a in GATE_AXES if a != axis)
    default_other = PROFILE_GATE_DEFAULTS["flashqla"][other]
    d = rows[(rows["status"] == "ok") & rows["backend"].isin(gate_backends()) & (rows["gate"] == "flashqla")]
    d = d[(d[f"{other}_eff"] - default_other).abs() < 1e-12]
    if d.empty:
        return pd.DataFrame(columns=COLUMNS)
    d = d.assign(value=d[f"{axis}_eff"].astype(float))
    n_values = d.groupby(["mode", "heads", "sequences"])["value"].transform("nunique")
    d = d[n_values >= 2]
    return d[COLUMNS].sort_values(["mode", "h_v", "h_qk", "total_tokens", "sequences", "backend", "value"],
                                  kind="stable").reset_index(drop=True)
