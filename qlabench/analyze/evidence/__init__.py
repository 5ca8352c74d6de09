"""The evidence layer: the one place every view reads result rows through.

`show`, `advise`, `report` (study, serving, numerics, layer), `compare`'s matching, the numerics marks,
the "newer evidence" notes and the site ask this layer, and only this layer, which rows a set of files
holds, which rows are one problem, which row of a point is the newest, which rows a view may believe
and rank, and which runs and library stacks a table mixes. Facts it reads (the axes, modes, libraries,
dtype sizes, tolerances) live in core/ tables; nothing here re-derives them.

API (import from `qlabench.analyze.evidence`):

Reading (tree.py)
  read_evidence(paths, columns=None, all_runs=False) -> Evidence
      The rows of result files and folders. `paths` IS the set of evidence: read_evidence decides nothing
      about what is current; current.py does, once, from the results catalog (below). `columns`: read only these (the key, status, timestamp and run id always come):
      a scan skips the kernel and sample lists, most of a file's bytes. `all_runs=False`: the newest row
      per point. One run read from several files is checked (runs.check_runs, below).
  Evidence: .rows (pandas DataFrame, current schema, plus `source_file`), .files (the files read),
      .notes (lines a view prints under its table), .frame() (the rows with the notes attached;
      evidence_notes(frame) gives them back, for loaders that return a frame alone, as
      evidence/current.py's rows_or_current does; its catalog default is checked the same way)

Current (current.py; the catalog's one rule: store/catalog.py Entry.keeps)
  rows_or_current(paths) -> (rows, paths, from_catalog)   the rows of `paths`, or the current evidence's
  current_evidence(), history_notes(), keep_current(rows, catalog)

Identity (problem.py; the axes come from core/identity.py, flag `Axis.problem`)
  problem_keys(df) -> Series      one key per row: the problem it measured (any layout, seed, model label)
  point_keys(df) -> Series        one key per row: the point (the store's key columns)
  whole_device(df) -> DataFrame  the rows not held to an SM budget: what a whole-GPU view reads
  newest_per_point(df) / newest_per_problem(df) -> DataFrame   the one "newest row" rule (store/keys.py);
                                  per point it is the newest row on each GPU model (`device`), a
                                  replicated run's replicates folded into one row (replicates.py)
  fold_replicates(df) -> DataFrame   each run's replicates of a point as one row: the median time, the
                                  spread between them as noise, a failed replicate as the row
  split_problems(df, across=("backend", "mode")) -> [Problem]  the rows as problems on one GPU model each
                                  (.device, .differs: the problem axes that set it apart, .label, .rows):
                                  what a ranking ranks within; never two models, never two problems
  device_series(df), devices_of(df), cards(df)   each row's GPU model; the models (most rows first); the
                                  physical cards (`gpu_uuid`) where rows recorded them

Belief (belief.py, accuracy.py)
  believed(df) -> DataFrame
      What a view may believe, and the gate pass: an `ok` row whose stored time is impossible (NaN, <= 0,
      not the median of its own samples, faster than its work allows at the device's peaks or over an
      hour: core/device_limits.py), that carries a reason, or that records no check becomes status
      `error`; one whose stored error is over its tolerance (the rule of the marks) becomes `incorrect`;
      each with the reason. A serving row's `hbm_frac` is recomputed from its bytes, time and recorded
      peaks; above the limit: `error`. compare and the gate judge rows through it (compare/comparison.py).
  hbm_peaks.one_peak(df, stream_peaks(rows)) / one_peak_from(rows, paths) -> DataFrame: every serving row
      re-expressed against its GPU model's one HBM peak (the best any run measured the current way); a view
      calls it before believed(), which recomputes the share from the peak columns.
  accuracy.evidence_of(df, numerics) / row_check(row) / check_dtype(row): each row's checks against the
      tolerance of the dtype its check applied (a serving row's state dtype where less precise).

Runs and stacks (runs.py, stacks.py; libraries and their version columns: core/libraries.py)
  runs.check_runs(df)              one run in several files: a copy counts once; a point measured again
                                   under one run id counts its newest row; one timestamp recorded two ways
                                   in one folder is refused (EvidenceError); a run id in two folders is two
                                   runs, told apart ('ab-a@results/x'); a row of a run twice in one file:
                                   identical copies count once, different ones are refused
  stack_label(row) -> str          'flash-qla 0.1.3 + tilelang 0.1.15': the versions a row's backend ran on
  run_mix(rows) -> Series          per row 'run R, STACK' where the rows mix runs or stacks, else ''

Provenance (provenance.py)
  run_lines(df) -> [str]           per run: date, GPU model and card, host, git sha, library stack, timing
                                   regime: what every table prints beside its numbers

Records (records.py)
  records.grouped_records(df, by, sort=False, columns=None)   rows as dicts, grouped once

Newer evidence (newer.py)
  newer.newer_evidence(shown, paths, folders=None) -> EvidenceCheck (.lines for a view)
      `folders`: where to look (default: the folders beside the shown ones under the evidence root; the
      catalog can pass the current ones).
"""

from qlabench.analyze.evidence.belief import believed
from qlabench.analyze.evidence.problem import (
    Problem,
    cards,
    device_series,
    devices_of,
    newest_per_problem,
    point_keys,
    problem_keys,
    whole_device,
    split_problems,
)
from qlabench.analyze.evidence.provenance import run_lines
from qlabench.analyze.evidence.replicates import fold_replicates, newest_per_point
from qlabench.analyze.evidence.stacks import run_mix, stack_label
from qlabench.analyze.evidence.tree import Evidence, evidence_notes, read_evidence

__all__ = ["Evidence", "Problem", "believed", "cards", "device_series", "devices_of", "evidence_notes",
           "fold_replicates", "newest_per_point", "newest_per_problem", "point_keys", "problem_keys",
           "read_evidence", "run_lines", "run_mix", "split_problems", "whole_device", "stack_label"]
