"""The command line's tables (cli/views.py) read whole on an 80-column terminal: wrapped, never cut."""

from __future__ import annotations

import dataclasses

from qlabench.core.spec import load_suite


def _at_80(obj) -> str:
    import io

    from rich.console import Console

    buf = io.StringIO()
    Console(file=buf, width=80).print(obj)
    return buf.getvalue()


def test_backends_notes_read_whole_at_80_columns():
    from qlabench.backends import REGISTRY
    from qlabench.cli.listings import backends_table

    text = _at_80(backends_table(REGISTRY.values(), width=80))
    assert "naive-recurrent: token-by-token fp32 recurrence" in " ".join(text.split())
    assert "…" not in text


def test_dry_run_labels_are_never_cut_at_80_columns():
    from qlabench.cli.listings import points_table

    s = load_suite("flashqla-study")
    text = _at_80(points_table(dataclasses.replace(s, points=s.points[:40]), width=80))
    assert "…" not in text and "qwen3.5-397b TP8 (h2/8)" in text
    import re

    lines = [ln for ln in text.splitlines() if re.match(r"\s*\d+  \S", ln)]
    assert len(lines) == 40 and len(set(lines)) == 40


def test_speedup_table_folds_rather_than_cuts(make_row):
    import pandas as pd

    from qlabench.analyze.kit.speedups import speedup_table
    from qlabench.cli.views import speedup_rich_table

    df = pd.DataFrame([make_row(backend=b, model="qwen3.5-397b", tp=8, h_qk=2, h_v=8, median_ms=ms).as_dict()
                       for b, ms in (("naive-recurrent", 9.0), ("naive-chunk", 1.0), ("flash_qla", 0.1))])
    text = _at_80(speedup_rich_table(speedup_table(df, "naive-recurrent"), "naive-recurrent"))
    assert "…" not in text and "(90.00x)" in text

