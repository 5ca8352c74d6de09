"""The evidence layer: the one place every view reads result rows through.

`show`, `advise`, `report` (study, serving, numerics, layer), `compare`'s matching, the numerics marks,
the "newer evidence" notes and the site ask this layer, and only this layer, which rows a set of files
holds, which rows are one problem, which row of a point is the newest, which rows a view may believe
and rank, and which runs and library stacks a table mixes. Facts it reads (the axes, modes, libraries,
dtype sizes, tolerances) live in core/ tables; nothing here re-derives them.

API (import from `qlabench.analyze.evidence`):

Reading (tree.py)
  read_evidence(paths, columns=None, all_runs=False) -> Evidence
      The rows of result files and folders. `paths` IS the set of evidence: a caller that knows which
      folders are current (the results catalog) passes those; nothing here decides what is current.
      `columns`: read only these (the key, status, timestamp and run id always come): a scan that needs
      20 of 114 columns skips the kernel and sample lists, most of a file's bytes. `all_runs=False`:
      the newest row per point. Files that hold the same run id with conflicting rows raise
      EvidenceError (a view would otherwise take one of them, or average them).
  Evidence: .rows (pandas DataFrame, current schema, plus `source_file`), .files (Paths read),
      .notes (lines a view prints under its table: e.g. a run read from two files with identical rows)
  sibling_folders(root, paths), evidence_root(paths): the folders beside the shown ones (newer.py).

Identity (problem.py; the axes come from core/identity.py, flag `Axis.problem`)
  problem_keys(df) -> Series      one key per row: the problem it measured (any layout, seed, model label)
  point_keys(df) -> Series        one key per row: the point (the store's key columns)
  newest_per_point(df) / newest_per_problem(df) -> DataFrame   the one "newest row" rule (store/keys.py)

Belief (belief.py, accuracy.py)
  believed(df) -> DataFrame
      The rows with what a view may believe: an `ok` row whose stored time is impossible (NaN, <= 0, or
      not the median of its own samples) becomes status `error`; one whose stored error is over its
      tolerance (the same rule as the marks) becomes `incorrect`; both with the reason. A serving row's
      `hbm_frac` is recomputed from its bytes, time and measured peaks; over the limit: `error`.
  accuracy.evidence_of(df, numerics) / row_check(row): each row's checks against the tolerance of the
      dtype the check applies (the state dtype of a bf16 serving pool); `✗`, `†` marks.

Runs and stacks (stacks.py; libraries and their version columns: core/libraries.py)
  stack_label(row) -> str          'flash-qla 0.1.3 tilelang 0.1.9 torch 2.9.1' of one row
  run_mix(rows) -> dict[str, str]  per backend, the run/stack it came from when rows mix runs

Newer evidence (newer.py)
  newer_evidence(shown, paths, folders=None) -> EvidenceCheck   (.lines for a view)
      `folders`: the folders to search (default: the siblings under the evidence root); the catalog
      can pass the current ones.
"""

from qlabench.analyze.evidence.belief import believed
from qlabench.analyze.evidence.problem import newest_per_problem, point_keys, problem_keys
from qlabench.analyze.evidence.tree import Evidence, evidence_notes, read_evidence
from qlabench.store.files import latest_per_point as newest_per_point

__all__ = ["Evidence", "believed", "evidence_notes", "newest_per_point", "newest_per_problem", "point_keys",
           "problem_keys", "read_evidence"]
