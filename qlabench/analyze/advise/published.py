"""What FlashQLA published for the GPU a question is about, where qlabench measured nothing there: advise's
"published, not measured" section (`qlabench advise --gpu "RTX 5090" ...`).

For each case the answer has no row of, the published table of that card (analyze/data) gives its rows at
the question's heads and sequences; where the table has no such row, the nearest it has (heads first, then
sequences: the fewest doublings away in total tokens, sequence count and longest sequence), and says which.
Nothing here is a measurement, and nothing is ranked: the times are FlashQLA's, on FlashQLA's stack.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import pandas as pd

from qlabench.analyze.answer import Case, Question
from qlabench.analyze.data.published_tables import PublishedTable, published_tables, read_published_csv, table_of_gpu
from qlabench.core.select import sequences_label

# Each published time column, as the section names it.
TIME_COLUMNS = {"flash_qla_ms": "flash_qla", "flashinfer_ms": "flashinfer", "fla_ms": "fla"}
# What each published mode timed, in the question's words.
MODE_MEANS = {"fwd": "forward", "bwd": "backward kernels alone (FlashQLA's forward run first)"}


@dataclass(frozen=True)
class PublishedRow:
    mode: str
    model_config: str  # the table's own label: '397B/122B TP8'
    heads: tuple[int, int]
    sequences: str  # '32768', '4x8192', or '4 seqs, 32768 tokens' (a backward row's random split)
    times_ms: dict[str, float]  # backend -> published ms; a backend the table has no time of is left out
    nearest: tuple[str, ...] = ()  # what of the question the table lacks where this is the nearest row ("heads 4/12")

    def as_dict(self) -> dict:
        return {"mode": self.mode, "model_config": self.model_config, "heads": list(self.heads),
                "sequences": self.sequences, "published_ms": self.times_ms, "exact": not self.nearest,
                "nearest": list(self.nearest)}


@dataclass(frozen=True)
class PublishedCase:
    case: Case
    rows: tuple[PublishedRow, ...]  # per published mode, the row at the question's heads and sequences or nearest

    @property
    def exact(self) -> bool:
        return all(not r.nearest for r in self.rows)

    def as_dict(self) -> dict:
        return {"case": self.case.label, "exact": self.exact, "rows": [r.as_dict() for r in self.rows]}


@dataclass(frozen=True)
class PublishedAnswer:
    """FlashQLA's figures for the GPU asked about, at the cases qlabench has no row of there."""

    gpu: str  # as asked
    measured_nothing: bool  # no row of this GPU model at all in the evidence read (else: none of these cases)
    table: PublishedTable | None  # None: FlashQLA publishes no table for it
    cases: tuple[PublishedCase, ...] = ()
    tables: tuple[str, ...] = ()  # the GPUs FlashQLA publishes tables for (where `table` is None)

    def as_dict(self) -> dict:
        t = self.table
        return {"gpu": self.gpu, "measured_nothing": self.measured_nothing, "published_by": "FlashQLA",
                "measured_by_qlabench": False,
                "table": None if t is None else {"gpu": t.gpu, "stack": t.versions, "source": t.source,
                                                 "header": list(t.header)},
                "cases": [c.as_dict() for c in self.cases], "published_tables": list(self.tables)}


def published_answer(q: Question, cases: list[Case], measured_nothing: bool) -> PublishedAnswer:
    """FlashQLA's published figures for `q.gpu` at `cases` (those the answer has no row of on that GPU)."""
    table = table_of_gpu(q.gpu)
    if table is None:
        return PublishedAnswer(q.gpu, measured_nothing, None, tables=tuple(t.name for t in published_tables()))
    pub = read_published_csv(table.file)
    # FlashQLA publishes a forward and a backward apart, never a training step: a train question shows both
    pub = pub[pub["mode"].isin(("fwd", "bwd") if q.workload == "train" else ("fwd",))]
    out = []
    for case in cases:
        rows = []
        for _, grp in pub.groupby("mode", sort=False):
            found, differs = _nearest(grp, q.heads, case)
            rows += [_row(r, tuple(differs)) for r in found.to_dict("records")]
        out.append(PublishedCase(case, tuple(rows)))
    return PublishedAnswer(q.gpu, measured_nothing, table, tuple(out))


def _nearest(rows: pd.DataFrame, heads: tuple[int, int], case: Case) -> tuple[pd.DataFrame, list[str]]:
    """The rows at the question's heads and sequences, else the nearest; and what differs from the question."""
    differs = []
    pairs = sorted({(int(a), int(b)) for a, b in zip(rows["h_qk"], rows["h_v"])},
                   key=lambda p: (_doublings(p[0], heads[0]) + _doublings(p[1], heads[1]), p[1], p[0]))
    if not pairs:
        return rows, differs
    if pairs[0] != tuple(heads):
        differs.append(f"heads {heads[0]}/{heads[1]}")
    rows = rows[(rows["h_qk"] == pairs[0][0]) & (rows["h_v"] == pairs[0][1])]
    by_totals = rows["seqlens"] == ""  # a backward row's split is random: it matches on tokens and count only
    key = "+".join(map(str, case.seqlens))
    exact = rows[rows["seqlens"] == key] if not by_totals.all() else rows[
        (rows["total_tokens"] == case.total_tokens) & (rows["num_seqs"] == len(case.seqlens))]
    if not exact.empty:
        return exact, differs
    dist = [_seq_distance(case, r) for r in rows.to_dict("records")]
    best = min(dist)
    found = rows[[d == best for d in dist]]
    differs.append(f"sequences {case.label}")
    return found, differs


def _doublings(a: float, b: float) -> float:
    return abs(math.log2(a / b))


def _seq_distance(case: Case, r: dict) -> float:
    """How many doublings apart a published row's sequences are from the case's (tokens, count, longest)."""
    lens = [int(s) for s in r["seqlens"].split("+")] if r["seqlens"] else []
    longest = max(lens) if lens else int(r["total_tokens"]) / int(r["num_seqs"])
    return (_doublings(int(r["total_tokens"]), case.total_tokens) + _doublings(int(r["num_seqs"]), len(case.seqlens))
            + _doublings(longest, max(case.seqlens)))


def _sequences(r: dict) -> str:
    if r["seqlens"]:
        return sequences_label(tuple(int(s) for s in r["seqlens"].split("+")))
    n = int(r["num_seqs"])
    return f"{n} seq{'' if n == 1 else 's'}, {int(r['total_tokens'])} tokens (a random split)"


def _row(r: dict, nearest: tuple[str, ...]) -> PublishedRow:
    times = {name: float(r[col]) for col, name in TIME_COLUMNS.items() if not pd.isna(r[col])}
    return PublishedRow(r["mode"], r["model_config"], (int(r["h_qk"]), int(r["h_v"])), _sequences(r), times, nearest)
