"""Time and error together: each row's correctness evidence, against the tolerance, for the speedup tables.

A row checked ok passed its own check, but that check may have run on a reduced problem (the fp32
oracle on at most `oracle_max_tokens` tokens): it says nothing about the point's real size. The float64
reference at full size (`[check] reference = "fp64-full"`, docs/NUMERICS.md) does, and its rows may sit
in another folder (results/h200-numerics). A backend's evidence at a point is every check recorded for
it there: its own row's, and the numerics rows of the same backend and problem (evidence.problem_keys:
any layout of the same lengths, any seed, any library version).

Per check: the worst tensor's error / tolerance(dtype, tensor) (core/tolerances.py) and which reference
at how many tokens, e.g. `fp64@full` or `oracle@256`. A backend over tolerance in any check is marked
and never gets a speedup where it is the faster side: a kernel that is fast and wrong is not fast.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

import pandas as pd

from qlabench.core.modes import mode_of
from qlabench.core.result import CHECKED_TENSORS
from qlabench.core.tolerances import TOLERANCES, error_ratio, tolerance_dtype
from qlabench.analyze.evidence.problem import problem_keys
from qlabench.analyze.evidence.records import detail, records
from qlabench.analyze.evidence.stacks import STACK_INPUTS, main_version
from qlabench.store.keys import key_value

# The reference a row's `oracle` column names -> its short name in a mark.
# (the recurrence with the gate computed outside, or without a final state, is the oracle of the calls that need it)
REFERENCE_SHORT = {"fp64-full": "fp64", "naive-recurrent": "oracle", "layer:naive-recurrent": "oracle",
                   "naive-recurrent-gate-outside": "oracle", "naive-recurrent-no-state": "oracle",
                   "naive-chunk": "fp32-chunk"}
_SEGMENT = re.compile(r"^\s*(\S+)\s+(\S+)\s+@(\d+) tokens")
OVER = "✗"  # over tolerance in some check
REDUCED = "†"  # the only checks ran on fewer tokens than the point has

LEGEND = (f"e0.22: worst error / tolerance over the checked tensors ({REDUCED}: checked at a reduced size only, "
          f"never at this one); {OVER}dg 1.4: dg at 1.4x its tolerance, no speedup printed where it is the faster "
          "side; references: fp64@full = float64 at the point's size, oracle@256 = the fp32 recurrence on 256 "
          "tokens of the same layout")


@dataclass(frozen=True)
class Check:
    """One recorded check of one row: its worst tensor against the tolerance, and what it was checked against."""

    ratio: float  # worst err / tolerance; inf for a non-finite error
    tensor: str
    reference: str  # 'fp64+oracle', 'fp64', 'oracle', ...: the short names of the references, joined
    tokens: int | None  # tokens of the smallest check the row records
    full: bool  # some reference saw the point at its real size
    source: str = "row"  # 'row' (the timed row's own check) or 'numerics' (a row of another folder)
    label: str = ""  # 'fp64@full', 'oracle@256', 'oracle@512+fp32-chunk@full'
    # The reduced check traced its call and ran the code path the timed call ran ("cp", "unsplit"; the row's
    # check_path, run/point.py): a size-dependent library was checked on the path that was timed.
    same_path: str | None = None

    @property
    def covers_timed_path(self) -> bool:
        """Checked at full size, or on the very code path the timed call took."""
        return self.full or self.same_path is not None

    @property
    def over(self) -> bool:
        return not self.ratio <= 1.0

    @property
    def fp64_full(self) -> bool:
        return self.full and "fp64" in self.reference.split("+")


def _segments(oracle: str, total: int | None) -> list[tuple[str, int | None, bool]]:
    """(short reference, tokens, at full size) per reference an `oracle` column names."""
    out = []
    for part in str(oracle).split(";"):
        m = _SEGMENT.match(part)
        if not m:
            continue
        name, tokens = m.group(1), int(m.group(3))
        short = REFERENCE_SHORT.get(name, "1-device" if "(one device" in part else name)
        out.append((short, tokens, total is not None and tokens >= total))
    return out


def check_dtype(row) -> str | None:
    """The dtype whose tolerances a stored row's check applied: its input dtype, or a serving row's state
    dtype where that is the less precise (core/tolerances.py: tolerance_dtype), as the run judged it."""
    mode = key_value(row.get("mode"))
    state = key_value(row.get("state_dtype")) if mode is None or mode_of(mode).serving else None
    return tolerance_dtype(key_value(row.get("dtype")), state)


_ERR_COLUMNS = tuple((t, f"err_{t}") for t in CHECKED_TENSORS)  # (tensor, the column of its stored error)


def row_check(row, source: str = "row") -> Check | None:
    """The check a stored row records (None: unchecked, or a dtype with no tolerance)."""
    oracle = key_value(row.get("oracle"))
    dtype = check_dtype(row)
    if not oracle or dtype not in TOLERANCES:
        return None
    worst, tensor = -1.0, ""
    for name, column in _ERR_COLUMNS:
        e = key_value(row.get(column))
        if e is None:
            continue
        r = error_ratio(float(e), dtype, name)
        if r > worst:
            worst, tensor = r, name
    if key_value(row.get("status")) == "incorrect" and worst <= 1.0:  # failed its check, whatever it recorded
        worst, tensor = math.inf, tensor or "?"
    if worst < 0:
        return None
    total = key_value(row.get("total_tokens"))
    segs = _segments(oracle, total)
    if not segs:
        segs = [(str(oracle).split()[0], key_value(row.get("check_tokens")), False)]
    label = "+".join(f"{s}@{'full' if full else t}" for s, t, full in segs)
    tokens = min((t for _, t, _ in segs if t is not None), default=None)
    return Check(ratio=worst, tensor=tensor, reference="+".join(s for s, _, _ in segs), tokens=tokens,
                 full=any(f for _, _, f in segs), source=source, label=label, same_path=checked_path(row))


def _check_path(extra_json) -> dict:
    """A row's traced `check_path` ({"checked": ..., "timed": ...}) from its `extra_json`, {} where it traced none."""
    path = detail(extra_json, "check_path")
    return path if isinstance(path, dict) else {}


def checked_path(row) -> str | None:
    """The code path a reduced check shared with the timed call ("cp"/"unsplit"), from the row's details
    (`check_path`: both traced, and equal), or None when they differ or were not traced."""
    path = _check_path(row.get("extra_json"))
    checked, timed = path.get("checked"), path.get("timed")
    return checked if checked is not None and checked == timed else None


def timed_path(extra_json) -> str | None:
    """The code path the timed call took ("cp"/"unsplit": whether the library split it), from a row's
    `extra_json`, where it was traced (a column is read without building each row): the check's `check_path`,
    or `call_path`, which every CUDA row of a backend with a CP mark records."""
    traced = _check_path(extra_json).get("timed")
    if traced is not None:
        return traced
    path = detail(extra_json, "call_path")
    return path if isinstance(path, str) else None


@dataclass(frozen=True)
class RowChecks:
    """Every check of one backend at one point."""

    checks: tuple[Check, ...] = ()

    @property
    def over(self) -> bool:
        return any(c.over for c in self.checks)

    @property
    def shown(self) -> Check | None:
        """The check a mark shows: the worst one over tolerance, else the strongest reference (float64 at full
        size, then any full-size check, then the largest reduced one), the worse of equals."""
        if not self.checks:
            return None
        over = [c for c in self.checks if c.over]
        if over:
            return max(over, key=lambda c: c.ratio)
        return max(self.checks, key=lambda c: (c.fp64_full, c.full, c.tokens or 0, c.ratio))

    @property
    def reduced_only(self) -> bool:
        return bool(self.checks) and not any(c.full for c in self.checks)

    def short(self) -> str:
        """The mark in a terminal cell: 'e0.22' (checked at full size), 'e0.31†' (at a reduced size only),
        '✗dg 1.4' (over tolerance); '' with no check. The reference is in the table's footer lines."""
        c = self.shown
        if c is None:
            return ""
        if c.over:
            return f"{OVER}{c.tensor} " + ("failed" if math.isinf(c.ratio) else f"{c.ratio:.2g}")
        return f"e{c.ratio:.2f}" + (REDUCED if self.reduced_only else "")

    def mark(self) -> str:
        """'0.22 fp64@full', '0.31 oracle@256 †', '✗ dg 1.4x tol fp64@full'; '' with no check."""
        c = self.shown
        if c is None:
            return ""
        if c.over:
            ratio = "failed" if math.isinf(c.ratio) else f"{c.ratio:.2g}x tol"
            return f"{OVER} {c.tensor} {ratio} {c.label}"
        return f"{c.ratio:.2f} {c.label}" + (f" {REDUCED}" if self.reduced_only else "")


# What a row's check is read from (row_check).
CHECK_COLUMNS = ("oracle", "dtype", "state_dtype", "mode", "status", "total_tokens", "check_tokens", "extra_json") + tuple(
    f"err_{t}" for t in CHECKED_TENSORS)


def _check_records(df: pd.DataFrame) -> list[dict]:
    return records(df, [c for c in CHECK_COLUMNS if c in df])


def checked_keys(df: pd.DataFrame) -> pd.Series:
    """What a check is the check of: the problem (evidence.problem_keys: backend and problem, any layout, seed
    or model label) and the version of the backend's own library. FlashInfer 0.6's float64 checks are no
    checks of a 0.7 row: another version is another kernel."""
    cols = [c for c in STACK_INPUTS if c in df.columns]
    versions = [main_version(r) for r in records(df, cols)]
    return pd.Series([f"{k}|{v}" for k, v in zip(problem_keys(df), versions)], index=df.index, dtype=object)


def numerics_checks(numerics: pd.DataFrame | None) -> dict[str, list[Check]]:
    """checked_keys (the problem and the library version) -> the checks of rows from another folder (e.g. the
    fp64-full numerics rows)."""
    if numerics is None or numerics.empty:
        return {}
    out: dict[str, list[Check]] = {}
    for r, key in zip(_check_records(numerics), checked_keys(numerics)):
        c = row_check(r, source="numerics")
        if c is not None:
            out.setdefault(key, []).append(c)
    return out


def evidence_of(df: pd.DataFrame, numerics: pd.DataFrame | None = None) -> list[RowChecks]:
    """One RowChecks per row of `df` (in order): its own check and the numerics rows of the same backend,
    problem and library version (one dense sequence and the same sequence packed as varlen are one problem)."""
    if df.empty:
        return []
    extra = numerics_checks(numerics)
    keys = checked_keys(df) if extra else [None] * len(df)
    out = []
    for r, key in zip(_check_records(df), keys):
        own = row_check(r)
        out.append(RowChecks(tuple(([own] if own else []) + extra.get(key, []))))
    return out


def speedup_allowed(x: float | None, backend_over: bool, baseline_over: bool) -> bool:
    """A speedup (baseline time / backend time) is printed unless its faster side is over tolerance."""
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return False
    return not (backend_over if x >= 1 else baseline_over)


def flagged(v) -> bool:
    """A stored err_over value read back through pandas: True only for a true value (NaN / None: no row)."""
    v = key_value(v)
    return bool(v) if v is not None else False


def with_error_marks(df: pd.DataFrame, numerics: pd.DataFrame | None = None) -> pd.DataFrame:
    """`df` with each row's evidence as columns: err_over (over tolerance in some check), err_mark (the
    mark), err_reduced (checked at a reduced size only)."""
    ev = evidence_of(df, numerics)
    return df.assign(err_over=[e.over for e in ev], err_mark=[e.mark() for e in ev],
                     err_reduced=[e.reduced_only for e in ev])


def evidence_summary(evidence: list[RowChecks]) -> str | None:
    """One line: how many timed points were checked at full size, at a reduced size only, and over tolerance."""
    checked = [e for e in evidence if e.checks]
    if not checked:
        return None
    over = sum(e.over for e in checked)
    full = sum(any(c.fp64_full for c in e.checks) for e in checked)
    reduced = sum(e.reduced_only for e in checked)
    labels: dict[str, int] = {}
    for e in checked:
        labels[e.shown.label] = labels.get(e.shown.label, 0) + 1
    refs = ", ".join(f"{label} {n}" for label, n in sorted(labels.items(), key=lambda kv: -kv[1])[:5])
    text = (f"checks of {len(checked)} timed rows ({refs}): {full} against float64 at full size, {reduced} at a "
            f"reduced size only ({REDUCED})")
    return text + (f"; {OVER} {over} over tolerance" if over else "; none over tolerance")
