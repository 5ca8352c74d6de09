"""Amdahl's law over a layer row's core share, and the report line `show` prints for layer rows."""

from __future__ import annotations

import json
import math

import pandas as pd
import pytest

from qlabench.analyze.layer.gain import amdahl, amdahl_limit, layer_details, layer_lines, layer_share_table
from qlabench.core.errors import MeasureError


@pytest.mark.parametrize("share,k", [(0.5, 2.0), (0.3, 4.0), (0.9, 1.5), (0.0, 3.0), (1.0, 3.0)])
def test_amdahl_matches_the_time_of_the_rebuilt_layer(share, k):
    # The layer's time is (1 - s) outside the core plus s in it; a k-times faster core leaves s / k.
    new_time = (1.0 - share) + share / k
    assert amdahl(share, k) == pytest.approx(1.0 / new_time)


def test_amdahl_edges():
    assert amdahl(0.0, 10.0) == 1.0  # no core: no gain
    assert amdahl(1.0, 10.0) == pytest.approx(10.0)  # all core: the core's gain
    assert amdahl(0.5, 1.0) == 1.0
    assert amdahl_limit(0.75) == pytest.approx(4.0)
    assert math.isinf(amdahl_limit(1.0))


@pytest.mark.parametrize("share,k", [(-0.1, 2.0), (1.5, 2.0), (0.5, 0.0), (0.5, -1.0)])
def test_amdahl_refuses_a_share_outside_0_1_or_a_nonpositive_speedup(share, k):
    with pytest.raises(MeasureError):
        amdahl(share, k)


def _row(make_row, backend, share, **kw):
    extra = json.dumps({"layer": {"core": "naive-chunk", "hidden": 1024, "core_share": share,
                                  "core_share_from": "timer"}}) if share is not None else None
    return make_row(backend=backend, model="qwen3.5-0.8b", tp=16, h_qk=1, h_v=1, K=128, V=128,
                    extra_json=extra, **kw)


def _frame(rows):
    return pd.DataFrame([r.as_dict() for r in rows])


def test_layer_lines_state_the_share_and_the_layer_gain_per_layer_row(make_row):
    df = _frame([_row(make_row, "layer:naive-chunk", 0.5), _row(make_row, "naive-chunk", None)])
    lines = layer_lines(df, ks=(2.0,))
    assert len(lines) == 1  # the core's own row has no layer line
    assert "layer:naive-chunk" in lines[0] and "core 50% of the layer (timer)" in lines[0]
    assert f"2x core -> {amdahl(0.5, 2.0):.2f}x layer" in lines[0]
    assert f"at most {amdahl_limit(0.5):.2f}x" in lines[0]


def test_a_layer_row_without_a_share_or_not_ok_gets_no_line(make_row):
    df = _frame([_row(make_row, "layer:fla", None),
                 _row(make_row, "layer:fla", 0.4, status="error", reason="boom", median_ms=None,
                      samples_ms=())])
    assert layer_share_table(df).empty
    assert layer_lines(df) == []


def test_layer_details_reads_only_a_layer_dict():
    assert layer_details(None) is None
    assert layer_details("not json") is None
    assert layer_details(json.dumps({"phases_s": {}})) is None
    assert layer_details(json.dumps({"layer": {"core_share": 0.2}})) == {"core_share": 0.2}
