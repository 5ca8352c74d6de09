"""The speedup table (analyze/kit/speedups.py) runs by size: within one mode, heads, dtype and gate, from the fewest
tokens to the most, whatever order the rows were measured or stored in."""

from __future__ import annotations

import pandas as pd

from qlabench.analyze.kit.speedups import speedup_table


def test_points_run_from_the_fewest_tokens_to_the_most_within_their_heads(make_row):
    calls = [(4, (512,)), (2, (128,)), (4, (96, 288)), (2, (96, 288)), (4, (128,)), (2, (512,)), (4, (64, 64))]
    rows = [make_row(backend=b, h_v=h_v, layout="varlen", seqlens=s, num_seqs=len(s), total_tokens=sum(s),
                     median_ms=ms)
            for h_v, s in calls for b, ms in (("naive-recurrent", 2.0), ("naive-chunk", 1.0))]
    table = speedup_table(pd.DataFrame([r.as_dict() for r in rows]), "naive-recurrent")
    got = [(h, s.replace("1x", "")) for h, s in zip(table["heads"], table["sequences"])]
    # h2/4 first (its rows came first); at equal tokens the fewer sequences first
    assert got == [("h2/4", "128"), ("h2/4", "2x64 packed"), ("h2/4", "96+288"), ("h2/4", "512"),
                   ("h2/2", "128"), ("h2/2", "96+288"), ("h2/2", "512")], got
