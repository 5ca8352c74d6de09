"""Plot file names: every part read from row data goes through the safe-name rule, so no row can place
a file outside the folder given with -o."""

from __future__ import annotations

import pandas as pd
import pytest

from qlabench.analyze.plot import plot_speedups, png_path
from qlabench.analyze.plot_sm import plot_sm


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
