"""`advise`: the ranked answer to "which GDN kernel for my model, TP degree and sequences", from rows.

For each case of the question: the rows of that kernel problem at the user's gate, one library version
per backend (the newest present), the newest run of each; ranked fastest first with speedups against the
user's current choice, noise and correctness; the caveats that change the answer (caveats.py); and
which backends have no row, with a suite that measures exactly those (suite.py). Nothing is guessed:
a case without rows says so.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from qlabench.analyze.advise import caveats as cv
from qlabench.analyze.advise.question import WORKLOAD_MODES, Case, Question
from qlabench.analyze.advise.ranking import Entry, rank
from qlabench.analyze.advise.rows import at_gate, newest_run, newest_version, problem_rows
from qlabench.analyze.advise.suite import missing_suite
from qlabench.core.errors import ConfigError
from qlabench.store.files import read_results

# The GPU kernels a recommendation is between, per workload (the naive references are oracles, not
# candidates). FlashInfer's GDN prefill has no backward.
CANDIDATES = {
    "prefill": ("flash_qla", "flash_qla-nocp", "flash_qla-forcecp", "fla", "flashinfer"),
    "train": ("flash_qla", "flash_qla-nocp", "fla"),
}
# The committed H200 evidence advise reads when given no results: the study's runs (the current and the
# published library stacks). Other folders under results/ hold deliberate slowdowns (gate evidence) or
# superseded runs, which must never be read as a kernel's speed.
DEFAULT_EVIDENCE = ("results/h200-study",)


@dataclass
class CaseAnswer:
    case: Case
    entries: list[Entry]
    caveats: list[str]
    missing: list[str]  # candidate backends with no row at the user's gate

    @property
    def best(self) -> Entry | None:
        return next((e for e in self.entries if e.ok), None)


@dataclass
class Answer:
    question: Question
    sources: list[str]
    cases: list[CaseAnswer] = field(default_factory=list)
    suite_toml: str | None = None  # measures every missing (backend, case); None when nothing is missing

    @property
    def complete(self) -> bool:
        return not any(c.missing for c in self.cases)

    def as_dict(self) -> dict:
        q = self.question
        return {
            "question": {"model": q.model, "tp": q.tp, "heads": list(q.heads), "workload": q.workload,
                         "gate": {"name": q.gate.name, "zero_frac": q.gate.zero_frac, "scale": q.gate.scale},
                         "current": q.current, "dtype": q.dtype, "cases": [c.label for c in q.cases]},
            "sources": self.sources,
            "cases": [{"case": c.case.label, "tokens": c.case.total_tokens,
                       "recommended": c.best.backend if c.best else None,
                       "entries": [e.as_dict() for e in c.entries], "caveats": c.caveats, "missing": c.missing}
                      for c in self.cases],
            "complete": self.complete,
            "suite_toml": self.suite_toml,
        }


def default_evidence(root: str | os.PathLike | None = None) -> list[Path]:
    """The committed evidence under the project (the current directory's results/, else the checkout's)."""
    here = [Path(root) if root else Path.cwd(), Path(__file__).resolve().parents[3]]
    for base in here:
        paths = [base / p for p in DEFAULT_EVIDENCE if (base / p).exists()]
        if paths:
            return paths
    raise ConfigError("no results given and no committed evidence found (results/h200-study): "
                      "pass result files or folders")


def answer_case(df: pd.DataFrame, q: Question, case: Case) -> CaseAnswer:
    modes = WORKLOAD_MODES[q.workload]
    problem = problem_rows(df, q, case, modes + ("fwd_bwd",) if len(modes) > 1 else modes)
    mine_rows = at_gate(problem, q.gate)
    entries = rank(newest_run(newest_version(mine_rows)), modes, q.current)
    present = {e.backend for e in entries}
    missing = [b for b in CANDIDATES[q.workload] if b not in present]
    notes = (cv.current_caveats(entries, q.current) + cv.tie_caveats(entries) + cv.cp_caveats(entries)
             + cv.gate_caveats(problem, q, modes, entries) + cv.version_caveats(mine_rows, modes, q, entries)
             + cv.mixing_caveats(entries))
    return CaseAnswer(case, entries, notes, missing)


def advise(q: Question, results: Iterable[str | os.PathLike] = ()) -> Answer:
    """Answer `q` from `results` (files or folders), or from the committed evidence when none are given."""
    paths = [Path(p) for p in results] or default_evidence()
    df = read_results(paths)
    ans = Answer(q, [str(p) for p in paths])
    ans.cases = [answer_case(df, q, c) for c in q.cases]
    if not ans.complete:
        ans.suite_toml = missing_suite(q, {c.case: c.missing for c in ans.cases if c.missing})
    return ans
