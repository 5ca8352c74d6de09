"""The large-batch study as one value: the rows, every backend's time per problem, FlashQLA's kernels beside its
total and a fully fused kernel's, the equal-token comparison and the answer it gives.

Which two backends the kernel comparison reads comes from the declarations (core/backend_decl.py): each
library's backend that pins its intra-card CP off (`cp_setting = 'nocp'`), so neither call is split across
SMs by a CP and the comparison is FlashQLA's two-pass split against FlashInfer's one fused kernel. Nothing here
measures: rows in, tables out.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

import pandas as pd

from qlabench.analyze.evidence import run_lines
from qlabench.analyze.large_batch.batches import (BatchCase, batch_cases, deficit_shares, equal_token_table,
                                                  token_cases)
from qlabench.analyze.large_batch.frame import batch_frame, runs_of
from qlabench.analyze.large_batch.kernels import breakdown
from qlabench.analyze.large_batch.times import time_table
from qlabench.core.backend_decl import auto_choices

SPLIT_LIBRARY = "flash-qla"  # the library whose split the question is about (core/libraries.py names)
FUSED_LIBRARY = "flashinfer"  # the fully fused comparison: its unsplit call launches one kernel


def nocp_backend(library: str) -> str | None:
    """The backend that runs `library` with its intra-card CP pinned off, from the declarations; None if none."""
    for choice in auto_choices():
        if choice.library == library:
            return dict(choice.pinned).get("nocp")
    return None


@dataclass(frozen=True)
class LargeBatch:
    rows: pd.DataFrame  # batch_frame: one row per problem, backend and GPU model
    runs: dict[str, str]  # run id -> its letter in the tables
    run_notes: tuple[str, ...]  # per run, its letter and what it stands on (evidence.run_lines)
    times: pd.DataFrame  # time_table
    kernels: pd.DataFrame  # breakdown of `split` beside `fused`
    cases: tuple[BatchCase, ...]  # fewest against most sequences at equal tokens
    equal_tokens: pd.DataFrame  # equal_token_table
    token_pairs: tuple[tuple[dict, dict], ...]  # one batch size at two token counts
    split: str | None
    fused: str | None
    sources: tuple[str, ...] = field(default=())

    def summary_line(self) -> str:
        counts = self.rows["status"].value_counts().to_dict()
        status = ", ".join(f"{n} {s}" for s, n in counts.items())
        problems = len(self.rows[["device", "problem"]].drop_duplicates())
        return (f"{len(self.rows)} rows ({status}) of {problems} problem{'s' * (problems != 1)}, "
                f"{self.rows['backend'].nunique()} backends, {len(self.runs)} run{'s' * (len(self.runs) != 1)}")

    def deficit(self) -> pd.Series:
        """Per traced problem, the split's passes over the time by which its kernels exceed the fused kernel."""
        return deficit_shares(self.kernels)


def build_large_batch(df: pd.DataFrame, sources: Iterable[str] = (), split: str | None = None,
                      fused: str | None = None) -> LargeBatch:
    """The study of believed rows. `split` / `fused`: the two backends of the kernel comparison (default: FlashQLA's
    and FlashInfer's no-CP backends, from the declarations). QlabenchError when no forward row is left."""
    d = batch_frame(df)
    split = split or nocp_backend(SPLIT_LIBRARY)
    fused = fused or nocp_backend(FUSED_LIBRARY)
    runs = runs_of(d)
    k = breakdown(d, split, fused, runs)
    read = df[df["run_id"].astype(str).isin(set(runs))]
    notes = tuple(f"{runs.get(line.split(':', 1)[0].removeprefix('run '), '?')}: {line}" for line in run_lines(read))
    return LargeBatch(rows=d, runs=runs, run_notes=notes, times=time_table(d, runs), kernels=k,
                      cases=tuple(batch_cases(k, str(split), str(fused))), equal_tokens=equal_token_table(k),
                      token_pairs=tuple(token_cases(k)), split=split, fused=fused,
                      sources=tuple(str(s) for s in sources))


def large_batch_from_paths(paths: Iterable) -> LargeBatch:
    """build_large_batch over result files or folders (the newest row per point, believed)."""
    from qlabench.analyze.evidence import believed, read_evidence

    paths = list(paths)
    return build_large_batch(believed(read_evidence(paths).rows), sources=paths)
