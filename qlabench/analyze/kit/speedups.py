"""Speedup tables: per workload and GPU model, each backend's median and its speedup against a baseline.

Only `ok` rows carry times; any other status shows as that status, never as a number. `show`, `plot` and the
sweep's summary draw them; the baseline rule (`pick_baseline`) is theirs too.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pandas as pd

from qlabench.analyze.kit.labels import (backend_label, gate_label_of, gate_short, heads_label, memory_label,
                                         sequences_label)
from qlabench.analyze.evidence.records import records
from qlabench.core import identity
from qlabench.store.keys import key_series, key_value, workload_keys


def pick_baseline(df: pd.DataFrame, preferred: str | None = None, suite_baselines=()) -> str | None:
    """The baseline backend speedups divide by; the one rule of `run sweep`'s table, `show` and `plot`.

    `preferred` (a `--baseline`) if given; else the `baseline` of the suites the rows came from
    (`suite_baselines`: one per file, see `suite_baselines`) that has rows here, the one most files name
    where they disagree (baseline_note says so); else qlabench's own reference (`references`), else the first.
    """
    backends = list(dict.fromkeys(df["backend"]))
    if preferred:
        return preferred
    named = Counter(b for b in suite_baselines if b and b in backends)
    if named:
        return max(named, key=lambda b: (named[b], -backends.index(b)))
    for name in references():
        if name in backends:
            return name
    return backends[0] if backends else None


def references() -> tuple[str, ...]:
    """The backends a table falls back to as its baseline: qlabench's own references (declared role
    `reference`, naive-chunk), then the oracle (naive-recurrent)."""
    from qlabench.core.backend_decl import declarations

    decls = declarations()
    return tuple(n for role in ("reference", "oracle") for n, d in decls.items() if role in d.roles and
                 d.modes >= {"fwd"})


def baseline_note(df: pd.DataFrame, baseline: str | None, preferred: str | None = None, suite_baselines=()) -> str:
    """Where the baseline came from, in one line: the option, the suites (and how many named another), or the
    fallback rule."""
    if preferred:
        return f"baseline {baseline}: --baseline"
    backends = set(df["backend"])
    named = Counter(b for b in suite_baselines if b and b in backends)
    if baseline in named:
        others = ", ".join(f"{b} ({n})" for b, n in named.most_common() if b != baseline)
        return (f"baseline {baseline}: the suite baseline of {named[baseline]} of {sum(named.values())} files"
                + (f"; others name {others} (--baseline to choose)" if others else ""))
    return f"baseline {baseline}: no suite here names one with rows (--baseline to choose)"


def suite_baselines(paths) -> list[str]:
    """The `baseline` of the suite behind each result file: as the sweep recorded it in the file's metadata,
    else from the suite file it recorded (older files), when that can still be read."""
    from qlabench.core.errors import QlabenchError
    from qlabench.core.spec import load_suite
    from qlabench.store.files import file_metadata

    out = []
    for meta in file_metadata(paths):
        if "baseline" in meta:
            out.append(meta["baseline"])
        elif meta.get("suite_path"):  # an older file: its suite file, else the suite of that name here
            for where in (meta["suite_path"], Path(meta["suite_path"]).stem):
                try:
                    out.append(load_suite(where).baseline or "")
                    break
                except (QlabenchError, OSError):
                    continue
    return out


NOISY = "~"  # missed its noise target (target_rel_noise): the median is less certain than asked
FEW = "!"  # fewer samples than min_samples: max_time_s (or a lone sample) ended sampling first
# Its time depends on how many calls one sample holds (`[timing] sensitivity`, core/timing_sensitivity.py):
# the median is one timer's regime, and the row's calls_sensitivity_ms gives the others.
CALLS = "≈"
MARK_LEGEND = {NOISY: "missed its noise target", FEW: "fewer than min_samples (max_time_s ended sampling)",
               CALLS: "its time depends on the calls per sample (calls_sensitivity_ms)"}


def _sampling_mark(row) -> str:
    below = key_value(row.get("below_min_samples"))
    n = key_value(row.get("n_samples"))
    if below or (below is None and n is not None and n < 2):
        return FEW
    met = key_value(row.get("noise_target_met"))
    return NOISY if met is not None and not met else ""


def calls_mark(row) -> str:
    """CALLS for a row whose time depends on the calls per sample, '' otherwise (not measured included)."""
    v = key_value(row.get("calls_sensitive"))
    return CALLS if v is not None and v == v and bool(v) else ""  # None / NaN: not measured


def noise_mark(row) -> str:
    """'' for an ok row that met its noise target, FEW or NOISY otherwise, then CALLS where its time depends
    on the calls per sample (see MARK_LEGEND)."""
    return _sampling_mark(row) + calls_mark(row)


def noise_summary(df: pd.DataFrame) -> str | None:
    """One line on the ok rows' noise: how many missed the target or min_samples, the median rel_noise."""
    ok = df[df["status"] == "ok"]
    if ok.empty:
        return None
    cols = [c for c in ("below_min_samples", "n_samples", "noise_target_met", "calls_sensitive") if c in ok]
    recs = records(ok, cols)  # a few columns: a pandas row per row of ~110 columns is slow
    marks = pd.Series([_sampling_mark(r) for r in recs], index=ok.index, dtype=object)
    few, noisy = int((marks == FEW).sum()), int((marks == NOISY).sum())
    calls = sum(calls_mark(r) == CALLS for r in recs)
    med = ok["rel_noise"].dropna().median() if "rel_noise" in ok else None
    text = f"{len(ok) - few - noisy} of {len(ok)} ok points met their noise target"
    if noisy:
        text += f"; {NOISY} {noisy} missed it"
    if few:
        text += f"; {FEW} {few} got fewer than min_samples (max_time_s ended sampling)"
    if med is not None and not pd.isna(med):
        text += f"; median rel_noise {med:.3f}"
    if calls:
        text += f"; {CALLS} {calls} depend on the calls per sample beyond their noise (calls_sensitivity_ms)"
    return text


def speedup_table(df: pd.DataFrame, baseline: str, numerics: pd.DataFrame | None = None,
                  evidence: list | None = None) -> pd.DataFrame:
    """One row per workload and GPU model (`device`: a speedup never divides times of two models); `runs`: the
    runs its cells come from; columns `<backend>` (median ms or status), `<backend> x` (speedup), `<backend> mem`
    (the extra device memory of its call, `memory_label`),
    `<backend> noise` (the row's noise_mark: '', NOISY or FEW), `<backend> err` (its error mark,
    analyze/evidence/accuracy.py: worst error / tolerance and the reference, from its own check and the `numerics`
    rows of the same backend and workload; `<backend> e` the same, short) and `<backend> over` (over
    tolerance in some check). A speedup
    whose faster side is over tolerance is left empty: the err mark says why. `evidence`: evidence_of(df,
    numerics), where the caller has it already."""
    from qlabench.analyze.evidence.accuracy import evidence_of, speedup_allowed
    from qlabench.analyze.evidence.problem import device_series

    if df.empty:
        return pd.DataFrame()
    # Rows as plain records, a workload at a time: a results frame has ~110 columns, and a pandas row per
    # cell would be most of a view's time.
    labels = ("median_ms", "status", "model", "tp", "below_min_samples", "n_samples", "noise_target_met",
              "calls_sensitive", "extra_mem_mib", "outside_mem_mib", "run_id", "total_tokens", "num_seqs")
    rows = records(df, [c for c in dict.fromkeys(identity.key_axes() + labels) if c in df])
    for r, ev in zip(rows, evidence if evidence is not None else evidence_of(df, numerics)):
        r["_ev"] = ev
    if "cp_world_size" in df.columns and df["cp_world_size"].notna().any():
        # A distributed row is its own column next to the single-device backends of the same problem.
        for r in rows:
            r["backend"] = backend_label(r)
        keys = key_series(df, [a for a in identity.workload_axes() if a not in identity.CP_AXES])
    else:
        keys = workload_keys(df)
    devices = device_series(df)
    per_device = devices.nunique() > 1  # rows of two GPU models are never one row of the table
    if per_device:
        keys = keys + "|" + devices
    backends = list(dict.fromkeys(r["backend"] for r in rows))
    groups: dict[str, list[dict]] = {}
    for k, r, dev in zip(keys, rows, devices):
        r["_device"] = dev
        groups.setdefault(k, []).append(r)
    out, sizes = [], []
    for grp in groups.values():
        first = grp[0]
        sizes.append((first.get("total_tokens") or 0, first.get("num_seqs") or 0))
        rec = {"mode": first["mode"], "heads": heads_label(first), "sequences": sequences_label(first),
               "dtype": first["dtype"], "gate": gate_label_of(first), "gate_short": gate_short(first)}
        rec["device"] = first["_device"]
        rec["runs"] = ", ".join(sorted({str(r["run_id"]) for r in grp if r.get("run_id") is not None}))
        by_backend = {r["backend"]: r for r in grp}
        base = by_backend.get(baseline)
        base_ms = base["median_ms"] if base is not None and base["status"] == "ok" else None
        for b in backends:
            r = by_backend.get(b)
            rec[f"{b} noise"], rec[f"{b} err"], rec[f"{b} e"], rec[f"{b} over"] = "", "", "", False
            rec[f"{b} mem"] = memory_label(r) if r is not None and r["status"] == "ok" else ""
            if r is None:
                rec[b], rec[f"{b} x"] = None, None
                continue
            ev = r["_ev"]
            rec[f"{b} err"], rec[f"{b} e"], rec[f"{b} over"] = ev.mark(), ev.short(), ev.over
            if r["status"] != "ok":
                rec[b], rec[f"{b} x"] = r["status"], None
            else:
                rec[b] = float(r["median_ms"])
                x = base_ms / r["median_ms"] if base_ms else None
                rec[f"{b} x"] = x if speedup_allowed(x, ev.over, base_ms is not None and base["_ev"].over) else None
                rec[f"{b} noise"] = noise_mark(r)
        out.append(rec)
    return pd.DataFrame(by_size(out, sizes))


def by_size(recs: list[dict], sizes: list[tuple]) -> list[dict]:
    """The table's rows by size: the problems of one mode, heads, dtype, gate and GPU model stay together, in the
    order they first appear, and run from the fewest tokens to the most (fewer sequences first at equal tokens)."""
    block: dict[tuple, int] = {}
    for r in recs:
        block.setdefault((r["mode"], r["heads"], r["dtype"], r["gate"], r["device"]), len(block))
    order = sorted(range(len(recs)), key=lambda i: (block[(recs[i]["mode"], recs[i]["heads"], recs[i]["dtype"],
                                                           recs[i]["gate"], recs[i]["device"])], sizes[i]))
    return [recs[i] for i in order]


def status_counts(df: pd.DataFrame) -> dict[str, int]:
    return df["status"].value_counts().to_dict()
