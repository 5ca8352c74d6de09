"""Speedup tables and curves: computed against the baseline, and never for a row that is not ok."""

from __future__ import annotations

import pandas as pd
import pytest

from qlabench.core.errors import QlabenchError
from qlabench.analyze.plot.speedups import plot_speedups, speedup_frame
from qlabench.analyze.kit.speedups import pick_baseline, speedup_table, status_counts

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def missing(v) -> bool:
    """An empty cell: None, or NaN where pandas stored the column as numbers."""
    return v is None or (isinstance(v, float) and pd.isna(v))


def frame(rows) -> pd.DataFrame:
    return pd.DataFrame([r.as_dict() for r in rows])


@pytest.fixture
def results(make_row):
    """Three workloads (T = 64, 128, 256) x three backends, with a skipped and an incorrect row."""
    rows = []
    for T, base_ms in ((64, 4.0), (128, 8.0), (256, 16.0)):
        common = dict(seqlens=(T,), total_tokens=T)
        rows.append(make_row(backend="naive-recurrent", median_ms=base_ms, **common))
        rows.append(make_row(backend="naive-chunk", median_ms=base_ms / 2, **common))
        if T == 128:
            rows.append(make_row(backend="fast", status="incorrect", reason="o rel err 0.5 > 0.0001",
                                 median_ms=None, **common))
        elif T == 256:
            rows.append(make_row(backend="fast", status="skipped", reason="backend unavailable", **common))
        else:
            rows.append(make_row(backend="fast", median_ms=base_ms / 8, **common))
    return frame(rows)


def test_speedup_table_against_the_baseline(results):
    t = speedup_table(results, "naive-recurrent")
    assert len(t) == 3
    assert list(t["naive-recurrent x"]) == [1.0, 1.0, 1.0]
    assert list(t["naive-chunk x"]) == [2.0, 2.0, 2.0]
    assert list(t["naive-chunk"]) == [2.0, 4.0, 8.0]
    assert list(t["sequences"]) == ["1x64", "1x128", "1x256"]
    assert set(t["heads"]) == {"h2/4"}


def test_non_ok_rows_show_their_status_and_never_a_speedup(results):
    t = speedup_table(results, "naive-recurrent").set_index("sequences")
    assert t.loc["1x64", "fast x"] == 8.0
    assert t.loc["1x128", "fast"] == "incorrect" and missing(t.loc["1x128", "fast x"])
    assert t.loc["1x256", "fast"] == "skipped" and missing(t.loc["1x256", "fast x"])


def test_no_speedups_when_the_baseline_is_not_ok(make_row):
    df = frame([
        make_row(backend="naive-recurrent", status="error", reason="crash"),
        make_row(backend="naive-chunk", median_ms=1.0),
    ])
    (rec,) = speedup_table(df, "naive-recurrent").to_dict("records")
    assert rec["naive-recurrent"] == "error" and missing(rec["naive-recurrent x"])
    assert rec["naive-chunk"] == 1.0 and missing(rec["naive-chunk x"])


def test_missing_backend_on_a_workload_stays_visible(make_row):
    df = frame([
        make_row(backend="naive-recurrent", median_ms=2.0),
        make_row(backend="naive-chunk", median_ms=1.0),
        make_row(backend="naive-recurrent", median_ms=2.0, dtype="bfloat16"),
    ])
    t = speedup_table(df, "naive-recurrent").set_index("dtype")
    assert t.loc["float32", "naive-chunk x"] == 2.0
    assert missing(t.loc["bfloat16", "naive-chunk"]) and missing(t.loc["bfloat16", "naive-chunk x"])


def test_workloads_match_on_every_axis(make_row):
    # same shape, different seed: two workloads, not one
    df = frame([make_row(backend="a", median_ms=2.0, seed=0), make_row(backend="b", median_ms=1.0, seed=1)])
    assert len(speedup_table(df, "a")) == 2


def test_model_heads_label(make_row):
    df = frame([make_row(model="qwen3.5-27b", tp=8, h_qk=2, h_v=6)])
    assert speedup_table(df, "naive-chunk")["heads"].tolist() == ["qwen3.5-27b TP8 (h2/6)"]


def test_pick_baseline(results):
    assert pick_baseline(results, "fast") == "fast"
    assert pick_baseline(results) == "naive-chunk"
    assert pick_baseline(results[results["backend"] != "naive-chunk"]) == "naive-recurrent"
    assert pick_baseline(results[results["backend"] == "fast"]) == "fast"


def test_status_counts(results):
    assert status_counts(results) == {"ok": 7, "incorrect": 1, "skipped": 1}


def test_speedup_frame_only_ok_rows(results):
    f = speedup_frame(results, "naive-recurrent")
    assert set(f["status"]) == {"ok"}
    fast = f[f["backend"] == "fast"]
    assert fast["total_tokens"].tolist() == [64]  # the incorrect and skipped workloads have no point
    assert fast["speedup"].tolist() == [8.0]
    chunk = f[f["backend"] == "naive-chunk"].sort_values("total_tokens")
    assert chunk["speedup"].tolist() == [2.0, 2.0, 2.0]
    assert (f["speedup"] == f["base_ms"] / f["median_ms"]).all()


def test_speedup_frame_needs_ok_baseline_rows(results):
    with pytest.raises(QlabenchError, match="no ok rows"):
        speedup_frame(results, "not-there")


def test_plot_writes_pngs(results, tmp_path, make_row):
    extra = frame([make_row(backend=b, median_ms=ms, dtype="bfloat16", model="qwen3.5-27b", tp=tp, h_qk=16 // tp,
                            h_v=48 // tp)
                   for tp in (1, 2) for b, ms in (("naive-recurrent", 2.0), ("naive-chunk", 1.0))])
    df = pd.concat([results, extra], ignore_index=True)
    written = plot_speedups(df, tmp_path / "plots", "naive-recurrent")
    assert {p.name for p in written} == {"speedup_fwd_float32_gate-flashqla.png",
                                         "speedup_fwd_bfloat16_gate-flashqla.png"}
    for p in written:
        assert p.read_bytes()[:8] == PNG_MAGIC
    by_tp = plot_speedups(extra, tmp_path / "tp", "naive-recurrent", x="seqlen", panel="tp")
    assert len(by_tp) == 1 and by_tp[0].read_bytes()[:8] == PNG_MAGIC


def test_plot_rejects_bad_options(results, tmp_path):
    with pytest.raises(QlabenchError, match="x must be"):
        plot_speedups(results, tmp_path, "naive-recurrent", x="latency")
    with pytest.raises(QlabenchError, match="panel"):
        plot_speedups(results, tmp_path, "naive-recurrent", panel="gpu")
    assert not any(tmp_path.iterdir())


def test_speedup_table_marks_noisy_and_short_points(make_row):
    import pandas as pd

    from qlabench.analyze.kit.speedups import FEW, NOISY, noise_summary, speedup_table
    from qlabench.cli.views import speedup_markdown

    df = pd.DataFrame([r.as_dict() for r in [
        make_row(backend="naive-recurrent", median_ms=10.0, noise_target_met=True, rel_noise=0.01),
        make_row(backend="naive-chunk", median_ms=1.0, noise_target_met=False, rel_noise=0.4),
        make_row(backend="naive-recurrent", median_ms=20.0, seqlens=(128,), total_tokens=128, n_samples=1,
                 samples_ms=(20.0,), noise_target_met=False, below_min_samples=True, stopped_by="max_time"),
        make_row(backend="naive-chunk", median_ms=2.0, seqlens=(128,), total_tokens=128, noise_target_met=True),
    ]])
    t = speedup_table(df, "naive-recurrent")
    assert t["naive-chunk noise"].tolist() == [NOISY, ""]
    assert t["naive-recurrent noise"].tolist() == ["", FEW]
    md = speedup_markdown(t, "naive-recurrent")
    assert "| 1.000 (10.00x) ~ 0.01 oracle@full |" in md and "20.000 (1.00x) ! 0.01 oracle@full" in md
    line = noise_summary(df)
    assert line.startswith("2 of 4 ok points met their noise target") and "~ 1 missed it" in line
    assert "! 1 got fewer than min_samples" in line


def test_an_older_file_finds_its_suite_baseline_by_the_suite_name(tmp_path, make_row):
    from qlabench.analyze.kit.speedups import pick_baseline, suite_baselines
    from qlabench.store.files import write_rows

    rows = [make_row(backend="naive-recurrent", median_ms=2.0), make_row(backend="naive-chunk", median_ms=1.0)]
    write_rows(tmp_path / "old.parquet", rows, metadata={"suite_path": "/elsewhere/suites/quick-cpu.toml"})
    assert suite_baselines([tmp_path]) == ["naive-recurrent"]  # qlabench/suites/quick-cpu.toml's baseline
    import pandas as pd

    df = pd.DataFrame([r.as_dict() for r in rows])
    assert pick_baseline(df, None, suite_baselines([tmp_path])) == "naive-recurrent"
    assert pick_baseline(df) == "naive-chunk"  # no suite known: the naive fallback, as before


def test_plot_panels_share_a_y_scale_and_keep_models_apart(tmp_path, make_row, monkeypatch):
    import matplotlib.figure
    import pandas as pd

    from qlabench.analyze.plot.speedups import plot_speedups

    figs = []
    monkeypatch.setattr(matplotlib.figure.Figure, "savefig", lambda fig, path, **k: figs.append(fig))
    rows = []
    for model, hq in (("qwen3.5-27b", 16), ("qwen3.5-397b", 32)):
        for tp in (1, 8):
            for n in (64, 128):
                slow = 100.0 if tp == 8 else 2.0  # one panel spans > 20x, the other does not
                rows += [make_row(backend="naive-recurrent", median_ms=slow, model=model, tp=tp, h_qk=hq // tp,
                                  h_v=hq // tp, seqlens=(n,), total_tokens=n),
                         make_row(backend="naive-chunk", median_ms=1.0, model=model, tp=tp, h_qk=hq // tp,
                                  h_v=hq // tp, seqlens=(n,), total_tokens=n)]
    df = pd.DataFrame([r.as_dict() for r in rows])
    plot_speedups(df, tmp_path, "naive-recurrent", panel="tp")
    (fig,) = figs
    axes = [a for a in fig.axes if a.get_visible()]
    assert len(axes) == 2 and {a.get_yscale() for a in axes} == {"log"}
    # one legend under the panels (analyze/plot.finish_figure): a colour per model, a marker per backend
    labels = {t.get_text() for leg in fig.legends for t in leg.get_texts()}
    assert {"naive-chunk", "qwen3.5-27b", "qwen3.5-397b"} <= labels
    assert all(a.get_ylabel() == "" for a in axes) and "speedup vs naive-recurrent" in fig.get_supylabel()
    assert "gate profile flashqla" in fig.get_suptitle()
