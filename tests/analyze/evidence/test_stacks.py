"""Which run and stack each row comes from (analyze/evidence/stacks.py)."""

from __future__ import annotations

import pandas as pd

from qlabench.analyze.evidence import run_mix, stack_label


def frame(rows) -> pd.DataFrame:
    return pd.DataFrame([r.as_dict() for r in rows])


def test_a_stack_is_the_libraries_a_backend_runs_on(make_row):
    fq = make_row(backend="flash_qla-nocp", flash_qla_version="0.1.3", tilelang_version="0.1.15")
    assert stack_label(fq.as_dict()) == "flash-qla 0.1.3 + tilelang 0.1.15"
    assert stack_label(make_row(backend="fla").as_dict()) == "fla (version not recorded)"
    assert stack_label(make_row(backend="naive-chunk", torch_version="2.9.1").as_dict()) == "torch 2.9.1"


def test_rows_are_labelled_only_where_they_mix_runs_or_stacks(make_row):
    one = frame([make_row(backend="fla", fla_version="0.6.0"), make_row(backend="flash_qla", flash_qla_version="0.1.3")])
    assert list(run_mix(one)) == ["", ""]
    two_runs = frame([make_row(backend="fla", fla_version="0.6.0"),
                      make_row(backend="flash_qla", flash_qla_version="0.1.3", run_id="run-2")])
    assert list(run_mix(two_runs)) == ["run run-1, fla 0.6.0", "run run-2, flash-qla 0.1.3"]
    two_stacks = frame([make_row(backend="fla", fla_version="0.6.0"), make_row(backend="fla-intracp", fla_version="0.7.0")])
    assert all(two_stacks_label.startswith("run run-1, fla 0.") for two_stacks_label in run_mix(two_stacks))
