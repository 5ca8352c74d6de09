"""The caveats that change an answer, each computed from recorded rows, never asserted.

- unmeasured: a candidate that runs here has no row, so no winner is named (the fastest measured is
  provisional);
- gate: the same case measured at other gate values (FlashQLA's intra-card CP depends on them);
- version: the same case on another version of a backend's library;
- auto CP: a library's own CP decision against its pinned settings (auto_choice.py);
- mixed runs: the ranked times come from more than one run or device;
- ties: the two fastest are within their noise;
- the current choice has no time, so no speedup can be stated.
A caveat that has no rows behind it is not written.
"""

from __future__ import annotations

import pandas as pd

from qlabench.analyze.answer.question import Question
from qlabench.analyze.answer.ranking import Entry, rank, version_label
from qlabench.analyze.answer.rows import at_gate, newest_run, newest_version, version_series
from qlabench.analyze.answer.question import GateRegime
from qlabench.analyze.evidence.regimes import regime_series
from qlabench.analyze.kit.ties import tie_noise


def missing_caveats(mine: list[Entry], missing: list[str]) -> list[str]:
    """First of all: the candidate backends that run here and have no row, each by its own name (a library's
    variant, fla-intracp, is unmeasured while the library's fla may have a time); then no winner is named."""
    if not missing:
        return []
    what = f"{', '.join(missing)} not measured here"
    fastest = next((e for e in mine if e.ok), None)
    then = (f"the fastest measured, {fastest.backend}, is provisional until they are" if fastest
            else "and nothing here has a correct time")
    return [f"unmeasured: {what}: no winner is named; {then} (--suite-out writes a suite measuring them)"]


def _times(entries: list[Entry]) -> dict[str, Entry]:
    return {e.backend: e for e in entries if e.ok}


def _moved(a: Entry, b: Entry) -> bool:
    """Whether two times of one backend differ by more than their measured noise (kit.ties)."""
    return abs(a.time_ms / b.time_ms - 1) > tie_noise(a.rel_noise, b.rel_noise)


def gate_caveats(problem: pd.DataFrame, q: Question, modes: tuple[str, ...], mine: list[Entry]) -> list[str]:
    """Per other gate regime measured at this case: the backends whose time moves beyond noise."""
    out = []
    here = _times(mine)
    regimes = problem[["_zero", "_scale"]].drop_duplicates().itertuples(index=False, name=None)
    here_backends = {e.backend for e in mine}
    for zero, scale in sorted(regimes):
        if abs(zero - q.gate.zero_frac) < 1e-9 and abs(scale - q.gate.scale) < 1e-9:
            continue
        other = rank(newest_run(newest_version(at_gate(problem, GateRegime("other", zero, scale)))), modes, q.current)
        unmeasured_there = sorted(here_backends - {e.backend for e in other})
        moved = [f"{e.backend} {e.time_ms:.3f} ms ({here[e.backend].time_ms / e.time_ms:.2f}x)"
                 for e in other if e.ok and e.backend in here and _moved(e, here[e.backend])]
        if not moved:
            continue
        there = _times(other)
        flip = ""
        if mine and mine[0].ok and other and other[0].ok and other[0].backend != mine[0].backend:
            mine_there = there.get(mine[0].backend)
            if mine_there is None or _moved(other[0], mine_there):
                # only over what was measured there: a backend ranked here with no row there is named
                flip = (f"; the fastest measured there is {other[0].backend}, where "
                        f"{', '.join(unmeasured_there)} {'has' if len(unmeasured_there) == 1 else 'have'} no row"
                        if unmeasured_there else f"; the fastest there is {other[0].backend}")
        out.append(f"gate: at {zero:g} zero-gate heads and scale {scale:g} (yours: {q.gate.zero_frac:g}, "
                   f"{q.gate.scale:g}) " + ", ".join(moved) + f" (x: speedup over your gate){flip}")
    return out


def version_caveats(at_my_gate: pd.DataFrame, modes: tuple[str, ...], q: Question, mine: list[Entry]) -> list[str]:
    here = {e.backend: e for e in mine}
    if at_my_gate.empty:
        return []
    versions = version_series(at_my_gate)
    regimes = regime_series(at_my_gate)
    out = []
    # the rows of each (backend, version) in the order met, as groupby(sort=False) groups them (a row missing
    # either is in none); a group is taken of the frame only where its backend ranks on another version
    groups: dict[tuple, list[int]] = {}
    for i, key in enumerate(zip(at_my_gate["backend"].tolist(), versions.tolist())):
        if not any(v is None or (isinstance(v, float) and v != v) for v in key):
            groups.setdefault(key, []).append(i)
    for (backend, version), at in groups.items():
        cur = here.get(backend)
        if cur is None or version == cur.version:
            continue
        grp = at_my_gate.iloc[at]
        if cur.regime:  # a version effect only between rows of one timing regime: burst reads faster
            grp = grp[regimes[grp.index].isin(cur.regime.split("/"))]
            if grp.empty:
                continue
        old = rank(newest_run(grp), modes, q.current)
        if not old or not old[0].ok:
            continue
        o = old[0]
        if cur.ok and not _moved(o, cur):
            continue
        if cur.ok:
            ratio = cur.time_ms / o.time_ms
            rel = f"{ratio:.2f}x faster than" if ratio >= 1 else f"{1 / ratio:.2f}x slower than"
            text = f"{rel} {version_label(cur)}'s {cur.time_ms:.3f} ms"
        else:
            text = f"where {version_label(cur)} is {cur.status}"
        out.append(f"version: {backend} on {version_label(o)} measured {o.time_ms:.3f} ms here, {text} "
                   f"(run {', '.join(o.runs)})")
    return out


def mixing_caveats(mine: list[Entry], heads: tuple[int, int] | None = None) -> list[str]:
    """`heads`: the question's (h_qk, h_v), for the command that measures every candidate in one run."""
    timed = [e for e in mine if e.ok]
    runs = sorted({r for e in timed for r in e.runs})
    devices = sorted({d for e in timed for d in e.devices})
    out = []
    if len(runs) > 1:
        # --resume would skip the points already recorded and leave the answer mixed: a fresh run, all candidates
        one = (f"; one sweep of every candidate at these heads without --resume (`qlabench run sweep --heads "
               f"{heads[0]}/{heads[1]}` of the suite that measured them) answers from one run" if heads else "")
        out.append(f"mixed runs: these times come from {len(runs)} runs ({', '.join(runs)}) on "
                   f"{', '.join(devices)}: a ratio between them also holds run-to-run variation{one}")
    return out


def tie_caveats(mine: list[Entry], flips: list[str] = ()) -> list[str]:
    """The tie set: every entry the fastest is not faster than beyond the larger of their noises (the same-call
    floor included, spread.py), named in one line; and the runner-up where another run orders the two the other
    way."""
    timed = [e for e in mine if e.ok]
    if len(timed) < 2:
        return []
    a = timed[0]
    tied = [e for e in timed[1:] if e.time_ms / a.time_ms - 1 <= tie_noise(a.rel_noise, e.rel_noise)]
    out = []
    if tied:
        widest = max(e.time_ms / a.time_ms - 1 for e in tied)
        noise = max(tie_noise(a.rel_noise, e.rel_noise) for e in tied)
        names = ", ".join(e.backend for e in [a] + tied)
        out.append(f"tie: {names}: the same within {widest:.1%}, inside the measured spread ({noise:.1%}): "
                   "any of them is as good here")
    if flips and timed[1] not in tied:
        out.append(f"tie: {a.backend} and {timed[1].backend}: {', '.join(flips)} ordered them the other way, so "
                   "neither has won")
    return out


def unranked_caveats(mine: list[Entry]) -> list[str]:
    """Entries with rows that cannot be ranked, grouped by why (not checked at size; no time in this regime)."""
    by_why: dict[str, list[str]] = {}
    for e in mine:
        if e.status == "unranked":
            by_why.setdefault(e.reason or "", []).append(e.backend)
    return [f"unranked: {', '.join(names)}: {why}; no winner is named while a candidate is unranked"
            for why, names in by_why.items()]


def current_caveats(mine: list[Entry], current: str) -> list[str]:
    e = next((e for e in mine if e.backend == current), None)
    if e is None:
        return [f"current: your current choice {current} has no row here, so no speedup is stated"]
    if not e.ok:
        return [f"current: your current choice {current} is {e.status} here ({e.reason}): no speedup is stated"]
    return []
