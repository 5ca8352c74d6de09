"""The published tables qlabench ships (qlabench/analyze/data/published_tables.py): one per GPU FlashQLA publishes,
each with its source file, commit, header and stack, found by the GPU's name."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from qlabench.analyze.data.published_tables import (MANIFEST, published_table, published_tables, read_published_csv,
                                                    table_of_file, table_of_gpu)
from qlabench.core.errors import ConfigError

DATA = Path(__file__).resolve().parents[2] / "qlabench" / "analyze" / "data"
MANIFEST_RECORDS = json.loads((DATA / MANIFEST).read_text())["tables"]


def test_every_gpu_flashqla_publishes_is_shipped_with_its_provenance():
    gpus = {t.gpu for t in published_tables()}
    assert {rec["header"][0].removeprefix("GPU: ") for rec in MANIFEST_RECORDS} == gpus and len(gpus) == 4
    for t, rec in zip(published_tables(), MANIFEST_RECORDS):
        assert t.repository == "QwenLM/FlashQLA" and len(t.commit) == 40 and t.path.startswith("benchmark/")
        # the CSV is the one the converter wrote from that source (its digest), and the header is verbatim
        assert hashlib.sha256(t.file.read_bytes()).hexdigest() == rec["csv_sha256"]
        assert len(read_published_csv(t.file)) == rec["rows"]
        assert t.header[0] == f"GPU: {t.gpu}"
        for column, version in t.stack:
            if column != "flash_qla_version":  # the header's library line, word for word
                assert f": {version}" in t.header[4]


def test_a_table_is_found_by_the_gpu_as_typed():
    assert published_table("GB200").gpu == "NVIDIA GB200"
    assert published_table("RTX 5090").gpu == "NVIDIA GeForce RTX 5090"
    assert published_table("pro6000").gpu.startswith("NVIDIA RTX PRO 6000")
    assert published_table("H200") == published_table()  # the default is the H200's
    assert table_of_gpu("NVIDIA B200") is None and table_of_gpu("NVIDIA H200").csv == "flashqla_h200_published.csv"


def test_a_name_of_no_table_or_of_several_says_so():
    with pytest.raises(ConfigError, match="publishes no table for 'B200'.*GB200"):
        published_table("B200")
    with pytest.raises(ConfigError, match="names several published tables"):
        published_table("RTX")


def test_only_gb200_and_h200_publish_the_backward():
    assert {t.name for t in published_tables() if "bwd" in t.modes} == {"GB200", "H200"}
    for t in published_tables():
        assert set(read_published_csv(t.file)["mode"]) == set(t.modes)


def test_a_file_is_a_shipped_table_only_when_its_bytes_are(tmp_path):
    gb = published_table("GB200")
    copy = tmp_path / "copy.csv"
    copy.write_bytes(gb.file.read_bytes())
    assert table_of_file(copy) == gb
    copy.write_bytes(gb.file.read_bytes().replace(b"0.", b"1.", 1))
    other = table_of_file(copy)
    assert other.gpu is None and other.stack == () and "not known" in other.source
