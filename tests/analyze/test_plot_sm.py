"""The SM-utilisation view: its data frame, the PNGs, and the `qlabench plot-sm` command on stored results."""

from __future__ import annotations

import pandas as pd
import pytest
from typer.testing import CliRunner

from qlabench.cli import app
from qlabench.core.errors import QlabenchError
from qlabench.analyze.plot.sm import plot_sm, sm_frame
from qlabench.store.files import write_rows


@pytest.fixture
def rows(make_row):
    """FLA and FlashQLA at TP8 and TP1 (h 2/8 and 16/64), with coverage; ncu only for FlashQLA."""
    out = []
    for tp, hq, hv in ((8, 2, 8), (1, 16, 64)):
        out.append(make_row(backend="fla", model="qwen3-next", tp=tp, h_qk=hq, h_v=hv,
                            sm_coverage=0.41 if tp == 8 else 0.97))
        out.append(make_row(backend="flash-qla", model="qwen3-next", tp=tp, h_qk=hq, h_v=hv,
                            sm_coverage=0.95, sm_active_pct=88.0 if tp == 8 else 93.0))
    out.append(make_row(backend="naive-chunk", model="qwen3-next", tp=8, h_qk=2, h_v=8))  # no SM data
    out.append(make_row(backend="fla", status="error", reason="boom", model="qwen3-next", tp=8, h_qk=2, h_v=8,
                        seed=1, sm_coverage=0.1))  # not ok: never plotted (another draw: one run measures a point once)
    return out


def frame(rows) -> pd.DataFrame:
    return pd.DataFrame([r.as_dict() for r in rows])


def test_sm_frame_against_tp(rows):
    d = sm_frame(frame(rows), x="tp")
    assert set(d["backend"]) == {"fla", "flash-qla"}  # naive has no SM data, the error row is dropped
    fla8 = d[(d["backend"] == "fla") & (d["x"] == "TP8")].iloc[0]
    assert fla8["sm_coverage_pct"] == pytest.approx(41.0) and pd.isna(fla8["sm_active_pct"])
    qla1 = d[(d["backend"] == "flash-qla") & (d["x"] == "TP1")].iloc[0]
    assert qla1["sm_active_pct"] == 93.0
    assert list(d.sort_values("x_order")["x"].drop_duplicates()) == ["TP1", "TP8"]


def test_sm_frame_against_heads_orders_by_value_heads(rows):
    d = sm_frame(frame(rows), x="heads")
    order = list(d.sort_values("x_order")["x"].drop_duplicates())
    assert order == ["qwen3-next TP8 (h2/8)", "qwen3-next TP1 (h16/64)"]


def test_sm_frame_takes_the_median_of_repeats(make_row):
    rs = [make_row(backend="fla", tp=8, model="m", sm_coverage=c, run_id=f"r{i}") for i, c in enumerate((0.2, 0.4, 0.9))]
    assert sm_frame(frame(rs), x="tp")["sm_coverage_pct"].tolist() == pytest.approx([40.0])


def test_nothing_to_plot_is_an_error(make_row):
    with pytest.raises(QlabenchError, match="nothing to plot"):
        sm_frame(frame([make_row()]))
    with pytest.raises(QlabenchError, match="TP degree"):
        sm_frame(frame([make_row(sm_coverage=0.5)]), x="tp")
    with pytest.raises(QlabenchError):
        sm_frame(frame([make_row(sm_coverage=0.5)]), x="seqlen")


def test_plot_writes_one_png_per_group(rows, tmp_path, make_row):
    extra = make_row(backend="fla", mode="fwd_bwd", model="qwen3-next", tp=8, h_qk=2, h_v=8, sm_coverage=0.3)
    paths = plot_sm(frame(rows + [extra]), tmp_path, x="tp")
    assert len(paths) == 2 and all(p.stat().st_size > 1000 for p in paths)
    assert sorted(p.name for p in paths) == ["sm_fwd_bwd_float32_flashqla_1x64_tp.png",
                                             "sm_fwd_float32_flashqla_1x64_tp.png"]


def test_plot_sm_command(rows, tmp_path):
    res_dir = tmp_path / "results" / "test"
    write_rows(res_dir / "run-1.parquet", rows)
    r = CliRunner().invoke(app, ["plot-sm", str(tmp_path / "results"), "--out", str(tmp_path / "plots"),
                                 "--x", "tp"])
    assert r.exit_code == 0, r.output
    assert list((tmp_path / "plots").glob("sm_*.png"))
    bad = CliRunner().invoke(app, ["plot-sm", str(tmp_path / "results"), "--x", "nope"])
    assert bad.exit_code == 2
