"""One HBM peak per GPU model: the best any run measured the current way, put in every serving row of that
model, so the same step is one share of the limit on every page (synthetic rows, tests/serving_rows.py)."""

from __future__ import annotations

import json

import pandas as pd
import pytest

import serving_rows as sr
from qlabench.analyze.evidence import believed
from qlabench.analyze.evidence.hbm_peaks import OLDER_PROBE, one_peak, one_peak_from, stream_peaks
from qlabench.analyze.serving import serving_from_paths
from qlabench.analyze.serving.page import peak_text
from qlabench.core.result import ResultRow
from qlabench.store.files import write_rows


def _current(read_kernel="triton-sum", write_kernel="fill") -> str:
    return json.dumps({"hbm_peaks": {"read_kernel": read_kernel, "write_kernel": write_kernel,
                                     "read_tbs": {read_kernel: 1.0}, "write_tbs": {write_kernel: 1.0}}})


def _step(run: str, read: float, write: float, extra=None, device="NVIDIA H200", batch=64) -> dict:
    return sr.serving_row("flashinfer-decode-pt", "vk", batch, 0.0202, run_id=run, device=device,
                          hbm_peak_read_tbs=read, hbm_peak_write_tbs=write, extra_json=extra)


def test_only_rows_measured_the_current_way_set_the_peak_and_each_side_names_its_run():
    rows = pd.DataFrame([_step("old", 4.9, 4.9),  # the older probe recorded no kernels: never the peak
                         _step("a", 4.64, 4.60, _current()), _step("b", 4.50, 4.68, _current("sum", "zero"))])
    p = stream_peaks(rows)["NVIDIA H200"]
    assert (p.read_tbs, p.read_kernel, p.read_run) == (4.64, "triton-sum", "a")
    assert (p.write_tbs, p.write_kernel, p.write_run) == (4.68, "zero", "b")
    assert p.source() == "read `triton-sum` (run a), write `zero` (run b)"


def test_the_same_step_is_one_share_whichever_run_measured_it():
    old = _step("old", 4.267, 4.651)  # the serving run's own peaks (older probe)
    new = _step("new", 4.638, 4.680, _current(), batch=16)
    rows = pd.DataFrame([old, new])
    fixed = believed(one_peak(rows, stream_peaks(rows)))
    assert fixed["hbm_peak_read_tbs"].tolist() == [4.638, 4.638]
    assert fixed["hbm_peak_write_tbs"].tolist() == [4.680, 4.680]
    read, written = sr.state_bytes(64, 1, "float32")
    want = (read / 4.638e12 + written / 4.680e12) / 0.0202e-3
    assert fixed["hbm_frac"].iloc[0] == pytest.approx(want)
    # against its own (lower) peaks the same row read higher: the re-expression is what moved it
    own = believed(rows)["hbm_frac"].iloc[0]
    assert own > fixed["hbm_frac"].iloc[0]
    assert fixed["hbm_peak_source"].iloc[0] == "read `triton-sum` (run new), write `fill` (run new)"


def test_a_model_no_run_measured_the_current_way_keeps_its_own_peaks_marked_so():
    rows = pd.DataFrame([_step("old", 4.267, 4.651), _step("b2", 7.0, 7.1, _current(), device="NVIDIA B200")])
    out = one_peak(rows, stream_peaks(rows))
    assert out["hbm_peak_read_tbs"].tolist() == [4.267, 7.0]  # a B200 peak never reaches an H200 row
    assert out["hbm_peak_source"].iloc[0] == OLDER_PROBE


def test_rows_without_a_recorded_peak_and_non_serving_rows_are_left_alone():
    rows = pd.DataFrame([_step("a", 4.6, 4.7, _current()), _step("cpu", None, None)])
    prefill = sr.serving_row("fla", None, 1, 1.0, state_dtype=None, mode="fwd", seqlens=(4096,),
                             total_tokens=4096, hbm_peak_read_tbs=1.0, hbm_peak_write_tbs=1.0)
    rows = pd.concat([rows, pd.DataFrame([prefill])], ignore_index=True)
    out = one_peak(rows, stream_peaks(rows))
    assert pd.isna(out["hbm_peak_read_tbs"].iloc[1]) and pd.isna(out["hbm_peak_source"].iloc[1])
    assert out["hbm_peak_read_tbs"].iloc[2] == 1.0 and pd.isna(out["hbm_peak_source"].iloc[2])
    assert rows["hbm_peak_read_tbs"].iloc[0] == 4.6  # the input is untouched


def test_a_page_of_one_folder_takes_the_peak_another_folder_measured(tmp_path):
    root = tmp_path / "results"
    (root / "serving").mkdir(parents=True)
    (root / "engines").mkdir()
    (root / "README.md").write_text("results\n")
    write_rows(root / "serving" / "old.parquet", [ResultRow(**_step("old", 4.267, 4.651))])
    write_rows(root / "engines" / "new.parquet", [ResultRow(**_step("new", 4.638, 4.680, _current(), batch=16))])
    rows = pd.DataFrame([_step("old", 4.267, 4.651)])
    assert one_peak_from(rows, [root / "serving"])["hbm_peak_read_tbs"].tolist() == [4.638]
    s = serving_from_paths([root / "serving"])  # the page of the older run alone
    read, written = sr.state_bytes(64, 1, "float32")
    assert s.rows["hbm_frac"].iloc[0] == pytest.approx((read / 4.638e12 + written / 4.680e12) / 0.0202e-3)
    text = peak_text(s)
    assert "read 4.64 TB/s, write 4.68 TB/s, the best any run measured on this GPU model" in text
    assert "(run new)" in text
