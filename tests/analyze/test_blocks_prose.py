"""Prose that cannot drift (analyze/blocks/prose.py): a number in today's answer is a block's, or sits in a dated
section whose run exists and whose ms are its rows' medians."""

from __future__ import annotations

from pathlib import Path

from qlabench.analyze.blocks.prose import prose_drift

BLOCK = ["<!-- qlabench:block flashinfer-cp -->", "auto / unsplit is 0.42 in geometric mean", "<!-- /qlabench:block -->"]


def page(*lines: str) -> str:
    return "\n".join(["# P", "", "## Today's answer", "", *BLOCK, "", *lines, "", "## Later", "", "0.77 ms elsewhere"])


def drift(text: str, medians=None, checked=True):
    return [d.text for d in prose_drift(Path("P.md"), text, medians or {}, checked)]


def test_a_number_of_a_block_may_be_repeated_and_no_other():
    assert drift(page("In short: 0.42, and FlashInfer 0.7.2 (a version) with `--threshold 0.03` (code).")) == []
    (d,) = drift(page("FlashInfer is 1.82x FLA here."))
    assert d.startswith("P.md:9: 1.82 stated in today's answer outside a generated block")
    assert drift(page("FlashInfer is 1.82x FLA here."), checked=False) == []  # a page outside the answer's


def test_a_dated_section_names_runs_that_exist_and_quotes_their_medians():
    dated = ["<!-- qlabench:dated run=R1 -->", "R1 timed flashinfer at 0.237 ms, 1.82x FLA.", "<!-- /qlabench:dated -->"]
    assert drift(page(*dated), {"R1": {0.2371, 0.9}}) == []
    (d,) = drift(page(*dated), {"R1": {0.25}})
    assert "0.237 ms is no time of run(s) R1" in d
    (d,) = drift(page(*dated), {"R2": {0.237}})
    assert "cites run(s) R1, which no results file holds" in d


def test_the_committed_pages_of_todays_answer_hold_the_rule():
    from qlabench.analyze.blocks.files import doc_files
    from qlabench.analyze.blocks.prose import check_prose, run_medians

    root = next(p for p in Path(__file__).resolve().parents if (p / "pyproject.toml").is_file())
    problems = check_prose(root, doc_files(root), run_medians(root / "results"))
    assert not problems, "; ".join(p.text for p in problems)


def test_flashinfer_page_claims_only_what_its_blocks_show():
    """The sentences that outran their blocks: 'ahead of FlashQLA on every layout above' over a table where
    FlashQLA wins a layout, 'at every head configuration' over a one-heads block, a superseded run's counts."""
    root = next(p for p in Path(__file__).resolve().parents if (p / "pyproject.toml").is_file())
    text = (root / "docs" / "FLASHINFER.md").read_text()
    assert "on every layout above" not in text and "at every head configuration of the study:" not in text
    assert "# the run above: 114 rows" not in text
    assert "Fastest beyond the noise, of 19 layouts:" in text  # the count is the block's, from the rows


def test_a_dated_tables_ms_columns_are_the_runs_times():
    dated = ["<!-- qlabench:dated run=R1 -->", "| heads | plain ms | pool / plain |", "|---|---:|---:|",
             "| 2/8 | 0.232 | 1.02 |", "<!-- /qlabench:dated -->"]
    assert drift(page(*dated), {"R1": {0.2321}}) == []  # the ratio column is no time: not checked
    (d,) = drift(page(*dated), {"R1": {0.25}})
    assert "P.md:12: 0.232 ms is no time of run(s) R1" in d
