"""The figures README.md and docs/*.md quote from the evidence are generated blocks, and each committed block
is what the current evidence gives (`python -m qlabench_publish docs check`); the pages that state today's answer hold theirs."""

from __future__ import annotations

from pathlib import Path

import pytest

from qlabench_publish.blocks import BlockContext, check_files, find_blocks
from qlabench_publish.blocks.files import doc_files
from qlabench_publish.cli.blocks_registry import BLOCKS
from qlabench.store.catalog import load_catalog

REPO = next(p for p in Path(__file__).resolve().parents if (p / "pyproject.toml").is_file())
# The blocks each headline page must hold: today's answer is generated there, never typed.
REQUIRED = {
    "README.md": {"advise"},
    "docs/FLASHQLA-STUDY.md": {"study-summary", "advise"},
    "docs/FLASHINFER.md": {"flashinfer-cp", "library-vs", "auto-cp-regret"},
    "results/README.md": {"results-catalog"},
}


@pytest.mark.parametrize("page, blocks", REQUIRED.items())
def test_the_headline_pages_hold_their_generated_blocks(page, blocks):
    assert blocks <= {b.name for b in find_blocks((REPO / page).read_text(), page)}


def test_every_committed_block_is_what_the_current_evidence_gives():
    ctx = BlockContext(load_catalog(REPO / "results"))
    stale = check_files(doc_files(REPO), ctx, BLOCKS)
    assert not stale, "; ".join(s.text for s in stale) + " (run `python -m qlabench_publish docs render`)"
