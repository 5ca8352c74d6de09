"""The committed large-batch page (docs/large-batch/large-batch.md, which docs/FLASHQLA-STUDY.md cites for its
numbers) is what the command written at its top produces from the committed rows: a change to the view or to the
rows that moves a number fails here until the page is made again."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

from qlabench.analyze.large_batch import large_batch_from_paths, write_large_batch_page

REPO = next(p for p in Path(__file__).resolve().parents if (p / "pyproject.toml").is_file())
PAGE = REPO / "docs" / "large-batch" / "large-batch.md"


def test_the_committed_large_batch_page_is_what_its_command_produces(tmp_path, monkeypatch):
    monkeypatch.chdir(REPO)
    m = re.search(r"^Written by `(qlabench report --large-batch [^`]+)` from", PAGE.read_text(), re.M)
    assert m, f"{PAGE} does not say which command made it"
    args = shlex.split(m.group(1))
    out = args.index("--out")
    assert args[out + 1] == "docs/large-batch"
    results = args[3:out]
    page = write_large_batch_page(large_batch_from_paths(results), tmp_path, shlex.join(args)).page.read_text()
    assert page == PAGE.read_text(), "docs/large-batch/large-batch.md is stale: run the command at its top"
