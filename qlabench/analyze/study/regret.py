"""Auto-CP regret: how much a library's own intra-card CP decision cost against the better pinned one.

One table for every library of core's `AUTO_CHOICES` (FlashQLA: `flash_qla` against `-nocp` / `-forcecp`;
FlashInfer 0.7: `flashinfer` against `use_cp=False` / `use_cp=True`), a `library` column apart.

regret = auto time / min(pinned times) on the same point and stack, from ok rows only. Above 1 the
automatic decision lost (by that factor); 1 means it picked the faster of the pinned choices. Where the auto
call's kernels say which way it decided (`auto_cp`), the pinned setting that decides the same way made the same
call (AutoChoice.splits): its time is the auto call's measured again, and a gap between the two is the
points' noise, not a decision's cost. Then regret = auto time / the other decision's time, and 1 where the
other decision is not faster (`best` names the auto call's own decision). Where a pinned setting has no ok row
at a point, the ratio takes the ones that have, and `unmeasured` names the missing one: such a regret is a lower
bound (a missing choice could only be faster).

The times of one ratio come from one run on one GPU where the results hold such a set, since the same point
moves by a few percent between runs and GPUs (enough to move a regret across 1.10). Where they do not, the
ratio takes one run on several GPUs, else several runs, and `mixes` says which per row. A complete set (every
pinned setting) is preferred to a partial one at each of those steps.
"""

from __future__ import annotations

import pandas as pd

from qlabench.analyze.evidence.records import grouped_records
from qlabench.core.backend_decl import AUTO_CHOICES
from qlabench.core.libraries import AutoChoice
from qlabench.store.keys import plain_value

_POINT = ["stack", "study_key", "mode", "heads", "h_qk", "h_v", "sequences", "seqkey", "total_tokens", "num_seqs",
          "gate_label", "gate_zero_frac_eff", "gate_scale_eff"]
SETTINGS = tuple(dict.fromkeys(s for c in AUTO_CHOICES for s in c.settings))  # ('nocp', 'forcecp')
# run_id: the run of the times ('A + B' when mixed); mixes: None when one run on one GPU, else which run and
# GPU each time comes from; unmeasured: the pinned settings without an ok row (None: all measured).
COLUMNS = (["library"] + _POINT + ["auto_ms"] + [f"{s}_ms" for s in SETTINGS]
           + ["auto_cp", "best", "regret", "unmeasured", "run_id", "mixes"])


def _device(r) -> str:
    d = plain_value(r.get("device_index"))
    return "?" if d is None else str(int(d))


def _newest(rows: list[dict], variants: dict[str, str]) -> dict[str, dict]:
    """setting -> its newest row among `rows`."""
    out: dict[str, dict] = {}
    for r in sorted(rows, key=lambda r: str(r["timestamp"])):
        out[variants[r["backend"]]] = r
    return out


def _usable(chosen: dict[str, dict], need: int) -> bool:
    """The auto row and at least `need` pinned ones."""
    return "auto" in chosen and len(chosen) - 1 >= need


def consistent_set(recs: list[dict], choice: AutoChoice | None = None) -> tuple[dict[str, dict], str | None] | None:
    """The auto and pinned rows of one point that one ratio may take, and what they mix.

    Preference: every pinned setting before some of them; within each, one run on one GPU, then one run on
    several GPUs, then several runs; within each, the newest run. None when there is no auto row or no
    pinned one. `choice`: the library's AutoChoice (default FlashQLA's).
    """
    choice = choice or AUTO_CHOICES[0]
    variants = choice.variants
    by_run: dict[str, list[dict]] = {}
    for r in recs:
        by_run.setdefault(str(r["run_id"]), []).append(r)
    runs = sorted(by_run, key=lambda run: max(str(r["timestamp"]) for r in by_run[run]), reverse=True)
    for need in (len(choice.pinned), 1):
        for run in runs:
            by_dev: dict[str, list[dict]] = {}
            for r in by_run[run]:
                by_dev.setdefault(_device(r), []).append(r)
            for dev_rows in by_dev.values():
                chosen = _newest(dev_rows, variants)
                if _usable(chosen, need) and _device(chosen["auto"]) != "?":
                    return chosen, None
        for run in runs:
            chosen = _newest(by_run[run], variants)
            if _usable(chosen, need):
                return chosen, "GPUs of one run: " + ", ".join(f"{v} GPU {_device(r)}" for v, r in chosen.items())
        chosen = _newest(recs, variants)
        if _usable(chosen, need) and len({str(r["run_id"]) for r in chosen.values()}) > 1:
            return chosen, "runs: " + ", ".join(f"{v} {r['run_id']} GPU {_device(r)}" for v, r in chosen.items())
    return None


def _split(row, mark: str) -> bool | None:
    """Did the auto call split (its kernels hold the library's CP mark); None if kernels were not recorded."""
    names = plain_value(row.get("kernels"))
    if not isinstance(names, tuple) or not names:
        return None
    return any(mark in str(n) for n in names)


def _decision_regret(auto_ms: float, split: bool | None, fixed: dict[str, float],
                     choice: AutoChoice) -> tuple[str, float]:
    """(best, regret) of one point: against the fastest pinned time, or, where the auto call's decision is known
    and a pinned setting decides the same way, against the other decisions only (that setting is the same
    call, measured again)."""
    same = [s for s in fixed if split is not None and choice.splits(s) is split]
    if not same:
        best = min(fixed, key=fixed.get)
        return best, auto_ms / fixed[best]
    other = {s: t for s, t in fixed.items() if s not in same}
    if other and min(other.values()) < auto_ms:
        best = min(other, key=other.get)
        return best, auto_ms / other[best]
    return same[0], 1.0


def _library_table(rows: pd.DataFrame, choice: AutoChoice) -> list[dict]:
    out = []
    for _, grp in grouped_records(rows, ["stack", "study_key"]):
        found = consistent_set(grp, choice)
        if found is None:
            continue
        by, mixes = found
        auto = by["auto"]
        fixed = {s: float(by[s]["median_ms"]) for s in choice.settings if s in by}
        auto_ms, split = float(auto["median_ms"]), _split(auto, choice.cp_mark)
        rec = {"library": choice.library, **{c: auto[c] for c in _POINT}}
        rec.update({f"{s}_ms": fixed.get(s) for s in SETTINGS})
        missing = [s for s in choice.settings if s not in fixed]
        best, regret = _decision_regret(auto_ms, split, fixed, choice)
        rec.update(auto_ms=auto_ms, auto_cp=split, best=best, regret=regret,
                   unmeasured=(", ".join(missing) + " not measured: a lower bound") if missing else None,
                   run_id=" + ".join(dict.fromkeys(str(r["run_id"]) for r in by.values())), mixes=mixes)
        out.append(rec)
    return out


def regret_table(rows: pd.DataFrame) -> pd.DataFrame:
    """One row per library and point where its auto backend and at least one pinned backend are ok.

    rows: prepared rows, every run kept (not only the newest per point), so that the times can come from
    one run. Columns: library, the point's labels, auto_ms and <setting>_ms per pinned setting (None where
    not measured), auto_cp (did the auto call split; None if kernels were not recorded), best (the faster
    pinned choice), regret, unmeasured, run_id and mixes. Sorted by library (core's order), then regret,
    worst first.
    """
    out = []
    for choice in AUTO_CHOICES:
        ok = rows[(rows["status"] == "ok") & rows["backend"].isin(list(choice.variants))] if not rows.empty else rows
        if not ok.empty:
            out += _library_table(ok, choice)
    if not out:
        return pd.DataFrame(columns=COLUMNS)
    t = pd.DataFrame(out, columns=COLUMNS)
    for c in ("auto_cp", "unmeasured", "mixes"):  # True / False / None and text / None, never NaN
        t[c] = pd.Series([r[c] for r in out], dtype=object, index=t.index)
    order = {c.library: i for i, c in enumerate(AUTO_CHOICES)}
    t = t.assign(_lib=t["library"].map(order)).sort_values(["_lib", "regret"], ascending=[True, False], kind="stable")
    return t.drop(columns="_lib").reset_index(drop=True)


def library_regret(regret: pd.DataFrame, library: str) -> pd.DataFrame:
    """The rows of one library (a Library.name: 'flashinfer')."""
    return regret[regret["library"] == library].reset_index(drop=True) if not regret.empty else regret


def regret_sentence(r: pd.DataFrame) -> str:
    """How often one library's auto lost, and over how consistent a set of times (`r`: its rows, worst first)."""
    worst = r.iloc[0]
    mixed = r["mixes"].notna()
    runs = r["mixes"].fillna("").str.startswith("runs")
    partial = int(r["unmeasured"].notna().sum())
    counts = ", ".join(f"above {t:.2f} on {int((r['regret'] > t).sum())}" for t in (1.0, 1.05, 1.10))
    where = (f"{len(r) - int(mixed.sum())} of the {len(r)} ratios from one run on one GPU, "
             f"{int((mixed & ~runs).sum())} from one run on two or more GPUs, {int(runs.sum())} across runs")
    lower = f"; {partial} lack a pinned setting (`unmeasured`: a lower bound)" if partial else ""
    return (f"Regret {counts} of {len(r)} points; worst {worst['regret']:.2f} at {worst['mode']} {worst['heads']} "
            f"{worst['sequences']} ({worst['gate_label']}; {worst['stack']}). Times: {where}{lower}.")
