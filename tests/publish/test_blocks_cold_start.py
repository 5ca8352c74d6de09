"""The cold-start docs block (qlabench_publish/blocks/cold_start.py): one current cold-start entry's records as the
table `qlabench cold-start` writes, a missing cache size said so, and no other kind of entry."""

from __future__ import annotations

import json

import pytest

from qlabench_publish.blocks import BlockContext
from qlabench_publish.blocks.cold_start import cold_start_block
from qlabench.core.errors import ConfigError
from qlabench.store.catalog import load_catalog


def _ctx(tmp_path, kind="cold-start") -> BlockContext:
    root = tmp_path / "results"
    (root / "cs").mkdir(parents=True)
    recs = [{"backend": "fla", "mode": "fwd", "point": "fla fwd p", "phase": ph, "first_calls_s": s, "status": "ok",
             "reason": None, "cache_mib": mib, "device": "NVIDIA H200", "run_id": run}
            for ph, s, mib, run in (("cold", 30.0, None, "20261201T1-a"), ("warm", 5.0, None, "20261201T2-b"))]
    (root / "cs" / "cold-start.json").write_text(json.dumps(recs))
    (root / "catalog.toml").write_text('format = 1\n[[entry]]\npath = "cs"\nkind = "%s"\nstatus = "current"\n'
                                       'date = 2026-12-01\nquestion = "q"\nstack = {}\n' % kind)
    return BlockContext(catalog=load_catalog(root))


def test_the_block_is_the_entrys_table_with_its_runs_and_an_unrecorded_cache_said_so(tmp_path):
    text = cold_start_block(_ctx(tmp_path), entry="cs")
    assert "`results/cs/cold-start.json` (2 records, runs `20261201T1-a` to `20261201T2-b`)" in text
    assert "| fla | fla fwd p | 30.00 | 5.00 | 6.0 | not recorded |" in text


def test_the_block_refuses_an_entry_of_another_kind(tmp_path):
    with pytest.raises(ConfigError, match="kind 'cold-start'"):
        cold_start_block(_ctx(tmp_path, kind="harness"), entry="cs")
