"""Exit codes of `qlabench compare`, as docs/GATING.md promises: 0 pass, 1 a failure under --fail-on, 2 bad
input; a malformed file is a clean exit 2 (never a traceback with exit 1, which CI reads as a regression)."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from qlabench.run.options import InProcess, RunOptions
from qlabench.cli import app
from qlabench.core.spec import parse_suite
from qlabench.run.sweep import run_sweep

SUITE = {
    "name": "ec", "device": "cpu",
    "sweep": {"backends": ["naive-recurrent"], "modes": ["fwd"], "seqlen": [8, 12],
              "heads": [{"h_qk": 1, "h_v": 1}], "K": 8, "V": 8, "dtype": "float32"},
    "timing": {"timer": "wall", "warmup": 0, "min_samples": 2, "max_samples": 2, "max_time_s": 0.05},
    "check": {"oracle_max_tokens": 32},
}


@pytest.fixture(scope="module")
def run_file(tmp_path_factory):
    d = tmp_path_factory.mktemp("ec")
    return run_sweep(parse_suite(SUITE, "ec.toml"), d, RunOptions(executor=InProcess())).path


def _variant(run_file, tmp_path, name, fn):
    t = fn(pq.read_table(run_file))
    out = tmp_path / f"{name}.parquet"
    pq.write_table(t, out)
    return out


def _invoke(*args):
    r = CliRunner().invoke(app, list(map(str, args)))
    assert r.exception is None or isinstance(r.exception, SystemExit), repr(r.exception)  # no traceback
    return r


def test_zero_overlapping_points_is_not_a_pass(run_file, tmp_path):
    other = parse_suite({**SUITE, "sweep": {**SUITE["sweep"], "seqlen": [16]}}, "ec.toml")
    head = run_sweep(other, tmp_path, RunOptions(executor=InProcess())).path
    r = _invoke("compare", run_file, head)
    assert r.exit_code == 2 and "no point in common" in r.output


def test_an_empty_head_is_no_rows_not_another_environment(run_file, tmp_path):
    empty = _variant(run_file, tmp_path, "empty", lambda t: t.slice(0, 0))
    r = _invoke("compare", run_file, empty)
    assert r.exit_code == 2 and "no rows" in r.output and "different environments" not in r.output
    r = _invoke("merge", empty, "--into", tmp_path / "m.parquet")
    assert r.exit_code == 2 and "no rows" in r.output and not (tmp_path / "m.parquet").exists()


@pytest.mark.parametrize("column", ["backend", "seqlens", "status"])
def test_a_file_missing_a_key_column_is_a_clean_exit_2(run_file, tmp_path, column):
    bad = _variant(run_file, tmp_path, "nokey", lambda t: t.drop([column]))
    for args in (("compare", run_file, bad), ("compare", bad, run_file),
                 ("merge", run_file, bad, "--into", tmp_path / "m.parquet")):
        r = _invoke(*args)
        assert r.exit_code == 2 and repr(column) in r.output, (args, r.output)
    assert not (tmp_path / "m.parquet").exists()


def test_an_unknown_status_is_a_clean_exit_2(run_file, tmp_path):
    def weird(t):
        i = t.column_names.index("status")
        return t.set_column(i, t.schema.field("status"), pa.array(["weird"] * t.num_rows))

    bad = _variant(run_file, tmp_path, "weird", weird)
    for args in (("compare", run_file, bad), ("merge", bad, "--into", tmp_path / "m.parquet")):
        r = _invoke(*args)
        assert r.exit_code == 2 and "unknown status 'weird'" in r.output, (args, r.output)


def test_compare_of_a_run_with_itself_still_passes(run_file):
    assert _invoke("compare", run_file, run_file).exit_code == 0
