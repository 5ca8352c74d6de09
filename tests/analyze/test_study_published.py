"""The study against any GPU's published table (qlabench/analyze/study/published.py, `report --published GPU`):
the table named by its GPU, its own stack in the explanations and the page, and a comparison of rows of one GPU
with a table of another said plainly to compare two GPUs (a cross-GPU table), with no cause claimed for a gap."""

from __future__ import annotations

import pandas as pd
import pytest
from typer.testing import CliRunner

import study_rows
from study_rows import FQ_CP, FQ_NOCP, row
from qlabench.analyze.data.published_tables import published_table
from qlabench.analyze.study import build_study, load_published
from qlabench.analyze.study.page import render
from qlabench.analyze.study.published import resolve_published
from qlabench.cli import app
from qlabench.core.errors import ConfigError, QlabenchError


@pytest.fixture(scope="module")
def h200_rows():
    return study_rows.study_frame()  # rows recorded on an NVIDIA H200


@pytest.fixture(scope="module")
def gb200_study(h200_rows):
    gb = published_table("GB200")
    return build_study(h200_rows, load_published(gb), table=gb)


def test_published_names_a_gpu_a_file_or_the_h200_table(tmp_path):
    assert resolve_published(None).gpu == "NVIDIA H200"
    assert resolve_published("RTX PRO 6000").csv == "flashqla_pro6000_published.csv"
    assert resolve_published(str(published_table("GB200").file)).gpu == "NVIDIA GB200"
    with pytest.raises(QlabenchError, match="no such published table"):
        resolve_published(tmp_path / "x.csv")
    with pytest.raises(ConfigError, match="publishes no table"):
        resolve_published("MI300X")


def test_rows_of_one_gpu_against_anothers_table_say_they_compare_two_gpus(gb200_study):
    s = gb200_study
    assert s.table.gpu == "NVIDIA GB200" and len(s.published) == len(load_published(published_table("GB200")))
    assert s.summary.cross_gpu.startswith("cross-GPU table: ours ran on NVIDIA H200")
    assert s.summary.line.startswith("cross-GPU table") and "NVIDIA GB200" in s.summary.line
    page = render(s, {})
    assert page.startswith("# The FlashQLA study: qlabench against FlashQLA's published GB200 table")
    assert "**Cross-GPU table: ours ran on NVIDIA H200, FlashQLA's published table on NVIDIA GB200" in page
    assert published_table("GB200").stack_text in page and "benchmark_results_GB200.txt" in page


def test_a_cross_gpu_gap_names_the_gpus_first_and_no_verified_cause(gb200_study):
    outside = gb200_study.comparison[gb200_study.comparison["status"].eq("ok") & ~gb200_study.comparison["within"]]
    assert not outside.empty
    assert outside["explanation"].str.contains(r"unverified: another GPU \(H200; published on GB200\)").all()
    assert gb200_study.summary.n_verified == 0
    # its stack is GB200's own: fla's published version is the GB200 header's, not the H200's
    fla = published_table("GB200").versions["fla_version"]
    assert any(f"published {fla}" in e for e in outside.loc[outside["backend"] == "fla", "explanation"])


def test_what_would_be_a_cause_on_one_gpu_is_a_condition_across_two():
    gb = published_table("GB200")
    pub = load_published(gb)
    fq = float(pub[(pub["mode"] == "fwd") & (pub["h_qk"] == 2) & (pub["h_v"] == 8)
                   & (pub["seqlens"] == "32768")].iloc[0]["flash_qla_ms"])
    pairs = [row("flash_qla", "fwd", (32768,), 2, 8, fq * 1.3, kernels=FQ_CP),
             row("flash_qla-nocp", "fwd", (32768,), 2, 8, fq, kernels=FQ_NOCP)]
    rows = pd.DataFrame([r.as_dict() for r, _ in pairs])

    def explained(device: str) -> dict:
        c = build_study(rows.assign(device=device), pub, table=gb).comparison
        return c[(c["backend"] == "flash_qla") & c["status"].notna()].iloc[0].to_dict()

    same = explained(gb.gpu)  # nocp on the table's own GPU meets its value: a cause
    assert same["verified"] is True and same["explanation"].startswith("slower: nocp within 10%")
    other = explained("NVIDIA H200")  # the same rows on another GPU support no cause
    assert other["verified"] is False
    assert other["explanation"].startswith("slower: unverified: another GPU (H200; published on GB200) · nocp within")


def test_rows_of_the_tables_own_gpu_are_no_cross_gpu_table(h200_rows):
    gb = published_table("GB200")
    on_gb200 = h200_rows.assign(device=gb.gpu)
    s = build_study(on_gb200, load_published(gb), table=gb)
    assert s.summary.cross_gpu == "" and "Cross-GPU" not in render(s, {})
    assert build_study(h200_rows).summary.cross_gpu == ""  # the H200 rows against the H200 table


def test_report_published_gb200_on_h200_rows(tmp_path):
    out = tmp_path / "rep"
    r = CliRunner().invoke(app, ["report", str(study_rows.FIXTURE), "--published", "GB200", "--out", str(out)])
    assert r.exit_code == 0, r.output
    assert r.stdout.startswith("cross-GPU table: ours ran on NVIDIA H200, FlashQLA's published table on NVIDIA GB200")
    page = (out / "report.md").read_text()
    assert "--published GB200" in page and "published GB200 table" in page
    r = CliRunner().invoke(app, ["report", str(study_rows.FIXTURE), "--published", "B200", "--out", str(out)])
    assert r.exit_code == 2 and "FlashQLA publishes no table for 'B200'" in r.stderr
