"""The comparison's renderings (analyze/compare/render.py): a between-run interval only where there is one."""

from __future__ import annotations

import pandas as pd

from qlabench.analyze.compare import render
from qlabench.analyze.compare.comparison import compare_frames


def _side(make_row, name, times):
    rows = [make_row(run_id=name, replicate=r, median_ms=t, samples_ms=(t, t * 1.01, t * 0.99, t, t))
            for r, t in enumerate(times)]
    return pd.DataFrame([r.__dict__ for r in rows])


def test_two_rounds_print_too_few_rounds_for_an_interval_not_a_huge_one(make_row):
    # was: '[-100.0%, +29719231179.5%]' for `ab --rounds 2` (a t interval on one degree of freedom)
    c = compare_frames(_side(make_row, "a", [1.0, 1.3]), _side(make_row, "b", [1.2, 1.0]), paired=True,
                       allow_env_mismatch=True)
    (p,) = c.pairs
    assert p.stats.paired and p.stats.df == 1
    for text in (render.markdown(c), render.summary_line(c)):
        assert "e+" not in text and "%]" not in text
    assert "too few rounds for an interval" in render.markdown(c)


def test_enough_rounds_print_the_interval(make_row):
    c = compare_frames(_side(make_row, "a", [1.0, 1.01, 0.99, 1.0]), _side(make_row, "b", [1.0, 1.02, 1.0, 0.99]),
                       paired=True, allow_env_mismatch=True)
    text = render.markdown(c, top=5) + "".join(render._change(p) for p in c.pairs)
    assert "too few" not in text and "%]" in text
