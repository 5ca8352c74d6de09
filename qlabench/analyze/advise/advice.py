"""`advise`: the answer to a question (analyze/answer/) and, where a candidate has no row, the suite that
measures exactly what the answer is missing (suite.py; `--suite-out` writes it); for a question about a GPU
(`--gpu`) with no row of a case there, what FlashQLA published for that card (published.py)."""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass

from qlabench.analyze.advise.published import PublishedAnswer, published_answer
from qlabench.analyze.advise.suite import missing_suite
from qlabench.analyze.answer import Answer, Case, Question, answer_question
from qlabench.core.backend_decl import candidates


@dataclass
class Advice(Answer):
    suite_toml: str | None = None  # measures every missing (backend, case); None when nothing is missing
    published: PublishedAnswer | None = None  # FlashQLA's figures for the GPU asked about, where it has no row

    def as_dict(self) -> dict:
        return {**super().as_dict(), "suite_toml": self.suite_toml,
                "published": None if self.published is None else self.published.as_dict()}


def advise(q: Question, results: Iterable[str | os.PathLike] = (),
           cold_start: Iterable[str | os.PathLike] | None = None, also: Iterable[str | os.PathLike] = ()) -> Advice:
    """`answer_question(q, results, cold_start, also)` with the suite measuring its missing points (None: none):
    candidates without a row, and those whose rows a new run makes rankable (Answer.to_measure_by_case)."""
    ans = Advice(**vars(answer_question(q, results, cold_start, also)))
    if missing := ans.to_measure_by_case():
        ans.suite_toml = missing_suite(q, missing)
    unmeasured = list(dict.fromkeys(c.case for c in ans.cases if not c.entries))
    if q.gpu is not None and unmeasured:  # published, not measured: never ranked with the rows
        ans.published = published_answer(q, unmeasured, measured_nothing=not ans.devices)
    return ans


def missing_on(ans: Answer, device: str) -> dict[Case, list[str]]:
    """Per case, the candidates with no row on GPU model `device` (as rows record it), or only rows a new run
    makes rankable there (CaseAnswer.stale): the case's answer on that model misses them, and a case with no answer
    there misses every candidate. What `advise --measure` measures: rows of another GPU answer nothing about this
    one."""
    out: dict[Case, list[str]] = {}
    for case in ans.question.cases:
        here = [c for c in ans.cases if c.case == case and c.device == device]
        missing = (list(dict.fromkeys(b for c in here for b in c.missing + c.stale)) if here
                   else list(candidates(ans.question.workload)))
        if missing:
            out[case] = missing
    return out
