"""`advise`: the ranked answer to "which GDN kernel for my model, TP degree and sequences", from rows.

For each case of the question: the rows of that kernel problem at the user's gate, one library version
per backend (the newest present), the newest run of each; ranked fastest first with speedups against the
user's current choice, noise and correctness; the caveats that change the answer (caveats.py); and
which backends have no row, with a suite that measures exactly those (suite.py). Nothing is guessed:
a case without rows says so.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from qlabench.analyze.advise import caveats as cv
from qlabench.analyze.advise.auto_choice import auto_choice_caveats
from qlabench.analyze.advise.calls import attach_calls, known_candidates
from qlabench.analyze.advise.checked import attach_checks, check_caveats
from qlabench.analyze.advise.engines import engines_for
from qlabench.analyze.advise.first_call import attach_first_calls, load_cold_start
from qlabench.analyze.advise.tuning import tuning_caveats
from qlabench.analyze.advise.question import WORKLOAD_MODES, Case, Question
from qlabench.analyze.advise.ranking import Entry, rank
from qlabench.analyze.advise.rows import at_gate, newest_run, newest_version, problem_rows
from qlabench.analyze.advise.suite import missing_suite
from qlabench.analyze.current import rows_or_current
from qlabench.analyze.evidence import believed, evidence_notes
from qlabench.analyze.evidence.regimes import prefer_recommended, regime_note, regime_series
from qlabench.core.backend_decl import candidates, is_testing


def __getattr__(name: str):
    """CANDIDATES: {workload: the backends a recommendation is between}, from the declarations' roles
    (core/backend_decl.py: candidates)."""
    if name == "CANDIDATES":
        return {w: candidates(w) for w in WORKLOAD_MODES}
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


@dataclass
class CaseAnswer:
    case: Case
    entries: list[Entry]
    caveats: list[str]
    missing: list[str]  # candidate backends with no row at the user's gate
    engines: list[str] = field(default_factory=list)  # how vLLM and SGLang get the winner (engines.py)

    @property
    def best(self) -> Entry | None:
        return next((e for e in self.entries if e.ok), None)


@dataclass
class Answer:
    question: Question
    sources: list[str]
    cases: list[CaseAnswer] = field(default_factory=list)
    suite_toml: str | None = None  # measures every missing (backend, case); None when nothing is missing
    from_catalog: bool = False  # read from the current evidence results/catalog.toml names (no results given)
    notes: list[str] = field(default_factory=list)  # what the evidence layer says about the files read
    first_call_sources: list[str] = field(default_factory=list)  # the cold-start folders behind `first_call`

    @property
    def complete(self) -> bool:
        return not any(c.missing for c in self.cases)

    def as_dict(self) -> dict:
        q = self.question
        return {
            "question": {"model": q.model, "tp": q.tp, "heads": list(q.heads), "workload": q.workload,
                         "gate": {"name": q.gate.name, "zero_frac": q.gate.zero_frac, "scale": q.gate.scale},
                         "current": q.current, "dtype": q.dtype, "cases": [c.label for c in q.cases],
                         "sm_budget": q.sm_budget},
            "sources": self.sources,
            "from_catalog": self.from_catalog,
            "notes": self.notes,
            "first_call_sources": self.first_call_sources,
            "cases": [{"case": c.case.label, "tokens": c.case.total_tokens,
                       "recommended": c.best.backend if c.best else None,
                       "entries": [e.as_dict() for e in c.entries], "caveats": c.caveats, "missing": c.missing,
                       "engines": c.engines}
                      for c in self.cases],
            "complete": self.complete,
            "suite_toml": self.suite_toml,
        }


def answer_case(df: pd.DataFrame, q: Question, case: Case, calls: Mapping[str, str] | None = None,
                autotuning: frozenset[str] = frozenset(), size_dependent: frozenset[str] | None = None) -> CaseAnswer:
    """One case's answer from `df`; `calls`: the registered backends' library calls (calls.py), when known;
    `autotuning`: the backends whose library autotunes (tuning.py); `size_dependent`: those whose code path
    depends on the problem's size (checked.py; None: unknown, every reduced-only check is marked)."""
    modes = WORKLOAD_MODES[q.workload]
    problem = problem_rows(df, q, case, modes + ("fwd_bwd",) if len(modes) > 1 else modes)
    testing = problem["backend"].map(is_testing).astype(bool)  # rows that time the harness are never ranked
    left_out = sorted(set(problem.loc[testing, "backend"]))
    problem = problem[~testing]
    mine_rows = at_gate(problem, q.gate)
    # the recommended timing regime's rows, where a backend has them, however new its other rows are
    ranked = newest_run(newest_version(prefer_recommended(mine_rows, ["backend", "mode"])))
    entries = attach_checks(attach_calls(rank(ranked, modes, q.current), calls), ranked, size_dependent)
    regimes = _attach_regimes(entries, ranked)
    present = {e.backend for e in entries}
    missing = [b for b in known_candidates(candidates(q.workload), calls) if b not in present]
    notes = (cv.current_caveats(entries, q.current) + cv.tie_caveats(entries) + auto_choice_caveats(entries)
             + cv.gate_caveats(problem, q, modes, entries) + cv.version_caveats(mine_rows, modes, q, entries)
             + cv.mixing_caveats(entries) + check_caveats(entries)
             + tuning_caveats(entries, ranked, q.current, autotuning)
             + [n for n in [regime_note(regimes)] if n]
             + ([f"{', '.join(left_out)}: test-only backend(s), their rows time qlabench itself: never ranked"]
                if left_out else []))
    return CaseAnswer(case, entries, notes, missing, engines_for(entries, q.workload))


def _attach_regimes(entries: list[Entry], ranked: pd.DataFrame) -> dict[str, set[str]]:
    """Each timed entry's regime(s), from the rows of its runs; returns them per backend for the note."""
    out: dict[str, set[str]] = {}
    if ranked.empty:
        return out
    of_row = regime_series(ranked)
    for e in entries:
        if not e.ok:
            continue
        mine = (ranked["backend"] == e.backend) & ranked["run_id"].isin(e.runs)
        out[e.backend] = set(of_row[mine])
        e.regime = "/".join(sorted(out[e.backend])) or None
    return out


def advise(q: Question, results: Iterable[str | os.PathLike] = (), calls: Mapping[str, str] | None = None,
           autotuning: frozenset[str] = frozenset(), size_dependent: frozenset[str] | None = None,
           cold_start: Iterable[str | os.PathLike] | None = None) -> Answer:
    """Answer `q` from `results` (files or folders), or from the current evidence of results/catalog.toml
    when none are given; `calls`: {backend: its library call} (the backends' `call_signature`); `cold_start`:
    the `qlabench cold-start` folders behind each entry's first-call cost (None: the catalog's current ones)."""
    df, paths, from_catalog = rows_or_current(results)  # every run: the ranking picks versions and runs itself
    notes = evidence_notes(df)
    df = believed(df)
    ans = Answer(q, [_shown(p) for p in paths] if from_catalog else [str(p) for p in paths], from_catalog=from_catalog,
                 notes=notes)
    ans.cases = [answer_case(df, q, c, calls, autotuning, size_dependent) for c in q.cases]
    if note := budget_note(df, q):
        ans.notes.append(note)
    cold = load_cold_start(cold_start)
    for c in ans.cases:
        attach_first_calls(c.entries, cold, WORKLOAD_MODES[q.workload])
    ans.first_call_sources = list(cold.sources)
    if not ans.complete:
        ans.suite_toml = missing_suite(q, {c.case: c.missing for c in ans.cases if c.missing})
    return ans


def budget_note(df: pd.DataFrame, q: Question) -> str | None:
    """What the answer says about SM budgets: that none of these rows was measured at the one asked for, or
    that rows held to a budget were left out of a whole-GPU answer."""
    budgets = df["sm_budget"].dropna() if "sm_budget" in df else pd.Series(dtype=float)
    if q.sm_budget is not None and not budgets.eq(q.sm_budget).any():
        have = ", ".join(str(int(b)) for b in sorted(set(budgets))) or "none"
        return (f"no row here was measured at an SM budget of {q.sm_budget} (budgets measured: {have}); measure it "
                f"with suites/sm-budget.toml, or a suite with sm_budget = [{q.sm_budget}]")
    if q.sm_budget is None and not budgets.empty:
        return (f"{len(budgets)} row(s) held to an SM budget are left out: this answer is for the whole GPU (ask with "
                "--sm-budget N for a share of it)")
    return None


def _shown(path: Path) -> str:
    """A source as the user can type it: relative to the working directory where it lies below it."""
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)
