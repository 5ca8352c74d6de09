"""The catalog's current rows: what a view reads by default (analyze/current.py)."""

from __future__ import annotations

import pandas as pd

from qlabench.analyze.evidence.current import keep_current
from qlabench.store.catalog import load_catalog


def test_keep_current_drops_history_files_and_backends_an_entry_leaves_out(tmp_path):
    (tmp_path / "catalog.toml").write_text("""format = 1
[[entry]]
path = "s"
kind = "kernel-timings"
status = "current"
date = 2026-01-01
question = "q"
stack = {}
backends = ["fla"]
[[entry]]
path = "s/old.parquet"
kind = "kernel-timings"
status = "history"
date = 2026-01-01
question = "q"
stack = {}
superseded_by = "s"
""")
    cat = load_catalog(tmp_path)
    rows = pd.DataFrame({"backend": ["fla", "flash_qla", "fla"],
                         "source_file": [str(tmp_path / "s" / "a.parquet")] * 2 + [str(tmp_path / "s" / "old.parquet")]})
    assert keep_current(rows, cat).index.tolist() == [0]
