"""The docs' auto-cp-regret block (qlabench_publish/blocks/study.py): one library's points above a floor, with
their runs, from the study `qlabench report` builds."""

from __future__ import annotations

import pandas as pd
import pytest

from qlabench.analyze.study import build_study
from study_rows import CP_RUN, CURRENT, fi


def test_the_docs_block_lists_one_librarys_points_above_a_floor_with_their_runs():
    from qlabench_publish.blocks.context import BlockContext
    from qlabench_publish.blocks.study import auto_cp_regret_block, current_study
    from qlabench.analyze.evidence.current import CurrentEvidence
    from qlabench.core.errors import ConfigError

    pairs = [fi("flashinfer", (1024,) * 8, 0.124, run=CURRENT), fi("flashinfer-nocp", (1024,) * 8, 0.052, run=CURRENT),
             fi("flashinfer", (32768,), 0.234, run=CP_RUN), fi("flashinfer-nocp", (32768,), 1.425, run=CP_RUN)]
    df = pd.DataFrame([r.as_dict() for r, _ in pairs])
    ctx = BlockContext(catalog=None)
    ctx.__dict__.update(evidence=CurrentEvidence((), (), df))
    ctx.built[current_study] = build_study(df)  # what ctx.derived(current_study) gives
    text = auto_cp_regret_block(ctx, "flashinfer", above="1.02")
    assert "`fi-cp`" in text and "`fi-current`" in text and "of 2 points" in text
    table = text.split("Listed:")[1]
    assert "2.38" in table and "0.16" not in table  # 0.234 / 1.425: auto won, below the floor
    with pytest.raises(ConfigError, match="library must be one of"):
        auto_cp_regret_block(ctx, "fla")
