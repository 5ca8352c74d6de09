"""What points cost when last measured (analyze/evidence/costs.py) and `run sweep --dry-run`'s pricing from it: a point
at its own newest ok row's seconds, others at their backend's and mode's median, a backend never measured not
priced; one price per GPU model."""

from __future__ import annotations

import pandas as pd
import pytest
from typer.testing import CliRunner

from qlabench.analyze.evidence.costs import duration, in_point_s, point_costs
from qlabench.core.point import Point
from qlabench.store.files import rows_to_table, write_rows


def _point(n, backend="naive-chunk"):
    return Point(backend=backend, mode="fwd", layout="dense", batch=1, seqlens=(n,), h_qk=2, h_v=4, K=16, V=16,
                 dtype="float32")


def _row(make_row, n, check, first, sampling, **kw):
    return make_row(seqlens=(n,), total_tokens=n, phases_s={"check": check, "first_call": first},
                    sampling_s=sampling, **kw)


def _frame(rows):
    return rows_to_table(rows).to_pandas()


def test_a_rows_seconds_are_its_phases_and_its_sampling(make_row):
    df = _frame([_row(make_row, 64, 0.5, 2.0, 0.25)])
    assert in_point_s(df).tolist() == [2.75]


def test_own_rows_median_and_unpriced_points_are_counted_apart(make_row):
    rows = [_row(make_row, 64, 0.5, 2.0, 0.25), _row(make_row, 128, 1.0, 4.0, 0.25),
            _row(make_row, 256, 1.0, 8.0, 1.0)]
    priced = point_costs([_point(64), _point(512), _point(64, backend="naive-recurrent")], _frame(rows))
    [d] = priced
    assert d.device == "cpu" and d.runs == 1
    by = {p.backend: p for p in d.parts}
    chunk = by["naive-chunk"]
    assert (chunk.points, chunk.own, chunk.at_median, chunk.unknown) == (2, 1, 1, 0)
    assert chunk.seconds == pytest.approx(2.75 + 5.25)  # its own row; the median of 2.75, 5.25 and 10.0
    assert (by["naive-recurrent"].unknown, by["naive-recurrent"].seconds) == (1, 0.0)  # never guessed
    assert (d.own, d.at_median, d.unknown) == (1, 1, 1)


def test_the_newest_ok_row_of_a_point_prices_it(make_row):
    rows = [_row(make_row, 64, 0.5, 2.0, 0.5, timestamp="2025-01-01T00:00:00+00:00", run_id="old"),
            _row(make_row, 64, 0.1, 0.1, 0.3, timestamp="2025-01-02T00:00:00+00:00", run_id="new"),
            _row(make_row, 64, 9.0, 9.0, 9.0, timestamp="2025-01-03T00:00:00+00:00", run_id="broken",
                 status="error", reason="it broke")]
    [d] = point_costs([_point(64)], _frame(rows))
    assert d.seconds == pytest.approx(0.5) and d.runs == 1


def test_each_gpu_model_prices_the_points_from_its_own_rows_the_best_covered_first(make_row):
    rows = [_row(make_row, 64, 1.0, 1.0, 0.0, device="GPU A"),
            _row(make_row, 64, 0.2, 0.2, 0.0, device="GPU B"), _row(make_row, 128, 0.2, 0.2, 0.1, device="GPU B")]
    priced = point_costs([_point(64), _point(128)], _frame(rows))
    assert [d.device for d in priced] == ["GPU B", "GPU A"]
    assert (priced[0].own, priced[1].own, priced[1].at_median) == (2, 1, 1)
    assert priced[1].seconds == pytest.approx(4.0)


def test_no_rows_or_no_phases_price_nothing(make_row):
    assert point_costs([_point(64)], pd.DataFrame()) == []
    assert point_costs([_point(64)], _frame([make_row()]).drop(columns=["phases_s"])) == []
    assert point_costs([_point(64)], _frame([make_row(seqlens=(64,), phases_s=None)])) == []  # rows before phases


@pytest.mark.parametrize("seconds, text", [(0.4, "0 s"), (48, "48 s"), (161, "2.7 min"), (5999, "100.0 min"),
                                           (6000, "1.7 h")])
def test_a_duration_is_never_rounded_away(seconds, text):
    assert duration(seconds) == text


def test_dry_run_prices_the_suite_from_the_rows_it_is_given(make_row, tmp_path):
    from qlabench.cli import app

    suite = tmp_path / "s.toml"
    suite.write_text('name = "s"\ndevice = "cpu"\n[sweep]\nbackends = ["naive-chunk"]\nmodes = ["fwd"]\n'
                     'seqlen = [64, 128]\nbatch = [1]\nheads = [{ h_qk = 2, h_v = 4 }]\nK = 16\nV = 16\n'
                     'dtype = "float32"\n')
    write_rows(tmp_path / "rows" / "s" / "r.parquet", [_row(make_row, 64, 0.5, 2.0, 0.25, device="GPU A")])
    result = CliRunner().invoke(app, ["run", "sweep", "--suite", str(suite), "--dry-run",
                                      "--costs-from", str(tmp_path / "rows")], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    assert "measured before on GPU A" in result.output
    assert "1 at their own row's seconds" in result.output and "1 at the median" in result.output
    empty = tmp_path / "none"
    write_rows(empty / "s" / "r.parquet", [_row(make_row, 64, 0.5, 2.0, 0.25, backend="naive-recurrent")])
    result = CliRunner().invoke(app, ["run", "sweep", "--suite", str(suite), "--dry-run", "--costs-from", str(empty)],
                                env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    assert "no recorded costs for these points" in result.output


def test_costs_from_without_a_dry_run_is_refused_before_anything_runs(tmp_path):
    from qlabench.cli import app

    result = CliRunner().invoke(app, ["run", "sweep", "--suite", "quick-cpu", "--costs-from", str(tmp_path),
                                      "--out", str(tmp_path / "out")])
    assert result.exit_code == 2 and "--costs-from prices a dry run's points" in result.output
    assert not (tmp_path / "out").exists()
