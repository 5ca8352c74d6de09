"""FlashQLA's published H200 table (shipped as qlabench/analyze/data/flashqla_h200_published.csv) and the
matching of our rows to its rows.

How the table was made (qlabench/analyze/data/README.md): flash-qla 0.1.2, tilelang 0.1.9, fla 0.5.1,
flashinfer 0.6.13, torch 2.9.1; every case packed as batch 1 with cu_seqlens (varlen), K = V = 128, bf16,
g = logsigmoid(randn) / 16 with 25% of the value heads at g = 0, a random initial state; times are the
mean of CUDA-graph replays. Forward rows list their sequence lengths; backward rows (backward kernels
alone) split their total at random, so they match on (h_qk, h_v, total_tokens, num_seqs).
"""

from __future__ import annotations

import importlib.resources
import os
from pathlib import Path

import numpy as np
import pandas as pd

from qlabench.core.errors import QlabenchError
from qlabench.core.identity import heads_label, heads_pair
from qlabench.analyze.study.prepare import PROFILE_GATE_DEFAULTS, sequences_short

PUBLISHED_FILE = "flashqla_h200_published.csv"
# Published column of each backend's time.
BACKEND_COLUMNS = {"flash_qla": "flash_qla_ms", "fla": "fla_ms", "flashinfer": "flashinfer_ms"}
# The library versions the published numbers were measured with (version column -> version).
PUBLISHED_STACK = {"flash_qla_version": "0.1.2", "tilelang_version": "0.1.9", "fla_version": "0.5.1",
                   "flashinfer_version": "0.6.13", "torch_version": "2.9.1+cu128"}
PUBLISHED_TIMER = "graph"  # tilelang do_bench(backend="cudagraph"): mean of graph replays
# The published method as point axes; a row that differs elsewhere is not the same problem.
PUBLISHED_GATE = "flashqla"
PUBLISHED_METHOD = {"K": 128, "V": 128, "dtype": "bfloat16"}
_COLUMNS = ("mode", "model_config", "seqlens", "num_seqs", "total_tokens", "h_qk", "h_v") + tuple(
    BACKEND_COLUMNS.values())


def published_path() -> Path:
    """The packaged copy of the table."""
    return Path(str(importlib.resources.files("qlabench.analyze") / "data" / PUBLISHED_FILE))


def load_published(path: str | os.PathLike | None = None) -> pd.DataFrame:
    """The published table, one row per configuration, with `pub_id`, `heads`, `sequences`, `by_totals`.

    `by_totals` marks rows without sequence lengths (backward): they match on total tokens and count.
    """
    path = Path(path) if path is not None else published_path()
    if not path.is_file():
        raise QlabenchError(f"{path}: no such published table")
    try:
        pub = pd.read_csv(path, dtype={"seqlens": str, "model_config": str, "mode": str})
    except (OSError, ValueError, pd.errors.ParserError) as e:
        raise QlabenchError(f"{path}: cannot read the published table: {e}") from None
    missing = [c for c in _COLUMNS if c not in pub.columns]
    if missing:
        raise QlabenchError(f"{path}: not a published table: missing columns {', '.join(missing)}")
    pub = pub.reset_index(drop=True)
    pub["seqlens"] = pub["seqlens"].fillna("").astype(str).str.strip()
    pub["pub_id"] = np.arange(len(pub))
    pub["by_totals"] = pub["seqlens"] == ""
    pub["heads"] = [heads_label(q, v) for q, v in zip(pub["h_qk"], pub["h_v"])]
    pub["sequences"] = [published_sequences(r) for r in pub.to_dict("records")]
    pub["match_key"] = [match_key(r["mode"], r["h_qk"], r["h_v"], r["seqlens"], r["total_tokens"], r["num_seqs"],
                                  r["by_totals"]) for r in pub.to_dict("records")]
    return pub


def published_sequences(r) -> str:
    if r["by_totals"]:
        n = int(r["num_seqs"])
        return f"{n} seq{'' if n == 1 else 's'}, {r['total_tokens']} tokens"
    return sequences_short([int(s) for s in str(r["seqlens"]).split("+")])


def match_key(mode, h_qk, h_v, seqkey, total_tokens, num_seqs, by_totals: bool) -> str:
    if by_totals:
        return f"{mode}|{heads_pair(int(h_qk), int(h_v))}|T{int(total_tokens)}|N{int(num_seqs)}"
    return f"{mode}|{heads_pair(int(h_qk), int(h_v))}|{seqkey}"


def method_differences(row) -> tuple[str, ...]:
    """How a row's problem differs from the published method (empty: the same problem)."""
    out = []
    if row["layout"] != "varlen":
        out.append(f"{row['layout']} layout (published: packed varlen)")
    if row["gate"] != PUBLISHED_GATE:
        out.append(f"gate profile {row['gate']} (published: {PUBLISHED_GATE})")
    else:
        defaults = PROFILE_GATE_DEFAULTS[PUBLISHED_GATE]
        frac, scale = row["gate_zero_frac_eff"], row["gate_scale_eff"]
        if frac is not None and not pd.isna(frac) and abs(frac - defaults["gate_zero_frac"]) > 1e-9:
            out.append(f"{frac:.0%} zero-gate heads (published: {defaults['gate_zero_frac']:.0%})")
        if scale is not None and not pd.isna(scale) and abs(scale - defaults["gate_scale"]) > 1e-12:
            out.append(f"g/{scale:g} (published: g/{defaults['gate_scale']:g})")
    if not bool(row["initial_state"]):
        out.append("no initial state (published: random h0)")
    return tuple(out)


def candidates(rows: pd.DataFrame, pub: pd.DataFrame) -> pd.DataFrame:
    """Every (published row, our row) pair on the same problem, one of BACKEND_COLUMNS' backends.

    Columns: the published row's (pub_id, published_ms, ...) and our row's, plus `method_diffs` and `n_diffs`.
    """
    d = rows[rows["backend"].isin(list(BACKEND_COLUMNS))]
    same = np.ones(len(d), dtype=bool)
    for axis, value in PUBLISHED_METHOD.items():
        same &= (d[axis] == value).to_numpy()
    if "cp_world_size" in d.columns:
        same &= d["cp_world_size"].isna().to_numpy()
    d = d[same]
    if d.empty:
        return pd.DataFrame()
    recs = d.to_dict("records")
    d = d.assign(
        key_seq=[match_key(r["mode"], r["h_qk"], r["h_v"], r["seqkey"], 0, 0, False) for r in recs],
        key_tot=[match_key(r["mode"], r["h_qk"], r["h_v"], "", r["total_tokens"], r["num_seqs"], True) for r in recs],
        method_diffs=[method_differences(r) for r in recs])
    d["n_diffs"] = d["method_diffs"].map(len)
    pub_long = published_long(pub)
    keep = ["pub_id", "mode", "model_config", "h_qk", "h_v", "num_seqs", "total_tokens", "heads", "sequences",
            "by_totals", "match_key", "backend", "published_ms"]
    p = pub_long[keep].rename(columns={c: f"pub_{c}" for c in keep if c not in ("pub_id", "backend",
                                                                               "published_ms", "match_key")})
    parts = []
    for by_totals, key in ((False, "key_seq"), (True, "key_tot")):
        sub = p[p["pub_by_totals"] == by_totals]
        parts.append(sub.merge(d, left_on=["match_key", "backend"], right_on=[key, "backend"], how="inner"))
    return pd.concat(parts, ignore_index=True)


def published_long(pub: pd.DataFrame) -> pd.DataFrame:
    """One row per published value: (pub_id, backend, published_ms), NaN values left out."""
    parts = []
    for backend, col in BACKEND_COLUMNS.items():
        sub = pub[pub[col].notna()].assign(backend=backend, published_ms=lambda x, c=col: x[c].astype(float))
        parts.append(sub)
    return pd.concat(parts, ignore_index=True).sort_values(["pub_id", "backend"], kind="stable").reset_index(drop=True)
