"""FlashQLA's kernels beside its total, and a fully fused kernel's beside them.

FlashQLA's forward is a split: passes that write intermediates to device memory (the chunk-local gate cumsum,
the KKT solve) and a fused forward kernel that reads them back. Which kernel is the fused forward is read from
the row's own trace: the kernel whose name holds every word of FUSED_WORDS, and where no single kernel does (a
version that renames it), the kernel the call spent longest in, with the rule used said per row. Every other
kernel of the call is one of the split's extra passes.

The kernel times (`kernel_dur_us`) are those of one traced call, made eagerly under the profiler after the row
was timed; the total (`median_ms`) is the median of the timed samples (graph replay, L2 flushed, the row's
regime). `gap us` = total - the traced kernels' sum: the launch gaps and whatever else the timed call spent off
the kernels, mixed with the difference between a traced call and a timed one, so a gap near zero (or below
it) says the call is its kernels; it is not a precise launch overhead.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import pandas as pd

from qlabench.analyze.evidence.kernels import short_name
from qlabench.analyze.large_batch.frame import problem_order, rows_of
from qlabench.store.keys import plain_value

# The breakdown's own columns in us (the others in us are one kernel's each).
DERIVED = ("split us", "split share", "fused fwd us", "kernel sum us", "gap us", "fused kernel us", "fused gap us")
# The words of the fused forward kernel's name in flash-qla 0.1.x ('tilelang_fused_chunk_gdr_fwd_kernel_kernel').
FUSED_WORDS = ("fused", "fwd")


def kernel_label(name: str) -> str:
    """A kernel's name as the tables print it: the profiler's name shortened, its trailing `_kernel`s dropped
    ('tilelang_kkt_solve_kernel_kernel' -> 'tilelang_kkt_solve')."""
    return re.sub(r"(_kernel)+$", "", short_name(name)) or short_name(name)


@dataclass(frozen=True)
class CallKernels:
    """The kernels of one traced call, in launch order, and which of them is the fused forward."""

    names: tuple[str, ...]  # kernel_label of each
    us: tuple[float, ...]
    fused: int  # index of the fused forward in names
    rule: str  # 'named' (FUSED_WORDS) or 'longest'

    @property
    def sum_us(self) -> float:
        return float(sum(self.us))

    @property
    def fused_us(self) -> float:
        return self.us[self.fused]

    @property
    def split_names(self) -> tuple[str, ...]:
        """The kernels other than the fused forward: the split's extra passes."""
        return tuple(n for i, n in enumerate(self.names) if i != self.fused)

    @property
    def split_us(self) -> float:
        return self.sum_us - self.fused_us

    @property
    def split_share(self) -> float | None:
        """The extra passes' share of the call's kernel time."""
        return self.split_us / self.sum_us if self.sum_us > 0 else None


def call_kernels(row) -> CallKernels | None:
    """The row's traced kernels, the fused forward told from the rest; None where the row traced none."""
    names, us = plain_value(row.get("kernels")) or (), plain_value(row.get("kernel_dur_us")) or ()
    if not names or len(names) != len(us):
        return None
    labels = tuple(kernel_label(n) for n in names)
    us = tuple(float(x) for x in us)
    named = [i for i, n in enumerate(names) if all(w in str(n).lower() for w in FUSED_WORDS)]
    if len(named) == 1:
        return CallKernels(labels, us, named[0], "named")
    return CallKernels(labels, us, max(range(len(us)), key=us.__getitem__), "longest")


def ms_text(row) -> str:
    """A row's time as a table cell, or its status: a row that is not ok never shows a time."""
    if row is None:
        return "missing"
    if row["status"] != "ok":
        return str(row["status"])
    return f"{float(row['median_ms']):.3f}"


def _ok(row) -> bool:
    return row is not None and row["status"] == "ok"


def _mem(row) -> float | None:
    v = plain_value(row.get("extra_mem_mib")) if _ok(row) else None
    return float(v) if v is not None else None


def breakdown(d: pd.DataFrame, split: str | None, fused: str | None, runs: dict[str, str]) -> pd.DataFrame:
    """Per problem: the split backend's time, each of its kernels' own time (a column per kernel name, in launch
    order), its extra passes' time and share, its fused forward's time, its kernel sum and gap; the fused
    backend's time, its kernels' time (and their count: one for a fully fused call), its gap; each side's extra
    device memory; the runs (letters of `runs`) the two rows come from. A side that is not ok or has no row
    shows its status or 'missing' and no kernel time."""
    recs = []
    for key in problem_order(d):
        rows = rows_of(d, key)
        by = {r["backend"]: r for r in rows.to_dict("records")}
        s, f = by.get(split), by.get(fused)
        first = rows.iloc[0]
        rec = {"device": first["device"], "problem": first["problem"], "family": first["family"],
               "heads": first["heads"], "sequences": first["sequences"], "num_seqs": int(first["num_seqs"]),
               "tokens": int(first["tokens"]),
               "split ms": ms_text(s), "split_ms": float(s["median_ms"]) if _ok(s) else None,
               "split_noise": s.get("rel_noise") if _ok(s) else None}
        ks = call_kernels(s) if _ok(s) else None
        if ks is not None:
            for name, us in zip(ks.names, ks.us):
                col = f"{name} us"
                rec[col] = rec.get(col, 0.0) + us  # a kernel launched twice counts its launches together
            rec.update({"split passes": ", ".join(ks.split_names) or "none", "split us": ks.split_us,
                        "split share": ks.split_share, "fused fwd us": ks.fused_us, "kernel sum us": ks.sum_us,
                        "gap us": rec["split_ms"] * 1000 - ks.sum_us, "fused rule": ks.rule})
        fk = call_kernels(f) if _ok(f) else None
        rec.update({"fused ms": ms_text(f), "fused_ms": float(f["median_ms"]) if _ok(f) else None,
                    "fused_noise": f.get("rel_noise") if _ok(f) else None,
                    "fused kernel us": fk.sum_us if fk else None, "fused kernels": len(fk.names) if fk else None,
                    "fused gap us": rec_gap(f, fk),
                    "split MiB": _mem(s), "fused MiB": _mem(f),
                    "runs": ", ".join(dict.fromkeys(runs.get(str(r["run_id"]), "?") for r in (s, f) if r is not None))
                    or "-",
                    "across runs": _ok(s) and _ok(f) and str(s["run_id"]) != str(f["run_id"])})
        recs.append(rec)
    out = pd.DataFrame(recs)
    for c in ("split passes", "fused rule", *DERIVED):
        if c not in out:
            out[c] = None
    return out


def kernel_columns(table: pd.DataFrame) -> list[str]:
    """The per-kernel columns of a breakdown ('<kernel> us'), in launch order."""
    return [c for c in table.columns if c.endswith(" us") and c not in DERIVED]


def rec_gap(row, kernels: CallKernels | None) -> float | None:
    """A row's total minus its traced kernels' sum, in us; None where either is missing."""
    if kernels is None or not _ok(row):
        return None
    return float(row["median_ms"]) * 1000 - kernels.sum_us
