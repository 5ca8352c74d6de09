"""The rows of the large-batch view: forward rows on the whole GPU, one per problem, backend and GPU model, each
with the labels the tables print (heads, sequences, tokens) and a problem label that tells apart problems that
differ on some other axis (a dtype, a gate), so no table puts two problems in one line; a `family` is the
problems of one GPU model, heads and those other axes, whatever the sequences: what an equal-token comparison
compares across.

Nothing here measures or judges: the rows come believed (analyze/evidence/belief.py), so a row whose check
failed is `incorrect` and one whose time cannot be true is `error`, each with its reason, and no view of this
package shows their times.
"""

from __future__ import annotations

import pandas as pd

from qlabench.analyze.evidence import split_problems, whole_device
from qlabench.analyze.kit.labels import heads_label, layout_label
from qlabench.core.errors import QlabenchError
from qlabench.store.keys import key_value

COLUMNS = ("device", "problem", "family", "heads", "h_qk", "h_v", "sequences", "num_seqs", "seq_len", "tokens",
           "backend", "status", "reason", "median_ms", "rel_noise", "run_id", "timestamp", "kernels", "kernel_dur_us",
           "kernel_grid", "extra_mem_mib", "outside_mem_mib")
# Problem axes the labels show already (heads, sequences); any other axis on which problems differ is named.
LABELLED = ("h_qk", "h_v", "seqlens")


def _seq_len(row) -> int | None:
    lens = {int(x) for x in row["seqlens"]}
    return lens.pop() if len(lens) == 1 else None


def batch_frame(df: pd.DataFrame) -> pd.DataFrame:
    """The forward rows of `df` measured on the whole GPU, the newest per problem, backend and GPU model, with
    COLUMNS; QlabenchError when none is left."""
    if df.empty or "mode" not in df.columns:
        raise QlabenchError("no result rows to report on")
    d = whole_device(df[df["mode"] == "fwd"])
    if d.empty:
        raise QlabenchError("no forward row measured on the whole GPU here: the large-batch page reads "
                            "forward rows (measure qlabench/suites/large-batch.toml)")
    out = []
    for problem in split_problems(d, across=("backend",)):
        rows = problem.rows.sort_values("timestamp", kind="stable").drop_duplicates("backend", keep="last")
        other = ", ".join(f"{a}={'default' if v is None else v}" for a, v in problem.differs if a not in LABELLED)
        for r in rows.to_dict("records"):
            heads, seqs = heads_label(r), layout_label(r)
            family = heads + (f" ({other})" if other else "")
            out.append({**{c: r.get(c) for c in COLUMNS}, "device": problem.device, "family": family,
                        "problem": f"{heads} {seqs}" + (f" ({other})" if other else ""),
                        "heads": heads, "h_qk": int(r["h_qk"]), "h_v": int(r["h_v"]), "sequences": seqs,
                        "num_seqs": len(r["seqlens"]), "seq_len": _seq_len(r),
                        "tokens": int(key_value(r.get("total_tokens")) or sum(int(x) for x in r["seqlens"])),
                        "median_ms": r.get("median_ms") if r["status"] == "ok" else None})
    frame = pd.DataFrame(out, columns=list(COLUMNS))
    order = ["device", "h_v", "h_qk", "family", "tokens", "num_seqs", "problem"]
    return frame.sort_values(order, kind="stable").reset_index(drop=True)


def problem_order(d: pd.DataFrame) -> list[tuple[str, str]]:
    """The (GPU model, problem) pairs of a batch frame in table order: per GPU model and heads, by tokens, then
    sequences. A table's line is one of these: rows of two GPU models are never one line."""
    return list(dict.fromkeys(zip(d["device"], d["problem"])))


def rows_of(d: pd.DataFrame, key: tuple[str, str]) -> pd.DataFrame:
    """The rows of one (GPU model, problem)."""
    return d[(d["device"] == key[0]) & (d["problem"] == key[1])]


def runs_of(d: pd.DataFrame) -> dict[str, str]:
    """{run id: its letter}, oldest run first: the tables name a row's run by letter, the page lists them."""
    first = d.groupby("run_id")["timestamp"].min().sort_values(kind="stable")
    letters = [chr(ord("A") + i) if i < 26 else f"R{i + 1}" for i in range(len(first))]
    return dict(zip(map(str, first.index), letters))
