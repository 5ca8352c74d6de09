"""Plot file names: every part read from row data goes through the safe-name rule, so no row can place
a file outside the folder given with -o."""

from __future__ import annotations

import pandas as pd
import pytest

from qlabench.analyze.kit.figures import png_path
from qlabench.analyze.plot.speedups import plot_speedups
from qlabench.analyze.plot.sm import plot_sm


def _rows(make_row, **changes):
    rows = []
    for backend, ms in (("naive-chunk", 2.0), ("naive-recurrent", 1.0)):
        for t in (64, 128):
            rows.append(make_row(backend=backend, seqlens=(t,), total_tokens=t, median_ms=ms, samples_ms=(ms,),
                                 sm_coverage=0.5, **changes).as_dict())
    return pd.DataFrame(rows)


def _spoil(df, **values):
    df = df.copy()
    for k, v in values.items():
        df[k] = v  # as a hand-edited or hostile results file holds it (ResultRow would refuse it)
    return df


@pytest.mark.parametrize("field", ["mode", "dtype"])
@pytest.mark.parametrize("plot", ["speedup", "sm"])
def test_a_row_value_with_dot_dot_slash_stays_inside_the_out_folder(make_row, tmp_path, field, plot):
    out = tmp_path / "a" / "b"
    df = _spoil(_rows(make_row), **{field: "../../../escaped"})
    written = plot_speedups(df, out, "naive-chunk") if plot == "speedup" else plot_sm(df, out)
    assert written and all(p.parent == out and p.exists() for p in written)
    assert not list(tmp_path.glob("*.png")) and not list((tmp_path / "a").glob("*.png"))
    assert sorted(p.name for p in out.iterdir()) == sorted(p.name for p in written)


def test_png_names_are_safe_and_bounded(tmp_path):
    assert png_path(tmp_path, "speedup", "fwd", "bfloat16", "gate-flashqla").name == \
        "speedup_fwd_bfloat16_gate-flashqla.png"  # ordinary names are unchanged
    assert png_path(tmp_path, "x", "/abs/../..").parent == tmp_path
    long = png_path(tmp_path, "sm", "g" * 300)
    assert long.parent == tmp_path and len(long.name) <= 100 and long != png_path(tmp_path, "sm", "g" * 301)


def _figures(monkeypatch, df, baseline, **kw):
    """The figures `plot_speedups` draws, captured as it closes them (the PNGs are written as well)."""
    import qlabench.analyze.plot.speedups as plot_mod

    drawn = []
    monkeypatch.setattr(plot_mod.plt, "close", lambda fig=None: drawn.append(fig))
    plot_speedups(df, kw.pop("out"), baseline, **kw)
    return drawn


def _lines(ax):
    """(label, x values, y values, colour) of every data line of a panel (not the y = 1 guide); a line drawn
    in segments (its gid names the line) is one."""
    out = {}
    for ln in ax.get_lines():
        name = ln.get_gid() or ln.get_label()
        if name.startswith("_"):
            continue
        _, xs, ys, _ = out.setdefault(name, (name, [], [], ln.get_color()))
        xs += [float(v) for v in ln.get_xdata()]
        ys += [float(v) for v in ln.get_ydata()]
    return list(out.values())


def test_layouts_of_one_token_count_each_get_a_labelled_place(make_row, monkeypatch, tmp_path):
    """Packed layouts of 8192 tokens (1, 2, 4 sequences) were hollow squares stacked at x = 8192 with no
    label: each is now a labelled position, ordered by total tokens."""
    layouts = [(8192,), (4096, 4096), (2048,) * 4, (1024, 7168), (16384,)]
    rows = [make_row(backend=b, layout="varlen", seqlens=s, batch=1, num_seqs=len(s), total_tokens=sum(s),
                     median_ms=ms * (1 + i / 10)).as_dict()
            for i, s in enumerate(layouts) for b, ms in (("naive-chunk", 2.0), ("naive-recurrent", 1.0))]
    (fig,) = _figures(monkeypatch, pd.DataFrame(rows), "naive-chunk", out=tmp_path)
    ax = fig.axes[0]
    ticks = [t.get_text() for t in ax.get_xticklabels()]
    assert ticks == ["8192", "1024+7168", "2x4096", "4x2048", "16384"]
    (label, xs, ys, _), = [ln for ln in _lines(ax) if ln[0].startswith("naive-recurrent")]
    assert sorted(xs) == list(range(5))  # one place per layout, none stacked


def test_panel_tp_gives_each_model_its_own_colour(make_row, monkeypatch, tmp_path):
    rows = [make_row(backend=b, model=m, tp=1, h_qk=hq, h_v=hv, seqlens=(t,), total_tokens=t, median_ms=ms).as_dict()
            for m, hq, hv in (("qwen3.5-2b", 16, 16), ("qwen3.5-35b", 16, 32))
            for b, ms in (("naive-chunk", 2.0), ("naive-recurrent", 1.0)) for t in (64, 128)]
    (fig,) = _figures(monkeypatch, pd.DataFrame(rows), "naive-chunk", out=tmp_path, panel="tp")
    lines = {lab: colour for lab, _, _, colour in _lines(fig.axes[0]) if lab.startswith("naive-recurrent")}
    assert len(lines) == 2 and len(set(lines.values())) == 2, lines


def test_serving_plot_draws_a_line_per_state_variant_titled_with_the_state_dtypes(monkeypatch, tmp_path):
    """A decode point measured with an fp32 [kv] and a bf16 [vk] state pool was drawn as one line at their
    median (0.988x where they measured 1.025x and 0.952x), titled with the input dtype alone."""
    from serving_rows import serving_row

    rows = []
    for sdt, layout, x in (("float32", "kv", 1.025), ("bfloat16", "vk", 0.952)):
        for b in (1, 8):
            rows.append(serving_row("naive-recurrent", layout, b, 1.0, state_dtype=sdt))
            rows.append(serving_row("fla-recurrent", layout, b, 1.0 / x, state_dtype=sdt))
    (fig,) = _figures(monkeypatch, pd.DataFrame(rows), "naive-recurrent", out=tmp_path)
    fla = [ln for ln in _lines(fig.axes[0]) if ln[0].startswith("fla-recurrent")]
    assert sorted(round(y, 3) for _, _, ys, _ in fla for y in set(ys)) == [0.952, 1.025]
    assert len({c for *_, c in fla}) == 2  # two variants, two colours
    title = fig._suptitle.get_text()
    assert "state float32" in title and "state bfloat16" in title and "inputs bfloat16" in title


def test_plot_draws_no_time_the_evidence_layer_does_not_believe(make_row, tmp_path):
    # a baseline whose every time is over an hour a call: once a curve of 1e-29x speedups
    from typer.testing import CliRunner

    from qlabench.cli import app
    from qlabench.store.files import write_rows

    rows = [make_row(backend=b, seqlens=(t,), total_tokens=t, median_ms=ms) for t in (64, 128)
            for b, ms in (("naive-chunk", 1e29), ("naive-recurrent", 1.0))]
    write_rows(tmp_path / "r.parquet", rows)
    r = CliRunner().invoke(app, ["plot", str(tmp_path / "r.parquet"), "--baseline", "naive-chunk",
                                 "-o", str(tmp_path / "plots")])
    assert r.exit_code == 2 and "has no ok rows" in r.output, r.output
