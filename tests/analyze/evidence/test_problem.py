"""Which rows are one problem (analyze/evidence/problem.py): the problem axes of core/identity.py, whatever
the layout, seed or model label; every other axis splits problems."""

from __future__ import annotations

import pandas as pd

from qlabench.analyze.evidence import problem_keys


def frame(rows) -> pd.DataFrame:
    return pd.DataFrame([r.as_dict() for r in rows])


def decode_row(make_row, **kw):
    fields = dict(backend="fla-recurrent", mode="decode", layout="dense", batch=4, seqlens=(1,) * 4, num_seqs=4,
                  total_tokens=4, dtype="bfloat16", K=128, V=128, h_qk=2, h_v=8, gate="fla",
                  state_dtype="float32", state_layout="kv", pool=8)
    return make_row(**{**fields, **kw})


def test_an_fp32_pool_and_a_bf16_pool_are_two_problems(make_row):
    keys = problem_keys(frame([decode_row(make_row), decode_row(make_row, state_dtype="bfloat16")]))
    assert keys.nunique() == 2


def test_every_serving_axis_splits_problems(make_row):
    base = decode_row(make_row)
    for change in ({"state_layout": "vk"}, {"pool": 16}, {"beta_regime": "high"}):
        keys = problem_keys(frame([base, decode_row(make_row, **change)]))
        assert keys.nunique() == 2, change


def test_a_dense_batch_is_one_problem_with_its_varlen_twin(make_row):
    dense = make_row(layout="dense", batch=4, seqlens=(8192,) * 4, num_seqs=4, total_tokens=32768)
    varlen = make_row(layout="varlen", batch=1, seqlens=(8192,) * 4, num_seqs=4, total_tokens=32768)
    assert problem_keys(frame([dense, varlen])).nunique() == 1
    other = make_row(layout="varlen", batch=1, seqlens=(16384, 16384), num_seqs=2, total_tokens=32768)
    assert problem_keys(frame([dense, other])).nunique() == 2  # the same tokens in other lengths: another problem


def test_layout_seed_and_model_label_do_not_split_a_problem(make_row):
    a = make_row(layout="dense", batch=1, seqlens=(4096,), total_tokens=4096, seed=0, model=None)
    b = make_row(layout="varlen", batch=1, seqlens=(4096,), total_tokens=4096, seed=7, model="qwen3.5-397b", tp=8)
    assert problem_keys(frame([a, b])).nunique() == 1
