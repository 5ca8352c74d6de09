"""A published table (analyze/data: FlashQLA's, one per GPU it publishes) made ready for the study, and the
matching of our rows to its rows.

How the tables were made (qlabench/analyze/data/README.md): FlashQLA's benchmark script, each on its own GPU
and stack (the table's header); every case packed as batch 1 with cu_seqlens (varlen), K = V = 128, bf16,
g = logsigmoid(randn) / 16 with 25% of the value heads at g = 0, a random initial state; times are the
mean of CUDA-graph replays. Forward rows list their sequence lengths; backward rows (backward kernels
alone) split their total at random, so they match on (h_qk, h_v, total_tokens, num_seqs).
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pandas as pd

from qlabench.analyze.data.published_tables import (PublishedTable, published_table, read_published_csv,
                                                    table_of_file)
from qlabench.core.errors import QlabenchError
from qlabench.core.identity import heads_label, heads_pair
from qlabench.analyze.study.prepare import PROFILE_GATE_DEFAULTS, sequences_short

# Published column of each backend's time.
BACKEND_COLUMNS = {"flash_qla": "flash_qla_ms", "fla": "fla_ms", "flashinfer": "flashinfer_ms"}
# The published method as point axes; a row that differs elsewhere is not the same problem.
PUBLISHED_GATE = "flashqla"
PUBLISHED_METHOD = {"K": 128, "V": 128, "dtype": "bfloat16"}


def published_path() -> Path:
    """The packaged copy of the default table (FlashQLA's H200 table)."""
    return published_table().file


def resolve_published(published: str | os.PathLike | None = None) -> PublishedTable:
    """The table `report --published` names: None, the H200's; a CSV file (a shipped table's provenance where
    its bytes are that table's); else a GPU name ('GB200', 'RTX 5090', 'RTX PRO 6000', 'H200')."""
    if published is None:
        return published_table()
    path = Path(published)
    if path.is_file():
        return table_of_file(path)
    text = str(published)
    if path.suffix.lower() == ".csv" or os.sep in text or "/" in text:
        raise QlabenchError(f"{path}: no such published table")
    return published_table(text)


def load_published(path: str | os.PathLike | PublishedTable | None = None) -> pd.DataFrame:
    """The published table, one row per configuration, with `pub_id`, `heads`, `sequences`, `by_totals`.

    `path`: a CSV file, a PublishedTable, or None (the H200's). `by_totals` marks rows without sequence
    lengths (backward): they match on total tokens and count.
    """
    path = path.file if isinstance(path, PublishedTable) else Path(path) if path is not None else published_path()
    pub = read_published_csv(path)
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
