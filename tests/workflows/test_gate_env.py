"""`gate` refuses a baseline from another GPU model before it measures anything."""

from __future__ import annotations

import pandas as pd
from typer.testing import CliRunner

from qlabench.cli import app
from qlabench.core.result import ResultRow
from qlabench.core.spec import load_suite
from qlabench.run.options import InProcess, RunOptions
from qlabench.run.sweep import run_sweep
from qlabench.store.files import read_results, write_rows


def _records(df: pd.DataFrame) -> list[dict]:
    import pyarrow as pa

    from qlabench.store.schema import COLUMNS, arrow_schema

    return pa.Table.from_pandas(df[list(COLUMNS)], schema=arrow_schema(), preserve_index=False).to_pylist()


def test_a_baseline_from_another_gpu_model_is_refused_before_the_run(tmp_path, data_dir):
    suite = str(data_dir / "tiny-cpu.toml")
    s = load_suite(suite)
    s = s.__class__(**{**s.__dict__, "points": s.points[:1]})
    res = run_sweep(s, tmp_path / "base", RunOptions(executor=InProcess()))
    df = read_results([res.path]).assign(device="NVIDIA H200")  # as if measured on another GPU model
    base = write_rows(tmp_path / "h200.parquet", [ResultRow(**r) for r in _records(df)])
    out = tmp_path / "head"
    r = CliRunner().invoke(app, ["gate", "--suite", suite, "--baseline", str(base), "--out", str(out)])
    assert r.exit_code == 2, r.output
    assert "different device models" in r.stderr and "NVIDIA H200" in r.stderr
    assert not out.exists()  # refused first: no head run was measured
