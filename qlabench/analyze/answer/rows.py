"""The rows that answer one case of a question: same kernel problem, one library version per backend, one run.

A kernel sees heads, head dims, dtype, the packed sequences and the gate values; the model name is only
a label, so rows of any model with the same heads at its TP degree answer the question. Rows of several
library versions of one backend (FlashQLA 0.1.2 and 0.1.3, say) are never mixed into one ranking: the
newest version present leads, and the others become a caveat (caveats.py). Of those rows, one run that measured
every candidate is read where one exists (one_run): two calls timed in one process on one card, one after the
other, differ by less than the same call timed in two runs (docs/BENCHMARKS.md, "Ties").
"""

from __future__ import annotations

from collections.abc import Iterable

import pandas as pd

from qlabench.analyze.answer.question import Case, GateRegime, Question
from qlabench.analyze.evidence.problem import Problem, split_problems
from qlabench.analyze.evidence.stacks import STACK_INPUTS
from qlabench.core import versions
from qlabench.core.libraries import version_key
from qlabench.core.point import FLASHQLA_GATE_SCALE, FLASHQLA_GATE_ZERO_FRAC
from qlabench.store.keys import key_value


def version_name(backend: str) -> str | None:
    """The name, in a row's version record, of the library whose version decides which rows of a backend go
    together: its own (core/versions.py: own_name), 'flash-qla' for flash_qla, a plugin's distribution."""
    return versions.own_name(backend)


def version_series(rows: pd.DataFrame) -> pd.Series:
    """`version_of` of every row."""
    cols = [c for c in STACK_INPUTS if c in rows]
    return pd.Series([version_of(r) for r in rows[cols].to_dict("records")], index=rows.index, dtype=object)


def version_of(row) -> str | None:
    """The version of the row's backend's own library, from its version record."""
    return key_value(versions.own_version(row))


def effective_gate(df: pd.DataFrame) -> pd.DataFrame:
    """The flashqla profile's parameters with the defaults filled in (null in a row means the default)."""
    z = df["gate_zero_frac"] if "gate_zero_frac" in df else pd.Series(None, index=df.index, dtype=float)
    s = df["gate_scale"] if "gate_scale" in df else pd.Series(None, index=df.index, dtype=float)
    return df.assign(_zero=z.astype(float).fillna(FLASHQLA_GATE_ZERO_FRAC),
                     _scale=s.astype(float).fillna(FLASHQLA_GATE_SCALE))


def _same_sequences(df: pd.DataFrame, case: Case) -> pd.Series:
    """Rows whose call packs exactly these sequences (varlen), or a dense batch of equal ones."""
    lens = df["seqlens"].map(lambda s: tuple(int(x) for x in s))
    return lens == case.seqlens


# The axes a case's answer ranks or reads across: the backends and modes it ranks, and the gate values its
# `gate:` caveat reads (the answer picks the user's gate itself: at_gate). Every other problem axis of
# core/identity.py splits the rows into problems answered apart (evidence.split_problems).
ACROSS = ("backend", "mode", "gate_zero_frac", "gate_scale")


def case_problems(df: pd.DataFrame, q: Question, case: Case, modes: tuple[str, ...]) -> list[Problem]:
    """The rows that answer this case, as problems on one GPU model each (largest first): every gate, version
    and status, with the effective gate values (_zero, _scale) filled in."""
    return [Problem(p.device, p.differs, effective_gate(p.rows))
            for p in split_problems(question_rows(df, q, case, modes), ACROSS)]


def problem_rows(df: pd.DataFrame, q: Question, case: Case, modes: tuple[str, ...]) -> pd.DataFrame:
    """The rows of this case's largest problem on one GPU model (case_problems' first)."""
    found = case_problems(df, q, case, modes)
    return found[0].rows if found else effective_gate(df.iloc[0:0])


def question_rows(df: pd.DataFrame, q: Question, case: Case, modes: tuple[str, ...]) -> pd.DataFrame:
    """The rows whose axes take the question's values (heads, head dims, dtype, modes, the flashqla gate, the
    sequences, one device's call): any GPU model and any value of the axes the question does not speak of."""
    if df.empty:
        return df
    h_qk, h_v = q.heads
    d = q.head_dim
    mask = ((df["h_qk"] == h_qk) & (df["h_v"] == h_v) & (df["K"] == d) & (df["V"] == d)
            & (df["dtype"] == q.dtype) & df["mode"].isin(modes) & (df["gate"] == "flashqla"))
    if "cp_world_size" in df:
        mask &= df["cp_world_size"].isna()
    # a row held to an SM budget answers only a question at that budget, and never one about the whole GPU
    budget = df["sm_budget"] if "sm_budget" in df else pd.Series(None, index=df.index, dtype=float)
    mask &= budget.isna() if q.sm_budget is None else budget.eq(q.sm_budget)
    out = df[mask]
    return out[_same_sequences(out, case)]


def at_gate(rows: pd.DataFrame, gate: GateRegime) -> pd.DataFrame:
    return rows[(rows["_zero"] - gate.zero_frac).abs().lt(1e-9) & (rows["_scale"] - gate.scale).abs().lt(1e-9)]


def newest_version(rows: pd.DataFrame) -> pd.DataFrame:
    """Per backend, the rows of its library's newest version present."""
    if rows.empty:
        return rows
    backends = rows["backend"].tolist()
    keys = [version_key(v) for v in version_series(rows).tolist()]
    best: dict[str, tuple] = {}  # per backend, its newest version's key (a row without a backend is in none)
    for b, k in zip(backends, keys):
        if not _missing(b) and (b not in best or k > best[b]):
            best[b] = k
    return rows[[not _missing(b) and k == best[b] for b, k in zip(backends, keys)]]


def _missing(v) -> bool:
    return v is None or (isinstance(v, float) and v != v)


def newest_run(rows: pd.DataFrame) -> pd.DataFrame:
    """Per (backend, mode), the rows of its newest run (every replicate of that run)."""
    if rows.empty:
        return rows
    # in Python over the four columns: a pandas groupby, transform and index per call cost more than the rows
    # (an answer asks this of a few hundred rows, some twenty times)
    keys = list(zip(rows["backend"].tolist(), rows["mode"].tolist()))
    times, run_ids = rows["timestamp"].tolist(), rows["run_id"].tolist()
    newest: dict[tuple, object] = {}  # per (backend, mode), its newest timestamp (groupby leaves missing ones out)
    for k, t in zip(keys, times):
        if not (_missing(k[0]) or _missing(k[1]) or _missing(t)) and (k not in newest or t > newest[k]):
            newest[k] = t
    run_of_newest: dict[tuple, object] = {}  # the run of its first row at that time
    for k, t, r in zip(keys, times, run_ids):
        if k in newest and k not in run_of_newest and t == newest[k]:
            run_of_newest[k] = r
    return rows[[r == run_of_newest.get(k) for k, r in zip(keys, run_ids)]]


def _good(row: dict) -> bool:
    """An ok row checked at its own size (where the row says): one a ranking reads."""
    if row.get("status") != "ok":
        return False
    at_size = row.get("checked_at_size", True)
    return not _missing(at_size) and bool(at_size)


def one_run(rows: pd.DataFrame, off_device: Iterable[str] = ()) -> pd.DataFrame:
    """The rows of the newest run that measured every (backend, mode) of `rows` as well as any run did (a good row
    wherever some run has one: ok, checked at its size); where no run did, each (backend, mode)'s newest run
    (newest_run), and the answer says which runs it mixes (caveats.mixing_caveats).

    off_device: backends that do not run on this GPU model at all (measured.off_device_in): no run can measure them
    well, so a run that holds no row of theirs is not missing them; the answer names them from their rows
    elsewhere."""
    if rows.empty or "run_id" not in rows:
        return newest_run(rows)
    cols = [c for c in ("backend", "mode", "run_id", "timestamp", "status", "checked_at_size") if c in rows]
    records = rows[cols].to_dict("records")
    off = set(off_device)
    held: dict[object, set[tuple]] = {}  # per run, the (backend, mode)s it measured
    held_good: dict[object, set[tuple]] = {}  # per run, those it measured well
    newest: dict[object, object] = {}
    for r in records:
        k, run, t = (r["backend"], r["mode"]), r["run_id"], r.get("timestamp")
        if _missing(k[0]) or _missing(k[1]) or _missing(run) or _missing(t):
            continue
        if run not in newest or t > newest[run]:
            newest[run] = t
        if k[0] in off:
            continue
        held.setdefault(run, set()).add(k)
        if _good(r):
            held_good.setdefault(run, set()).add(k)
    wanted, wanted_good = set().union(*held.values()), set().union(*held_good.values())
    complete = [run for run in held if held[run] >= wanted and held_good.get(run, set()) >= wanted_good]
    if len(held) < 2 or not complete:
        return newest_run(rows)
    best = max(complete, key=lambda run: newest[run])
    return rows[rows["run_id"] == best]
