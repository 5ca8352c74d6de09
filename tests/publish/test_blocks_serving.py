"""The docs' serving-against block (qlabench_publish/blocks/serving.py): one current serving entry of the catalog,
every variant against one baseline, its runs named and the pool check carried along."""

from __future__ import annotations

import pytest

import serving_rows as sr
from qlabench_publish.blocks import BlockContext
from qlabench_publish.blocks.serving import serving_against_block
from qlabench.core.errors import ConfigError
from qlabench.core.result import ResultRow
from qlabench.store.catalog import load_catalog
from qlabench.store.files import write_rows

GROUP, BASE = sr.AGAINST_GROUP, sr.AGAINST_BASE


def _catalog(tmp_path, kind="serving"):
    root = tmp_path / "results"
    (root / "serving-engines").mkdir(parents=True)
    write_rows(root / "serving-engines" / "run.parquet", [ResultRow(**r) for r in sr.against_dicts()])
    (root / "catalog.toml").write_text(
        'format = 1\n[[entry]]\npath = "serving-engines"\nkind = "%s"\nstatus = "current"\ndate = 2026-01-02\n'
        'question = "q"\nstack = {}\n' % kind)
    return load_catalog(root)


def test_the_block_reads_one_current_serving_entry_and_names_its_run_and_the_pool_check(tmp_path):
    text = serving_against_block(BlockContext(catalog=_catalog(tmp_path)), entry="serving-engines", baseline=BASE)
    assert "`run-s`" in text and "`other`" in text  # both runs the entry holds are named
    assert f"| vllm-decode [vk] | {GROUP} | 0.90-1.10x (batch 64-256) | 1.50x (batch 1) | 3 | 0 (bit for bit) |" in text
    assert "2.00x (batch 256) (1 pairs of two runs left out)" in text
    assert f"`{BASE}`'s own 3 rows: 0 (bit for bit)" in text


def test_the_block_refuses_an_entry_of_another_kind(tmp_path):
    with pytest.raises(ConfigError, match="kind 'serving'"):
        serving_against_block(BlockContext(catalog=_catalog(tmp_path, kind="harness")), entry="serving-engines",
                              baseline=BASE)
