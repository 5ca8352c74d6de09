"""The ranked answer to "which GDN kernel for my model, TP degree and sequences", from rows.

For each case of the question: the rows of that kernel problem at the user's gate, one library version
per backend (the newest present), the newest run of each; ranked fastest first with speedups against the
user's current choice, noise and correctness; the caveats that change the answer (caveats.py); and
which candidates have no row. Nothing is guessed: a case without rows says so. `answer_question` answers
every case of a question; `answer_case` / `answer_cases` one case from rows already read (the site's
rankings, the study page and the docs' advise block).
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from qlabench.analyze.answer import caveats as cv
from qlabench.analyze.answer.auto_choice import auto_choice_caveats
from qlabench.analyze.answer.calls import attach_calls
from qlabench.analyze.answer.checked import attach_checks, check_caveats
from qlabench.analyze.answer.engines import engines_for
from qlabench.analyze.answer.first_call import attach_first_calls, load_cold_start
from qlabench.analyze.answer.tuning import tuning_caveats
from qlabench.analyze.answer.question import WORKLOAD_MODES, Case, Question
from qlabench.analyze.answer.launch_probe import launch_probe_caveats
from qlabench.analyze.answer.measured import floor_of, measured_in, measured_on, off_device_on
from qlabench.analyze.answer.ranking import Entry, rank, remeasurable
from qlabench.analyze.answer.spread import SameCall, apply_floor, between_processes, order_flips
from qlabench.analyze.answer.rows import at_gate, case_problems, newest_version, one_run
from qlabench.analyze.evidence.current import rows_or_current
from qlabench.analyze.kit.ties import is_tie
from qlabench.analyze.evidence import believed, device_series, devices_of, evidence_notes
from qlabench.analyze.evidence.regimes import prefer_recommended, regime_note, regime_series
from qlabench.core.backend_decl import candidates, is_testing
from qlabench.core.gpu_names import names_gpu
from qlabench.core.result import unavailable


@dataclass
class CaseAnswer:
    case: Case
    entries: list[Entry]
    caveats: list[str]
    missing: list[str]  # candidate backends that run here (their declared roles) with no row at the user's gate
    device: str | None = None  # the GPU model every ranked row ran on (None: no row)
    problem: str = ""  # what sets this problem apart from others the rows hold ('beta_regime=high'), else ''
    engines: list[str] = field(default_factory=list)  # how vLLM and SGLang get the winner (engines.py)
    launch: str = "graph"  # the launch regime the entries are ranked in (core/launch.py)
    flips: list[str] = field(default_factory=list)  # runs of these rows that order the two fastest the other way

    @property
    def fastest(self) -> Entry | None:
        """The fastest correct time measured here, whatever is missing."""
        return next((e for e in self.entries if e.ok), None)

    @property
    def unranked(self) -> list[str]:
        """Candidates with rows here that could not be ranked (not checked at size, no time in this regime)."""
        return [e.backend for e in self.entries if e.status == "unranked"]

    @property
    def stale(self) -> list[str]:
        """Unranked candidates a new run makes rankable (ranking.remeasurable): measured again with the missing."""
        return [e.backend for e in self.entries if remeasurable(e)]

    @property
    def best(self) -> Entry | None:
        """The recommendation: the fastest, only where every candidate that runs here was measured and ranked."""
        return None if self.missing or self.unranked else self.fastest

    @property
    def provisional(self) -> Entry | None:
        """The fastest measured where a candidate has no ranked row: a winner only among what was measured."""
        return self.fastest if self.missing or self.unranked else None

    @property
    def tie_set(self) -> list[Entry]:
        """The entries the fastest is not faster than beyond noise (the same-call floor included), and the
        runner-up where another run orders the two the other way; one entry where the fastest has won."""
        timed = [e for e in self.entries if e.ok]
        if not timed:
            return []
        a = timed[0]
        tied = [e for e in timed[1:] if is_tie(a.time_ms, e.time_ms, a.rel_noise, e.rel_noise)]
        if self.flips and len(timed) > 1 and timed[1] not in tied:
            tied.insert(0, timed[1])
        return [a] + tied

    @property
    def tied(self) -> bool:
        """Whether the fastest has not won: another entry is within the measured spread, or another run orders
        the two fastest the other way."""
        return len(self.tie_set) > 1

    @property
    def title(self) -> str:
        """'32768 on NVIDIA H200' (', beta_regime=high' where the rows hold several problems)."""
        return (f"{self.case.label} on {self.device or 'no device (no rows)'}"
                + (f", {self.problem}" if self.problem else ""))

    def as_dict(self) -> dict:
        best, prov = self.best, self.provisional
        return {"case": self.case.label, "tokens": self.case.total_tokens, "device": self.device,
                "problem": self.problem or None,
                "recommended": best.backend if best else None,
                "provisional": prov.backend if prov else None,
                "unmeasured": self.missing, "unranked": self.unranked, "launch": self.launch,
                "tie": [e.backend for e in self.tie_set] if self.tied else [],
                "entries": [e.as_dict() for e in self.entries], "caveats": self.caveats, "missing": self.missing,
                "engines": self.engines}


@dataclass
class Answer:
    question: Question
    sources: list[str]
    cases: list[CaseAnswer] = field(default_factory=list)  # one per case, GPU model and problem the rows hold
    from_catalog: bool = False  # read from the current evidence results/catalog.toml names (no results given)
    notes: list[str] = field(default_factory=list)  # what the evidence layer says about the files read
    first_call_sources: list[str] = field(default_factory=list)  # the cold-start folders behind `first_call`
    devices: list[str] = field(default_factory=list)  # the GPU models of the rows read, most rows first

    @property
    def complete(self) -> bool:
        return not any(c.missing for c in self.cases)

    def as_dict(self) -> dict:
        q = self.question
        return {
            "question": {"model": q.model, "tp": q.tp, "heads": list(q.heads), "workload": q.workload,
                         "launch": q.launch_regime,
                         "gate": {"name": q.gate.name, "zero_frac": q.gate.zero_frac, "scale": q.gate.scale},
                         "current": q.current, "dtype": q.dtype, "cases": [c.label for c in q.cases],
                         "sm_budget": q.sm_budget, "gpu": q.gpu},
            "sources": self.sources,
            "devices": self.devices,
            "from_catalog": self.from_catalog,
            "notes": self.notes,
            "first_call_sources": self.first_call_sources,
            "cases": [c.as_dict() for c in self.cases],
            "complete": self.complete,
        }

    def missing_by_case(self) -> dict[Case, list[str]]:
        """Per case with a candidate unmeasured, those candidates (a case answered on two GPU models misses the
        union of their rows)."""
        out: dict[Case, list[str]] = {}
        for c in self.cases:
            out[c.case] = list(dict.fromkeys(out.get(c.case, []) + c.missing))
        return {c: m for c, m in out.items() if m}

    def to_measure_by_case(self) -> dict[Case, list[str]]:
        """Per case, the candidates a run would add to the answer: the unmeasured and the stale (rows unranked for a
        reason a new run fixes: checked on a reduced problem only, or measured before eager times were recorded)."""
        out: dict[Case, list[str]] = {}
        for c in self.cases:
            out[c.case] = list(dict.fromkeys(out.get(c.case, []) + c.missing + c.stale))
        return {c: m for c, m in out.items() if m}


def answer_cases(df: pd.DataFrame, q: Question, case: Case, floor_rows: pd.DataFrame | None = None) -> list[CaseAnswer]:
    """The case's answers from `df`: one per GPU model and problem its rows hold (evidence.split_problems),
    the largest first; one answer with no entries where no row answers the case. Rows of two GPU models, or
    of two problems (another beta regime, another initial state), are never ranked together. What each
    backend is (its candidacy, call, autotuning, size-dependent path) comes from its declaration
    (core/backend_decl.py). Ties use the same-call floor of `floor_rows` (default `df`) on the answer's GPU model
    (spread.py): a caller that hands one case's rows hands the evidence they came from too."""
    modes = WORKLOAD_MODES[q.workload]
    evidence = df if floor_rows is None else floor_rows  # what the candidates and the same-call floor are read from
    found = case_problems(df, q, case, modes)
    if not found:
        return [_answer(df.iloc[0:0].assign(_zero=[], _scale=[]), q, case, None, "", SameCall(None, 0),
                        measured_in(evidence, modes, None))]
    out = [_answer(p.rows, q, case, p.device, p.label, floor_of(evidence, p.device, q.launch_regime),
                   measured_on(evidence, modes, p.device), off_device_on(evidence, modes, p.device)) for p in found]
    for a in out:  # each answer says what else the rows hold, answered apart
        apart = [o.title for o in out if o is not a]
        if apart:
            a.caveats.insert(0, f"apart: these rows also answer this case {'; '.join(apart)}: answered "
                             "separately, never ranked together (another GPU model or another problem)")
    return out


def answer_case(df: pd.DataFrame, q: Question, case: Case, floor_rows: pd.DataFrame | None = None) -> CaseAnswer:
    """The case's first answer (its largest problem on one GPU model; answer_cases has every one)."""
    return answer_cases(df, q, case, floor_rows)[0]


def _ranked(ranked: pd.DataFrame, q: Question, modes: tuple[str, ...]) -> tuple[list[Entry], str, list[str]]:
    """The entries in the question's launch regime, and the caveat when that regime is the workload's default and
    none of these rows recorded its time while the other regime's times exist (rows measured before the eager
    time was): then ranked on those, and said so. A regime asked for explicitly is never swapped."""
    launch = q.launch_regime
    entries = rank(ranked, modes, q.current, launch)
    if q.launch is not None or any(e.ok for e in entries):
        return entries, launch, []
    other = "graph" if launch == "eager" else "eager"
    alt = rank(ranked, modes, q.current, other)
    if not any(e.ok for e in alt):
        return entries, launch, []
    return alt, other, [f"launch: these rows recorded no {launch} time, so they are ranked on their {other} times; "
                        f"a {q.workload} call is launched {launch} by its users (core/launch.py): re-measure for the "
                        "time it pays there"]


def _launch_difference(ranked: pd.DataFrame, q: Question, modes: tuple[str, ...], entries: list[Entry],
                       launch: str, floor: SameCall, current_rows: pd.DataFrame) -> list[str]:
    """One line where the other launch regime has another winner beyond the measured spread (between processes
    too: `current_rows`, every run's rows of the problem), in either regime: two winners that tie in one of them are
    one answer, not two."""
    other = "graph" if launch == "eager" else "eager"
    alt = rank(ranked, modes, q.current, other)
    apply_floor(alt, floor.floor if other == launch else None)
    between_processes(alt, current_rows, other)
    a, b = next((e for e in entries if e.ok), None), next((e for e in alt if e.ok), None)
    if a is None or b is None or a.backend == b.backend:
        return []
    def ties(winner: Entry, ranking: list[Entry], backend: str) -> bool:  # backend's entry there ties that winner
        e = next((e for e in ranking if e.ok and e.backend == backend), None)
        return e is not None and is_tie(winner.time_ms, e.time_ms, winner.rel_noise, e.rel_noise)

    if ties(b, alt, a.backend) or ties(a, entries, b.backend):
        return []
    name = {"graph": "replayed in a CUDA graph", "eager": "launched eagerly"}
    return [f"launch: {name[other]}, {b.backend} is fastest ({b.time_ms:.3f} ms) where {name[launch]} {a.backend} is "
            f"({a.time_ms:.3f} ms): the winner depends on how the call is launched (--launch {other})"]


def _answer(problem: pd.DataFrame, q: Question, case: Case, device: str | None, label: str,
            floor: SameCall, measured: set[str], off: dict[str, str] | None = None) -> CaseAnswer:
    modes = WORKLOAD_MODES[q.workload]
    testing = problem["backend"].map(is_testing).astype(bool)  # rows that time the harness are never ranked
    left_out = sorted(set(problem.loc[testing, "backend"]))
    problem = problem[~testing]
    mine_rows = at_gate(problem, q.gate)
    # the recommended timing regime's rows, where a backend has them, however new its other rows are; of those, one
    # run that measured every candidate where one did
    current_rows = newest_version(prefer_recommended(mine_rows, ["backend", "mode"]))
    ranked = one_run(current_rows, off_device=set(off or {}))
    entries, launch, launch_notes = _ranked(ranked, q, modes)
    apply_floor(entries, floor.floor)
    spread_notes = between_processes(entries, current_rows, launch)  # every run's measurement of a call, not the one
    entries = attach_checks(attach_calls(entries), ranked)
    regimes = _attach_regimes(entries, ranked)
    # a backend skipped as unavailable on the host measured nothing: it is missing, not "does not run here"
    present = {e.backend for e in entries if not unavailable(e.status, e.reason)}
    # a candidate is a backend these rows' evidence measured, or the one the question names: a package installed
    # since (a plugin) changes no answer drawn from evidence that predates it
    off = {b: why for b, why in (off or {}).items() if b not in present}  # its own row here says it, if it has one
    missing = [b for b in candidates(q.workload, measured=measured, named=(q.current,))
               if b not in present and b not in off]
    timed = [e for e in entries if e.ok]
    flips = order_flips(timed[0], timed[1], mine_rows, launch) if len(timed) > 1 else []
    launch_notes += launch_probe_caveats(timed, ranked, launch)  # analyze/answer/launch_probe.py
    off_notes = [f"off device: {b} does not run on this GPU model ({why}; from its rows at other points)"
                 for b, why in off.items()]
    notes = (cv.missing_caveats(entries, missing) + off_notes + cv.unranked_caveats(entries) + launch_notes
             + _launch_difference(ranked, q, modes, entries, launch, floor, current_rows) + spread_notes
             + cv.current_caveats(entries, q.current) + cv.tie_caveats(entries, flips)
             + auto_choice_caveats(entries)
             + cv.gate_caveats(problem, q, modes, entries) + cv.version_caveats(mine_rows, modes, q, entries)
             + cv.mixing_caveats(entries, q.heads) + check_caveats(entries)
             + tuning_caveats(entries, ranked, q.current)
             + [n for n in [regime_note(regimes), floor.note() if timed else None] if n]
             + ([f"{', '.join(left_out)}: test-only backend(s), their rows time qlabench itself: never ranked"]
                if left_out else []))
    return CaseAnswer(case, entries, notes, missing, device, label, engines_for(entries, q.workload), launch, flips)


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


def answer_question(q: Question, results: Iterable[str | os.PathLike] = (),
                    cold_start: Iterable[str | os.PathLike] | None = None,
                    also: Iterable[str | os.PathLike] = ()) -> Answer:
    """Answer `q` from `results` (files or folders), or from the current evidence of results/catalog.toml
    when none are given, with the rows of `also` beside them (a run just measured: `advise --measure`);
    `cold_start`: the `qlabench cold-start` folders behind each entry's first-call cost (None: the catalog's current ones)."""
    df, paths, from_catalog = rows_or_current(results, also=also)  # every run: the ranking picks versions and runs itself
    notes = evidence_notes(df)
    df = believed(df)
    df.attrs = {}  # its notes are read: pandas would deep-copy them into every frame the answer derives from it
    if q.gpu is not None:
        df, note = of_gpu(df, q.gpu)
        notes += [note] if note else []
    ans = Answer(q, [_shown(p) for p in paths] if from_catalog else [str(p) for p in paths], from_catalog=from_catalog,
                 notes=notes, devices=devices_of(df))
    if len(ans.devices) > 1:
        ans.notes.append(f"devices: these rows hold {len(ans.devices)} GPU models ({', '.join(ans.devices)}): each case "
                         "is answered per model, never ranked across them")
    ans.cases = [a for c in q.cases for a in answer_cases(df, q, c)]
    if note := budget_note(df, q):
        ans.notes.append(note)
    cold = load_cold_start(cold_start)
    for c in ans.cases:
        attach_first_calls(c.entries, cold, WORKLOAD_MODES[q.workload])
    ans.first_call_sources = list(cold.sources)
    return ans


def of_gpu(df: pd.DataFrame, gpu: str) -> tuple[pd.DataFrame, str | None]:
    """The rows of the GPU model `gpu` names (core/gpu_names.py), and a note naming the models left out."""
    devices = device_series(df)
    mine = devices.map(lambda d: names_gpu(gpu, d)).astype(bool)
    others = sorted(set(devices[~mine]))
    note = (f"gpu: the question is about {gpu}: {int((~mine).sum())} row(s) of {', '.join(others)} left out"
            if others else None)
    return df[mine], note


def budget_note(df: pd.DataFrame, q: Question) -> str | None:
    """What the answer says about SM budgets: that none of these rows was measured at the one asked for, or
    that rows held to a budget were left out of a whole-GPU answer."""
    budgets = df["sm_budget"].dropna() if "sm_budget" in df else pd.Series(dtype=float)
    if q.sm_budget is not None and not budgets.eq(q.sm_budget).any():
        have = ", ".join(str(int(b)) for b in sorted(set(budgets))) or "none"
        return (f"no row here was measured at an SM budget of {q.sm_budget} (budgets measured: {have}); measure it "
                f"with qlabench/suites/sm-budget.toml, or a suite with sm_budget = [{q.sm_budget}]")
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
