"""show's view (analyze/show/view.py): one GPU model per table row, a baseline the suites name, and what every
number stands on, whatever the format."""

from __future__ import annotations

import pandas as pd

from qlabench.analyze.show import show_rows
from qlabench.store.files import write_rows


def _rows(make_row, device, ms, run, ts, **kw):
    return [make_row(backend="naive-chunk", median_ms=ms["naive-chunk"], device=device, run_id=run, timestamp=ts, **kw),
            make_row(backend="naive-recurrent", median_ms=ms["naive-recurrent"], device=device, run_id=run,
                     timestamp=ts, **kw)]


def test_rows_of_two_gpu_models_never_share_a_table_row(tmp_path, make_row):
    h200 = _rows(make_row, "NVIDIA H200", {"naive-chunk": 1.0, "naive-recurrent": 2.0}, "a", "2026-01-01T00:00:00+00:00")
    # a copy relabelled as an H100's, three times the time, newer: "newest per point" alone would mix them
    h100 = [make_row(backend="naive-recurrent", median_ms=6.0, device="NVIDIA H100 80GB HBM3", run_id="b",
                     timestamp="2026-02-01T00:00:00+00:00")]
    write_rows(tmp_path / "a" / "r.parquet", h200)
    write_rows(tmp_path / "b" / "r.parquet", h100)
    shown = show_rows([tmp_path / "a", tmp_path / "b"], baseline="naive-chunk")
    t = shown.table
    assert sorted(t["device"]) == ["NVIDIA H100 80GB HBM3", "NVIDIA H200"]
    h200_row = t[t["device"] == "NVIDIA H200"].iloc[0]
    assert h200_row["naive-recurrent"] == 2.0 and h200_row["naive-recurrent x"] == 0.5  # its own model's time
    h100_row = t[t["device"] == "NVIDIA H100 80GB HBM3"].iloc[0]
    assert pd.isna(h100_row["naive-recurrent x"])  # no H200 baseline divides an H100 time
    assert shown.device_note and "2 GPU models" in shown.device_note


def test_the_default_baseline_is_the_one_most_suites_name_and_says_so(tmp_path, make_row):
    ms = {"naive-chunk": 1.0, "naive-recurrent": 2.0}
    for i, base in enumerate(("naive-recurrent", "naive-recurrent", "naive-chunk")):
        write_rows(tmp_path / f"{i}.parquet", _rows(make_row, "cpu", ms, f"r{i}", f"2026-01-0{i + 1}T00:00:00+00:00"),
                   metadata={"baseline": base})
    shown = show_rows([tmp_path])
    assert shown.baseline == "naive-recurrent"
    assert shown.baseline_note.startswith("baseline naive-recurrent: the suite baseline of 2 of 3 files")


def test_every_run_shown_says_its_date_device_card_git_versions_and_regime(tmp_path, make_row):
    write_rows(tmp_path / "r.parquet", _rows(make_row, "NVIDIA H200", {"naive-chunk": 1.0, "naive-recurrent": 2.0},
                                             "r1", "2026-01-01T00:00:00+00:00", gpu_uuid="GPU-1234abcd-5678",
                                             git_sha="0123456789abcdef", timing_regime="sustained"))
    (line,) = show_rows([tmp_path]).runs
    assert line.startswith("run r1: 2026-01-01, NVIDIA H200 (card GPU-1234abcd-5), host h, git 0123456789")
    assert line.endswith("; sustained")


def test_every_run_shown_names_the_versions_its_rows_calls_used(tmp_path, make_row):
    """The run line reads each row's version record: an engine's version, a plugin's package and commit (and a
    row from before the record has it derived from what it did record)."""
    versions = {"my-gdn-kernels": "1.2.0", "torch": "2.11.0", "my-gdn-kernels commit": "0123456789abcdef0123"}
    rows = _rows(make_row, "cpu", {"naive-chunk": 1.0, "naive-recurrent": 2.0}, "r1", "2026-01-01T00:00:00+00:00",
                 torch_version="2.11.0")
    rows += [make_row(backend="their-kernel", median_ms=0.5, run_id="r1", timestamp="2026-01-01T00:00:00+00:00",
                      backend_dist="my-gdn-kernels", backend_version="1.2.0", versions=versions),
             make_row(backend="older-kernel", median_ms=0.7, run_id="r1", timestamp="2026-01-01T00:00:00+00:00",
                      backend_dist="old-dist", backend_version="0.3")]
    write_rows(tmp_path / "r.parquet", rows)
    (line,) = show_rows([tmp_path], baseline="naive-chunk").runs
    assert "my-gdn-kernels 1.2.0 + my-gdn-kernels commit 0123456789ab" in line, line
    assert "old-dist 0.3" in line and "torch 2.11.0" in line, line
