"""Resume compares a row's environment on what its time depends on (store/resume.timing_columns): a library its
backend does not run can be installed or removed between runs without re-measuring its rows."""

from __future__ import annotations

import dataclasses

from part_rows import row as _row

from qlabench.store.files import write_rows
from qlabench.store.keys import key_series, KEY_COLUMNS
from qlabench.store.resume import done_keys, timing_columns
from qlabench.store.files import read_results

STACK = {"device": "NVIDIA H200", "torch_version": "2.11.0", "cuda_version": "13.0", "driver_version": "580",
         "qlabench_version": "0.1.0", "triton_version": "3.6.0", "tilelang_version": "0.1.15",
         "flash_qla_version": "0.1.3", "fla_version": "0.6.0", "flashinfer_version": None}


def _rows(tmp_path, backends=("flash_qla", "fla", "flashinfer")):
    out = []
    for i, b in enumerate(backends):
        r = _row("r1", i)
        out.append(dataclasses.replace(r, backend=b, **STACK, env_fingerprint=f"without-flashinfer"))
    write_rows(tmp_path / "s" / "r1.parquet", out)
    return {b: k for b, k in zip(backends, key_series(read_results([tmp_path / "s"]), KEY_COLUMNS))}


def test_installing_a_library_a_backend_does_not_run_keeps_its_rows_done(tmp_path):
    keys = _rows(tmp_path)
    now = {**STACK, "flashinfer_version": "0.7.2.post1", "env_fingerprint": "with-flashinfer"}
    done = done_keys(tmp_path, "s", now)
    assert keys["flash_qla"] in done and keys["fla"] in done  # FlashInfer's arrival moves neither
    assert keys["flashinfer"] not in done  # its own library changed (was not there): measured again
    # the fingerprint alone (the old rule) called every row a stranger
    assert done_keys(tmp_path, "s", "with-flashinfer") == set()


def test_a_change_in_a_backends_own_stack_or_the_common_columns_re_measures_it(tmp_path):
    keys = _rows(tmp_path)
    assert keys["flash_qla"] not in done_keys(tmp_path, "s", {**STACK, "tilelang_version": "0.1.16"})
    assert keys["fla"] in done_keys(tmp_path, "s", {**STACK, "tilelang_version": "0.1.16"})
    assert keys["fla"] not in done_keys(tmp_path, "s", {**STACK, "triton_version": "3.7.0"})
    assert not done_keys(tmp_path, "s", {**STACK, "torch_version": "2.12.0"})
    assert not done_keys(tmp_path, "s", {**STACK, "device": "NVIDIA H100 80GB HBM3"})


def test_a_backend_of_no_library_depends_on_every_library_version():
    assert {"flash_qla_version", "fla_version", "triton_version"} <= set(timing_columns("naive-chunk"))
    assert "flashinfer_version" not in timing_columns("flash_qla")
