"""`advise`: the answer to a question (analyze/answer/) and, where a candidate has no row, the suite that
measures exactly what the answer is missing (suite.py; `--suite-out` writes it); for a question about a GPU
(`--gpu`) with no row of a case there, what FlashQLA published for that card (published.py)."""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass

from qlabench.analyze.advise.published import PublishedAnswer, published_answer
from qlabench.analyze.advise.suite import missing_suite
from qlabench.analyze.answer import Answer, Question, answer_question


@dataclass
class Advice(Answer):
    suite_toml: str | None = None  # measures every missing (backend, case); None when nothing is missing
    published: PublishedAnswer | None = None  # FlashQLA's figures for the GPU asked about, where it has no row

    def as_dict(self) -> dict:
        return {**super().as_dict(), "suite_toml": self.suite_toml,
                "published": None if self.published is None else self.published.as_dict()}


def advise(q: Question, results: Iterable[str | os.PathLike] = (),
           cold_start: Iterable[str | os.PathLike] | None = None) -> Advice:
    """`answer_question(q, results, cold_start)` with the suite measuring its missing points (None: none)."""
    ans = Advice(**vars(answer_question(q, results, cold_start)))
    if missing := ans.missing_by_case():
        ans.suite_toml = missing_suite(q, missing)
    unmeasured = list(dict.fromkeys(c.case for c in ans.cases if not c.entries))
    if q.gpu is not None and unmeasured:  # published, not measured: never ranked with the rows
        ans.published = published_answer(q, unmeasured, measured_nothing=not ans.devices)
    return ans
