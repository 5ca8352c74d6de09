"""The current ranking per model, TP degree and workload: `advise`'s answer for every sequence mix the
current evidence measured at that model's heads.

Each case is answered exactly as `qlabench advise --model M --tp N --workload W --seqlens CASE` answers
it from the same rows (analyze/answer/: the answer advise prints), so the site and the command never disagree.
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from qlabench.analyze.answer.answer import CaseAnswer, answer_case
from qlabench.analyze.answer.question import PUBLISHED, WORKLOAD_MODES, Case, Question
from qlabench.analyze.evidence import device_series
from qlabench.core.models import lookup
from qlabench.core.names import slug
from qlabench.store.keys import key_value

CURRENT = "fla"  # speedups are against FLA, as advise's default --current
# The mode whose rows say a case was measured for a workload (a training step needs its backward).
CASE_MODES = {"prefill": ("fwd",), "train": ("bwd_train", "fwd_bwd")}
# Per-sample and per-kernel lists advise never reads: each case's filtering copies every column it is
# given, and these are most of a row's bytes (without them the site's rankings take seconds, not a
# minute). Every scalar column stays: advise's rules read more of them than a list here could keep up
# with (tests/analyze/test_site.py holds that a case ranks here exactly as advise ranks it).
# `kernels` stays: a row's code path is read off them where it traced none (answer/ranking.py row_path).
LIST_COLUMNS = ("samples_ms", "kernel_dur_us", "kernel_grid", "kernel_block", "kernel_blocks_per_sm",
                "phases_s", "cp_rank_ms", "cp_rank_fwd_ms", "cp_rank_bwd_ms")


@dataclass
class Ranking:
    model: str
    tp: int
    workload: str
    question: Question
    cases: list[CaseAnswer]
    # the GPU model every case is answered on: a ranking per GPU model (rows of two are never ranked together);
    # the one with most rows keeps the plain file name
    gpu: str | None = None
    primary: bool = True

    @property
    def slug(self) -> str:
        """The ranking's file names (a model label as the rows spell it may hold a space or a capital)."""
        on = "" if self.primary or not self.gpu else f"-{self.gpu}"
        return slug(f"{self.model}-tp{self.tp}-{self.workload}{on}")

    @property
    def title(self) -> str:
        return f"{self.model} TP{self.tp} · {self.workload}" + (f" · {self.gpu}" if self.gpu else "")


def model_tps(rows: pd.DataFrame) -> list[tuple[str, int]]:
    """The (model, TP) pairs the rows name whose model the catalogue knows, by model then TP."""
    pairs = set()
    for m, tp in rows[["model", "tp"]].dropna().drop_duplicates().itertuples(index=False, name=None):
        try:
            lookup(str(m)).at_tp(int(tp))
        except (KeyError, ValueError):
            continue
        pairs.add((str(m), int(tp)))
    return sorted(pairs, key=lambda p: (lookup(p[0]).h_v, p[0], p[1]))


def cases_of(rows: pd.DataFrame, q: Question, workload: str) -> list[Case]:
    """The sequence mixes measured at the question's heads for the workload, fewest tokens first."""
    h_qk, h_v = q.heads
    d = q.head_dim
    at = rows[(rows["h_qk"] == h_qk) & (rows["h_v"] == h_v) & (rows["K"] == d) & (rows["V"] == d)
              & (rows["dtype"] == q.dtype) & rows["mode"].isin(CASE_MODES[workload])]
    if "cp_world_size" in at:
        at = at[at["cp_world_size"].isna()]
    lens = {tuple(int(x) for x in key_value(s)) for s in at["seqlens"]}
    return sorted((Case(s) for s in lens), key=lambda c: (c.total_tokens, len(c.seqlens), c.seqlens))


def rankings(current: pd.DataFrame) -> list[Ranking]:
    """Every (model, TP, workload) the current rows answer, each case ranked as advise ranks it (the backends'
    facts from their declarations, as advise reads them). Each entry's first-call cost comes from the
    catalog's current cold-start records, as advise's does (answer/first_call.py)."""
    from qlabench.analyze.answer.first_call import attach_first_calls, load_cold_start

    cold = load_cold_start()
    out = []
    current = current.drop(columns=[c for c in LIST_COLUMNS if c in current])
    # pandas' arrow-backed strings cost a conversion on every row advise iterates: plain objects (the
    # same values, missing ones as NaN as before) make the whole site's rankings several times faster.
    current = current.astype({c: object for c in current.columns if current[c].dtype == "str"}).copy()  # one block
    for model, tp in model_tps(current):
        for workload in WORKLOAD_MODES:
            q = Question(model, tp, workload, (), PUBLISHED, CURRENT)
            h_qk, h_v = q.heads
            heads = current[(current["h_qk"] == h_qk) & (current["h_v"] == h_v)]
            devices = device_series(heads)
            # one ranking per GPU model, the one with most rows first (it keeps the plain file name)
            by_rows = sorted(devices.value_counts().items(), key=lambda kv: (-kv[1], str(kv[0])))
            first = True
            for gpu, _ in by_rows:
                mine = heads[devices == gpu]
                cases = cases_of(mine, q, workload)
                if not cases:
                    continue
                qg = Question(model, tp, workload, tuple(cases), PUBLISHED, CURRENT, gpu=str(gpu))
                by_case = mine.groupby(mine["seqlens"].map(lambda s: tuple(int(x) for x in s)))
                answers = [answer_case(by_case.get_group(c.seqlens), qg, c, current) for c in cases]
                for a in answers:
                    attach_first_calls(a.entries, cold, WORKLOAD_MODES[workload])
                if any(a.entries for a in answers):
                    out.append(Ranking(model, tp, workload, qg, answers, str(gpu), first))
                    first = False
    return out
