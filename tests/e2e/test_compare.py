"""`qlabench compare` through the CLI: unusable options and unusable files are exit 2 with one line,
never a traceback (exit 1, which CI reads as a regression) and never a pass."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from qlabench.cli import app
from qlabench.store.files import write_rows


@pytest.fixture
def files(make_row, tmp_path):
    def side(name, factor=1.0, **changes):
        rows = [make_row(run_id=name, seed=s, replicate=r, samples_ms=tuple(x * factor for x in (1.0, 1.02, 0.99,
                         1.01, 1.0)), median_ms=1.0 * factor, **changes) for s in range(2) for r in range(3)]
        return write_rows(tmp_path / f"{name}.parquet", rows)

    paths = {"base": side("base"), "slow": side("slow", factor=10.0),
             "error": side("error", status="error", reason="boom")}
    table = pq.read_table(paths["base"])  # a null in samples_ms, as a damaged or hand-edited file holds it
    i = table.schema.get_field_index("samples_ms")
    spoilt = pa.array([[1.0, None, 1.0]] * table.num_rows, table.schema.field(i).type)
    pq.write_table(table.set_column(i, table.schema.field(i), spoilt), tmp_path / "null.parquet")
    paths["null"] = tmp_path / "null.parquet"
    return paths


def _compare(*args):
    return CliRunner().invoke(app, ["compare", *map(str, args)])


@pytest.mark.parametrize("value", ["inf", "1e300", "nan", "-1"])
def test_an_unbounded_noise_factor_is_exit_2_not_a_pass(files, value):
    r = _compare(files["base"], files["slow"], "--noise-factor", value)
    assert r.exit_code == 2 and "--noise-factor must be in" in r.output, r.output
    assert _compare(files["base"], files["slow"]).exit_code == 1  # the 10x slowdown itself fails


@pytest.mark.parametrize("args", [["--top", "0"], ["--threshold", "inf"], ["--min-samples", "1000000000"]])
def test_other_out_of_range_options_are_exit_2(files, args):
    r = _compare(files["base"], files["slow"], *args)
    assert r.exit_code == 2 and "must" in r.output


@pytest.mark.parametrize("order", ["null-head", "null-base"])
def test_a_null_time_on_either_side_is_never_a_pass_and_says_why(files, order):
    # the evidence layer's rule (evidence/belief.py): the row is an error with its reason; a head that lost its
    # times fails (exit 1), a base that has none compares nothing, which is not a pass (exit 2)
    sides = (files["base"], files["null"]) if order == "null-head" else (files["null"], files["base"])
    r = _compare(*sides)
    assert r.exit_code == (1 if order == "null-head" else 2), r.output
    assert "non-finite time: not believed" in " ".join(r.output.split()) and "Traceback" not in r.output


def test_a_baseline_of_error_rows_against_a_ten_times_slower_head_is_not_a_pass(files):
    r = _compare(files["error"], files["slow"])
    assert r.exit_code == 2 and "NOT A PASS" in r.output and "nothing was compared" in r.output
