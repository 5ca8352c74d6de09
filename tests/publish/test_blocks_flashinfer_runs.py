"""Which run a one-run table reads (qlabench_publish/blocks/flashinfer.py): the run holding every backend on the most
calls, the newest of those; a newer run of a few calls made for one answer never shrinks a table of every layout."""

from __future__ import annotations

import pandas as pd
import pytest

from qlabench_publish.blocks.flashinfer import newest_run_per_heads, one_run
from qlabench.core.errors import ConfigError

CALLS = ((32768,), (8192,) * 4, (1024,) * 8, (4096,), (2048,))


def _rows(make_row, run, ts, calls, backends=("flash_qla", "flashinfer")):
    return [make_row(run_id=run, timestamp=ts, backend=b, layout="varlen", seqlens=c, num_seqs=len(c),
                     total_tokens=sum(c), h_qk=2, h_v=8).as_dict() for b in backends for c in calls]


def test_a_narrow_newer_run_does_not_displace_a_wider_one(make_row):
    wide = _rows(make_row, "wide", "2026-12-01T00:00:00+00:00", CALLS)
    narrow = _rows(make_row, "narrow", "2026-12-02T00:00:00+00:00", CALLS[:3])
    d = pd.DataFrame(wide + narrow)
    assert set(one_run(d, ("flash_qla", "flashinfer"), (2, 8))["run_id"]) == {"wide"}
    assert set(newest_run_per_heads(d, ("flash_qla", "flashinfer"))["run_id"]) == {"wide"}
    # as wide as the other: the newer one
    again = _rows(make_row, "again", "2026-12-03T00:00:00+00:00", CALLS)
    assert set(one_run(pd.DataFrame(wide + narrow + again), ("flash_qla", "flashinfer"), (2, 8))["run_id"]) == {"again"}
    # a run missing a backend holds no call of all of them, however many rows it has
    lone = _rows(make_row, "lone", "2026-12-04T00:00:00+00:00", CALLS * 2, backends=("flash_qla",))
    assert set(one_run(pd.DataFrame(wide + lone), ("flash_qla", "flashinfer"), (2, 8))["run_id"]) == {"wide"}
    with pytest.raises(ConfigError, match="no run of the current evidence measured"):
        one_run(pd.DataFrame(lone), ("flash_qla", "flashinfer"), (2, 8))
