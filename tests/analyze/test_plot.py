"""Speedup curves (analyze/plot.py): panels, scales and legends."""

from __future__ import annotations


def test_plot_panels_share_a_y_scale_and_keep_models_apart(tmp_path, make_row, monkeypatch):
    import matplotlib.figure
    import pandas as pd

    from qlabench.analyze.plot import plot_speedups

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
    labels = {t.get_text() for a in axes for t in a.get_legend().get_texts()}
    assert "naive-chunk · qwen3.5-27b" in labels and "naive-chunk · qwen3.5-397b" in labels
    assert all(a.get_ylabel() == "" for a in axes) and "speedup vs naive-recurrent" in fig.get_supylabel()
    assert "gate profile flashqla" in fig.get_suptitle()

