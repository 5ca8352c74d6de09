"""The docs' fla-fair block (qlabench_publish/blocks/fla_fair.py): FlashQLA's speedup over FLA on the points two
runs share, each divided within its run, read from wherever the runs are committed (a history run included)."""

from __future__ import annotations

import dataclasses

import pytest

from qlabench.core.errors import ConfigError
from qlabench.store.catalog import Catalog
from qlabench.store.files import write_rows
from study_rows import row

BEFORE, AFTER = "20261130T000000Z-before", "20261201T000000Z-after"


def _context(tmp_path, before_rows, after_rows):
    from qlabench_publish.blocks.context import BlockContext

    results = tmp_path / "results"
    write_rows(results / "old" / "study" / f"{BEFORE}.parquet", [r for r, _ in before_rows])
    write_rows(results / "current" / "study" / f"{AFTER}.parquet", [r for r, _ in after_rows])
    return BlockContext(catalog=Catalog(root=results, entries=()))


def _pair(run, fla_ms, fq_ms, seqlens=(1024,) * 8, heads=(2, 8), gate_zero_frac=None):
    # row() hands the gate axes back beside the row; here they go into it, as a run records them
    return [(dataclasses.replace(r, gate_zero_frac=gate_zero_frac), g) for r, g in (row("fla", "fwd", seqlens, *heads, fla_ms, run_id=run),
                         row("flash_qla", "fwd", seqlens, *heads, fq_ms, run_id=run))]


def test_each_speedup_is_divided_within_its_run_and_only_shared_points_are_listed(tmp_path):
    from qlabench_publish.blocks.fla_fair import fla_fair_block

    before = [*_pair(BEFORE, 0.137, 0.061), *_pair(BEFORE, 0.5, 0.25, seqlens=(32768,)),
              row("fla", "fwd", (8192,), 2, 8, 0.24, run_id=BEFORE)]  # no flash_qla beside it: not listed
    after = [*_pair(AFTER, 0.122, 0.061), *_pair(AFTER, 0.5, 0.2, seqlens=(32768,)),
             *_pair(AFTER, 0.24, 0.16, seqlens=(8192,)), row("fla", "bwd", (1024,) * 8, 2, 8, 9.9, run_id=AFTER)]
    text = fla_fair_block(_context(tmp_path, before, after), BEFORE, AFTER)
    lines = text.splitlines()
    assert lines[0].startswith(f"before: run `{BEFORE}` (`results/old/study`)")
    assert f"after: run `{AFTER}` (`results/current/study`)" in lines[0]
    body = [line for line in lines if line.startswith("| 2/8")]
    assert body == ["| 2/8 | 1x32768 | 0.500 | 0.500 | +0.0% | 0.250 | 0.200 | 2.00 | 2.50 |",
                    "| 2/8 | 8x1024 | 0.137 | 0.122 | -10.9% | 0.061 | 0.061 | 2.25 | 2.00 |"]
    assert lines[-1] == "2 points; FLA's change: median -5.5%, from -10.9% to +0.0%"


def test_heads_narrow_the_table_and_runs_that_share_nothing_or_are_not_committed_are_errors(tmp_path):
    from qlabench_publish.blocks.fla_fair import fla_fair_block

    before = [*_pair(BEFORE, 0.137, 0.061), *_pair(BEFORE, 0.258, 0.098, heads=(4, 16))]
    after = [*_pair(AFTER, 0.122, 0.061), *_pair(AFTER, 0.232, 0.099, heads=(4, 16))]
    ctx = _context(tmp_path, before, after)
    text = fla_fair_block(ctx, BEFORE, AFTER, heads="4/16")
    assert "| 4/16 | 8x1024 |" in text and "| 2/8 |" not in text and "1 points" in text
    with pytest.raises(ConfigError, match="no forward point has fla and flash_qla in both"):
        fla_fair_block(ctx, BEFORE, AFTER, heads="16/64")
    with pytest.raises(ConfigError, match="run 'nope': no results file holds it"):
        fla_fair_block(ctx, "nope", AFTER)


def test_rows_off_the_published_gate_are_not_compared(tmp_path):
    from qlabench_publish.blocks.fla_fair import fla_fair_block

    # the same point at another gate in the run before: it must not stand in for the published gate's row
    before = [*_pair(BEFORE, 0.9, 0.1, gate_zero_frac=0.5)]
    after = [*_pair(AFTER, 0.122, 0.061)]
    with pytest.raises(ConfigError, match="no forward point"):
        fla_fair_block(_context(tmp_path, before, after), BEFORE, AFTER)
