"""`qlabench show` filters (model and TP, heads, lengths, gate, backend) and the gate column at 80 columns."""

from __future__ import annotations

import io

import pandas as pd
from typer.testing import CliRunner

from qlabench.cli import app
from qlabench.store.files import write_rows


def cli(*args):
    return CliRunner().invoke(app, [str(a) for a in args], env={"COLUMNS": "80"})


def _rows(make_row):
    out = []
    for h_qk, h_v, lens, zero in ((2, 8, (32768,), None), (2, 8, (8192,) * 4, None), (8, 32, (32768,), None),
                                  (2, 8, (32768,), 0.0)):
        for backend, ms in (("fla", 1.0), ("flash_qla", 0.5)):
            out.append(make_row(backend=backend, median_ms=ms, h_qk=h_qk, h_v=h_v, layout="varlen", batch=1,
                                seqlens=lens, num_seqs=len(lens), total_tokens=sum(lens), gate_zero_frac=zero,
                                K=128, V=128, dtype="bfloat16", model="qwen3.5-397b", tp=8 if h_v == 8 else 2))
    return out


def test_filters_narrow_the_table(tmp_path, make_row):
    f = write_rows(tmp_path / "r.parquet", _rows(make_row))
    def table(*args):
        r = cli("show", f, "--format", "csv", "--baseline", "fla", *args)
        assert r.exit_code == 0, r.output
        return pd.read_csv(io.StringIO(r.output))
    assert len(table()) == 4
    assert len(table("--model", "qwen3.5-122b", "--tp", "8")) == 3  # by heads: 122b TP8 has 397b's 2/8
    assert len(table("--heads", "8/32")) == 1
    assert len(table("--seqlen", "8192")) == 1 and len(table("--tokens", "32768")) == 4
    assert len(table("--gate", "fq z0")) == 1 and len(table("--gate", "flashqla")) == 3
    only = table("--backend", "flash_qla")
    assert set(only.columns) >= {"flash_qla", "fla"}  # the baseline stays for the speedups


def test_a_filter_that_leaves_nothing_is_an_error_naming_it(tmp_path, make_row):
    f = write_rows(tmp_path / "r.parquet", _rows(make_row))
    r = cli("show", f, "--heads", "4/16")
    assert r.exit_code == 2 and "heads filter" in r.output
    assert cli("show", f, "--tp", "2").exit_code == 2  # a TP degree without a model means nothing


def test_the_gate_column_is_visible_at_80_columns(tmp_path, make_row):
    f = write_rows(tmp_path / "r.parquet", _rows(make_row))
    r = cli("show", f, "--baseline", "fla")
    assert r.exit_code == 0
    lines = r.output.splitlines()
    assert max(len(line) for line in lines) <= 80
    # in the table's gate column, or (a table too wide for 80 columns) in each point's heading
    assert any("fq z0" in line and ("│" in line or " · " in line) for line in lines), r.output


def test_a_backend_with_no_rows_is_an_error_not_a_baseline_column_alone(tmp_path, make_row):
    f = write_rows(tmp_path / "r.parquet", _rows(make_row))
    for asked in ("nonexistent", "flash*"):  # a typo, or a glob (backends are names, never patterns)
        r = cli("show", f, "--baseline", "fla", "--backend", asked)
        assert r.exit_code == 2, r.output
        assert "no rows left after the backend filter" in r.output and "fla, flash_qla" in r.output
