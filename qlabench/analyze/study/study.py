"""The FlashQLA study computed from result rows: every table and frame the report shows, no rendering.

    study = build_study(read_results(paths), load_published())
    study.summary.line        # "N of 203 rows within 10% of the published value; ..."
    study.comparison          # one row per published value: ours, published, ratio, explanation

"Ours" for each backend is its newest library version present (rows of older stacks are kept for the
version comparison, and stand in where the newest stack did not measure a point). Only ok rows give
numbers; any other row shows its status and reason.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from qlabench.analyze.evidence.records import grouped_records
from qlabench.analyze.evidence.accuracy import OVER, flagged, speedup_allowed, with_error_marks
from qlabench.analyze.evidence.problem import whole_device
from qlabench.analyze.study.explain import WITHIN, explain_all, within
from qlabench.analyze.study.gate import gate_sweep
from qlabench.analyze.study.intracp import intracp_table
from qlabench.analyze.study.prepare import FLASH_QLA_VARIANTS, is_primary, newest_per_stack, prepare, primary_stacks
from qlabench.core.libraries import version_key
from qlabench.analyze.data.published_tables import PublishedTable, published_table
from qlabench.analyze.study.published import (BACKEND_COLUMNS, candidates, load_published, published_long,
                                              resolve_published)
from qlabench.analyze.study.regret import regret_table
from qlabench.analyze.study.speedup import speedup_curves
from qlabench.analyze.study.versions import stack_comparison, versions_table
from qlabench.core.errors import ConfigError

DEFAULT_TOLERANCE = 0.10
MAX_TOLERANCE = 1.0
# Our row's columns carried into the comparison (the published side keeps its own labels).
OUR_COLUMNS = ["status", "reason", "ours_ms", "ratio", "stack", "library", "lib_version", "our_sequences", "layout",
               "device",
               "timer", "gate_label", "method_diffs", "cp_launched", "sm_coverage", "dominant_kernel",
               "dominant_share", "rel_noise", "clock_drop", "clock_drop_reason", "sm_clock_mhz_before", "sm_clock_mhz_after",
               "run_id", "study_key", "err_over", "err_mark", "err_reduced"]
_PUB_COLUMNS = ["pub_id", "backend", "mode", "model_config", "heads", "sequences", "h_qk", "h_v", "num_seqs",
                "total_tokens", "by_totals", "published_ms"]


@dataclass(frozen=True)
class Summary:
    n_rows: int  # published rows
    n_rows_within: int  # rows whose every published value we met within the tolerance
    per_backend: dict[str, tuple[int, int]]  # backend -> (values within, published values)
    explained: tuple[tuple[str, int], ...]  # explanation -> values outside the tolerance, most first
    tolerance: float
    n_verified: int = 0  # values outside whose label names a cause a recorded comparison supports
    n_unverified: int = 0  # values outside with no such cause ("unverified: ...")
    cross_gpu: str = ""  # where ours ran on another GPU than the table's: says so (cross_gpu_note)

    @property
    def n_outside(self) -> int:
        return sum(n for _, n in self.explained)

    @property
    def line(self) -> str:
        per = ", ".join(f"{b} {w}/{n}" for b, (w, n) in self.per_backend.items())
        head = (f"{self.cross_gpu}: " if self.cross_gpu else "") + (
                f"{self.n_rows_within} of {self.n_rows} rows within {self.tolerance:.0%} of the published value "
                f"(every column; {per})")
        if not self.explained:
            return head
        rest = self.n_outside - self.n_verified - self.n_unverified
        counts = (f"{self.n_verified} with a cause a recorded comparison supports, {self.n_unverified} unverified, "
                  f"{rest} not measured or not ok")
        top = "; ".join(f"{label} ({n})" for label, n in self.explained[:6])
        more = f"; {len(self.explained) - 6} more" if len(self.explained) > 6 else ""
        return f"{head}; the other {self.n_outside} values: {counts}; by explanation: {top}{more}"


@dataclass(frozen=True)
class Study:
    rows: pd.DataFrame  # every row, prepared (study labels), newest per (backend, point, stack)
    published: pd.DataFrame
    primary: dict[str, str]  # backend -> the stack whose rows are "ours"
    comparison: pd.DataFrame  # one row per published value: ours vs published, explanation, factors
    comparison_all: pd.DataFrame  # every stack's row matched to a published value
    speedups: pd.DataFrame
    regret: pd.DataFrame
    gate_zero_frac: pd.DataFrame
    gate_scale: pd.DataFrame
    versions: pd.DataFrame
    stacks: dict[str, pd.DataFrame]  # backend -> its points on two or more stacks
    summary: Summary
    tolerance: float = DEFAULT_TOLERANCE
    sources: tuple[str, ...] = field(default=())
    numerics: pd.DataFrame | None = None  # the rows whose checks count as error evidence (report --numerics)
    history: tuple[str, ...] = ()  # older evidence left out of these rows (analyze/evidence/current.py: history_notes)
    apart: tuple[str, ...] = ()  # rows of other GPU models left out (of_table_gpu)
    command: str = ""  # the command that makes the page, written at its top
    table: PublishedTable = field(default_factory=published_table)  # the published table and its provenance

    @property
    def primary_rows(self) -> pd.DataFrame:
        return self.rows[is_primary(self.rows, self.primary)] if not self.rows.empty else self.rows

    def by_explanation(self) -> pd.DataFrame:
        return explanation_groups(self.comparison)

    def published_wide(self, mode: str) -> pd.DataFrame:
        return published_wide(self.comparison, mode)

    def fla_intracp(self) -> pd.DataFrame:
        """fla-intracp beside flash_qla and fla on the same forward points (intracp.py)."""
        return intracp_table(self.primary_rows)

    def unpublished_modes(self) -> dict[str, pd.DataFrame]:
        return mode_tables(self.primary_rows, exclude=set(self.published["mode"]))


def check_tolerance(tolerance: float) -> None:
    """ConfigError unless `tolerance` (the relative gap to a published value that still counts as reproducing
    it) is in [0, MAX_TOLERANCE]: at 1 anything from 0 to twice the published time already counts."""
    if isinstance(tolerance, bool) or not 0 <= tolerance <= MAX_TOLERANCE:  # NaN fails both comparisons
        raise ConfigError(f"--tolerance must be a fraction in [0, {MAX_TOLERANCE:g}] (0.1 = 10%), got {tolerance}")


def build_study(results: pd.DataFrame, published: pd.DataFrame | None = None,
                tolerance: float = DEFAULT_TOLERANCE, sources: Iterable[str] = (),
                numerics: pd.DataFrame | None = None, history: Iterable[str] = (), command: str = "",
                table: PublishedTable | None = None) -> Study:
    """Every table of the study from result rows (a read_results DataFrame) and the published table (`table`:
    where it comes from, its GPU and stack; None: the H200's, whose rows `published` defaults to).

    numerics: rows of another folder (e.g. results/h200-numerics, float64 at full size) whose checks count
    as error evidence for the same backend and problem; a speedup is only given for a kernel inside
    tolerance in all its evidence (analyze/evidence/accuracy.py)."""
    check_tolerance(tolerance)
    table = table or published_table()
    pub = load_published(table) if published is None else published
    results, apart = of_table_gpu(results, table)
    prepared = prepare(whole_device(results))  # the table is whole-GPU: a row held to an SM budget is not its

    rows = with_error_marks(newest_per_stack(prepared), numerics)
    primary = primary_stacks(rows) if not rows.empty else {}
    comparison, comparison_all = compare_published(rows, pub, primary, tolerance, runs=prepared, table=table)
    primary_rows = rows[is_primary(rows, primary)] if not rows.empty else rows
    return Study(
        rows=rows, published=pub, primary=primary, comparison=comparison, comparison_all=comparison_all,
        speedups=speedup_curves(primary_rows, pub), regret=regret_table(prepared),
        gate_zero_frac=gate_sweep(primary_rows, "gate_zero_frac"), gate_scale=gate_sweep(primary_rows, "gate_scale"),
        versions=versions_table(rows, table), stacks=stack_comparison(rows, comparison_all, tolerance),
        summary=summarise(comparison, len(pub), tolerance, cross_gpu_note(comparison, table)), tolerance=tolerance,
        sources=tuple(map(str, sources)), numerics=numerics, history=tuple(history), apart=tuple(apart), command=command,
        table=table)


def of_table_gpu(results: pd.DataFrame, table: PublishedTable) -> tuple[pd.DataFrame, list[str]]:
    """The rows of one GPU model, the others left out and named: the table's GPU where the evidence holds rows of
    it (a same-GPU comparison), else the model with most rows (a cross-GPU table, which cross_gpu_note says). An
    H100's newer row of a point never stands in for the H200's beside a published value, nor do two GPUs' rows
    share one cross-GPU table (`report --gpu` picks another)."""
    if results.empty or "device" not in results:
        return results, []
    devices = results["device"].astype(object)
    known = devices.map(lambda d: isinstance(d, str) and bool(d)).astype(bool)
    models = devices[known].value_counts()
    if len(models) < 2:
        return results, []
    on_table = [d for d in models.index if table.gpu is not None and table.measured_on(str(d))]
    keep = on_table[0] if on_table else sorted(models.items(), key=lambda kv: (-kv[1], str(kv[0])))[0][0]
    mine = devices == keep
    why = (f"FlashQLA's table was measured on {table.gpu}, and this evidence holds rows of it" if on_table else
           f"one GPU model's rows, the one with most, beside FlashQLA's table of {table.gpu}")
    others = sorted({str(d) for d in devices[~mine].dropna()})
    return results[mine], [f"{int((~mine).sum())} rows of {', '.join(others)} left out: {why} (`report --gpu` and "
                           "`advise --gpu` read the others)"]


def cross_gpu_note(comparison: pd.DataFrame, table: PublishedTable) -> str:
    """'' where every row matched to the table ran on its GPU (or its GPU is not known); else what says that the
    comparison is of two GPUs."""
    measured = comparison[comparison["status"].notna()] if "status" in comparison else comparison
    devices = sorted({str(d) for d in measured.get("device", pd.Series(dtype=object)).dropna()})
    others = [d for d in devices if table.gpu is not None and not table.measured_on(d)]
    if not others:
        return ""
    return (f"cross-GPU table: ours ran on {', '.join(others)}, FlashQLA's published table on {table.gpu}; "
            "every ratio compares two GPUs")


def study_from_paths(paths: Iterable[str | os.PathLike], published: str | os.PathLike | None = None,
                     tolerance: float = DEFAULT_TOLERANCE,
                     numerics: Iterable[str | os.PathLike] = (), command: str = "", gpu: str | None = None) -> Study:
    """read_results(paths) and the published table (default: FlashQLA's H200 table; a CSV file, or a GPU name
    such as 'GB200': study.published.resolve_published), into a Study; the rows of `numerics` folders count as
    error evidence. No paths: the current evidence results/catalog.toml
    names, with its history listed beside the versions. `gpu`: that GPU model's rows only (as `advise --gpu`; the
    sources still list every folder read)."""
    from qlabench.analyze.evidence.current import history_notes, rows_or_current
    from qlabench.analyze.evidence import believed, fold_replicates, read_evidence

    def read_results(paths):  # every run: the numerics rows are error evidence, each row its own check
        return read_evidence(paths, all_runs=True).rows

    table = resolve_published(published)  # before any row is read: a name that names no table is one message
    df, paths, from_catalog = rows_or_current(paths)  # every run: the study picks its rows per stack itself
    df = fold_replicates(believed(df))  # a run's replicates of a point: one row, as every view reads them
    if gpu is not None:
        from qlabench.analyze.answer.answer import of_gpu

        df = of_gpu(df, gpu)[0]
        if df.empty:
            raise ConfigError(f"--gpu {gpu}: no row of that GPU model in these results")
    numerics = list(numerics or ())
    sources = [_shown(p) for p in paths] if from_catalog else [str(p) for p in paths]  # as the user gave them
    return build_study(df, load_published(table), tolerance, sources=sources,
                       numerics=read_results(numerics) if numerics else None,
                       history=history_notes() if from_catalog else (), command=command, table=table)


def _shown(path) -> str:
    """A path as the page prints it: relative to the working directory where it lies below it."""
    from pathlib import Path

    try:
        return str(Path(path).resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)


def compare_published(rows: pd.DataFrame, pub: pd.DataFrame, primary: dict[str, str],
                      tolerance: float, runs: pd.DataFrame | None = None,
                      table: PublishedTable | None = None) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(comparison, comparison_all): our row for every published value, and every stack's row.

    Per (published value, stack) the row closest to the published method wins (fewest method
    differences), then the newest. Per published value the primary stack's row wins, else the newest
    other stack's; a value nobody measured stays, with status null ("not measured").
    """
    base = published_long(pub)[_PUB_COLUMNS]
    cand = candidates(rows, pub) if not rows.empty else pd.DataFrame()
    if cand.empty:
        all_stacks = pd.DataFrame(columns=_PUB_COLUMNS + OUR_COLUMNS + ["primary"])
    else:
        cand = cand.assign(ours_ms=cand["median_ms"].where(cand["status"] == "ok").astype(float),
                           our_sequences=cand["sequences"], _ts=cand["timestamp"].astype(str))
        cand["ratio"] = cand["ours_ms"] / cand["published_ms"]
        cand = cand.sort_values(["n_diffs", "_ts"], ascending=[True, False], kind="stable")
        all_stacks = cand.drop_duplicates(["pub_id", "backend", "stack"], keep="first")
        all_stacks = all_stacks[["pub_id", "backend"] + OUR_COLUMNS].merge(base, on=["pub_id", "backend"])
        all_stacks["primary"] = [primary.get(b) == s for b, s in zip(all_stacks["backend"], all_stacks["stack"])]
        all_stacks = all_stacks[_PUB_COLUMNS + OUR_COLUMNS + ["primary"]].reset_index(drop=True)
    if all_stacks.empty:
        chosen = all_stacks
    else:
        order = all_stacks.assign(_v=all_stacks["lib_version"].map(version_key))
        order = order.sort_values(["primary", "_v"], ascending=[False, False], kind="stable")
        chosen = order.drop_duplicates(["pub_id", "backend"], keep="first").drop(columns="_v")
    comparison = base.merge(chosen[["pub_id", "backend"] + OUR_COLUMNS], on=["pub_id", "backend"], how="left")
    comparison["within"] = [within(r, tolerance) for r in comparison["ratio"]]
    comparison = explain_all(comparison, all_stacks, rows, tolerance, runs, table)
    order = {b: i for i, b in enumerate(BACKEND_COLUMNS)}
    comparison = comparison.sort_values(["pub_id", "backend"], key=lambda s: s.map(order) if s.name == "backend"
                                        else s, kind="stable").reset_index(drop=True)
    return comparison, all_stacks


def summarise(comparison: pd.DataFrame, n_rows: int, tolerance: float, cross_gpu: str = "") -> Summary:
    per = {}
    for b in BACKEND_COLUMNS:
        sub = comparison[comparison["backend"] == b]
        if len(sub):
            per[b] = (int(sub["within"].sum()), len(sub))
    n_within = int(comparison.groupby("pub_id")["within"].all().sum()) if len(comparison) else 0
    outside = comparison[~comparison["within"].astype(bool)]
    explained = tuple((str(k), int(v)) for k, v in outside["explanation"].value_counts(sort=True).items())
    verified = outside["verified"] if "verified" in outside else pd.Series(dtype=object)
    return Summary(n_rows=n_rows, n_rows_within=n_within, per_backend=per, explained=explained, tolerance=tolerance,
                   n_verified=int((verified == True).sum()),  # noqa: E712 (None: not ok or not measured)
                   n_unverified=int((verified == False).sum()), cross_gpu=cross_gpu)  # noqa: E712


def explanation_groups(comparison: pd.DataFrame) -> pd.DataFrame:
    """Values grouped by explanation: count, backends, modes and a few example points; within-tolerance last."""
    if comparison.empty:
        return pd.DataFrame(columns=["explanation", "values", "backends", "modes", "examples"])
    d = comparison.assign(_point=comparison["heads"] + " " + comparison["sequences"])
    g = d.groupby("explanation", sort=False).agg(
        values=("backend", "size"), backends=("backend", lambda s: ", ".join(sorted(set(s)))),
        modes=("mode", lambda s: ", ".join(sorted(set(s)))),
        examples=("_point", lambda s: ", ".join(list(dict.fromkeys(s))[:3]) + (" …" if s.nunique() > 3 else "")))
    g = g.reset_index()
    g["_within"] = g["explanation"].str.startswith(WITHIN)
    return (g.sort_values(["_within", "values"], ascending=[True, False], kind="stable").drop(columns="_within")
            .reset_index(drop=True))


def published_wide(comparison: pd.DataFrame, mode: str) -> pd.DataFrame:
    """One row per published row of `mode`: per backend our value (ms, or the status), published ms and
    ratio; flash_qla's speedup over each other backend, ours (ok rows only) and published; and `runs`, the
    runs our values come from (more than one: the speedups divide across runs, and say so)."""
    d = comparison[comparison["mode"] == mode]
    if d.empty:
        return pd.DataFrame()
    out = []
    for pub_id, grp in grouped_records(d, "pub_id", sort=True):
        first = grp[0]
        rec = {"model_config": first["model_config"], "heads": first["heads"], "sequences": first["sequences"]}
        by = {r["backend"]: r for r in grp}
        if first["by_totals"]:
            ours_seqs = by.get("flash_qla", by.get("fla", {})).get("our_sequences")
            rec["our sequences"] = ours_seqs if isinstance(ours_seqs, str) else "-"
        for b in BACKEND_COLUMNS:
            r = by.get(b)
            if r is None:
                continue
            rec[f"{b} ms"] = _cell(r)
            rec[f"{b} published"] = r["published_ms"]
            rec[f"{b} ratio"] = r["ratio"]
        fq = by.get("flash_qla")
        for b in BACKEND_COLUMNS:
            if b == "flash_qla" or b not in by or fq is None:
                continue
            r = by[b]
            rec[f"speedup vs {b}"] = _speedup(r, fq, r["ours_ms"], fq["ours_ms"]) if _ok(r) and _ok(fq) else np.nan
            rec[f"speedup vs {b} (published)"] = r["published_ms"] / fq["published_ms"]
        rec["runs"] = ", ".join(sorted({str(r["run_id"]) for r in by.values() if _ok(r)})) or "-"
        out.append(rec)
    return pd.DataFrame(out)


def _speedup(base: dict, fq: dict, base_ms, fq_ms):
    """base_ms / fq_ms, or the faster side's error mark (a string) where that side is over tolerance."""
    x = float(base_ms) / float(fq_ms)
    if speedup_allowed(x, flagged(fq.get("err_over")), flagged(base.get("err_over"))):
        return x
    return (fq if x >= 1 else base).get("err_mark") or OVER


def _ok(r) -> bool:
    return r.get("status") == "ok" and not pd.isna(r.get("ours_ms"))


def _cell(r):
    """Our value as a number when ok, else the status ('not measured' when no row)."""
    status = r.get("status")
    if status is None or (isinstance(status, float) and pd.isna(status)):
        return "not measured"
    return float(r["ours_ms"]) if status == "ok" else str(status)


def mode_tables(rows: pd.DataFrame, exclude: set[str]) -> dict[str, pd.DataFrame]:
    """Modes with no published counterpart (e.g. fwd_bwd): per point, each backend's ms (or status) and
    flash_qla's speedup over the others, ok rows only."""
    out = {}
    d = rows[~rows["mode"].isin(exclude)] if not rows.empty else rows
    for mode, grp in d.groupby("mode", sort=True):
        backends = [b for b in list(BACKEND_COLUMNS) + list(FLASH_QLA_VARIANTS) if b in set(grp["backend"])]
        backends = list(dict.fromkeys(backends))
        recs = []
        for _, pt in grouped_records(grp, "study_key"):
            first = pt[0]
            by = {r["backend"]: r for r in pt}
            rec = {"heads": first["heads"], "sequences": first["sequences"], "gate": first["gate_label"],
                   "_order": (first["h_v"], first["h_qk"], first["total_tokens"])}
            for b in backends:
                r = by.get(b)
                rec[f"{b} ms"] = "-" if r is None else (float(r["median_ms"]) if r["status"] == "ok" else r["status"])
            fq = by.get("flash_qla")
            for b in backends:
                r = by.get(b)
                if b != "flash_qla" and b in BACKEND_COLUMNS and r is not None and fq is not None:
                    both = r["status"] == "ok" and fq["status"] == "ok"
                    rec[f"speedup vs {b}"] = _speedup(r, fq, r["median_ms"], fq["median_ms"]) if both else np.nan
            recs.append(rec)
        if recs:
            t = pd.DataFrame(recs).sort_values("_order", kind="stable").drop(columns="_order").reset_index(drop=True)
            out[str(mode)] = t
    return out
