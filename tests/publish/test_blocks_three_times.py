"""The docs' three-times block (qlabench_publish/blocks/three_times.py): one run's fastest call by device and by eager
time per head configuration and call, FlashQLA's best and FLA's times, and its launch-bound rows."""

from __future__ import annotations

import pytest

from qlabench.core.errors import ConfigError
from qlabench.store.catalog import Catalog
from qlabench.store.files import write_rows

RUN = "20261205T000000Z-three"


def _row(make_row, backend, seqlens, device, eager, host, heads=(4, 16), bound=None, **extra):
    return make_row(run_id=RUN, backend=backend, seqlens=seqlens, num_seqs=len(seqlens), total_tokens=sum(seqlens),
                    layout="varlen", h_qk=heads[0], h_v=heads[1], tp=8 // heads[0] * 2 if heads[0] <= 8 else 1,
                    model="qwen3.5-397b", median_ms=device if device is not None else eager, device_ms=device,
                    eager_ms=eager, host_ms=host,
                    launch_bound=bound, **extra)


def _context(tmp_path, rows):
    from qlabench_publish.blocks.context import BlockContext

    write_rows(tmp_path / "results" / "current" / "answer" / f"{RUN}.parquet", rows)
    return BlockContext(catalog=Catalog(root=tmp_path / "results", entries=()))


def test_each_line_names_the_fastest_by_each_time_flashqlas_best_setting_fla_and_the_launch_bound_rows(
        tmp_path, make_row):
    from qlabench_publish.blocks.three_times import three_times_block

    rows = [_row(make_row, "flashinfer", (32768,), 0.414, 0.520, 0.351, bound=True),
            _row(make_row, "vllm-flashinfer-prefill", (32768,), 0.420, 0.416, 0.300, bound=False),
            _row(make_row, "flash_qla", (32768,), 0.671, 0.666, 0.2, bound=False),
            _row(make_row, "flash_qla-nocp", (32768,), 0.700, 0.650, 0.2, bound=False),
            _row(make_row, "fla", (32768,), 1.257, 1.300, 0.9, bound=False),
            _row(make_row, "fla-intracp", (32768,), None, 1.1, 0.5),  # no device time: not counted as either
            _row(make_row, "flash_qla-forcecp", (32768,), 0.1, 0.1, 0.1, status="error"),  # not ok: left out
            # the run's replicates of one backend read their median
            *[_row(make_row, "fla", (1024,) * 8, d, e, e, bound=True)
              for d, e in ((0.2, 1.0), (0.3, 1.2), (0.25, 5.0))],
            _row(make_row, "flash_qla", (1024,) * 8, 0.099, 0.187, 0.18, bound=True),
            _row(make_row, "fla", (32768,), 3.4, 3.5, 1.0, heads=(16, 64), bound=False)]
    text = three_times_block(_context(tmp_path, rows), RUN)
    assert text.startswith(f"Run `{RUN}` (`results/current/answer`), fwd:")
    body = [line for line in text.splitlines() if line.startswith("| TP")]
    assert body[0].startswith("| TP (heads) |")
    assert body[1:] == [
        "| TP4 (4/16) | 32768 | `flashinfer` 0.414 | `vllm-flashinfer-prefill` 0.416 | 0.300 | "
        "0.671 (`flash_qla`) / 0.650 (`flash_qla-nocp`) | 1.257 / 1.300 | 1 of 5 |",
        "| TP4 (4/16) | 8x1024 | `flash_qla` 0.099 | `flash_qla` 0.187 | 0.180 | "
        "0.099 (`flash_qla`) / 0.187 (`flash_qla`) | 0.250 / 1.200 | 4 of 4 |",
        "| TP1 (16/64) | 32768 | `fla` 3.400 | `fla` 3.500 | 1.000 | - / - | 3.400 / 3.500 | 0 of 1 |"]


def test_a_run_without_ok_rows_of_the_mode_or_not_committed_is_an_error(tmp_path, make_row):
    from qlabench_publish.blocks.three_times import three_times_block

    ctx = _context(tmp_path, [_row(make_row, "fla", (32768,), 1.0, 1.1, 0.5)])
    with pytest.raises(ConfigError, match="has no ok fwd_bwd row"):
        three_times_block(ctx, RUN, mode="fwd_bwd")
    with pytest.raises(ConfigError, match="three-times: run 'nope': no results file holds it"):
        three_times_block(ctx, "nope")
