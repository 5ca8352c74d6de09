"""Gate parameters as workload axes: gate_zero_frac and gate_scale of the flashqla gate profile.

Null means the profile's default (FlashQLA's benchmark: 25% zero heads, logsigmoid(randn) / 16), so
existing points, keys and stored rows are unchanged.
"""

from __future__ import annotations

import math

import pandas as pd
import pytest
import torch

from qlabench.core.errors import SpecError
from qlabench.core.identity import workload_axes
from qlabench.core.point import (FLASHQLA_GATE_SCALE, FLASHQLA_GATE_ZERO_FRAC, Point,
                                 flashqla_zero_heads, gate_label)
from qlabench.core.spec import parse_suite
from qlabench.measure.inputs import make_inputs
from qlabench.measure.oracle_cache import oracle_key
from qlabench.store.keys import key_of, point_key, workload_keys


def point(**kw) -> Point:
    base = dict(backend="naive-chunk", mode="fwd", layout="varlen", batch=1, seqlens=(40, 24), h_qk=2, h_v=8,
                K=16, V=8, dtype="float32", gate="flashqla")
    base.update(kw)
    return Point(**base)


def zero_heads(g: torch.Tensor) -> set[int]:
    return {h for h in range(g.shape[-1]) if bool((g[..., h] == 0).all())}


# -- the point -----------------------------------------------------------------------------------------


def test_axes_are_workload_axes_next_to_gate():
    axes = workload_axes()
    i = axes.index("gate")
    assert axes[i + 1:i + 3] == ("gate_zero_frac", "gate_scale")


def test_defaults_are_null_and_a_default_value_is_stored_as_null():
    assert point().gate_zero_frac is None and point().gate_scale is None
    p = point(gate_zero_frac=0.25, gate_scale=16)
    assert p.gate_zero_frac is None and p.gate_scale is None
    assert p == point() and p.key() == point().key()
    q = point(gate_zero_frac=0, gate_scale=64)
    assert q.gate_zero_frac == 0.0 and isinstance(q.gate_zero_frac, float) and q.gate_scale == 64.0
    assert q.key() != point().key()


@pytest.mark.parametrize("kw,match", [
    (dict(gate_zero_frac=1.5), r"gate_zero_frac must be in \[0, 1\]"),
    (dict(gate_zero_frac=-0.1), r"gate_zero_frac must be in \[0, 1\]"),
    (dict(gate_scale=0), "gate_scale must be positive"),
    (dict(gate_scale=-16), "gate_scale must be positive"),
    (dict(gate_scale=float("inf")), "finite number"),
    (dict(gate_zero_frac=True), "finite number"),
    (dict(gate_zero_frac="0.5"), "finite number"),
    (dict(gate="fla", gate_zero_frac=0.5), "flashqla gate profile only"),
    (dict(gate="strong", gate_scale=4), "flashqla gate profile only"),
])
def test_invalid_gate_parameters(kw, match):
    with pytest.raises(ValueError, match=match):
        point(**kw)


def test_gate_label():
    assert point().gate_label == "flashqla"
    assert point(gate_zero_frac=0.5, gate_scale=64).gate_label == "flashqla(zero=0.5,/64)"
    assert point(gate_zero_frac=0).gate_label == "flashqla(zero=0)"
    assert gate_label("fla") == "fla"
    assert "gate=flashqla(/4)" in point(gate_scale=4).label()


def test_effective_parameters_fill_in_the_defaults():
    assert point().gate_params_effective() == {"gate_zero_frac": 0.25, "gate_scale": 16.0}
    assert point(gate_zero_frac=0.5).gate_params_effective()["gate_zero_frac"] == 0.5
    assert point(gate="fla").gate_params_effective() == {"gate_zero_frac": None, "gate_scale": None}


# -- the inputs ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("h_v", range(1, 65))
def test_default_zero_heads_are_the_published_count(h_v):
    # FlashQLA's benchmark: swa_mask[:ceil(0.75 * h_v)] = True, the rest of the heads get g = 0.
    assert flashqla_zero_heads(h_v) == h_v - math.ceil(0.75 * h_v)
    assert flashqla_zero_heads(h_v, 0.0) == 0
    assert flashqla_zero_heads(h_v, 1.0) == h_v
    assert flashqla_zero_heads(h_v, 0.5) == h_v - math.ceil(0.5 * h_v)


def test_rounding_does_not_add_a_zero_head():
    # (1 - 0.1) * 10 is 9.000000000000002 in floats: still 9 heads keep their decay.
    assert flashqla_zero_heads(10, 0.1) == 1


@pytest.mark.parametrize("frac,expected", [(None, 2), (0.0, 0), (0.25, 2), (0.5, 4), (1.0, 8)])
def test_zero_frac_sets_that_many_heads_to_zero(frac, expected):
    g = make_inputs(point(gate_zero_frac=frac)).g
    assert len(zero_heads(g)) == expected
    assert (g <= 0).all()


def test_zero_heads_are_a_prefix_of_one_random_permutation():
    # Same seed: the heads zeroed at 25% are among those zeroed at 50% (one permutation, a longer prefix).
    quarter = zero_heads(make_inputs(point()).g)
    half = zero_heads(make_inputs(point(gate_zero_frac=0.5)).g)
    assert quarter < half


def test_default_is_unchanged_logsigmoid_randn_over_16():
    p = point()
    g = make_inputs(p).g
    gen = torch.Generator().manual_seed(p.seed)
    B, T = 1, p.total_tokens
    for shape in ((B, T, 2, 16), (B, T, 2, 16), (B, T, 8, 8)):  # q, k, v are drawn first
        torch.randn(shape, generator=gen)
    raw = torch.nn.functional.logsigmoid(torch.randn((B, T, 8), generator=gen)) / 16
    zeroed = zero_heads(g)
    keep = [h for h in range(8) if h not in zeroed]
    assert torch.equal(g[..., keep], raw[..., keep])


@pytest.mark.parametrize("scale", [1, 4, 64, 256])
def test_gate_scale_divides_logsigmoid(scale):
    base, scaled = make_inputs(point()).g, make_inputs(point(gate_scale=scale)).g
    assert zero_heads(base) == zero_heads(scaled)  # same draws, same zero heads
    # powers of two: dividing by 16 or by `scale` is exact, so the ratio is exact too
    assert torch.equal(scaled * scale, base * FLASHQLA_GATE_SCALE)


def test_other_inputs_do_not_move_with_the_gate():
    a, b = make_inputs(point()), make_inputs(point(gate_zero_frac=0.5, gate_scale=64))
    for name in ("q", "k", "v", "beta", "h0", "do", "dht"):
        assert torch.equal(getattr(a, name), getattr(b, name)), name


def test_the_oracle_cache_keys_on_the_gate_parameters():
    k = oracle_key(point(), (64,), "float32")
    assert oracle_key(point(gate_zero_frac=0.25), (64,), "float32") == k
    assert oracle_key(point(gate_zero_frac=0.5), (64,), "float32") != k
    assert oracle_key(point(gate_scale=64), (64,), "float32") != k


# -- suites --------------------------------------------------------------------------------------------


def suite(**sweep):
    base = {"backends": ["naive-chunk"], "varlen": [[32, 32]], "heads": [{"h_qk": 2, "h_v": 8}], "K": 16, "V": 8}
    return parse_suite({"name": "g", "sweep": {**base, **sweep}}, "g.toml")


def test_suite_axes_expand_and_default_to_null():
    assert {(p.gate_zero_frac, p.gate_scale) for p in suite().points} == {(None, None)}
    s = suite(gate_zero_frac=[0, 0.5], gate_scale=[16, 64.0])
    assert [(p.gate_zero_frac, p.gate_scale) for p in s.points] == [(0.0, None), (0.0, 64.0), (0.5, None),
                                                                   (0.5, 64.0)]
    assert len(suite(gate_zero_frac=0.5).points) == 1  # a scalar is a one-element axis


def test_an_explicit_default_is_the_same_point_as_null():
    s = parse_suite({"name": "g", "sweep": {"backends": ["naive-chunk"], "varlen": [[64]],
                                            "heads": [{"h_qk": 2, "h_v": 8}]},
                     "include": [{"gate_zero_frac": [0.25, 0.5], "gate_scale": 16}]}, "g.toml")
    assert [(p.gate_zero_frac, p.gate_scale) for p in s.points] == [(None, None), (0.5, None)]


@pytest.mark.parametrize("sweep,key,match", [
    (dict(gate_zero_frac=[0.5, 2]), "sweep.gate_zero_frac[1]", r"fraction in \[0, 1\]"),
    (dict(gate_scale=0), "sweep.gate_scale[0]", "positive"),
    (dict(gate_scale="16"), "sweep.gate_scale[0]", "must be a number"),
    (dict(gate_zero_frac=True), "sweep.gate_zero_frac[0]", "must be a number"),
    (dict(gate=["flashqla", "fla"], gate_zero_frac=0.5), "sweep.gate_zero_frac", "flashqla gate profile only"),
    (dict(gate="strong", gate_scale=4), "sweep.gate_scale", "flashqla gate profile only"),
])
def test_suite_errors_name_the_key(sweep, key, match):
    with pytest.raises(SpecError, match=match) as e:
        suite(**sweep)
    assert e.value.key == key


def test_gate_params_beside_another_profile_go_in_their_own_include():
    # An [[include]] inherits [sweep]'s axes, and TOML has no null: a sweep that mixes profiles names the
    # gate parameters only in the include(s) of the flashqla profile.
    s = parse_suite({"name": "g", "sweep": {"backends": ["naive-chunk"], "varlen": [[64]], "gate": ["flashqla", "fla"],
                                            "heads": [{"h_qk": 2, "h_v": 8}]},
                     "include": [{"gate": "flashqla", "gate_zero_frac": 0.5}]}, "g.toml")
    assert [(p.gate, p.gate_zero_frac) for p in s.points] == [("flashqla", None), ("fla", None), ("flashqla", 0.5)]
    with pytest.raises(SpecError, match="flashqla gate profile only") as e:
        parse_suite({"name": "g", "sweep": {"backends": ["naive-chunk"], "varlen": [[64]], "gate_zero_frac": 0.5,
                                            "heads": [{"h_qk": 2, "h_v": 8}]}, "include": [{"gate": "fla"}]}, "g.toml")
    assert e.value.key == "include[0].gate_zero_frac"


def test_exclude_matches_effective_values():
    s = suite(gate_zero_frac=[0, 0.25, 0.5])
    drop_default = parse_suite({"name": "g", "sweep": {"backends": ["naive-chunk"], "varlen": [[64]],
                                                       "heads": [{"h_qk": 2, "h_v": 8}],
                                                       "gate_zero_frac": [0, 0.25, 0.5]},
                                "exclude": [{"gate_zero_frac": 0.25}]}, "g.toml")
    assert len(s.points) == 3
    assert [p.gate_zero_frac for p in drop_default.points] == [0.0, 0.5]
    drop_scale = parse_suite({"name": "g", "sweep": {"backends": ["naive-chunk"], "varlen": [[64]],
                                                     "heads": [{"h_qk": 2, "h_v": 8}], "gate_scale": [16, 64]},
                              "exclude": [{"gate_scale": [16]}]}, "g.toml")
    assert [p.gate_scale for p in drop_scale.points] == [64.0]


# -- keys: old rows (nulls) still match new points (nulls) ------------------------------------------


def test_rows_with_null_gate_params_key_like_points_with_none(make_row):
    p = Point(backend="naive-chunk", mode="fwd", layout="dense", batch=1, seqlens=(64,), h_qk=2, h_v=4, K=16, V=16,
              dtype="float32")
    row = make_row()
    assert row.gate_zero_frac is None and row.gate_scale is None
    df = pd.DataFrame([row.as_dict()])
    assert key_of(df.iloc[0]) == point_key(p.key()) == key_of(row)
    # a frame without the columns at all (an old file before the upgrade) keys the same
    assert workload_keys(df.drop(columns=["gate_zero_frac", "gate_scale"])).iloc[0] == point_key(p.workload_key())


def test_rows_with_gate_params_key_like_their_points(make_row):
    p = Point(backend="naive-chunk", mode="fwd", layout="dense", batch=1, seqlens=(64,), h_qk=2, h_v=4, K=16, V=16,
              dtype="float32", gate_zero_frac=0.5, gate_scale=64)
    row = make_row(gate_zero_frac=0.5, gate_scale=64.0)
    df = pd.DataFrame([row.as_dict(), make_row().as_dict()])  # mixed nulls: the column is float with NaN
    assert key_of(df.iloc[0]) == point_key(p.key())
    assert key_of(df.iloc[1]) == point_key(p.with_(gate_zero_frac=None, gate_scale=None).key())
    assert key_of(df.iloc[0]) != key_of(df.iloc[1])


def test_defaults_are_the_published_ones():
    assert FLASHQLA_GATE_ZERO_FRAC == 0.25 and FLASHQLA_GATE_SCALE == 16.0


# -- reports label the gate parameters ----------------------------------------------------------------


def test_reports_and_plots_tell_gate_parameters_apart(make_row, tmp_path):
    from qlabench.analyze.compare.comparison import point_label
    from qlabench.analyze.plot.speedups import plot_speedups
    from qlabench.analyze.kit.labels import gate_label_of
    from qlabench.analyze.kit.speedups import speedup_table

    rows = [make_row(backend=b, median_ms=ms, gate_zero_frac=z) for b, ms, z in
            (("fla", 2.0, None), ("naive-chunk", 1.0, None), ("fla", 2.0, 0.5), ("naive-chunk", 4.0, 0.5))]
    df = pd.DataFrame([r.as_dict() for r in rows])
    assert [gate_label_of(r) for _, r in df.iterrows()] == ["flashqla"] * 2 + ["flashqla(zero=0.5)"] * 2
    table = speedup_table(df, "fla")
    assert list(table["gate"]) == ["flashqla", "flashqla(zero=0.5)"]
    assert list(table["naive-chunk x"]) == [2.0, 0.5]
    assert point_label(rows[2].as_dict()).endswith("gate=flashqla(zero=0.5)")
    names = sorted(p.name for p in plot_speedups(df, tmp_path, "fla"))
    assert names == ["speedup_fwd_float32_gate-flashqla.png", "speedup_fwd_float32_gate-flashqla_zero_0.5_.png"]
